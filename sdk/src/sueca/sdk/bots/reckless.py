"""RecklessBot: a random player that sometimes ignores the led suit, so renúncias happen.

It exists to exercise the fault path end to end (the engine's renúncia, the scoring of a deal
lost by a fault, the per-bot fault counts of self-play), not to win.
"""

from __future__ import annotations

from sueca.engine import Card, Observation

from ..bot import Bot, MatchInfo

IGNORE_SUIT = 0.15  # chance of playing any card of the hand instead of a legal one


class RecklessBot(Bot):
    """A random legal card, except that with probability 0.15 it is any card of the hand."""

    def start(self, info: MatchInfo) -> None:
        super().start(info)
        self._random = self.rng.random

    def play(self, observation: Observation) -> Card:
        pool = observation.hand if self._random() < IGNORE_SUIT else observation.legal
        return pool[int(self._random() * len(pool))]
