""":class:`sueca.arena.redisproc.RedisServer` with a data directory: what ``sueca-arena serve``
keeps its arena in. A real ``redis-server``; the data survive a stop and a new start."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from sueca.arena.redisproc import RedisServer, redis_binary


def test_a_data_directory_survives_a_restart(tmp_path: Path) -> None:
    data, log = tmp_path / "data", tmp_path / "logs" / "redis.log"
    log.parent.mkdir()
    first = RedisServer(data_dir=data, log_file=log).start()
    try:
        r = redis.Redis.from_url(first.url)
        r.set("arena", "kept")
        r.rpush("results", *range(1000))
        assert r.config_get("appendonly")["appendonly"] == "yes"
    finally:
        first.stop()  # SIGTERM: Redis writes its append-only file out
    assert data.is_dir() and any(data.iterdir())  # the directory stays, with the data
    assert log.exists()  # its log where it was asked to go, not in the data directory
    assert not (data / "redis.log").exists()
    second = RedisServer(data_dir=data, log_file=log).start()
    try:
        r = redis.Redis.from_url(second.url)
        assert r.get("arena") == b"kept" and r.llen("results") == 1000
    finally:
        second.stop()


def test_a_start_waits_until_the_data_are_loaded(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Start returns only once Redis answers commands, not while it still loads its file (it
    refuses everything but INFO with LOADING meanwhile). Redis's own ``key-load-delay`` (a
    test setting: microseconds per key loaded) makes the load of 20 MB take two seconds; Redis
    answers clients (LOADING) after every 2 MB loaded."""
    import os
    import time

    from kits.wait import wait_for

    from sueca.arena import redisproc
    data = tmp_path / "data"
    first = RedisServer(data_dir=data).start()
    try:
        r = redis.Redis.from_url(first.url)
        r.mset({f"k{n}": os.urandom(100_000) for n in range(200)})  # 20 MB, not compressible
        r.bgrewriteaof()  # the file starts with a snapshot, which is what the delay slows
        wait_for(lambda: not r.info("persistence")["aof_rewrite_in_progress"], 60,
                 "the append-only file rewritten")
    finally:
        first.stop()
    slow = tmp_path / "slow-redis-server"
    slow.write_text(f'#!/bin/sh\nexec {redis_binary()} "$@" --key-load-delay 10000\n')
    slow.chmod(0o755)
    monkeypatch.setattr(redisproc, "redis_binary", lambda: str(slow))
    t0 = time.monotonic()
    again = RedisServer(data_dir=data).start()
    try:  # straight away: no LOADING error
        assert redis.Redis.from_url(again.url).dbsize() == 200
        assert time.monotonic() - t0 > 0.5, "the load was not slowed: the test proves nothing"
    finally:
        again.stop()
