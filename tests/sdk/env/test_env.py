"""The learning environments (sueca.sdk.env): PettingZoo's API and seed tests, Gymnasium's
checker, illegal actions, every variant, zero-sum rewards, the observation array's contents
on a hand-made position, and the one-encoder promise (the env's array is what
``encode`` builds from self-play's view and from a network observation)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from sueca import codec
from sueca.engine import CARDS, SeatView, Trick, Variant, VariantError, parse_card
from sueca.engine.observation import Snapshot
from sueca.engine.variant import CHOICES
from sueca.sdk.env import (
    LAYOUT,
    OBS_SIZE,
    IllegalActionError,
    RewardError,
    SuecaGymEnv,
    encode,
    env,
    raw_env,
)
from sueca.sdk.net_observation import Observation as NetObservation

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # the checkers' style hints


def _play_episode(e: Any, rng: random.Random, check: Any = None) -> dict[str, float]:
    """Random legal actions until the match ends; returns each agent's total reward."""
    totals = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, term, trunc, _info = e.last()
        totals[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        if check is not None:
            check(agent, obs)
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[int(rng.random() * len(legal))]))
    return totals


def test_pettingzoo_api_test_passes() -> None:
    api_test(env(), num_cycles=1000)
    api_test(env(variant={"weak_hand_redeal": True, "target": 8}, reward="deal"), num_cycles=500)


def test_pettingzoo_seed_test_passes() -> None:
    seed_test(env, num_cycles=500)
    seed_test(lambda: env(variant=Variant(trump_card="first", tie="double")), num_cycles=200)


def test_same_seed_same_match_other_seed_other_match() -> None:
    a, b = raw_env(), raw_env()
    a.reset(seed=7)
    b.reset(seed=7)
    assert a.game.match.deal.deck == b.game.match.deal.deck
    b.reset(seed=8)
    assert a.game.match.deal.deck != b.game.match.deal.deck


def test_gymnasium_checker_passes() -> None:
    check_env(SuecaGymEnv())
    check_env(SuecaGymEnv(partner="heuristic", opponents="reckless", seat=3, reward="points",
                          render_mode="ansi"))


def test_gym_episode_against_bots_ends_with_the_match() -> None:
    e = SuecaGymEnv(partner="heuristic", opponents="heuristic", seat=1, reward="deal")
    obs, _ = e.reset(seed=3)
    rng = random.Random(0)
    total, done = 0.0, False
    while not done:
        legal = np.flatnonzero(obs["action_mask"])
        assert len(legal) > 0 and e.game.match.turn == 1  # the learner is asked only its turn
        obs, reward, done, trunc, info = e.step(int(rng.choice(legal)))
        assert not trunc and "illegal_action" not in info
        total += reward
    match = e.game.match
    assert match.end is not None
    assert total == match.game_points[1] - match.game_points[0]  # deal rewards sum to the margin


def test_illegal_action_is_a_clear_error_and_changes_nothing() -> None:
    e = raw_env()
    e.reset(seed=11)
    agent = e.agent_selection
    before = e.observe(agent)
    legal = [int(c) for c in np.flatnonzero(before["action_mask"])]
    illegal = next(c for c in range(40) if c not in legal)
    with pytest.raises(IllegalActionError) as err:
        e.step(illegal)
    text = str(err.value)
    assert f"action {illegal} for seat {agent[-1]}: not a legal card" in text
    assert f"{legal[0]} ({CARDS[legal[0]]})" in text  # the legal cards are listed
    for bad, why in ((40, "not a legal card"), (-1, "not a legal card"),
                     ("AS", "not a card number"), (1.5, "not a card number")):
        with pytest.raises(IllegalActionError, match=f"action {bad!r} .*{why}"):
            e.step(bad)  # type: ignore[arg-type]
    after = e.observe(agent)
    assert e.agent_selection == agent
    assert np.array_equal(before["observation"], after["observation"])
    assert np.array_equal(before["action_mask"], after["action_mask"])
    e.step(np.int64(legal[0]))  # a numpy integer is a card number too
    assert e.agent_selection != agent


def test_gym_illegal_action_is_the_documented_penalty() -> None:
    e = SuecaGymEnv()
    obs, _ = e.reset(seed=5)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    played = len(e.game.match.deal.tricks), list(e.game.match.deal.trick)
    obs2, reward, terminated, truncated, info = e.step(illegal)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert f"action {illegal} for seat 0: not a legal card" in info["illegal_action"]
    assert (len(e.game.match.deal.tricks), list(e.game.match.deal.trick)) == played
    assert np.array_equal(obs["observation"], obs2["observation"])
    with pytest.raises(RuntimeError, match="the episode is over: call reset"):
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))


def test_bad_arguments_are_refused_with_the_value_quoted() -> None:
    with pytest.raises(RewardError, match="bad reward 'win': valid rewards are match, deal, points"):
        raw_env(reward="win")
    with pytest.raises(VariantError, match="'target'"):
        raw_env(variant={"target": 5})
    with pytest.raises(ValueError, match="bad render_mode 'human'"):
        raw_env(render_mode="human")
    with pytest.raises(ValueError, match="unknown bot 'nobody'"):
        SuecaGymEnv(partner="nobody")
    with pytest.raises(ValueError, match=r"bot 'json:dumps': dumps\(\) cannot make a bot"):
        SuecaGymEnv(opponents="json:dumps")
    with pytest.raises(ValueError, match="bad seat 4"):
        SuecaGymEnv(seat=4)


