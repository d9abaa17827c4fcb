"""Attempts and leases: who is playing a match right now, and the in-flight matches.

An attempt that plays a match holds ``lease:{id}`` (its owner, with a TTL of
:data:`LEASE_SECONDS` that the owner's heartbeat renews), taken atomically with the start of the
attempt. A second delivery of the match finds the lease and stands down (:class:`LeaseHeld`)
instead of playing the match again while the first attempt is alive; when the owner dies its
lease lapses within seconds and :mod:`sueca.arena.recovery` re-queues the match. Every match
that is queued or running is in the ``inflight`` set, the recovery's work list.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import NamedTuple

from sueca.arena.records import MatchRecord, MatchStatus, NoteKind
from sueca.arena.store.client import now, text, texts
from sueca.arena.store.errors import LeaseHeld, UnknownMatch
from sueca.arena.store.matches import MatchStore, decode_match

__all__ = ["AttemptStore", "InflightMatch", "LEASE_SECONDS", "HEARTBEAT_SECONDS",
           "default_owner"]

#: Seconds a lease lives without a heartbeat: how long a dead owner keeps its match (the
#: re-run follows within about this plus the recovery's confirmation delay). Long enough that a
#: live owner starved of CPU for a few seconds on a busy host does not lose its match.
LEASE_SECONDS = 10.0
#: Seconds between an owner's heartbeats (renewals of its lease).
HEARTBEAT_SECONDS = 2.0

# KEYS: match, recorded, lease, inflight   ARGV: now, referee, owner, lease ms, task, match id
# A worker starts an attempt: {-1} if already recorded, {-2} unknown, {-3, owner} while another
# owner's lease is alive, else {attempt number, the match's fields}; takes the lease with the
# attempt. The fields come back in the same round trip: the task needs the spec to play.
_START = """
if redis.call('EXISTS', KEYS[2]) == 1 then return {-1} end
if redis.call('EXISTS', KEYS[1]) == 0 then return {-2} end
local holder = redis.call('GET', KEYS[3])
if holder and holder ~= ARGV[3] then return {-3, holder} end
redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[4])
local n = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('HSET', KEYS[1], 'status', 'running', 'updated', ARGV[1], 'referee', ARGV[2],
           'owner', ARGV[3], 'task', ARGV[5])
redis.call('ZADD', KEYS[4], 'NX', ARGV[1], ARGV[6])
return {n, redis.call('HGETALL', KEYS[1])}
"""

# KEYS: lease, recorded   ARGV: owner, lease ms
# The owner's heartbeat: renew (or re-take, after a Redis pause let it lapse) unless someone
# else holds it now. 1 renewed, 0 taken by another owner. A recorded match has no lease to
# keep (the record deleted it; a beat racing the record must not bring it back): 1, nothing
# written.
_RENEW = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 1 end
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""

# KEYS: match, recorded, lease   ARGV: owner, referee
# The attempt is placed on a replica: the match names it, while ``owner`` still holds the lease
# and the match is unrecorded (a late attempt whose match was taken over, or recorded, writes
# nothing). 1 written, 0 not.
_PLACED = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'referee', ARGV[2])
return 1
"""

# KEYS: lease   ARGV: owner.   Compare-and-delete: only the owner ends its lease.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# KEYS: match, recorded, lease, inflight   ARGV: now, updated as observed, match id, reason,
# the reason's NoteKind
# The recovery re-queues a match whose task vanished: only if it is still queued or running as
# observed (``updated`` unchanged), unrecorded, and nobody holds its lease. Keeps ``attempts``:
# a match that kills every worker it meets still gives up after the attempt limit.
_REQUEUE = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
local f = redis.call('HMGET', KEYS[1], 'status', 'updated')
if not f[1] or (f[1] ~= 'queued' and f[1] ~= 'running') or f[2] ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'status', 'queued', 'updated', ARGV[1], 'error', ARGV[4],
           'error_kind', ARGV[5])
