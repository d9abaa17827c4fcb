"""A result is acknowledged once a replica has it, behind Sentinel only (StoreBase.durable).

A real primary, a real sentinel monitoring it, a replica attached later: with no replica the
record script runs but the write is not acknowledged (NotReplicated, which the worker retries
as any Redis timeout); once a replica has it, the same call is acknowledged, still once. A plain
URL issues no WAIT at all."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kits.wait import wait_for

from sueca.arena.keys import Keys
from sueca.arena.redisproc import RedisServer, free_port, redis_binary
from sueca.arena.store import Store, connect
from sueca.arena.store.client import REPLICA_WAIT_MS, NotReplicated

RESULT = {"match_id": "m1", "seats": ["a", "b", "a", "b"], "end": "normal", "time": 1.0,
          "score": [1, 0], "stats": {}}


@pytest.fixture
def primary() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@pytest.fixture
def sentinel_url(primary: RedisServer, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    conf = tmp_path / "sentinel.conf"
    conf.write_text(f"port {port}\nbind 127.0.0.1\nsentinel monitor league 127.0.0.1 "
                    f"{primary.port} 1\n")
    proc = subprocess.Popen([redis_binary(), str(conf), "--sentinel"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"redis+sentinel://127.0.0.1:{port}/league/0"
        wait_for(lambda: connect(url), 10, "the sentinel")
        yield url
    finally:
        proc.kill()
        proc.wait()


def test_a_plain_url_issues_no_wait(primary: RedisServer, prefix: str) -> None:
    store = Store(connect(primary.url), Keys(prefix))
    assert store.replicas == 0
    assert store.record_result("m1", RESULT)[0]
    assert "wait" not in store.command_calls()


def test_behind_sentinel_a_result_is_acknowledged_once_a_replica_has_it(
        primary: RedisServer, sentinel_url: str, prefix: str) -> None:
    store = Store(connect(sentinel_url), Keys(prefix))
    assert store.replicas == 1
    started = time.monotonic()
    with pytest.raises(NotReplicated):
        store.record_result("m1", RESULT)
    assert time.monotonic() - started >= REPLICA_WAIT_MS / 1000 * 0.9
    (eid, _), = store.results()  # written on the primary, not acknowledged
    with RedisServer() as replica:
        replica_client = connect(replica.url)
        replica_client.replicaof("127.0.0.1", primary.port)
        wait_for(lambda: replica_client.info("replication")["master_link_status"] == "up"
                 or None, 20, "the replica in sync")
        assert store.record_result("m1", RESULT) == (False, eid)  # acknowledged, once
        assert store.command_calls()["wait"] >= 2
        assert [e for e, _ in Store(replica_client, Keys(prefix)).results()] == [eid]
