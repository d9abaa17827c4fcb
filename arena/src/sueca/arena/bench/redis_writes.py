"""Redis writes per match: the league's cost in Redis, counted, for sizing.

Starts a private arena (Redis, a referee, ``--bots`` random bots, one Celery worker), then reads
Redis's ``INFO commandstats`` around three spans of the same length: idle (the background: the
referee's and the worker's heartbeats, the ladder-free league's timers), a tournament of
``--matches`` matches through Celery (placement, RunMatch, the exactly-once record, ratings),
and idle again. A command counts as a write when Redis's own ``COMMAND INFO`` flags say
``write``; commands run inside Lua scripts are counted by Redis like any other. Per match:
(writes during the tournament - the idle rate x its duration) / matches, and ``used_memory``
grown per match (what the results log and replays keep).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import time
from pathlib import Path
from typing import Any

from sueca.arena.bench import cpu_seconds, measured
from sueca.arena.bench.league import bench_arena, celery_run
from sueca.arena.store import Store
from sueca.sdk.cli import Bounded


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bots", action=Bounded, kind=int, low=2, default=4,
                   help="random bots, each its own process (default 4)")
    p.add_argument("--matches", action=Bounded, kind=int, low=1, default=40,
                   help="matches of the tournament (default 40)")
    p.add_argument("--concurrency", action=Bounded, kind=int, low=1, default=2,
                   help="matches the worker plays at once: pool processes, or threads with "
                        "--pool threads (default 2)")
    p.add_argument("--pool", choices=("prefork", "threads"), default="prefork",
                   help="the worker's pool (default prefork)")
    p.add_argument("--capacity", action=Bounded, kind=int, low=1, default=8,
                   help="games each bot process plays at once (default 8)")
    p.add_argument("--timeout", action=Bounded, kind=float, low=0, above=True, default=300.0,
                   help="seconds the tournament may take (default 300)")


def run(args: argparse.Namespace) -> int:
    result = measured("redis-writes", measure, args)
    if result is None:
        return 1
    top = ", ".join(f"{c} {n}" for c, n in list(result["writes_per_match_by_command"].items())[:6])
    print(f"redis: {result['writes_per_match']} writes per match ({top}), "
          f"{result['other_commands_per_match']} other commands, {result['memory_per_match_kb']} KB of "
          f"memory per match; background {result['idle_writes_per_s']} writes/s", flush=True)
    print(json.dumps(result), flush=True)
    return 0


def measure(args: argparse.Namespace) -> dict[str, Any]:
    names = [f"bench{i}" for i in range(args.bots)]
    run_id = secrets.token_hex(3)
    with bench_arena(names, capacity=args.capacity, concurrency=args.concurrency,
                     redis=None, referee=None, pool=args.pool) as arena:
        store = Store.from_url(arena.redis_url)
        writes = store.write_commands()
        # one warm-up match: first-time keys (the bots' ratings, the worker's scripts)
        celery_run(arena, f"bench-{run_id}-warm", names=names, n=1, timeout=args.timeout,
                   secret=run_id)
        print(f"bench redis-writes: a tournament of {args.matches} matches, idle spans around "
              "it", file=sys.stderr, flush=True)
        worker = next(p.popen.pid for p in arena.procs if p.name.startswith("worker"))
        referee = next(p.popen.pid for p in arena.procs if p.name == "referee")
        mem0 = store.used_memory()
        s0 = store.command_calls()
        cpu0 = _tree_cpu(worker), cpu_seconds(referee)
        seconds = celery_run(arena, f"bench-{run_id}", names=names, n=args.matches,
                             timeout=args.timeout, secret=run_id)
        cpu1 = _tree_cpu(worker), cpu_seconds(referee)
        s1 = store.command_calls()
        mem1 = store.used_memory()
        pool = [_pss_kb(c) for c in _children(worker)]
        main_pss = _pss_kb(worker)
        time.sleep(min(seconds, 30.0))
        idle_seconds = min(seconds, 30.0)
        s2 = store.command_calls()
        store.close()

    def delta(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
        return {c: b[c] - a.get(c, 0) for c in b if b[c] - a.get(c, 0) > 0}

    busy, idle = delta(s0, s1), delta(s1, s2)
    k = args.matches
    # the background, scaled to the tournament's duration, is not the matches' cost
    per_command = {c: round((busy.get(c, 0) - idle.get(c, 0) * seconds / idle_seconds) / k, 2)
                   for c in busy}
    write_per = {c: n for c, n in sorted(per_command.items(), key=lambda x: -x[1])
                 if c.split("|")[0] in writes and n > 0}
    other = sum(n for c, n in per_command.items() if c.split("|")[0] not in writes)
    idle_writes = sum(n for c, n in idle.items() if c.split("|")[0] in writes)
    return {
        "matches": k, "bots": args.bots, "seconds": round(seconds, 3),
        "matches_per_s": round(k / seconds, 2),
        "writes_per_match": round(sum(write_per.values()), 1),
        "writes_per_match_by_command": write_per,
        "other_commands_per_match": round(other, 1),
        "idle_writes_by_command": {c: n for c, n in idle.items() if c.split("|")[0] in writes},
        "writes_raw": sum(n for c, n in busy.items() if c.split("|")[0] in writes),
        "idle_writes_per_s": round(idle_writes / idle_seconds, 2),
        "idle_seconds": round(idle_seconds, 3),
        "memory_per_match_kb": round((mem1 - mem0) / k / 1024, 2),
        "worker_cpu_ms_per_match": round((cpu1[0] - cpu0[0]) / k * 1000, 2),
        "referee_cpu_ms_per_match": round((cpu1[1] - cpu0[1]) / k * 1000, 2),
        "pool": args.pool, "concurrency": args.concurrency,
        "worker_pool_processes": len(pool),
        "worker_pool_pss_kb": pool,
        "worker_main_pss_kb": main_pss,
        # what the worker costs in all: its main process (the threads pool's only one) + pool
        "worker_total_pss_kb": main_pss + sum(pool),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (a Celery worker's pool processes)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        if int(text[text.rindex(")") + 2:].split()[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its direct children (a worker and its pool)."""
    return cpu_seconds(pid, *_children(pid))


def _pss_kb(pid: int) -> int:
    """Proportional set size (shared pages split among their sharers): what one forked pool
    process really adds."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0
