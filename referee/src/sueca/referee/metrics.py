"""The referee's Prometheus metrics — the only module that defines them.

They live in prometheus_client's default registry (so the process and Python collectors come
along) and are created once per process, at import, with every known label value at 0. Only
the referee service imports this module; the engine and the SDK never do.

The two that move with every card (moves, move round trip) are plain counters read by a custom
collector: the event loop adds to Python ints, the /metrics thread reads them. That is a tenth of
the cost of prometheus_client's locked Counter and Histogram on the hot path.
"""

from __future__ import annotations

import platform
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from importlib.metadata import PackageNotFoundError, version

from prometheus_client import REGISTRY, Counter, Gauge, start_http_server
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from sueca.engine.game import ABORTED, FAULT_ENDS, NORMAL
from sueca.referee.faults import Fault


class _Tally:
    """A counter for the event loop thread only (no lock): ``inc`` is one addition."""

    def __init__(self, name: str, doc: str) -> None:
        self.name, self.doc, self.value = name, doc, 0
        REGISTRY.register(self)

    def inc(self, n: int = 1) -> None:
        self.value += n

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(self.name, self.doc, value=self.value)


class _Timings:
    """A histogram for the event loop thread only: ``observe`` is a bisect and two additions."""

    def __init__(self, name: str, doc: str, buckets: Sequence[float]) -> None:
        self.name, self.doc = name, doc
        self.bounds = tuple(buckets)
        self.counts = [0] * (len(self.bounds) + 1)
        self.sum = 0.0
        REGISTRY.register(self)

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(self.bounds, seconds)] += 1
        self.sum += seconds

    def collect(self) -> Iterator[Metric]:
        counts = list(self.counts)
        total, cumulative = 0, []
        for bound, n in zip((*self.bounds, float("inf")), counts):
            total += n
            cumulative.append(("+Inf" if bound == float("inf") else repr(bound), total))
        yield HistogramMetricFamily(self.name, self.doc, buckets=cumulative, sum_value=self.sum)


SESSIONS = Gauge("sueca_referee_sessions", "Bot streams connected to this referee")
ACTIVE_MATCHES = Gauge("sueca_referee_active_matches", "Matches running on this referee")
MOVES = _Tally("sueca_referee_moves", "Cards played and redeal answers applied")
# Fine between 10 and 200 ms, where the p99 of a loaded referee lies: a quantile is read by
# linear interpolation within its bucket, and with 50/100/200 ms alone a p99 of 133 ms read as
# 166 ms, of 65 ms as 87 ms (measured against every sample, bench referee --sessions 1000).
MOVE_RTT = _Timings(
    "sueca_referee_move_rtt_seconds",
    "From a turn request being queued for a bot to its valid answer arriving",
    (0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.06,
     0.075, 0.1, 0.125, 0.15, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0))
_FAULTS = Counter("sueca_referee_faults_total",
                  "Faults by kind and class: game (renuncia, timeout, disconnect, bot_error: the "
                  "in-game penalties a bot brings on itself), protocol (unknown_game, "
                  "not_your_seat, not_in_hand, out_of_turn, stale_request, malformed, "
                  "renuncia_refused), late (an answer to a game of that bot that had already "
                  "ended) and security (unauthenticated: refused connections and operator "
                  "calls)",
                  ["kind", "class"])
LIMIT_HITS = Counter(
    "sueca_referee_limit_hits_total",
    "Times a per-bot limit acted (sueca.referee.limits): out_queue (a session cut off for not "
    "reading), errors (an ActionError not answered), read_throttle (a stream's reading paused "
    "for its message or action rate), hello_deadline, streams_per_connection, "
    "connections_per_address, sessions_per_bot, refusals and hellos (a hello refused before "
    "Redis was asked: too many refused, or too many in all, from its address), "
    "operator_refusals (an operator call refused unread after too many wrong operator tokens "
    "from its address)", ["limit"])
BAD_HELLOS = Counter(
    "sueca_referee_bad_hellos_total",
    "Refused or missing hellos by peer address (the first 32 addresses seen, then 'other') "
    "and reason (no_hello, bad_hello, bad_name, no_token, bad_token, wrong_token, "
    "bad_capacity, rate_limited)", ["peer", "reason"])
MATCHES = Counter("sueca_referee_matches_total", "Finished matches by how they ended", ["end"])

# The class of every fault kind the referee counts; a kind not listed is a protocol fault.
GAME_FAULTS = FAULT_ENDS  # renuncia, timeout, disconnect, bot_error: they end a deal or a match
LATE_FAULTS = (Fault.LATE.value,)  # an answer after its game ended
PROTOCOL_FAULTS = tuple(f.value for f in Fault if f.value not in LATE_FAULTS)  # ActionError codes
SECURITY_FAULTS = ("unauthenticated",)
MATCH_ENDS = (NORMAL, *FAULT_ENDS, ABORTED)


def fault_class(kind: str) -> str:
    """game, protocol, late or security: alerts on a bot breaking the protocol must not fire on
    the renúncias a reckless bot is entitled to commit, nor on a slow bot's late answers."""
    if kind in GAME_FAULTS:
        return "game"
    if kind in LATE_FAULTS:
        return "late"
    if kind in SECURITY_FAULTS:
        return "security"
    return "protocol"


class _Faults:
    """``FAULTS.labels(kind).inc()``: the call sites name the kind; the class label follows
    from it here, so the classification lives in one place."""

    def labels(self, kind: str) -> Counter:
        return _FAULTS.labels(kind, fault_class(kind))


FAULTS = _Faults()


#: the ``limit`` label values of LIMIT_HITS (what sueca.referee.limits counts)
LIMITS = ("out_queue", "errors", "read_throttle", "hello_deadline", "streams_per_connection",
          "connections_per_address", "sessions_per_bot", "refusals", "hellos",
          "operator_refusals")


def init_labels() -> None:
    """Create every known label value at 0, so that ``increase()`` sees the first fault of a
    fresh replica (a series born at 4 has no earlier sample to increase from)."""
    for kind in (*GAME_FAULTS, *PROTOCOL_FAULTS, *LATE_FAULTS, *SECURITY_FAULTS):
        FAULTS.labels(kind)
    for end in MATCH_ENDS:
        MATCHES.labels(end)
    for limit in LIMITS:
        LIMIT_HITS.labels(limit)


class _BuildInfo:
    """``sueca_build_info{component,version,python}`` = 1: which code a replica runs."""

    def __init__(self, component: str) -> None:
        try:
            self.version = version("sueca-arena")
        except PackageNotFoundError:  # running from a source tree that is not installed
            self.version = "unknown"
        self.labels = [component, self.version, platform.python_version()]
        REGISTRY.register(self)

    def collect(self) -> Iterator[Metric]:
        g = GaugeMetricFamily("sueca_build_info", "The running build: always 1",
                              labels=["component", "version", "python"])
        g.add_metric(self.labels, 1.0)
        yield g


init_labels()
BUILD_INFO = _BuildInfo("referee")


def serve(port: int, host: str = "0.0.0.0") -> None:
    """Expose /metrics on ``host:port`` from a daemon thread."""
    start_http_server(port, addr=host, registry=REGISTRY)
