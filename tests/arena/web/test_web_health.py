"""Per-bot health on the web: the leaderboard's faults by kind and the bot page's fault counts
and latency, from the league's per-bot totals, over a league of real recorded matches (the
reckless example bot commits renúncias)."""

from __future__ import annotations

import re
from typing import Any


def _renuncias_in_log(store: Any, bot: str) -> int:
    """Counted from the replays, independently of the totals under test."""
    n = 0
    for _, res in store.results():
        replay = store.replay(res["match_id"])
        n += sum(1 for d in replay["deals"]
                 if d["end"] == "renuncia" and res["seats"][d["fault_seat"]] == bot)
    return n


def _faults(**counts: int) -> dict[str, int]:
    """Every fault kind the league counts, 0 unless given."""
    from sueca.arena.botstats import FAULT_KINDS
    return {kind: counts.get(kind, 0) for kind in FAULT_KINDS}


def test_leaderboard_shows_faults_by_kind(client: Any, seeded: dict[str, Any]) -> None:
    want = _renuncias_in_log(seeded["store"], "reckless")
    assert want >= 1
    rows = {r["bot"]: r for r in client.get("/api/leaderboard").json()}
    assert rows["reckless"]["faults"] == _faults(renuncia=want)
    assert rows["heuristic"]["faults"]["renuncia"] == 0
    assert rows["reckless"]["p50_ms"] is None  # local play: no referee timed the turns
    html = client.get("/").text
    assert ">faults R/T/D/E</th>" in html and "renúncias" in html  # the header's title says so
    row = re.search(r'<tr data-bot="reckless"[^>]*>(.*?)</tr>', html, re.S)
    assert row is not None
    assert (f'<span class="renuncias">{want}</span>/<span class="timeouts">0</span>/'
            '<span class="disconnects">0</span>/<span class="bot-errors">0</span>') in row.group(1)


def test_bot_page_shows_fault_counts_and_latency(client: Any, seeded: dict[str, Any]) -> None:
    want = _renuncias_in_log(seeded["store"], "reckless")
    doc = client.get("/api/bots/reckless").json()
    assert doc["faults"] == _faults(renuncia=want)
    assert doc["moves"] > 0 and doc["turns"] == 0 and doc["p99_ms"] is None
    html = client.get("/bots/reckless").text
    assert f'id="faults">{want} / 0 / 0 / 0<' in html and "no timed turns yet" in html
