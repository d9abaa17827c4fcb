"""Fair play's records: each bot's recent outcomes, its suspensions and lifts, its challenges.

* ``fairplay:recent:{bot}``: the bot's last :data:`~sueca.arena.fairplay.MAX_WINDOW`
  outcomes, newest first, pushed by the very Lua script that appends the result
  (:meth:`sueca.arena.store.Store.record_result`, with :func:`recent_items`), so a result and
  its outcomes are written together or not at all. It is a cache of the results log:
  :meth:`FairPlayStore.rebuild_recent` (run by ``sueca-arena ratings rebuild``) derives it from
  the log again. A list per bot, not a scan of the log on read: the ladder asks for every free
  bot on every tick, and a bot's last ten matches may lie anywhere in a long log.
* ``fairplay:bot:{bot}``: ``s:{competition}``, the suspension as first seen (when, which
  faults, which rule, which version), written by whoever schedules (:func:`suspended` with
  ``record``); ``lift``, the last lift (who, when, and the results entry before which nothing
  counts any more).
* ``fairplay:challenges:{bot}``: when the bot asked for its recent challenges (the hourly cap).

Which bot is suspended is decided on read (:func:`suspended`) from these and the bot's current
version, so a new version needs no coupling: its outcomes start a new window, and a
suspension recorded at an older version no longer holds.
"""

from __future__ import annotations

import getpass
import json
import logging
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, TypedDict, cast

import redis

from sueca.arena.fairplay import (
    CHALLENGE_WINDOW,
    MAX_WINDOW,
    Fault,
    Outcome,
    Rule,
    Suspension,
    counted,
    next_challenge,
    outcome_of,
    reason,
    rule_of,
    tripped,
)
from sueca.arena.records import CompetitionState, ResultEntry
from sueca.arena.settings import current
from sueca.arena.store.client import Entries, StoreBase, entry_key, text

if TYPE_CHECKING:
    from sueca.arena.store import Store

__all__ = ["FairPlayStore", "Lift", "BotFairPlay", "RebuildReport", "recent_items", "suspended",
           "suspended_in", "rule_for", "challenge_cap", "versions_of", "playable", "DEFAULT",
           "operator"]

#: The default competition: the arena's ladder (and plain tournaments), ruled by the settings.
DEFAULT = "ladder"
_log = logging.getLogger("sueca.scheduler")


class Lift(TypedDict):
    """An operator's lift: ``by`` whom, ``at`` (unix time), ``after``: the last results-log
    entry then (outcomes up to it no longer count)."""

    by: str
    at: float
    after: str


class BotFairPlay(NamedTuple):
    """What is stored about one bot: its recent outcomes (newest first), last lift, and
    suspensions by competition."""

    outcomes: list[Outcome]
    lift: Lift | None
    suspensions: dict[str, Suspension]


class RebuildReport(TypedDict):
    bots: int  # bots whose recent outcomes the log holds
    differed: int  # of them, how many lists the rebuild changed (0: the live lists were right)


def recent_items(result: ResultEntry) -> list[tuple[str, str]]:
    """``(bot, item)`` for each bot of ``result``: its outcome as the record script pushes it,
    JSON lacking its opening ``{"e":"<entry id>",`` (the script knows the id only once it has
    appended the entry)."""
    out = []
    for bot in dict.fromkeys(str(b) for b in result.get("seats") or ()):
        fault, version = outcome_of(result, bot)
        item = json.dumps({"m": str(result.get("match_id", "")), "f": fault, "v": version},
                          separators=(",", ":"))
        out.append((bot, item[1:]))
    return out


def _outcome(raw: bytes | str) -> Outcome | None:
    try:
        got = json.loads(raw)
        return {"entry": str(got["e"]), "match": str(got["m"]), "fault": str(got["f"]),
                "version": int(got["v"])}
    except (ValueError, KeyError, TypeError):
        return None


def _item(o: Outcome) -> str:
    return json.dumps({"e": o["entry"], "m": o["match"], "f": o["fault"], "v": o["version"]},
                      separators=(",", ":"))


def _json(raw: object) -> dict[str, object] | None:
    try:
        got = json.loads(str(text(raw))) if isinstance(raw, bytes | str) else None
    except ValueError:
        return None
    return got if isinstance(got, dict) else None


def operator() -> str:
    """Who runs this command, for the records (``by``)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "operator"


# KEYS: fairplay:recent:{bot}   ARGV: E (the newest entry the rebuild read), cap, items...
# The items recorded meanwhile (entry id after E) stay in front of the rebuilt ones.
_REPLACE = """
local keep = {}
local ems, eseq = string.match(ARGV[1], '^(%d+)-(%d+)$')
ems, eseq = tonumber(ems or '0'), tonumber(eseq or '0')
for _, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local ms, seq = string.match(raw, '^{"e":"(%d+)-(%d+)"')
  ms, seq = tonumber(ms or '0'), tonumber(seq or '0')
  if ms > ems or (ms == ems and seq > eseq) then table.insert(keep, raw) end
