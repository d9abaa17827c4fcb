"""The league's records in Redis: tournaments, matches and their status, the results log and
compressed replays. Key names come from :mod:`sueca.arena.keys` only.

Exactly-once recording: a result is written by one Lua script that checks the idempotency key
``recorded:{id}``, appends to the results stream, stores the replay and marks the match done, all
atomically (Redis runs a script alone). Whoever runs a match twice — a re-delivered task, two
racing workers — gets ``(False, first_entry_id)`` the second time and nothing is written.

Every other status change goes through a script too, so a late duplicate can never turn a
``done`` match back into ``running`` or ``failed``.

Leases: an attempt that plays a match holds ``lease:{id}`` (its owner, with a TTL of
:data:`LEASE_SECONDS` that the owner's heartbeat renews), taken atomically with the start of the
attempt. A second delivery of the match finds the lease and stands down (:class:`LeaseHeld`)
instead of playing the match again while the first attempt is alive; when the owner dies its
lease lapses within seconds and :mod:`sueca.arena.recovery` re-queues the match. Every match
that is queued or running is in the ``inflight`` set, the recovery's work list.
"""

from __future__ import annotations

import json
import logging
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from enum import StrEnum
from typing import Any, cast

import redis

from sueca.arena import botstats
from sueca.arena.keys import Keys, default_keys
from sueca.arena.records import BotHealth, MatchRecord, Progress, ResultEntry, TournamentRecord
from sueca.arena.redisurl import masked

__all__ = ["Store", "StoreError", "StoreUnavailable", "TournamentConflict", "LeaseHeld",
           "UnknownMatch", "connect",
           "LEASE_SECONDS", "HEARTBEAT_SECONDS", "MatchStatus",
           "PENDING", "QUEUED", "RUNNING", "DONE", "FAILED", "TRANSIENT_REDIS_ERRORS"]


class MatchStatus(StrEnum):
    """A league match's ``status`` field in Redis (the value is what is stored)."""

    PENDING = "pending"  # stored, not yet handed to a worker
    QUEUED = "queued"    # a task for it is on the Celery queue
    RUNNING = "running"  # a referee is playing it
    DONE = "done"        # its result is recorded (exactly once)
    FAILED = "failed"    # given up for a reason that is not a bot's fault (see ``error``)


PENDING, QUEUED, RUNNING, DONE, FAILED = MatchStatus

#: Errors that mean "Redis is not reachable right now" (worth a retry), not "bad request".
TRANSIENT_REDIS_ERRORS = (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError)


#: A stream read as redis-py returns it (its own annotation also allows the asyncio client's).
_Entries = list[tuple[bytes, dict[bytes, bytes]]]

log = logging.getLogger("sueca.arena.store")

#: How to get a Redis on one machine, added to every "no Redis" message.
REDIS_HINT = (" (no Redis on this machine? `sueca-arena redis` runs one; `sueca-arena demo` "
              "runs the whole arena with its own)")


class StoreError(Exception):
    """A problem with the records that the user can act on; the message says what."""


class StoreUnavailable(StoreError):
    """Redis cannot be reached at the given URL."""


class TotalsLost(StoreError):
    """The per-bot totals cannot be folded again: retention trimmed the results log behind a
    checkpoint that kept none (made by an older version)."""


class TournamentConflict(StoreError):
    """A tournament id that already exists with a different specification."""


class UnknownMatch(StoreError):
    """No match with this id is stored."""

    def __init__(self, mid: str) -> None:
        super().__init__(f"unknown match {mid!r}")
        self.mid = mid


class LeaseHeld(StoreError):
    """Another attempt holds the match's lease: it is being played elsewhere right now."""

    def __init__(self, mid: str, owner: str) -> None:
        super().__init__(f"match {mid!r} is being played by {owner!r}")
        self.mid, self.owner = mid, owner


#: Seconds a lease lives without a heartbeat: how long a dead owner keeps its match (the
#: re-run follows within about this plus the recovery's confirmation delay). Long enough that a
#: live owner starved of CPU for a few seconds on a busy host does not lose its match.
LEASE_SECONDS = 10.0
#: Seconds between an owner's heartbeats (renewals of its lease).
HEARTBEAT_SECONDS = 2.0


