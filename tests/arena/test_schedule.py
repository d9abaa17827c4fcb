"""Pairings: round-robin shape, duplicate pairs, seeds; the ladder's picks and its lock."""

from __future__ import annotations

import random
import threading
from collections import Counter

import pytest

from sueca.arena.ratings.fit import Fit
from sueca.arena.schedule import Ladder, pick_pairs, round_robin, tournament_spec
from sueca.engine import Match


def _rr(bots, k, duplicate, secret="s3cret"):
    return round_robin("T", tournament_spec(bots, k, duplicate, {}, secret=secret))


def test_every_pair_plays_k_matches_with_seats_and_dealer_rotating():
    matches = _rr(["a", "b", "c", "d"], 8, False)
    assert len(matches) == 6 * 8
    by_pair = Counter(frozenset(m["spec"]["bots"]) for m in matches)
    assert set(by_pair.values()) == {8}
    ab = [m["spec"] for m in matches if set(m["spec"]["bots"]) == {"a", "b"}]
    assert [s["bots"][0] for s in ab] == ["a", "b"] * 4                  # teams alternate
    assert sorted(s["first_dealer"] for s in ab) == [0, 0, 1, 1, 2, 2, 3, 3]  # every seat deals
    dealers = Counter(s["bots"][s["first_dealer"]] for s in ab)
    assert dealers == {"a": 4, "b": 4}                                   # and both bots deal
    assert len({s["seed"] for s in ab}) == 8
    assert [m["id"] for m in matches] == [f"T-{i:04d}" for i in range(48)]


def test_duplicate_pairs_share_decks_with_teams_swapped():
    matches = _rr(["a", "b", "c"], 4, True)
    assert len(matches) == 3 * 4
    for first, second in zip(matches[::2], matches[1::2]):
        assert first["pair"] == second["pair"] != ""
        s1, s2 = first["spec"], second["spec"]
        assert s1["seed"] == s2["seed"] and s1["first_dealer"] == s2["first_dealer"]
        assert s2["bots"] == [s1["bots"][1], s1["bots"][0], s1["bots"][3], s1["bots"][2]]
        m1 = Match(seed=s1["seed"], first_dealer=s1["first_dealer"])
        m2 = Match(seed=s2["seed"], first_dealer=s2["first_dealer"])
        assert m1.deal.deck == m2.deal.deck                              # the same cards
    assert len({m["pair"] for m in matches}) == 6


def test_schedule_is_a_function_of_the_spec_and_seeds_of_the_secret():
    assert _rr(["a", "b"], 2, False) == _rr(["a", "b"], 2, False)
    other = _rr(["a", "b"], 2, False, secret="another")
    assert [m["spec"]["seed"] for m in other] != [m["spec"]["seed"] for m in _rr(["a", "b"], 2, False)]


@pytest.mark.parametrize("bots, k, dup, message", [
    (["a"], 2, False, r"a tournament \(any format\) needs at least 2 bots"),
    (["a", "a"], 2, False, "listed twice"),
    (["a", "b"], 0, False, "at least 1"),
    (["a", "b"], 3, True, "must be even"),
])
def test_bad_specs_are_refused(bots, k, dup, message):
    with pytest.raises(ValueError, match=message):
        tournament_spec(bots, k, dup, {})


def _fit_of(games: dict[str, int], rating: dict[str, float], pm: float = 30.0) -> Fit:
    from sueca.arena.ratings.fit import ELO
    return Fit({b: 1500.0 + r for b, r in rating.items()}, {b: pm for b in rating}, games,
               {b: r / ELO for b, r in rating.items()}, 1500.0)


def test_pick_pairs_puts_provisional_bots_first_and_avoids_certain_pairings():
    fit = _fit_of({"veteran": 90, "newbie": 0, "close": 40, "far": 40},
                  {"veteran": 0.0, "newbie": 0.0, "close": 10.0, "far": 900.0})
    free = {b: 4 for b in fit.games}
    firsts = Counter(pick_pairs(free, fit, 1, rng=random.Random(i))[0][0] for i in range(50))
    assert firsts == {"newbie": 50}                       # provisional: it plays first
    rng = random.Random(1)
    opponents = Counter(pick_pairs({"veteran": 4, "close": 4, "far": 4}, fit, 1, rng=rng)[0]
                        for _ in range(400))
    certain = sum(v for k, v in opponents.items() if "far" in k)
    assert 0 < certain < 100                 # 900 Elo apart: rarely (uniform: 267), not never
    assert pick_pairs({"a": 1, "b": 4}, None, 3) == []   # a 2-bot match takes two seats each
    many = pick_pairs({"a": 4, "b": 4, "c": 4}, None, 10, rng=random.Random(2))
    used = Counter(x for p in many for x in p)
    assert all(used[b] * 2 <= 4 for b in used)           # never more seats than are free


def test_in_flight_matches_count_towards_the_provisional_phase():
    fit = _fit_of({"old": 100, "other": 100, "new": 25}, {"old": 0.0, "other": 0.0, "new": 0.0})
    free = {b: 20 for b in fit.games}
    # 25 rated games + 5 in flight = 30: no longer provisional, no priority
    firsts = Counter(pick_pairs(free, fit, 1, rng=random.Random(i), inflight={"new": 5})[0][0]
                     for i in range(60))
    assert firsts["new"] < 40
    firsts = Counter(pick_pairs(free, fit, 1, rng=random.Random(i))[0][0] for i in range(60))
    assert firsts == {"new": 60}


def test_a_newcomer_is_capped_not_starved_nor_taking_over():
    from sueca.arena.schedule import NEWCOMER_SHARE
    from sueca.arena.simulate import newcomer_share
    for established in (3, 5):
        shares = newcomer_share(established, random.Random(established), before=200)
        assert 0.2 <= shares["newcomer"] <= NEWCOMER_SHARE <= 0.4, shares
    # fewest-games-first would give it 100% of the next 100 matches


