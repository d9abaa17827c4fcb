"""The league's records in Redis, one module per concern; key names come from
:mod:`sueca.arena.keys` only, and no module outside this package touches a Redis client.

* :mod:`.client`: the connection (:func:`connect`), the client and key layout every part shares
* :mod:`.matches`: match hashes, their status and the matches index
* :mod:`.attempts`: attempts, leases and the in-flight set
* :mod:`.results`: the results log and exactly-once recording
* :mod:`.replays`: compressed replays
* :mod:`.botstats`: the bots' health totals
* :mod:`.tournaments`: tournaments, their schedules, progress and results
* :mod:`.referees`: referee replicas' heartbeats and the bots connected to them
* :mod:`.ladder`: the ladder's matches in flight and its recent pairs
* :mod:`.locks`: short-lived named locks
* :mod:`.retention`: finding, archiving and forgetting old recorded matches
* :mod:`.broker`: the Celery broker's queues, read only
* :mod:`.labels`: which bots get a metrics label of their own
* :mod:`.bots`: the bot registry (names, salted token hashes)
* :mod:`.hosted`: hosted bots' submissions, their bot hosts' claims, their owners' logs
* :mod:`.ratings`: the ratings' state (live fold, rating of record, checkpoint)
* :mod:`.versions`: bot versions
* :mod:`.competitions`: competitions, their moves, entries and seed keys
* :mod:`.fairplay`: bots' recent outcomes, suspensions, lifts and challenges

:class:`Store` puts them together: one instance per process, safe to share between threads.
"""

from __future__ import annotations

from functools import cached_property

from sueca.arena.keys import Keys
from sueca.arena.records import MatchStatus
from sueca.arena.store.attempts import HEARTBEAT_SECONDS, LEASE_SECONDS, AttemptStore, default_owner
from sueca.arena.store.bots import BotRegistry
from sueca.arena.store.botstats import BotStatsStore
from sueca.arena.store.broker import BrokerStore
from sueca.arena.store.client import REDIS_HINT, TRANSIENT_REDIS_ERRORS, connect
from sueca.arena.store.competitions import Competitions
from sueca.arena.store.errors import (
    LeaseHeld,
    StoreError,
    StoreUnavailable,
    TotalsLost,
    TournamentConflict,
    UnknownMatch,
)
from sueca.arena.store.fairplay import FairPlayStore
from sueca.arena.store.hosted import HostedStore
from sueca.arena.store.labels import LabelStore
from sueca.arena.store.ladder import LadderStore
from sueca.arena.store.locks import LockStore
from sueca.arena.store.referees import RefereeStore
from sueca.arena.store.retention import RetentionStore
from sueca.arena.store.tournaments import TournamentStore
from sueca.arena.store.versions import BotVersions

__all__ = ["Store", "StoreError", "StoreUnavailable", "TotalsLost", "TournamentConflict",
           "LeaseHeld", "UnknownMatch", "connect", "default_owner", "LEASE_SECONDS",
           "HEARTBEAT_SECONDS", "MatchStatus", "PENDING", "QUEUED", "RUNNING", "DONE", "FAILED",
           "TRANSIENT_REDIS_ERRORS", "REDIS_HINT"]

PENDING, QUEUED, RUNNING, DONE, FAILED = MatchStatus


class Store(AttemptStore, TournamentStore, BotStatsStore, RefereeStore, LadderStore, LockStore,
            RetentionStore, BrokerStore, LabelStore):
    """Typed access to every record of the league; ``bots`` is the bot registry, ``versions``
    their versions, ``competitions`` the competitions."""

    @classmethod
    def from_url(cls, url: str | None, keys: Keys | None = None) -> Store:
        return cls(connect(url), keys)

    @cached_property
    def bots(self) -> BotRegistry:
        """The bot registry, on this store's client and keys."""
        return BotRegistry(self.r, self.keys)

    @cached_property
    def versions(self) -> BotVersions:
        """Bot versions, on this store's client and keys."""
        return BotVersions(self.r, self.keys)

    @cached_property
    def competitions(self) -> Competitions:
        """Competitions, on this store's client and keys."""
        return Competitions(self.r, self.keys)

    @cached_property
    def fairplay(self) -> FairPlayStore:
        """Bots' recent outcomes, suspensions, lifts and challenges (:mod:`.fairplay`)."""
        return FairPlayStore(self.r, self.keys)

    @cached_property
    def hosted(self) -> HostedStore:
        """Hosted bots' submissions, claims and logs, on this store's client and keys."""
        return HostedStore(self.r, self.keys)
