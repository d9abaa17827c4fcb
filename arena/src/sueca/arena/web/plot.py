"""A bot's rating over time as an inline SVG chart with axes: no charting library, no JavaScript.

The x axis is time (UTC) when every point has one, else the game's number; the y axis is the
rating. Both have labelled ticks at round values. The SVG scales to its box (``viewBox``, width
100%), so the same chart fits a phone and a desktop.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

WIDTH, HEIGHT = 640, 220
LEFT, RIGHT, TOP, BOTTOM = 52, 14, 10, 40  # margins: room for the tick labels
TICKS = 5  # about this many ticks on each axis
MIN_SPAN = 180.0  # seconds of history below which the x axis counts games, not time


def nice_ticks(low: float, high: float, count: int = TICKS) -> list[float]:
    """Round values (1, 2 or 5 times a power of ten apart) from at or below ``low`` to at or
    above ``high``."""
    span = high - low
    if span <= 0:
        return [low]
    raw = span / max(1, count - 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first, last = math.floor(low / step) * step, math.ceil(high / step) * step
    return [first + i * step for i in range(round((last - first) / step) + 1)]


def _time_ticks(low: float, high: float) -> tuple[list[float], str, str]:
    """Ticks over a time span at round minutes, hours or days, their label format, and the
    axis title (the date when every tick is on one day)."""
    span = max(high - low, 1.0)
    steps = (60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400,
             30 * 86400)
    step = next((s for s in steps if span / s <= TICKS), 365 * 86400)
    first = math.ceil(low / step) * step
    ticks = [float(first + i * step) for i in range(int((high - first) // step) + 1)]
    one_day = time.gmtime(low)[:3] == time.gmtime(high)[:3]
    if step < 86400:
        fmt = "%H:%M" if one_day else "%d %b %H:%M"
    else:
        fmt = "%d %b"
    title = time.strftime("%Y-%m-%d", time.gmtime(low)) + " (UTC)" if one_day else "date (UTC)"
    return ticks, fmt, title


def rating_plot(history: Sequence[Mapping[str, Any]], key: str = "elo",  # Any: JSON numbers
                label: str = "live Elo") -> Markup | None:
    """The SVG chart of ``history[i][key]`` (a bot page's live Elo after each rated game);
    None for fewer than two points."""
    values = [float(h[key]) for h in history]
    if len(values) < 2:
        return None
    stamps = [h.get("time") for h in history]
    # a time axis needs a span its ticks can label (round minutes at least)
    timed = all(isinstance(t, int | float) for t in stamps) and \
        float(stamps[-1]) - float(stamps[0]) >= MIN_SPAN  # type: ignore[arg-type]
    xs = [float(t) for t in stamps] if timed else [float(i + 1) for i in range(len(values))]  # type: ignore[arg-type]
    x0, x1 = xs[0], xs[-1]
    low, high = min(values), max(values)
    if high - low < 10:  # a flat line: give it room
        low, high = low - 5, high + 5
    yticks = nice_ticks(low, high)
    low, high = min(low, yticks[0]), max(high, yticks[-1])
    w, h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + (x - x0) / ((x1 - x0) or 1.0) * w

    def py(y: float) -> float:
        return TOP + (high - y) / ((high - low) or 1.0) * h

    parts = [f'<svg class="plot" viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" role="img" '
             f'aria-label="{escape(label)} after each of the last {len(values)} rated games" '
             f'style="max-width:{WIDTH}px;background:#fff;border:1px solid #dcdcde">']
    for y in yticks:
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + w}" y1="{py(y):.1f}" y2="{py(y):.1f}" '
                     f'stroke="#eef0f0"/>'
                     f'<text class="ytick" x="{LEFT - 6}" y="{py(y) + 4:.1f}" '
                     f'text-anchor="end" font-size="12">{y:.0f}</text>')
    if timed:
        xticks, fmt, title = _time_ticks(x0, x1)
        labels = [time.strftime(fmt, time.gmtime(x)) for x in xticks]
    else:
        xticks = [x for x in nice_ticks(x0, x1) if x0 <= x <= x1 and x == int(x)]
        labels, title = [f"{x:.0f}" for x in xticks], "rated game"
    for x, text in zip(xticks, labels):
        parts.append(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{TOP + h}" y2="{TOP + h + 5}" '
                     f'stroke="#646970"/>'
                     f'<text class="xtick" x="{px(x):.1f}" y="{TOP + h + 18}" '
                     f'text-anchor="middle" font-size="12">{escape(text)}</text>')
    parts.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{TOP + h}" stroke="#646970"/>'
                 f'<line x1="{LEFT}" x2="{LEFT + w}" y1="{TOP + h}" y2="{TOP + h}" '
                 f'stroke="#646970"/>'
                 f'<text x="{LEFT + w / 2:.0f}" y="{HEIGHT - 4}" text-anchor="middle" '
                 f'font-size="12" fill="#646970">{escape(title)}</text>'
                 f'<text x="12" y="{TOP + h / 2:.0f}" text-anchor="middle" font-size="12" '
                 f'fill="#646970" transform="rotate(-90 12 {TOP + h / 2:.0f})">'
                 f'{escape(label)}</text>')
    points = " ".join(f"{px(x):.1f},{py(v):.1f}" for x, v in zip(xs, values))
    parts.append(f'<polyline fill="none" stroke="#14532d" stroke-width="2" points="{points}"/>'
                 "</svg>")
    return Markup("".join(parts))


__all__ = ["rating_plot", "nice_ticks"]
