"""The docs test, the READMEs and the bot authors' pages: their shell blocks are run
(:mod:`kits.docs` says how), so that no page can drift from the commands it documents. The
pages for whoever runs a league (``kits.docs.LEAGUE_PAGES``) are tests/test_docs_league.py's:
two files that ``--dist loadfile`` runs side by side, each in its own copy of the
repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from kits.docs import ALL, LEAGUE_PAGES, PAGES, ROOT, RUN, SHELL, Block, named_files, run_block

pytestmark = pytest.mark.slow

OURS = [b for b in RUN if b.page not in LEAGUE_PAGES]


def test_the_convention_is_followed() -> None:
    """Shell blocks are `sh`; a skipped one says why; the commands a newcomer needs run
    somewhere; every page with commands runs at least one of them."""
    for b in ALL:
        if b.lang in SHELL and b.lang != "sh":
            pytest.fail(f"{b.where}: write shell blocks as ```sh, not ```{b.lang}")
    assert len(RUN) >= 3, [b.where for b in RUN]
    text = "".join(b.text for b in RUN)
    for command in ("sueca-bot selfplay", "sueca-bot replay verify", "sueca-arena redis",
                    "sueca-bot run", "sueca-arena tournament run", "sueca-arena loadtest"):
        assert command in text, f"no page has a block that runs {command!r}"
    for page in ("README.md", "sdk/README.md", "docs/bot-authors.md", "docs/load-testing.md"):
        assert any(b.page == page for b in RUN), f"{page} runs none of its commands"
    named_files(ALL)  # the same file is never given two texts


def test_pages_are_found() -> None:
    """Every page is found, and every league page named is one (a renamed page would
    otherwise leave the league's file with nothing to run)."""
    found = {str(p.relative_to(ROOT)) for p in PAGES}
    assert {"README.md", "sdk/README.md", "docs/rules.md"} <= found
    assert LEAGUE_PAGES <= found, sorted(LEAGUE_PAGES - found)


@pytest.mark.parametrize("block", OURS, ids=[b.where for b in OURS])
def test_doc_block_runs(block: Block, docs_copy: Path) -> None:
    run_block(block, docs_copy)
