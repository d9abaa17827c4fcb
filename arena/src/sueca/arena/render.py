"""Terminal output shared by the commands: progress bars, result tables, a match trick by trick.

Everything here uses rich and is imported only by commands that print, so the engine, the SDK
and the workers never pay for it. :func:`render_match` takes a ``sueca-replay/1`` record (a
dict), wherever it came from: a replay file (``replay``) or Redis (``matches show``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from sueca.arena.format import MISSING, end_word, outcome_words, score
from sueca.engine import DEFAULT
from sueca.engine.game import End

SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
SUIT_WORDS = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
RED = {"D", "H"}


#: the width of a console that is not a terminal: unbounded in practice, so a table into a pipe
#: or file is as wide as its content and never cuts or wraps an id or a name
PIPE_WIDTH = 10_000


def console(stderr: bool = False) -> Console:
    """A rich console: fitted to a terminal; ``COLUMNS`` wide when that is set (a terminal's or
    a pipe's: a person who asks for 60 columns gets 60); else, into a pipe or file, as wide as
    what it prints."""
    out = Console(stderr=stderr, highlight=False)
    if not out.is_terminal and _columns() is None:
        out = Console(stderr=stderr, highlight=False, width=PIPE_WIDTH)
    elif not out.is_terminal:
        out = Console(stderr=stderr, highlight=False, width=_columns())
    return out


def _columns() -> int | None:
    """``COLUMNS`` as a width, or None when it is unset or not a positive number."""
    value = os.environ.get("COLUMNS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def stdout() -> Console:
    return console()


def stderr() -> Console:
    return console(stderr=True)


@contextmanager
def progress(total: int, label: str) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``; a bar is drawn on stderr only when stderr is a terminal."""
    if not sys.stderr.isatty():
        def ignore(n: int = 1) -> None:
            pass
        yield ignore
        return
    from rich.progress import (  # deferred: only a terminal's progress bar needs it
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TimeRemainingColumn(), console=stderr(), transient=True)
    with bar:
        task = bar.add_task(label, total=total)

        def advance(n: int = 1) -> None:
            bar.advance(task, n)
        yield advance


def table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[object]],
          right: Sequence[str] = ()) -> Table:
    """A plain result table; columns named in ``right`` are right-aligned (numbers). Only the
    first column (names) and the last (free text) wrap on a narrow terminal, and a cell is
    never cut: what does not fit folds onto another line."""
    t = Table(title=title, title_justify="left", header_style="bold")
    for i, name in enumerate(columns):
        t.add_column(name, justify="right" if name in right else "left",
                     no_wrap=0 < i < len(columns) - 1, overflow="fold")
    for row in rows:
        t.add_row(*(x if isinstance(x, Text) else str(x) for x in row))
    return t


def card_text(name: str, style: str = "") -> Text:
    """``"AS"`` -> ``A♠``; hearts and diamonds in red."""
    rank, suit = name[:-1], name[-1:]
    colour = "red" if suit in RED else ""
    return Text(rank + SUIT_SYMBOLS.get(suit, suit), style=" ".join(s for s in (colour, style) if s))


def _seat_label(seats: Sequence[str], seat: int | None) -> str:
    if seat is None:
        return MISSING
    name = seats[seat] if 0 <= seat < len(seats) else "?"
    return f"{seat} {name}"


def _team_label(seats: Sequence[str], team: int) -> str:
    names = [seats[s] for s in (team, team + 2) if s < len(seats)]
    same = len(set(names)) == 1
    return f"team {team} ({names[0] if same and names else ' & '.join(names)})"


def _variant_words(variant: Mapping[str, Any]) -> str:
    """The variant's non-default rules as key=value words ("default rules" if none)."""
    default = DEFAULT.to_dict()
    words = [f"{k}={v}" for k, v in variant.items() if default.get(k) != v and k != "direction"]
    return " ".join(words) or "default rules"


