"""Fair play's records against a real Redis: outcomes written with the result, suspensions
recorded, sticky and lifted, the lists rebuilt from the log, the challenge cap under races,
and an unrated challenge that moves no rating."""

from __future__ import annotations

import threading

import pytest

from sueca.arena.fairplay import CHALLENGE, MAX_WINDOW, Rule
from sueca.arena.match_job import outcome_to_result
from sueca.arena.settings import current, replace, use
from sueca.arena.store.fairplay import challenge_cap, suspended
from sueca.arena.store.ratings import catch_up, fit_of_record, load, load_matchups, rebuild


@pytest.fixture(autouse=True)
def rule_3_of_5():
    use(replace(current(), suspend_after=Rule(3, 5)))
    yield
    use(None)


def record(store, mid, seats=("a", "b", "a", "b"), *, end="normal", fault=None, winner=0,
           tournament="ladder", versions=None):
    spec = {"match_id": mid, "bots": list(seats), "seed": "1", "first_dealer": 0, "variant": {}}
    store.create_match(mid, spec, tournament=tournament, pair="", versions=versions)
    match = store.match(mid)
    out = {"match_id": mid, "end": end, "winner": winner, "game_points": [4, 0],
           "fault_seat": None if fault is None else list(seats).index(fault),
           "fault_bot": fault, "fault_detail": None, "replay": None, "referee": "local"}
    result = outcome_to_result(match, out)
    return store.record_result(mid, result)


def test_the_outcomes_are_written_with_the_result(store):
    record(store, "m1", end="bot_error", fault="a", winner=1)
    record(store, "m2", end="renuncia", fault="b")  # a renúncia is no fault here
    record(store, "m2", end="timeout", fault="a")   # a second record of m2: nothing written
    state = store.fairplay.bots_state(["a", "b"])
    assert [(o["match"], o["fault"]) for o in state["a"].outcomes] == [("m2", ""),
                                                                         ("m1", "bot_error")]
    assert [(o["match"], o["fault"]) for o in state["b"].outcomes] == [("m2", ""), ("m1", "")]
    assert state["a"].outcomes[1]["entry"] == store.entry_ids(["m1"])[0]


def test_the_list_is_capped(store):
    for i in range(MAX_WINDOW + 5):
        record(store, f"c{i}")
    got = store.fairplay.bots_state(["a"])["a"].outcomes
    assert len(got) == MAX_WINDOW and got[0]["match"] == f"c{MAX_WINDOW + 4}"


def test_suspended_recorded_sticky_and_lifted(store):
    for name in ("a", "b"):
        store.bots.add(name)
    record(store, "ok1")
    for i in range(2):
        record(store, f"f{i}", end="bot_error", fault="a", winner=1)
    assert suspended(store, ["a", "b"]) == {}  # two of five: not yet
    record(store, "f2", end="disconnect", fault="a", winner=1)
    seen = suspended(store, ["a", "b"])
    assert list(seen) == ["a"] and not seen["a"]["recorded"]  # found on read, not stored
    assert store.fairplay.bots_state(["a"])["a"].suspensions == {}
    held = suspended(store, ["a", "b"], record=True)["a"]
    assert held["recorded"] and held["at"] and held["rule"] == "3/5" and held["version"] == 1
    assert [(f["match"], f["end"]) for f in held["faults"]] == [
        ("f2", "disconnect"), ("f1", "bot_error"), ("f0", "bot_error")]
    # good results slide the faults out of the window: the recorded suspension holds
    for i in range(5):
        record(store, f"later{i}")
    assert suspended(store, ["a"])["a"]["at"] == held["at"]
    lift = store.fairplay.lift("a", by="ops")
    assert lift["by"] == "ops" and lift["after"] == store.last_result()
    assert suspended(store, ["a", "b"], record=True) == {}
    # after the lift only new faults count: three more suspend it again
    for i in range(3):
        record(store, f"g{i}", end="timeout", fault="a", winner=1)
    again = suspended(store, ["a"], record=True)["a"]
    assert [f["match"] for f in again["faults"]] == ["g2", "g1", "g0"]
    assert again["at"] >= held["at"]


