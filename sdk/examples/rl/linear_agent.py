"""A linear agent: each legal card gets a score, the weights times ten features of that card in
the position, and the best-scoring card is played.

The features are read from the observation array alone (sueca.sdk.env.encoding), so the same
policy plays in the environment, in self-play and over the network:

  points, strength, trump?, takes the trick now?, ... taking this many points?, partner
  winning (give points)?, leading a trump?, leading points?, last to play and taking?,
  throwing points away to the opponents?

``make_bot`` is the bot for every command that takes one:
``sueca-bot run sdk/examples/rl/linear_agent.py:make_bot`` (weights from the file named by
``RL_AGENT_WEIGHTS``, default ``weights.npz`` in the current directory, as train.py saves).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from sueca.sdk.env import LAYOUT, PolicyBot

FEATURES = ("points", "strength", "trump", "takes", "takes_points", "feeds_partner",
            "leads_trump", "leads_points", "takes_last", "gives_points")

_CARD = np.arange(40)
_SUIT = _CARD // 10
_STRENGTH = _CARD % 10
_POINTS = np.array([0, 0, 0, 0, 0, 2, 3, 4, 10, 11])[_STRENGTH] / 11
_TABLE = LAYOUT["table"][0]
_LED = LAYOUT["led_suit"][0]
_TRUMP_SUIT = LAYOUT["trump_suit"][0]
_ZERO = np.zeros(40)


def features(observation: np.ndarray) -> np.ndarray:
    """A (40, len(FEATURES)) matrix: the features of every card as if it were played now."""
    trump = observation[_TRUMP_SUIT:_TRUMP_SUIT + 4].argmax()
    is_trump = (_SUIT == trump).astype(float)
    table = observation[_TABLE:_TABLE + 160].reshape(4, 40)  # relative seat x card
    on_table = table.any(axis=0)
    if on_table.any():
        led = observation[_LED:_LED + 4].argmax()
        key = np.where(is_trump > 0, 20 + _STRENGTH, np.where(_SUIT == led, 10 + _STRENGTH, -1))
        best = int(_CARD[on_table][key[on_table].argmax()])
        partner = float(table[2, best] > 0)  # relative seat 2 is the partner
        takes = (key > key[best]).astype(float)
        table_points = _POINTS[on_table].sum() * 11 / 30
        leading, last = 0.0, float(on_table.sum() == 3)
    else:
        partner, takes, table_points, leading, last = 0.0, _ZERO, 0.0, 1.0, 0.0
    return np.stack([
        _POINTS, _STRENGTH / 9, is_trump, takes, takes * table_points,
        partner * _POINTS, leading * is_trump, leading * _POINTS, takes * last,
        (1 - takes) * (1 - partner) * (1 - leading) * _POINTS,
    ], axis=1)


def features_batch(observations: np.ndarray) -> np.ndarray:
    """:func:`features` of every row of ``observations`` at once: (N, 40, len(FEATURES)), for
    the vector environment (the same numbers, row by row)."""
    n = len(observations)
    trump = observations[:, _TRUMP_SUIT:_TRUMP_SUIT + 4].argmax(axis=1)
    is_trump = (_SUIT[None, :] == trump[:, None]).astype(float)
    table = observations[:, _TABLE:_TABLE + 160].reshape(n, 4, 40)
    on_table = table.any(axis=1)
    some = on_table.any(axis=1)
    led = observations[:, _LED:_LED + 4].argmax(axis=1)
    key = np.where(is_trump > 0, 20 + _STRENGTH,
                   np.where(_SUIT[None, :] == led[:, None], 10 + _STRENGTH, -1))
    best = np.where(on_table, key, -99).argmax(axis=1)
    rows = np.arange(n)
    partner = ((table[rows, 2, best] > 0) & some).astype(float)[:, None]
    takes = ((key > key[rows, best][:, None]) & some[:, None]).astype(float)
    table_points = ((_POINTS * on_table).sum(axis=1) * 11 / 30)[:, None]
    leading = (~some).astype(float)[:, None]
    last = (on_table.sum(axis=1) == 3).astype(float)[:, None]
    points = np.broadcast_to(_POINTS, (n, 40))
    return np.stack([
        points, np.broadcast_to(_STRENGTH / 9, (n, 40)), is_trump, takes, takes * table_points,
        partner * points, leading * is_trump, leading * points, takes * last,
        (1 - takes) * (1 - partner) * (1 - leading) * points,
    ], axis=2)


def policy_for(weights: np.ndarray) -> Callable[[np.ndarray, np.ndarray], int]:
    """The policy (observation, action_mask) -> card of these weights."""
    def policy(observation: np.ndarray, mask: np.ndarray) -> int:
        scores = features(observation) @ weights
        scores[mask == 0] = -np.inf
        return int(scores.argmax())
    return policy


def load(path: str | None = None) -> np.ndarray:
    """The weights saved by train.py."""
    path = path or os.environ.get("RL_AGENT_WEIGHTS") or "weights.npz"
    with np.load(path) as saved:
        weights = saved["weights"]
    if weights.shape != (len(FEATURES),):
        raise ValueError(f"{path}: expected {len(FEATURES)} weights, found shape {weights.shape}")
    return weights


_POLICY: Callable[[np.ndarray, np.ndarray], int] | None = None


def make_bot() -> PolicyBot:
    """One bot per match; the weights are read once per process."""
    global _POLICY
    if _POLICY is None:
        _POLICY = policy_for(load())
    return PolicyBot(_POLICY)
