"""Prometheus metrics of the league: worker metrics and the ratings exporter.

Worker (``sueca-arena worker --metrics-port P``), prefork-safe by **prometheus-client
multiprocess mode**: each pool process writes its counters and histograms to mmap files in
``PROMETHEUS_MULTIPROC_DIR`` (a fresh directory per worker); the worker's main process serves
them all, summed, on one port with a ``MultiProcessCollector``, and marks a pool process dead
when it exits (``worker_process_shutdown``). One port per worker, whatever its concurrency.

=========================================  =========  =========================================
metric                                     type       meaning
=========================================  =========  =========================================
``sueca_worker_matches_recorded_total``    counter    results this worker wrote, by ``end``
                                                      (normal, renuncia, timeout, disconnect)
``sueca_worker_matches_failed_total``      counter    matches given up on (no result: attempts
                                                      exhausted or a permanent error)
``sueca_worker_task_seconds``              histogram  wall time of one task run, by ``outcome``
``sueca_worker_retries_total``             counter    task retries, by ``reason`` (referee,
                                                      capacity, redis, aborted)
``sueca_worker_queue_depth``               gauge      match tasks waiting in the broker queue
                                                      (read from Redis at scrape time; the
                                                      ratings exporter serves it too, so it is
                                                      there when no worker runs)
``sueca_bot_turn_seconds``                 histogram  each answered turn of a bot in the
                                                      matches this worker recorded, as the
                                                      referee timed it, by ``bot``
``sueca_bot_faults_total``                 counter    a bot's renúncias, timeouts and
                                                      disconnects in those matches, by ``bot``,
                                                      ``kind``
``sueca_build_info``                       gauge      1, by ``component``, ``version``,
                                                      ``python``
``process_*``                              various    the serving process (CPU, memory, fds)
=========================================  =========  =========================================

Every labelled counter is created at 0 for each documented label value in every process, so
``increase()`` sees the first event of a fresh process.

Per-bot series are bounded (:class:`BotLabels`): the first ``SUECA_METRICS_MAX_BOTS`` (default
100) bots any worker of the arena recorded a match of get their own ``bot`` label — the order is
kept in Redis (``metrics:bots``), so every process and every worker agrees on it — and every
other bot is counted under ``bot="_other"``. With 10,000 bots that is at most 101 label values
per series (times ``kind`` for the faults; each histogram has 7 buckets): the first 100 bots stay
visible one by one, the rest only as a crowd. The Redis totals behind the leaderboard and the
bot pages (:mod:`sueca.arena.botstats`) are exact for every bot, whatever the bound.

Scheduler (``sueca-arena scheduler --metrics-port P``): ``sueca_scheduler_last_loop_timestamp_seconds``
(when its loop last went round, Redis outage or not), ``sueca_scheduler_matches_queued_total``,
``sueca_worker_queue_depth``, ``sueca_build_info`` and ``process_*``; ``/healthz`` on the same
port answers 503 once the loop has not gone round for a while (the liveness probe).

Ratings exporter (``sueca-arena ratings exporter --metrics-port P``): one process reading Redis
at scrape time; ``sueca_rating{bot,system}`` (system = record, elo, openskill_mu, openskill_sigma),
``sueca_rating_uncertainty{bot,system}`` (the ± shown beside each rating) and
``sueca_rating_games{bot}`` — for registered bots only, so a label set never grows with
anything a caller controls — plus ``sueca_worker_queue_depth``, ``sueca_build_info`` and
``process_*``.

Bot host (``sueca-arena bot-host --metrics-port P``): ``sueca_bothost_bot_up{bot,version}`` (1
while that hosted bot's runner runs here), ``sueca_bothost_bots``, ``sueca_bothost_live_hosts``,
``sueca_bothost_restarts_total``, ``sueca_build_info`` and ``process_*``; ``/healthz`` answers
503 once its loop has not gone round for a while.
"""

