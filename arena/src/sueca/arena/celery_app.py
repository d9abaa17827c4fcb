"""The one Celery app of the arena: broker and result backend are the Redis in SUECA_REDIS_URL.

Delivery guarantees (why each setting):

* ``task_acks_late`` + ``task_reject_on_worker_lost``: a message is acknowledged only when its
  task has finished; a pool process that dies mid-match (SIGKILL, OOM) gets its message
  re-queued, and the match is played again. A whole worker that dies leaves its message in the
  broker's "unacked" set, restored to the queue after ``visibility_timeout``
  (``SUECA_VISIBILITY_TIMEOUT``, default 600 s — longer than any match may take, or a slow match
  would be delivered twice; harmless, since recording is exactly-once, but wasteful).
* ``worker_cancel_long_running_tasks_on_connection_loss = False``: when the broker connection
  drops, a running match goes on. Set to True, Celery terminates it, calls the (unreachable)
  result backend, treats the job as revoked and acknowledges it — the message is gone and the
  match stays ``running`` for ever. Whatever happens to the message now (its ack may fail on the
  dead channel; it may come back after the visibility timeout), recording is exactly-once and a
  redelivery waits while the first attempt holds the match's lease.
* ``task_ignore_result = True``: nobody reads a match task's Celery result (the result is in the
  results log), so a worker never writes to the result backend — not on success, retry or
  failure, and never on a Redis that is down. A caller that wants one for a single call passes
  ``ignore_result=False`` to ``apply_async`` (the tests do); those expire after an hour.
* Whatever still vanishes — a worker SIGKILLed between taking a message and acknowledging it, a
  flushed broker — is found by :mod:`sueca.arena.recovery` from the match leases and re-queued
  within seconds, so the visibility timeout is a last resort, not the recovery path.
* ``worker_prefetch_multiplier = 1``: one reserved task per pool process (or thread, with
  ``--pool threads``), so a busy worker never sits on matches that an idle one could play.
* Every broker and backend key lives under ``{prefix}celery:`` (kombu ``global_keyprefix``), next
  to the arena's own keys (:mod:`sueca.arena.keys`).
* The broker's transport is kombu's Redis transport with one repair (:class:`RedisTransport`):
  a channel remembers the Redis it was opened on. kombu's own reads the address from the
  connection each time, and a worker whose broker connection drops while it holds
  unacknowledged messages closes that connection (``Connection.collect``: the transport's
  ``client`` becomes None) before every channel has put its messages back; the channel then
  died with ``AttributeError: 'NoneType' object has no attribute 'hostname'``, which Celery
  calls an unrecoverable error, and the worker stopped (celery/kombu#970, #582).
* A worker that stops on an unrecoverable error exits non-zero (:func:`run_worker`), so that
  whatever supervises it (``serve``, systemd, Kubernetes) starts it again.
* Behind Sentinel (``redis+sentinel://``) the broker is kombu's Sentinel transport (with the
  same repair, :class:`SentinelChannel`) and the backend Celery's Sentinel backend: both ask
  the sentinels for the primary on every new connection, with the service name as the
  ``master_name`` transport option (:func:`sueca.arena.redisurl.celery_options`).
* The broker and backend get the URL in Celery's spelling (:func:`sueca.arena.redisurl.for_celery`:
  ``unix://`` becomes ``redis+socket://``); code of ours that talks to the same Redis through
  redis-py reads the URL as the user gave it from :func:`redis_url`.

Metrics: a worker started with a metrics port (``sueca-arena worker --metrics-port P`` or
``SUECA_METRICS_PORT``) serves them from its main process; pool processes write to
``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client multiprocess mode), see :mod:`sueca.arena.metrics`.
A ``--pool threads`` worker is one process: the same directory, written by that process only.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from celery import Celery, signals
from celery.exceptions import CPendingDeprecationWarning
from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import redis as kombu_redis

from sueca.arena.keys import default_keys
from sueca.arena.redisurl import celery_options, for_celery
from sueca.arena.settings import current
from sueca.arena.store.client import KEEPALIVE, FollowingConnection, sentinel_node_options
from sueca.sdk.logs import bind, current_format, setup

QUEUE = "sueca.matches"


class _Address:
    """What kombu's Redis channel reads from its transport to connect: the connection's
    parameters (``client``) and the default port."""

    def __init__(self, client: Any, default_port: int) -> None:
        self.client = client
        self.default_port = default_port


def _at_address(channel: Any, call: Callable[[], Any]) -> Any:  # Any: kombu's channel, untyped
    """``call()`` with ``channel.connection`` the address the channel was opened with while
    its transport's ``client`` is None (the connection was collected)."""
    transport = channel.connection
    if transport is not None and transport.client is not None:
        return call()
    channel.connection = channel._address
    try:
        return call()
    finally:
        channel.connection = transport