def test_a_new_version_comes_back(store):
    store.bots.add("a")
    store.bots.add("b")
    for i in range(3):
        record(store, f"f{i}", end="bot_error", fault="a", winner=1)
    assert suspended(store, ["a"], record=True)["a"]["version"] == 1
    assert store.versions.bump("a", by="owner") == 2
    assert suspended(store, ["a", "b"], record=True) == {}  # checked on read: no coupling
    # the new version's own faults count, from nothing
    for i in range(2):
        record(store, f"v2f{i}", end="timeout", fault="a", winner=1, versions={"a": 2, "b": 1})
    assert suspended(store, ["a"]) == {}
    record(store, "v2f2", end="timeout", fault="a", winner=1, versions={"a": 2, "b": 1})
    held = suspended(store, ["a"], record=True)["a"]
    assert held["version"] == 2 and [f["match"] for f in held["faults"]] == ["v2f2", "v2f1",
                                                                           "v2f0"]


def test_a_competition_has_its_own_rule(store):
    from sueca.arena.lifecycle import new_spec
    store.bots.add("a")
    store.competitions.create(new_spec("spring", fair_play={"faults": 1, "of_last": 2,
                                                             "challenges_per_hour": 1}), by="t")
    store.competitions.enter("spring", "a", by="t")
    record(store, "f0", end="bot_error", fault="a", winner=1)
    assert suspended(store, ["a"]) == {}  # 1 of 1 is not the arena's 3 of 5
    assert suspended(store, ["a"], competition="spring", record=True)["a"]["rule"] == "1/2"
    assert store.fairplay.bots_state(["a"])["a"].suspensions.keys() == {"spring"}
    assert challenge_cap(store, "a") == 1 and challenge_cap(store, "b") == current().challenges_per_hour


def test_the_rule_off_suspends_nobody(store):
    for i in range(5):
        record(store, f"f{i}", end="bot_error", fault="a", winner=1)
    assert list(suspended(store, ["a"], record=True)) == ["a"]
    use(replace(current(), suspend_after=None))
    assert suspended(store, ["a"]) == {}


def test_rebuild_recent_from_the_log(store):
    for name in ("a", "b", "c"):
        store.bots.add(name)
    for i in range(6):
        record(store, f"r{i}", seats=("a", "b", "a", "b") if i % 2 else ("c", "a", "c", "a"),
               end="timeout" if i % 3 == 0 else "normal", fault="a" if i % 3 == 0 else None)
    live = store.fairplay.bots_state(["a", "b", "c"])
    assert store.fairplay.rebuild_recent(write=False) == {"bots": 3, "differed": 0}
    store.r.delete(store.keys.fairplay_recent("a"))
    store.r.lpush(store.keys.fairplay_recent("b"), '{"e":"1-0","m":"junk","f":"timeout","v":1}')
    assert store.fairplay.rebuild_recent(write=False) == {"bots": 3, "differed": 2}
    assert store.fairplay.rebuild_recent() == {"bots": 3, "differed": 2}
    assert store.fairplay.bots_state(["a", "b", "c"]) == live


def test_the_challenge_cap_holds_under_a_race(store):
    got: list[float | None] = []
    barrier = threading.Barrier(8)

    def ask(i: int) -> None:
        barrier.wait()
        got.append(store.fairplay.ask_challenge("a", f"ch{i}", per_hour=3))

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(g is None for g in got) == [False] * 5 + [True] * 3
    assert store.r.zcard(store.keys.fairplay_challenges("a")) == 3
    store.fairplay.forget_challenge("a", "ch0")
    store.fairplay.forget_challenge("a", "ch1")  # (one of them was refused: zrem is a no-op)
    assert store.r.zcard(store.keys.fairplay_challenges("a")) >= 1


