"""What retention (:mod:`sueca.arena.retention`) reads and deletes: the recorded matches older
than a cutoff, their hashes and replays to archive, and forgetting them.

A tournament's match keeps ``recorded:{id}``, the idempotency key (~100 bytes), so a re-run of
the tournament never creates and plays it again; a ladder match (or one of no tournament) loses
it too: nothing creates its id again.
"""

from __future__ import annotations

from collections.abc import Sequence

from sueca.arena.store.client import StoreBase, text, texts

__all__ = ["RetentionStore"]

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


class RetentionStore(StoreBase):
    """Old recorded matches: found, read whole for the archive, forgotten."""

    def retention_schedule(self) -> str | None:
        """The scheduled retention's policy and last run, as :meth:`set_retention_schedule`
        stored it (JSON), or None."""
        return text(self.r.get(self.keys.retention_schedule()))

    def set_retention_schedule(self, value: str) -> None:
        self.r.set(self.keys.retention_schedule(), value)

    def recorded_before(self, ms: int, batch: int = 5000) -> list[tuple[str, str]]:
        """``(match id, results entry id)`` of every match still stored whose result was
        recorded before unix time ``ms`` (milliseconds), oldest created first. A match cannot
        be recorded before it was created, so only ``matches`` scored before ``ms`` are read."""
        out: list[tuple[str, str]] = []
        offset = 0
        while True:
            mids = texts(self.r.zrangebyscore(self.keys.matches(), "-inf", ms / 1000.0,
                                              start=offset, num=batch))
            if not mids:
                return out
            offset += len(mids)
            pipe = self.r.pipeline(transaction=False)
            for mid in mids:
                pipe.get(self.keys.recorded(mid))
            for mid, raw in zip(mids, pipe.execute()):
                eid = text(raw)
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
        ``recorded:{id}``; a ladder match (or one of no tournament) loses it too: a late task
        for it finds no match and gives up (:func:`sueca.arena.match_job.play_and_record`),
        and one that was mid-play finds no match to record
        (``record_result(must_exist=True)``). A match that is not recorded, is in flight or
        leased is left alone. Returns how many were removed."""
        forget = self.script(_FORGET)
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            forget(keys=[self.keys.match(mid), self.keys.replay(mid), self.keys.recorded(mid),
                         self.keys.lease(mid), self.keys.inflight(), self.keys.matches()],
                   args=[mid], client=pipe)
        return sum(int(x) for x in pipe.execute())
