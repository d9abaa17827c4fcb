"""What the whole suite shares: its options, one real Redis per test process, and the network
tests' referee and bot processes (:mod:`kits.net_fixtures`, used by tests/referee and tests/sdk:
one of each per test process, however many folders' tests it runs) and the docs tests' copy
of the repository (:mod:`kits.docs`)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

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
