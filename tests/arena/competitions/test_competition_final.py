"""The final's driver on a real Redis (the session's, a fresh prefix): who is seeded and how,
the tournament it makes, and closing refused until it is over. Its matches are played by real
processes in tests/arena/competitions/test_competition_season.py."""

from __future__ import annotations

import pytest

from sueca.arena import final
from sueca.arena.lifecycle import CompetitionError, State, new_spec
from sueca.arena.seeds import derive_seed
from sueca.arena.tournaments import schedule_of


def _result(mid: str, seats: list[str], winner: int, **extra: object) -> dict:
    return {"match_id": mid, "tournament": "", "pair": "", "seats": seats, "seed": "1",
            "end": "normal", "winner": winner, "game_points": [4, 0] if winner == 0 else [0, 4],
            "fault_seat": None, "fault_bot": None, "deals": 3, "referee": "r", "replicas": 1,
            "variant": {}, "time": 1.0, "rated": True, **extra}


def _season(store, top: int | None = 3) -> None:
    for b in ("ann", "bob", "cat", "dan"):
        store.bots.add(b)
    store.competitions.create(new_spec("cup", final={"format": "round-robin", "top": top,
                                                     "best_of": 2}), by="org")
    for b in ("dan", "ann", "bob", "cat"):
        store.competitions.enter("cup", b, by="org")
    store.competitions.move("cup", State.OPEN, by="org")
    # the competition's ladder: cat beats everyone, ann beats bob and dan, bob beats dan
    n = 0
    for winner, loser, times in (("cat", "ann", 3), ("cat", "bob", 3), ("cat", "dan", 3),
                                 ("ann", "bob", 3), ("ann", "dan", 3), ("bob", "dan", 3)):
        for _ in range(times):
            n += 1
            store.record_result(f"cup-l{n}", _result(f"cup-l{n}", [winner, loser] * 2, 0,
                                                     competition="cup"))
    store.competitions.move("cup", State.FROZEN, by="org")


def test_the_top_entrants_are_seeded_by_the_competitions_rating(store) -> None:
    _season(store)
    assert final.seeding(store, "cup") == ["cat", "ann", "bob"]
    store.competitions.update_entry("cup", "ann", version=1)
    spec = final.final_spec(store, "cup")
    assert spec["bots"] == ["cat", "ann", "bob"] and spec["kind"] == "round-robin"
    assert spec["duplicate"] and spec["matches_per_pair"] == 4  # best of 2 duplicate pairs
    assert spec["competition"] == "cup"
    assert spec["versions"] == {"cat": 1, "ann": 1, "bob": 1}
    # the secret comes from the seed key: revealed at close, it recomputes every seed
    assert spec["secret"] == final.final_secret(store.competitions.secret("cup"), "cup-final")
    assert spec["secret"] != store.competitions.secret("cup")


def test_a_final_starts_only_in_its_state_and_close_waits_for_it(store) -> None:
    _season(store, top=None)
    with pytest.raises(CompetitionError, match="'cup' is frozen, not in its final"):
        final.start(store, "cup")
    store.competitions.move("cup", State.FINAL, by="org")
    with pytest.raises(CompetitionError, match="its final has not started: `sueca-arena "
                                               "competition final cup` starts it"):
        final.check_closable(store, "cup")
    # the tournament as start() stores it (start also queues it, which needs a worker)
    tid = final.final_id("cup")
    store.competitions.update_entry("cup", "bob", version=2)  # as the freeze fixed it
    store.create_tournament(tid, final.final_spec(store, "cup"), schedule_of(store))
    mids = store.tournament_matches(tid)
    assert len(mids) == 6 * 4  # every pair of the four, two duplicate pairs each
    for mid in mids:  # the final's matches say whose they are and which versions play
        m = store.match(mid)
        assert m["competition"] == "cup"
        assert m.get("versions") == ({"bob": 2} if "bob" in m["spec"]["bots"] else None), m
    assert m["spec"]["seed"] != derive_seed(store.competitions.secret("cup"), mids[0])
    with pytest.raises(CompetitionError, match=r"its final is not over \(0 of 24 matches"):
        final.check_closable(store, "cup")
    p = final.progress(store, "cup")
    # bob plays his version 2, which has no rated match yet: seeded after the rated ones
    assert p["seeds"] == ["cat", "ann", "dan", "bob"] and not p["done"]
    for mid in mids:
        seats = store.match(mid)["spec"]["bots"]
        store.record_result(mid, _result(mid, seats, 0, tournament=tid, competition="cup"))
        store.set_status(mid, "done")
    assert final.progress(store, "cup")["done"]
    final.check_closable(store, "cup")  # nothing raised: it may close


def test_a_competition_without_a_final_closes_without_one(store) -> None:
    store.bots.add("ann")
    store.competitions.create(new_spec("open-cup"), by="org")
    final.check_closable(store, "open-cup")
    with pytest.raises(CompetitionError, match="has no final"):
        final.final_spec(store, "open-cup")


def test_an_export_withholds_a_duplicate_half_whose_twin_is_not_recorded(store) -> None:
    """Its seed and replay would show the decks its twin is still to be dealt."""
    from sueca.arena.export import WITHHELD, check_seeds, export_lines
    _season(store)
    store.record_result("cup-p0a", _result("cup-p0a", ["ann", "bob"] * 2, 0, pair="cup/p0",
                                           competition="cup", seed="77"))
    lines = list(export_lines(store, "cup"))
    half = next(x for x in lines[1:] if x["match_id"] == "cup-p0a")
    assert half["format"] == "sueca-result/1" and half["withheld"] == WITHHELD
    assert "seed" not in half["result"] and "deals" not in half
    header = {**lines[0], "seed_key": store.competitions.secret("cup")}
    wrong = {w["match_id"]: w["problem"] for w in check_seeds(header, lines[1:])["wrong"]}
    assert "export the closed competition again" in wrong["cup-p0a"]
    store.record_result("cup-p0b", _result("cup-p0b", ["bob", "ann"] * 2, 1, pair="cup/p0",
                                           competition="cup", seed="77"))
    both = [x for x in list(export_lines(store, "cup"))[1:] if x["match_id"].startswith("cup-p0")]
    assert [x.get("withheld") for x in both] == [None, None]
    assert all(x["result"]["seed"] == "77" for x in both)
