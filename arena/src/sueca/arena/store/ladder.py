"""The ladder's own records: ``ladder:running`` (its matches in flight, every competition's)
and ``ladder:recent`` (the bots of its last matches, newest first, for the newcomers' cap; a
competition's ladder has its own list)."""

from __future__ import annotations

from collections.abc import Sequence

from sueca.arena.store.client import StoreBase, text

__all__ = ["LadderStore"]


class LadderStore(StoreBase):
    """What the ladder scheduler remembers between ticks."""

    def ladder_running(self) -> list[str]:
        """The ladder's matches in flight, as last noted (finished ones until dropped)."""
        return sorted(text(m) for m in self.r.smembers(self.keys.ladder_running()))

    def ladder_of(self, mids: Sequence[str]) -> list[str]:
        """Those of ``mids`` that are the ladder's matches in flight, one round trip."""
        if not mids:
            return []
        flags = self.r.smismember(self.keys.ladder_running(), list(mids))
        return [m for m, inside in zip(mids, flags) if inside]

    def drop_ladder_running(self, mids: Sequence[str]) -> None:
        if mids:
            self.r.srem(self.keys.ladder_running(), *mids)

    def ladder_recent(self, count: int, competition: str = "") -> list[tuple[str, str]]:
        """The pairs of the last ``count`` ladder matches of ``competition`` ("": the default
        ladder) scheduled, newest first."""
        out = []
        for row in self.r.lrange(self.keys.ladder_recent(competition), 0, count - 1):
            a, _, b = text(row).partition(" ")
            out.append((a, b))
        return out

    def add_ladder_match(self, mid: str, a: str, b: str, keep: int, *,
                         competition: str = "") -> None:
        """Note a ladder match of bots ``a`` and ``b`` in flight and among the last ``keep`` of
        ``competition`` ("": the default ladder)."""
        recent = self.keys.ladder_recent(competition)
        with self.r.pipeline() as pipe:
            pipe.sadd(self.keys.ladder_running(), mid)
            pipe.lpush(recent, f"{a} {b}")
            pipe.ltrim(recent, 0, keep - 1)
            pipe.execute()
