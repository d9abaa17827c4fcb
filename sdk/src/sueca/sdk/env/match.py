"""A match advanced one action at a time, with every seat's observation array kept up to date
and the rewards of each action: the core both environments step.

Actions are card numbers (0..39, as in :mod:`sueca.engine.cards`). An action that is not a
legal card for the seat to play raises :class:`IllegalActionError` and changes nothing: an
environment never applies a renúncia or a card the seat does not hold.
"""

from __future__ import annotations

import operator
from typing import Final

import numpy as np
import numpy.typing as npt

from sueca.engine import CARDS, DealResult, Match, Play, Variant
from sueca.engine.cards import cards_of

from .encoding import SeatEncoder

__all__ = ["REWARDS", "EncodedMatch", "IllegalActionError", "RewardError"]

REWARDS: Final = ("match", "deal", "points")
"""Reward schemes, team-shared and zero-sum (partners get the same, opponents its negative):

- ``match``: +1 to the winning team's seats and -1 to the others when the match ends; 0 before.
- ``deal``: when a deal ends, its game points, own team's minus the other team's (a tie pays
  nothing; the held-over points go to the deal that wins them), so a match sums to the
  difference of the final game points.
- ``points``: when a deal ends, its card points, own team's minus the other's, / 120.
"""

_NO_REWARD = (0.0, 0.0)
_SHOWN = 60  # characters of a bad value quoted in an error


class IllegalActionError(ValueError):
    """An action that is not a legal card for the seat to play; the message quotes it."""


class RewardError(ValueError):
    """An unknown reward scheme; the message quotes it and lists the valid ones."""


def check_reward(reward: object) -> str:
    if reward not in REWARDS:
        raise RewardError(f"bad reward {_quote(reward)}: valid rewards are {', '.join(REWARDS)}")
    return reward


def _quote(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


class EncodedMatch:
    """A :class:`~sueca.engine.Match` plus the :class:`SeatEncoder` of its four seats.

    :meth:`play` applies the card of the seat to play and returns the rewards it produced, by
    team. The weak-hand question (variant ``weak_hand_redeal``) is answered by the caller
    through :meth:`redeal` when :attr:`awaiting_redeal` is set.
    """

    __slots__ = ("match", "encoder", "reward", "last", "_target")

    def __init__(self, variant: Variant, seed: int, reward: str) -> None:
        self.match = Match(variant, seed)
        self.reward = check_reward(reward)
        self.encoder = SeatEncoder()  # the four seats' arrays, row = seat
        self._target = variant.target
        self.last: Play | None = None  # the record of the last card played
        self._start_deal()

    @property
    def awaiting_redeal(self) -> bool:
        return self.match.awaiting_redeal

    def legal_mask(self, seat: int) -> int:
        return self.match.legal_mask(seat)

    def action_mask(self, seat: int) -> npt.NDArray[np.int8]:
        """1 for each card ``seat`` may play now (all 0 when it is not its turn)."""
        out = np.zeros(40, np.int8)
        for c in cards_of(self.match.legal_mask(seat)):
            out[c] = 1
        return out

    def _start_deal(self) -> None:
        match = self.match
        deal = match.deal
        self.encoder.deal([cards_of(h) for h in deal.hands], deal.trump, deal.dealer,
                          deal.number, match.game_points, match.held, self._target)

    def redeal(self, call: bool) -> DealResult | None:
        """Answer the weak-hand question: ``True`` throws the deal in (the same dealer deals
        again; its record is returned), ``False`` plays it."""
        result = self.match.redeal(call)
        if result is not None:
            self._start_deal()
        return result

    def play(self, action: object) -> tuple[float, float]:
        """Play card ``action`` for the seat to play; returns the rewards of team 0 and team 1."""
        match = self.match
        seat = match.turn
        if seat is None:
            raise IllegalActionError(f"action {_quote(action)}: the match is over")
        legal = match.legal_mask(seat)
        try:
            number = operator.index(action)  # type: ignore[arg-type]  # numpy ints too
        except TypeError:
            raise IllegalActionError(self._refusal(action, seat, legal, "not a card number")) from None
        if not (0 <= number < 40 and legal >> number & 1):
            raise IllegalActionError(self._refusal(action, seat, legal, "not a legal card"))
        return self._apply(seat, match.play(CARDS[number]))

    def play_any(self, value: object) -> tuple[float, float]:
        """Play a bot's answer as the engine's rules say (a renúncia ends the deal): any card
        value :func:`sueca.engine.card` takes; a card not held raises the engine's error."""
        match = self.match
        seat = match.turn
        return self._apply(seat, match.play(value))  # type: ignore[arg-type]  # raises when over

    def _apply(self, seat: int, p: Play) -> tuple[float, float]:
        """Tell the encoder what card ``p`` did, and score it."""
        self.last = p
        match = self.match
        self.encoder.play(seat, p.card)
        trick = p.trick
        if trick is not None:
            self.encoder.trick(trick.winner, trick.points)
        result = p.deal
        if result is None:
            return _NO_REWARD
        if match.end is None:
            self._start_deal()
        else:
            self.encoder.scores(match.game_points, match.held)
        reward = self.reward
        if reward == "deal":
            r = float(result.game_points[0] - result.game_points[1])
        elif reward == "points":
            r = (result.points[0] - result.points[1]) / 120
        elif match.end is not None:
            r = 1.0 if match.winner == 0 else -1.0
        else:
            return _NO_REWARD
        return (r, -r)

    def _refusal(self, action: object, seat: int, legal: int, why: str) -> str:
        cards = " ".join(f"{int(c)} ({c})" for c in cards_of(legal))
        return (f"action {_quote(action)} for seat {seat}: {why}; the legal actions are the "
                f"card numbers {cards}")

    def render(self) -> str:
        """The table as text: game points, trump, the trick on the table and each hand."""
        match = self.match
        deal = match.deal
        g = match.game_points
        lines = [f"deal {deal.number + 1}  dealer seat {deal.dealer}  trump {deal.trump}"
                 f"{' (held)' if deal.trump_held else ''}  game points {g[0]}-{g[1]}  "
                 f"card points {deal.points[0]}-{deal.points[1]}"]
        lead = deal.leader
        table = " ".join(f"{(lead + i) & 3}:{c}" for i, c in enumerate(deal.trick))
        lines.append(f"table: {table or '-'}")
        for s in range(4):
            mark = ">" if match.turn == s else " "
            lines.append(f"{mark} seat_{s}: {' '.join(map(str, cards_of(deal.hands[s])))}")
        if match.end is not None:
            lines.append(f"match over ({match.end}): team {match.winner} wins")
        return "\n".join(lines)
