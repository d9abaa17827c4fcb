"""The connection to Redis and what every part of the store shares: the client, the key layout
(:mod:`sueca.arena.keys`, the only module that spells a key), the Lua scripts registered on
it, and the few helpers that read Redis's replies.

Responses are bytes (replays are binary); :func:`text` decodes the rest.

Behind Sentinel (a ``redis+sentinel://`` URL, :mod:`sueca.arena.redisurl`) the client is
redis-py's ``Sentinel.master_for``: every new connection asks the sentinels for the current
primary, so a client follows a failover (the connections to the lost primary fail once, as a
transient error, and the next ones reach the promoted replica). There a write the store calls
done must be on a replica too (:meth:`StoreBase.durable`, Redis's ``WAIT``): the promoted
replica then has every result the arena acknowledged.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterable, Mapping
from typing import Any, overload

import redis
from redis.backoff import ExponentialWithJitterBackoff, NoBackoff
from redis.commands.core import Script
from redis.retry import Retry
from redis.sentinel import Sentinel, SentinelConnectionPool, SentinelManagedConnection

from sueca.arena.keys import Keys, default_keys
from sueca.arena.redisurl import is_sentinel, masked, sentinel_parts
from sueca.arena.store.errors import StoreUnavailable

__all__ = ["connect", "replicated", "FollowingConnection", "KEEPALIVE", "sentinel_node_options",
           "sentinel_view",
           "NotReplicated", "REPLICA_WAIT_MS", "text", "texts", "now", "entry_key", "StoreBase",
           "REDIS_HINT", "TRANSIENT_REDIS_ERRORS", "Entries", "RawHash"]

#: Errors that mean "Redis is not reachable right now" (worth a retry), not "bad request".
TRANSIENT_REDIS_ERRORS = (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError)

#: How to get a Redis on one machine, added to every "no Redis" message.
REDIS_HINT = (" (no Redis on this machine? `sueca-arena redis` runs one; `sueca-arena demo` "
              "runs the whole arena with its own)")

#: A stream read as redis-py returns it (its own annotation also allows the asyncio client's).
Entries = list[tuple[bytes, dict[bytes, bytes]]]
#: A hash as HGETALL returns it.
RawHash = Mapping[bytes | str, bytes | str]


#: how long a write behind Sentinel waits for a replica to have it before it counts as not done
REPLICA_WAIT_MS = 2000


#: TCP settings of every connection to a Redis behind Sentinel, where losing a host is the
#: failure planned for: a server that vanishes without a word (power, cable) is noticed within
#: about 5 s, on an idle connection (keepalive probes) as on one with data in flight
#: (TCP_USER_TIMEOUT, ms), rather than after the kernel's minutes; the client then asks the
#: sentinels again. Options this platform lacks are left out.
KEEPALIVE: dict[int, int] = {getattr(socket, name): value for name, value in (
    ("TCP_KEEPIDLE", 2), ("TCP_KEEPINTVL", 1), ("TCP_KEEPCNT", 3), ("TCP_USER_TIMEOUT", 5000))
    if hasattr(socket, name)}




def sentinel_node_options() -> dict[str, Any]:  # Any: redis-py's keyword arguments
    """How a client talks to the sentinels themselves: a sentinel that does not answer within
    a second is skipped for the next one (no retries of its own: the client asks the others)."""
    return {"socket_connect_timeout": 1.0, "socket_timeout": 1.0, "retry": Retry(NoBackoff(), 0),
            "socket_keepalive": True, "socket_keepalive_options": KEEPALIVE}


class NotReplicated(redis.TimeoutError):
    """No replica confirmed a write within REPLICA_WAIT_MS: the write is not acknowledged (a
    timeout, so every caller retries it as it retries a Redis that is away)."""


def connect(url: str | None, timeout: float = 3.0) -> redis.Redis:
    """A client for ``url``, checked with a PING; :class:`StoreUnavailable` if it does not answer."""
    if not url:
        raise StoreUnavailable(f"no Redis URL: pass --redis URL or set SUECA_REDIS_URL{REDIS_HINT}")
    options: dict[str, Any] = {  # Any: redis-py's keyword arguments
        "socket_connect_timeout": timeout, "socket_timeout": max(timeout, 10.0),
        "health_check_interval": 30}
    try:
        client = _sentinel_client(url, options) if is_sentinel(url) else \
            redis.Redis.from_url(url, **options)
    except ValueError as err:
        shown = masked(url)
        # redis-py's message may quote a piece of a malformed password: only without one
        why = str(err) if shown == url or is_sentinel(url) else (
            "expected redis://[user:password@]host:port/db, rediss://... or "
            "unix:///path/to.sock")
        raise StoreUnavailable(f"bad Redis URL {shown!r}: {why}") from None
    try:
        client.ping()
    except (redis.RedisError, OSError) as err:
        raise StoreUnavailable(f"cannot reach Redis at {masked(url)}: {err}{REDIS_HINT}") from None
    return client


def _sentinel_client(url: str, options: dict[str, Any]) -> redis.Redis:  # Any: see connect
    """The primary's client through the sentinels of ``url`` (ValueError: not such a URL).

    A lost primary's host is noticed in seconds (:data:`KEEPALIVE`); a command that met it is
    retried a few times, each on a new connection to whichever primary the sentinels name
    then (they promote a replica within seconds); see :func:`sentinel_node_options`."""
    parts = sentinel_parts(url)
    # (redis-py leaves Sentinel unannotated)
    sentinels = Sentinel(parts.hosts,  # type: ignore[no-untyped-call]
                         sentinel_kwargs=sentinel_node_options())
    client: redis.Redis = sentinels.master_for(  # type: ignore[no-untyped-call]
        parts.service, db=parts.db, username=parts.username, password=parts.password,
        socket_keepalive=True, socket_keepalive_options=KEEPALIVE,
        connection_class=FollowingConnection,
        retry=Retry(ExponentialWithJitterBackoff(base=0.2, cap=2.0), 5), **options)
    return client


class FollowingConnection(SentinelManagedConnection):
    """redis-py's connection to the primary a Sentinel names, asking the sentinels again on
    every reconnect. redis-py's own reconnects a dropped connection (``send_packed_command``
    calls ``connect_check_health``) to the address it last had: after a failover, the lost
    primary's, until its retries run out."""

    def connect_check_health(self, check_health: bool = True,
                             retry_socket_connect: bool = True) -> None:
        if not self._sock and self.connection_pool.is_master:
            self.host, self.port = self.connection_pool.get_master_address()
        super().connect_check_health(check_health=check_health,
                                     retry_socket_connect=retry_socket_connect)


