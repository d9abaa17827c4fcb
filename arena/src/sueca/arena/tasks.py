"""Celery tasks: thin wrappers around :mod:`sueca.arena.match_job` (one task per match, never per move).

``run_match(match_id)`` is idempotent by match id: the spec comes from Redis and the result is
recorded exactly once (:meth:`sueca.arena.store.Store.record_result`), so a re-delivered, duplicated
or raced task records nothing twice. Retries are only for transient trouble, with exponential
back-off and jitter; after ``SUECA_MATCH_ATTEMPTS`` attempts (default 5, counted in Redis across
retries *and* re-deliveries after a worker died) the match is recorded as failed with the
reason. A permanent error (bad spec, unknown bot) fails it at once.

A delivery that finds the match being played elsewhere (its lease held by a live attempt: a
duplicate message, a redelivery after a visibility timeout) neither plays nor counts an
attempt: it looks again after a few seconds, until the match is recorded (then it is skipped)
or the other attempt's lease has lapsed (then it plays).
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Sequence
from enum import IntEnum
from typing import Any, NoReturn

from celery import Task, signals
from celery.exceptions import Reject

from sueca.arena.celery_app import app, redis_url
from sueca.arena.match_job import Permanent, Transient, play_and_record
from sueca.arena.records import JobResult, JobStatus, MatchStatus, NoteKind
from sueca.arena.settings import current
from sueca.arena.store import LEASE_SECONDS, TRANSIENT_REDIS_ERRORS, LeaseHeld, Store, default_owner
from sueca.arena.store.ratings import catch_up

_store: Store | None = None


def store() -> Store:
    """One Store per process (pool processes are forked: each makes its own connection),
    shared by the threads of a ``--pool threads`` worker (redis-py's client is thread-safe; the
    lock only keeps two first tasks from making two)."""
    global _store
    if _store is None or _store_pid != os.getpid():
        with _store_lock:
            if _store is None or _store_pid != os.getpid():
                _set_store(Store.from_url(redis_url()))
    assert _store is not None
    return _store


_store_pid = -1
_store_lock = threading.Lock()


def _set_store(s: Store) -> None:
    global _store, _store_pid
    _store, _store_pid = s, os.getpid()


class Folder:
    """Folds recorded results into the live ratings (:func:`sueca.arena.store.ratings.catch_up`) from
    a thread of this process, so that a task is answered without waiting for the fold's Redis
    round trips (7 of them a match). Requests made while a fold runs are
    served by one more fold. Nothing can be lost: the fold is exactly-once and cumulative (a
    cursor in Redis), so what a fold misses — its process killed, Redis away — the next fold
    anywhere takes in; a pool process that stops waits for its own (:func:`_fold_rest`)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._asked = self._done = 0
        self._store: Store | None = None
        self._thread: threading.Thread | None = None

    def request(self, store: Store) -> None:
        with self._cond:
            self._asked += 1
            self._store = store
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="ratings-fold",
                                                daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._done < self._asked)
                target, store = self._asked, self._store
            try:
                if store is not None:  # (set with every request, before _asked grows)
                    catch_up(store)
            except Exception as err:  # the next fold (ours or another process's) catches up
                _ratings_log.warning(
                    "live ratings not folded yet (the next fold does it): %s", err)
            with self._cond:
                self._done = target
                self._cond.notify_all()

    def flush(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every requested fold; True when none is left."""
        with self._cond:
            return self._cond.wait_for(
                lambda: self._done >= self._asked or self._thread is None
                or not self._thread.is_alive(), timeout)


_folder = Folder()
_ratings_log = logging.getLogger("sueca.arena.ratings")


@signals.worker_process_shutdown.connect
@signals.worker_shutdown.connect  # a threads pool: its matches ran in the worker's process
def _fold_rest(**_: object) -> None:
    _folder.flush(5.0)


def max_attempts() -> int:
    return current().match_attempts


def backoff(attempt: int) -> float:
    """Seconds before retry number ``attempt`` (1, 2, ...): 0.5, 1, 2, 4 ... capped at 30, with
    jitter so that retries of many matches do not arrive together."""
    base = current().retry_base
    return min(30.0, base * 2.0 ** (attempt - 1)) * (0.75 + random.random() * 0.5)


@app.task(bind=True, name="arena.run_match", acks_late=True, reject_on_worker_lost=True,
          max_retries=None)
def run_match(self: Task[[str, str | None], JobResult], match_id: str,
              mode: str | None = None) -> JobResult:
    # deferred: creates the worker's metrics, which must follow celery_app.prepare_metrics_env
    from sueca.arena import metrics
    started = time.monotonic()
    outcome = "error"
    try:
        try:
            result = play_and_record(store(), match_id, mode, max_attempts=max_attempts(),
                                     owner=default_owner(self.request.id or ""),
                                     task=self.request.id or "", fold=_folder.request)
        except LeaseHeld:
            outcome = "busy"  # played elsewhere right now: look again once its lease could lapse
            _retry(self, None, LEASE_SECONDS / 2 * (0.75 + random.random() * 0.5))
        except Transient as err:
            try:
                attempts: int | None = int(store().match(match_id)["attempts"])  # type: ignore[index]
            except TRANSIENT_REDIS_ERRORS:
                attempts = None  # Redis away: not the match's fault, never a reason to give up
            if attempts is not None and attempts >= max_attempts():
                try:
                    store().record_failure(match_id, f"gave up after {attempts} attempts: {err}")
                except TRANSIENT_REDIS_ERRORS:  # Redis went away just now: look again later
                    attempts = None
                else:
                    metrics.MATCHES_FAILED.inc()
                    outcome = "failed"
                    return {"status": JobStatus.FAILED, "match_id": match_id, "error": str(err)}
            if attempts is None:
                attempts = min(self.request.retries + 1, 6)  # only to size the back-off
            try:
                store().set_status(match_id, MatchStatus.QUEUED, error=f"attempt {attempts}: {err}",
                                   error_kind=NoteKind.RETRY)
            except TRANSIENT_REDIS_ERRORS:
                pass
            metrics.RETRIES.labels(err.kind).inc()
            outcome = "retry"
            _retry(self, err, backoff(attempts))
        except Permanent as err:
            store().record_failure(match_id, str(err))
            metrics.MATCHES_FAILED.inc()
            outcome = "failed"
            return {"status": JobStatus.FAILED, "match_id": match_id, "error": str(err)}
        outcome = result["status"]
        if result["status"] is JobStatus.RECORDED:
            metrics.MATCHES_RECORDED.labels(result.get("end", "")).inc()
        return result
    finally:
        metrics.TASK_SECONDS.labels(outcome).observe(time.monotonic() - started)


def _retry(task: Task[Any, Any], err: Exception | None, countdown: float) -> NoReturn:
    """Send the task again after ``countdown`` seconds (raises Celery's Retry)."""
    try:
        retry = task.retry(exc=err, countdown=countdown, max_retries=None, throw=False)
    except Reject as lost:
        # the retry could not be published (Redis is down: the broker too). Celery would drop
        # the message; keep it instead — re-queued, or restored from the unacked set once
        # Redis is back (and found by the recovery, :mod:`sueca.arena.recovery`, if not).
        reason = lost.reason  # type: ignore[attr-defined]  # (set by Reject, not in its stubs)
        raise Reject(f"could not re-queue: {reason}", requeue=True) from None
    raise retry from None


class Priority(IntEnum):
    """A match task's priority on the broker. With kombu's Redis transport each priority step
    (0, 3, 6, 9) is a list of its own and a worker pops the lists in that order, 0 first: a
    tournament someone waits for goes ahead of the ladder, which keeps matches in flight for
    ever, and an owner's challenge (unrated, :mod:`sueca.arena.fairplay`) between the two. A
    running match is never interrupted: a tournament's matches start as worker slots free up."""

    TOURNAMENT = 0
    CHALLENGE = 3
    LADDER = 6


def enqueue(match_ids: Sequence[str], *, mode: str | None = None,
            priority: Priority = Priority.TOURNAMENT) -> None:
    """Send one task per match over one broker connection, at ``priority``."""
    with app.producer_or_acquire() as producer:
        for mid in match_ids:
            run_match.apply_async(args=(mid,), kwargs={"mode": mode} if mode else {},
                                  producer=producer, priority=int(priority))
