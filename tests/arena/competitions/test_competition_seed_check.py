"""The seed check of a competition export (pure: sueca.arena.export.check_seeds):
real matches played through the engine from seeds derived from a key, then the key, a seed or
a deck tampered with, each named. The whole season's run (tests/arena/competitions/test_competition_season.py)
checks it on an arena's real matches."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from sueca.arena.competitions.results import ratings_of
from sueca.arena.export import (
    FORMAT,
    RESULT,
    ExportError,
    check_seeds,
    read_export,
    rebuild_from_export,
)
from sueca.arena.schedule import derive_seed
from sueca.engine import Variant
from sueca.engine.game import Match
from sueca.engine.replay import record

KEY = "k" * 32


def _played(mid: str, seed: str) -> dict:
    """A real match played with random legal cards from ``seed``, as the export holds it."""
    m = Match(Variant(target=4), seed=int(seed))
    rng = random.Random(mid)
    while not m.over:
        if m.awaiting_redeal:
            m.redeal(False)
            continue
        m.play(rng.choice(m.legal_cards(m.turn)))
    seats = ["a", "b", "a", "b"]
    rec = record(m, mid, seats)
    result = {"match_id": mid, "tournament": "", "pair": "", "seats": seats, "seed": seed,
              "end": str(m.end), "winner": m.winner, "game_points": list(m.game_points),
              "fault_seat": None, "fault_bot": None, "deals": len(rec["deals"]),
              "referee": "r", "replicas": 1, "variant": rec["variant"], "time": 1.0,
              "rated": True, "competition": "spring"}
    return json.loads(json.dumps({**rec, "result": result}))


def _header(key: str | None = KEY) -> dict:
    return {"format": FORMAT, "competition": "spring", "state": "closed" if key else "final",
            "seed_hash": hashlib.sha256(KEY.encode()).hexdigest(), "seed_key": key,
            "final": None, "final_spec": None, "spec": {}, "log": [], "entries": [],
            "created": 0.0, "elo_initial": 1500.0, "ratings": {}, "matches": 0}


def _matches(n: int = 3) -> list[dict]:
    return [_played(f"spring-l{i}", derive_seed(KEY, f"spring-l{i}")) for i in range(n)]


def test_a_true_record_checks_and_every_tampering_is_named() -> None:
    matches = _matches()
    report = check_seeds(_header(), matches)
    assert report["ok"] and report["checked"] == 3 and report["wrong"] == []
    assert report["deals"] == sum(len(m["deals"]) for m in matches) > 0

    # a seed the organiser picked: played and logged, but not the key's
    picked = _played("spring-l1", "12345")
    report = check_seeds(_header(), [matches[0], picked, matches[2]])
    assert not report["ok"]
    assert report["wrong"] == [{"match_id": "spring-l1", "problem": (
        f"seed 12345 logged; the key gives {derive_seed(KEY, 'spring-l1')}")}]

    # the right seed logged, but a deal stacked by hand
    stacked = json.loads(json.dumps(matches[1]))
    deck = stacked["deals"][0]["deck"]
    deck[0], deck[1] = deck[1], deck[0]
    report = check_seeds(_header(), [matches[0], stacked])
    assert [w["match_id"] for w in report["wrong"]] == ["spring-l1"]
    assert "deal 1's deck is not the one seed" in report["wrong"][0]["problem"]

    # another key revealed than the one committed to at open
    other = {**_header(), "seed_key": "x" * 32}
    report = check_seeds(other, matches)
    assert not report["ok"] and not report["key_matches_hash"]
    assert len(report["wrong"]) == 4  # the key, and every seed with it


def test_before_close_there_is_no_key_to_check() -> None:
    with pytest.raises(ValueError, match="'spring' is final: its seed key is revealed when it "
                                         "closes"):
        check_seeds(_header(None), _matches(1))


def test_an_export_file_reads_back_and_rebuilds_its_ratings(tmp_path) -> None:
    matches = _matches(4)
    header = _header()
    header["ratings"] = ratings_of([m["result"] for m in matches], 1500.0)
    gone = {"format": RESULT, "match_id": "spring-l9", "result": matches[0]["result"]}
    path = tmp_path / "spring.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [header, *matches]) + "\n")
    assert rebuild_from_export(path)["identical"]
    head, lines = read_export(path)
    assert head["competition"] == "spring" and len(lines) == 4
    # one result changed after the export: the rebuilt ratings differ from the recorded ones
    flipped = json.loads(json.dumps(matches))
    for m in flipped:
        m["result"]["winner"] = 1 - m["result"]["winner"] if m["result"]["winner"] is not None else 0
    path.write_text("\n".join(json.dumps(x) for x in [header, *flipped, gone]) + "\n")
    report = rebuild_from_export(path)
    assert not report["identical"] and report["max_diff"] > 1
    path.write_text(json.dumps({"format": "sueca-replay/1"}) + "\n")
    with pytest.raises(ExportError, match="is not a competition export: its first line's format "
                                          "is 'sueca-replay/1'"):
        read_export(path)
    path.write_text(json.dumps(header) + "\n{oops\n")
    with pytest.raises(ExportError, match="line 2: not JSON"):
        read_export(path)