from __future__ import annotations

import os
import platform
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    ProcessCollector,
    make_wsgi_app,
    multiprocess,
    start_http_server,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from sueca.arena.settings import current
from sueca.arena.store import Store
from sueca.arena.store.ratings import fit_of_record, load

if TYPE_CHECKING:
    from sueca.arena.records import SeatStats

__all__ = ["MATCHES_RECORDED", "MATCHES_FAILED", "TASK_SECONDS", "RETRIES", "QueueDepthCollector",
           "BOT_TURN_SECONDS", "BOT_FAULTS", "BotLabels", "observe_bots",
           "RatingsCollector", "BuildInfoCollector", "SchedulerMetrics", "serve_worker_metrics",
           "serve_ratings", "serve_health"]

MATCHES_RECORDED = Counter("sueca_worker_matches_recorded",
                           "Match results recorded by this worker, by how the match ended",
                           ["end"])
TASK_SECONDS = Histogram("sueca_worker_task_seconds", "Wall time of one match task run",
                         ["outcome"],
                         buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300))
MATCHES_FAILED = Counter("sueca_worker_matches_failed",
                         "Matches this worker gave up on: no result recorded")
RETRIES = Counter("sueca_worker_retries", "Match task retries, by reason", ["reason"])

BOT_TURN_SECONDS = Histogram("sueca_bot_turn_seconds",
                             "A bot's answered turns as the referee timed them (matches this "
                             "worker recorded); bots past SUECA_METRICS_MAX_BOTS are bot=_other",
                             ["bot"], buckets=(0.001, 0.005, 0.025, 0.1, 0.5, 2.5))
BOT_FAULTS = Counter("sueca_bot_faults", "A bot's renúncias, timeouts, disconnects and bot "
                     "errors (matches this worker recorded); bots past SUECA_METRICS_MAX_BOTS "
                     "are bot=_other",
                     ["bot", "kind"])
OTHER_BOT = "_other"
FAULT_KINDS = ("renuncia", "timeout", "disconnect", "bot_error")
_FAULT_FIELDS = ("renuncias", "timeouts", "disconnects", "bot_errors")  # SeatStats, by kind

ENDS = ("normal", "renuncia", "timeout", "disconnect", "bot_error")
RETRY_REASONS = ("referee", "capacity", "redis", "aborted")
TASK_OUTCOMES = ("recorded", "duplicate", "skipped", "failed", "retry", "error")


def init_labels() -> None:
    """Create every documented label value at 0 (in each pool process), so a dashboard sees
    ``rate(...)`` of 0 and ``increase()`` the first event, rather than no series before it."""
    for end in ENDS:
        MATCHES_RECORDED.labels(end)
    for reason in RETRY_REASONS:
        RETRIES.labels(reason)
    for outcome in TASK_OUTCOMES:
        TASK_SECONDS.labels(outcome)
    _init_bot(OTHER_BOT)


def _init_bot(label: str) -> None:
    BOT_TURN_SECONDS.labels(label)
    for kind in FAULT_KINDS:
        BOT_FAULTS.labels(label, kind)


class BotLabels:
    """The ``bot`` label of a bot's series: its name for the first ``bound`` bots the arena's
    workers recorded a match of (in the order Redis saw them first, the same for every process),
    ``_other`` for the rest. One Redis call per new bot per process, then remembered; a Redis
    error gives ``_other`` this time and asks again next time."""

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self.known: dict[str, str] = {}

    def label(self, store: Store, bot: str) -> str:
        got = self.known.get(bot)
        if got is not None:
            return got
        if self.bound <= 0:
            return OTHER_BOT
        try:
            mine = store.labelled_bot(bot, self.bound)
        except Exception:
            return OTHER_BOT
        got = self.known[bot] = bot if mine else OTHER_BOT
        if got != OTHER_BOT:
            _init_bot(got)
        return got


_labels: BotLabels | None = None


