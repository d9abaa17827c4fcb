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


# The columns after "bot", with the order in which a narrow terminal drops them (0 first):
# the per-move latency and the live ratings are the least needed beside the rating of record.
# Headers on several lines are no wider than their numbers: all eight fit in 80 columns.
_COLUMNS = (("#", None), ("bot", None), ("rating ±95%", None), ("games", 4),
            ("live\nElo", 2), ("live\nOpenSkill\nμ ±2σ", 1), ("faults\nR/T/D", 3),
            ("p50\nms", 0))
_BOT_MIN = 8  # the bot's name folds onto more lines rather than shrink below this


def print_leaderboard(rows: Sequence[Mapping[str, Any]], out: Any = None) -> None:
    """The table, fitted to the console: a number is never cut (an 80-column terminal showed
    an empty rank and ``1940 ± 3…``); the bot's name folds instead, and when even that is not
    enough the least needed columns are left out, which the caption says."""
    from rich.cells import cell_len
    from rich.table import Table

    from sueca.arena.record import PROVISIONAL_GAMES
    out = out or console()
    cells = [_cells(r) for r in rows]
    need = [max([cell_len(line) for line in head.split("\n")] + [cell_len(c[i]) for c in cells])
            for i, (head, _) in enumerate(_COLUMNS)]
    keep = list(range(len(_COLUMNS)))

    def width(cols: list[int]) -> int:  # content + one space each side + the rules
        return sum(min(need[i], _BOT_MIN) if i == 1 else need[i] for i in cols) \
            + 3 * len(cols) + 1

    dropped = []
    for i in sorted((i for i, (_, d) in enumerate(_COLUMNS) if d is not None),
                    key=lambda i: _COLUMNS[i][1] or 0):
        if width(keep) <= out.width:
            break
        keep.remove(i)
        dropped.append(_COLUMNS[i][0].replace("\n", " "))
    caption = (f"rating: fit over every result, 95% interval · ? provisional (fewer than "
               f"{PROVISIONAL_GAMES} games) · live: incremental, depends on the order games "
               "finished · faults: renúncias/timeouts/disconnects · p50: the bot's median "
               "answer time")
    if dropped:
        caption += f" · too narrow to show: {', '.join(dropped)} (--json has every column)"
    table = Table(title="Leaderboard", caption=caption)
    for i in keep:
        head = _COLUMNS[i][0]
        if i == 1:
            table.add_column(head, justify="left", overflow="fold",
                             min_width=min(need[i], _BOT_MIN))
        else:
            table.add_column(head, justify="right", no_wrap=True, min_width=need[i])
    for c in cells:
        table.add_row(*(c[i] for i in keep))
    out.print(table)


def _cells(r: Mapping[str, Any]) -> list[str]:
    """One row's cells, in the order of ``_COLUMNS``."""
    faults = r.get("faults") or {}
    p50 = r.get("p50_ms")
    return [str(r["rank"]), r["bot"] + (" ?" if r["provisional"] else ""),
            f"{r['rating']:.0f} ± {fmt(r['rating_pm'])}", str(r["matches"]), f"{r['elo']:.0f}",
            f"{r['mu']:.1f} ± {r['mu_pm']:.1f}",
            "/".join(str(faults.get(k, 0)) for k in ("renuncia", "timeout", "disconnect")),
            "—" if p50 is None else f"{p50:.1f}"]


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from sueca.arena.leaderboard import leaderboard
    rows = leaderboard(open_store(args), args.by)
    emit(args, rows, print_leaderboard)
    return 0
