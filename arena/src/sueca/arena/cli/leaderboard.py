"""``sueca-arena leaderboard``: the registered bots by rating of record, with the live columns."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sueca.arena.cli.common import Column, add_redis, clean, console, fitted_table, fmt, open_store

if TYPE_CHECKING:
    from rich.console import Console

    from sueca.arena.records import LeaderboardRow


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from sueca.arena.leaderboard import ORDERS
    p = sub.add_parser("leaderboard", help="the registered bots by rating of record (±95%%)")
    add_redis(p)
    p.add_argument("--by", choices=ORDERS, default="rating",
                   help="order by the rating of record (default), live Elo, or live OpenSkill's "
                        "conservative mu - 3 sigma")
    p.add_argument("--json", action="store_true",
                   help="the rows as /api/leaderboard gives them, as JSON")
    p.set_defaults(func=cmd_leaderboard)


# The columns, with the order in which a narrow terminal drops them (0 first): the per-move
# latency and the live ratings are the least needed beside the rating of record. Headers on
# several lines are no wider than their numbers: all eight fit in 80 columns.
_COLUMNS: tuple[Column, ...] = (
    ("#", None), ("bot", None), ("rating ±95%", None), ("games", 4), ("live\nElo", 2),
    ("live\nOpenSkill\nμ ±2σ", 1), ("faults\nR/T/D/E", 3), ("p50\nms", 0))


def print_leaderboard(rows: Sequence[LeaderboardRow], out: Console | None = None) -> None:
    """The table, fitted to the console (:func:`~sueca.arena.cli.common.fitted_table`)."""
    from sueca.arena.ratings.fit import PROVISIONAL_GAMES
    out = out or console()
    caption = (f"rating: fit over every result, 95% interval · ? provisional (fewer than "
               f"{PROVISIONAL_GAMES} games) · live: incremental, depends on the order games "
               "finished · faults: renúncias/timeouts/disconnects/bot errors · p50: the bot's median "
               "answer time")
    out.print(fitted_table("Leaderboard", caption, _COLUMNS, [_cells(r) for r in rows], out))


def _cells(r: LeaderboardRow) -> list[str]:
    """One row's cells, in the order of ``_COLUMNS``."""
    faults = r.get("faults") or {}
    p50 = r.get("p50_ms")
    return [str(r["rank"]), r["bot"] + (" ?" if r["provisional"] else ""),
            f"{r['rating']:.0f} ± {fmt(r['rating_pm'])}", str(r["matches"]), f"{r['elo']:.0f}",
            f"{r['mu']:.1f} ± {r['mu_pm']:.1f}",
            "/".join(str(faults.get(k, 0)) for k in ("renuncia", "timeout", "disconnect",
                                                           "bot_error")),
            "—" if p50 is None else f"{p50:.1f}"]


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from sueca.arena.leaderboard import json_row, leaderboard
    rows = leaderboard(open_store(args), args.by)
    if args.json:  # the same rows as /api/leaderboard: ISO times, sensibly rounded numbers
        print(json.dumps(clean([json_row(r) for r in rows]), indent=2))
    else:
        print_leaderboard(rows)
    return 0