def observe_bots(store: Store, seats: Sequence[str], stats: Sequence[SeatStats],
                 turn_times: Mapping[int, Sequence[int]] | None) -> None:
    """A recorded match's per-bot series: each seat's turn times (microseconds, as the referee
    sent them) and faults (its ``stats``, :func:`sueca.arena.botstats.seat_stats`)."""
    global _labels
    bound = current().metrics_max_bots
    if _labels is None or _labels.bound != bound:
        _labels = BotLabels(bound)
    for seat, (bot, st) in enumerate(zip(seats, stats)):
        label = _labels.label(store, str(bot))
        hist = BOT_TURN_SECONDS.labels(label)
        for us in (turn_times or {}).get(seat) or ():
            hist.observe(us / 1e6)
        for kind, field in zip(FAULT_KINDS, _FAULT_FIELDS):
            n = st.get(field)
            if isinstance(n, int) and n:
                BOT_FAULTS.labels(label, kind).inc(n)


class BuildInfoCollector(Collector):
    """``sueca_build_info{component,version,python}`` = 1: which code a process runs."""

    def __init__(self, component: str) -> None:
        try:
            release = version("sueca-arena")
        except PackageNotFoundError:  # a source tree that is not installed
            release = "unknown"
        self.labels = [component, release, platform.python_version()]

    def collect(self) -> Iterator[GaugeMetricFamily]:
        g = GaugeMetricFamily("sueca_build_info", "The running build: always 1",
                              labels=["component", "version", "python"])
        g.add_metric(self.labels, 1.0)
        yield g


class QueueDepthCollector(Collector):
    """``sueca_worker_queue_depth``: LLEN of the match queue (and its priority sub-queues).
    With no ``store`` it connects to ``redis_url`` at the first scrape (and again after a
    scrape that could not)."""

    def __init__(self, redis_url: str, queue: str, store: Store | None = None) -> None:
        self.redis_url = redis_url
        self.queue = queue
        self._store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        g = GaugeMetricFamily("sueca_worker_queue_depth",
                              "Match tasks waiting in the broker queue", labels=["queue"])
        try:
            if self._store is None:
                self._store = Store.from_url(self.redis_url)
            g.add_metric([self.queue], float(self._store.queue_depth(self.queue)))
        except Exception:
            return  # Redis away: no sample rather than a wrong one
        yield g


def serve_worker_metrics(port: int, redis_url: str, queue: str,
                         addr: str | None = None) -> CollectorRegistry:
    """Serve the worker's metrics: the pool processes' files plus the depth of ``queue``, on
    ``addr`` (default ``SUECA_METRICS_ADDR``)."""
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    registry.register(QueueDepthCollector(redis_url, queue))
    registry.register(BuildInfoCollector("worker"))
    ProcessCollector(registry=registry)  # the serving (main) process; pool children are not
    start_http_server(port, addr=addr or current().metrics_addr, registry=registry)
    return registry


