"""Live spectating over HTTP: server-sent events from the referee's spectator stream, for a
match really played on a real referee by bot processes (the session's ``referee_arena``)."""

from __future__ import annotations

import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from kits.wait import wait_for

pytestmark = pytest.mark.slow


def _events(text: str) -> list[dict[str, Any]]:
    out = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            out.append({"event": lines["event"], **json.loads(lines["data"])})
    return out


def test_a_running_match_streams_its_public_play(referee_arena: Any) -> None:
    from starlette.testclient import TestClient

    from sueca.arena.web.app import create_app
    from sueca.referee import control
    store = referee_arena.store
    mid = f"live-{uuid.uuid4().hex[:8]}"
    spec = {"match_id": mid, "bots": ["slow", "random", "slow", "random"], "seed": "7",
            "variant": {}}
    store.create_match(mid, spec, tournament="ladder")
    store.start_attempt(mid)
    client = TestClient(create_app(store, referees=[referee_arena.referee]),
                        raise_server_exceptions=False)
    with ThreadPoolExecutor(1) as pool:
        fut = pool.submit(control.run_match, referee_arena.referee, spec, 120)
        refused: list[Any] = []

        def live() -> Any:  # until the referee has the match (the slow bot makes it last seconds)
            r = client.get(f"/api/matches/{mid}/live")
            if r.status_code == 200 or fut.done():
                return r
            refused.append(r)
            return None

        r = wait_for(live, 30, "the live stream of the match")
        result = fut.result(120)
    for early in refused:  # before the referee had it
        assert early.status_code == 404 and "not running on any known referee" in \
            early.json()["error"]
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = _events(r.text)
    kinds = [e["event"] for e in events]
    assert kinds[0] == "started" and kinds[-2:] == ["result", "end"]
    played = [c for d in result["replay"]["deals"] for t in d["tricks"] for c in t["cards"]]
    assert [e["card"] for e in events if e["event"] == "card"] == played
    trumps = [d["trump"] for d in result["replay"]["deals"] if d["end"] != "redeal"]
    assert [e["trump"] for e in events if e["event"] == "deal_start"][:len(trumps)] == trumps
    assert not any("hands" in e or "deck" in e or e.get("replay") for e in events)
    # the seat to play, as the live page marks it from these events alone (a deal's first
    # card: the dealer's next seat; then the next seat round the table; a trick's winner leads
    # the next), is the seat of every card that follows
    to_play, in_trick, checked = None, 0, 0
    for e in events:
        if e["event"] == "deal_start":
            to_play, in_trick = (e["dealer"] + 1) % 4, 0
        elif e["event"] == "card":
            assert e["seat"] == to_play, (checked, e)
            in_trick, checked = in_trick + 1, checked + 1
            to_play = (e["seat"] + 1) % 4 if in_trick < 4 else None
        elif e["event"] == "trick_end":
            to_play, in_trick = e["winner"], 0
    assert checked == len(played)
    # the page of a running match carries the live board, never a hand
    store.set_status(mid, "running")
    page = client.get(f"/matches/{mid}").text
    assert f"/api/matches/{mid}/live" in page and 'data-card="' not in page


def test_only_a_running_single_match_can_be_watched(referee_arena: Any) -> None:
    from starlette.testclient import TestClient

    from sueca.arena.web.app import create_app
    store = referee_arena.store
    client = TestClient(create_app(store, referees=[referee_arena.referee]),
                        raise_server_exceptions=False)
    mid = f"half-{uuid.uuid4().hex[:8]}"
    store.create_match(mid, {"bots": ["slow", "random"] * 2, "seed": "9"}, tournament="t",
                       pair="t/slow/random/0")
    r = client.get(f"/api/matches/{mid}/live")
    assert r.status_code == 404 and "duplicate pair" in r.json()["error"]
    store.record_failure(mid, "gone")
    assert "not running" in client.get(f"/api/matches/{mid}/live").json()["error"]
    assert client.get("/api/matches/nope-nope/live").status_code == 404
    queued = f"queued-{uuid.uuid4().hex[:8]}"
    store.create_match(queued, {"bots": ["slow", "random"] * 2, "seed": "9"}, tournament="ladder")
    r = client.get(f"/api/matches/{queued}/live")
    assert r.status_code == 404 and "not running on any known referee" in r.json()["error"]
