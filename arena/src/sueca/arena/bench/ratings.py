"""Rating of record: seconds to refit 100,000 results among 1,000 bots, against the live Elo fold.

A synthetic league with known strengths (normal, sd ``--spread`` Elo) plays ``--results`` two-bot
matches, paired as a ladder pairs them (mostly near neighbours, some at random), so the matchups
are as many and as sparse as a real ladder's. Measured in one process, in this order:

* ``count``: summing the results into per-matchup counts (what :func:`sueca.arena.store.ratings.
  catch_up` keeps in Redis as results arrive: paid once per result, not per refit);
* ``cold``: the fit from nothing (Newton, then the chord method), with the intervals;
* ``warm``: after ``--more`` further results, the refit from the previous fit — what the
  leaderboard and the ladder pay (:func:`sueca.arena.store.ratings.fit_of_record`);
* baseline, ``elo_fold``: the live Elo fold over the same results, one pass in log order (the
  arithmetic of ``ratings rebuild``'s Elo, without OpenSkill).

Each phase is timed by the wall clock and by this process's CPU time (``*_cpu_seconds``, all
threads): on a shared machine the CPU time is what the code costs, the wall time what it cost
in this run. The last line is one JSON object; it also says how good the fit is: Kendall's tau against the
true strengths and how often the 95% intervals hold them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import time
from collections.abc import Iterator

from rich.console import Console

from sueca.arena.ratings.fit import MatchupCounts, fit
from sueca.arena.simulate import count, coverage, kendall_tau
from sueca.sdk.cli import Bounded


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bots", action=Bounded, kind=int, low=2, default=1000)
    p.add_argument("--results", action=Bounded, kind=int, low=1, default=100_000)
    p.add_argument("--more", action=Bounded, kind=int, low=0, default=1000,
                   help="results added before the warm refit (default 1000)")
    p.add_argument("--spread", action=Bounded, kind=float, low=0, above=True, default=200.0,
                   help="sd of the true strengths, in Elo (default 200)")
    p.add_argument("--seed", type=int, default=0)


def _league(bots: int, n: int, rng: random.Random, true: dict[str, float]) -> list[tuple[str, str, int]]:
    names = sorted(true, key=true.__getitem__)
    out = []
    for _ in range(n):
        i = rng.randrange(bots)
        if rng.random() < 0.8:  # a near neighbour, as the ladder pairs
            j = min(bots - 1, max(0, i + rng.choice((-1, 1)) * rng.randint(1, 10)))
        else:
            j = rng.randrange(bots)
        if j == i:
            j = (i + 1) % bots
        a, b = names[i], names[j]
        p = 1.0 / (1.0 + 10.0 ** (-(true[a] - true[b]) / 400.0))
        out.append((a, b, 0 if rng.random() < p else 1))
    return out


class _Clock:
    """``with clock(name):`` adds the block's wall and CPU seconds under ``name``."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        w, c = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.wall[name] = time.perf_counter() - w
            self.cpu[name] = time.process_time() - c


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True, highlight=False)
    rng = random.Random(args.seed)
    true = {f"bot{i:04d}": rng.gauss(0.0, args.spread) for i in range(args.bots)}
    with console.status(f"playing a synthetic league: {args.results} results, {args.bots} bots"):
        games = _league(args.bots, args.results + args.more, rng, true)
    first = games[:args.results]

    clock = _Clock()
    stats: MatchupCounts = {}
    with clock("count"):
        for a, b, w in first:
            count(stats, {"seats": [a, b, a, b], "winner": w})
    with console.status("cold fit"), clock("cold_fit"):
        cold = fit(stats)
    for a, b, w in games[args.results:]:
        count(stats, {"seats": [a, b, a, b], "winner": w})
    with console.status("warm refit"), clock("warm_fit"):
        warm = fit(stats, start=cold.theta)
    with console.status("baseline: the live Elo fold"), clock("elo_fold"):
        elo = dict.fromkeys(true, 1500.0)
        for a, b, w in first:
            e = 1.0 / (1.0 + 10.0 ** ((elo[b] - elo[a]) / 400.0))
            d = 24.0 * ((1.0 if w == 0 else 0.0) - e)
            elo[a] += d
            elo[b] -= d
    cold_s, warm_s, elo_s = clock.wall["cold_fit"], clock.wall["warm_fit"], clock.wall["elo_fold"]

    rated = {b: true[b] for b in warm.rating}
    hits, total = coverage(warm, rated)
    out: dict[str, object] = {"bench": "ratings", "bots": len(warm.rating),
                              "results": args.results + args.more, "matchups": len(stats)}
    for phase in clock.wall:
        out[f"{phase}_seconds"] = round(clock.wall[phase], 3)
        out[f"{phase}_cpu_seconds"] = round(clock.cpu[phase], 3)
    out.update({"cold_iterations": cold.iterations, "warm_iterations": warm.iterations,
                "warm_vs_elo_fold": round(warm_s / elo_s, 2),
                "kendall_tau_fit": round(kendall_tau(warm.rating, rated), 4),
                "kendall_tau_live_elo": round(kendall_tau(elo, true), 4),
                "coverage_95": round(hits / total, 4), "target_refit_seconds": 1.0,
                # the target is the refit (warm-started, as the leaderboard and ladder do)
                "met_cpu": clock.cpu["warm_fit"] <= 1.0, "met_wall": warm_s <= 1.0})
    console.print(f"refit {out['results']} results, {out['bots']} bots, {out['matchups']} "
                  f"matchups: cold {cold_s:.3f}s ({cold.iterations} steps), warm {warm_s:.3f}s "
                  f"({warm.iterations} steps); live Elo fold {elo_s:.3f}s; counting "
                  f"{clock.wall['count']:.3f}s (wall clock)")
    print(json.dumps(out))
    return 0
