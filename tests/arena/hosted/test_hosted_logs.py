"""Owner-only logs: a hosted bot's log is shown on the web only behind its token (a form that
POSTs it, or an Authorization header under /api/), escaped, and never on the public pages; the
store keeps it capped (lines cut and escaped, a fixed number of entries per version)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from sueca.arena.keys import Keys
from sueca.arena.store import Store, connect
from sueca.arena.store.hosted import LOG_CHARS, LOG_LINES
from sueca.arena.web.app import create_app

MARK = "secret-stderr-line-42"
HOSTILE = "<script>alert(1)</script>\x1b[31mred"


@pytest.fixture(scope="module")
def league(redis_url: str) -> Iterator[tuple[Store, dict[str, str], Any]]:
    from starlette.testclient import TestClient  # its import warns: only where it is used
    store = Store(connect(redis_url), Keys(f"hl{uuid.uuid4().hex[:8]}:"))
    tokens = {b: store.bots.add(b) for b in ("owned", "other")}
    version = store.versions.bump("owned", by="test", submission="ab" * 32)
    store.hosted.host("owned", version=version, submission="ab" * 32)
    store.hosted.append_log("owned", version, [MARK, HOSTILE])
    with TestClient(create_app(store), raise_server_exceptions=False) as client:
        yield store, tokens, client


def test_the_public_pages_never_show_the_log(league: Any) -> None:
    _, _, client = league
    for path in ("/bots/owned", "/api/bots/owned", "/bots/owned/logs", "/", "/api/leaderboard"):
        got = client.get(path)
        assert got.status_code == 200, (path, got.status_code)
        assert MARK not in got.text and "alert(1)" not in got.text, path
    assert 'href="/bots/owned/logs"' in client.get("/bots/owned").text


def test_the_owner_reads_it_with_the_token_and_nobody_else(league: Any) -> None:
    _, tokens, client = league
    for token in ("", tokens["other"], "owned.wrong"):
        refused = client.post("/bots/owned/logs", data={"token": token})
        assert refused.status_code == 403 and MARK not in refused.text
        assert "token" in refused.text
        api = client.get("/api/bots/owned/logs", headers={"Authorization": f"Bearer {token}"})
        assert api.status_code == 403 and MARK not in api.text
        assert api.json()["error"].startswith(("wrong token for bot 'owned'", "no token"))
    shown = client.post("/bots/owned/logs", data={"token": tokens["owned"]})
    assert shown.status_code == 200 and MARK in shown.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31mred" in shown.text
    assert "<script>alert" not in shown.text and "\x1b" not in shown.text
    assert shown.headers["cache-control"] == "no-store"
    api = client.get("/api/bots/owned/logs",
                     headers={"Authorization": f"Bearer {tokens['owned']}"}).json()
    assert api["bot"] == "owned" and api["version"] == 2
    assert [entry["line"] for entry in api["lines"]] == [MARK, "<script>alert(1)</script>\\x1b[31mred"]


def test_the_log_is_capped(league: Any) -> None:
    store, _, _ = league
    store.hosted.append_log("other", 1, ["x" * 5000] + [f"line {i}" for i in range(LOG_LINES)])
    lines = store.hosted.log("other", 1)
    assert len(lines) == LOG_LINES
    assert lines[0]["line"] == "line 0" and lines[-1]["line"] == f"line {LOG_LINES - 1}"
    store.hosted.append_log("other", 2, ["y" * 5000])
    assert len(store.hosted.log("other", 2)[0]["line"]) == LOG_CHARS + 3  # "..." marks the cut


def test_the_shipper_follows_the_sandboxs_rotated_stderr(tmp_path: Any) -> None:
    """A bot host ships each line of the bot's stderr once, in order, across the sandbox's
    rotation of the file (StderrLog moves it to NAME.1), and whole lines only."""
    from sueca.arena.hosted.host import _Tail
    from sueca.arena.hosted.sandbox import StderrLog

    log = StderrLog(tmp_path / "stderr", cap_bytes=40, keep=1)
    tail = _Tail(tmp_path / "stderr", truncate=False)
    shipped: list[str] = []
    for i in range(30):
        log.write(f"line {i}\n".encode())
        if i % 3 == 0:  # shipped faster than the sandbox rotates twice
            shipped += tail.lines()
    log.write(b"half a li")
    shipped += tail.lines()
    assert shipped == [f"line {i}" for i in range(30)]
    log.write(b"ne\n")
    assert tail.lines() == ["half a line"]
