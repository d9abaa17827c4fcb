"""Moving a competition through its states: by command (:func:`move`) or by the times set at
its creation (:func:`advance`, which the scheduler runs every tick).

A move to ``frozen`` also writes each entrant's current version to its entry: from then on
that version is the one its ladder plays and rates (the store refuses a new version of a bot
entered in a frozen competition, so the version read just after the move is final).
"""

from __future__ import annotations

import time

from sueca.arena.competitions.ladder import LOCK as LADDER_LOCK
from sueca.arena.lifecycle import CompetitionError, State, due
from sueca.arena.records import Transition
from sueca.arena.store import Store

__all__ = ["move", "advance", "freeze_versions", "LOCK"]

#: the lock two schedulers share, so that a due move is made once
LOCK = "competitions"
#: how long a freeze waits for the ladder's tick to end (its lock lives 15 s at most)
LOCK_WAIT = 20.0
#: the most moves one competition makes in one call of :func:`advance` (draft to closed)
_MOST = len(State) - 1


def move(store: Store, name: str, to: State, *, by: str) -> Transition:
    """Move competition ``name`` to ``to`` (one step forward; CompetitionError quoting the
    competition and its state otherwise), recording ``by``; at the freeze, stamp versions."""
    step = store.competitions.move(name, to, by=by)
    if to is State.FROZEN:
        freeze_versions(store, name)
    return step


def freeze_versions(store: Store, name: str) -> dict[str, int]:
    """Write each entrant's current version to its entry (the version that plays from now on);
    returns them. Under the ladder's lock, whose tick writes the entries' divisions and
    placement counts: neither write is lost. Should the lock not come, the versions are
    written anyway: the ladder plays the current version of an entry with none, which no one
    can change while the competition is frozen."""
    deadline = time.monotonic() + LOCK_WAIT
    token = store.lock(LADDER_LOCK, ttl=15.0)
    while token is None and time.monotonic() < deadline:
        time.sleep(0.05)
        token = store.lock(LADDER_LOCK, ttl=15.0)
    try:
        entries = store.competitions.entries(name)
        current = store.versions.currents(list(entries))
        for bot in entries:
            store.competitions.update_entry(name, bot, version=current.get(bot, 1))
        return {bot: current.get(bot, 1) for bot in entries}
    finally:
        if token is not None:
            store.unlock(LADDER_LOCK, token)


def advance(store: Store, *, now: float | None = None,
            by: str = "scheduler") -> list[tuple[str, Transition]]:
    """Make every move the competitions' times ask for at ``now`` (several for one whose times
    all passed), under :data:`LOCK` so that two schedulers make each once; (name, move) of
    each made. A competition moved meanwhile by a command is read again, not moved twice."""
    now = time.time() if now is None else now
    token = store.lock(LOCK, ttl=15.0)
    if token is None:
        return []
    made: list[tuple[str, Transition]] = []
    try:
        for name in store.competitions.names():
            for _ in range(_MOST):
                record = store.competitions.get(name)
                if record is None:
                    break
                to = due(record["spec"], record["state"], now)
                if to is None:
                    break
                try:
                    made.append((name, move(store, name, to, by=by)))
                except CompetitionError:  # moved by a command since we read it: read again
                    continue
    finally:
        store.unlock(LOCK, token)
    return made
