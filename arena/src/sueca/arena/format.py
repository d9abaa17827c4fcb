"""How the league writes numbers, missing values, intervals, times and outcomes for people, and
makes its data JSON-safe: one module, so that the CLI's tables and the web's pages say the same
thing the same way.

The conventions: a missing value is ``—`` (an em dash); an interval is ``LOW..HIGH`` (a hyphen
would read as a minus sign beside a negative bound); a score is ``3–1`` (an en dash); a time
per move has three significant figures, in ms from 0.1 ms up and in µs below, so that 25.2 µs
and 0.798 µs stay readable beside 12.3 ms; a match a fault ended says so rather than show a
score that was never played for.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from sueca.engine.game import FAULT_ENDS, End
from sueca.sdk import table

__all__ = ["MISSING", "fmt", "pm", "interval", "ms", "score", "when", "iso_time", "clean",
           "outcome_words", "end_word"]

MISSING = table.MISSING  # the SDK's tables write the same conventions

#: how an end reads in prose ("team 1 wins on a renúncia by reckless"); the End's value
#: (``renuncia``, ``bot_error``) is what records, filters and --json carry
_END_WORDS = {End.RENUNCIA: "renúncia", End.TIMEOUT: "timeout", End.DISCONNECT: "disconnect",
              End.BOT_ERROR: "bot error", End.ABORTED: "abort", End.REDEAL: "weak-hand redeal",
              End.NORMAL: "normal end"}


def end_word(end: str) -> str:
    """An end as prose says it: ``renúncia`` for ``renuncia``, ``bot error`` for
    ``bot_error``; an end this version does not know, as it is."""
    return next((w for e, w in _END_WORDS.items() if e == end), end)


def _finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def fmt(x: float | None, digits: int = 0) -> str:
    """``x`` to ``digits`` decimals; :data:`MISSING` for None, NaN and infinity."""
    return f"{x:.{digits}f}" if x is not None and _finite(x) else MISSING


def pm(x: float | None, margin: float | None, digits: int = 0) -> str:
    """A value and its margin: ``1523 ± 41`` (``1500 ± —``: never fitted)."""
    return f"{fmt(x, digits)} ± {fmt(margin, digits)}"


def interval(low: float | None, high: float | None, digits: int = 1, unit: str = "") -> str:
    """``LOW..HIGH``, each with ``unit``: ``57.1%..70.3%``; :data:`MISSING` when a bound is."""
    if low is None or high is None or not (_finite(low) and _finite(high)):
        return MISSING
    return table.interval(f"{low:.{digits}f}{unit}", f"{high:.{digits}f}{unit}")


#: a time per move (given in ms) to three significant figures: ``12.3 ms``, ``25.2 µs``
ms = table.per_move


def score(points: Sequence[int] | None) -> str:
    """Game points as ``3–1``; :data:`MISSING` without them."""
    if not points or len(points) < 2:
        return MISSING
    return f"{points[0]}–{points[1]}"


def outcome_words(winner: int | None, points: Sequence[int] | None, end: str | None,
                  fault_bot: str | None = None) -> str:
    """A match's result in words: ``team 0 wins 4–2``; a fault's win says what the fault was
    (``team 1 wins on a timeout by slowbot``), with the score only if one was played for
    (``team 1 wins 0–4 on a renúncia by reckless``)."""
    if end is None:
        return MISSING
    fault = next((f for f in FAULT_ENDS if f == end), None)
    if fault is not None:
        by = f" by {fault_bot}" if fault_bot else ""
        played = f" {score(points)}" if points and any(points) else ""
        head = "no winner" if winner is None else f"team {winner} wins"
        return f"{head}{played} on a {end_word(fault)}{by}"
    if winner is None:
        return f"no winner ({end}), {score(points)}"
    return f"team {winner} wins {score(points)}"


def when(ts: object) -> str:
    """Unix seconds as ``2026-12-01 17:24`` UTC, for a person; :data:`MISSING` if not a time."""
    if not isinstance(ts, int | float) or not math.isfinite(ts):
        return MISSING
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ts))


def iso_time(ts: object) -> str | None:
    """Unix seconds as ISO 8601 UTC to the second (``2026-12-01T17:24:59Z``); None stays None."""
    if not isinstance(ts, int | float) or not math.isfinite(ts):
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def clean(x: object) -> object:
    """JSON-safe: NaN and infinity become None (JSON has neither), in any dict, list or tuple."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [clean(v) for v in x]
    return x
