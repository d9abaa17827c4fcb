"""What a club's serve costs: CPU share and data growth of serve --example-bots at a pace.

Runs ``sueca-arena serve --example-bots`` on a fresh data folder twice, each for ``--seconds``:
at ``--pace`` (default: serve's own default) and, as the baseline of the same run, flat out
(``--pace 0``). For each it reports the CPU its whole process tree used (Redis, referee, worker
and pool, scheduler, exporter, web, the bots and serve itself; ``/proc/PID/stat`` sampled every
few seconds), that as a share of one core and of the machine, the matches recorded, and the
data folder's size without its logs at the end. The last line is one JSON object with both
runs and ``cpu_ratio`` = paced / flat out.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.table import Table

from sueca.arena.cli.common import console
from sueca.arena.cli.serve import PACE
from sueca.arena.local_arena import arena_url
from sueca.arena.processes import Child
from sueca.arena.redisproc import free_port, free_ports
from sueca.arena.store import Store
from sueca.sdk.cli import Bounded

SAMPLE_SECONDS = 5.0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seconds", action=Bounded, kind=float, low=10, default=300.0,
                   help="how long each of the two runs lasts (default 300)")
    p.add_argument("--pace", metavar="N", action=Bounded, kind=float, low=0, above=True,
                   default=PACE, help=f"the pace measured (default serve's, {PACE:g} a minute); "
                                      "the baseline is --pace 0")


def _cpu_ticks() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, utime + stime in clock ticks) of every process."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(d)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    return out


def _tree(root: int) -> dict[int, int]:
    """pid -> CPU ticks of ``root`` and all its descendants."""
    procs = _cpu_ticks()
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    found, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in procs:
            found[pid] = procs[pid][1]
        todo += kids.get(pid, [])
    return found


def _size(folder: Path) -> int:
    """Bytes of the files in ``folder``, its logs (``logs/``, ``logs.prev/``) left out."""
    return sum(f.stat().st_size for f in folder.rglob("*")
               if f.is_file() and not f.relative_to(folder).parts[0].startswith("logs"))


def _one(pace: float, seconds: float, folder: Path, say: Any) -> dict[str, Any]:
    data = folder / f"pace-{pace:g}"
    env = {k: v for k, v in os.environ.items()
           if k not in ("SUECA_REDIS_URL", "PROMETHEUS_MULTIPROC_DIR")}
    exe = str(Path(sys.executable).parent / "sueca-arena")
    child = Child("serve", [exe, "serve", "--data", str(data), "--example-bots",
                            "--pace", f"{pace:g}", "--port", str(free_port()),
                            "--web-port", str(free_port()), "--metrics-port", str(free_ports(4))],
                  env, folder / f"serve-{pace:g}.log", append=False)
    try:
        child.wait_ready(lambda: "Sueca Arena is up" in child.text(), 120, "serve")
        store = Store.from_url(arena_url(data))
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        matches0 = store.results_count()
        t0 = said = time.monotonic()
        while True:
            for pid, ticks in _tree(child.pid).items():
                first.setdefault(pid, ticks)
                last[pid] = ticks
            elapsed = time.monotonic() - t0
            if elapsed >= seconds:
                break
            if time.monotonic() - said >= 30:
                said = time.monotonic()
                say(f"  pace {pace:g}: {elapsed:.0f}/{seconds:g} s, "
                    f"{store.results_count() - matches0} matches")
            time.sleep(min(SAMPLE_SECONDS, seconds - elapsed))
        matches = store.results_count() - matches0
        store.close()
    finally:
        child.send(signal.SIGINT)
        child.finish(time.monotonic() + 60)
    cpu = sum(last[p] - first[p] for p in last) / os.sysconf("SC_CLK_TCK")
    return {"pace": pace, "seconds": round(elapsed, 1), "cpu_seconds": round(cpu, 1),
            "cpu_share_of_one_core": round(cpu / elapsed, 4),
            "cpu_share_of_machine": round(cpu / elapsed / (os.cpu_count() or 1), 4),
            "matches": matches, "matches_a_minute": round(matches * 60 / elapsed, 1),
            "data_bytes": _size(data)}


def run(args: argparse.Namespace) -> int:
    err = console(stderr=True)
    folder = Path(tempfile.mkdtemp(prefix="sueca-bench-serve-"))
    load = os.getloadavg()
    try:
        runs = []
        for pace in (args.pace, 0.0):
            err.print(f"serve --example-bots --pace {pace:g} for {args.seconds:g} s...")
            runs.append(_one(pace, args.seconds, folder, err.print))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    paced, flat = runs
    table = Table(title="serve --example-bots: what a pace costs",
                  caption=f"{os.cpu_count()} cores; load average at the start "
                          f"{load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f}")
    for head in ("pace", "matches/min", "CPU s", "% of a core", "data MB"):
        table.add_column(head, justify="right")
    for r in runs:
        table.add_row(f"{r['pace']:g}" if r["pace"] else "0 (flat out)",
                      f"{r['matches_a_minute']:.1f}", f"{r['cpu_seconds']:.1f}",
                      f"{100 * r['cpu_share_of_one_core']:.1f}", f"{r['data_bytes'] / 1e6:.2f}")
    err.print(table)
    ratio = paced["cpu_seconds"] / flat["cpu_seconds"] if flat["cpu_seconds"] else None
    print(json.dumps({"bench": "serve", "paced": paced, "flat_out": flat,
                      "cpu_ratio": None if ratio is None else round(ratio, 4),
                      "cores": os.cpu_count(), "load_average": [round(x, 2) for x in load]}))
    return 0
