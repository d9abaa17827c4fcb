"""Plain terminal output for the ``sueca-bot`` commands: a text table and a progress bar.

Written here, in a few lines, because the SDK distribution depends on grpcio and protobuf only
(a bot author installs nothing else); ``sueca-arena`` prints the same tables through the same
functions.
"""

from __future__ import annotations

import math
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

__all__ = ["progress", "table", "per_move", "interval", "MISSING"]

MISSING = "—"  # a value that is not there (no moves, no bound)


def table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[Any]],
          right: Sequence[str] = ()) -> str:
    """The rows under a header, columns padded to their widest cell and two spaces apart;
    columns named in ``right`` are right-aligned (numbers). A cell may hold several lines."""
    cells = [[str(x).splitlines() or [""] for x in row] for row in rows]
    widths = [len(c) for c in columns]
    for row in cells:
        for i, lines in enumerate(row):
            widths[i] = max(widths[i], *(len(line) for line in lines))
    align_right = [c in right for c in columns]

    def line(parts: Sequence[str]) -> str:
        padded = [p.rjust(w) if r else p.ljust(w) for p, w, r in zip(parts, widths, align_right)]
        return "  ".join(padded).rstrip()

    out = [title] if title else []
    out.append(line(columns))
    out.append("  ".join("-" * w for w in widths))
    for row in cells:
        for k in range(max(len(lines) for lines in row)):
            out.append(line([lines[k] if k < len(lines) else "" for lines in row]))
    return "\n".join(out)


def per_move(ms: float | None) -> str:
    """A time per move, three significant figures in its unit: ``2.50 ms``, ``25.2 µs`` (below
    0.1 ms), ``312 ms``, ``0 ms``; ``—`` for none (or a time that is not finite)."""
    if ms is None or not math.isfinite(ms):
        return MISSING
    if ms == 0:
        return "0 ms"
    if ms < 0.1:
        return f"{_figures(ms * 1000)} µs"
    return f"{_figures(ms)} ms" if ms < 99.95 else f"{ms:.0f} ms"


def _figures(x: float) -> str:
    return f"{x:#.3g}".rstrip(".")


def interval(low: str, high: str) -> str:
    """An interval as the product writes one: ``57.1%..70.3%``."""
    return f"{low}..{high}"


@contextmanager
def progress(total: int, label: str, stream: TextIO | None = None,
             every: float = 0.1) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``. A one-line bar (done/total, elapsed, time left) is drawn on stderr,
    at most every ``every`` seconds, and erased at the end; only when stderr is a terminal, so
    piped or captured output never holds a bar."""
    out = sys.stderr if stream is None else stream
    if not out.isatty():
        yield _nothing
        return
    started = time.monotonic()
    state = {"done": 0, "drawn": 0.0}

    def draw() -> None:
        done = state["done"]
        elapsed = time.monotonic() - started
        left = elapsed / done * (total - done) if done else None
        tail = (f" {done}/{total} {_clock(elapsed)}"
                + (f" left {_clock(left)}" if left is not None and done < total else ""))
        room = shutil.get_terminal_size((80, 24)).columns - len(label) - len(tail) - 4
        width = max(10, min(40, room))
        filled = int(width * done / total) if total else width
        out.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}]{tail}\x1b[K")
        out.flush()

    def advance(n: int = 1) -> None:
        state["done"] += n
        now = time.monotonic()
        if now - state["drawn"] >= every or state["done"] >= total:
            state["drawn"] = now
            draw()

    draw()
    try:
        yield advance
    finally:
        out.write("\r\x1b[K")  # erased: the table that follows stands alone
        out.flush()


def _nothing(n: int = 1) -> None:
    """``advance`` when no bar is drawn."""


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 60}:{s % 60:02d}"
