"""``sueca-arena leaderboard``: the registered bots by rating of record, with the live columns."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from rich.console import Console

from sueca.arena.cli.common import Column, add_redis, clean, console, fitted_table, open_store
from sueca.arena.format import fmt, ms, pm
from sueca.arena.leaderboard import ORDERS, BoardRow, json_row, leaderboard
from sueca.arena.ratings.fit import PROVISIONAL_GAMES


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("leaderboard", help="the registered bots by rating of record (±95%%)")
    add_redis(p)
    p.add_argument("--by", choices=ORDERS, default="rating",
                   help="order by the rating of record (default), live Elo, or live OpenSkill's "
                        "conservative mu - 3 sigma")
    p.add_argument("--json", action="store_true",
                   help="the rows as /api/leaderboard gives them, as JSON")
    p.set_defaults(func=cmd_leaderboard)


# The columns, with the order in which a narrow terminal drops them (0 first): the per-move
# latency and the live ratings are the least needed beside the rating of record; whether the
# bot is online stays (a dead bot plays no match). Headers on several lines are no wider
# than their numbers: with names of up to 10 characters all nine fit in 80 columns.
_COLUMNS: tuple[Column, ...] = (
    ("#", None), ("bot", None), ("rating ±95%", None), ("rated", 4), ("live\nElo", 2),
    ("live\nOpenSkill\nμ ±2σ", 1), ("faults\nR/T/D/E", 3), ("p50", 0), ("on-\nline", 5))
_FAULT_KINDS = ("renuncia", "timeout", "disconnect", "bot_error")


def print_leaderboard(rows: Sequence[BoardRow], out: Console | None = None) -> None:
    """The table, fitted to the console (:func:`~sueca.arena.cli.common.fitted_table`)."""
    out = out or console()
    caption = (f"rating: fit over every result, 95% interval · ? provisional (fewer than "
               f"{PROVISIONAL_GAMES} rated matches) · live: incremental, depends on the order "
               "matches finished · faults: renúncias/timeouts/disconnects/bot errors · p50: the "
               "bot's median time per move · rated: the matches the rating rests on · online: "
               "connected to a referee now")
    out.print(fitted_table("Leaderboard", caption, columns=_COLUMNS,
                           rows=[_cells(r) for r in rows], out=out))


def _cells(r: BoardRow) -> list[str]:
    """One row's cells, in the order of ``_COLUMNS``."""
    faults = r.get("faults") or {}
    return [str(r["rank"]), r["bot"] + (" ?" if r["provisional"] else ""),
            pm(r["rating"], r["rating_pm"]), str(r["matches"]), fmt(r["elo"]),
            pm(r["mu"], r["mu_pm"], 1), "/".join(str(faults.get(k, 0)) for k in _FAULT_KINDS),
            ms(r.get("p50_ms")), "yes" if r["connected"] else "no"]


def cmd_leaderboard(args: argparse.Namespace) -> int:
    rows = leaderboard(open_store(args), args.by)
    if args.json:  # the same rows as /api/leaderboard: ISO times, sensibly rounded numbers
        print(json.dumps(clean([json_row(r) for r in rows]), indent=2))
    else:
        print_leaderboard(rows)
    return 0
