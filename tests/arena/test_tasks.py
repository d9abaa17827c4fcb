"""Celery tasks with real worker processes and a real Redis (local runner: example bots played
in-process by the worker, so these tests need no referee; test_league_cli.py covers the referee).

What is proven here: a tournament records exactly its scheduled matches; a re-run finishes what
is missing without replaying anything; a duplicated task records once; a worker killed mid-match
(a pool process, or the whole worker) leads to the match being run again and recorded once;
permanent errors fail at once, transient ones retry with back-off and then fail with the reason.
"""

from __future__ import annotations

import time

import pytest
from kits.wait import wait_for

from sueca.arena.store.ratings import catch_up, load, rebuild
from sueca.arena.tasks import enqueue, run_match
from sueca.arena.tournaments import enqueue_missing, new_spec, prepare_tournament, run_tournament
from sueca.engine import Variant, replay

pytestmark = pytest.mark.slow




def _results_for(store, mids):
    want = set(mids)
    return [r for _, r in store.results() if r["match_id"] in want]


def test_tournament_records_exactly_the_scheduled_matches(league, module_worker):
    store = league.store
    report = run_tournament(store, new_spec(["random", "heuristic", "reckless"], 4, duplicate=True),
                            tid="tt-full", quiet=True, timeout=60)
    mids = store.tournament_matches("tt-full")
    assert len(mids) == 3 * 4 and report["recorded"] == 12 and report["failed"] == []
    logged = _results_for(store, mids)
    assert sorted(r["match_id"] for r in logged) == sorted(mids)       # each exactly once
    for mid in mids:
        m = store.match(mid)
        assert (m["status"], m["attempts"]) == ("done", 1)
        rec = store.replay(mid)
        assert replay.verify(rec) == []                                 # a real, valid replay
        assert rec["seats"] == m["spec"]["bots"]
    # duplicate halves share their decks, teams swapped
    a, b = (store.replay(m) for m in mids[:2])
    assert a["deals"][0]["deck"] == b["deals"][0]["deck"] and a["seats"] == b["seats"][1:] + b["seats"][:1]
    table = {r["bot"]: r for r in report["standings"]}
    assert sum(r["units"] for r in table.values()) == 2 * 6            # 6 pairs, two sides each
    assert table["heuristic"]["points"] >= table["reckless"]["points"]
    catch_up(store)
    assert rebuild(store, write=False)["max_diff"] == 0.0


def test_rerun_finishes_what_is_missing_and_never_replays(league, module_worker):
    store = league.store
    tid, _ = prepare_tournament(store, new_spec(["random", "heuristic"], 6,
                                         variant=Variant.parse(["target=8"])), tid="tt-rerun")
    mids = store.tournament_matches(tid)
    first = mids[:2]
    for mid in first:
        assert store.claim(mid)
    enqueue(first)
    wait_for(lambda: all(s == "done" for s in store.statuses(first)), what="first two matches")
    entries = {mid: store.r.get(store.keys.recorded(mid)) for mid in first}
    report = run_tournament(store, new_spec(["random", "heuristic"], 6,
                                           variant=Variant.parse(["target=8"])), tid=tid,
                            quiet=True, timeout=60)
    assert report["recorded"] == 6
    assert {mid: store.r.get(store.keys.recorded(mid)) for mid in first} == entries
    assert [store.match(m)["attempts"] for m in mids] == [1] * 6
    assert len(_results_for(store, mids)) == 6
    assert enqueue_missing(store, tid) == 0                             # nothing left to run
    assert store.replay(mids[0])["variant"]["target"] == 8


def test_duplicated_task_plays_once_and_records_once(league, module_worker):
    """Two deliveries of one match at once (both pool processes free): the second finds the
    first attempt's lease, waits, and finds the match recorded — one play, on the scheduled
    seed, so a duplicate pair keeps its twin decks."""
    store = league.store
    tid, _ = prepare_tournament(store, new_spec(["slow", "slow2"], 2, duplicate=True), tid="tt-dup")
    mid, twin = store.tournament_matches(tid)
    assert store.claim(mid)
    results = [run_match.apply_async(args=[mid], ignore_result=False) for _ in range(2)]
    outcomes = sorted(r.get(timeout=90)["status"] for r in results)
    assert outcomes == ["recorded", "skipped"]
    (logged,) = _results_for(store, [mid])
    assert store.match(mid)["attempts"] == 1                     # played once, never twice
    assert logged["seed"] == str(store.match(mid)["spec"]["seed"])
    assert store.match(twin)["spec"]["seed"] == store.match(mid)["spec"]["seed"]
    assert not store.r.exists(store.keys.lease(mid))             # the lease ended with the play
    # and a third copy long after: skipped without playing
    third = run_match.apply_async(args=[mid], ignore_result=False).get(timeout=30)
    assert third["status"] == "skipped"
    assert len(_results_for(store, [mid])) == 1


