"""Bot versions through real processes: ``sueca-arena serve`` runs the ladder with its example
bots; one of them plays at version 1, ``sueca-arena bots version`` starts version 2 while the
ladder keeps going, and the bot's page, ``/api/bots/NAME``, the leaderboard and ``bots list``
each show the two versions apart: each with its own matches and rating of record, the bot
ranked as version 2."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from pathlib import Path

import pytest
from kits.arena import SUECA_ARENA
from kits.serve import Serve
from kits.wait import wait_for

pytestmark = pytest.mark.slow

BOT = "reckless"


def _cli(serve: Serve, *args: str, check: int = 0) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUECA_")}
    out = subprocess.run([SUECA_ARENA, *args, "--redis", serve.url()], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == check, (out.returncode, out.stdout, out.stderr)
    return out


def _page(serve: Serve, path: str) -> str:
    with urllib.request.urlopen(serve.web + path, timeout=5) as r:
        return str(r.read().decode())


def test_a_new_version_is_rated_apart_and_the_bot_ranks_as_it(tmp_path: Path) -> None:
    serve = Serve(tmp_path / "data", tmp_path / "serve.log", "--example-bots").wait_up()
    try:
        serve.wait_games(bots=3, games=3)
        before = serve.get(f"/api/bots/{BOT}")
        assert before["version"] == 1 and [v["version"] for v in before["versions"]] == [1]
        made = json.loads(_cli(serve, "bots", "version", BOT, "--note", "plays <b>safer</b>",
                               "--by", "ann", "--json").stdout)
        assert made == {"bot": BOT, "version": 2, "by": "ann", "note": "plays <b>safer</b>"}

        def both_rated() -> dict | None:
            page = serve.get(f"/api/bots/{BOT}")
            rows = {v["version"]: v for v in page["versions"]}
            return page if rows[2]["matches"] >= 3 and rows[1]["matches"] >= 3 else None

        page = wait_for(both_rated, 90, f"{BOT} v2's rated matches", interval=0.5)
        v2, v1 = page["versions"]                                  # newest first
        assert (v2["version"], v1["version"]) == (2, 1)
        assert v2["by"] == "ann" and v2["note"] == "plays <b>safer</b>" and v2["created"] > 0
        for v in (v1, v2):
            assert v["rating"] is not None and v["rating_pm"] > 0 and v["logged"] >= v["matches"]
        assert v1["rating"] != v2["rating"]
        # each version's matches are its own: the results log says which version played
        rows = page["recent_matches"]
        assert {r["versions"].get(BOT, 1) for r in rows} <= {1, 2}
        board = {r["bot"]: r for r in serve.get("/api/leaderboard")}
        assert board[BOT]["version"] == 2
        # the leaderboard ranks the bot as version 2 (the fit is refreshed as results come:
        # compare at one moment, the bot page's own numbers)
        now = serve.get(f"/api/bots/{BOT}")
        assert now["rating"]["rating"] == now["versions"][0]["rating"]
        assert now["rating"]["matches"] == now["versions"][0]["matches"]
        html = _page(serve, f"/bots/{BOT}")
        assert 'id="versions"' in html and 'data-version="2" class="current"' in html
        assert "plays &lt;b&gt;safer&lt;/b&gt;" in html and "<b>safer" not in html
        assert 'class="m-version">v2<' in html                   # match rows name v2
        assert 'id="versions-line"' in _page(serve, "/")
        listed = {r["bot"]: r for r in json.loads(_cli(serve, "bots", "list", "--json").stdout)}
        assert listed[BOT]["version"] == 2 and listed["random"]["version"] == 1
        # the rebuild from the log gives the same counts, versions and all
        rebuilt = json.loads(_cli(serve, "ratings", "rebuild", "--check", "--json").stdout)
        assert rebuilt["identical"] is True
        assert rebuilt["versions"] == rebuilt["bots"] + 1             # reckless@2 besides
    finally:
        serve.stop()
