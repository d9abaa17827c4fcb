"""The broker transport of :mod:`sueca.arena.celery_app`: unacknowledged messages go back to the
queue even after their connection was collected (kombu's Redis channel then raised
``AttributeError: 'NoneType' object has no attribute 'hostname'``, which stopped the worker),
and a worker stopped by an unrecoverable error exits non-zero."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import redis
from kits.arena import SUECA_ARENA, arena_env
from kombu import Connection, Queue
from kombu.transport import redis as kombu_redis

from sueca.arena.celery_app import RedisTransport
from sueca.arena.redisproc import RedisServer


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


def test_a_worker_stopped_by_an_unrecoverable_error_exits_non_zero(tmp_path: Path) -> None:
    """A real worker on a Redis that refuses it the command it consumes with (an ACL that denies
    BRPOP, as a misconfigured managed Redis would): it starts, Celery stops it on the
    unrecoverable error, and it exits 1, so that a supervisor restarts it (0 would say it was
    asked to stop)."""
    with RedisServer() as server:
        redis.Redis.from_url(server.url).execute_command("ACL", "SETUSER", "default", "-brpop")
        done = subprocess.run([SUECA_ARENA, "worker", "--redis", server.url, "--runner", "local",
                               "--pool", "threads", "-c", "1"], capture_output=True, text=True,
                              timeout=120, env=arena_env(server.url, "unrecoverable:"),
                              cwd=tmp_path)
    log = done.stdout + done.stderr
    assert " ready." in log, log[-3000:]  # it did start: the error came while consuming
    assert "Unrecoverable error" in log and "NoPermissionError" in log, log[-3000:]
    assert done.returncode == 1, log[-3000:]
