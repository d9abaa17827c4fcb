"""Referee replicas' heartbeats: ``referees`` (address -> last heartbeat) and each replica's
``referee:{addr}:bots`` (bot -> free seats there, with a TTL), written by every referee started
with --redis and read by the ladder, tournaments and the web.

A heartbeat is timed by Redis's clock, and its age judged by the same clock: the referees,
workers and schedulers run on machines whose wall clocks may be minutes apart, and a referee
whose clock is behind would otherwise look dead from the start, one ahead alive long after it
is gone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sueca.arena.store.client import StoreBase, text, texts

__all__ = ["RefereeStore"]

# KEYS: referees   ARGV: max age (s). The replicas heard from within max age, by Redis's clock.
_FRESH = """
local t = redis.call('TIME')
return redis.call('ZRANGEBYSCORE', KEYS[1], t[1] + t[2] / 1e6 - tonumber(ARGV[1]), '+inf')
"""

# KEYS: referees, referee:{addr}:bots   ARGV: address, ttl (s), bot, free, bot, free, ...
_BEAT = """
local t = redis.call('TIME')
redis.call('ZADD', KEYS[1], t[1] + t[2] / 1e6, ARGV[1])
redis.call('DEL', KEYS[2])
if #ARGV > 2 then
  redis.call('HSET', KEYS[2], unpack(ARGV, 3))
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
return 1
"""


class RefereeStore(StoreBase):
    """The replicas' heartbeats and the bots connected to them."""

    def referees(self, max_age: float = 30.0) -> list[str]:
        """Replica addresses that sent a heartbeat within ``max_age`` seconds."""
        return texts(self.script(_FRESH)(keys=[self.keys.referees()], args=[max_age]))

    def publish_referee(self, address: str, free: Mapping[str, int], ttl: float) -> None:
        """A replica's heartbeat: it is alive, and each connected bot's free seats on it
        (forgotten after ``ttl`` seconds without a heartbeat)."""
        seats = [str(v) for bot, n in free.items() for v in (bot, n)]
        self.script(_BEAT)(keys=[self.keys.referees(), self.keys.referee_bots(address)],
                           args=[address, int(ttl), *seats])

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
