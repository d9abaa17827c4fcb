"""Reading a Prometheus ``/metrics`` page: fetch it, parse it into samples, and compare two
scrapes (a counter's growth, the buckets a histogram filled, a counter's growth by label).

The text exposition format is parsed by ``prometheus_client.parser`` (the client library the
referee and the workers already serve their metrics with), not by hand: it handles escaping,
``+Inf``, exemplars and the OpenMetrics variants the same way as the code that wrote the page.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Mapping, Sequence

from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Samples", "counter_delta", "deltas_by_label", "histogram_delta", "merged",
           "metrics_url", "parse_samples", "scrape", "total"]

#: Every sample of a page: ``(name, sorted ((label, value), ...))`` -> value.
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def metrics_url(port: int, host: str = "127.0.0.1") -> str:
    return f"http://{host}:{port}/metrics"


def parse_samples(text: str) -> Samples:
    """Every sample of a Prometheus text page."""
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = float(s.value)
    return out


def scrape(url: str, timeout: float = 5.0) -> Samples:
    """Fetch and parse the page at ``url`` (OSError when it does not answer)."""
    with urllib.request.urlopen(url, timeout=timeout) as reply:
        return parse_samples(reply.read().decode())


def total(samples: Samples, name: str, labels: Mapping[str, str] | None = None) -> float:
    """The sum of the samples named ``name`` whose labels include ``labels``."""
    want = set((labels or {}).items())
    return sum(value for (n, have), value in samples.items()
               if n == name and want <= set(have))


def merged(scrapes: Sequence[Samples]) -> Samples:
    """Several servers' samples summed, as one server's."""
    out: Samples = {}
    for samples in scrapes:
        for key, value in samples.items():
            out[key] = out.get(key, 0.0) + value
    return out


def counter_delta(before: Samples, after: Samples, name: str) -> float | None:
    """How much counter ``name`` (with or without its ``_total`` suffix) grew between the
    scrapes, summed over its labels; None when the page has no such counter."""
    keys = [k for k in after if k[0] in (name, name.removesuffix("_total"))]
    if not keys:
        return None
    return sum(after[k] - before.get(k, 0.0) for k in keys)


def deltas_by_label(before: Samples, after: Samples, name: str, label: str) -> dict[str, int]:
    """How much counter ``name`` grew between the scrapes, by the value of ``label`` (only
    those that grew)."""
    out: dict[str, int] = {}
    for key, value in after.items():
        if key[0] == name:
            delta = int(value - before.get(key, 0.0))
            if delta:
                which = dict(key[1]).get(label, "")
                out[which] = out.get(which, 0) + delta
    return out


def histogram_delta(before: Samples, after: Samples, name: str) -> list[tuple[float, float]]:
    """Cumulative ``(upper bound, count)`` pairs of the buckets of histogram ``name`` filled
    between the two scrapes, summed over every other label (for
    :func:`sueca.arena.quantiles.histogram_quantile`)."""
    buckets: dict[float, float] = {}
    for key, value in after.items():
        if key[0] != name + "_bucket":
            continue
        le = float(dict(key[1]).get("le", "+Inf"))
        buckets[le] = buckets.get(le, 0.0) + value - before.get(key, 0.0)
    return sorted(buckets.items())
