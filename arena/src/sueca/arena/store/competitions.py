"""Competitions' records: spec, state, the log of its moves, its entries, its seed key.

The seed key is made at creation; its sha256 is public from the start and the key itself is
shown only once the competition is closed, so anyone can then check that every deal was dealt
from it (no organiser picked deals). Moves and entries are compare-and-set in Lua: two
schedulers, or a command racing the scheduler, move a competition once.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from typing import cast

from sueca.arena.lifecycle import (
    DEFAULT,
    ENTERING,
    CompetitionError,
    State,
    check_move,
    check_name,
    default_spec,
    transition,
)
from sueca.arena.records import (
    CompetitionRecord,
    CompetitionSpec,
    DivisionChange,
    Entry,
    Transition,
)
from sueca.arena.store.bots import BotRegistry
from sueca.arena.store.client import StoreBase, text, texts

__all__ = ["Competitions"]

_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'spec', ARGV[1], 'state', 'draft', 'created', ARGV[2],
           'seed_hash', ARGV[3], 'secret', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[5])
redis.call('RPUSH', KEYS[3], ARGV[6])
return 1
"""

_MOVE = """
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= ARGV[1] then return state or false end
redis.call('HSET', KEYS[1], 'state', ARGV[2])
redis.call('RPUSH', KEYS[2], ARGV[3])
return 'ok'
"""

_ENTER = """
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'draft' and state ~= 'open' then return state or false end
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then return 'entered' end
return 'ok'
"""


