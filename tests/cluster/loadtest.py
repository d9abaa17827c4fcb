"""``sueca-arena loadtest`` against the cluster kit's referees, at scale: the target bot on the
bot host (one process, a session with each referee), house bots in both referees, the load
sent from the scheduler's host through both referees' operator ports. A measurement, not a
test: rerun it with

    .venv/bin/python tests/cluster/loadtest.py [--games 1000] [--duration 30]

(root: tests/kits/cluster.py). No ladder runs beside it (no worker host, no registered ladder
bot). The last line is loadtest's own JSON report, its figures split by referee.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the kits

from kits.cluster import ARENA, BOT, Cluster, League, require
from kits.wait import wait_for

from sueca.arena.local_arena import register_in


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=1000, help="matches in flight (default 1000)")
    p.add_argument("--duration", type=float, default=30.0, help="seconds of load (default 30)")
    p.add_argument("--drain", type=float, default=120.0,
                   help="seconds the matches still running after it may take (default 120: at "
                        "1,000 in flight on 2 cores a match lasts 30-60 s)")
    args = p.parse_args()
    require()
    tmp = Path(tempfile.mkdtemp(prefix="sueca-loadtest-"))
    cluster = Cluster(tmp / "logs")
    try:
        league = League(cluster, tmp, house_bots="random", workers=0, target=1, bots={})
        token = register_in(league.store, {"lt": "random"})["lt"]
        refs = (league.ref_a, league.ref_b)
        servers = ",".join(f"{h.addr}:50051" for h in refs)
        ops = [f"{h.addr}:50052" for h in refs]
        league.bots.run("lt", [*BOT, "run", "random", "--server", servers, "--name", "lt",
                               "--capacity", str(args.games), "--log-level", "warning"],
                        {"PATH": league.env["PATH"], "HOME": league.env["HOME"],
                         "SUECA_TOKEN": token})
        wait_for(lambda: all("lt" in league.store.bots_on([a]) for a in ops), 60,
                 "the target on both referees")
        run = league.sched.call([*ARENA, "loadtest", "--bot", "lt", "--server", ",".join(ops),
                                 "--games", str(args.games), "--duration", str(args.duration),
                                 "--drain-seconds", str(args.drain),
                                 "--house", "random", "--allow-faults", "--report",
                                 str(tmp / "loadtest.html"), "--json"], league.env,
                                timeout=args.duration + args.drain + 300)
    finally:
        left = cluster.close()
    print(run.stderr[-2000:], file=sys.stderr)
    report = json.loads(run.stdout.strip().splitlines()[-1])
    for addr, part in report.get("by_referee", {}).items():
        print(f"{addr}: {part}")
    print(json.dumps({**report, "exit": run.returncode, "left_behind": left}))
    return run.returncode if not left else 1


if __name__ == "__main__":
    sys.exit(main())
