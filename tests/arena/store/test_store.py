"""The records against a real Redis: exactly-once results, guarded status changes, tournaments,
compressed replays."""

from __future__ import annotations

import threading

import pytest

from sueca.arena.records import NoteKind
from sueca.arena.schedule import round_robin, same_tournament, tournament_spec
from sueca.arena.store import (
    DONE,
    FAILED,
    QUEUED,
    RUNNING,
    StoreUnavailable,
    TournamentConflict,
    connect,
)


def _result(mid: str, winner: int = 0, seats=("a", "b", "a", "b"), **kw):
    r = {"match_id": mid, "seats": list(seats), "end": "normal", "winner": winner,
         "game_points": [4, 1] if winner == 0 else [1, 4], "fault_seat": None, "fault_bot": None}
    r.update(kw)
    return r


def test_record_once_even_when_written_twice(store):
    store.create_match("m1", {"bots": ["a", "b", "a", "b"]})
    new, first = store.record_result("m1", _result("m1"), {"format": "sueca-replay/1", "x": 1})
    again, second = store.record_result("m1", _result("m1", winner=1), {"format": "other"})
    assert (new, again) == (True, False)
    assert first == second
    assert store.results_count() == 1
    assert store.result_of("m1")["winner"] == 0
    assert store.replay("m1") == {"format": "sueca-replay/1", "x": 1}
    assert store.match("m1")["status"] == DONE


def test_racing_writers_record_once(store):
    store.create_match("race", {})
    outcomes = []
    barrier = threading.Barrier(8)

    def write(i: int) -> None:
        barrier.wait()
        outcomes.append(store.record_result("race", _result("race", winner=i % 2))[0])

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == [False] * 7 + [True]
    assert store.results_count() == 1


def test_status_cannot_leave_done(store):
    store.create_match("m2", {})
    assert store.start_attempt("m2", referee="ref:1")[0] == 1
    assert store.match("m2")["status"] == RUNNING
    store.record_result("m2", _result("m2"))
    assert store.start_attempt("m2") == (-1, None)          # a late duplicate sees it is recorded
    assert store.record_failure("m2", "late failure") is False
    assert store.set_status("m2", RUNNING) is False
    assert store.match("m2")["status"] == DONE


def test_claim_is_exclusive_and_failed_matches_can_be_reclaimed(store):
    store.create_match("m3", {})
    assert store.claim("m3") is True
    assert store.claim("m3") is False                # queued: nobody else queues it
    assert store.match("m3")["status"] == QUEUED
    store.record_failure("m3", "referee unavailable after 5 attempts")
    m = store.match("m3")
    assert (m["status"], m["error"]) == (FAILED, "referee unavailable after 5 attempts")
    assert store.claim("m3") is True                 # a re-run tries a failed match again
    assert store.claim("m3", stale_after=-1.0) is True  # a queued match nobody touched: stale
    store.record_result("m3", _result("m3"))
    assert store.claim("m3", stale_after=-1.0) is False  # never a recorded one


def test_create_match_never_overwrites(store):
    assert store.create_match("m4", {"v": 1}) is True
    store.record_result("m4", _result("m4"))
    assert store.create_match("m4", {"v": 2}) is False
    assert store.match("m4")["spec"] == {"v": 1}
    assert store.match("m4")["status"] == DONE


def test_tournament_is_idempotent_and_conflicts_are_explained(store):
    spec = tournament_spec(["a", "b", "c"], 2, True, {})
    created, stored = store.create_tournament("T", spec, round_robin, same_tournament)
    assert created and stored == spec
    mids = store.tournament_matches("T")
    assert len(mids) == 3 * 2
    store.record_result(mids[0], _result(mids[0]))
    again = tournament_spec(["a", "b", "c"], 2, True, {})  # same asked spec, new secret
    created2, stored2 = store.create_tournament("T", again, round_robin, same_tournament)
    assert not created2 and stored2["secret"] == spec["secret"]
    assert store.tournament_matches("T") == mids
    assert store.match(mids[0])["status"] == DONE
    assert store.progress("T")[DONE] == 1
    other = tournament_spec(["a", "b", "c"], 4, True, {})
    with pytest.raises(TournamentConflict, match="matches_per_pair: 2 stored, 4 asked"):
        store.create_tournament("T", other, round_robin, same_tournament)


def test_a_tournament_stamps_the_versions_its_bots_play(store):
    for b in ("a", "b", "c"):
        store.bots.add(b)
    store.versions.bump("b", by="ann")
    store.create_tournament("V", tournament_spec(["a", "b", "c"], 1, False, {}), round_robin)
    stamped = {m: store.match(m).get("versions") for m in store.tournament_matches("V")}
    for mid, versions in stamped.items():
        bots = set(store.match(mid)["spec"]["bots"])
        assert versions == ({"b": 2} if "b" in bots else None), (mid, versions)


def test_replay_is_compressed(store):
    rec = {"format": "sueca-replay/1", "deals": [{"deck": ["AS"] * 40}] * 8}
    store.create_match("m5", {})
    store.record_result("m5", _result("m5"), rec)
    raw = store.r.get(store.keys.replay("m5"))
    import json
    assert len(raw) < len(json.dumps(rec)) / 5
    assert store.replay("m5") == rec


def test_results_log_reads_in_order_across_batches(store):
    for i in range(7):
        store.create_match(f"r{i}", {})
        store.record_result(f"r{i}", _result(f"r{i}"))
    got = [r["match_id"] for _, r in store.results(batch=3)]
    assert got == [f"r{i}" for i in range(7)]
    first_id = next(store.results())[0]
    assert [r["match_id"] for _, r in store.results(after=first_id)] == got[1:]


