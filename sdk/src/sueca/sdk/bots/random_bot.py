"""RandomBot: a uniformly random legal card (and a coin flip for a weak-hand redeal).

The baseline every other bot must beat.
"""

from __future__ import annotations

from math import floor

from sueca.engine import Card, Observation

from ..bot import Bot, MatchInfo


class RandomBot(Bot):
    """Plays a uniformly random card of ``observation.legal``, drawn from ``self.rng``."""

    def start(self, info: MatchInfo) -> None:
        super().start(info)
        self._random = self.rng.random  # bound once: play() is the hot path of self-play

    def play(self, observation: Observation) -> Card:
        legal = observation.legal
        return legal[floor(self._random() * len(legal))]  # = int(): cheaper to call

    def redeal(self, observation: Observation) -> bool:
        """Variant weak_hand_redeal: a coin flip."""
        return self._random() < 0.5