def connect(url: str | None, timeout: float = 3.0) -> redis.Redis:
    """A client for ``url``, checked with a PING; :class:`StoreUnavailable` if it does not answer.

    Responses are bytes (replays are binary); :func:`text` decodes the rest.
    """
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


def text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


def _now() -> str:
    return f"{time.time():.3f}"


# KEYS: recorded, results, replay, match, lease, inflight, stats index, stats:bot:{b} ...
# ARGV: match id, result JSON, replay blob, now, end,
#       JSON [[bot, {field: increment}, slowest turn us], ...] in the order of the stats keys,
#       '1' when the match must still exist, the result's unix time ('' if it has none)
# {0, ''}: a league match that is gone, i.e. recorded and then forgotten by retention (whose
# _FORGET drops a ladder match's idempotency key with it): a worker that stalled past the
# cutoff must not record it a second time.
_RECORD = """
local prev = redis.call('GET', KEYS[1])
if prev then return {0, prev} end
if ARGV[7] == '1' and redis.call('EXISTS', KEYS[4]) == 0 then return {0, ''} end
local id = redis.call('XADD', KEYS[2], '*', 'match', ARGV[1], 'data', ARGV[2])
redis.call('SET', KEYS[1], id)
if ARGV[3] ~= '' then redis.call('SET', KEYS[3], ARGV[3]) end
redis.call('HSET', KEYS[4], 'status', 'done', 'result', id, 'end', ARGV[5],
           'updated', ARGV[4], 'error', '')
redis.call('DEL', KEYS[5])
redis.call('ZREM', KEYS[6], ARGV[1])
for i, bot in ipairs(cjson.decode(ARGV[6])) do
  local key = KEYS[7 + i]
  redis.call('SADD', KEYS[7], bot[1])
  for field, n in pairs(bot[2]) do redis.call('HINCRBY', key, field, n) end
  if bot[3] > tonumber(redis.call('HGET', key, 'max_us') or '0') then
    redis.call('HSET', key, 'max_us', bot[3])
  end
  if ARGV[8] ~= '' and tonumber(ARGV[8]) > tonumber(redis.call('HGET', key, 'last') or '0') then
    redis.call('HSET', key, 'last', ARGV[8])  -- as a rebuild has it (botstats.Totals.add)
  end
end
return {1, id}
"""

# KEYS: match, recorded, inflight   ARGV: status, now, match id, field, value, ...
# Refuses (0) once the match is recorded; -1 for an unknown match.
_SET_STATUS = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'updated', ARGV[2], unpack(ARGV, 4))
if ARGV[1] == 'queued' or ARGV[1] == 'running' then
  redis.call('ZADD', KEYS[3], 'NX', ARGV[2], ARGV[3])
else
  redis.call('ZREM', KEYS[3], ARGV[3])
end
return 1
"""

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

# KEYS: lease   ARGV: owner.   Compare-and-delete: only the owner ends its lease.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# KEYS: match, recorded, lease, inflight   ARGV: now, stale_before, match id
# Claim a match for queueing: only pending or failed ones, or queued/running ones that have not
# moved since ``stale_before`` (their task was lost) and whose lease is not held. Two
# schedulers: exactly one claim wins.
_CLAIM = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local st = redis.call('HGET', KEYS[1], 'status')
if not st then return 0 end
local ok = (st == 'pending' or st == 'failed')
if not ok and (st == 'queued' or st == 'running') then
  local up = tonumber(redis.call('HGET', KEYS[1], 'updated') or '0')
  ok = up < tonumber(ARGV[2]) and redis.call('EXISTS', KEYS[3]) == 0
end
if not ok then return 0 end
redis.call('HSET', KEYS[1], 'status', 'queued', 'updated', ARGV[1], 'attempts', 0, 'error', '')
redis.call('ZADD', KEYS[4], ARGV[1], ARGV[3])
return 1
"""

