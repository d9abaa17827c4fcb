"""Fixtures for the league tests: a fresh key prefix per test on the session's real Redis
(``redis_url``, tests/conftest.py) and, for the Celery tests, real worker processes started
with ``sueca-arena worker``.

Nothing here mocks Redis or Celery: the worker is a separate process with a prefork pool,
talking to the same real Redis the test reads.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kits.arena import TESTS, Worker, arena_env


@pytest.fixture
def prefix() -> str:
    return f"t{uuid.uuid4().hex[:8]}:"


@pytest.fixture
def store(redis_url: str, prefix: str):
    from sueca.arena.keys import Keys
    from sueca.arena.store import Store, connect
    return Store(connect(redis_url), Keys(prefix))


class League:
    """One arena for every Celery test of the session: a key prefix, bots, the app configured.

    The Celery app of this process can be configured only once (its connection pool keeps the
    broker options), hence one prefix for all tests that send tasks.
    """

    BOTS = ("random", "heuristic", "reckless", "slow", "slow2")

    def __init__(self, url: str) -> None:
        from sueca.arena.keys import Keys
        from sueca.arena.store import Store, connect
        self.url = url
        self.prefix = f"lg{uuid.uuid4().hex[:6]}:"
        self.store = Store(connect(url), Keys(self.prefix))
        registry = self.store.bots
        self.tokens = {b: registry.add(b) for b in self.BOTS}

    def env(self, **extra: str) -> dict[str, str]:
        return arena_env(self.url, self.prefix, **extra)


@pytest.fixture(scope="session")
def league(redis_url: str) -> Iterator[League]:
    lg = League(redis_url)
    # The app reads the prefix from the environment when configured; nothing else in this
    # process needs it, and other test packages must not see it: set it only meanwhile.
    saved = os.environ.get("SUECA_KEY_PREFIX")
    os.environ["SUECA_KEY_PREFIX"] = lg.prefix
    try:
        from sueca.arena.celery_app import configure
        configure(redis_url)
    finally:
        if saved is None:
            os.environ.pop("SUECA_KEY_PREFIX", None)
        else:
            os.environ["SUECA_KEY_PREFIX"] = saved
    yield lg


@pytest.fixture(scope="module")
def module_worker(league: League, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    """One local-runner worker (2 pool processes) shared by a test module. Referee-mode tasks
    sent to it find no referee (a dead port) and give up fast: 3 attempts, short back-off."""
    from sueca.arena.redisproc import free_port
    log = tmp_path_factory.mktemp("worker") / "worker.log"
    w = Worker(league.url, league.prefix, "--runner", "local", "-c", "2", log=log,
               SUECA_REFEREES=f"127.0.0.1:{free_port()}", SUECA_PLACE_WAIT="0.2",
               SUECA_MATCH_ATTEMPTS="3", SUECA_RETRY_BASE="0.05")
    try:
        yield w.wait_ready()
    finally:
        w.stop()


@pytest.fixture
def start_worker(league: League, tmp_path: Path):
    """``start_worker(*args, **env)`` starts a league worker; all are stopped at the end."""
    started: list[Worker] = []

    def start(*args: str, **env: str) -> Worker:
        w = Worker(league.url, league.prefix, *args, log=tmp_path / f"worker{len(started)}.log",
                   **env)
        started.append(w)
        return w.wait_ready()

    yield start
    for w in started:
        w.stop()


@pytest.fixture(scope="session")
def referee_arena(tmp_path_factory: pytest.TempPathFactory):
    """The real thing, once per session: a private Redis, ``sueca-arena referee``, one
    ``sueca-arena worker`` (2 pool processes, metrics on) and bots as ``sueca-bot run``
    processes: random, heuristic, reckless, slow (about 2 s a match), sleepy (always times
    out)."""
    from sueca.arena.local_arena import LocalArena
    bots = {"random": "random", "heuristic": "heuristic", "reckless": "reckless",
            "slow": "kits.bots.slow:SlowBot", "slow2": "kits.bots.slow:SlowBot",
            "sleepy": "kits.bots.slow:SleepyBot"}
    env = {"PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
           "SUECA_KEY_PREFIX": "sueca:"}
    saved = os.environ.get("SUECA_KEY_PREFIX")
    os.environ["SUECA_KEY_PREFIX"] = "sueca:"   # this process's Store of the arena
    arena = LocalArena(None, None, bots, capacity=4, concurrency=2, metrics=True,
                       log_dir=tmp_path_factory.mktemp("arena"), extra_env=env,
                       worker_env={"SUECA_VISIBILITY_TIMEOUT": "5"})
    try:
        arena.start(timeout=60)
        if saved is None:
            os.environ.pop("SUECA_KEY_PREFIX", None)
        else:
            os.environ["SUECA_KEY_PREFIX"] = saved
        arena.cli_env = arena_env(arena.redis_url, "sueca:")
        yield arena
    finally:
        arena.stop()
