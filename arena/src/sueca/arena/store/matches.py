"""The league's matches: ``match:{id}`` hashes, their status and the ``matches`` index.

Every status change goes through a Lua script that refuses once the match is recorded
(``recorded:{id}`` exists), so a late duplicate can never turn a ``done`` match back into
``running`` or ``failed``. Every match that is queued or running is in the ``inflight`` set,
the recovery's work list (:mod:`sueca.arena.store.attempts`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import NamedTuple, cast

from sueca.arena.records import MatchRecord, MatchStatus, NoteKind
from sueca.arena.store.client import RawHash, StoreBase, now, text, texts
from sueca.arena.store.errors import UnknownMatch

__all__ = ["MatchStore", "MatchPage", "PairStatus", "MatchNote", "decode_match", "decoded_hash"]

DONE, FAILED = MatchStatus.DONE, MatchStatus.FAILED

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


def decoded_hash(raw: RawHash, ident: str, count: str) -> dict[str, object]:
    """A match's or tournament's hash decoded, with ``id``, ``spec`` parsed and ``count`` an int."""
    out: dict[str, object] = {text(k): text(v) for k, v in raw.items()}
    out["id"] = ident
    out["spec"] = json.loads(str(out.get("spec") or "{}"))
    out[count] = int(str(out.get(count) or 0))
    return out


def decode_match(raw: RawHash, mid: str) -> MatchRecord:
    """A ``match:{id}`` hash as HGETALL returns it, as a :class:`MatchRecord`."""
    out = decoded_hash(raw, mid, "attempts")
    out["status"] = MatchStatus(str(out["status"]))
    if out.get("versions"):
        out["versions"] = json.loads(str(out["versions"]))
    if out.get("error_kind"):
        out["error_kind"] = NoteKind(str(out["error_kind"]))
    return cast(MatchRecord, out)


class MatchPage(NamedTuple):
    """One page of match ids, and how many the whole list holds."""

    total: int
    ids: list[str]


class MatchNote(NamedTuple):
    """A match's status and its ``error`` note ("" when none), and what the note is (None:
    no note, or one written before notes had kinds)."""

    status: MatchStatus | None
    error: str
    kind: NoteKind | None


class PairStatus(NamedTuple):
    """A match's duplicate pair id and status (None for a match that is gone)."""

    pair: str | None
    status: MatchStatus | None


class MatchStore(StoreBase):
    """Creating, reading and changing the status of matches."""

    def create_match(self, mid: str, spec: Mapping[str, object], tournament: str = "",
                     pair: str = "", *, competition: str = "",
                     versions: Mapping[str, int] | None = None) -> bool:
        """Store a new match (status pending); False, and nothing changed, if it exists.
        ``competition`` is the one it is rated in, ``versions`` the bots' versions it is
        scheduled with (both go into its result)."""
        fields = ["spec", json.dumps(dict(spec), separators=(",", ":")),
                  "tournament", tournament, "pair", pair]
        if competition:
            fields += ["competition", competition]
        if versions:
            fields += ["versions", json.dumps(dict(versions), separators=(",", ":"))]
        return bool(self.script(_CREATE_MATCH)(
            keys=[self.keys.match(mid), self.keys.matches(), self.keys.recorded(mid)],
            args=[now(), mid, *fields]))

    def match(self, mid: str) -> MatchRecord | None:
        raw = self.r.hgetall(self.keys.match(mid))
        return decode_match(raw, mid) if raw else None

    def matches_of(self, mids: Sequence[str]) -> list[MatchRecord | None]:
        """Each match as :meth:`match` reads it (None for one that is gone), one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            pipe.hgetall(self.keys.match(mid))
        return [decode_match(raw, mid) if raw else None for mid, raw in zip(mids, pipe.execute())]

    def statuses(self, mids: Sequence[str]) -> list[MatchStatus | None]:
        """Each match's status; ``done`` for a recorded one whose hash retention archived."""
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            pipe.hget(self.keys.match(mid), "status")
            pipe.exists(self.keys.recorded(mid))
        got = pipe.execute()
        return [DONE if rec else None if st is None else MatchStatus(text(st))
                for st, rec in zip(got[::2], got[1::2])]

    def tournaments_of(self, mids: Sequence[str]) -> list[str | None]:
        """Each match's tournament id (``ladder`` for a ladder match; None when gone)."""
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            pipe.hget(self.keys.match(mid), "tournament")
        return [text(t) for t in pipe.execute()]

    def pair_statuses(self, mids: Sequence[str]) -> list[PairStatus]:
        """Each match's duplicate pair id and status, one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            pipe.hmget(self.keys.match(mid), ["pair", "status"])
        return [PairStatus(text(p), None if st is None else MatchStatus(text(st)))
                for p, st in pipe.execute()]

    def errors_of(self, mids: Sequence[str]) -> list[MatchNote]:
        """Each match's status and ``error`` note, one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            pipe.hmget(self.keys.match(mid), "status", "error", "error_kind")
        return [MatchNote(None if st is None else MatchStatus(text(st)), text(err) or "",
                          NoteKind(text(kind)) if kind else None)
                for st, err, kind in pipe.execute()]

    def match_page(self, start: int, count: int) -> MatchPage:
        """Match ids newest first from position ``start``, at most ``count`` of them."""
        total = int(self.r.zcard(self.keys.matches()))
        ids = texts(self.r.zrevrange(self.keys.matches(), start, start + count - 1))
        return MatchPage(total, ids)

    def match_count(self) -> int:
        """How many matches are stored (recorded ones that retention archived are not)."""
        return int(self.r.zcard(self.keys.matches()))

    def claim(self, mid: str, stale_after: float = 900.0) -> bool:
        """Atomically mark a match queued if nobody has it: True means "enqueue it now"."""
        t = time.time()
        return bool(self.script(_CLAIM)(keys=self.lease_keys(mid),
                                        args=[f"{t:.3f}", f"{t - stale_after:.3f}", mid]))

    def lease_keys(self, mid: str) -> list[str]:
        """The keys of the scripts that move a match between attempts: its hash, its
        idempotency key, its lease and the in-flight set."""
        return [self.keys.match(mid), self.keys.recorded(mid), self.keys.lease(mid),
                self.keys.inflight()]

    def set_status(self, mid: str, status: MatchStatus | str, **fields: object) -> bool:
        """Change status (and fields) unless the match is recorded; False when refused."""
        args: list[str] = [str(status), now(), mid]
        for k, v in fields.items():
            args += [k, "" if v is None else str(v)]
        done = int(self.script(_SET_STATUS)(
            keys=[self.keys.match(mid), self.keys.recorded(mid), self.keys.inflight()], args=args))
        if done == -1:
            raise UnknownMatch(mid)
        return done == 1

    def record_failure(self, mid: str, reason: str) -> bool:
        """The match failed for good (not a bot's fault): status failed with the reason."""
        return self.set_status(mid, FAILED, error=reason[:2000], error_kind=NoteKind.FAILED)

    def is_recorded(self, mid: str) -> bool:
        return bool(self.r.exists(self.keys.recorded(mid)))
