"""``metrics:bots``: the order in which the arena's workers first saw each bot, the same for
every process, so that the first few get their own Prometheus label
(:class:`sueca.arena.metrics.BotLabels`)."""

from __future__ import annotations

import time

from sueca.arena.store.client import StoreBase

__all__ = ["LabelStore"]

# KEYS: metrics:bots   ARGV: now, bot, bound.   1 when the bot is among the first ``bound``.
_LABELLED = """
redis.call('ZADD', KEYS[1], 'NX', ARGV[1], ARGV[2])
local rank = redis.call('ZRANK', KEYS[1], ARGV[2])
return rank < tonumber(ARGV[3]) and 1 or 0
"""


class LabelStore(StoreBase):
    """Which bots have a metrics label of their own."""

    def labelled_bot(self, bot: str, bound: int) -> bool:
        """Note ``bot`` as seen (if it is new) and say whether it is among the first
        ``bound`` bots seen."""
        return bool(int(self.script(_LABELLED)(keys=[self.keys.metrics_bots()],
                                               args=[f"{time.time():.6f}", bot, bound])))
