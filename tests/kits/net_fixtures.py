"""Fixtures for the network tests: a real referee process, real SDK bot processes (on the
session's real Redis, ``redis_url`` of tests/conftest.py).

Session-scoped where they can be (a process costs about a second on a 2-core machine);
tests that kill or stop things start their own. A plugin of the whole suite (``pytest_plugins``
in tests/conftest.py), so that a test process running tests of both folders starts each once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kits.net import KEY_PREFIX, BotProc, RefereeProc, sessions_of, wait_for

BOT_NAMES = ("alice", "bob", "carol", "dave", "mallory", "eve", "sleepy", "renegade", "spy",
             "drainer", "async", "broken", "ghost", "north", "east", "twin")


@pytest.fixture(scope="session")
def tokens(redis_url: str) -> dict[str, str]:
    """Registered bots and their tokens; ``ghost`` is registered but never connects."""
    import redis

    from sueca.arena.keys import Keys
    from sueca.arena.store.bots import BotRegistry
    registry = BotRegistry(redis.Redis.from_url(redis_url), Keys(KEY_PREFIX))
    return {name: registry.add(name) for name in BOT_NAMES}


@pytest.fixture(scope="session")
def referee(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RefereeProc]:
    log = tmp_path_factory.mktemp("referee") / "referee.log"
    ref = RefereeProc(redis_url, log_path=log)
    yield ref
    ref.stop()


@pytest.fixture(scope="session")
def random_bots(referee: RefereeProc, tokens: dict[str, str],
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[BotProc]]:
    """alice and bob, example ``random`` bots, capacity 32 each, for the whole session."""
    logs = tmp_path_factory.mktemp("bots")
    procs = [BotProc("random", referee.address, tokens[name], capacity=32,
                     log_path=logs / f"{name}.log") for name in ("alice", "bob")]
    for p in procs:
        wait_for(lambda p=p: sessions_of(referee.address, p.name) >= 1, 30, f"bot {p.name}")
    yield procs
    for p in procs:
        p.stop()


@pytest.fixture
def bot_proc(tmp_path: Path) -> Iterator[Callable[..., BotProc]]:
    """Start extra SDK bot processes; all are stopped after the test."""
    started: list[BotProc] = []

    def start(spec: str, server: str, token: str, capacity: int = 4, wait: bool = True,
              **kw: object) -> BotProc:
        name = token.split(".", 1)[0]
        before = sessions_of(server, name) if wait else 0
        p = BotProc(spec, server, token, capacity, log_path=tmp_path / f"{name}-{len(started)}.log",
                    **kw)  # type: ignore[arg-type]
        started.append(p)
        if wait:
            wait_for(lambda: sessions_of(server, name) > before, 30, f"bot {name} to connect")
        return p

    yield start
    for p in started:
        p.stop()
