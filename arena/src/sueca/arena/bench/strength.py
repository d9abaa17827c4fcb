"""Bot strength: single deals won by a bot (``pimc``) against ``heuristic`` in duplicate matches.

Each pair is two matches with the same seed, hence the same decks and dealers, with the teams
swapped: both bots play both sets of hands, so the luck of the cards cancels. Every deal of
both matches counts: the bot's team wins it with more than 60 card points; 60-60 deals and
deals ended by a fault are left out. Pairs are counted in their order until ``--deals`` deals
are decided, so a run is the same whatever the number of workers.

Time per move is measured around each bot's ``play`` in the worker processes, as wall time and
as the thread's CPU time (the steadier figure on a shared machine); the opponent's own time per
move is the same-run baseline. With a budget in samples (pimc's default) the win rate does not
depend on the machine's load; the times do.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from sueca.engine import End
from sueca.sdk.bots import BotLoadError, check_bot, load_bot
from sueca.sdk.cli import Bounded
from sueca.sdk.local import play_duplicate
from sueca.sdk.selfplay import match_seed, wilson
from sueca.sdk.table import progress, table

CHUNK = 4  # duplicate pairs per task handed to a worker

_factories: dict[str, Callable[[], Any]] = {}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bot", default="pimc", metavar="SPEC",
                        help="the bot measured, e.g. pimc:samples=64 (pimc)")
    parser.add_argument("--against", default="heuristic", metavar="SPEC",
                        help="its opponent and the time baseline (heuristic)")
    parser.add_argument("--deals", action=Bounded, kind=int, low=1, high=1_000_000, default=3000,
                        help="decided deals to count (3000)")
    parser.add_argument("--workers", action=Bounded, kind=int, low=1, high=64,
                        default=os.cpu_count() or 1, help="worker processes (all cores)")
    parser.add_argument("--seed", default="0", metavar="S", help="run seed (0)")
    parser.add_argument("--json", action="store_true", help="only the JSON line")


def _factory(spec: str) -> Callable[[], Any]:
    made = _factories.get(spec)
    if made is None:
        made = _factories[spec] = load_bot(spec)
    return made


def _timed(factory: Callable[[], Any], wall: list[float], cpu: list[float]) -> Callable[[], Any]:
    """``factory`` whose bots record the wall and CPU time of each ``play``."""
    def make() -> Any:
        bot = factory()
        play = bot.play
        perf, thread = time.perf_counter, time.thread_time

        def timed_play(observation: Any) -> Any:
            t0, c0 = perf(), thread()
            card = play(observation)
            cpu.append(thread() - c0)
            wall.append(perf() - t0)
            return card
        setattr(bot, "play", timed_play)  # noqa: B010 (an instance attribute shadows the method)
        return bot
    return make


def play_pairs(bot: str, against: str, *, seed: str, first: int, count: int) -> list[dict[str, Any]]:
    """Duplicate pairs ``first`` .. ``first + count - 1``: per pair, the bot's deals won, lost,
    tied and fault-ended, and the per-move times of both bots."""
    out = []
    for i in range(first, first + count):
        times: dict[str, list[float]] = {"bot_wall": [], "bot_cpu": [], "base_wall": [],
                                         "base_cpu": []}
        mine = _timed(_factory(bot), times["bot_wall"], times["bot_cpu"])
        theirs = _timed(_factory(against), times["base_wall"], times["base_cpu"])
        a, b = play_duplicate([mine, theirs, mine, theirs], seed=match_seed(f"strength:{seed}", i),
                              match_ids=(f"strength-{i}a", f"strength-{i}b"))
        won = lost = tied = faulted = 0
        for match, team in ((a, 0), (b, 1)):
            for result in match.results:
                if result.end != End.NORMAL:
                    faulted += 1
                elif result.points[team] > 60:
                    won += 1
                elif result.points[team] < 60:
                    lost += 1
                else:
                    tied += 1
        out.append({"won": won, "lost": lost, "tied": tied, "faulted": faulted, **times})
    return out


def measure(bot: str, against: str, *, deals: int, workers: int, seed: str,
            advance: Callable[[int], None] = lambda n: None) -> dict[str, Any]:
    """Play pairs on ``workers`` processes until the first pairs in order hold ``deals``
    decided deals; the figures of those pairs."""
    results: dict[int, dict[str, Any]] = {}
    counted = 0  # decided deals in the pairs 0 .. upto - 1
    upto = 0
    next_pair = 0
    chunk = max(1, min(CHUNK, deals // (16 * workers)))  # small runs: little work past the end
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        running: dict[Future[list[dict[str, Any]]], int] = {}

        def submit() -> None:
            nonlocal next_pair
            running[pool.submit(play_pairs, bot, against, seed=seed, first=next_pair,
                                     count=chunk)] = next_pair
            next_pair += chunk

        for _ in range(2 * workers):
            submit()
        while counted < deals:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                first = running.pop(future)
                for k, pair in enumerate(future.result()):
                    results[first + k] = pair
            while upto in results and counted < deals:
                pair = results[upto]
                counted += pair["won"] + pair["lost"]
                advance(pair["won"] + pair["lost"])
                upto += 1
            if counted < deals:
                while len(running) < 2 * workers:
                    submit()
        for future in running:
            future.cancel()
    seconds = time.perf_counter() - started
    pairs = [results[i] for i in range(upto)]
    won = sum(p["won"] for p in pairs)
    lost = sum(p["lost"] for p in pairs)
    low, high = wilson(won, won + lost)

    def ms(key: str) -> tuple[float, float]:
        values = sorted(t for p in pairs for t in p[key])
        if not values:
            return (0.0, 0.0)
        return (round(1000 * statistics.median(values), 3),
                round(1000 * values[min(len(values) - 1, int(0.9 * len(values)))], 3))

    bot_wall, bot_cpu, base_wall, base_cpu = (ms(k) for k in ("bot_wall", "bot_cpu", "base_wall",
                                                              "base_cpu"))
    return {
        "bot": bot, "against": against, "pairs": upto, "matches": 2 * upto,
        "deals": won + lost, "won": won, "lost": lost,
        "tied": sum(p["tied"] for p in pairs), "faulted": sum(p["faulted"] for p in pairs),
        "deal_win_rate": round(won / (won + lost), 4) if won + lost else 0.0,
        "deal_win_ci": [round(low, 4), round(high, 4)],
        "ms_per_move": {"bot": bot_wall[0], "baseline": base_wall[0]},
        "ms_per_move_p90": {"bot": bot_wall[1], "baseline": base_wall[1]},
        "cpu_ms_per_move": {"bot": bot_cpu[0], "baseline": base_cpu[0]},
        "cpu_ms_per_move_p90": {"bot": bot_cpu[1], "baseline": base_cpu[1]},
        "moves": {"bot": sum(len(p["bot_wall"]) for p in pairs),
                  "baseline": sum(len(p["base_wall"]) for p in pairs)},
        "workers": workers, "seconds": round(seconds, 1), "seed": seed,
    }


def run(args: argparse.Namespace) -> int:
    for spec in (args.bot, args.against):
        try:
            check_bot(spec, load_bot(spec))
        except BotLoadError as err:
            print(f"sueca-arena bench strength: {err}", file=sys.stderr)
            return 2
    with progress(args.deals, f"{args.bot} vs {args.against}") as advance:
        result = measure(args.bot, args.against, deals=args.deals, workers=args.workers,
                         seed=args.seed, advance=advance)
    if not args.json:
        low, high = result["deal_win_ci"]
        rows = [[result["bot"], f"{100 * result['deal_win_rate']:.1f}%",
                 f"{100 * low:.1f}-{100 * high:.1f}%",
                 result["ms_per_move"]["bot"], result["ms_per_move_p90"]["bot"],
                 result["cpu_ms_per_move"]["bot"]],
                [result["against"], f"{100 * (1 - result['deal_win_rate']):.1f}%",
                 f"{100 * (1 - high):.1f}-{100 * (1 - low):.1f}%",
                 result["ms_per_move"]["baseline"], result["ms_per_move_p90"]["baseline"],
                 result["cpu_ms_per_move"]["baseline"]]]
        print(table(f"{result['deals']} deals decided in {result['pairs']} duplicate pairs, "
                    f"{result['seconds']} s\n({result['tied']} tied and {result['faulted']} "
                    "fault-ended deals left out)",
                    ["bot", "deals won", "95% interval", "ms/move", "p90", "cpu ms"],
                    rows, right=["deals won", "95% interval", "ms/move", "p90", "cpu ms"]))
        print("times are per move on a shared machine: the win rate is the steady figure")
    print(json.dumps(result))
    return 0
