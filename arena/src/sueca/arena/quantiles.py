"""Quantiles of measured figures: nearest-rank over the values themselves, and PromQL's
``histogram_quantile`` over cumulative histogram buckets (a Prometheus histogram scraped twice).
The load tester, the benches and the per-bot health figures all read their percentiles here."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

__all__ = ["histogram_quantile", "nearest_rank"]

Number = TypeVar("Number", int, float)


def nearest_rank(ordered: Sequence[Number], q: float) -> Number | None:
    """The nearest-rank ``q`` quantile (0 < q <= 1) of values sorted in increasing order: the
    smallest value with at least ``q`` of them at or below it; None when there are none."""
    if not ordered:
        return None
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def histogram_quantile(buckets: Sequence[tuple[float, float]], q: float) -> float | None:
    """Like PromQL's ``histogram_quantile``: ``buckets`` are cumulative ``(upper bound, count)``
    pairs in increasing order, ``+Inf`` last; linear within the bucket that holds the rank.
    None when the histogram is empty."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    rank = q * buckets[-1][1]
    lower_bound, lower_count = 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if le == float("inf"):
                return lower_bound  # beyond the last finite bucket: its bound is all we know
            if count == lower_count:
                return le
            return lower_bound + (le - lower_bound) * (rank - lower_count) / (count - lower_count)
        lower_bound, lower_count = le, count
    return buckets[-1][0]
