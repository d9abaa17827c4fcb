"""The broker transport of :mod:`sueca.arena.celery_app`: unacknowledged messages go back to the
queue even after their connection was collected (kombu's Redis channel then raised
``AttributeError: 'NoneType' object has no attribute 'hostname'``, which stopped the worker),
and a worker stopped by an unrecoverable error exits non-zero."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from kombu import Connection, Queue
from kombu.transport import redis as kombu_redis

from sueca.arena.celery_app import RedisTransport


def _unacked_then_collected(url: str, prefix: str, transport: Any) -> tuple[Any, Any]:
    """A consumer that got one message and holds it unacknowledged, its connection then
    collected as Celery's consumer does after a broker connection error: the channel, the
    connection."""
    conn = Connection(url, transport=transport,
                      transport_options={"global_keyprefix": prefix})
    queue = Queue(f"{prefix}q", routing_key=f"{prefix}q")
    with conn.Producer() as producer:
        producer.publish({"match": 1}, routing_key=queue.routing_key, declare=[queue])
    channel = conn.channel()
    got = []
    with conn.Consumer(queue, channel=channel, callbacks=[lambda body, msg: got.append(msg)]):
        conn.drain_events(timeout=5)
    assert len(got) == 1 and not got[0].acknowledged
    transport_obj = conn.transport
    conn._do_close_transport()  # what Connection.collect() ends with: transport.client = None
    assert transport_obj.client is None
    return channel, conn


def _queued(url: str, prefix: str) -> int:
    from sueca.arena.store import connect
    return int(connect(url).llen(f"{prefix}{prefix}q"))


def test_unacked_messages_go_back_after_the_connection_was_collected(
        redis_url: str, prefix: str) -> None:
    channel, _ = _unacked_then_collected(redis_url, prefix, RedisTransport)
    assert _queued(redis_url, prefix) == 0
    channel.close()  # drops its Redis connections, then puts back what it holds
    assert _queued(redis_url, prefix) == 1


def test_kombus_own_channel_fails_there(redis_url: str, prefix: str) -> None:
    """What the repair is for: the same steps on kombu's channel (if kombu fixes it, this test
    says so, and the repair can go)."""

    class Stock(kombu_redis.Transport):  # type: ignore[misc]
        Channel = kombu_redis.Channel

    channel, _ = _unacked_then_collected(redis_url, prefix, Stock)
    with pytest.raises(AttributeError, match="hostname"):
        channel.close()


# The worker runs in a child process: cmd_worker configures the process-wide Celery app, which
# would leave every later test of this pytest process talking to the dead broker below.
_UNRECOVERABLE = """
import argparse, sys, warnings
from celery import bootsteps
from celery.worker import worker
from sueca.arena.cli import worker as worker_cli

warnings.simplefilter("ignore")  # tests run as root: Celery's SecurityWarning


def boom(self, parent):
    raise AttributeError("'NoneType' object has no attribute 'hostname'")


bootsteps.Blueprint.start = boom
worker.WorkController._send_worker_shutdown = lambda self: None
worker_cli.open_store = lambda args: None
worker_cli.redis_url = lambda args: "redis://127.0.0.1:1/0"
args = argparse.Namespace(redis=None, referee=None, runner="local", metrics_port=None,
                          pool="solo", concurrency=1, loglevel="CRITICAL", hostname=None,
                          queues=None)
sys.exit(worker_cli.cmd_worker(args))
"""


def test_a_worker_stopped_by_an_unrecoverable_error_exits_non_zero() -> None:
    done = subprocess.run([sys.executable, "-c", _UNRECOVERABLE], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1, done.stderr[-2000:]
