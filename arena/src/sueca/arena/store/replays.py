"""Replays: ``replay:{id}``, a match's sueca-replay/1 JSON, zlib-compressed (written with the
result, :meth:`sueca.arena.store.results.ResultsLog.record_result`)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from typing import cast

from sueca.arena.store.client import StoreBase
from sueca.engine.replay import ReplayRecord

__all__ = ["ReplayStore", "compress", "decompress"]


def compress(rec: Mapping[str, object]) -> bytes:
    """A replay as stored: its JSON, zlib-compressed."""
    return zlib.compress(json.dumps(rec, separators=(",", ":")).encode(), 6)


def decompress(blob: bytes) -> ReplayRecord:
    return cast(ReplayRecord, json.loads(zlib.decompress(blob)))


class ReplayStore(StoreBase):
    """Reading replays back (they are written by the result's script)."""

    def replay(self, mid: str) -> ReplayRecord | None:
        blob = self.r.get(self.keys.replay(mid))
        return None if blob is None else decompress(cast(bytes, blob))

    def replays(self, mids: Sequence[str]) -> list[ReplayRecord | None]:
        """Each match's replay (None for one with none, or archived), one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for mid in mids:
            pipe.get(self.keys.replay(mid))
        return [None if b is None else decompress(b) for b in pipe.execute()]