class RedisChannel(kombu_redis.Channel):
    """kombu's Redis channel that keeps the address it was opened with, so that putting
    unacknowledged messages back after the connection was collected (its transport's
    ``client`` then None) reconnects to the same Redis instead of raising AttributeError."""

    def __init__(self, connection: Any, *args: Any, **kwargs: Any) -> None:
        self._address = _Address(connection.client, connection.default_port)
        super().__init__(connection, *args, **kwargs)

    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        params: dict[str, Any] = _at_address(self, lambda: super(  # type: ignore[misc]
            RedisChannel, self)._connparams(asynchronous=asynchronous))  # (no stub)
        return params


class SentinelChannel(kombu_redis.SentinelChannel):
    """kombu's Sentinel channel with the same repair as :class:`RedisChannel` (it reads the
    sentinels' addresses from the connection too), whose connections ask the sentinels again
    on every reconnect (:class:`sueca.arena.store.client.FollowingConnection`)."""

    connection_class = FollowingConnection

    def __init__(self, connection: Any, *args: Any, **kwargs: Any) -> None:
        self._address = _Address(connection.client, connection.default_port)
        super().__init__(connection, *args, **kwargs)

    def _get_pool(self, asynchronous: bool = False) -> Any:  # Any: redis-py's pool, untyped here
        return _at_address(self, lambda: super(  # type: ignore[misc]  # (no stub)
            SentinelChannel, self)._get_pool(asynchronous=asynchronous))


class SentinelTransport(kombu_redis.SentinelTransport):
    """kombu's Sentinel transport with :class:`SentinelChannel`."""

    Channel = SentinelChannel


class RedisTransport(kombu_redis.Transport):
    """kombu's Redis transport with :class:`RedisChannel`."""

    Channel = RedisChannel


# every ``redis://``, ``rediss://`` and ``redis+socket://`` broker in our processes: the URL
# chooses the transport by this table (a ``transport=`` argument loses to a ``+`` in the URL)
for _scheme in ("redis", "rediss"):
    TRANSPORT_ALIASES[_scheme] = f"{__name__}:RedisTransport"
TRANSPORT_ALIASES["sentinel"] = f"{__name__}:SentinelTransport"



@signals.setup_logging.connect
def _logging(loglevel: int | str | None = None, **_: object) -> None:
    """Celery's logging set-up is replaced by ours (a receiver of this signal switches Celery's
    off): its records, and the tasks', go through the one stderr handler of
    :mod:`sueca.sdk.logs`, in the format the command line chose (``--log-format``), so a worker
    with ``json`` writes nothing but JSON lines. Pool processes run it again after the fork."""
    setup(level=loglevel or None)
    if current_format() == "json":  # its shutdown notices are printed: log them instead
        from celery.apps import worker  # deferred: a worker's module, loaded by workers only
        worker.safe_say = _say  # type: ignore[attr-defined]  # (not in celery-types' stubs)