class Competitions(StoreBase):
    """Every competition but the default one is stored; the default (the arena's ladder) is
    synthesised: always open, every registered bot entered."""

    def create(self, spec: CompetitionSpec, *, by: str) -> CompetitionRecord:
        """Store ``spec`` as a draft with a fresh seed key; refuses an existing name."""
        name = check_name(spec["name"])
        if name == DEFAULT:
            raise CompetitionError(f"{DEFAULT!r} is the arena's ladder: choose another name")
        key = secrets.token_hex(32)
        now = round(time.time(), 3)
        created = transition(State.DRAFT, State.DRAFT, at=now, by=by)
        created["from_state"] = ""
        ok = self.script(_CREATE)(
            keys=[self.keys.competition(name), self.keys.competitions(),
                  self.keys.competition_log(name)],
            args=[json.dumps(spec, separators=(",", ":")), now, seed_hash(key), key, name,
                  json.dumps(created)])
        if not ok:
            raise CompetitionError(f"competition {name!r} already exists")
        got = self.get(name)
        assert got is not None
        return got

    def get(self, name: str) -> CompetitionRecord | None:
        """The competition ``name`` (the default one too), or None."""
        if name == DEFAULT:
            return {"spec": default_spec(), "state": State.OPEN, "created": 0.0,
                    "seed_hash": "", "seed_key": None, "log": []}
        pipe = self.r.pipeline(transaction=False)
        pipe.hgetall(self.keys.competition(name))
        pipe.lrange(self.keys.competition_log(name), 0, -1)
        raw, log = pipe.execute()
        if not raw:
            return None
        h = {text(k): text(v) for k, v in raw.items()}
        state = State(h["state"])
        return {"spec": cast(CompetitionSpec, json.loads(h["spec"])), "state": state,
                "created": float(h["created"]), "seed_hash": h["seed_hash"],
                "seed_key": h["secret"] if state is State.CLOSED else None,
                "log": [cast(Transition, json.loads(text(t))) for t in log]}

    def require(self, name: str) -> CompetitionRecord:
        """:meth:`get`, or :class:`CompetitionError` naming the unknown competition."""
        got = self.get(name)
        if got is None:
            raise CompetitionError(f"unknown competition {name[:64]!r}: `sueca-arena "
                                   "competition list` shows them")
        return got

    def names(self) -> list[str]:
        """The default competition, then the others in creation order."""
        return [DEFAULT, *texts(self.r.zrange(self.keys.competitions(), 0, -1))]

    def move(self, name: str, to: State, *, by: str) -> Transition:
        """Move ``name`` one step on to ``to`` and log who asked; refuses a move out of order,
        and one that lost a race (the message says where it is now)."""
        state = self.require(name)["state"]
        check_move(name, state, to)
        now = round(time.time(), 3)
        record = transition(state, to, at=now, by=by)
        got = self.script(_MOVE)(
            keys=[self.keys.competition(name), self.keys.competition_log(name)],
            args=[str(state), str(to), json.dumps(record)])
        if text(got) != "ok":
            raise CompetitionError(f"competition {name!r} moved to {text(got)} meanwhile: "
                                   "nothing changed")
        return record

    def enter(self, name: str, bot: str, *, by: str, hosted: bool = False) -> Entry:
        """Enter ``bot`` (registered) in ``name`` while it is a draft or open."""
        got = self.require(name)
        if name == DEFAULT:
            raise CompetitionError(f"every registered bot is in {DEFAULT!r}, the arena's ladder")
        registry = BotRegistry(self.r, self.keys)
        if not registry.exists(bot):
            raise CompetitionError(f"unknown bot {bot[:64]!r}{registry.case_hint(bot)}")
        if got["spec"]["hosted_only"] and not hosted:
            raise CompetitionError(f"competition {name!r} takes hosted bots only: enter "
                                   "with a submission (`sueca-arena bots submit`)")
        if got["state"] not in ENTERING:
            raise CompetitionError(f"competition {name!r} is {got['state']}: its entries "
                                   "are closed")
        entry: Entry = {"bot": bot, "entered": round(time.time(), 3), "by": by, "version": None,
                        "division": None, "placed": 0}
        status = text(self.script(_ENTER)(
            keys=[self.keys.competition(name), self.keys.competition_entries(name)],
            args=[bot, json.dumps(entry)]))
        if status == "entered":
            raise CompetitionError(f"bot {bot!r} is already entered in {name!r}")
        if status != "ok":
            raise CompetitionError(f"competition {name!r} is {status}: its entries are closed")
        return entry

    def entries(self, name: str) -> dict[str, Entry]:
        """Bot -> entry (the default competition: every registered bot)."""
        if name == DEFAULT:
            return {b: {"bot": b, "entered": 0.0, "by": "", "version": None, "division": None,
                        "placed": 0} for b in BotRegistry(self.r, self.keys).names()}
        raw = self.r.hgetall(self.keys.competition_entries(name))
        return {text(k): cast(Entry, json.loads(text(v))) for k, v in sorted(raw.items())}

    def update_entry(self, name: str, bot: str, **fields: object) -> Entry:
        """Change fields of ``bot``'s entry (a version fixed at the freeze, a division, placement
        matches played); the caller holds the competition's scheduling lock."""
        key = self.keys.competition_entries(name)
        raw = self.r.hget(key, bot)
        if raw is None:
            raise CompetitionError(f"bot {bot[:64]!r} is not entered in {name!r}")
        entry = cast(Entry, {**json.loads(text(raw)), **fields})
        self.r.hset(key, bot, json.dumps(entry))
        return entry

    def note_divisions(self, name: str, change: DivisionChange) -> None:
        """Append ``change`` to the log of ``name``'s divisions."""
        self.r.rpush(self.keys.competition_divisions(name), json.dumps(change))

    def division_log(self, name: str) -> list[DivisionChange]:
        """Every change of ``name``'s divisions, oldest first."""
        return [cast(DivisionChange, json.loads(text(c)))
                for c in self.r.lrange(self.keys.competition_divisions(name), 0, -1)]

    def of_bot(self, bot: str) -> dict[str, State]:
        """The stored competitions ``bot`` is entered in, with their states (one round trip
        per ten thousand competitions)."""
        names = self.names()[1:]
        pipe = self.r.pipeline(transaction=False)
        for name in names:
            pipe.hexists(self.keys.competition_entries(name), bot)
            pipe.hget(self.keys.competition(name), "state")
        got = pipe.execute()
        return {n: State(text(got[2 * i + 1])) for i, n in enumerate(names)
                if got[2 * i] and got[2 * i + 1] is not None}

    def secret(self, name: str) -> str:
        """The seed key its matches are dealt from: for scheduling only, never shown before the
        competition closes (:meth:`get` shows it then)."""
        got = self.r.hget(self.keys.competition(name), "secret")
        if got is None:
            raise CompetitionError(f"unknown competition {name[:64]!r}")
        return text(got)


def seed_hash(key: str) -> str:
    """The public commitment to a seed key: its sha256, hex."""
    return hashlib.sha256(key.encode()).hexdigest()
