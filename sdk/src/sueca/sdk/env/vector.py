"""Many matches stepped at once on numpy arrays: the environment for learning at scale.

:class:`VectorSuecaEnv` holds ``num_envs`` matches. In each, the agent to act is the seat to
play; one :meth:`~VectorSuecaEnv.step` plays one card in every match (an action per match), so
a step is ``num_envs`` agent steps. The observation of each match is the acting seat's array,
the same numbers as the single environments give (:mod:`.encoding`: one array layout, and a
test plays whole matches through both and compares every array), with its legal-card mask;
``info["seat"]`` says which seat acts. The observation array is the environment's own buffer,
written again by the next step (as a rollout buffer copies it anyway, a fresh array a step would
only cost an allocation): copy it to keep it. A match that ends is started again at once (Gymnasium's
``SAME_STEP`` autoreset): its ``terminations`` entry is True, the observation returned is the
new match's first, and ``info["final_obs"]`` holds the ended match's four arrays (seats 0..3).

Rewards are the schemes of :data:`~.match.REWARDS`, by team: ``info["team_rewards"]`` is
``(num_envs, 2)``, and the reward returned is that of the team of the seat that just played.
An illegal action raises :class:`~.match.IllegalActionError` naming the match, the action and
its legal cards, and changes nothing. The weak-hand question is always answered "play the
hand", as in :mod:`.aec`.

Why a second implementation of the rules: the engine plays one card in about a microsecond of
Python; stepping thousands of matches in lock step turns each rule (follow suit, who takes the
trick, scoring a deal) into a few array operations over all matches, so the cost per card is a
fraction of that. The rules are the engine's (the same trick keys, points and deal scoring),
and the equality test holds them to it card by card. Decks: by default shuffled by numpy
(uniform, reproducible from ``seed``); ``decks="engine"`` deals each match from the engine's
own seeded shuffle, as :class:`~sueca.engine.Match` does for the seed in
``match_seeds[i]``, so a match can be replayed by the engine (the equality test uses it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from sueca.engine import Variant
from sueca.engine.cards import POINTS, SUIT_MASKS
from sueca.engine.game import shuffled_deck
from sueca.engine.seeding import seeded_random

from .aec import observation_space, to_variant
from .encoding import LAYOUT, OBS_SIZE
from .match import IllegalActionError, check_reward

__all__ = ["VectorSuecaEnv", "DECKS"]

DECKS = ("numpy", "engine")

I64 = npt.NDArray[np.int64]

_HAND, _TABLE, _LED, _LEADER, _PLAYED = (LAYOUT[k][0] for k in
                                         ("hand", "table", "led_suit", "leader", "played"))
_TRUMP_CARD, _TRUMP_SUIT, _TRUMP_HELD, _DEALER, _VOIDS = (
    LAYOUT[k][0] for k in ("trump_card", "trump_suit", "trump_held", "dealer", "voids"))
_POINTS, _GAME_POINTS, _HELD, _DEAL_NUMBER = (
    LAYOUT[k][0] for k in ("points", "game_points", "held_over", "deal_number"))
_GAME = 4 * OBS_SIZE  # one match's four arrays, flat

_CARD_POINTS = np.array(POINTS, np.int64)
_SUIT_MASK = np.array([*SUIT_MASKS, 0], np.int64)  # index -1: no card led yet
_CARD_BITS = np.array([1 << c for c in range(40)], np.int64)


def _tables() -> dict[str, I64]:
    """Flat positions, within one match's four arrays, that an event sets for every observer:
    one fancy assignment per event for all matches (the layout of :class:`.SeatEncoder`)."""
    obs = np.arange(4) * OBS_SIZE
    rel = (np.arange(4)[:, None] - np.arange(4)[None, :]) & 3  # rel[seat, observer]
    seats, cards, suits = np.arange(4), np.arange(40), np.arange(4)
    play = np.concatenate([obs + _TABLE + 40 * rel[:, None, :] + cards[None, :, None],
                           obs + _PLAYED + 40 * rel[:, None, :] + cards[None, :, None]], axis=2)
    team = np.arange(4) & 1
    return {
        "play": play.astype(np.int64),                    # [seat, card] -> table 4, played 4
        "own": (seats[:, None] * OBS_SIZE + _HAND + cards[None, :]).astype(np.int64),
        "led": (obs + _LED + suits[:, None]).astype(np.int64),            # [suit] -> 4
        "void": (obs + _VOIDS + 4 * rel[:, None, :] + suits[None, :, None]).astype(np.int64),
        "leader": (obs + _LEADER + rel).astype(np.int64),                 # [seat] -> 4
        "dealer": (obs + _DEALER + rel).astype(np.int64),
        "points": np.stack([obs + _POINTS + (team != t) for t in (0, 1)]).astype(np.int64),
        "game_points": np.stack([obs + _GAME_POINTS + (team != t)
                                 for t in (0, 1)]).astype(np.int64),
    }


_AT = _tables()


class VectorSuecaEnv(VectorEnv[dict[str, Any], npt.NDArray[np.int64], npt.NDArray[Any]]):
    """``num_envs`` matches in lock step (see the module doc)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int = 1024, *,
                 variant: Variant | Mapping[str, Any] | None = None,  # Any: JSON values
                 reward: str = "match", decks: str = "numpy") -> None:
        if num_envs.__class__ is not int or num_envs < 1:
            raise ValueError(f"bad num_envs {num_envs!r}: a whole number >= 1")
        if decks not in DECKS:
            raise ValueError(f"bad decks {decks!r}: valid values are {', '.join(DECKS)}")
        self.num_envs = num_envs
        self.variant = to_variant(variant)
        self.reward = check_reward(reward)
        self.decks = decks
        self.single_observation_space = observation_space()
        self.single_action_space = spaces.Discrete(40)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        n = num_envs
        self.obs = np.zeros((n, 4, OBS_SIZE), np.float32)  # every seat's array, per match
        self._flat = self.obs.reshape(-1)
        self._base = np.arange(n, dtype=np.int64) * _GAME
        self.hands = np.zeros((n, 4), np.int64)  # card bitmasks
        z = np.zeros(n, np.int64)
        self.turn, self.dealer, self.trump, self.led = z.copy(), z.copy(), z.copy(), z - 1
        self.on_table, self.win_key, self.win_seat, self.trick_points = (z.copy() for _ in "abcd")
        self.tricks, self.deal_number, self.held = z.copy(), z.copy(), z.copy()
        self.deal_points = np.zeros((n, 2), np.int64)
        self.tricks_won = np.zeros((n, 2), np.int64)
        self.game_points = np.zeros((n, 2), np.int64)
        self.legal = z.copy()
        # what the trick on the table set, to clear when it is taken: each card's table slot
        # in the four arrays (16), the led suit (4), the leader (4)
        self._trick_slots = np.zeros((n, 24), np.int64)
        self._rows = np.zeros((n, OBS_SIZE), np.float32)  # the observations returned
        self.match_seeds = [0] * n
        self._rng = np.random.default_rng()
        self._seed_rng = seeded_random(None)
        self._engine_rngs: list[Any] = [None] * n
        self._all = np.arange(n, dtype=np.int64)

    # -- the Gymnasium API ----------------------------------------------------------------
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Every match starts again; with ``seed`` the matches (and those after them) are
        fixed."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            self._seed_rng = seeded_random(seed)
        self._new_matches(self._all)
        self._legal()
        return self._observe(), {"seat": self.turn.copy()}

    def step(self, actions: Any) -> tuple[dict[str, Any], npt.NDArray[np.float32],  # Any: array-like
                                          npt.NDArray[np.bool_], npt.NDArray[np.bool_],
                                          dict[str, Any]]:
        a = self._checked(actions)
        n, s = self._all, self.turn
        bit = _CARD_BITS[a]
        self.hands[n, s] ^= bit
        suit, rank = a // 10, a % 10
        lead = self.on_table == 0
        led = self.led = np.where(lead, suit, self.led)
        trump_suit = self.trump // 10
        flat, base = self._flat, self._base
        slots = self._trick_slots
        li = np.flatnonzero(lead)
        if li.size:  # the leader's slot already holds the seat that leads: it took the last
            at = base[li, None] + _AT["led"][suit[li]]  # trick, or follows the dealer
            flat[at.ravel()] = 1.0
            slots[li, 16:20] = at
            slots[li, 20:24] = base[li, None] + _AT["leader"][s[li]]
        vi = np.flatnonzero(~lead & (suit != led))
        if vi.size:
            flat[(base[vi, None] + _AT["void"][s[vi], led[vi]]).ravel()] = 1.0
        at = base[:, None] + _AT["play"][s, a]
        flat[at.ravel()] = 1.0
        col = self.on_table[:, None] * 4 + np.arange(4)
        slots[n[:, None], col] = at[:, :4]
        flat[base + _AT["own"][s, a]] = 0.0
        ti = np.flatnonzero(a == self.trump)
        if ti.size:
            self.obs[ti, :, _TRUMP_HELD] = 0.0
        key = np.where(suit == trump_suit, 20 + rank, np.where(suit == led, 10 + rank, -1))
        better = lead | (key > self.win_key)
        self.win_key = np.where(better, key, self.win_key)
        self.win_seat = np.where(better, s, self.win_seat)
        self.trick_points += _CARD_POINTS[a]
        self.on_table += 1
        self.turn = (s + 1) & 3
        team_rewards = np.zeros((self.num_envs, 2), np.float32)
        ended = np.zeros(self.num_envs, np.bool_)
        info: dict[str, Any] = {}
        ci = np.flatnonzero(self.on_table == 4)
        if ci.size:
            done = self._close_tricks(ci)
            if done.size:
                over = self._score_deals(done, team_rewards)
                if over.size:
                    ended[over] = True
                    final = np.empty(self.num_envs, object)
                    for i in over:
                        final[i] = self.obs[i].copy()
                    info["final_obs"], info["_final_obs"] = final, ended.copy()
                    self._new_matches(over)
        self._legal()
        info["seat"] = self.turn.copy()
        info["team_rewards"] = team_rewards
        reward = team_rewards[n, s & 1]
        return self._observe(), reward, ended, np.zeros(self.num_envs, np.bool_), info

    def close_extras(self, **kwargs: Any) -> None:  # Any: Gymnasium's signature
        """Nothing to release: no processes, files or windows."""

    # -- the rules, on every match at once ------------------------------------------------
    def _checked(self, actions: Any) -> I64:  # Any: what a learner passes
        try:
            a = np.asarray(actions)
        except Exception:
            raise IllegalActionError(f"actions {str(actions)[:60]!r}: not an array of card "
                                     "numbers") from None
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise IllegalActionError(
                f"actions of shape {a.shape} and type {a.dtype}: expected {self.num_envs} "
                "whole card numbers, one per match")
        a = a.astype(np.int64)
        ok = (a >= 0) & (a < 40)
        ok &= ((self.legal >> np.where(ok, a, 0)) & 1).astype(np.bool_)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            legal = " ".join(str(c) for c in range(40) if self.legal[i] >> c & 1)
            raise IllegalActionError(f"action {int(a[i])} in match {i} (seat "
                                     f"{int(self.turn[i])}): not a legal card; the legal "
                                     f"actions are {legal}")
        return a

    def _legal(self) -> None:
        hand = self.hands[self._all, self.turn]
        follow = hand & np.where(self.on_table > 0, _SUIT_MASK[self.led], 0)
        self.legal = np.where(follow != 0, follow, hand)

    def _observe(self) -> dict[str, Any]:
        bits = np.unpackbits(self.legal.astype("<i8").view(np.uint8).reshape(-1, 8), axis=1,
                             bitorder="little")
        rows = self.obs.reshape(-1, OBS_SIZE).take(self._all * 4 + self.turn, axis=0,
                                                   out=self._rows)
        return {"observation": rows, "action_mask": bits[:, :40].view(np.int8)}

    def _close_tricks(self, ci: I64) -> I64:
        """Score the full tricks of matches ``ci``; returns those whose deal is over."""
        winner = self.win_seat[ci]
        team = winner & 1
        self.deal_points[ci, team] += self.trick_points[ci]
        self.tricks_won[ci, team] += 1
        self.tricks[ci] += 1
        self._flat[self._trick_slots[ci].ravel()] = 0.0  # table, led suit and leader
        base = self._base[ci, None]
        self._flat[(base + _AT["points"][team]).ravel()] = np.repeat(
            self.deal_points[ci, team] / 120, 4)
        self._flat[(base + _AT["leader"][winner]).ravel()] = 1.0
        self.turn[ci] = winner
        self.on_table[ci] = 0
        self.trick_points[ci] = 0
        self.led[ci] = -1
        done: I64 = ci[self.tricks[ci] == 10]
        return done

    def _score_deals(self, di: I64, team_rewards: npt.NDArray[np.float32]) -> I64:
        """Score the finished deals of matches ``di`` (the engine's ``_finish_deal``), pay the
        rewards, deal again where no team reached the target; returns the matches that
        ended."""
        v = self.variant
        pts = self.deal_points[di]
        gp = np.zeros_like(pts)
        for t in (0, 1):
            p = pts[:, t]
            sweep = (self.tricks_won[di, t] == 10) if v.bandeira == "all_tricks" else (p == 120)
            gp[:, t] = np.where(p > 60, np.where(sweep, 4, np.where(p >= 91, 2, 1)), 0)
        tie = gp.sum(1) == 0
        held = self.held[di]
        if v.tie != "none":
            pay = ~tie & (held > 0)
            if v.tie == "carry":
                gp = np.where(pay[:, None] & (gp > 0), gp + held[:, None], gp)
            else:
                gp = np.where(pay[:, None] & (gp > 0), gp << held[:, None], gp)
            self.held[di] = np.where(tie, held + 1, 0)
        g = self.game_points[di] = self.game_points[di] + gp
        if self.reward == "deal":
            r = (gp[:, 0] - gp[:, 1]).astype(np.float32)
        elif self.reward == "points":
            r = ((pts[:, 0] - pts[:, 1]) / 120).astype(np.float32)
        else:
            r = np.zeros(di.size, np.float32)
        over = (g >= v.target).any(1)
        win0 = g[:, 0] >= v.target
        if self.reward == "match":
            r = np.where(over, np.where(win0, 1.0, -1.0), 0.0).astype(np.float32)
        team_rewards[di, 0] = r
        team_rewards[di, 1] = -r
        ended, going = di[over], di[~over]
        if ended.size:  # the last arrays of the match carry its final score
            self._write_scores(ended)
        if going.size:
            self.dealer[going] = (self.dealer[going] + 1) & 3
            self.deal_number[going] += 1
            self._deal(going)
        return ended

    def _new_matches(self, idx: I64) -> None:
        """Matches ``idx`` start from nothing: a first dealer drawn, the first deal dealt."""
        if self.decks == "engine":
            for i in idx:
                seed = self.match_seeds[i] = self._seed_rng.getrandbits(63)
                rng = self._engine_rngs[i] = seeded_random(seed)
                first = rng.getrandbits(3)  # the engine's randrange(4), as Match draws it
                while first >= 4:
                    first = rng.getrandbits(3)
                self.dealer[i] = first
        else:
            self.dealer[idx] = self._rng.integers(0, 4, idx.size)
        self.game_points[idx] = 0
        self.held[idx] = 0
        self.deal_number[idx] = 0
        self._deal(idx)

    def _deal(self, idx: I64) -> None:
        """Deal matches ``idx`` a new deal by their dealers (the engine's ``deal_hands``) and
        write every seat's array as :meth:`.SeatEncoder.deal` does."""
        if self.decks == "engine":
            deck = np.array([shuffled_deck(self._engine_rngs[i]) for i in idx], np.int64)
        else:
            deck = np.argsort(self._rng.random((idx.size, 40)), axis=1).astype(np.int64)
        dealer = self.dealer[idx]
        if self.variant.trump_card == "last":
            start, turned = (dealer + 1) & 3, deck[:, 39]
        else:
            start, turned = dealer, deck[:, 0]
        bits = _CARD_BITS[deck]
        seat_of = (start[:, None] + np.arange(40) // 10) & 3  # deck position -> seat
        for b in range(4):
            self.hands[idx, (start + b) & 3] = bits[:, 10 * b:10 * b + 10].sum(1)
        obs = self.obs
        obs[idx] = 0.0
        base = self._base[idx, None]
        self._flat[(base + seat_of * OBS_SIZE + _HAND + deck).ravel()] = 1.0
        col = idx[:, None]
        obs[col, np.arange(4), (_TRUMP_CARD + turned)[:, None]] = 1.0
        obs[col, np.arange(4), (_TRUMP_SUIT + turned // 10)[:, None]] = 1.0
        obs[idx, :, _TRUMP_HELD] = 1.0
        leader = (dealer + 1) & 3
        self._flat[(base + _AT["dealer"][dealer]).ravel()] = 1.0
        self._flat[(base + _AT["leader"][leader]).ravel()] = 1.0
        obs[idx, :, _DEAL_NUMBER] = (np.minimum(self.deal_number[idx], 32) / 32)[:, None]
        self._write_scores(idx)
        self.trump[idx] = turned
        self.turn[idx] = leader
        self.led[idx] = -1
        for a in (self.on_table, self.trick_points, self.tricks):
            a[idx] = 0
        self.deal_points[idx] = 0
        self.tricks_won[idx] = 0

    def _write_scores(self, idx: I64) -> None:
        target = self.variant.target
        base = self._base[idx, None]
        for t in (0, 1):
            self._flat[(base + _AT["game_points"][t]).ravel()] = np.repeat(
                np.minimum(self.game_points[idx, t], target) / target, 4)
        self.obs[idx, :, _HELD] = (np.minimum(self.held[idx], 4) / 4)[:, None]


if "sueca/SuecaVector-v0" not in gymnasium.registry:
    gymnasium.register("sueca/SuecaVector-v0",
                       vector_entry_point="sueca.sdk.env.vector:VectorSuecaEnv")
