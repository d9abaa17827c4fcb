"""Quantiles of measured figures: nearest-rank over the values themselves, PromQL's
``histogram_quantile`` over cumulative histogram buckets (a Prometheus histogram scraped twice),
and :func:`geometric_bucket_quantile` over the per-bucket counts of a log-spaced histogram (the
bots' turn times kept in Redis). The load tester, the benches and the per-bot health figures all
read their percentiles here."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

__all__ = ["geometric_bucket_quantile", "histogram_quantile", "nearest_rank"]

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


def geometric_bucket_quantile(counts: Sequence[int], bounds: Sequence[float], q: float,
                              cap: float) -> float | None:
    """The ``q`` quantile of a histogram of per-bucket ``counts`` whose upper ``bounds`` grow
    geometrically (the last bucket is open and ends at ``cap``, the largest value seen),
    interpolated geometrically inside its bucket and never above ``cap``; None when empty."""
    total = sum(counts)
    if not total:
        return None
    want = max(1.0, q * total)
    seen = 0
    for i, n in enumerate(counts):
        if n and seen + n >= want:
            lo = bounds[i - 1] if i else 0
            hi = bounds[i] if i < len(bounds) else max(cap, lo)
            frac = (want - seen) / n
            value = lo * (hi / lo) ** frac if lo else hi * frac
            return min(value, cap or value)
        seen += n
    return cap
