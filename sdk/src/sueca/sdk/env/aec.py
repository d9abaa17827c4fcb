"""The PettingZoo AEC environment: four learning seats play one match per episode.

Agents are ``seat_0`` .. ``seat_3`` (team 0 is seats 0 and 2). Each observation is a dict of
``observation`` (float32, :data:`~.encoding.OBS_SIZE` long, see :mod:`.encoding`) and
``action_mask`` (int8, 40: the legal cards of the seat to play; all 0 for the other seats).
An action is a card number 0..39. An illegal action raises
:class:`~.match.IllegalActionError` and changes nothing. The weak-hand question (variant
``weak_hand_redeal``) is always answered "play the hand": the environment never throws a deal
in. An episode is one match; every agent is terminated when it ends.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from sueca.engine import DEFAULT, Variant
from sueca.engine.seeding import seeded_random

from .encoding import OBS_SIZE
from .match import EncodedMatch, check_reward

__all__ = ["AGENTS", "SuecaEnv", "env", "observation_space", "raw_env", "to_variant"]

AGENTS = ("seat_0", "seat_1", "seat_2", "seat_3")
_SEAT = {agent: seat for seat, agent in enumerate(AGENTS)}

Obs = dict[str, npt.NDArray[Any]]


def observation_space() -> spaces.Dict:
    """The space of one seat's observation dict."""
    return spaces.Dict({
        "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
        "action_mask": spaces.Box(0, 1, (40,), np.int8),
    })


def to_variant(variant: Variant | Mapping[str, Any] | None) -> Variant:
    """A :class:`~sueca.engine.Variant`, or a mapping such as ``{"target": 8}``; None: the
    default rules."""
    if variant is None:
        return DEFAULT
    if isinstance(variant, Variant):
        return variant
    return Variant.from_dict(variant)  # VariantError quotes a bad key or value


class SuecaEnv(AECEnv[str, Obs, "int | None"]):
    """Sueca for four agents (see the module doc). ``reward`` is one of
    :data:`~.match.REWARDS`; ``variant`` a :class:`~sueca.engine.Variant` or a mapping."""

    metadata = {"render_modes": ["ansi"], "name": "sueca_v0", "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, variant: Variant | Mapping[str, Any] | None = None,
                 reward: str = "match", render_mode: str | None = None) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # pettingzoo leaves it unannotated
        if render_mode not in (None, "ansi"):
            raise ValueError(f"bad render_mode {render_mode!r}: valid modes are None, 'ansi'")
        self.variant = to_variant(variant)
        self.reward = check_reward(reward)
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        space = observation_space()
        self.observation_spaces: dict[str, gymnasium.Space[Any]] = {a: space for a in AGENTS}
        self.action_spaces: dict[str, gymnasium.Space[Any]] = {
            a: spaces.Discrete(40) for a in AGENTS}
        self._seeds: random.Random | None = None
        self._game: EncodedMatch | None = None

    def observation_space(self, agent: str) -> gymnasium.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.Space[Any]:
        return self.action_spaces[agent]

    @property
    def game(self) -> EncodedMatch:
        """The match being played (after :meth:`reset`)."""
        if self._game is None:
            raise RuntimeError("call reset() before using the environment")
        return self._game

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new match. With ``seed`` the match, and those of the resets after it, are fixed."""
        if seed is not None or self._seeds is None:
            self._seeds = seeded_random(seed) if seed is not None else random.Random()
        self._game = EncodedMatch(self.variant, self._seeds.getrandbits(63), self.reward)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in AGENTS}
        self._answer_redeal()
        self.agent_selection = AGENTS[self._game.match.turn]  # type: ignore[index]  # not over

    def _answer_redeal(self) -> None:
        game = self.game
        while game.awaiting_redeal:
            game.redeal(False)  # the documented default: a weak hand is played

    def observe(self, agent: str) -> Obs:
        seat = _SEAT[agent]
        game = self.game
        return {"observation": game.encoder.arrays[seat].copy(),
                "action_mask": game.action_mask(seat)}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        r0, r1 = game.play(action)  # raises IllegalActionError before anything changes
        self._cumulative_rewards[agent] = 0.0
        rewards = self.rewards
        rewards["seat_0"] = rewards["seat_2"] = r0
        rewards["seat_1"] = rewards["seat_3"] = r1
        if r0 or r1:
            self._accumulate_rewards()
        match = game.match
        if match.end is not None:
            self.terminations = dict.fromkeys(self.agents, True)
            return
        if match.awaiting_redeal:
            self._answer_redeal()
        self.agent_selection = AGENTS[match.turn]  # type: ignore[index]  # not over

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; use render_mode='ansi'")
            return None
        return self.game.render()

    def close(self) -> None:
        """Nothing to release: the environment holds no files, processes or windows."""


def raw_env(**kwargs: Any) -> SuecaEnv:
    """The environment without wrappers (PettingZoo's convention)."""
    return SuecaEnv(**kwargs)


def env(**kwargs: Any) -> Any:
    """The environment wrapped in PettingZoo's order enforcement: it refuses ``step`` or
    ``observe`` before ``reset`` with a clear error."""
    return wrappers.OrderEnforcingWrapper(SuecaEnv(**kwargs))