def render_match(record: Mapping[str, Any]) -> RenderableType:  # Any: a replay file's JSON
    """A ``sueca-replay/1`` record shown trick by trick: cards by seat, who took each trick and
    its points, then per deal the card points, the game points and the running cross score.
    Read defensively (a record from a file may lack any key): a mapping, not a ReplayRecord."""
    seats = [str(s) for s in record.get("seats") or ["?"] * 4]
    variant = record.get("variant") or {}
    parts: list[RenderableType] = []
    head = Text()
    head.append(f"match {record.get('match_id', '?')}", style="bold")
    head.append(f"  seed {record.get('seed')!s}  ")
    head.append(_variant_words(variant), style="dim")
    parts.append(head)
    parts.append(Text("seats " + ", ".join(_seat_label(seats, s) for s in range(4))
                      + "  (team 0: seats 0 and 2)"))
    cross = [0, 0]
    for k, deal in enumerate(record.get("deals") or []):
        parts.append(Text(""))
        parts.append(_render_deal(k, deal, seats, cross))
    winner = record.get("winner")
    gp = record.get("game_points") or cross
    end = record.get("end")
    fault_seat = next((d.get("fault_seat") for d in reversed(record.get("deals") or [])
                       if d.get("fault_seat") is not None), None)
    fault_bot = seats[fault_seat] if isinstance(fault_seat, int) and 0 <= fault_seat < 4 else None
    final = Text()
    words = outcome_words(winner, gp, None if end is None else str(end), fault_bot)
    if winner is not None:  # "team 0 (alice & bob) wins ...": the team's bots, named
        words = words.replace(f"team {winner} wins", f"{_team_label(seats, winner)} wins the "
                              "match", 1)
    final.append(words, style="bold")
    parts.append(Text(""))
    parts.append(final)
    return Group(*parts)


def _render_deal(k: int, deal: Mapping[str, Any], seats: Sequence[str],
                 cross: list[int]) -> RenderableType:
    dealer = deal.get("dealer")
    trump = str(deal.get("trump", "??"))
    title = Text()
    title.append(f"deal {k + 1}", style="bold")
    title.append(f"  dealer {_seat_label(seats, dealer)}  trump ")
    title.append_text(card_text(trump))
    title.append(f" ({SUIT_WORDS.get(trump[-1:], '?')})")
    end = deal.get("end")
    if end == End.REDEAL:
        title.append("  thrown in: weak-hand redeal", style="yellow")
        return title
    t = Table(title=title, title_justify="left", header_style="bold", show_edge=False)
    t.add_column("#", justify="right")
    for s in range(4):
        t.add_column(f"{s} {seats[s] if s < len(seats) else '?'}")
    t.add_column("taken by")
    t.add_column("pts", justify="right")
    fault_seat = deal.get("fault_seat")
    for n, trick in enumerate(deal.get("tricks") or [], 1):
        leader = trick.get("leader", 0)
        winner = trick.get("winner")
        cells: list[Text] = [Text("")] * 4
        for i, c in enumerate(trick.get("cards") or []):
            seat = (leader + i) & 3
            style = "bold reverse" if seat == winner else ""
            if winner is None and end == End.RENUNCIA and seat == fault_seat and i == len(trick["cards"]) - 1:
                style = "bold red"
            cell = card_text(str(c), style)
            if i == 0:
                cell = Text("›", style="dim") + cell
            cells[seat] = cell
        if winner is None:
            taken = Text(end_word(end) if end else MISSING, style="red")
        else:
            taken = Text(_seat_label(seats, winner))
        t.add_row(str(n), *cells, taken, str(trick.get("points", 0)))
    pts = deal.get("points") or [0, 0]
    gp = deal.get("game_points") or [0, 0]
    cross[0] += gp[0]
    cross[1] += gp[1]
    foot = Text()
    foot.append(f"card points {score(pts)}")
    foot.append(f"  game points +{gp[0]}/+{gp[1]}")
    foot.append(f"  cross {score(cross)}", style="bold")
    if end and end != End.NORMAL:
        foot.append(f"  ended by a {end_word(end)}", style="red")
        if fault_seat is not None:
            foot.append(f" of seat {_seat_label(seats, fault_seat)}", style="red")
    return Group(t, foot)
