"""``sueca-arena leaderboard``: live ratings of the registered bots."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from sueca.arena.cli.common import add_redis, console, emit, fmt, open_store


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("leaderboard", help="live ratings of the registered bots")
    add_redis(p)
    p.add_argument("--by", choices=("elo", "openskill"), default="elo",
                   help="order by Elo or by OpenSkill's conservative mu - 3 sigma")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_leaderboard)


def print_leaderboard(rows: Sequence[Mapping[str, Any]], out: Any = None) -> None:
    from rich.table import Table
    table = Table(title="Leaderboard")
    for col in ("#", "bot", "Elo ±95%", "OpenSkill μ ±2σ", "games", "score"):
        table.add_column(col, justify="left" if col == "bot" else "right", no_wrap=True)
    for r in rows:
        table.add_row(str(r["rank"]), r["bot"], f"{r['elo']:.0f} ± {fmt(r['elo_pm'])}",
                      f"{r['mu']:.1f} ± {r['mu_pm']:.1f}", str(r["games"]), f"{r['score']:g}")
    (out or console()).print(table)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from sueca.arena.leaderboard import leaderboard
    rows = leaderboard(open_store(args), args.by)
    emit(args, rows, print_leaderboard)
    return 0