def sentinel_view(url: str) -> list[tuple[str, str | None, str]]:
    """What each sentinel of ``url`` (a ``redis+sentinel://`` one) says of its service:
    ``(sentinel, primary host:port or None, why not)``, asked one by one."""
    parts = sentinel_parts(url)
    out: list[tuple[str, str | None, str]] = []
    for host, port in parts.hosts:
        client = redis.Redis(host, port, **sentinel_node_options())
        try:
            state = client.sentinel_master(parts.service)
            if not isinstance(state, dict):  # (redis-py types the reply dict | bool)
                raise redis.ResponseError(f"unexpected reply {state!r}")
            flags = str(state.get("flags", ""))
            down = "s_down" in flags or "o_down" in flags
            out.append((f"{host}:{port}", None if down else f"{state['ip']}:{state['port']}",
                        f"it calls the primary down ({flags})" if down else ""))
        except (redis.RedisError, OSError) as err:
            out.append((f"{host}:{port}", None, str(err)))
        finally:
            client.close()
    return out


def replicated(client: redis.Redis) -> bool:
    """Whether ``client`` reaches its Redis through Sentinel, where a write is done only once
    a replica has it too."""
    return isinstance(client.connection_pool, SentinelConnectionPool)


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
        #: replicas a write must reach before it is done (:meth:`durable`): one behind Sentinel
        self.replicas = 1 if replicated(client) else 0

    def durable(self, script: Script, keys: list[str],
                args: list[str | bytes]) -> Any:  # Any: the script's reply
        """Run ``script`` and return its reply; behind Sentinel only once a replica has its
        writes (``WAIT 1``, in the same round trip on the same connection), else
        :class:`NotReplicated`. A failover promotes a replica: one that confirmed the write
        has it; a write no replica confirmed may be lost with its primary, so it is not called
        done (the caller retries it, and a script that is idempotent writes it once)."""
        if not self.replicas:
            return script(keys=keys, args=args)
        pipe = self.r.pipeline(transaction=False)
        script(keys=keys, args=args, client=pipe)
        pipe.wait(self.replicas, REPLICA_WAIT_MS)
        reply, copies = pipe.execute()
        if int(copies) < self.replicas:
            raise NotReplicated(f"no replica confirmed the write within {REPLICA_WAIT_MS} ms")
        return reply

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

    def replication(self) -> dict[str, Any]:  # Any: INFO's values (numbers, text, dicts)
        """``INFO replication``: ``role``, ``connected_slaves``, one ``slaveN`` dict (ip, port,
        state, offset, lag) per replica."""
        return dict(self.r.info("replication"))

    def clock(self) -> float:
        """Redis's clock (``TIME``) in seconds since the epoch: the one clock every host of a
        league reads alike, which heartbeats are timed by and other clocks are judged against."""
        secs, micros = self.r.time()
        return float(secs) + micros / 1e6

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
