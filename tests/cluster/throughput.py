"""League throughput across hosts: matches recorded per second with one and two referee hosts
and one and two worker hosts, in the cluster kit (tests/kits/cluster.py: Linux network
namespaces, root). A measurement, not a test: rerun it with

    .venv/bin/python tests/cluster/throughput.py [--seconds 40] [--target 16]

One league, its hosts added and removed between windows (so one start-up pays for four
layouts): 1 referee + 1 worker, then the second worker host, then the second referee host,
then the first worker stopped (a warm shutdown: its matches finish). Each window starts after a
warm-up and counts the results recorded in it, by referee, and the CPU each role's processes
(referees, workers, Redis, bots, scheduler: every process of their hosts) spent per match in it:
the measured parts of docs/benchmarks.md § Sizing a league. The last line is one JSON object.
Every host shares this machine's cores: a second host adds no core, so the ratios say what the
league's parts cost on the same CPUs, not what a second machine buys.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the kits

from kits.cluster import Cluster, League, require
from kits.wait import wait_for

from sueca.arena.bench import cpu_seconds

#: fast bots only (no slow one: it would set the pace), two of each strategy
BOTS = {"alice": "random", "bob": "heuristic", "carol": "random", "erin": "heuristic"}


def host_cpu(league: League) -> dict[str, dict[int, float]]:
    """CPU seconds so far of every process, by role (its hosts): pid -> seconds."""
    roles = {"referees": (league.ref_a, league.ref_b), "workers": (league.work_a, league.work_b),
             "redis": tuple(league.redis_hosts), "bots": (league.bots,),
             "scheduler": (league.sched,)}
    out: dict[str, dict[int, float]] = {}
    for role, hosts in roles.items():
        out[role] = {}
        for host in hosts:
            for pid in host.pids():
                try:
                    out[role][pid] = cpu_seconds(pid)
                except OSError:  # gone since it was listed
                    continue
    return out


def window(league: League, seconds: float, warmup: float) -> dict[str, object]:
    """Matches recorded per second over ``seconds``, after ``warmup``; by referee; and the CPU
    each role spent per match in the window (processes alive at both ends)."""
    time.sleep(warmup)
    before = len(league.results())
    cpu0, at = host_cpu(league), time.monotonic()
    time.sleep(seconds)
    played = league.results()[before:]
    took = time.monotonic() - at
    cpu1 = host_cpu(league)
    n = max(1, len(played))
    per_match = {role: round(sum(t - cpu0[role][pid] for pid, t in cpu1[role].items()
                                 if pid in cpu0[role]) / n * 1000, 1) for role in cpu1}
    cores = {role: round(ms * n / 1000 / took, 2) for role, ms in per_match.items()}
    return {"matches": len(played), "seconds": round(took, 1),
            "matches_per_s": round(len(played) / took, 2),
            "by_referee": dict(Counter(str(r["referee"]) for r in played)),
            "cpu_ms_per_match": per_match, "cores_busy": cores,
            "load_average": round(os.getloadavg()[0], 1)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=40.0, help="each window (default 40)")
    p.add_argument("--warmup", type=float, default=8.0, help="before each window (default 8)")
    p.add_argument("--target", type=int, default=16,
                   help="the scheduler's matches in flight (default 16)")
    p.add_argument("--concurrency", type=int, default=8,
                   help="each worker's threads (default 8: one worker holds half the target)")
    args = p.parse_args()
    require()
    tmp = Path(tempfile.mkdtemp(prefix="sueca-throughput-"))
    cluster = Cluster(tmp / "logs")
    out: dict[str, dict[str, object]] = {}
    try:
        league = League(cluster, tmp, referees=1, workers=1, target=args.target,
                        concurrency=args.concurrency, capacity=args.target, bots=BOTS)
        league.recorded(4, 120)
        out["1 referee, 1 worker"] = window(league, args.seconds, args.warmup)
        league.start_worker(league.work_b)
        out["1 referee, 2 workers"] = window(league, args.seconds, args.warmup)
        league.start_referee(league.ref_b)
        ref_b = f"{league.ref_b.addr}:50052"
        wait_for(lambda: set(BOTS) <= league.store.bots_on([ref_b]), 60,
                 "every bot on the second referee", interval=0.5)
        out["2 referees, 2 workers"] = window(league, args.seconds, args.warmup)
        (worker,) = [c for c in league.work_a.children if c.name.endswith("/worker")]
        worker.stop(grace=60)  # Celery's warm shutdown: the matches it holds finish first
        out["2 referees, 1 worker"] = window(league, args.seconds, args.warmup)
    finally:
        left = cluster.close()
    rate = {k: int(str(v["matches"])) / float(str(v["seconds"])) for k, v in out.items()}
    for name, figures in out.items():
        print(f"{name}: {figures}")
    ratios = {
        "2 referees / 1, with 1 worker": rate["2 referees, 1 worker"] / rate["1 referee, 1 worker"],
        "2 referees / 1, with 2 workers":
            rate["2 referees, 2 workers"] / rate["1 referee, 2 workers"],
        "2 workers / 1, with 1 referee": rate["1 referee, 2 workers"] / rate["1 referee, 1 worker"],
        "2 workers / 1, with 2 referees":
            rate["2 referees, 2 workers"] / rate["2 referees, 1 worker"]}
    print(json.dumps({"bench": "cluster-throughput", "cores": os.cpu_count(),
                      "target": args.target, "concurrency": args.concurrency,
                      "windows": out, "ratios": {k: round(v, 2) for k, v in ratios.items()},
                      "left_behind": left}))
    return 0 if not left else 1


if __name__ == "__main__":
    sys.exit(main())
