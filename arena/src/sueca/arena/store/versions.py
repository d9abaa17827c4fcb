"""Bot versions: a bot keeps its name (and its history) while its code changes.

The version is the arena's counter, not something a program claims: an owner starts a new one
with ``sueca-arena bots version NAME`` (a hosted submission starts one itself), and every match
records the version it was scheduled with, so each version is rated on its own matches. A bot
with no recorded versions is at version 1: its registration. While a competition the bot entered
is frozen or in its final, the version that plays there is fixed and a new one is refused.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import cast

from sueca.arena.lifecycle import FIXED
from sueca.arena.records import VersionInfo
from sueca.arena.store.bots import BotRegistry
from sueca.arena.store.client import StoreBase, text
from sueca.arena.store.competitions import Competitions

__all__ = ["BotVersions", "VersionError", "MAX_NOTE"]

MAX_NOTE = 200  # characters of a version's note that are kept

_BUMP = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local v = tonumber(redis.call('HGET', KEYS[1], 'version') or '1') + 1
redis.call('HSET', KEYS[1], 'version', v)
redis.call('HSET', KEYS[2], v, ARGV[1])
redis.call('INCR', KEYS[3])
return v
"""


class VersionError(ValueError):
    """A version that cannot be started or found; the message quotes the bot and says why."""


class BotVersions(StoreBase):
    """``bot:{name}`` field ``version`` and ``bot:{name}:versions``."""

    def current(self, bot: str) -> int:
        return int(text(self.r.hget(self.keys.bot(bot), "version")) or 1)

    def currents(self, bots: Sequence[str]) -> dict[str, int]:
        """Bot -> current version, one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for bot in bots:
            pipe.hget(self.keys.bot(bot), "version")
        return {b: int(text(v) or 1) for b, v in zip(bots, pipe.execute())}

    def bump(self, bot: str, *, by: str, note: str = "",
             submission: str | None = None) -> int:
        """Start ``bot``'s next version; returns its number."""
        registry = BotRegistry(self.r, self.keys)
        if not registry.exists(bot):
            raise VersionError(f"unknown bot {bot[:64]!r}{registry.case_hint(bot)}")
        fixed = {c: s for c, s in Competitions(self.r, self.keys).of_bot(bot).items()
                 if s in FIXED}
        if fixed:
            name, state = next(iter(fixed.items()))
            raise VersionError(
                f"bot {bot!r} plays version {self.current(bot)} in competition {name!r}, which "
                f"is {state}: a new version can start once it is closed")
        info = {"created": round(time.time(), 3), "by": by, "note": note[:MAX_NOTE],
                "submission": submission}
        got = self.script(_BUMP)(keys=[self.keys.bot(bot), self.keys.bot_versions(bot),
                                       self.keys.versions_started()],
                                 args=[json.dumps(info)])
        if not got:
            raise VersionError(f"unknown bot {bot[:64]!r}")
        return int(got)

    def history(self, bot: str) -> list[VersionInfo]:
        """Every version of ``bot``, oldest first (version 1 from its registration when it was
        never recorded)."""
        pipe = self.r.pipeline(transaction=False)
        pipe.hgetall(self.keys.bot_versions(bot))
        pipe.hget(self.keys.bot(bot), "created")
        raw, created = pipe.execute()
        out = {int(text(k)): cast(VersionInfo, {"version": int(text(k)), **json.loads(text(v))})
               for k, v in raw.items()}
        if 1 not in out:
            out[1] = {"version": 1, "created": float(text(created) or 0), "by": "", "note": "",
                      "submission": None}
        return [out[v] for v in sorted(out)]

    def get(self, bot: str, version: int) -> VersionInfo | None:
        return next((v for v in self.history(bot) if v["version"] == version), None)