def test_an_unrated_challenge_moves_no_rating(store):
    """Live Elo and OpenSkill, games, the rating of record and a rebuild: unchanged by
    challenge results. The health totals (matches, faults) count them: they are the bot's."""
    for i in range(6):
        record(store, f"l{i}", winner=i % 3 and 1)
    catch_up(store)
    live, fit, counts = load(store), fit_of_record(store), load_matchups(store)
    games = store.bot_stats(["a"])["a"]["games"]
    for i in range(4):
        record(store, f"ch{i}", tournament=CHALLENGE, winner=0, seats=("a", "b", "a", "b"))
    res = store.result_of("ch0")
    assert res["rated"] is False and res["tournament"] == CHALLENGE
    catch_up(store)
    assert load(store) == live
    assert load_matchups(store) == counts  # what the rating of record is fit from
    after = fit_of_record(store)  # refit from a warm start: equal but for the solver's last bit
    assert after.games == fit.games
    assert after.rating == pytest.approx(fit.rating, abs=1e-6)
    report = rebuild(store, write=False)
    assert report["max_diff"] == 0.0 and report["ratings"] == live
    assert store.bot_stats(["a"])["a"]["games"] == games + 4


def test_the_ladder_leaves_a_suspended_bot_out(store):
    """Over 30 ticks of the real Ladder (its matches recorded as they are made), a suspended
    bot is never paired and is recorded suspended at the first tick; the others keep playing.
    A tournament naming it is refused before anything is stored."""
    import random

    from sueca.arena.schedule import Ladder
    from sueca.arena.tournaments import TournamentError, new_spec, prepare_tournament
    for b in ("a", "b", "c"):
        store.bots.add(b)
    for i in range(3):
        record(store, f"f{i}", seats=("c", "a", "c", "a"), end="timeout", fault="c", winner=1)
    sent: list[str] = []
    ladder = Ladder(store, 2, lambda: {b: 100 for b in "abc"}, sent.append, rng=random.Random(5))
    for _ in range(30):
        for mid in ladder.tick():
            record_existing(store, mid)
    assert len(sent) >= 30
    assert all("c" not in store.match(mid)["spec"]["bots"] for mid in sent)
    assert store.fairplay.bots_state(["c"])["c"].suspensions["ladder"]["recorded"]
    with pytest.raises(TournamentError, match="bot 'c' is suspended: faulted in 3"):
        prepare_tournament(store, new_spec(["a", "c"], 2), tid="t-c")
    assert store.tournament("t-c") is None
    store.fairplay.lift("c", by="ops")
    seen = set()
    for _ in range(30):
        for mid in ladder.tick():
            seen.update(store.match(mid)["spec"]["bots"])
            record_existing(store, mid)
    assert "c" in seen  # back in the ladder after the lift


def record_existing(store, mid):
    m = store.match(mid)
    out = {"match_id": mid, "end": "normal", "winner": 0, "game_points": [4, 0],
           "fault_seat": None, "fault_bot": None, "fault_detail": None, "replay": None,
           "referee": "local"}
    store.record_result(mid, outcome_to_result(m, out))


def test_rebuild_recent_stops_once_every_registered_bot_is_full(store):
    """A removed bot met only in part before the registered ones' lists are full is left as it
    is: a rebuild --check must not call its live list wrong."""
    for name in ("a", "b"):
        store.bots.add(name)
    record(store, "gone0", seats=("old", "a", "old", "a"))
    record(store, "gone1", seats=("old", "b", "old", "b"))
    for i in range(MAX_WINDOW):
        record(store, f"n{i}")
    record(store, "gone2", seats=("old", "a", "old", "a"))  # newest: met first, then the stop
    assert store.fairplay.rebuild_recent(write=False) == {"bots": 2, "differed": 0}
    assert len(store.fairplay.bots_state(["old"])["old"].outcomes) == 3