def test_unreachable_redis_is_a_clear_error():
    from sueca.arena.redisproc import free_port
    with pytest.raises(StoreUnavailable, match="cannot reach Redis at redis://127.0.0.1"):
        connect(f"redis://127.0.0.1:{free_port()}/0", timeout=0.5)
    with pytest.raises(StoreUnavailable, match="no Redis URL"):
        connect("")


def test_locks_are_exclusive_and_released_by_owner_only(store):
    token = store.lock("sched", ttl=5)
    assert token and store.lock("sched", ttl=5) is None
    assert store.unlock("sched", "not-the-token") is False
    assert store.unlock("sched", token) is True
    assert store.lock("sched", ttl=5)


def test_read_model_queries_page_and_batch_what_the_web_and_the_ladder_show(store):
    """The reads the web, the ladder and the tournaments make through the store: pages of ids,
    batches of fields and results, the results log's tail, the ladder's notes."""
    spec = tournament_spec(["a", "b"], 2, True, {})
    store.create_tournament("P", spec, round_robin)
    first, second = store.tournament_matches("P")
    assert store.tournament_page("P", 1, 5) == (2, [second])
    assert store.match_page(0, 5).total == 2 and sorted(store.match_page(0, 5).ids) == [first, second]
    assert store.match_count() == 2
    assert store.tournaments_of([first, "gone"]) == ["P", None]
    pair = store.match(first)["pair"]
    assert store.pair_statuses([first, "gone"]) == [(pair, "pending"), (None, None)]
    store.record_failure(second, "no referee")
    assert store.errors_of([second]) == [("failed", "no referee", NoteKind.FAILED)]

    assert store.last_result() is None
    _, eid = store.record_result(first, _result(first))
    assert store.last_result() == eid
    assert store.entry_ids([first, second]) == [eid, None]
    assert store.results_of([first, second]) == [store.result_of(first), None]
    assert store.wait_results("0-0", 0.01) == [(eid, first)]
    assert store.wait_results(eid, 0.01) == []
    assert store.count_results(None, eid) == 1 and store.recorded_in([first, second], eid) == 1

    store.add_ladder_match("L1", "a", "b", keep=2)
    store.add_ladder_match("L2", "b", "c", keep=2)
    store.add_ladder_match("L3", "c", "a", keep=2)
    assert store.ladder_running() == ["L1", "L2", "L3"]
    assert store.ladder_recent(10) == [("c", "a"), ("b", "c")]      # newest first, two kept
    store.drop_ladder_running(["L1", "L3"])
    assert store.ladder_running() == ["L2"]
    assert store.key_sizes([store.keys.results(), store.keys.lock("none")])[1] == 0


def test_referee_heartbeats_say_where_each_bot_has_seats(store):
    store.publish_referee("r1:1", {"a": 2, "b": 0}, ttl=10)
    store.publish_referee("r2:1", {"b": 3}, ttl=10)
    assert sorted(store.referees()) == ["r1:1", "r2:1"]
    assert store.bots_on(["r1:1", "r2:1"]) == {"a", "b"}
    assert store.free_seats(["r1:1", "r2:1"], "a") == [2, None]
    store.publish_referee("r1:1", {}, ttl=10)                       # its bots left
    assert store.bots_on(["r1:1"]) == set()
    store.withdraw_referee("r2:1")
    assert store.referees() == ["r1:1"] and store.free_seats(["r2:1"], "b") == [None]


def test_bots_registered_without_a_token_are_listed_but_never_verified(store):
    store.bots.add_unverifiable(["seeded1", "seeded2"])
    assert store.bots.names() == ["seeded1", "seeded2"] and store.bots.exists("seeded1")
    assert not store.bots.verify("seeded1", "seeded1.whatever")
    assert not store.bots.verify("seeded1", "-")


def test_a_bad_bot_name_is_quoted_capped_and_escaped() -> None:
    """``bots add NAME`` with a 3,000-character or a multi-line name: one short line quoting it."""
    from sueca.arena.store.bots import BotRegistryError, check_name
    for name in ("x" * 3000, "evil\nERROR forged line"):
        with pytest.raises(BotRegistryError) as err:
            check_name(name)
        message = str(err.value)
        assert message.startswith("bad bot name ") and "\n" not in message
        assert len(message) < 200, len(message)
    assert "(3000 long)" in str(pytest.raises(BotRegistryError, check_name, "x" * 3000).value)


def test_a_placed_attempt_names_its_replica_and_only_the_lease_holder_may(store):
    store.create_match("pl1", {})
    store.start_attempt("pl1", owner="w/1/a")
    assert store.match("pl1")["referee"] == ""
    assert store.placed("pl1", "w/1/a", "10.0.0.2:50052") is True
    assert store.match("pl1")["referee"] == "10.0.0.2:50052"
    assert store.placed("pl1", "w/2/b", "10.0.0.3:50052") is False  # not its attempt
    assert store.match("pl1")["referee"] == "10.0.0.2:50052"
    store.release_lease("pl1", "w/1/a")  # that attempt died; the next one starts afresh
    store.start_attempt("pl1", owner="w/2/b")
    assert store.match("pl1")["referee"] == ""
    assert store.placed("pl1", "w/2/b", "10.0.0.3:50052") is True
    store.record_result("pl1", {**_result("pl1"), "referee": "10.0.0.3:50052"})
    assert store.placed("pl1", "w/2/b", "10.0.0.9:50052") is False  # recorded: settled
    recorded = list(store.results())[-1][1]
    assert store.match("pl1")["referee"] == "10.0.0.3:50052" == recorded["referee"]
