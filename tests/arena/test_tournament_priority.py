"""A tournament goes ahead of the ladder on the broker: real Redis, a real Celery worker with
one slot (local runner), slow ladder matches queued first. The order is read from the recorded
start times (a result's ``time`` less its ``seconds``), never from wall-clock thresholds."""

from __future__ import annotations

import pytest
from kits.wait import wait_for

from sueca.arena.records import MatchStatus
from sueca.arena.recovery import Sweep
from sueca.arena.schedule import match_spec
from sueca.arena.tasks import Priority, enqueue
from sueca.arena.tournaments import (
    _status_line,
    enqueue_missing,
    ladder_running,
    new_spec,
    prepare_tournament,
)

pytestmark = pytest.mark.slow


def _started(store, mids):
    """Each recorded match's start, from its results-log entry."""
    return {r["match_id"]: r["time"] - r["seconds"] for _, r in store.results()
            if r["match_id"] in set(mids)}


def test_tournament_matches_start_before_the_ladder_matches_queued_ahead_of_them(
        league, start_worker):
    store = league.store
    start_worker("--runner", "local", "-c", "1")  # one slot: the broker's order is the order
    ladder = [f"prio-ladder-{i}" for i in range(4)]
    for i, mid in enumerate(ladder):
        store.create_match(mid, match_spec(mid, ["slow", "slow2"] * 2, seed=str(100 + i),
                                           first_dealer=0, variant={}), tournament="ladder")
        assert store.claim(mid)
        store.add_ladder_match(mid, "slow", "slow2", 100)
    enqueue(ladder, priority=Priority.LADDER)
    wait_for(lambda: store.statuses(ladder[:1]) == [MatchStatus.RUNNING],
             what="the first ladder match to run", timeout=30)
    # the slot is taken: what the tournament's progress line says meanwhile
    assert ladder_running(store) == 1
    waiting = {"pending": 0, "queued": 2, "running": 0, "done": 0, "failed": 0, "total": 2}
    assert "waiting for 1 running ladder match to finish" in _status_line(
        waiting, Sweep(), 1, ladder_running(store))
    assert [st for st in store.statuses(ladder[1:])] == [MatchStatus.QUEUED] * 3  # still queued
    tid, _ = prepare_tournament(store, new_spec(["random", "heuristic"], 2), tid="prio-cup")
    ours = store.tournament_matches(tid)
    assert enqueue_missing(store, tid) == 2
    everything = [*ladder, *ours]
    wait_for(lambda: all(st in (MatchStatus.DONE, MatchStatus.FAILED)
                         for st in store.statuses(everything)),
             what="every match to be recorded", timeout=120)
    assert store.statuses(everything) == [MatchStatus.DONE] * len(everything)
    started = _started(store, everything)
    behind = [started[m] for m in ladder[1:]]  # queued before the tournament, not yet started
    assert max(started[m] for m in ours) < min(behind), started
    assert started[ladder[0]] < min(started[m] for m in ours)  # the running one was not stopped


def test_the_status_line_names_no_ladder_while_a_match_of_ours_runs() -> None:
    playing = {"pending": 0, "queued": 1, "running": 1, "done": 0, "failed": 0, "total": 2}
    assert "ladder" not in _status_line(playing, Sweep(), 1, 2)  # type: ignore[arg-type]
    done = {"pending": 0, "queued": 0, "running": 0, "done": 2, "failed": 0, "total": 2}
    assert "ladder" not in _status_line(done, Sweep(), 1, 2)  # type: ignore[arg-type]
