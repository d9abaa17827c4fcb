"""Ladder convergence: how fast the ladder's pairings find the true order, against round robin.

``--ladders`` simulated leagues of ``--bots`` bots with known strengths (normal, sd ``--spread``
Elo) are played twice each, with the same strengths and the same dice (the k-th match between
two bots has the same outcome under both schedules: common random numbers, so the difference
is the schedules'): once paired by the ladder
(:func:`sueca.arena.schedule.pick_pairs`, ``--target`` matches in flight, refit after every
result, as the scheduler runs) and once by plain round robin (every pair once per round, in
random order) — the baseline, in the same run. Both are rated by the same fit of record. At
each checkpoint (results played) it reports the mean Kendall tau between the fitted and the
true order and the exact-order rate (the share of leagues whose whole order is right).

It also measures the newcomers' rule: a bot joining a ladder of 3 established bots, its share
of the next 100 matches (``newcomer_share``; the target is at most 40%).

The last line is one JSON object; ``ladder_beats_round_robin`` holds when the ladder is ahead on
both measures, summed over the checkpoints.
"""

from __future__ import annotations

import argparse
import json
import random

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from sueca.arena.simulate import newcomer_share, strengths
from sueca.arena.simulate import run as simulate
from sueca.sdk.cli import Bounded, UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bots", action=Bounded, kind=int, low=3, default=8)
    p.add_argument("--spread", action=Bounded, kind=float, low=0, above=True, default=200.0,
                   help="sd of the true strengths, in Elo (default 200)")
    p.add_argument("--ladders", action=Bounded, kind=int, low=1, default=40,
                   help="simulated leagues per schedule (default 40)")
    p.add_argument("--checkpoints", default="100,200,400,800,1600",
                   help="results played at which to measure (default 100,200,400,800,1600)")
    p.add_argument("--target", action=Bounded, kind=int, low=1, default=4,
                   help="ladder matches in flight (default 4)")
    p.add_argument("--seed", type=int, default=0)


def _checkpoints(text: str) -> list[int]:
    try:
        marks = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise UserError(f"bad --checkpoints {text!r}: comma-separated result counts") from None
    if not marks or marks[0] < 1:
        raise UserError(f"bad --checkpoints {text!r}: positive result counts")
    return marks


def run(args: argparse.Namespace) -> int:
    marks = _checkpoints(args.checkpoints)
    console = Console(stderr=True, highlight=False)
    policies = ("ladder", "round-robin")
    sums = {p: {m: [0.0, 0] for m in marks} for p in policies}
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("simulated leagues", total=args.ladders * len(policies))
        for i in range(args.ladders):
            true = strengths(args.bots, random.Random(args.seed * 100_003 + i), args.spread)
            for policy in policies:
                _, points = simulate(true, marks[-1], rng=random.Random(args.seed + 7919 * i),
                                     policy=policy, target=args.target, checkpoints=marks,
                                     outcomes=args.seed * 7 + i)
                for pt in points:
                    sums[policy][pt["results"]][0] += pt["tau"]
                    sums[policy][pt["results"]][1] += int(pt["exact"])
                bar.advance(task)
        shares = [newcomer_share(3, random.Random(args.seed + j), before=200)["newcomer"]
                  for j in range(5)]
    curves = {p: [{"results": m, "tau": round(sums[p][m][0] / args.ladders, 4),
                   "exact": round(sums[p][m][1] / args.ladders, 4)} for m in marks]
              for p in policies}
    table = Table(title=f"{args.ladders} simulated leagues of {args.bots} bots "
                        f"(strengths sd {args.spread:g} Elo)")
    for col in ("results", "ladder tau", "round-robin tau", "ladder exact", "round-robin exact"):
        table.add_column(col, justify="right")
    for lad, rr in zip(curves["ladder"], curves["round-robin"]):
        table.add_row(str(lad["results"]), f"{lad['tau']:.3f}", f"{rr['tau']:.3f}",
                      f"{lad['exact']:.2f}", f"{rr['exact']:.2f}")
    console.print(table)
    tau_gain = sum(a["tau"] - b["tau"] for a, b in zip(curves["ladder"], curves["round-robin"]))
    exact_gain = sum(a["exact"] - b["exact"]
                     for a, b in zip(curves["ladder"], curves["round-robin"]))
    out = {"bench": "ladder", "bots": args.bots, "spread": args.spread,
           "ladders": args.ladders, "target": args.target, "curves": curves,
           "tau_gain": round(tau_gain, 4), "exact_gain": round(exact_gain, 4),
           "ladder_beats_round_robin": tau_gain > 0 and exact_gain > 0,
           "newcomer_share_max": max(shares), "newcomer_share_target": 0.4}
    print(json.dumps(out))
    return 0