class RatingsCollector(Collector):
    """Ratings of registered bots, read from Redis at each scrape."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        rating = GaugeMetricFamily("sueca_rating", "Current rating of a registered bot",
                                   labels=["bot", "system"])
        pm = GaugeMetricFamily("sueca_rating_uncertainty",
                               "Half-width of the ~95% interval shown as ± beside the rating",
                               labels=["bot", "system"])
        games = GaugeMetricFamily("sueca_rating_games", "Rated games played", labels=["bot"])
        try:
            registered = set(self.store.bots.names())
            ratings = load(self.store)
            of_record = fit_of_record(self.store)
        except Exception:
            return
        for bot in sorted(registered & ratings.keys()):
            r = ratings[bot]
            if bot in of_record.rating:  # the rating of record, system="record"
                rating.add_metric([bot, "record"], of_record.rating[bot])
                pm.add_metric([bot, "record"], of_record.pm[bot])
            rating.add_metric([bot, "elo"], r.elo)
            rating.add_metric([bot, "openskill_mu"], r.mu)
            rating.add_metric([bot, "openskill_sigma"], r.sigma)
            if r.elo_pm is not None:
                pm.add_metric([bot, "elo"], r.elo_pm)
            pm.add_metric([bot, "openskill_mu"], r.mu_pm)
            games.add_metric([bot], float(r.games))
        yield rating
        yield pm
        yield games


def serve_ratings(port: int, store: Store, addr: str = "0.0.0.0",
                  queue: str | None = None) -> CollectorRegistry:
    """Serve the ratings, and the depth of ``queue``: the exporter runs when no worker does,
    which is when a growing queue matters most."""
    registry = CollectorRegistry()
    registry.register(RatingsCollector(store))
    if queue:
        registry.register(QueueDepthCollector("", queue, store=store))
    registry.register(BuildInfoCollector("exporter"))
    ProcessCollector(registry=registry)
    start_http_server(port, addr=addr, registry=registry)
    return registry


class SchedulerMetrics(Collector):
    """The ladder scheduler's metrics and health, served on one port: ``/healthz`` for the
    liveness probe, anything else the metrics. Healthy while the loop goes round: a scheduler
    waiting out a Redis outage is alive (restarting it would not help), a stuck one is not."""

    def __init__(self, store: Store, queue: str, stale_after: float) -> None:
        self.stale_after = stale_after
        self.queued = 0
        self.last_loop = time.time()
        self._last_loop_mono = time.monotonic()
        self.registry = CollectorRegistry()
        self.registry.register(self)
        self.registry.register(QueueDepthCollector("", queue, store=store))
        self.registry.register(BuildInfoCollector("scheduler"))
        ProcessCollector(registry=self.registry)

    def loop_done(self, queued: int = 0) -> None:
        """One turn of the loop: called by the scheduler after each tick, even a failed one."""
        self.queued += queued
        self.last_loop, self._last_loop_mono = time.time(), time.monotonic()

    def healthy(self) -> bool:
        return time.monotonic() - self._last_loop_mono <= self.stale_after

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        yield GaugeMetricFamily("sueca_scheduler_last_loop_timestamp_seconds",
                                "When the scheduler's loop last went round (Unix time)",
                                value=self.last_loop)
        yield CounterMetricFamily("sueca_scheduler_matches_queued",
                                  "Ladder matches this scheduler queued", value=self.queued)

    def serve(self, port: int, addr: str | None = None) -> None:
        """``/healthz`` and the metrics on ``port`` at ``addr`` (default
        ``SUECA_METRICS_ADDR``), from a daemon thread."""
        serve_health(self.registry, port, addr=addr, healthy=self.healthy,
                     sick=b"the scheduler's loop has stalled\n", name="scheduler-metrics")


def serve_health(registry: CollectorRegistry, port: int, *, addr: str | None,
                 healthy: Callable[[], bool], sick: bytes, name: str) -> None:
    """``registry``'s metrics on ``port`` at ``addr`` (default ``SUECA_METRICS_ADDR``), and
    ``/healthz`` for a liveness probe: 200, or 503 saying ``sick`` while ``healthy()`` is
    false; from a daemon thread ``name``."""
    metrics_app = make_wsgi_app(registry)

    def app(environ: dict[str, object],
            start_response: Callable[[str, list[tuple[str, str]]], object]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == "/healthz":
            ok = healthy()
            start_response("200 OK" if ok else "503 Service Unavailable",
                           [("Content-Type", "text/plain")])
            return [b"ok\n" if ok else sick]
        return metrics_app(environ, start_response)  # type: ignore[no-any-return]

    class Quiet(WSGIRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # a probe every few
            pass  # seconds: no log

    server = make_server(addr or current().metrics_addr, port, app, handler_class=Quiet)
    threading.Thread(target=server.serve_forever, name=name, daemon=True).start()
