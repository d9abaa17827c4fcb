"""duel: is bot A stronger than bot B? Duplicate pairs of matches on all cores, and a table.

Each duplicate pair deals the same cards twice with the teams swapped, which takes most of the
luck of the deal out of the comparison. The table gives bot A's single-deal and match win rates
with their 95% intervals, the Elo difference of a deal with its interval, points per deal,
faults and each bot's time per move.

With --sprt ELO0,ELO1 the duel stops as soon as the sequential test decides between "A is ELO0
stronger than B" (H0) and "A is ELO1 stronger" (H1), counted on deal pairs (docs/strength.md);
--matches is then the limit. Exit status: 0 H1 accepted, 1 H0 accepted, 3 limit reached
undecided, 2 usage error.

  sueca-bot duel heuristic random --matches 200
  sueca-bot duel ./mybot.py:Greedy heuristic --sprt 0,20 --matches 4000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from sueca.engine import Variant, VariantError
from sueca.sdk.cli.common import Bounded, UserError, load_checked
from sueca.sdk.cli.execflags import add_flags, use_flags
from sueca.sdk.sprt import Sprt, SprtError, parse_elos
from sueca.sdk.table import interval, per_move, progress, table

EXIT = {"H1": 0, "H0": 1, None: 3}  # the exit status of a --sprt run by verdict
SPRT_EVERY = 2.0  # seconds between two LLR lines on stderr


def add_parser(sub: Any) -> None:
    p = sub.add_parser("duel", help="duplicate matches of two bots on all cores, with an SPRT",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", metavar="A", help="bot A: an example name (random, heuristic, ...), "
                                          "module:Class or file.py:Class")
    p.add_argument("b", metavar="B", help="bot B, the reference A is measured against")
    p.add_argument("--matches", action=Bounded, kind=int, low=2, default=200,
                   help="matches to play, an even number (200); with --sprt the limit")
    p.add_argument("--sprt", metavar="ELO0,ELO1",
                   help="stop when the sequential test accepts elo = ELO0 or elo = ELO1")
    p.add_argument("--alpha", action=Bounded, kind=float, low=0, above=True, high=0.49,
                   default=0.05, help="the test's false-positive rate (0.05)")
    p.add_argument("--beta", action=Bounded, kind=float, low=0, above=True, high=0.49,
                   default=0.05, help="the test's false-negative rate (0.05)")
    p.add_argument("--workers", action=Bounded, kind=int, low=1, high=1024,
                   default=os.cpu_count() or 1, help="processes (all cores)")
    p.add_argument("--seed", default="0", metavar="S", help="seed of the whole duel (0)")
    p.add_argument("--variant", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                   help="rule variants, e.g. tie=double target=8")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (last line) instead of the table")
    p.add_argument("--move-limit", action=Bounded, kind=float, low=0, default=10.0,
                   metavar="SECONDS", help="the most a Python bot may take over one move; "
                   "past it the bot forfeits the match (10; 0: no limit)")
    add_flags(p, timeout=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # deferred: the duel's process pool and self-play (asyncio, multiprocessing): ~50 ms CPU
    from sueca.sdk.duel import DuelTally, duel
    from sueca.sdk.selfplay import MatchFailed  # deferred: as the line above

    try:
        variant = Variant.parse(args.variant)
    except VariantError as err:
        raise UserError(str(err)) from None
    if args.matches % 2:
        raise UserError(f"bad --matches {args.matches}: a duel plays duplicate pairs, so an "
                        "even number")
    sprt = None
    if args.sprt is not None:
        try:
            sprt = Sprt(*parse_elos(args.sprt), alpha=args.alpha, beta=args.beta)
        except SprtError as err:
            raise UserError(str(err)) from None
    use_flags(args)  # the exec: bots' settings, for this process and the workers it forks
    specs = [args.a.strip(), args.b.strip()]
    for spec in specs:
        load_checked(spec)  # a bad spec is quoted here, before any worker starts
    seed: int | str = int(args.seed) if args.seed.isdigit() else args.seed
    pairs = args.matches // 2

    with progress(pairs, "duel") as advance:
        last = [time.monotonic()]

        def on_pair(tally: DuelTally) -> None:
            advance(1)
            now = time.monotonic()
            if sprt is not None and (now - last[0] >= SPRT_EVERY or sprt.verdict()):
                last[0] = now
                low, high = sprt.bounds
                sys.stderr.write("\r\x1b[K" if sys.stderr.isatty() else "")
                print(f"{tally.matches} matches, {sum(tally.counts)} deal pairs: "
                      f"LLR {sprt.llr:.2f} in [{low:.2f}, {high:.2f}]", file=sys.stderr,
                      flush=True)

        try:
            summary = duel(specs, variant, seed=seed, pairs=pairs, workers=args.workers,
                           sprt=sprt, on_pair=on_pair, move_limit=args.move_limit)
        except MatchFailed as err:
            raise UserError(str(err)) from None
    summary["specs"] = specs
    if args.json:
        print(json.dumps(summary))
    else:
        print(duel_table(summary))
    return EXIT[summary["verdict"]] if sprt is not None else 0


def _pct(x: float) -> str:
    return f"{x:.1%}"


def _interval(bounds: list[float | None], fmt: str = "{:+.0f}") -> str:
    low, high = (fmt.format(x) if x is not None else ("-inf" if i == 0 else "+inf")
                 for i, x in enumerate(bounds))
    return interval(low, high)


def duel_table(s: dict[str, Any]) -> str:
    """The duel summary as two plain tables and, with --sprt, the verdict."""
    a, b = s["bots"]
    rows = []
    for name in (a, b):
        rows.append([name, f"{s['points_per_deal'][name]:.1f}", s["faults"][name],
                     per_move(s["ms_per_move"][name]), per_move(s["ms_per_move_median"][name])])
    title = (f"{s['matches']} matches ({s['pairs']} duplicate pairs), {s['deals']} deals in "
             f"{s['seconds']:.1f} s on {s['workers']} processes; seed {s['seed']}")
    text = table(title, ["bot", "points/deal", "faults", "time/move", "median"], rows,
                 right=["points/deal", "faults", "time/move", "median"])
    decided = s["deal_wins"] + s["deal_losses"]
    elo = s["elo"]
    measures = [
        [f"deals won by {a}", f"{s['deal_wins']}/{decided}", _pct(s["deal_win_rate"]),
         _interval(s["deal_win_ci"], fmt="{:.1%}")],
        [f"matches won by {a}", f"{s['match_wins']}/{s['matches']}",
         _pct(s["match_win_rate"]), _interval(s["match_win_ci"], fmt="{:.1%}")],
        [f"Elo of {a} - {b}", f"{s['deal_pairs']} pairs",
         "inf" if elo is None else f"{elo:+.1f}", _interval(s["elo_ci"])],
    ]
    text += "\n\n" + table(None, ["measure", "of", "value", "95% interval"], measures,
                           right=["of", "value"])
    text += (f"\n(deals: {s['deal_ties']} at 60-60 and {s['fault_deals']} ended by a fault are "
             "not counted as won or lost)")
    if "verdict" in s:
        low, high = s["bounds"]
        t = s["sprt"]
        said = {"H1": f"H1 accepted (Elo {t['elo1']:g} rather than {t['elo0']:g}): {a} is the "
                      "stronger",
                "H0": f"H0 accepted (Elo {t['elo0']:g} rather than {t['elo1']:g}): {a} is not "
                      f"{t['elo1']:g} Elo stronger",
                None: "undecided: the match limit came first"}[s["verdict"]]
        text += (f"\nSPRT elo0 {t['elo0']:g}, elo1 {t['elo1']:g} (alpha {t['alpha']:g}, beta "
                 f"{t['beta']:g}): LLR {s['llr']:.2f} in [{low:.2f}, {high:.2f}]\n{said}")
    return text