# KEYS: match, recorded, lease, inflight   ARGV: now, updated as observed, match id, reason
# The recovery re-queues a match whose task vanished: only if it is still queued or running as
# observed (``updated`` unchanged), unrecorded, and nobody holds its lease. Keeps ``attempts``:
# a match that kills every worker it meets still gives up after the attempt limit.
_REQUEUE = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
local f = redis.call('HMGET', KEYS[1], 'status', 'updated')
if not f[1] or (f[1] ~= 'queued' and f[1] ~= 'running') or f[2] ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'status', 'queued', 'updated', ARGV[1], 'error', ARGV[4])
redis.call('ZADD', KEYS[4], ARGV[1], ARGV[3])
return 1
"""

# KEYS: match, matches, recorded   ARGV: now, match id, field, value, ...   Creates only a new
# match: not one whose result is recorded and whose hash retention archived (a re-run
# tournament must not find it pending again).
_CREATE_MATCH = """
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'status', 'pending', 'attempts', 0, 'updated', ARGV[1],
           unpack(ARGV, 3))
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[2])
return 1
"""


# KEYS: match, replay, recorded, lease, inflight, matches   ARGV: match id
# Retention forgets a recorded match that nobody is playing: 1 removed, 0 left alone. The
# idempotency key goes too unless a tournament may create the match again (see forget_matches).
_FORGET = """
if redis.call('EXISTS', KEYS[3]) == 0 or redis.call('EXISTS', KEYS[4]) == 1
   or redis.call('ZSCORE', KEYS[5], ARGV[1]) then return 0 end