redis.call('ZADD', KEYS[4], ARGV[1], ARGV[3])
return 1
"""


def default_owner(task: str = "") -> str:
    """An attempt's owner id: ``host/pid/task id`` — who to look for when it seems stuck."""
    return f"{socket.gethostname()}/{os.getpid()}/{task}"


class InflightMatch(NamedTuple):
    """What the recovery looks at in an in-flight match (None fields: the match is gone)."""

    status: MatchStatus | None
    updated: str | None
    task: str | None
    leased: bool


class AttemptStore(MatchStore):
    """Starting attempts, their leases, and the in-flight set."""

    def start_attempt(self, mid: str, *, referee: str = "", owner: str | None = None,
                      task: str = "", lease: float = LEASE_SECONDS,
                      ) -> tuple[int, MatchRecord | None]:
        """Count an attempt, mark the match running and take its lease for ``owner``, in one
        round trip: ``(attempt number, the match as :meth:`match` reads it now)``, or
        ``(-1, None)`` when it is already recorded; :class:`LeaseHeld` while another owner's
        lease is alive, :class:`UnknownMatch` for an id never stored."""
        owner = owner or default_owner()
        out = self.script(_START)(keys=self.lease_keys(mid),
                                  args=[now(), referee, owner, int(lease * 1000), task, mid])
        n = int(out[0])
        if n == -2:
            raise UnknownMatch(mid)
        if n == -3:
            raise LeaseHeld(mid, text(out[1]))
        if n < 0:
            return n, None
        flat = out[1]
        return n, decode_match(dict(zip(flat[::2], flat[1::2])), mid)

    def renew_lease(self, mid: str, owner: str, lease: float = LEASE_SECONDS) -> bool:
        """The owner's heartbeat; False when another owner has taken the match over."""
        return bool(self.script(_RENEW)(keys=[self.keys.lease(mid), self.keys.recorded(mid)],
                                        args=[owner, int(lease * 1000)]))

    def placed(self, mid: str, owner: str, referee: str) -> bool:
        """``owner``'s attempt is being played on replica ``referee``: the match's record
        names it from now on (each attempt's start clears it), as its result will; False when
        the attempt is no longer the match's (see ``_PLACED``)."""
        return bool(self.script(_PLACED)(keys=self.lease_keys(mid)[:3], args=[owner, referee]))

    def release_lease(self, mid: str, owner: str) -> bool:
        return bool(self.script(_RELEASE)(keys=[self.keys.lease(mid)], args=[owner]))

    def requeue_lost(self, mid: str, observed_updated: str, reason: str,
                     kind: NoteKind = NoteKind.REQUEUED) -> bool:
        """Mark a match whose task vanished queued again (see ``_REQUEUE``), its ``error``
        note ``reason`` of ``kind``; True means "send its task now"."""
        return bool(self.script(_REQUEUE)(keys=self.lease_keys(mid),
                                          args=[now(), observed_updated, mid, reason[:2000],
                                                str(kind)]))

    def inflight(self) -> list[str]:
        """Every match id queued or running (oldest first)."""
        return texts(self.r.zrange(self.keys.inflight(), 0, -1))

    def inflight_states(self, mids: Sequence[str]) -> list[InflightMatch]:
        """Each match's status, ``updated``, task id and whether its lease is held, one round
        trip."""
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            pipe.hmget(self.keys.match(mid), "status", "updated", "task")
            pipe.exists(self.keys.lease(mid))
        rows = pipe.execute()
        out = []
        for (status, updated, task), leased in zip(rows[::2], rows[1::2]):
            out.append(InflightMatch(None if status is None else MatchStatus(text(status)),
                                     text(updated), text(task), bool(leased)))
        return out

    def drop_inflight(self, mids: Sequence[str]) -> None:
        """Take finished matches (recorded, failed, given back) off the in-flight set."""
        if mids:
            self.r.zrem(self.keys.inflight(), *mids)