def test_permanent_error_fails_at_once(league, module_worker):
    store = league.store
    store.create_match("tt-bad", {"match_id": "tt-bad", "bots": ["random", "nosuchbot"] * 2,
                                  "seed": "1", "first_dealer": 0, "variant": {}})
    assert store.claim("tt-bad")
    out = run_match.apply_async(args=["tt-bad"], ignore_result=False).get(timeout=30)
    m = store.match("tt-bad")
    assert out["status"] == "failed" and m["status"] == "failed" and m["attempts"] == 1
    assert "nosuchbot" in m["error"]
    assert not store.is_recorded("tt-bad")


def test_transient_error_retries_with_backoff_then_fails_with_the_reason(league, module_worker):
    store = league.store
    store.create_match("tt-noref", {"match_id": "tt-noref", "bots": ["random", "heuristic"] * 2,
                                    "seed": "2", "first_dealer": 0, "variant": {}})
    assert store.claim("tt-noref")
    enqueue(["tt-noref"], mode="referee")   # the worker knows only a dead referee address
    m = wait_for(lambda: (lambda m: m if m["status"] == "failed" else None)(store.match("tt-noref")),
              what="the match to be given up")
    assert m["attempts"] == 3
    assert m["error"].startswith("gave up after 3 attempts: referee 127.0.0.1:")
    assert "UNAVAILABLE" in m["error"]


@pytest.mark.parametrize("victim", ["pool process", "whole worker"])
def test_worker_killed_mid_match_runs_it_again_and_records_once(league, start_worker, victim):
    import os
    import signal
    store = league.store
    tid, _ = prepare_tournament(store, new_spec(["slow", "slow2"], 1),
                                tid=f"tt-kill-{victim.split()[0]}")
    (mid,) = store.tournament_matches(tid)
    # w1's bots think 50 ms a card: its attempt takes 6-12 s, so the kill lands mid-match even
    # when this process stalls for seconds (at 10 ms a card some seeds end in 1.2 s, and on a
    # loaded machine the first attempt can finish before the kill)
    w1 = start_worker("--runner", "local", "-c", "1", "-Q", "sueca.kill",
                      SUECA_VISIBILITY_TIMEOUT="3", SLOWBOT_THINK="0.05")
    assert store.claim(mid)
    run_match.apply_async(args=[mid], queue="sueca.kill")
    wait_for(lambda: store.match(mid)["status"] == "running", what="the match to start")
    time.sleep(0.5)  # a sleep on purpose: a few moves in (they show nowhere to poll)
    if victim == "pool process":
        (child,) = w1.children()
        os.kill(child, signal.SIGKILL)                       # the parent re-queues the message
    else:
        w1.kill()                                            # nobody left: another worker must
        start_worker("--runner", "local", "-c", "1", "-Q", "sueca.kill",
                     SUECA_VISIBILITY_TIMEOUT="3")
    assert not store.is_recorded(mid), "the first attempt finished before the kill"
    wait_for(lambda: store.match(mid)["status"] == "done", timeout=60, what="the re-run")
    m = store.match(mid)
    assert m["attempts"] == 2
    assert len(_results_for(store, [mid])) == 1
    assert replay.verify(store.replay(mid)) == []
    time.sleep(1.0)  # a sleep on purpose: proves no third run records within a while
    assert len(_results_for(store, [mid])) == 1              # and no third run records again


def test_live_ratings_are_folded_by_the_workers_own_thread(league, module_worker):
    """Nobody here folds: the worker folds after answering each task (its fold thread), and the
    live ratings reach the last recorded result within moments."""
    store = league.store
    run_tournament(store, new_spec(["random", "heuristic"], 3), tid="tt-fold", quiet=True,
                   timeout=60)
    (last, _), = store.r.xrevrange(store.keys.results(), count=1)
    wait_for(lambda: store.r.get(store.keys.ratings_cursor()) == last, timeout=10,
          what="the workers' fold to reach the last result")


def test_live_ratings_follow_every_recorded_result(league, module_worker):
    store = league.store
    catch_up(store)
    live = load(store)
    rebuilt = rebuild(store, write=False)
    assert rebuilt["max_diff"] == 0.0
    assert {b: r.games for b, r in live.items()} == {b: r.games for b, r in rebuilt["ratings"].items()}
