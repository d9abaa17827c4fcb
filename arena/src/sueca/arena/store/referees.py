"""Referee replicas' heartbeats: ``referees`` (address -> last heartbeat) and each replica's
``referee:{addr}:bots`` (bot -> free seats there, with a TTL), written by every referee started
with --redis and read by the ladder, tournaments and the web."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from sueca.arena.store.client import StoreBase, text, texts

__all__ = ["RefereeStore"]


class RefereeStore(StoreBase):
    """The replicas' heartbeats and the bots connected to them."""

    def referees(self, max_age: float = 30.0) -> list[str]:
        """Replica addresses that sent a heartbeat within ``max_age`` seconds."""
        return texts(self.r.zrangebyscore(self.keys.referees(), time.time() - max_age, "+inf"))

    def publish_referee(self, address: str, free: Mapping[str, int], ttl: float) -> None:
        """A replica's heartbeat: it is alive, and each connected bot's free seats on it
        (forgotten after ``ttl`` seconds without a heartbeat)."""
        key = self.keys.referee_bots(address)
        pipe = self.r.pipeline()
        pipe.zadd(self.keys.referees(), {address: time.time()})
        pipe.delete(key)
        if free:
            pipe.hset(key, mapping={bot: n for bot, n in free.items()})
            pipe.expire(key, int(ttl))
        pipe.execute()

    def withdraw_referee(self, address: str) -> None:
        """A replica stopping: it is no longer announced, nor are its bots."""
        self.r.zrem(self.keys.referees(), address)
        self.r.delete(self.keys.referee_bots(address))

    def bots_on(self, addresses: Sequence[str]) -> set[str]:
        """The bots connected to any of these replicas (as their heartbeats last said)."""
        pipe = self.r.pipeline(transaction=False)
        for a in addresses:
            pipe.hkeys(self.keys.referee_bots(a))
        return {text(k) for names in pipe.execute() for k in names}

    def free_seats(self, addresses: Sequence[str], bot: str) -> list[int | None]:
        """The bot's free seats on each replica (None: not connected there)."""
        pipe = self.r.pipeline(transaction=False)
        for a in addresses:
            pipe.hget(self.keys.referee_bots(a), bot)
        return [None if v is None else int(text(v)) for v in pipe.execute()]
