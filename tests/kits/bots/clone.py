"""A random bot that can be cloned: for brackets of many bots among few strategies."""

from __future__ import annotations

import random

from sueca.sdk.bot import MatchInfo
from sueca.sdk.bots import RandomBot


class NamedRandomBot(RandomBot):
    """A random player whose draws depend on its own name as well as its seat's seed. Two
    RandomBots seeded by seat alone play a duplicate pair's swapped half card for card as the
    first, so every pair between them is level; two of these play different games."""

    def start(self, info: MatchInfo) -> None:
        super().start(info)
        self.rng = random.Random(f"{info.bot_seed}:{info.seats[info.seat]}")
        self._random = self.rng.random