local t = redis.call('HGET', KEYS[1], 'tournament')
if t == 'ladder' or t == '' then redis.call('DEL', KEYS[3]) end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[6], ARGV[1])
return 1
"""


class Store:
    """Typed access to the records; one instance per process, safe to share between threads."""

    def __init__(self, client: redis.Redis, keys: Keys | None = None) -> None:
        self.r = client
        self.keys = keys or default_keys()
        self._record = client.register_script(_RECORD)
        self._set_status = client.register_script(_SET_STATUS)
        self._start = client.register_script(_START)
        self._claim = client.register_script(_CLAIM)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._requeue = client.register_script(_REQUEUE)
        self._create = client.register_script(_CREATE_MATCH)
        self._stats_ready = False  # ensure_bot_stats found them folded
        self._forget = client.register_script(_FORGET)

    @classmethod
    def from_url(cls, url: str | None, keys: Keys | None = None) -> Store:
        return cls(connect(url), keys)

    # -- matches ---------------------------------------------------------------------------
    def create_match(self, mid: str, spec: Mapping[str, Any], tournament: str = "",
                     pair: str = "") -> bool:
        """Store a new match (status pending); False, and nothing changed, if it exists."""
        fields = ["spec", json.dumps(dict(spec), separators=(",", ":")),
                  "tournament", tournament, "pair", pair]
        return bool(self._create(keys=[self.keys.match(mid), self.keys.matches(),
                                       self.keys.recorded(mid)],
                                 args=[_now(), mid, *fields]))

    def _hash(self, key: str, ident: str, count: str) -> dict[str, Any] | None:
        """The hash at ``key`` decoded, with ``id``, ``spec`` parsed and ``count`` an int."""
        raw = self.r.hgetall(key)
        return _decoded(raw, ident, count) if raw else None

    def match(self, mid: str) -> MatchRecord | None:
        return cast("MatchRecord | None", self._hash(self.keys.match(mid), mid, "attempts"))

    def statuses(self, mids: Sequence[str]) -> list[str | None]:
        """Each match's status; ``done`` for a recorded one whose hash retention archived."""
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            pipe.hget(self.keys.match(mid), "status")
            pipe.exists(self.keys.recorded(mid))
        got = pipe.execute()
        return [DONE if rec else text(st) for st, rec in zip(got[::2], got[1::2])]

    def claim(self, mid: str, stale_after: float = 900.0) -> bool:
        """Atomically mark a match queued if nobody has it: True means "enqueue it now"."""
        now = time.time()
        return bool(self._claim(keys=self._lease_keys(mid),
                                args=[f"{now:.3f}", f"{now - stale_after:.3f}", mid]))

    def _lease_keys(self, mid: str) -> list[str]:
        return [self.keys.match(mid), self.keys.recorded(mid), self.keys.lease(mid),
                self.keys.inflight()]

    def start_attempt(self, mid: str, referee: str = "", owner: str | None = None,
                      task: str = "", lease: float = LEASE_SECONDS) -> int:
        """Count an attempt, mark the match running and take its lease for ``owner``; -1 when
        it is already recorded, :class:`LeaseHeld` while another owner's lease is alive,
        :class:`UnknownMatch` for an id never stored."""
        return self.begin_attempt(mid, referee, owner, task, lease)[0]

    def begin_attempt(self, mid: str, referee: str = "", owner: str | None = None,
                      task: str = "", lease: float = LEASE_SECONDS,
                      ) -> tuple[int, MatchRecord | None]:
        """:meth:`start_attempt` and the match as :meth:`match` reads it (status running, the
        attempt counted), in one round trip: ``(attempt, match)``, or ``(-1, None)`` when it is
        already recorded."""
        owner = owner or default_owner()
        out = self._start(keys=self._lease_keys(mid),
                          args=[_now(), referee, owner, int(lease * 1000), task, mid])
        n = int(out[0])
        if n == -2:
            raise UnknownMatch(mid)
        if n == -3:
            raise LeaseHeld(mid, text(out[1]))
        if n < 0:
            return n, None
        flat = out[1]
        return n, cast(MatchRecord, _decoded(dict(zip(flat[::2], flat[1::2])), mid, "attempts"))

    def renew_lease(self, mid: str, owner: str, lease: float = LEASE_SECONDS) -> bool:
        """The owner's heartbeat; False when another owner has taken the match over."""
        return bool(self._renew(keys=[self.keys.lease(mid), self.keys.recorded(mid)],
                                args=[owner, int(lease * 1000)]))

    def release_lease(self, mid: str, owner: str) -> bool:
        return bool(self._release(keys=[self.keys.lease(mid)], args=[owner]))

    def requeue_lost(self, mid: str, observed_updated: str, reason: str) -> bool:
        """Mark a match whose task vanished queued again (see ``_REQUEUE``); True means "send
        its task now"."""
        return bool(self._requeue(keys=self._lease_keys(mid),
                                  args=[_now(), observed_updated, mid, reason[:2000]]))

    def inflight(self) -> list[str]:
        """Every match id queued or running (oldest first)."""
        return [text(m) for m in self.r.zrange(self.keys.inflight(), 0, -1)]

    def set_status(self, mid: str, status: str, **fields: Any) -> bool:
        """Change status (and fields) unless the match is recorded; False when refused."""
        args: list[Any] = [status, _now(), mid]
        for k, v in fields.items():
            args += [k, "" if v is None else str(v)]
        done = int(self._set_status(keys=[self.keys.match(mid), self.keys.recorded(mid),
                                          self.keys.inflight()], args=args))
        if done == -1:
            raise StoreError(f"unknown match {mid!r}")
        return done == 1

    def record_failure(self, mid: str, reason: str) -> bool:
        """The match failed for good (not a bot's fault): status failed with the reason."""
        return self.set_status(mid, FAILED, error=reason[:2000])

    def is_recorded(self, mid: str) -> bool:
        return bool(self.r.exists(self.keys.recorded(mid)))

    def record_result(self, mid: str, result: ResultEntry,
                      replay: Mapping[str, Any] | None = None,
                      must_exist: bool = False) -> tuple[bool, str]:
        """Append ``result`` to the results log and store the replay, exactly once per match.

        Returns ``(True, entry id)`` for the write that counted and ``(False, entry id of the
        first)`` for every later one. With ``must_exist`` (the worker's, whose match was
        created first) a match whose hash is gone is not recorded: ``(False, "")``. Retention
        forgets a recorded ladder match with its idempotency key, so a late write for it would
        otherwise count a second time.
        """
        data = json.dumps(dict(result), separators=(",", ":"))
        when = result.get("time")
        blob = compress(replay) if replay is not None else b""
        incs = [[bot, {f: n for f, n in inc.items() if f != "max_us"}, inc["max_us"]]
                for bot, inc in botstats.increments(
                    [str(b) for b in result.get("seats") or ()],
                    botstats.stats_of(result, replay)).items()]
        new, entry = self._record(
            keys=[self.keys.recorded(mid), self.keys.results(), self.keys.replay(mid),
                  self.keys.match(mid), self.keys.lease(mid), self.keys.inflight(),
                  self.keys.bot_stats_index(), *(self.keys.bot_stats(str(b)) for b, _, _ in incs)],
            args=[mid, data, blob, _now(), str(result.get("end", "")),
                  json.dumps(incs, separators=(",", ":")), "1" if must_exist else "",
                  repr(float(when)) if isinstance(when, int | float) else ""])
        return bool(new), text(entry)

    # -- per-bot health (sueca.arena.botstats) ------------------------------------------------
    def bot_stats(self, names: Sequence[str]) -> dict[str, BotHealth]:
        """Each bot's health totals (:func:`sueca.arena.botstats.summary`), one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for name in names:
            pipe.hgetall(self.keys.bot_stats(name))
        return {name: botstats.summary(raw) for name, raw in zip(names, pipe.execute())}

    def ensure_bot_stats(self) -> bool:
        """Fold the health totals from the log once per arena (:meth:`rebuild_bot_stats`): an
        arena recorded by an older version has results but no totals. True when it folded;
        after that one GET per process."""
        if self._stats_ready:
            return False
        if self.r.exists(self.keys.bot_stats_format()):
            self._stats_ready = True
            return False
        try:
            self.rebuild_bot_stats()
        except TotalsLost as err:  # no later try can do better: said once, not retried
            log.warning("per-bot totals not rebuilt: %s", err)
            self._stats_ready = True
            return False
        except StoreError:  # a busy league: the next recorded result tries again
            return False
        self._stats_ready = True
        return True

    def rebuild_bot_stats(self, attempts: int = 5) -> int:
        """Fold every bot's health totals again from the results log (the stats of an entry
        that has none are read from its replay, :func:`sueca.arena.botstats.stats_of`) and
        swap them in at once; returns the number of bots. A result recorded or a checkpoint
        taken meanwhile makes the swap fail (WATCH) and the fold start over.

        Once retention trimmed the log, the fold starts from the totals the ratings checkpoint
        holds (:func:`sueca.arena.ratings.checkpoint` keeps them with the ratings), so totals
        lost from Redis come back exact. A checkpoint taken before it kept them has none: then
        the rebuild is refused (a fold of the tail alone would undercount)."""
        cp_key = self.keys.ratings_checkpoint()
        for _ in range(attempts):
            cut, start = (text(v) for v in self.r.hmget(cp_key, "cursor", "bot_stats"))
            if cut is not None and start is None:
                raise TotalsLost(f"retention trimmed the results log through entry {cut} with a "
                                 "checkpoint that holds no bot totals (made by an older "
                                 "version): the trimmed entries cannot be counted again")
            last = self.r.xrevrange(self.keys.results(), "+", "-", count=1)
            upto = text(last[0][0]) if last else None
            totals = botstats.Totals()
            if start is not None:
                totals.bots = json.loads(start)
            if upto is not None:
                self.fold_bot_stats(totals, (res for _, res in self.results(after=cut,
                                                                            through=upto)))
            with self.r.pipeline() as pipe:
                try:
                    pipe.watch(self.keys.results(), cp_key)  # type: ignore[no-untyped-call]
                    now = pipe.xrevrange(self.keys.results(), "+", "-", count=1)
                    if (text(now[0][0]) if now else None) != upto \
                            or text(pipe.hget(cp_key, "cursor")) != cut:
                        continue
                    old = [text(b) for b in pipe.smembers(self.keys.bot_stats_index())]
                    pipe.multi()
                    pipe.delete(self.keys.bot_stats_index(),
                                *(self.keys.bot_stats(b) for b in old))
                    for bot, row in totals.bots.items():
                        pipe.hset(self.keys.bot_stats(bot), mapping=row)  # type: ignore[arg-type]
                    if totals.bots:
                        pipe.sadd(self.keys.bot_stats_index(), *totals.bots)
                    pipe.set(self.keys.bot_stats_format(), "1")
                    pipe.execute()
                    return len(totals.bots)
                except redis.WatchError:
                    continue
        raise StoreError(f"results kept arriving: the bot stats could not be rebuilt in "
                         f"{attempts} attempts; try again when the league is quieter")

    def fold_bot_stats(self, totals: botstats.Totals, entries: Iterable[ResultEntry]) -> int:
        """Add results-log entries to ``totals``, 500 at a time: the replays of those without
        stats are read in one round trip per batch (an entry whose replay retention already
        archived adds its games and faults, but no moves or renúncias). Returns how many."""
        batch: list[ResultEntry] = []
        n = 0
        for res in entries:
            batch.append(res)
            n += 1
            if len(batch) >= 500:
                self._fold_batch(totals, batch)
                batch = []
        self._fold_batch(totals, batch)
        return n

    def _fold_batch(self, totals: botstats.Totals, batch: list[ResultEntry]) -> None:
        old = [r for r in batch if not isinstance(r.get("stats"), list)]
        pipe = self.r.pipeline(transaction=False)
        for res in old:
            pipe.get(self.keys.replay(str(res.get("match_id"))))
        replays = {id(r): decompress(b) for r, b in zip(old, pipe.execute()) if b is not None}
        for res in batch:
            when = res.get("time")
            totals.add([str(b) for b in res.get("seats") or ()],
                       botstats.stats_of(res, replays.get(id(res))),
                       float(when) if isinstance(when, int | float) else None)

    def replay(self, mid: str) -> dict[str, Any] | None:
        blob = self.r.get(self.keys.replay(mid))
        return None if blob is None else decompress(cast(bytes, blob))

    def recent_matches(self, limit: int = 20, tournament: str | None = None) -> list[MatchRecord]:
        """Newest first; with ``tournament``, that tournament's matches in schedule order."""
        if tournament is not None:
            mids = self.tournament_matches(tournament)
        else:
            mids = [text(m) for m in self.r.zrevrange(self.keys.matches(), 0, limit - 1)]
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            pipe.hgetall(self.keys.match(mid))
        out = []
        for mid, raw in zip(mids, pipe.execute()):
            if not raw:
                continue
            out.append(cast(MatchRecord, _decoded(raw, mid, "attempts")))
        return out

    # -- results log -----------------------------------------------------------------------
    def results(self, after: str | None = None, batch: int = 1000,
                through: str | None = None) -> Iterator[tuple[str, ResultEntry]]:
        """Every entry of the results log in order (after entry id ``after``, exclusive; up to
        ``through``, inclusive). Entries up to the ratings checkpoint may have been trimmed
        (:meth:`trimmed_through`)."""
        start = "-" if after is None else f"({after}"
        while True:
            chunk = cast(_Entries, self.r.xrange(self.keys.results(), start, through or "+",
                                                 count=batch))
            for entry, fields in chunk:
                eid = text(entry)
                yield eid, json.loads(fields[b"data"])
            if len(chunk) < batch:
                return
            start = f"({text(chunk[-1][0])}"

    def result_of(self, mid: str) -> ResultEntry | None:
        eid = self.r.get(self.keys.recorded(mid))
        if eid is None:
            return None
        eid = text(eid)
        rows = cast(_Entries, self.r.xrange(self.keys.results(), eid, eid))
        return cast(ResultEntry, json.loads(rows[0][1][b"data"])) if rows else None

    def results_count(self) -> int:
        return int(self.r.xlen(self.keys.results()))

    def trimmed_through(self) -> str | None:
        """The last results-log entry trimmed by retention (entries up to it are gone from
        Redis, folded into the ratings checkpoint and archived or dropped), or None."""
        return cast("str | None", text(self.r.hget(self.keys.ratings_checkpoint(), "cursor")))

    def last_result_before(self, ms: int) -> str | None:
        """The id of the last results-log entry written before unix time ``ms`` (milliseconds)."""
        rows = self.r.xrevrange(self.keys.results(), f"{ms - 1}-18446744073709551615", "-",
                                count=1)
        return text(rows[0][0]) if rows else None

    # -- retention -------------------------------------------------------------------------
    def recorded_before(self, ms: int, batch: int = 5000) -> list[tuple[str, str]]:
        """``(match id, results entry id)`` of every match still stored whose result was
        recorded before unix time ``ms`` (milliseconds), oldest created first. A match cannot
        be recorded before it was created, so only ``matches`` scored before ``ms`` are read."""
        out: list[tuple[str, str]] = []
        offset = 0
        while True:
            mids = [text(m) for m in self.r.zrangebyscore(self.keys.matches(), "-inf",
                                                          ms / 1000.0, start=offset, num=batch)]
            if not mids:
                return out
            offset += len(mids)
            pipe = self.r.pipeline(transaction=False)
            for mid in mids:
                pipe.get(self.keys.recorded(mid))
            for mid, eid in zip(mids, pipe.execute()):
                eid = text(eid)
                if eid is not None and int(eid.partition("-")[0]) < ms:
                    out.append((mid, eid))

    def archive_rows(self, mids: Sequence[str]) -> list[tuple[dict[str, str], bytes | None]]:
        """Each match's hash (decoded; empty if gone) and raw replay blob (None if none)."""
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            pipe.hgetall(self.keys.match(mid))
            pipe.get(self.keys.replay(mid))
        got = pipe.execute()
        return [({text(k): text(v) for k, v in h.items()}, blob)
                for h, blob in zip(got[::2], got[1::2])]

    def forget_matches(self, mids: Sequence[str]) -> int:
        """Delete the hash and replay of recorded matches. A tournament's match keeps
        ``recorded:{id}``, the idempotency key (~100 bytes), so a re-run of the tournament
        never creates and plays it again; a ladder match (or one of no tournament) loses it
        too: nothing creates its id again, a late task for it finds no match and gives up
        (:func:`sueca.arena.match_job.play_and_record`), and one that was mid-play finds no
        match to record (``record_result(must_exist=True)``). A match that is not recorded,
        is in flight or leased is left alone. Returns how many were removed."""
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            self._forget(keys=[self.keys.match(mid), self.keys.replay(mid),
                               self.keys.recorded(mid), self.keys.lease(mid),
                               self.keys.inflight(), self.keys.matches()],
                         args=[mid], client=pipe)
        return sum(int(x) for x in pipe.execute())

    # -- tournaments -----------------------------------------------------------------------
    def create_tournament(
            self, tid: str, spec: Mapping[str, Any],
            schedule: Callable[[str, Mapping[str, Any]], Sequence[Mapping[str, Any]]],
            same: Callable[[Mapping[str, Any], Mapping[str, Any]], bool] | None = None,
    ) -> tuple[bool, dict[str, Any]]:
        """Store a tournament and its matches; returns (created, the stored spec).

        ``schedule(tid, spec)`` gives the matches, ``[{"id", "spec", "pair"}]``. If the id exists,
        ``same(stored, spec)`` must hold (else :class:`TournamentConflict`) and the schedule is
        rebuilt from the *stored* spec, whose secret fixes the seeds. Safe to race and to
        re-run: the first writer's spec wins and an existing match is never overwritten, so a
        re-run never resets a recorded result.
        """
        key = self.keys.tournament(tid)
        spec_json = json.dumps(dict(spec), sort_keys=True, separators=(",", ":"))
        created = bool(self.r.hsetnx(key, "spec", spec_json))
        stored = dict(spec) if created else json.loads(text(self.r.hget(key, "spec")))
        if not created and not (same or (lambda a, b: a == b))(stored, spec):
            raise TournamentConflict(
                f"tournament {tid!r} already exists with a different specification "
                f"({_spec_diff(stored, dict(spec))}): give `--id {tid}` alone to resume it "
                f"as stored, or choose another --id")
        matches = list(schedule(tid, stored))
        for m in matches:
            self.create_match(m["id"], m["spec"], tournament=tid, pair=m.get("pair", ""))
        ids = [m["id"] for m in matches]
        if created or self.tournament_matches(tid) != ids:
            pipe = self.r.pipeline()
            pipe.delete(self.keys.tournament_matches(tid))
            if ids:
                pipe.rpush(self.keys.tournament_matches(tid), *ids)
            pipe.hset(key, mapping={"total": len(ids), "status": "created"})
            pipe.hsetnx(key, "created", _now())
            pipe.zadd(self.keys.tournaments(), {tid: time.time()}, nx=True)
            pipe.execute()
        return created, stored

    def tournament(self, tid: str) -> TournamentRecord | None:
        return cast("TournamentRecord | None", self._hash(self.keys.tournament(tid), tid, "total"))

    def tournament_matches(self, tid: str) -> list[str]:
        return [text(m) for m in self.r.lrange(self.keys.tournament_matches(tid), 0, -1)]

    def set_tournament_status(self, tid: str, status: str) -> None:
        self.r.hset(self.keys.tournament(tid), mapping={"status": status, "updated": _now()})

    def progress(self, tid: str) -> Progress:
        """Counts of the tournament's matches by status (plus ``total``)."""
        mids = self.tournament_matches(tid)
        counts = {PENDING: 0, QUEUED: 0, RUNNING: 0, DONE: 0, FAILED: 0, "total": len(mids)}
        for st in self.statuses(mids):
            counts[st or PENDING] = counts.get(st or PENDING, 0) + 1
        return cast(Progress, counts)

    def tournament_results(self, tid: str) -> list[ResultEntry]:
        """The recorded results of a tournament, in results-log order."""
        mids = self.tournament_matches(tid)
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            pipe.get(self.keys.recorded(mid))
        entries = sorted((text(e), mid) for e, mid in zip(pipe.execute(), mids) if e is not None)
        pipe = self.r.pipeline(transaction=False)
        for eid, _ in entries:
            pipe.xrange(self.keys.results(), eid, eid)
        return [json.loads(rows[0][1][b"data"]) for rows in pipe.execute() if rows]

    def tournament_archived(self, tid: str) -> int:
        """How many of the tournament's recorded results retention trimmed from the log (they
        are in the ratings checkpoint and the archive files, no longer in
        :meth:`tournament_results`)."""
        cut = self.trimmed_through()
        if cut is None:
            return 0
        mids = self.tournament_matches(tid)
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            pipe.get(self.keys.recorded(mid))
        return sum(1 for e in pipe.execute() if e is not None and _entry(text(e)) <= _entry(cut))

    def tournament_ids(self, limit: int = 20) -> list[str]:
        return [text(t) for t in self.r.zrevrange(self.keys.tournaments(), 0, limit - 1)]

    # -- referees --------------------------------------------------------------------------
    def referees(self, max_age: float = 30.0) -> list[str]:
        """Replica addresses that sent a heartbeat within ``max_age`` seconds."""
        rows = self.r.zrangebyscore(self.keys.referees(), time.time() - max_age, "+inf")
        return [text(a) for a in rows]

    def announce_referee(self, address: str) -> None:
        self.r.zadd(self.keys.referees(), {address: time.time()})

    # -- locks -----------------------------------------------------------------------------
    def lock(self, name: str, ttl: float) -> str | None:
        """Take lock ``name`` for ``ttl`` seconds; returns the token to release it, or None."""
        import secrets
        token = secrets.token_hex(8)
        if self.r.set(self.keys.lock(name), token, nx=True, px=max(1, int(ttl * 1000))):
            return token
        return None

    def renew_lock(self, name: str, token: str, ttl: float) -> bool:
        """Extend lock ``name`` by ``ttl`` seconds if we still hold it (a long job's heartbeat)."""
        script = ("if redis.call('GET', KEYS[1]) == ARGV[1] then "
                  "return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end")
        return bool(self.r.eval(script, 1, self.keys.lock(name), token,
                                max(1, int(ttl * 1000))))

    def unlock(self, name: str, token: str) -> bool:
        """Release a lock only if we still hold it (a compare-and-delete)."""
        script = ("if redis.call('GET', KEYS[1]) == ARGV[1] then "
                  "return redis.call('DEL', KEYS[1]) else return 0 end")
        return bool(self.r.eval(script, 1, self.keys.lock(name), token))