def _say(msg: str, f: object = None) -> None:
    """Celery's ``safe_say`` (a notice printed from a signal handler) as a log line."""
    logging.getLogger("celery.apps.worker").warning("%s", msg.strip())


@signals.task_prerun.connect
def _log_match(args: Sequence[object] | None = None, kwargs: Mapping[str, object] | None = None,
               **_: object) -> None:
    """Every line a task logs (Celery's own "succeeded" and "retry" lines too) names its match:
    a task's first argument, or ``match_id=``, is the match id (run_match's signature)."""
    mid = (kwargs or {}).get("match_id") or (args[0] if args else None)
    bind(match_id=mid if isinstance(mid, str) else None)


@signals.task_postrun.connect
def _log_match_done(**_: object) -> None:
    bind(match_id=None, tournament=None)


@signals.celeryd_after_setup.connect
def _quiet_cancel_notice(**_: object) -> None:
    """Celery warns on every connection loss that it will cancel running tasks "by default in
    6.0": we set the option explicitly (to False, see above), so the notice is noise in a
    worker's log. Installed after Celery's own logging set-up, which turns its warnings on."""
    warnings.filterwarnings("ignore", message=r"\s*In Celery 5\.1 we introduced an optional",
                            category=CPendingDeprecationWarning)


def _url() -> str:
    return current().redis_url or "redis://127.0.0.1:6379/0"


def _sentinel_options(url: str) -> dict[str, object]:
    """kombu's settings for a Redis behind Sentinel (none for another URL): the service, and
    the store's dead-peer and sentinel settings, so that a broker connection to a lost primary
    fails within seconds and the next one asks the sentinels."""
    options = celery_options(url)
    if options:
        options.update(socket_keepalive=True, socket_keepalive_options=KEEPALIVE,
                       sentinel_kwargs=sentinel_node_options())
    return options


def _transport_options(url: str) -> dict[str, object]:
    return {
        **_sentinel_options(url),
        "global_keyprefix": default_keys().celery_prefix(),
        "visibility_timeout": current().visibility_timeout,
        # look for abandoned messages every few seconds, not every 100 s (kombu's default)
        "unacked_restore_interval": 2,
        "unacked_restore_throttle": 1,
    }


def _backend_options(url: str) -> dict[str, object]:
    return {**_sentinel_options(url), "global_keyprefix": default_keys().celery_prefix()}


def make_app(url: str | None = None) -> Celery:
    url = url or _url()
    app = Celery("sueca_arena", broker=for_celery(url), backend=for_celery(url),
                 include=["sueca.arena.tasks"])
    app.conf.update(
        sueca_redis_url=url,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=QUEUE,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,  # nothing reads results; a caller that wants one asks for it
        result_expires=3600,  # read within seconds (tests), if at all: ~0.5 KB a match in Redis
        task_store_errors_even_if_ignored=False,
        broker_connection_retry_on_startup=True,
        broker_transport_options=_transport_options(url),
        result_backend_transport_options=_backend_options(url),
        redis_socket_connect_timeout=5,
        worker_hijack_root_logger=True,
        worker_redirect_stdouts=False,
        worker_cancel_long_running_tasks_on_connection_loss=False,
    )
    return app


def configure(url: str) -> Celery:
    """Point the app at ``url`` (before its first use), re-reading SUECA_KEY_PREFIX and
    SUECA_VISIBILITY_TIMEOUT: the CLI's ``--redis`` option. The environment is left alone."""
    conf = app.conf  # items, not attributes: the stubs make broker_url a read-only property
    conf["sueca_redis_url"] = url
    conf["broker_url"] = for_celery(url)
    conf["result_backend"] = for_celery(url)
    conf["broker_transport_options"] = _transport_options(url)
    conf["result_backend_transport_options"] = _backend_options(url)
    return app


_warm_stop: list[str] = []  # the signal that asked this worker for a warm shutdown, if any


def _note_warm_stop(sig: str = "", how: str = "", **_: object) -> None:
    if how == "Warm":
        _warm_stop.append(sig)


