"""selfplay: two bots play N matches in this process, and a table says who won.

Bot A and bot B form the two teams (each bot fills both seats of its team). Matches alternate
which team sits in seats 0 and 2; the first dealer and the decks come from the match seed, which
is derived from --seed and the match number, so a run is reproducible. With --duplicate matches
come in pairs with the same seed (so the same cards) and the teams swapped, which takes most of
the luck of the deal out of the comparison. The 95% interval is the Wilson score interval of the
win rate: when the two bots' intervals do not overlap, the difference is not luck.

A bot is named by its spec, shortened where the spec is a path (``path/to/mybot.py:Greedy``
is ``mybot:Greedy``, an exec: bot's words lose their folders); --name NAME, once per bot in
the order of --bots, names it instead, in the table and in the replays' seats.

  sueca-bot selfplay --bots mybot:Greedy,random --matches 200
  sueca-bot selfplay --bots ./mybot.py:Greedy,heuristic --duplicate --replays games.jsonl
  sueca-bot selfplay --bots ./bots/v2/mybot.py:Greedy,./bots/v1/mybot.py:Greedy \
      --name v2 --name v1
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from sueca.engine import Variant, VariantError
from sueca.engine import replay as replays
from sueca.sdk.cli.common import Bounded, UserError, load_checked
from sueca.sdk.cli.execflags import add_flags, use_flags
from sueca.sdk.logs import printable
from sueca.sdk.table import MISSING, interval, progress, table

BATCH = 200  # replay records written per file append
NAME_CHARS = 40  # the longest --name: the table fits 80 columns


def add_parser(sub: Any) -> None:
    p = sub.add_parser("selfplay", help="play two bots against each other in this process",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bots", required=True, metavar="A,B",
                   help="two bots: example names (random, heuristic, reckless, pimc), module:Class, "
                        "file.py:Class or exec:COMMAND")
    p.add_argument("--matches", action=Bounded, kind=int, low=1, default=100,
                   help="matches to play (100)")
    p.add_argument("--seed", default="0", metavar="S", help="seed of the whole run (0)")
    p.add_argument("--variant", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                   help="rule variants, e.g. tie=double target=8")
    p.add_argument("--replays", metavar="PATH", help="append one sueca-replay/1 line per match")
    p.add_argument("--duplicate", action="store_true",
                   help="play pairs of matches with the same cards and the teams swapped")
    p.add_argument("--name", action="append", default=[], metavar="NAME",
                   help="a bot's name in the table and the replays, once per bot in the order "
                        "of --bots (default: its spec, a path shortened to file:Class)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    add_flags(p, timeout=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # deferred: asyncio, subprocess (exec: bots): ~50 ms CPU measured, at every start-up else
    from sueca.sdk.selfplay import MatchFailed, bot_labels, selfplay

    try:
        variant = Variant.parse(args.variant)
    except VariantError as err:
        raise UserError(str(err)) from None
    use_flags(args)
    specs = [s.strip() for s in args.bots.split(",")]
    if len(specs) != 2 or not all(specs):
        raise UserError(f"bad --bots {args.bots!r}: expected two bots A,B, e.g. heuristic,random")
    names = bot_labels(specs, checked_names(args.name))
    factories = [load_checked(s) for s in specs]
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

    pending: list[replays.ReplayRecord] = []
    started = time.perf_counter()
    with progress(args.matches, "selfplay") as advance:
        def on_match(match: Any, rec: replays.ReplayRecord | None) -> None:
            if rec is not None:
                pending.append(rec)
                if len(pending) >= BATCH:
                    replays.write(replay_path, pending)  # type: ignore[arg-type]
                    pending.clear()
            advance(1)

        try:
            summary = selfplay(factories, names, variant=variant, matches=args.matches,
                               seed=seed, duplicate=args.duplicate, on_match=on_match,
                               want_records=replay_path is not None)
        except MatchFailed as err:
            raise UserError(str(err)) from None
        finally:
            if pending:  # the matches played before a failure keep their replays
                replays.write(replay_path, pending)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    summary["seconds"] = round(seconds, 3)
    summary["bots"] = [dict(b, spec=s) for b, s in zip(summary["bots"], specs)]
    if replay_path is not None:
        summary["replays"] = str(replay_path)
    if args.json:
        print(json.dumps(summary))
        return 0
    print(summary_table(summary, variant))
    return 0


def checked_names(names: list[str]) -> list[str]:
    """The --name values: at most one per bot, each a short line of printable text."""
    if len(names) > 2:
        raise UserError(f"bad --name '{printable(names[2], NAME_CHARS)}': give one --name per "
                        "bot, at most two")
    for name in names:
        if not name.strip() or len(name) > NAME_CHARS or not name.isprintable():
            raise UserError(f"bad --name '{printable(name, NAME_CHARS)}': 1 to {NAME_CHARS} "
                            "printable characters")
    return [name.strip() for name in names]


def summary_table(summary: dict[str, Any], variant: Any) -> str:
    """The self-play summary as the plain table both commands print."""
    rows = []
    for b in summary["bots"]:
        lo, hi = b["ci95"]
        rows.append([b["name"], b["matches"], b["wins"], f"{b['win_rate']:.1%}",
                     interval(f"{lo:.1%}", f"{hi:.1%}"),
                     f"{b['mean_points']:.1f}" if b["deals"] else MISSING, b["faults"]])
    words = " ".join(variant.words()) or "default rules"
    mode = ", duplicate pairs" if summary["duplicate"] else ""
    title = (f"{summary['matches']} matches{mode}, {summary['deals']} deals in "
             f"{summary['seconds']:.2f} s; seed {summary['seed']}; {words}")
    text = table(title, ["bot", "matches", "won", "win rate", "95% interval", "points/deal",
                         "faults"], rows,
                 right=["matches", "won", "win rate", "points/deal", "faults"])
    if "replays" in summary:
        text += f"\nreplays appended to {summary['replays']}"
    return text
