"""The vector environment (sueca.sdk.env.vector) against the engine and the single env: whole
matches played card by card through both, every array, mask, seat and reward compared, in
every variant that changes scoring or dealing; Gymnasium's vector API and wrappers; illegal
actions refused with nothing changed; seeds reproducible."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from sueca.sdk.env import OBS_SIZE, EncodedMatch, IllegalActionError
from sueca.sdk.env.vector import VectorSuecaEnv

VARIANTS = [
    {},
    {"tie": "double", "target": 8, "trump_card": "first", "bandeira": "all_points"},
    {"tie": "none", "weak_hand_redeal": True},
]


def _random_legal(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    return (rng.random(mask.shape) * mask).argmax(axis=1)


@pytest.mark.parametrize("variant", VARIANTS, ids=["default", "double-8-first", "no-tie"])
@pytest.mark.parametrize("reward", ["match", "deal", "points"])
def test_every_array_mask_and_reward_is_the_single_envs(variant: dict, reward: str) -> None:
    n = 8
    env = VectorSuecaEnv(n, variant=variant, reward=reward, decks="engine")
    obs, info = env.reset(seed=7)
    games = [EncodedMatch(env.variant, env.match_seeds[i], reward) for i in range(n)]
    rng = np.random.default_rng(3)
    ended = steps = 0
    while ended < n:
        seats = info["seat"]
        for i, g in enumerate(games):
            while g.awaiting_redeal:  # both answer "play the hand"
                g.redeal(False)
            assert g.match.turn == seats[i]
            assert np.array_equal(obs["observation"][i], g.encoder.arrays[seats[i]]), (i, steps)
            assert np.array_equal(obs["action_mask"][i], g.action_mask(seats[i])), (i, steps)
        actions = _random_legal(rng, obs["action_mask"])
        obs, rewards, terminated, truncated, info = env.step(actions)
        steps += 1
        assert not truncated.any()
        for i, g in enumerate(games):
            by_team = g.play(int(actions[i]))
            assert np.allclose(info["team_rewards"][i], by_team)
            assert rewards[i] == pytest.approx(by_team[seats[i] & 1])
            assert terminated[i] == (g.match.end is not None)
            if terminated[i]:
                assert np.array_equal(info["final_obs"][i], g.encoder.arrays)
                games[i] = EncodedMatch(env.variant, env.match_seeds[i], reward)
                ended += 1
    assert steps >= 80  # whole matches: two deals at the least


def test_the_gymnasium_vector_api_and_its_wrappers() -> None:
    envs = gymnasium.make_vec("sueca/SuecaVector-v0", num_envs=8,
                              vectorization_mode="vector_entry_point", reward="deal")
    envs = gymnasium.wrappers.vector.RecordEpisodeStatistics(envs)
    obs, info = envs.reset(seed=1)
    assert envs.observation_space.contains(obs)
    assert envs.action_space.shape == (8,)
    rng = np.random.default_rng(1)
    episodes = 0
    for _ in range(2000):
        obs, rewards, terminated, truncated, info = envs.step(_random_legal(rng, obs["action_mask"]))
        assert obs["observation"].shape == (8, OBS_SIZE) and rewards.shape == (8,)
        assert envs.observation_space.contains(obs)
        if terminated.any():
            episodes += int(terminated.sum())
            assert (info["episode"]["l"][terminated] >= 40).all()
    assert episodes >= 8
    envs.close()


def test_an_illegal_action_is_refused_and_changes_nothing() -> None:
    env = VectorSuecaEnv(4)
    obs, _ = env.reset(seed=2)
    before = (env.obs.copy(), env.hands.copy(), env.turn.copy())
    mask = obs["action_mask"].copy()
    good = _random_legal(np.random.default_rng(0), mask)
    bad = good.copy()
    bad[2] = int(np.flatnonzero(mask[2] == 0)[0])
    with pytest.raises(IllegalActionError, match=f"action {bad[2]} in match 2 .*not a legal"):
        env.step(bad)
    for actions, words in [(good[:3], "shape (3,)"), (good.astype(float), "type float64"),
                           (np.where(np.arange(4) == 1, 40, good), "action 40 in match 1")]:
        with pytest.raises(IllegalActionError, match=words.replace("(", r"\(").replace(")", r"\)")):
            env.step(actions)
    assert all(np.array_equal(a, b) for a, b in zip(before, (env.obs, env.hands, env.turn)))
    env.step(good)  # and it plays on


def test_a_seed_fixes_every_match() -> None:
    def run(seed: int) -> list[np.ndarray]:
        env = VectorSuecaEnv(16)
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        seen = []
        for _ in range(200):
            obs, *_ = env.step(_random_legal(rng, obs["action_mask"]))
            seen.append(obs["observation"].copy())
        return seen

    one, two, other = run(5), run(5), run(6)
    assert all(np.array_equal(a, b) for a, b in zip(one, two))
    assert not all(np.array_equal(a, b) for a, b in zip(one, other))


@pytest.mark.parametrize("bad, words", [({"num_envs": 0}, "num_envs 0"),
                                        ({"decks": "cards"}, "decks 'cards'"),
                                        ({"reward": "win"}, "reward 'win'")])
def test_bad_arguments_are_quoted(bad: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        VectorSuecaEnv(**{"num_envs": 2, **bad})


@pytest.mark.parametrize("tie", ["carry", "double"])
def test_tied_deals_are_held_over_as_the_engine_does(tie: str) -> None:
    """A 60-60 deal comes about once in a hundred: many matches, rewards and scores only."""
    n = 64
    env = VectorSuecaEnv(n, variant={"tie": tie, "target": 8}, reward="deal", decks="engine")
    obs, _ = env.reset(seed=11)
    games = [EncodedMatch(env.variant, env.match_seeds[i], "deal") for i in range(n)]
    rng = np.random.default_rng(5)
    ties = 0
    while ties < 3:
        actions = _random_legal(rng, obs["action_mask"])
        obs, _, terminated, _, info = env.step(actions)
        for i, g in enumerate(games):
            held = g.match.held
            assert np.allclose(info["team_rewards"][i], g.play(int(actions[i])))
            ties += g.match.held > held
            if terminated[i]:
                games[i] = EncodedMatch(env.variant, env.match_seeds[i], "deal")
            else:
                assert list(env.game_points[i]) == g.match.game_points
                assert env.held[i] == g.match.held
