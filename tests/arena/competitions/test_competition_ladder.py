"""Competitions' ladders on a real Redis: each open or frozen competition plays among its
entrants with its rules and seeds, the target is shared fairly, frozen versions play, divisions
split, cycle and place newcomers; and the moves their times ask for happen once."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

import pytest

from sueca.arena.competitions import ladder as comp_ladder
from sueca.arena.competitions.moves import advance, move
from sueca.arena.fairplay import Rule
from sueca.arena.final import seeding
from sueca.arena.lifecycle import DEFAULT, State, new_spec
from sueca.arena.match_job import outcome_to_result
from sueca.arena.schedule import Ladder, derive_seed
from sueca.arena.settings import current, replace, use
from sueca.arena.store.versions import VersionError

BOTS = "abcdefgh"
DIVISIONS = {"size": None, "count": 2, "promote": 1, "every_s": 60.0, "placement": 1}


def _league(store, **competitions):
    """Bots a..h registered; each competition NAME=(entrants, spec options) created, entered
    and opened."""
    for b in BOTS:
        store.bots.add(b)
    for name, (entrants, options) in competitions.items():
        store.competitions.create(new_spec(name, **options), by="org")
        for b in entrants:
            store.competitions.enter(name, b, by="org")
        move(store, name, State.OPEN, by="org")


def _ladder(store, target, sent, seed=1):
    return Ladder(store, target, lambda: {b: 100 for b in BOTS}, sent.append,
                  rng=random.Random(seed))


def _finish(store, mids, winner_of=None):
    """Record each match: team 0 wins unless ``winner_of(bots)`` says which team."""
    for mid in mids:
        m = store.match(mid)
        winner = winner_of(m["spec"]["bots"]) if winner_of else 0
        store.record_result(mid, outcome_to_result(m, {"end": "normal", "winner": winner,
                                                       "game_points": [4, 0], "replay": None}))


def test_each_competition_plays_its_own_ladder_and_the_target_is_shared(store):
    _league(store, c1=("abc", {"variant": {"tie": "double"}, "limits": {"move_ms": 700}}),
            c2=("de", {"variant": {"target": 8}}))
    store.competitions.create(new_spec("c3"), by="org")          # a draft: it does not play
    for b in "af":
        store.competitions.enter("c3", b, by="org")
    sent: list[str] = []
    new = _ladder(store, 9, sent).tick()
    assert len(new) == 9 == len(sent)
    by = {mid: store.match(mid) for mid in new}
    shares = Counter(m.get("competition") or DEFAULT for m in by.values())
    assert shares == {DEFAULT: 3, "c1": 3, "c2": 3}              # a third of the target each
    for mid, m in by.items():
        spec, name = m["spec"], m.get("competition")
        assert m["tournament"] == "ladder"
        if name == "c1":
            assert set(spec["bots"]) <= set("abc") and spec["variant"] == {"tie": "double"}
            assert spec["move_ms"] == 700
        elif name == "c2":
            assert set(spec["bots"]) == set("de") and spec["variant"] == {"target": 8}
        else:
            assert not name and set(spec["bots"]) <= set(BOTS)
            continue
        assert spec["seed"] == derive_seed(store.competitions.secret(name), mid)
        assert m["versions"] == {b: 1 for b in set(spec["bots"])}
    # two finish in c2: its slots go back to whoever has fewest in flight
    _finish(store, [mid for mid, m in by.items() if m.get("competition") == "c2"][:2])
    again = _ladder(store, 9, sent, seed=2).tick()
    assert Counter(store.match(m).get("competition") for m in again) == {"c2": 2}


def test_a_frozen_competition_plays_the_versions_stamped_at_its_freeze(store):
    _league(store, c1=("abc", {}))
    store.versions.bump("b", by="owner")                        # open: a new version is fine
    stamp = move(store, "c1", State.FROZEN, by="org")
    assert stamp["to"] == "frozen"
    assert {b: e["version"] for b, e in store.competitions.entries("c1").items()} == {
        "a": 1, "b": 2, "c": 1}
    with pytest.raises(VersionError, match="'c1', which is frozen"):
        store.versions.bump("b", by="owner")
    sent: list[str] = []
    for mid in _ladder(store, 4, sent).tick():
        m = store.match(mid)
        if m.get("competition") == "c1":
            assert m["versions"] == {x: 2 if x == "b" else 1 for x in set(m["spec"]["bots"])}
    assert any(store.match(m).get("competition") == "c1" for m in sent)


def _entries(store, name):
    return store.competitions.entries(name)


def test_divisions_split_cycle_and_place_a_newcomer(store):
    _league(store, div=("abcdef", {"divisions": dict(DIVISIONS)}))
    strength = {b: i for i, b in enumerate("fedcba")}           # a strongest, f weakest

    def winner_of(seats):
        return 0 if strength.get(seats[0], -1) > strength.get(seats[1], -1) else 1

    sent: list[str] = []
    for round_ in range(12):                  # placement, then the split, then division play
        _finish(store, _ladder(store, 6, sent, seed=round_).tick(), winner_of)
        if all(e["division"] is not None for e in _entries(store, "div").values()):
            break
    entries = _entries(store, "div")
    assert all(e["placed"] >= 1 for e in entries.values())
    split = store.competitions.division_log("div")
    assert [c["kind"] for c in split] == ["split"] and split[0]["by"] == "scheduler"
    divisions = {b: e["division"] for b, e in entries.items()}
    assert Counter(divisions.values()) == {0: 3, 1: 3}
    # division ladders: every match from now on is within one division
    for _ in range(4):
        new = _ladder(store, 6, sent, seed=50 + _).tick()
        for mid in new:
            if store.match(mid).get("competition") == "div":
                seats = set(store.match(mid)["spec"]["bots"])
                assert len({divisions[b] for b in seats}) == 1, (seats, divisions)
        _finish(store, new, winner_of)
    # a cycle, once every_s has passed: the bottom of 0 and the top of 1 swap
    registered = store.bots.names()
    later = split[0]["at"] + 61
    comp_ladder.plays(store, registered, present=set(BOTS), variant={}, limits={}, now=later)
    log = store.competitions.division_log("div")
    assert [c["kind"] for c in log] == ["split", "cycle"]
    moves = log[1]["moves"]
    assert sorted((m["from_division"], m["to"]) for m in moves) == [(0, 1), (1, 0)]
    after = {b: e["division"] for b, e in _entries(store, "div").items()}
    for m in moves:
        assert after[m["bot"]] == m["to"] != divisions[m["bot"]]
    comp_ladder.plays(store, registered, present=set(BOTS), variant={}, limits={}, now=later + 1)
    assert len(store.competitions.division_log("div")) == 2      # not again before every_s
    # a newcomer plays its placement match (one at a time), then gets a division
    store.competitions.enter("div", "g", by="owner")
    new = _ladder(store, 8, sent, seed=99).tick()
    placing = [m for m in new if "g" in store.match(m)["spec"]["bots"]
               and store.match(m).get("competition") == "div"]
    assert len(placing) == 1 and _entries(store, "div")["g"]["placed"] == 1
    assert _entries(store, "div")["g"]["division"] is None     # its match is still in flight
    _finish(store, new, lambda seats: 0 if seats[0] == "g" else 1)   # g wins its placement
    _ladder(store, 8, sent, seed=100).tick()
    assert _entries(store, "div")["g"]["division"] is not None
    assert store.competitions.division_log("div")[-1]["kind"] == "placed"


def test_the_times_move_a_competition_once_by_the_scheduler(store):
    for b in "ab":
        store.bots.add(b)
    now = time.time()
    store.competitions.create(new_spec("timed", opens_at=now - 5, freezes_at=now + 100,
                                       closes_at=now + 300), by="org")
    store.competitions.create(new_spec("manual"), by="org")
    store.competitions.enter("timed", "a", by="org")
    store.versions.bump("a", by="owner")
    moved: list = []
    barrier = threading.Barrier(2)

    def run():
        barrier.wait()
        moved.extend(advance(store, now=now + 200))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # open and then frozen (its freeze time passed too); the final has no time: it waits
    assert [(name, step["to"], step["by"]) for name, step in moved] == [
        ("timed", "open", "scheduler"), ("timed", "frozen", "scheduler")]
    got = store.competitions.get("timed")
    assert got["state"] is State.FROZEN
    assert [t["to"] for t in got["log"]] == ["draft", "open", "frozen"]   # each once
    assert store.competitions.entries("timed")["a"]["version"] == 2       # stamped
    assert store.competitions.get("manual")["state"] is State.DRAFT
    assert advance(store, now=now + 400) == []                  # no final time: by command


def test_a_competition_that_cannot_use_its_share_leaves_it_to_the_others():
    def play(name, *boards):
        return comp_ladder.Play(name, {}, {}, [comp_ladder.Board(b, frozenset()) for b in boards],
                                {}, None)

    plays = [play("ladder", "ladder/all"), play("a", "a/division 0", "a/division 1"),
             play("b", "b/all")]
    by_play, by_board, done = Counter({"ladder": 2, "a": 1}), Counter({"a/division 1": 1}), set()
    got = []
    for _ in range(5):
        chosen = comp_ladder.next_board(plays, by_play=by_play, by_board=by_board, done=done)
        p, board = chosen
        got.append(board.key)
        by_play[p.name] += 1
        by_board[board.key] += 1
        if board.key == "b/all":
            done.add(board.key)                  # b has no pair left to draw
    # the fewest in flight first (b, then a's emptier division), b's share to the others
    assert got == ["b/all", "a/division 0", "a/division 0", "ladder/all", "a/division 1"]
    done.update(b.key for p in plays for b in p.boards)
    assert comp_ladder.next_board(plays, by_play=by_play, by_board=by_board, done=done) is None


def test_a_competitions_own_fair_play_rule_benches_a_bot_in_it_alone(store):
    """Bot a faulted once: under strict's own rule (1 of its last 3) it is suspended there,
    under the arena's (5 of 10) and lenient's (the default) it is not. strict's ladder never
    pairs it, nor seeds it for its final; the default ladder and lenient's keep playing it."""
    _league(store, strict=("abc", {"fair_play": {"faults": 1, "of_last": 3,
                                                 "challenges_per_hour": 5}}),
            lenient=("ab", {}))
    spec = {"match_id": "f0", "bots": list("adad"), "seed": "1", "first_dealer": 0,
            "variant": {}}
    store.create_match("f0", spec, tournament="ladder", pair="")
    store.record_result("f0", outcome_to_result(store.match("f0"), {
        "end": "bot_error", "winner": 1, "game_points": [0, 4], "fault_seat": 0,
        "fault_bot": "a", "fault_detail": None, "replay": None}))
    use(replace(current(), suspend_after=Rule(5, 10)))
    try:
        sent: list[str] = []
        played: dict[str, Counter[str]] = {}
        for i in range(12):
            new = _ladder(store, 6, sent, seed=i).tick()
            for mid in new:
                m = store.match(mid)
                played.setdefault(m.get("competition") or DEFAULT, Counter()).update(
                    set(m["spec"]["bots"]))
            _finish(store, new)
        assert played["strict"]["b"] and played["strict"]["c"] and not played["strict"]["a"]
        assert played[DEFAULT]["a"] and played["lenient"]["a"]
        assert store.fairplay.bots_state(["a"])["a"].suspensions.keys() == {"strict"}
        assert set(seeding(store, "strict")) == {"b", "c"}
        assert set(seeding(store, "lenient")) == {"a", "b"}
    finally:
        use(None)
