"""PolicyBot: a trained policy as a :class:`sueca.sdk.Bot`, wherever a bot plays.

A policy is any function ``(observation, action_mask) -> card number``: ``observation`` is the
float32 array of :mod:`.encoding` (the one the environments give), ``action_mask`` the int8
mask of the legal cards. ``PolicyBot(policy)`` plays it in self-play, ``duel``, ``loadtest``
and against a referee with no other code: a file ``agent.py`` with

    def make_bot():
        return PolicyBot(policy)

is the bot ``./agent.py:make_bot`` for every command that takes a bot. The array is built by
:func:`~.encoding.encode` from the observation the bot is given (self-play's view or the
network's), so the policy sees exactly what it saw in training.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from sueca.engine import Card, Observation

from ..bot import Bot
from .encoding import encode, mask_array

__all__ = ["Policy", "PolicyBot", "PolicyError"]

Policy = Callable[[npt.NDArray[np.float32], npt.NDArray[np.int8]], Any]
_SHOWN = 60  # characters of a policy's bad answer quoted in an error


class PolicyError(ValueError):
    """The policy answered something that is not a legal card; the message quotes it."""


class PolicyBot(Bot):
    """Plays the card ``policy(encode(observation), mask)`` names. The weak-hand question
    (variant ``weak_hand_redeal``) is answered "play the hand", as the environments do."""

    def __init__(self, policy: Policy) -> None:
        if not callable(policy):
            raise TypeError(f"PolicyBot needs a function (observation, action_mask) -> card "
                            f"number; got a {type(policy).__name__}")
        self.policy = policy

    def play(self, observation: Observation) -> Card:
        legal = observation.legal
        answer = self.policy(encode(observation), mask_array(legal))
        try:
            number = operator.index(answer)
        except TypeError:
            raise PolicyError(self._refusal(answer, legal, "not a card number")) from None
        for c in legal:
            if c == number:
                return c
        raise PolicyError(self._refusal(answer, legal, "not a legal card"))

    @staticmethod
    def _refusal(answer: object, legal: tuple[Card, ...], why: str) -> str:
        text = repr(answer)
        if len(text) > _SHOWN:
            text = text[:_SHOWN] + "..."
        cards = " ".join(f"{int(c)} ({c})" for c in legal)
        return f"policy answered {text}: {why}; the legal card numbers are {cards}"
