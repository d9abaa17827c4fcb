"""Ladder throughput: matches/s of the event-driven scheduler, against a tournament through Celery.

Starts (unless given) a private Redis, a referee, ``--bots`` random bots and one Celery worker
with ``--concurrency`` pool processes, all separate processes. Then, on the same processes:

* ``tournament``: ``--matches`` round-robin matches queued at once and waited for (what
  ``bench tournament`` calls its Celery figure) — the baseline, in the same run;
* ``ladder``: a :class:`sueca.arena.schedule.Ladder` keeping ``--target`` matches in flight,
  woken by each recorded result (:meth:`~sueca.arena.schedule.Ladder.wait`), until
  ``--matches`` more results are recorded;
* ``ladder_tick``: the same ladder driven by a fixed tick, a round of scheduling every
  ``--interval`` seconds, for comparison.

The last line is one JSON object with the three rates and ``ratio`` = ladder / tournament.
"""

from __future__ import annotations

import argparse
import json
import random
import secrets
import time
from typing import Any

from rich.console import Console

from sueca.arena.bench.league import bench_arena, celery_run
from sueca.arena.schedule import Ladder
from sueca.arena.tasks import Priority, enqueue
from sueca.sdk.cli import Bounded


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bots", action=Bounded, kind=int, low=2, default=4)
    p.add_argument("--matches", action=Bounded, kind=int, low=1, default=60,
                   help="matches in each run (default 60)")
    p.add_argument("--concurrency", action=Bounded, kind=int, low=1, default=2,
                   help="worker pool processes (default 2)")
    p.add_argument("--target", action=Bounded, kind=int, low=1, default=4,
                   help="ladder matches in flight (default 4, the scheduler's default)")
    p.add_argument("--interval", action=Bounded, kind=float, low=0, above=True, default=1.0,
                   help="the tick of ladder_tick, seconds (default 1)")
    p.add_argument("--capacity", action=Bounded, kind=int, low=1, default=8)
    p.add_argument("--redis", metavar="URL", default=None, help="use this Redis")
    p.add_argument("--referee", metavar="ADDR", default=None, help="use this referee")
    p.add_argument("--timeout", action=Bounded, kind=float, low=0, above=True, default=300.0)


def _ladder_run(arena: Any, names: list[str], n: int, target: int, timeout: float,
                interval: float | None) -> float:
    """Seconds until ``n`` more results are recorded under a ladder; ``interval`` None: woken
    by results, else a round every ``interval`` seconds (a fixed tick)."""
    store = arena.store
    ladder = Ladder(store, target, lambda: {b: 1000 for b in names},
                    lambda m: enqueue([m], priority=Priority.LADDER),
                    rng=random.Random(1))
    start = store.results_count()
    t0 = time.perf_counter()
    deadline = time.monotonic() + timeout
    while store.results_count() < start + n:
        if time.monotonic() > deadline:
            raise RuntimeError(f"ladder: {store.results_count() - start} of {n} results "
                               f"after {timeout:.0f}s")
        ladder.tick()
        if interval is None:
            ladder.wait(1.0)
        else:
            time.sleep(interval)
    elapsed = time.perf_counter() - t0
    while ladder.running() and time.monotonic() < deadline:  # let the overshoot drain
        ladder.wait(1.0)
    return elapsed


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True, highlight=False)
    names = [f"bench{i}" for i in range(args.bots)]
    run_id = secrets.token_hex(3)
    with bench_arena(names, capacity=args.capacity, concurrency=args.concurrency,
                     redis=args.redis, referee=args.referee) as arena:
        celery_run(arena, f"bench-{run_id}-warm", names=names, n=4, timeout=args.timeout,
                   secret=run_id)
        console.print(f"{args.matches} matches as a tournament through Celery")
        tournament_s = celery_run(arena, f"bench-{run_id}-t", names=names, n=args.matches,
                                  timeout=args.timeout, secret=run_id)
        console.print(f"{args.matches} ladder matches, event-driven, {args.target} in flight")
        ladder_s = _ladder_run(arena, names, args.matches, args.target, args.timeout, None)
        console.print(f"{args.matches} ladder matches, a round every {args.interval:g}s")
        tick_s = _ladder_run(arena, names, args.matches, args.target, args.timeout,
                             args.interval)
    rate = {k: args.matches / s for k, s in (("tournament", tournament_s), ("ladder", ladder_s),
                                             ("ladder_tick", tick_s))}
    out = {"bench": "ladder-live", "bots": args.bots, "matches": args.matches,
           "concurrency": args.concurrency, "target": args.target,
           "tournament_matches_per_s": round(rate["tournament"], 2),
           "ladder_matches_per_s": round(rate["ladder"], 2),
           "ladder_tick_matches_per_s": round(rate["ladder_tick"], 2),
           "ratio": round(rate["ladder"] / rate["tournament"], 3)}
    print(json.dumps(out))
    return 0