end
redis.call('DEL', KEYS[1])
for _, raw in ipairs(keep) do redis.call('RPUSH', KEYS[1], raw) end
for i = 3, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
return #keep
"""


class FairPlayStore(StoreBase):
    """Each bot's recent outcomes, suspensions, lifts and challenges."""

    def bots_state(self, bots: Sequence[str], window: int = MAX_WINDOW) -> dict[str, BotFairPlay]:
        """Each bot's newest ``window`` outcomes, lift and suspensions, one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for b in bots:
            pipe.lrange(self.keys.fairplay_recent(b), 0, window - 1)
            pipe.hgetall(self.keys.fairplay_bot(b))
        got = pipe.execute()
        out = {}
        for i, b in enumerate(bots):
            outcomes = [o for o in map(_outcome, got[2 * i]) if o is not None]
            raw = {text(k): v for k, v in got[2 * i + 1].items()}
            lift = _json(raw.pop("lift", None))
            held = {name[2:]: cast(Suspension, s) for name, v in raw.items()
                    if name.startswith("s:") and (s := _json(v)) is not None}
            out[b] = BotFairPlay(outcomes, cast(Lift, lift) if lift else None, held)
        return out

    def record_suspension(self, s: Suspension) -> Suspension:
        """Store ``s`` as its bot's suspension in its competition, stamped now."""
        stamped: Suspension = {**s, "at": round(time.time(), 3), "recorded": True}
        self.r.hset(self.keys.fairplay_bot(s["bot"]), f"s:{s['competition']}",
                    json.dumps(stamped, separators=(",", ":")))
        return stamped

    def lift(self, bot: str, *, by: str) -> Lift:
        """Lift ``bot``'s suspensions: nothing recorded up to now counts against it any more."""
        lift: Lift = {"by": by, "at": round(time.time(), 3), "after": self.last_entry() or "0-0"}
        self.r.hset(self.keys.fairplay_bot(bot), "lift", json.dumps(lift, separators=(",", ":")))
        return lift

    # -- challenges ----------------------------------------------------------------------------
    def ask_challenge(self, bot: str, cid: str, *, per_hour: int,
                      now: float | None = None) -> float | None:
        """Count challenge ``cid`` against ``bot``'s hourly cap: None when it fits (it is then
        counted), else the unix time the next one is allowed (nothing counted). Atomic: two
        requests at once cannot both take the last place."""
        key = self.keys.fairplay_challenges(bot)
        with self.r.pipeline() as pipe:
            while True:
                at = time.time() if now is None else now
                try:
                    pipe.watch(key)  # type: ignore[no-untyped-call]
                    rows = cast(list[tuple[bytes, float]], pipe.zrangebyscore(
                        key, at - CHALLENGE_WINDOW, math.inf, withscores=True))
                    asked = [float(score) for _, score in rows]
                    later = next_challenge(asked, per_hour=per_hour, now=at)
                    if later is not None:
                        pipe.unwatch()
                        return later
                    pipe.multi()
                    pipe.zremrangebyscore(key, "-inf", at - CHALLENGE_WINDOW)
                    pipe.zadd(key, {cid: at})
                    pipe.expire(key, int(CHALLENGE_WINDOW) + 60)
                    pipe.execute()
                    return None
                except redis.WatchError:
                    continue

    def forget_challenge(self, bot: str, cid: str) -> None:
        """Give back the place of a challenge that could not be queued."""
        self.r.zrem(self.keys.fairplay_challenges(bot), cid)

    # -- rebuild -------------------------------------------------------------------------------
    def newest_first(self, batch: int = 500) -> Iterator[tuple[str, ResultEntry]]:
        """The results log, newest entry first."""
        top = "+"
        while True:
            rows = cast(Entries, self.r.xrevrange(self.keys.results(), top, "-", count=batch))
            for eid, fields in rows:
                yield text(eid), cast(ResultEntry, json.loads(fields[b"data"]))
            if len(rows) < batch:
                return
            top = f"({text(rows[-1][0])}"

    def rebuild_recent(self, *, write: bool = True, trimmed: str | None = None) -> RebuildReport:
        """Derive every bot's recent outcomes from the results log again and, with ``write``,
        replace the live lists. The log is read newest first until every registered bot has
        :data:`MAX_WINDOW` outcomes (or the log ends); outcomes recorded meanwhile stay in
        front, and those at or before ``trimmed`` (the entry retention trimmed the log
        through: the log lost them) are kept from the live list."""
        newest = self.last_entry()
        want = {text(n) for n in self.r.smembers(self.keys.bots())}
        found: dict[str, list[Outcome]] = {}
        full: set[str] = set()
        for eid, res in self.newest_first() if newest else ():
            for bot, item in recent_items(res):
                got = found.setdefault(bot, [])
                if len(got) < MAX_WINDOW:
                    o = _outcome('{"e":"' + eid + '",' + item)
                    assert o is not None
                    got.append(o)
                    if len(got) == MAX_WINDOW:
                        full.add(bot)
            if want <= full:  # an unregistered bot met only in part is left as it is
                found = {b: got for b, got in found.items() if b in want or b in full}
                break
        found.update({b: [] for b in want if b not in found})
        live = self.bots_state(sorted(found))
        cut = entry_key(newest or "0-0")
        differed = 0
        for bot, got in found.items():
            if trimmed:
                lost = [o for o in live[bot].outcomes if entry_key(o["entry"]) <= entry_key(trimmed)]
                got = (got + lost)[:MAX_WINDOW]
            if [o for o in live[bot].outcomes if entry_key(o["entry"]) <= cut] != got:
                differed += 1
                if write:
                    self.script(_REPLACE)(keys=[self.keys.fairplay_recent(bot)],
                                          args=[newest or "0-0", MAX_WINDOW, *map(_item, got)])
        return {"bots": len(found), "differed": differed}

    def last_entry(self) -> str | None:
        """The newest results-log entry id (None: an empty log)."""
        rows = self.r.xrevrange(self.keys.results(), "+", "-", count=1)
        return text(rows[0][0]) if rows else None


