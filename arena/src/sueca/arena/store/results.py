"""The results log (the ``results`` stream) and exactly-once recording.

A result is written by one Lua script that checks the idempotency key ``recorded:{id}``,
appends to the results stream, stores the replay, marks the match done, adds to the bots'
health totals (:mod:`sueca.arena.botstats`) and pushes each bot's outcome on its recent list
(:mod:`sueca.arena.store.fairplay`), all atomically (Redis runs a script alone).
Whoever runs a match twice — a re-delivered task, two racing workers — gets
``(False, first_entry_id)`` the second time and nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import cast

from sueca.arena import botstats
from sueca.arena.fairplay import MAX_WINDOW
from sueca.arena.records import ResultEntry
from sueca.arena.store.client import Entries, StoreBase, entry_key, now, text
from sueca.arena.store.fairplay import recent_items
from sueca.arena.store.replays import compress

__all__ = ["ResultsLog"]

# KEYS: recorded, results, replay, match, lease, inflight, stats index, stats:bot:{b} ...,
#       fairplay:recent:{b} ...
# ARGV: match id, result JSON, replay blob, now, end,
#       JSON [[bot, {field: increment}, slowest turn us], ...] in the order of the stats keys,
#       '1' when the match must still exist, the result's unix time ('' if it has none),
#       JSON [outcome item, ...] in the order of the recent keys (store.fairplay.recent_items),
#       how many outcomes a bot keeps
# {0, ''}: a league match that is gone, i.e. recorded and then forgotten by retention (whose
# forget script drops a ladder match's idempotency key with it): a worker that stalled past
# the cutoff must not record it a second time.
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
local stats = cjson.decode(ARGV[6])
for i, bot in ipairs(stats) do
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
for i, item in ipairs(cjson.decode(ARGV[9])) do
  local key = KEYS[7 + #stats + i]
  redis.call('LPUSH', key, '{"e":"' .. id .. '",' .. item)
  redis.call('LTRIM', key, 0, tonumber(ARGV[10]) - 1)
end
return {1, id}
"""


def _entry_data(fields: Mapping[bytes, bytes]) -> ResultEntry:
    return cast(ResultEntry, json.loads(fields[b"data"]))


class ResultsLog(StoreBase):
    """Appending results exactly once, and reading the log back."""

    def record_result(self, mid: str, result: ResultEntry,
                      replay: Mapping[str, object] | None = None,
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
        recent = recent_items(result)
        new, entry = self.durable(self.script(_RECORD),
            keys=[self.keys.recorded(mid), self.keys.results(), self.keys.replay(mid),
                  self.keys.match(mid), self.keys.lease(mid), self.keys.inflight(),
                  self.keys.bot_stats_index(), *(self.keys.bot_stats(str(b)) for b, _, _ in incs),
                  *(self.keys.fairplay_recent(b) for b, _ in recent)],
            args=[mid, data, blob, now(), str(result.get("end", "")),
                  json.dumps(incs, separators=(",", ":")), "1" if must_exist else "",
                  repr(float(when)) if isinstance(when, int | float) else "",
                  json.dumps([item for _, item in recent]), str(MAX_WINDOW)])
        return bool(new), text(entry)

    def results(self, after: str | None = None, batch: int = 1000,
                through: str | None = None) -> Iterator[tuple[str, ResultEntry]]:
        """Every entry of the results log in order (after entry id ``after``, exclusive; up to
        ``through``, inclusive). Entries up to the ratings checkpoint may have been trimmed
        (:meth:`trimmed_through`)."""
        start = "-" if after is None else f"({after}"
        while True:
            chunk = cast(Entries, self.r.xrange(self.keys.results(), start, through or "+",
                                                count=batch))
            for entry, fields in chunk:
                yield text(entry), _entry_data(fields)
            if len(chunk) < batch:
                return
            start = f"({text(chunk[-1][0])}"

    def count_results(self, after: str | None, through: str) -> int:
        """How many entries the log holds after ``after`` (exclusive) up to ``through``."""
        start = "-" if after is None else f"({after}"
        n = 0
        while True:
            rows = cast(Entries, self.r.xrange(self.keys.results(), start, through, count=5000))
            n += len(rows)
            if len(rows) < 5000:
                return n
            start = f"({text(rows[-1][0])}"

    def result_of(self, mid: str) -> ResultEntry | None:
        return self.results_of([mid])[0]

    def entry_ids(self, mids: Sequence[str]) -> list[str | None]:
        """Each match's results-log entry id (None: not recorded), one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            pipe.get(self.keys.recorded(mid))
        return [text(e) for e in pipe.execute()]

    def results_of(self, mids: Sequence[str]) -> list[ResultEntry | None]:
        """Each match's recorded result (None: not recorded, or trimmed from the log), in two
        round trips."""
        entries = self.entry_ids(mids)
        return self.entries(entries)

    def entries(self, eids: Sequence[str | None]) -> list[ResultEntry | None]:
        """The results-log entries with these ids (None for a None id or one trimmed)."""
        pipe = self.r.pipeline(transaction=False)
        for e in eids:
            if e is not None:
                pipe.xrange(self.keys.results(), e, e)
        rows = iter(pipe.execute())
        out: list[ResultEntry | None] = []
        for e in eids:
            got = next(rows) if e is not None else None
            out.append(_entry_data(got[0][1]) if got else None)
        return out

    def results_count(self) -> int:
        return int(self.r.xlen(self.keys.results()))

    def trimmed_through(self) -> str | None:
        """The last results-log entry trimmed by retention (entries up to it are gone from
        Redis, folded into the ratings checkpoint and archived or dropped), or None."""
        return text(self.r.hget(self.keys.ratings_checkpoint(), "cursor"))

    def last_result(self) -> str | None:
        """The id of the newest results-log entry, or None for an empty log."""
        rows = self.r.xrevrange(self.keys.results(), "+", "-", count=1)
        return text(rows[0][0]) if rows else None

    def last_result_before(self, ms: int) -> str | None:
        """The id of the last results-log entry written before unix time ``ms`` (milliseconds)."""
        rows = self.r.xrevrange(self.keys.results(), f"{ms - 1}-18446744073709551615", "-",
                                count=1)
        return text(rows[0][0]) if rows else None

    def wait_results(self, after: str, timeout: float) -> list[tuple[str, str]]:
        """``(entry id, match id)`` of the entries recorded after entry ``after``, blocking in
        Redis up to ``timeout`` seconds for the first (empty: none came)."""
        rows = cast(list[tuple[bytes, Entries]],
                    self.r.xread({self.keys.results(): after}, count=1000,
                                 block=max(1, int(timeout * 1000))))
        if not rows:
            return []
        return [(text(eid), text(fields.get(b"match", b""))) for eid, fields in rows[0][1]]

    def recorded_in(self, mids: Sequence[str], through: str) -> int:
        """How many of ``mids`` were recorded at results-log entry ``through`` or before."""
        cut = entry_key(through)
        return sum(1 for e in self.entry_ids(mids) if e is not None and entry_key(e) <= cut)
