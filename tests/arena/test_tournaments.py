"""Waiting for a tournament (real Redis): woken by the results log, not by polling, and still
seeing what writes no result (a failed match)."""

from __future__ import annotations

import threading
import time

from sueca.arena.tournaments import wait_for


def _tournament(store, tid: str, n: int) -> list[str]:
    """``n`` matches, each running under a live lease (so the wait's reaper leaves them be)."""
    mids = [f"{tid}-{i}" for i in range(n)]
    schedule = [{"id": m, "spec": {"match_id": m, "bots": ["a", "b"] * 2, "seed": str(i)}}
                for i, m in enumerate(mids)]
    store.create_tournament(tid, {"bots": ["a", "b"]}, lambda t, s: schedule)
    for m in mids:
        assert store.claim(m)
        assert store.start_attempt(m, owner="w/1/t", lease=60)[0] == 1
    return mids


def _later(*steps) -> threading.Thread:
    def run() -> None:
        for delay, step in steps:
            time.sleep(delay)  # on purpose: each step comes late, while the wait is under way
            step()
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_the_last_result_ends_the_wait_at_once(store):
    """With a status look only every 30 s, each result still moves the wait: it returns right
    after the last one is recorded, not at the next look."""
    mids = _tournament(store, "tw-fast", 3)
    done_at: list[float] = []

    def record(mid: str) -> None:
        done_at.append(time.monotonic())  # before: the wait may end before this thread goes on
        store.record_result(mid, {"match_id": mid, "end": "normal"})

    _later(*[(0.3, lambda m=m: record(m)) for m in mids])
    progress = wait_for(store, "tw-fast", timeout=20, quiet=True, look_every=30.0)
    ended = time.monotonic()
    assert progress["done"] == 3 and progress["total"] == 3 and progress["running"] == 0
    assert len(done_at) == 3 and ended - done_at[-1] < 1.0


def test_a_failed_match_is_seen_by_the_status_look(store):
    mids = _tournament(store, "tw-fail", 3)
    _later((0.2, lambda: store.record_result(mids[0], {"match_id": mids[0], "end": "normal"})),
           (0.2, lambda: store.record_failure(mids[1], "gave up")),
           (0.2, lambda: store.record_result(mids[2], {"match_id": mids[2], "end": "normal"})))
    t0 = time.monotonic()
    progress = wait_for(store, "tw-fail", timeout=20, quiet=True, look_every=0.3)
    assert (progress["done"], progress["failed"], progress["total"]) == (2, 1, 3)
    assert time.monotonic() - t0 < 5


def test_the_status_line_shows_workers_once_one_answered() -> None:
    """No 'workers ?' while the first ping is out (a short tournament ended showing it)."""
    from sueca.arena.recovery import Sweep
    from sueca.arena.tournaments import _status_line
    progress = {"pending": 0, "queued": 1, "running": 2, "done": 3, "failed": 0, "total": 6}
    assert _status_line(progress, Sweep(), None) == "running 2 · queued 1"  # type: ignore[arg-type]
    assert _status_line(progress, Sweep(), 2).endswith(" · workers 2")  # type: ignore[arg-type]
    assert "no worker answers" in _status_line(progress, Sweep(), 0)  # type: ignore[arg-type]


def test_the_hints_skip_a_re_queue_note_by_its_kind_and_name_a_retry(store) -> None:
    from sueca.arena.records import MatchStatus, NoteKind
    from sueca.arena.tournaments import _hints
    lost, retried = _tournament(store, "th", 2)
    store.set_status(lost, MatchStatus.QUEUED, error="referee 1: bot x not connected",
                     error_kind=NoteKind.REQUEUED)  # a re-queue note, whatever its words
    store.set_status(retried, MatchStatus.QUEUED, error="attempt 1: re-queued bot y is away",
                     error_kind=NoteKind.RETRY)  # a retry's error, whatever its first word
    assert [n.kind for n in store.errors_of([lost, retried])] == [NoteKind.REQUEUED,
                                                                   NoteKind.RETRY]
    assert store.match(lost)["error_kind"] is NoteKind.REQUEUED
    assert _hints(store, [lost, retried], 1) == ["waiting: 're-queued bot y is away'"]
