"""Tournament throughput: matches/s through Celery and Redis against straight RunMatch calls.

Starts (unless given) a private Redis, a referee, ``--bots`` random bots and one Celery worker
with ``--concurrency`` pool processes, all as separate processes. Then, in the same run and on
the same processes, it plays the same ``--matches`` match specs twice:

* ``celery``: queued as tasks and waited for until every result is recorded in Redis (placement
  with ListBots, RunMatch, the exactly-once record, the live rating update, metrics);
* ``direct``: ``sueca.referee.control.run_match`` from ``--concurrency`` threads of this process
  (a gRPC channel each, kept across matches as each worker pool process keeps one),
  nothing recorded: the referee's own speed for this load.

The last line is one JSON object with both rates and ``ratio`` = celery / direct; the league's
overhead is small when the ratio is near 1 (target: at least 0.9).
"""

from __future__ import annotations

import argparse
import json
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rich.console import Console

from sueca.arena.bench.league import bench_arena, celery_run, round_robin_specs
from sueca.codec import SpecDict
from sueca.engine import End
from sueca.referee import control
from sueca.sdk.cli import Bounded


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bots", action=Bounded, kind=int, low=2, default=4,
                   help="random bots, each its own process")
    p.add_argument("--matches", action=Bounded, kind=int, low=1, default=60,
                   help="matches in each of the two runs")
    p.add_argument("--concurrency", action=Bounded, kind=int, low=1, default=2,
                   help="worker pool processes, and threads of the direct run (default 2)")
    p.add_argument("--capacity", action=Bounded, kind=int, low=1, default=8,
                   help="games each bot plays at once")
    p.add_argument("--redis", metavar="URL", default=None, help="use this Redis")
    p.add_argument("--referee", metavar="ADDR", default=None, help="use this referee")
    p.add_argument("--warmup", action=Bounded, kind=int, low=0, default=4,
                   help="matches played first, not counted")
    p.add_argument("--rounds", action=Bounded, kind=int, low=1, default=10,
                   help="alternate the two runs in this many rounds (each plays matches/rounds), "
                        "so that load from other processes on the machine hits both alike")
    p.add_argument("--timeout", action=Bounded, kind=float, low=0, above=True, default=300.0)


def _direct_run(address: str, tid: str, names: list[str], n: int, threads: int,
                secret: str, channels: list[Any]) -> float:
    """``threads`` threads, each with its own channel kept across runs (as each worker pool
    process keeps one: :func:`sueca.arena.match_job._channel`)."""
    specs = [m["spec"] for m in round_robin_specs(tid, names, n, secret)]
    mine = threading.local()
    taken = iter(channels)

    def one(spec: SpecDict) -> control.ResultDict:
        if not hasattr(mine, "channel"):
            mine.channel = next(taken)
        return control.run_match(address, spec, 120.0, channel=mine.channel)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        for out in pool.map(one, specs):
            assert out["end"] != End.ABORTED
    return time.perf_counter() - t0


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True, highlight=False)
    names = [f"bench{i}" for i in range(args.bots)]
    run_id = secrets.token_hex(3)
    with bench_arena(names, capacity=args.capacity, concurrency=args.concurrency,
                     redis=args.redis, referee=args.referee) as arena:
        channels = [control.channel(arena.referee) for _ in range(args.concurrency)]
        if args.warmup:
            celery_run(arena, f"bench-{run_id}-warm", names=names, n=args.warmup,
                       timeout=args.timeout, secret=run_id)
            _direct_run(arena.referee, f"bench-{run_id}-warmd", names, args.warmup,
                        args.concurrency, run_id, channels)
        rounds = max(1, min(args.rounds, args.matches))
        celery_s = direct_s = 0.0
        for r in range(rounds):
            n = args.matches // rounds + (1 if r < args.matches % rounds else 0)
            console.print(f"round {r + 1}/{rounds}: {n} matches through Celery and {n} straight "
                          "through RunMatch")
            secret = f"{run_id}-{r}"  # round r: the same n matches both ways
            runs = [lambda r=r, n=n, secret=secret: celery_run(
                        arena, f"bench-{run_id}-c{r}", names=names, n=n, timeout=args.timeout, secret=secret),
                    lambda r=r, n=n, secret=secret: _direct_run(
                        arena.referee, f"bench-{run_id}-d{r}", names, n, args.concurrency,
                        secret, channels)]
            if r % 2:
                direct_s += runs[1]()
                celery_s += runs[0]()
            else:
                celery_s += runs[0]()
                direct_s += runs[1]()
        for ch in channels:
            ch.close()
    celery_rate = args.matches / celery_s
    direct_rate = args.matches / direct_s
    out = {"bench": "tournament", "bots": args.bots, "matches": args.matches,
           "concurrency": args.concurrency, "celery_seconds": round(celery_s, 3),
           "direct_seconds": round(direct_s, 3),
           "celery_matches_per_s": round(celery_rate, 2),
           "direct_matches_per_s": round(direct_rate, 2),
           "ratio": round(celery_rate / direct_rate, 3)}
    print(json.dumps(out))
    return 0