def run_worker(argv: Sequence[str]) -> int:
    """Run ``celery ARGV`` (a ``worker`` command) on the app and return its exit code: 1 after
    an unrecoverable error, 0 after a warm shutdown someone asked for (SIGTERM, or Ctrl-C, for
    which Celery itself exits 1: a stop that was asked for and finished its matches is no
    failure for a supervisor to restart). (``app.worker_main`` and ``app.start`` drop the code:
    click, run with ``standalone_mode=False``, returns it instead of raising.)"""
    from celery.bin.celery import celery as command  # deferred: click's command tree, workers only
    signals.worker_shutting_down.connect(_note_warm_stop, weak=False)
    command.params[0].default = app  # --app, as app.start sets it
    try:
        code = command.main(args=list(argv), standalone_mode=False)
    finally:
        command.params[0].default = None
    if _warm_stop:
        return 0
    return code if isinstance(code, int) else 0


def redis_url(celery_app: Celery | None = None) -> str:
    """The Redis URL of the app as redis-py takes it (the broker URL is Celery's spelling)."""
    return str((celery_app or app).conf.sueca_redis_url)


app = make_app()


# -- metrics in the worker (prometheus multiprocess mode) ----------------------------------------
_own_dir: str | None = None  # a multiprocess directory this process made (removed at shutdown)


def prepare_metrics_env() -> str | None:
    """Give this worker a fresh PROMETHEUS_MULTIPROC_DIR when it will serve metrics.

    Must run before any worker metric is created: prometheus_client picks its value class
    (in-memory or mmap files) at import, so it is picked again here if it was imported already.
    A directory given by the operator is used as is (wipe it between runs, as the client asks).
    """
    if current().metrics_port is None:
        return None
    global _own_dir
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        _own_dir = tempfile.mkdtemp(prefix="sueca-worker-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = _own_dir
    values = sys.modules.get("prometheus_client.values")
    if values is not None:  # imported already (by another command module): choose again
        # (a module found in sys.modules: its attributes are unknown to the type checker)
        values.ValueClass = values.get_value_class()  # type: ignore[attr-defined]
    return os.environ["PROMETHEUS_MULTIPROC_DIR"]


prepare_metrics_env()


def threads_pool(celery_app: Celery | None = None) -> bool:
    """True when the worker plays its matches in threads of its one process (``--pool
    threads``): then no ``worker_process_*`` signal is sent, and what they set up per pool
    process is done once, in the worker's process, by the ``worker_*`` signals instead."""
    return str((celery_app or app).conf.worker_pool) == "threads"


@signals.worker_init.connect
def _start_metrics(**_: object) -> None:
    if threads_pool():
        _child_start()
    port = current().metrics_port
    if port is not None:
        # deferred: the metrics are made at import, after prepare_metrics_env
        from sueca.arena.metrics import serve_worker_metrics  # deferred: see the line above
        try:
            serve_worker_metrics(port, redis_url(app), QUEUE)
        except OSError as err:  # taken since `sueca-arena worker` checked it: say so, loudly
            logging.getLogger("sueca.arena.worker").error(
                "NOT serving worker metrics on port %s: %s", port, err.strerror or err)


@signals.worker_process_init.connect
def _child_start(**_: object) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from sueca.arena.metrics import init_labels  # deferred: after prepare_metrics_env
        init_labels()


@signals.worker_process_shutdown.connect
def _child_exit(pid: int | None = None, **_: object) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess  # deferred: after prepare_metrics_env
        # (prometheus_client leaves this function unannotated)
        multiprocess.mark_process_dead(pid or os.getpid())  # type: ignore[no-untyped-call]


@signals.worker_shutdown.connect
def _worker_exit(**_: object) -> None:
    if _own_dir and os.getpid() == _owner_pid:
        shutil.rmtree(_own_dir, ignore_errors=True)


_owner_pid = os.getpid()
