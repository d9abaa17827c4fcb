"""The connection to Redis and what every part of the store shares: the client, the key layout
(:mod:`sueca.arena.keys`, the only module that spells a key), the Lua scripts registered on
it, and the few helpers that read Redis's replies.

Responses are bytes (replays are binary); :func:`text` decodes the rest.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import overload

import redis
from redis.commands.core import Script

from sueca.arena.keys import Keys, default_keys
from sueca.arena.redisurl import masked
from sueca.arena.store.errors import StoreUnavailable

__all__ = ["connect", "text", "texts", "now", "entry_key", "StoreBase", "REDIS_HINT",
           "TRANSIENT_REDIS_ERRORS", "Entries", "RawHash"]

#: Errors that mean "Redis is not reachable right now" (worth a retry), not "bad request".
TRANSIENT_REDIS_ERRORS = (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError)

#: How to get a Redis on one machine, added to every "no Redis" message.
REDIS_HINT = (" (no Redis on this machine? `sueca-arena redis` runs one; `sueca-arena demo` "
              "runs the whole arena with its own)")

#: A stream read as redis-py returns it (its own annotation also allows the asyncio client's).
Entries = list[tuple[bytes, dict[bytes, bytes]]]
#: A hash as HGETALL returns it.
RawHash = Mapping[bytes | str, bytes | str]


def connect(url: str | None, timeout: float = 3.0) -> redis.Redis:
    """A client for ``url``, checked with a PING; :class:`StoreUnavailable` if it does not answer."""
    if not url:
        raise StoreUnavailable(f"no Redis URL: pass --redis URL or set SUECA_REDIS_URL{REDIS_HINT}")
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=timeout,
                                      socket_timeout=max(timeout, 10.0),
                                      health_check_interval=30)
    except ValueError as err:
        shown = masked(url)
        # redis-py's message may quote a piece of a malformed password: only without one
        why = str(err) if shown == url else ("expected redis://[user:password@]host:port/db, "
                                              "rediss://... or unix:///path/to.sock")
        raise StoreUnavailable(f"bad Redis URL {shown!r}: {why}") from None
    try:
        client.ping()
    except (redis.RedisError, OSError) as err:
        raise StoreUnavailable(f"cannot reach Redis at {masked(url)}: {err}{REDIS_HINT}") from None
    return client


@overload
def text(value: bytes | str) -> str: ...
@overload
def text(value: None) -> None: ...
@overload
def text(value: bytes | str | None) -> str | None: ...
def text(value: bytes | str | None) -> str | None:
    """A reply decoded (Redis answers bytes); None stays None."""
    return value.decode() if isinstance(value, bytes) else value


def texts(values: Iterable[object]) -> list[str]:
    """The members of a list reply (ZRANGE, SMEMBERS, LRANGE, ...) decoded."""
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


def now() -> str:
    """Unix time as the store writes it in a hash: seconds, to the millisecond, as text."""
    return f"{time.time():.3f}"


def entry_key(eid: str) -> tuple[int, int]:
    """A results-stream entry id (``ms-seq``) as a tuple that sorts as Redis orders ids."""
    ms, _, seq = eid.partition("-")
    return int(ms), int(seq or 0)


class StoreBase:
    """The client and the key layout every part of the store works through; one instance per
    process, safe to share between threads.

    ``r`` is the raw client: the store's own modules use it, tests use it to break things on
    purpose; every other module goes through the store's methods.
    """

    def __init__(self, client: redis.Redis, keys: Keys | None = None) -> None:
        self.r = client
        self.keys = keys or default_keys()
        self._scripts: dict[str, Script] = {}

    def script(self, source: str) -> Script:
        """The Lua ``source`` registered on this client (once: it runs by its SHA after)."""
        got = self._scripts.get(source)
        if got is None:
            got = self._scripts[source] = self.r.register_script(source)
        return got

    # -- the server ------------------------------------------------------------------------
    def ping(self) -> bool:
        """True when Redis answers; raises a redis error when it does not."""
        return bool(self.r.ping())

    def used_memory(self) -> int:
        """Bytes Redis has allocated (``INFO memory`` used_memory)."""
        return int(self.r.info("memory")["used_memory"])

    def command_calls(self) -> dict[str, int]:
        """Calls per command since the server started (``INFO commandstats``), e.g.
        ``{"hset": 12, ...}``: what a benchmark counts the league's writes with."""
        return {str(name).removeprefix("cmdstat_"): int(v["calls"])
                for name, v in self.r.info("commandstats").items()}

    def write_commands(self) -> set[str]:
        """The commands Redis flags as writes (its own ``COMMAND`` table)."""
        out = set()
        for name, info in self.r.command().items():
            if "write" in texts(info.get("flags", ())):
                out.add(text(name) if isinstance(name, bytes | str) else str(name))
        return out

    def close(self) -> None:
        """Close the client's connections: the end of a short-lived store."""
        self.r.close()

    def key_sizes(self, keys: Iterable[str]) -> list[int]:
        """Bytes each key takes in Redis (``MEMORY USAGE``, exact; 0 for a missing key), one
        round trip."""
        pipe = self.r.pipeline(transaction=False)
        for key in keys:
            pipe.memory_usage(key, samples=0)
        return [int(x or 0) for x in pipe.execute()]
