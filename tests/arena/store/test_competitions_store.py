"""Competitions and bot versions against a real Redis: a season's moves, entries, the seed
commitment, versions fixed while a competition is frozen."""

from __future__ import annotations

import hashlib
import threading

import pytest

from sueca.arena.lifecycle import DEFAULT, CompetitionError, State, new_spec
from sueca.arena.store.versions import VersionError


def test_a_season_is_logged_and_reveals_its_seed_key_only_when_closed(store) -> None:
    for b in ("a", "b"):
        store.bots.add(b)
    made = store.competitions.create(new_spec("cup"), by="ann")
    assert made["state"] is State.DRAFT and made["seed_key"] is None
    store.competitions.enter("cup", "a", by="ann")
    for to in (State.OPEN, State.FROZEN, State.FINAL):
        store.competitions.move("cup", to, by="ann")
        assert store.competitions.get("cup")["seed_key"] is None
    with pytest.raises(CompetitionError, match="entries are closed"):
        store.competitions.enter("cup", "b", by="ann")
    store.competitions.move("cup", State.CLOSED, by="bob")
    got = store.competitions.get("cup")
    assert hashlib.sha256(got["seed_key"].encode()).hexdigest() == got["seed_hash"]
    assert got["seed_key"] == store.competitions.secret("cup")
    assert [(t["from_state"], t["to"], t["by"]) for t in got["log"]] == [
        ("", "draft", "ann"), ("draft", "open", "ann"), ("open", "frozen", "ann"),
        ("frozen", "final", "ann"), ("final", "closed", "bob")]
    assert store.competitions.names() == [DEFAULT, "cup"]
    assert list(store.competitions.entries("cup")) == ["a"]


def test_two_racing_moves_happen_once(store) -> None:
    store.competitions.create(new_spec("cup"), by="ann")
    errors: list[str] = []

    def move() -> None:
        try:
            store.competitions.move("cup", State.OPEN, by="x")
        except CompetitionError as err:
            errors.append(str(err))

    threads = [threading.Thread(target=move) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(errors) == 7
    assert [t["to"] for t in store.competitions.get("cup")["log"]] == ["draft", "open"]


def test_bad_entries_change_nothing(store) -> None:
    store.bots.add("Greedy")
    store.competitions.create(new_spec("cup"), by="ann")
    store.competitions.create(new_spec("hosted", hosted_only=True), by="ann")
    for name, bot, words in [("cup", "greedy", "(did you mean 'Greedy'?)"),
                             ("nope", "Greedy", "unknown competition 'nope'"),
                             ("hosted", "Greedy", "hosted bots only"),
                             (DEFAULT, "Greedy", "every registered bot")]:
        with pytest.raises(CompetitionError) as err:
            store.competitions.enter(name, bot, by="ann")
        assert words in str(err.value)
    store.competitions.enter("cup", "Greedy", by="ann")
    with pytest.raises(CompetitionError, match="already entered"):
        store.competitions.enter("cup", "Greedy", by="ann")
    with pytest.raises(CompetitionError, match="already exists"):
        store.competitions.create(new_spec("cup"), by="ann")
    assert list(store.competitions.entries("hosted")) == []


def test_versions_count_up_and_are_fixed_while_frozen(store) -> None:
    store.bots.add("a")
    assert store.versions.current("a") == 1
    assert [v["version"] for v in store.versions.history("a")] == [1]
    assert store.versions.bump("a", by="ann", note="deeper search") == 2
    assert store.versions.currents(["a"]) == {"a": 2}
    assert store.versions.get("a", 2)["note"] == "deeper search"
    store.competitions.create(new_spec("cup"), by="ann")
    store.competitions.enter("cup", "a", by="ann")
    store.competitions.move("cup", State.OPEN, by="ann")
    assert store.versions.bump("a", by="ann") == 3  # open: new versions welcome
    store.competitions.move("cup", State.FROZEN, by="ann")
    with pytest.raises(VersionError, match="competition 'cup', which is frozen"):
        store.versions.bump("a", by="ann")
    assert store.versions.current("a") == 3
    with pytest.raises(VersionError, match="unknown bot 'zz'"):
        store.versions.bump("zz", by="ann")
    store.competitions.move("cup", State.FINAL, by="ann")
    store.competitions.move("cup", State.CLOSED, by="ann")
    assert store.versions.bump("a", by="ann") == 4
    assert [v["version"] for v in store.versions.history("a")] == [1, 2, 3, 4]


def test_a_match_carries_its_competition_and_versions_into_its_result(store) -> None:
    from sueca.arena.match_job import outcome_to_result
    store.create_match("m1", {"match_id": "m1", "bots": ["a", "b", "a", "b"]}, tournament="",
                       competition="cup", versions={"a": 2, "b": 1})
    store.create_match("m2", {"match_id": "m2", "bots": ["a", "b", "a", "b"]})
    out = {"end": "normal", "winner": 0, "game_points": [4, 0]}
    one, two = (outcome_to_result(store.match(m), out) for m in ("m1", "m2"))
    assert one["competition"] == "cup" and one["versions"] == {"a": 2, "b": 1}
    assert "competition" not in two and "versions" not in two


def test_a_bot_in_a_competition_that_is_not_closed_is_not_removed(redis_url, prefix) -> None:
    import subprocess
    import sys
    run = [sys.executable, "-m", "sueca.arena.cli"]
    env = {"SUECA_KEY_PREFIX": prefix, "PATH": "/usr/bin:/bin"}
    from sueca.arena.keys import Keys
    from sueca.arena.store import Store, connect
    store = Store(connect(redis_url), Keys(prefix))
    store.bots.add("a")
    store.competitions.create(new_spec("cup"), by="ann")
    store.competitions.enter("cup", "a", by="ann")
    got = subprocess.run([*run, "bots", "remove", "a", "--redis", redis_url], capture_output=True, text=True, env=env)
    assert got.returncode != 0 and "competition 'cup', which is not closed" in got.stderr
    assert "Traceback" not in got.stderr and store.bots.exists("a")
