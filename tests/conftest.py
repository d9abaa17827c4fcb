"""What the whole suite shares: its options, one real Redis per test process, and the network
tests' referee and bot processes (:mod:`kits.net_fixtures`, used by tests/referee and tests/sdk:
one of each per test process, however many folders' tests it runs) and the docs tests' copy
of the repository (:mod:`kits.docs`)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from sueca.arena.redisproc import RedisServer

pytest_plugins = ["kits.net_fixtures", "kits.docs"]

# Started in the background by a non-interactive shell (`cmd &`, nohup), the suite inherits
# SIGINT and SIGQUIT ignored, and every process it starts would too: the tests that stop a
# demo, serve or redis with Ctrl-C then fail for the launcher's reason, not the code's. A
# handler here is reset to the default in each child at exec, so the children get Ctrl-C back.
for _sig, _handler in ((signal.SIGINT, signal.default_int_handler),
                       (signal.SIGQUIT, signal.SIG_DFL)):
    if signal.getsignal(_sig) == signal.SIG_IGN:
        signal.signal(_sig, _handler)

# pytest-xdist's workers run with COLUMNS=80 and LINES=24 in their environment, which every
# command a test starts would inherit; the CLI honours COLUMNS even into a pipe, so a test
# that wants a width sets it itself.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--regen-golden", action="store_true", default=False,
                     help="rewrite tests/referee/engine/golden/*.jsonl from the example bots "
                          "instead of checking them (review the diff before committing)")


# The files that take a minute or more start first: `--dist loadfile` hands files to the test
# processes in collection order, so a long file collected last would run alone at the end while
# the other processes sit idle. A file's own order is kept (its module-scoped servers expect it).
LONG_FILES = (
    "cluster/test_cluster_referees.py", "cluster/test_cluster_clocks.py",
    "cluster/test_cluster_workers.py", "cluster/test_cluster_sentinel.py",
    "cluster/test_cluster_tls.py", "test_readme.py", "test_docs_league.py",
    "arena/web/test_web_browser.py", "arena/competitions/test_competition_season.py",
    "arena/bench/test_bench_serve.py", "arena/test_chaos_redis.py",
    "arena/test_chaos_processes.py", "arena/cli/test_bots_version.py",
    "arena/hosted/test_hosted_play.py", "referee/test_hostile_floods.py",
    "referee/test_hostile_hellos.py",
)


_GONE = [name for name in LONG_FILES if not (Path(__file__).parent / name).is_file()]
if _GONE:
    raise pytest.UsageError(f"tests/conftest.py's LONG_FILES names files that are gone: {_GONE}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        where = item.nodeid.split("::", 1)[0].removeprefix("tests/")
        return LONG_FILES.index(where) if where in LONG_FILES else len(LONG_FILES)
    items.sort(key=rank)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A real ``redis-server`` for the session of this test process. Tests keep apart by key
    prefix (the league tests' ``prefix`` fixture, the network tests' ``kits.net.KEY_PREFIX``);
    a test that stops or freezes Redis starts its own."""
    with RedisServer() as server:
        yield server


@pytest.fixture(scope="session")
def redis_url(redis_server: RedisServer) -> str:
    return redis_server.url
