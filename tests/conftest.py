"""Options shared by the whole suite."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--regen-golden", action="store_true", default=False,
                     help="rewrite tests/referee/engine/golden/*.jsonl from the example bots "
                          "instead of checking them (review the diff before committing)")
