"""Options shared by the whole suite."""

from __future__ import annotations

import signal

import pytest

# Started in the background by a non-interactive shell (`cmd &`, nohup), the suite inherits
# SIGINT and SIGQUIT ignored, and every process it starts would too: the tests that stop a
# demo, serve or redis with Ctrl-C then fail for the launcher's reason, not the code's. A
# handler here is reset to the default in each child at exec, so the children get Ctrl-C back.
for _sig, _handler in ((signal.SIGINT, signal.default_int_handler),
                       (signal.SIGQUIT, signal.SIG_DFL)):
    if signal.getsignal(_sig) == signal.SIG_IGN:
        signal.signal(_sig, _handler)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--regen-golden", action="store_true", default=False,
                     help="rewrite tests/referee/engine/golden/*.jsonl from the example bots "
                          "instead of checking them (review the diff before committing)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files with multi-process (``slow``) tests first, each file's tests kept together and in
    their order: spread over several pytest processes by file (``make test``), the long files
    then start early instead of one of them running alone at the end."""
    heavy = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in heavy)  # stable: the order within a file stays
