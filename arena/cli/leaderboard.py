"""``sueca-arena leaderboard``: the registered bots by rating of record, with the live columns."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from sueca.arena.cli.common import add_redis, console, emit, fmt, open_store


def add_parser(sub: argparse._SubParsersAction) -> None:
    from sueca.arena.leaderboard import ORDERS
    p = sub.add_parser("leaderboard", help="the registered bots by rating of record (±95%%)")
    add_redis(p)
    p.add_argument("--by", choices=ORDERS, default="rating",
                   help="order by the rating of record (default), live Elo, or live OpenSkill's "
                        "conservative mu - 3 sigma")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_leaderboard)


def print_leaderboard(rows: Sequence[Mapping[str, Any]], out: Any = None) -> None:
    from rich.table import Table

    from sueca.arena.record import PROVISIONAL_GAMES
    table = Table(title="Leaderboard",
                  caption=f"rating: fit over every result, 95% interval · ? provisional (fewer "
                          f"than {PROVISIONAL_GAMES} games) · live: incremental, depends on "
                          "the order games finished · faults: renúncias/timeouts/disconnects · "
                          "p50: the bot's median answer time")
    for col in ("#", "bot", "rating ±95%", "games", "live Elo", "live OpenSkill μ ±2σ",
                "faults R/T/D", "p50 ms"):
        table.add_column(col, justify="left" if col == "bot" else "right", no_wrap=True)
    for r in rows:
        mark = " ?" if r["provisional"] else ""
        faults = r.get("faults") or {}
        p50 = r.get("p50_ms")
        table.add_row(str(r["rank"]), r["bot"] + mark,
                      f"{r['rating']:.0f} ± {fmt(r['rating_pm'])}", str(r["matches"]),
                      f"{r['elo']:.0f}", f"{r['mu']:.1f} ± {r['mu_pm']:.1f}",
                      "/".join(str(faults.get(k, 0)) for k in ("renuncia", "timeout",
                                                               "disconnect")),
                      "—" if p50 is None else f"{p50:.1f}")
    (out or console()).print(table)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from sueca.arena.leaderboard import leaderboard
    rows = leaderboard(open_store(args), args.by)
    emit(args, rows, print_leaderboard)
    return 0
