"""A bot's rating over time as an inline SVG polyline: no charting library, no JavaScript."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

WIDTH, HEIGHT, PAD = 640, 160, 4


def rating_plot(history: Sequence[Mapping[str, Any]], key: str = "elo") -> dict[str, Any] | None:
    """``{"points", "low", "high", "games", "width", "height"}`` for the template; None for
    fewer than two points."""
    values = [float(h[key]) for h in history]
    if len(values) < 2:
        return None
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    step = (WIDTH - 2 * PAD) / (len(values) - 1)
    points = " ".join(f"{PAD + i * step:.1f},{PAD + (high - v) / span * (HEIGHT - 2 * PAD):.1f}"
                      for i, v in enumerate(values))
    return {"points": points, "low": low, "high": high, "games": len(values),
            "width": WIDTH, "height": HEIGHT}


__all__ = ["rating_plot"]