# -- which bots are suspended ---------------------------------------------------------------------
def rule_for(store: Store, competition: str = DEFAULT) -> Rule | None:
    """The suspension rule of ``competition``: the arena's setting for the default ladder
    (``SUECA_SUSPEND_AFTER``), a competition's own ``fair_play`` otherwise (the setting for
    a competition that does not exist)."""
    got = None if competition == DEFAULT else store.competitions.get(competition)
    if got is None:
        return current().suspend_after
    return rule_of(got["spec"].get("fair_play"))


def challenge_cap(store: Store, bot: str) -> int:
    """How many challenges ``bot`` may ask for in an hour: the arena's setting
    (``SUECA_CHALLENGES_PER_HOUR``), or less if a competition it plays in (not closed) says so."""
    caps = [current().challenges_per_hour]
    for name, state in store.competitions.of_bot(bot).items():
        got = store.competitions.get(name) if state is not CompetitionState.CLOSED else None
        fair = got["spec"].get("fair_play") if got is not None else None
        if fair is not None and name != DEFAULT:
            caps.append(int(fair.get("challenges_per_hour", caps[0])))
    return min(caps)


def versions_of(store: Store, bots: Sequence[str]) -> dict[str, int]:
    """Each bot's current version (1 for a bot that never started another)."""
    return store.versions.currents(bots)


def suspended(store: Store, bots: Sequence[str], *, competition: str = DEFAULT,
              record: bool = False) -> dict[str, Suspension]:
    """The bots of ``bots`` suspended in ``competition`` now, with why (one round trip for
    the outcomes, one for the versions).

    A suspension stored for the bot holds while the bot is at the version it was recorded at
    and no lift came after it; else the rule is applied to the outcomes that count (this
    version's, since the last lift). With ``record`` (the schedulers), a suspension found so
    is stored, stamped now: its first sighting is its start."""
    rule = rule_for(store, competition)
    if rule is None or not bots:
        return {}
    fp = store.fairplay
    states = fp.bots_state(list(bots), rule.of_last)
    versions = versions_of(store, list(bots))
    out: dict[str, Suspension] = {}
    for bot, st in states.items():
        version = versions.get(bot, 1)
        after = st.lift["after"] if st.lift else None
        held = st.suspensions.get(competition)
        if held is not None and held.get("version", 1) >= version and (
                after is None or entry_key(after) < entry_key(held["entry"])):
            out[bot] = held
            continue
        outcomes = counted(st.outcomes, version=version, after=after)
        faults = tripped(outcomes, rule)
        if faults is None:
            continue
        found: Suspension = {
            "bot": bot, "competition": competition, "rule": str(rule), "version": version,
            "faults": [Fault(match=o["match"], end=o["fault"], entry=o["entry"]) for o in faults],
            "entry": outcomes[0]["entry"], "at": None, "recorded": False}
        out[bot] = fp.record_suspension(found) if record else found
    return out


def suspended_in(store: Store, bots: Sequence[str], *, competition: str = DEFAULT,
                 record: bool = False) -> dict[str, Suspension]:
    """The bots of ``bots`` that may not play in ``competition``, with why: those suspended
    under the arena's rule, which holds in every ladder, and in a competition those suspended
    under its own ``fair_play`` too (its suspension is the one given when both hold). The one
    test of who sits out: a competition's ladder (:func:`playable`) and its final's seeding
    ask it alike, so a bot its own rule suspends is out of it, and of no other."""
    out = suspended(store, bots, record=record)
    if competition != DEFAULT:
        out.update(suspended(store, bots, competition=competition, record=record))
    return out


def playable(store: Store, free: Mapping[str, int], *,
             competition: str = DEFAULT) -> dict[str, int]:
    """``free`` (bot -> free seats) without the bots that may not play in ``competition``
    (:func:`suspended_in`): a ladder's filter. A suspension it is the first to see is recorded,
    and logged once."""
    now = time.time()
    out = suspended_in(store, list(free), competition=competition, record=True)
    for bot, s in out.items():
        if (s["at"] or 0.0) >= now:
            _log.warning("bot %s is suspended from the %s: %s", bot,
                         "ladder" if s["competition"] == DEFAULT
                         else f"competition {s['competition']}",
                         reason(s))
    return {b: f for b, f in free.items() if b not in out}
