"""Finding matches whose task vanished, and queueing them again — recovery that needs no human.

A match is *in flight* while it is queued or running (the ``inflight`` set). Normally some
message in the broker stands for it — waiting in a queue, or delivered to a worker that is
playing it under a live lease (:data:`sueca.arena.store.LEASE_SECONDS`, renewed by the
worker's heartbeat). A match is *lost* when nothing stands for it any more:

* no live lease (its owner died: a SIGKILLed worker, a host gone, an OOM kill), and
* no message for it in the queue, and no message for it held by a worker (the broker's
  ``unacked`` set) that could still be live: one younger than :data:`HELD_SECONDS` (a retry
  waiting out its back-off) and not the one its dead owner was playing.

That covers the worker killed mid-match (found within the lease time, not after the 600 s
visibility timeout), a message taken from the queue by a worker that died before noting it,
a message acknowledged by mistake, and a flushed broker. A match must look lost at two looks
:data:`CONFIRM_SECONDS` apart, unchanged, before it is re-queued — so a worker that is merely
slow to renew its lease after a Redis pause keeps its match — and the re-queue itself is one
script that re-checks everything (:meth:`sueca.arena.store.Store.requeue_lost`), so two
reapers never queue a match twice. A match re-queued by mistake costs one extra message: its
delivery finds the lease held and waits, or the match recorded and skips it.

:class:`Reaper` is called by whatever runs continuously: the ladder scheduler's loop and a
waiting ``tournament run``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sueca.arena.celery_app import QUEUE
from sueca.arena.fairplay import CHALLENGE
from sueca.arena.records import NoteKind
from sueca.arena.store import QUEUED, RUNNING, Store
from sueca.arena.tasks import Priority, enqueue

__all__ = ["Reaper", "Sweep", "HELD_SECONDS", "CONFIRM_SECONDS"]

#: A message held by a worker (unacked) younger than this may still be live: a retry waiting
#: out its back-off (at most 30 s, plus jitter) or a delivery about to start.
HELD_SECONDS = 45.0
#: A match must look lost this long (two looks, nothing changed) before it is re-queued.
CONFIRM_SECONDS = 5.0


@dataclass
class Sweep:
    """What one look at the in-flight matches saw."""

    queued: int = 0     # queued with a message in the queue
    running: int = 0    # with a live lease
    waiting: int = 0    # no lease, but a message a worker holds (a retry's back-off)
    stale: list[str] = field(default_factory=list)     # lost, waiting for confirmation
    requeued: list[str] = field(default_factory=list)  # re-queued by this look


class Reaper:
    """Re-queues lost matches (see the module docstring); call :meth:`sweep` every few seconds.

    ``enqueue(mids)`` sends the tasks (default :func:`sueca.arena.tasks.enqueue`); ``queues``
    are the broker queues to look in for waiting messages (default the arena's one queue).
    """

    def __init__(self, store: Store, enqueue: Callable[[list[str]], None] | None = None,
                 queues: Iterable[str] | None = None, confirm: float = CONFIRM_SECONDS,
                 held: float = HELD_SECONDS, every: float = 2.0) -> None:
        self.store = store
        self.queues = list(queues or [QUEUE])
        self.confirm = confirm
        self.held = held
        self._enqueue = enqueue
        self._suspects: dict[str, tuple[float, tuple[str, str]]] = {}
        self.every = every
        self._next = 0.0

    def sweep_due(self) -> Sweep | None:
        """:meth:`sweep` if ``every`` seconds have passed since the last one (for a loop that
        ticks faster), else None."""
        if time.monotonic() < self._next:
            return None
        self._next = time.monotonic() + self.every
        return self.sweep()

    def enqueue(self, mids: list[str]) -> None:
        """Send the tasks again, each at its priority: a ladder match stays behind the
        tournaments' (:class:`sueca.arena.tasks.Priority`)."""
        if self._enqueue is not None:
            self._enqueue(mids)
            return
        ladder = set(self.store.ladder_of(mids))
        challenges = {m for m, t in zip(mids, self.store.tournaments_of(mids)) if t == CHALLENGE}
        enqueue([m for m in mids if m not in ladder and m not in challenges])
        enqueue([m for m in mids if m in challenges], priority=Priority.CHALLENGE)
        enqueue([m for m in mids if m in ladder], priority=Priority.LADDER)

    def sweep(self, also: Iterable[str] = ()) -> Sweep:
        """One look at every in-flight match (and at ``also``: a tournament's matches, which
        may predate the in-flight set); re-queues those confirmed lost."""
        store = self.store
        mids = list(dict.fromkeys([*store.inflight(), *also]))
        out = Sweep()
        finished, candidates = [], []
        for mid, (status, updated, task, leased) in zip(mids, store.inflight_states(mids)):
            if status not in (QUEUED, RUNNING):
                finished.append(mid)
            elif leased:
                out.running += 1
            else:
                candidates.append((mid, status, updated or "", task or ""))
        # recorded, failed or given back: no longer the reaper's business
        store.drop_inflight(finished)
        if not candidates:
            self._suspects.clear()
            return out
        waiting, held = store.broker_messages(self.queues)
        now = time.monotonic()
        lost: list[tuple[str, str]] = []
        for mid, status, updated, task in candidates:
            if mid in waiting:
                out.queued += 1
                self._suspects.pop(mid, None)
                continue
            live = [age for age, tid in held.get(mid, ())
                    if age < self.held and not (status == RUNNING and tid == task)]
            if live:
                out.waiting += 1
                self._suspects.pop(mid, None)
                continue
            seen = self._suspects.get(mid)
            if seen is None or seen[1] != (status, updated):
                self._suspects[mid] = (now, (status, updated))
                out.stale.append(mid)
            elif now - seen[0] >= self.confirm:
                lost.append((mid, updated))
            else:
                out.stale.append(mid)
        for mid in set(self._suspects) - {c[0] for c in candidates}:
            del self._suspects[mid]
        again = [mid for mid, updated in lost
                 if store.requeue_lost(mid, updated, "re-queued: its task was lost "
                                                     "(owner gone, no message left)",
                                       NoteKind.REQUEUED)]
        for mid, _ in lost:
            self._suspects.pop(mid, None)
        if again:
            try:
                self.enqueue(again)
            except Exception:  # the broker is away (kombu's own errors): they stay queued with
                return out     # no message, so the next looks find them lost again
            out.requeued = again
        return out