def _entry(eid: str) -> tuple[int, int]:
    ms, _, seq = eid.partition("-")
    return int(ms), int(seq or 0)


def _decoded(raw: Mapping[Any, Any], ident: str, count: str) -> dict[str, Any]:
    out = {text(k): text(v) for k, v in raw.items()}
    out["id"] = ident
    out["spec"] = json.loads(out.get("spec") or "{}")
    out[count] = int(out.get(count) or 0)
    return out


def default_owner(task: str = "") -> str:
    """An attempt's owner id: ``host/pid/task id`` — who to look for when it seems stuck."""
    import os
    import socket
    return f"{socket.gethostname()}/{os.getpid()}/{task}"


def compress(rec: Mapping[str, Any]) -> bytes:
    return zlib.compress(json.dumps(rec, separators=(",", ":")).encode(), 6)


def decompress(blob: bytes) -> dict[str, Any]:
    return cast("dict[str, Any]", json.loads(zlib.decompress(blob)))


def _spec_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """Only the fields that differ, nested ones by their dotted name (``variant.target: 8
    stored, 4 asked``): printing both whole variants buried the one value that changed."""
    return "; ".join(_field_diffs(old, new, "")) or "same fields"


def _field_diffs(old: Mapping[str, Any], new: Mapping[str, Any], at: str) -> list[str]:
    out = []
    for k in sorted((set(old) | set(new)) - {"secret"}):
        a, b = old.get(k), new.get(k)
        if a == b:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            out += _field_diffs(a, b, f"{at}{k}.")
        else:
            out.append(f"{at}{k}: {a!r} stored, {b!r} asked")
    return out

