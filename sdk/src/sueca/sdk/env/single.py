"""The Gymnasium environment: one learning seat, the other three played by bots in-process.

``SuecaGymEnv(partner="heuristic", opponents="random")`` seats the learner in ``seat`` (0 by
default), its partner two seats on and the two opponents between; a bot is any spec
:func:`sueca.sdk.bots.load_bot` takes (``random``, ``heuristic``, ``module:Class``,
``./file.py:Class``). The observation is the dict of :mod:`.aec` (``observation`` array and
``action_mask``); an action is a card number 0..39. An episode is one match; a step plays the
learner's card and then the bots' until it is the learner's turn again or the match is over.

An illegal action (a card the learner may not play now) is the documented penalty: the
episode ends at once (``terminated``) with reward ``illegal_reward`` (-1 by default) and
``info["illegal_action"]`` saying which card was refused and which were legal; the match is
abandoned, never played on in a wrong state. The weak-hand question is answered "play the
hand" for the learner, and by its own ``redeal`` for a bot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium
from gymnasium import spaces

from sueca.engine import Play, SeatView, Variant
from sueca.engine.cards import cards_of

from ..bot import MatchInfo, bot_seeds
from ..bots import check_bot, load_bot
from .aec import Obs, observation_space, to_variant
from .match import EncodedMatch, IllegalActionError, check_reward

__all__ = ["GYM_ID", "SuecaGymEnv"]

GYM_ID = "sueca/Sueca-v0"
"""``gymnasium.make(GYM_ID, partner=..., opponents=...)`` makes a :class:`SuecaGymEnv`."""

_HOOKS = ("on_trick_end", "on_deal_end", "on_match_end")


def _hook(bot: Any, name: str) -> Callable[..., Any] | None:
    fn = getattr(bot, name, None)
    return None if fn is None or getattr(fn, "default_hook", False) else fn


class SuecaGymEnv(gymnasium.Env[Obs, int]):
    """One learning seat against bots (see the module doc)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, partner: str = "random", opponents: str = "random", seat: int = 0,
                 variant: Variant | Mapping[str, Any] | None = None, reward: str = "match",
                 illegal_reward: float = -1.0, render_mode: str | None = None) -> None:
        if seat not in (0, 1, 2, 3) or seat.__class__ is not int:
            raise ValueError(f"bad seat {seat!r}: a seat is 0, 1, 2 or 3")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"bad render_mode {render_mode!r}: valid modes are None, 'ansi'")
        self.variant = to_variant(variant)
        self.reward = check_reward(reward)
        self.seat = seat
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.specs = {(seat + 2) & 3: partner, (seat + 1) & 3: opponents, (seat + 3) & 3: opponents}
        self._makers = {s: load_bot(spec) for s, spec in self.specs.items()}  # BotLoadError
        for s, make in self._makers.items():
            check_bot(self.specs[s], make)  # a spec naming no Bot fails here, not mid-episode
        self.observation_space = observation_space()  # type: ignore[assignment]  # a Dict space
        self.action_space = spaces.Discrete(40)  # type: ignore[assignment]  # of numpy ints
        self._game: EncodedMatch | None = None
        self._bots: dict[int, Any] = {}
        self._views: dict[int, SeatView] = {}
        self._hooks: dict[str, list[Callable[..., Any]]] = {name: [] for name in _HOOKS}
        self._over = True

    @property
    def game(self) -> EncodedMatch:
        """The match being played (after :meth:`reset`)."""
        if self._game is None:
            raise RuntimeError("call reset() before using the environment")
        return self._game

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Obs, dict[str, Any]]:
        super().reset(seed=seed)
        match_seed = int(self.np_random.integers(2**63))
        game = self._game = EncodedMatch(self.variant, match_seed, self.reward)
        names = tuple("learner" if s == self.seat else self.specs[s] for s in range(4))
        seeds = bot_seeds(match_seed)
        self._bots, self._views = {}, {}
        for s, make in self._makers.items():
            bot = make()
            start = getattr(bot, "start", None)
            if start is not None:
                start(MatchInfo(f"gym-{match_seed}", s, names, self.variant, seeds[s]))
            self._bots[s] = bot
            self._views[s] = SeatView(game.match, s)
        self._hooks = {name: [fn for bot in self._bots.values()
                              if (fn := _hook(bot, name)) is not None] for name in _HOOKS}
        self._over = False
        self._advance()
        return self._observe(), {}

    def step(self, action: int) -> tuple[Obs, float, bool, bool, dict[str, Any]]:
        if self._over:
            raise RuntimeError("the episode is over: call reset() before step()")
        game = self.game
        try:
            rewards = game.play(action)
        except IllegalActionError as err:
            self._over = True
            return self._observe(), self.illegal_reward, True, False, {"illegal_action": str(err)}
        self._tell(game.last)
        reward = rewards[self.seat & 1] + self._advance()
        return self._observe(), reward, self._over, False, {}

    def _observe(self) -> Obs:
        game = self.game
        return {"observation": game.encoder.arrays[self.seat].copy(),
                "action_mask": game.action_mask(self.seat)}

    def _advance(self) -> float:
        """Let the bots act until the learner is to play or the match is over; the learner's
        rewards meanwhile."""
        game = self.game
        match = game.match
        team = self.seat & 1
        reward = 0.0
        while match.end is None:
            s = match.deal.turn
            if game.awaiting_redeal:
                ask = None if s == self.seat else getattr(self._bots[s], "redeal", None)
                result = game.redeal(bool(ask(self._views[s])) if ask is not None else False)
                if result is not None:
                    for fn in self._hooks["on_deal_end"]:
                        fn(result)
                continue
            if s == self.seat:
                return reward
            reward += game.play_any(self._bots[s].play(self._views[s]))[team]
            self._tell(game.last)
        self._over = True
        for fn in self._hooks["on_match_end"]:
            fn((match.game_points[0], match.game_points[1]), match.winner, match.end)
        return reward

    def _tell(self, p: Play | None) -> None:
        """The bots' trick and deal hooks, after any card (the learner's too)."""
        if p is None:
            return
        if p.trick is not None:
            for fn in self._hooks["on_trick_end"]:
                fn(p.trick)
        if p.deal is not None:
            for fn in self._hooks["on_deal_end"]:
                fn(p.deal)

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; use render_mode='ansi'")
            return None
        return self.game.render()

    def legal_cards(self) -> list[int]:
        """The card numbers the learner may play now."""
        return [int(c) for c in cards_of(self.game.legal_mask(self.seat))]


if GYM_ID not in gymnasium.registry:
    gymnasium.register(GYM_ID, entry_point="sueca.sdk.env.single:SuecaGymEnv")