def test_two_ladder_schedulers_never_exceed_the_target(store):
    reg = store.bots
    for b in ("a", "b", "c", "d"):
        reg.add(b)
    sent: list[str] = []
    lock = threading.Lock()

    def enqueue(mid: str) -> None:
        with lock:
            sent.append(mid)

    ladders = [Ladder(store, 3, lambda: {b: 100 for b in "abcd"}, enqueue,
                      rng=random.Random(i)) for i in range(2)]
    barrier = threading.Barrier(2)

    def run(ladder: Ladder) -> None:
        for _ in range(20):
            barrier.wait()
            ladder.tick()

    threads = [threading.Thread(target=run, args=(lad,)) for lad in ladders]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(sent) == 3 and len(set(sent)) == 3        # nothing finished: still just 3
    assert len(ladders[0].running()) == 3
    for mid in sent[:2]:                                 # two finish: two more are scheduled
        store.record_result(mid, {"match_id": mid, "end": "normal", "winner": 0,
                                  "seats": store.match(mid)["spec"]["bots"],
                                  "game_points": [4, 0]})
    new = ladders[1].tick() or ladders[0].tick()
    assert len(new) == 2 and len(ladders[0].running()) == 3
    for mid in sent + new:
        spec = store.match(mid)["spec"]
        assert len(set(spec["bots"])) == 2 and spec["bots"][0] == spec["bots"][2]


def test_ladder_only_pairs_registered_connected_bots(store):
    store.bots.add("a")
    store.bots.add("b")
    sent: list[str] = []
    ladder = Ladder(store, 5, lambda: {"a": 4, "b": 4, "intruder": 4}, sent.append,
                    rng=random.Random(3))
    ladder.tick()
    bots = {b for mid in sent for b in store.match(mid)["spec"]["bots"]}
    assert bots == {"a", "b"} and len(sent) == 2         # 4 free seats each: two matches


def test_place_picks_a_replica_with_a_free_seat_for_every_seat():
    from sueca.arena.match_job import Transient, place
    replicas = {
        "r1:1": [{"bot": "a", "free": 4}],                                # b not connected
        "r2:1": [{"bot": "a", "free": 1}, {"bot": "b", "free": 4}],       # a sits twice: 1 < 2
        "r3:1": [{"bot": "a", "free": 2}, {"bot": "b", "free": 2}],
        "r4:1": [{"bot": "a", "free": 6}, {"bot": "b", "free": 5}],       # least loaded
    }

    def list_bots(addr):
        if addr == "down:1":
            raise ConnectionError("refused")
        return replicas[addr]

    assert place(["a", "b", "a", "b"], ["down:1", "r1:1", "r2:1", "r3:1"], list_bots) == "r3:1"
    assert place(["a", "b", "a", "b"], list(replicas), list_bots) == "r4:1"
    with pytest.raises(Transient) as err:
        place(["a", "b", "a", "b"], ["down:1", "r1:1", "r2:1"], list_bots, wait=0.2)
    msg = str(err.value)
    assert "down:1: unreachable" in msg and "r1:1: b not connected" in msg
    assert "r2:1: no free capacity for a" in msg


def _record(store, mid, winner=0):
    store.record_result(mid, {"match_id": mid, "end": "normal", "winner": winner,
                              "seats": store.match(mid)["spec"]["bots"], "game_points": [4, 0]})


def test_a_recorded_result_wakes_the_ladder_at_once(store):
    import time

    for b in ("a", "b", "c"):
        store.bots.add(b)
    sent: list[str] = []
    ladder = Ladder(store, 2, lambda: {b: 100 for b in "abc"}, sent.append,
                    rng=random.Random(4))
    assert len(ladder.tick()) == 2
    assert ladder.wait(0.2) is False                      # nothing finished: the fallback
    timer = threading.Timer(0.3, _record, args=(store, sent[0]))
    timer.start()
    t0 = time.monotonic()
    assert ladder.wait(60.0) is True                      # woken by the result, not the timeout
    assert time.monotonic() - t0 < 30.0
    timer.join()
    new = ladder.tick()
    assert len(new) == 1 and len(ladder.running()) == 2   # the slot was refilled
    assert [tuple(sorted(p)) for p in ladder.recent()] == [
        tuple(sorted(store.match(m)["spec"]["bots"][:2])) for m in sent]   # oldest first


def test_the_ladder_counts_its_in_flight_matches_for_a_newcomer(store):
    """A newcomer with no rated game: in-flight matches count towards its provisional phase and
    its share, so one tick does not hand it every slot."""
    reg = store.bots
    for b in ("a", "b", "c", "d", "new"):
        reg.add(b)
    for i in range(40):                                    # an established league of four
        mid = f"old{i}"
        x, y = ["a", "b", "c", "d"][i % 4], ["a", "b", "c", "d"][(i + 1) % 4]
        store.create_match(mid, {"bots": [x, y, x, y]})
        _record(store, mid, i % 2)
    for i in range(60):
        mid = f"older{i}"
        x, y = ["a", "b", "c", "d"][i % 4], ["a", "b", "c", "d"][(i + 2) % 4]
        store.create_match(mid, {"bots": [x, y, x, y]})
        _record(store, mid, i % 2)
    sent: list[str] = []
    ladder = Ladder(store, 10, lambda: {b: 100 for b in ("a", "b", "c", "d", "new")},
                    sent.append, rng=random.Random(5))
    ladder.tick()
    assert len(sent) == 10
    with_new = sum(1 for m in sent if "new" in store.match(m)["spec"]["bots"])
    assert 1 <= with_new <= 3                             # 30% of the last 10, not all 10