@pytest.mark.parametrize("key", sorted(CHOICES))
def test_every_variant_plays_to_the_end(key: str) -> None:
    for value in CHOICES[key][1:]:
        variant = Variant(**{key: value})
        e = env(variant=variant, reward="deal")
        e.reset(seed=21)
        totals = _play_episode(e, random.Random(1))
        match = e.unwrapped.game.match
        assert match.variant == variant and match.end is not None
        assert max(match.game_points) >= variant.target
        margin = match.game_points[0] - match.game_points[1]
        assert totals == {"seat_0": margin, "seat_1": -margin, "seat_2": margin,
                          "seat_3": -margin}


@pytest.mark.parametrize("reward", ["match", "deal", "points"])
def test_rewards_are_team_shared_and_zero_sum(reward: str) -> None:
    e = env(reward=reward)
    rng = random.Random(2)
    for seed in range(3):
        e.reset(seed=seed)
        totals = _play_episode(e, rng)
        assert totals["seat_0"] == totals["seat_2"] and totals["seat_1"] == totals["seat_3"]
        assert totals["seat_0"] == -totals["seat_1"]
        if reward == "match":
            winner = e.unwrapped.game.match.winner
            assert totals[f"seat_{winner}"] == 1.0
        assert totals["seat_0"] != 0 or reward == "points"


def test_weak_hand_is_played_by_default() -> None:
    e = raw_env(variant={"weak_hand_redeal": True})
    rng = random.Random(4)
    for seed in range(10):
        e.reset(seed=seed)
        _play_episode(e, rng)
        assert all(r.end != "redeal" for r in e.game.match.results)


def _block(array: np.ndarray, name: str) -> list[float]:
    at, size = LAYOUT[name]
    return [float(x) for x in array[at:at + size]]


def _ones(array: np.ndarray, name: str) -> list[int]:
    return [i for i, x in enumerate(_block(array, name)) if x]


def test_observation_contents_on_a_hand_made_position() -> None:
    """Seat 1 to play in deal 2; dealer seat 0 turned 7H and trumped the first trick with it;
    seats 3 and 0 showed they have no spade; seat 0 leads the king of diamonds."""
    c = parse_card
    hand = tuple(map(c, "2C 3C 4D 5D 6D QH JH 3S 4S".split()))
    first = Trick(1, (c("AS"), c("2S"), c("5C"), c("7H")), 0, 21)
    obs = Snapshot(seat=1, hand=hand, legal=(c("4D"), c("5D"), c("6D")), trump=c("7H"),
                   trump_suit=2, trump_held=False, dealer=0, leader=0,
                   trick=((0, c("KD")),), tricks=(first,), points=(21, 0), game_points=(3, 1),
                   held_over=1, variant=Variant(), deal_number=2)
    a = encode(obs)
    assert a.shape == (OBS_SIZE,) and a.dtype == np.float32
    assert _ones(a, "hand") == sorted(int(x) for x in hand)  # AS is gone: it was played
    # relative seats: seat 1 (me) 0, seat 2 1, seat 3 2 (partner), seat 0 3
    played = _ones(a, "played")
    assert played == [int(c("AS")), 40 + int(c("2S")), 80 + int(c("5C")), 120 + int(c("KD")),
                      120 + int(c("7H"))]
    assert _ones(a, "table") == [120 + int(c("KD"))]
    assert _ones(a, "trump_card") == [int(c("7H"))]
    assert _ones(a, "trump_suit") == [2]
    assert _block(a, "trump_held") == [0.0]
    assert _ones(a, "dealer") == [3] and _ones(a, "leader") == [3]
    assert _ones(a, "led_suit") == [1]  # diamonds
    assert _ones(a, "voids") == [4 * 2 + 3, 4 * 3 + 3]  # seats 3 and 0 did not follow spades
    assert _block(a, "points") == [0.0, pytest.approx(21 / 120)]
    assert _block(a, "game_points") == [0.25, 0.75]
    assert _block(a, "held_over") == [0.25]
    assert _block(a, "deal_number") == [2 / 32]
    assert a.sum() == pytest.approx(9 + 5 + 1 + 1 + 1 + 0 + 1 + 1 + 1 + 2 + 21 / 120 + 1.0
                                    + 0.25 + 2 / 32)  # nothing else is set


def _check_every_turn(variant: Variant, seed: int) -> int:
    """One match with random actions, comparing arrays at every turn; returns the turns."""
    e = raw_env(variant=variant)
    e.reset(seed=seed)
    match = e.game.match
    checked = 0

    def check(agent: str, obs: dict[str, np.ndarray]) -> None:
        nonlocal checked
        seat = int(agent[-1])
        view = SeatView(match, seat)
        net = NetObservation(codec.observation(match, seat), variant)
        assert np.array_equal(obs["observation"], encode(view)), (agent, view.snapshot())
        assert np.array_equal(obs["observation"], encode(net))
        other = (seat + 1) & 3  # and a seat not to play, mid-trick
        assert np.array_equal(e.observe(f"seat_{other}")["observation"],
                              encode(SeatView(match, other)))
        checked += 1

    _play_episode(e, random.Random(seed), check)
    return checked


def test_the_env_array_is_what_encode_builds_from_any_observation() -> None:
    """At every turn of whole matches, in several variants: the env's incremental array equals
    encode() of self-play's view and of the network observation of the same position."""
    checked = sum(_check_every_turn(variant, seed) for variant, seed in (
        (Variant(), 1), (Variant(trump_card="first", tie="double"), 2),
        (Variant(weak_hand_redeal=True, target=8), 3)))
    assert checked >= 3 * 40


def test_render_ansi_shows_the_table() -> None:
    e = raw_env(render_mode="ansi")
    e.reset(seed=9)
    text = e.render()
    assert text is not None and "trump" in text and "> seat_" in text
    assert raw_env().render() is None  # no render_mode: nothing
