"""The docs test, the pages for whoever runs a league (``kits.docs.LEAGUE_PAGES``): their shell
blocks are run as tests/test_readme.py runs the READMEs' and the bot authors' (:mod:`kits.docs`
says how), in a copy of the repository of this file's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from kits.docs import LEAGUE_PAGES, RUN, Block, run_block

pytestmark = pytest.mark.slow

OURS = [b for b in RUN if b.page in LEAGUE_PAGES]


@pytest.mark.parametrize("block", OURS, ids=[b.where for b in OURS])
def test_doc_block_runs(block: Block, docs_copy: Path) -> None:
    run_block(block, docs_copy)
