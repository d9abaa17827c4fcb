"""``sueca-arena selfplay``: two bots play N matches in this process, and a table says who won.

Bot A and bot B form the two teams (each bot fills both seats of its team). Matches alternate
which team sits in seats 0 and 2; the first dealer and the decks come from the match seed, which
is derived from ``--seed`` and the match number, so a run is reproducible. With ``--duplicate``
matches come in pairs with the same seed (so the same cards) and the teams swapped, which takes
most of the luck of the deal out of the comparison.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sueca.arena.cli.common import Bounded, UserError

BATCH = 200  # replay records written per file append


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("selfplay", help="play two bots against each other in this process",
                       description=(__doc__ or "").split("\n\n", 1)[-1])
    p.add_argument("--bots", required=True, metavar="A,B",
                   help="two bots: example names (random, heuristic, reckless) or module:Class")
    p.add_argument("--matches", action=Bounded, kind=int, low=1, default=100,
                   help="matches to play (100)")
    p.add_argument("--seed", default="0", metavar="S", help="seed of the whole run (0)")
    p.add_argument("--variant", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                   help="rule variants, e.g. tie=double target=8")
    p.add_argument("--replays", metavar="PATH", help="append one sueca-replay/1 line per match")
    p.add_argument("--duplicate", action="store_true",
                   help="play pairs of matches with the same cards and the teams swapped")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.set_defaults(func=run)


def match_seed(run_seed: int | str, number: int) -> int:
    """A 64-bit match seed from the run seed and the match (or duplicate pair) number."""
    digest = hashlib.sha256(f"sueca-selfplay:{run_seed}:{number}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a win rate (95% for z = 1.96); (0, 1) with no matches."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def bot_labels(specs: Sequence[str]) -> list[str]:
    """Names for the seats list: the specs, told apart when the same bot plays itself."""
    if specs[0] == specs[1]:
        return [f"{specs[0]}#1", f"{specs[1]}#2"]
    return list(specs)


def selfplay(factories: Sequence[Callable[[], Any]], names: Sequence[str], variant: Any,
             matches: int, seed: int | str, duplicate: bool = False,
             on_match: Callable[[Any, dict[str, Any] | None], None] | None = None,
             want_records: bool = False) -> dict[str, Any]:
    """Play the matches and return the summary (the ``--json`` object, minus timing).

    ``on_match(match, record)`` is called after each match; ``record`` is the replay when
    ``want_records`` is set.
    """
    from sueca.engine import SuecaError
    from sueca.engine import replay as replays
    from sueca.engine.game import REDEAL, RENUNCIA
    from sueca.sdk.local import play_local

    stats = [{"name": names[b], "matches": 0, "wins": 0, "deals": 0, "points": 0, "faults": 0}
             for b in (0, 1)]
    total_deals = 0
    for i in range(matches):
        a_team = i % 2  # bot A sits in seats 0, 2 in even matches and 1, 3 in odd ones
        order = (0, 1, 0, 1) if a_team == 0 else (1, 0, 1, 0)  # bot index by seat
        seats = [names[b] for b in order]
        mseed = match_seed(seed, i // 2 if duplicate else i)
        match_id = f"selfplay-{seed}-{i}"
        try:
            match = play_local([factories[b] for b in order], variant, mseed, match_id, seats)
        except SuecaError as err:
            raise UserError(f"match {match_id} (seats {', '.join(seats)}): {err}") from None
        team_of_bot = (a_team, 1 - a_team)
        for b in (0, 1):
            st = stats[b]
            st["matches"] += 1
            st["wins"] += match.winner == team_of_bot[b]
        for r in match.results:
            if r.end == REDEAL:
                continue
            total_deals += 1
            for b in (0, 1):
                stats[b]["deals"] += 1
                stats[b]["points"] += r.points[team_of_bot[b]]
            if r.end == RENUNCIA and r.fault_seat is not None:
                stats[order[r.fault_seat]]["faults"] += 1
        if on_match is not None:
            rec = replays.record(match, match_id, seats) if want_records else None
            on_match(match, rec)
    bots = []
    for st in stats:
        lo, hi = wilson(st["wins"], st["matches"])
        bots.append({
            "name": st["name"], "matches": st["matches"], "wins": st["wins"],
            "win_rate": st["wins"] / st["matches"] if st["matches"] else 0.0,
            "ci95": [lo, hi], "deals": st["deals"],
            "mean_points": st["points"] / st["deals"] if st["deals"] else 0.0,
            "faults": st["faults"],
        })
    return {"matches": matches, "deals": total_deals, "seed": seed,
            "variant": variant.to_dict(), "duplicate": duplicate, "bots": bots}


def run(args: argparse.Namespace) -> int:
    from sueca.engine import Variant, VariantError
    from sueca.engine import replay as replays
    from sueca.sdk.bots import BotLoadError, load_bot

    try:
        variant = Variant.parse(args.variant)
    except VariantError as err:
        raise UserError(str(err)) from None
    specs = [s.strip() for s in args.bots.split(",")]
    if len(specs) != 2 or not all(specs):
        raise UserError(f"bad --bots {args.bots!r}: expected two bots A,B, e.g. heuristic,random")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())  # like python -m: module:Class may name a file right here
    try:
        factories = [load_bot(s) for s in specs]
    except BotLoadError as err:
        raise UserError(str(err)) from None
    if args.duplicate and args.matches % 2:
        raise UserError(f"bad --matches {args.matches}: duplicate play needs an even number "
                        "(pairs of matches)")
    seed: int | str = int(args.seed) if args.seed.isdigit() else args.seed
    replay_path = Path(args.replays) if args.replays else None
    if replay_path is not None:
        try:
            replay_path.open("a", encoding="utf-8").close()
        except OSError as err:
            raise UserError(f"cannot write replays to {args.replays!r}: {err.strerror}") from None

    from sueca.arena import render

    names = bot_labels(specs)
    pending: list[dict[str, Any]] = []
    started = time.perf_counter()
    with render.progress(args.matches, "selfplay") as advance:
        def on_match(match: Any, rec: dict[str, Any] | None) -> None:
            if rec is not None:
                pending.append(rec)
                if len(pending) >= BATCH:
                    replays.write(replay_path, pending)  # type: ignore[arg-type]
                    pending.clear()
            advance(1)

        summary = selfplay(factories, names, variant, args.matches, seed, args.duplicate,
                           on_match, want_records=replay_path is not None)
    if pending:
        replays.write(replay_path, pending)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    summary["seconds"] = round(seconds, 3)
    summary["bots"] = [dict(b, spec=s) for b, s in zip(summary["bots"], specs)]
    if replay_path is not None:
        summary["replays"] = str(replay_path)
    if args.json:
        print(json.dumps(summary))
        return 0
    _print_table(summary, variant)
    return 0


def _print_table(summary: dict[str, Any], variant: Any) -> None:
    from sueca.arena import render

    rows = []
    for b in summary["bots"]:
        lo, hi = b["ci95"]
        rows.append([b["name"], b["matches"], b["wins"], f"{b['win_rate']:.1%}",
                     f"{lo:.1%}-{hi:.1%}", f"{b['mean_points']:.1f}", b["faults"]])
    words = " ".join(variant.words()) or "default rules"
    mode = ", duplicate pairs" if summary["duplicate"] else ""
    title = (f"{summary['matches']} matches{mode}, {summary['deals']} deals in "
             f"{summary['seconds']:.2f} s; seed {summary['seed']}; {words}")
    out = render.stdout()
    out.print(render.table(title, ["bot", "matches", "won", "win rate", "95% interval",
                                   "points/deal", "faults"], rows,
                           right=["matches", "won", "win rate", "points/deal", "faults"]))
    if "replays" in summary:
        out.print(f"replays appended to {summary['replays']}")
