"""Train a linear Sueca agent with the cross-entropy method, numpy only, in seconds on one CPU;
check that it beats random in self-play (win rate and its 95% Wilson interval); save the
weights; then seat it in a local arena (Redis, a referee and bot processes) for a few matches.

  python sdk/examples/rl/train.py                   # about 10 s of training
  python sdk/examples/rl/train.py --generations 6 --eval-matches 60 --arena-matches 1
  python sdk/examples/rl/train.py --out agents/v2.npz

The weights go to --out (a file, or a folder to hold weights.npz; default weights.npz here),
never over a file already there unless --force: that is checked before training starts.

The cross-entropy method: each generation draws candidate weight vectors around a mean, plays
each for some deals (team 0 both seats the candidate, team 1 random), every candidate's matches
side by side in one vector environment (VectorSuecaEnv), and moves the mean to the best quarter.
Reward: the deal's card points, own team's minus the other's, / 120 (``reward="points"``).
Exit status 0 when the agent beats random (the interval's low end above 0.5), else 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

try:
    import numpy as np

    from sueca.sdk.env import PolicyBot, VectorSuecaEnv
except ImportError as missing:  # the SDK without its rl extra (make install has none)
    print(f"train.py needs the SDK's rl extra (numpy, PettingZoo, Gymnasium); this Python "
          f"lacks {missing.name or 'one of them'!r}: pip install -e \"./sdk[rl]\" in the "
          "repository (docs/rl.md)", file=sys.stderr)
    raise SystemExit(2) from None

from sueca.sdk.bots import RandomBot
from sueca.sdk.selfplay import selfplay

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import linear_agent  # noqa: E402  (beside this file)

DEALS_PER_GAME = 4  # a candidate's deals are played as this many in each of its matches


def fitness(candidates: np.ndarray, deals: int, seed: int) -> np.ndarray:
    """Mean reward per deal of team 0 playing each candidate's weights against random play,
    every candidate's matches side by side in one vector environment."""
    games = -(-deals // DEALS_PER_GAME)
    n = len(candidates) * games
    env = VectorSuecaEnv(n, reward="points")
    obs, info = env.reset(seed=seed)
    weights = np.repeat(candidates, games, axis=0)  # match i plays candidate i // games
    rng = np.random.default_rng(seed)
    total = np.zeros(n)
    for _ in range(40 * DEALS_PER_GAME):  # every deal is 40 cards, in every match at once
        mask = obs["action_mask"]
        actions = (rng.random(mask.shape) * mask).argmax(axis=1)  # team 1: random cards
        ours = np.flatnonzero(info["seat"] % 2 == 0)  # team 0: the candidates
        scores = np.einsum("nkf,nf->nk", linear_agent.features_batch(obs["observation"][ours]),
                           weights[ours])
        actions[ours] = np.where(mask[ours] > 0, scores, -np.inf).argmax(axis=1)
        obs, _, _, _, info = env.step(actions)
        total += info["team_rewards"][:, 0]
    return total.reshape(len(candidates), games).sum(axis=1) / (games * DEALS_PER_GAME)


def train(seconds: float, generations: int | None, population: int, deals: int,
          seed: int) -> np.ndarray:
    """The mean of the last generation: after ``generations`` if given, else when
    ``seconds`` are spent (whichever comes first)."""
    rng = np.random.default_rng(seed)
    k = len(linear_agent.FEATURES)
    mean, std = np.zeros(k), np.ones(k)
    elite = max(2, population // 4)
    start = time.monotonic()
    generation = 0
    while time.monotonic() - start < seconds and generation != generations:
        candidates = mean + std * rng.standard_normal((population, k))
        scores = fitness(candidates, deals, seed * 1000 + generation)
        best = candidates[np.argsort(scores)[-elite:]]
        mean, std = best.mean(axis=0), best.std(axis=0) + 0.05
        generation += 1
        print(f"generation {generation}: mean reward {scores.mean():+.3f}, best "
              f"{scores.max():+.3f} per deal ({time.monotonic() - start:.0f} s)", flush=True)
    return mean


def evaluate(weights: np.ndarray, matches: int, seed: int) -> tuple[float, float, float]:
    """Win rate of the agent (both seats of a team) against random, and its 95% interval."""
    policy = linear_agent.policy_for(weights)
    summary = selfplay([lambda: PolicyBot(policy), RandomBot], ["agent", "random"],
                       matches=matches, seed=f"rl-eval-{seed}")
    agent = summary["bots"][0]
    low, high = agent["ci95"]
    print(f"agent vs random: won {agent['wins']} of {matches} matches, win rate "
          f"{agent['win_rate']:.3f} (95% interval {low:.3f}..{high:.3f})", flush=True)
    return agent["win_rate"], low, high


def arena_installed() -> bool:
    """Whether the arena's distributions are here (an SDK-only install has the rl extra alone)."""
    try:
        import sueca.arena.local_arena
        import sueca.referee.control  # noqa: F401
    except ModuleNotFoundError:
        return False
    return True


def arena(weights_path: Path, matches: int) -> None:
    """Seat the agent in a local arena, as a `sueca-bot run` process, against random."""
    # deferred: sueca-arena and sueca-referee are optional here (arena_installed)
    from sueca.arena.local_arena import LocalArena
    from sueca.referee import control

    spec = f"{HERE / 'linear_agent.py'}:make_bot"
    bots = {"rl-agent": spec, "random-bot": "random"}
    with LocalArena(bots=bots, workers=0, extra_env={"RL_AGENT_WEIGHTS": str(weights_path)}) as a:
        print(f"local arena: referee {a.referee}, bots {', '.join(bots)}", flush=True)
        for i in range(matches):
            seats = ["rl-agent", "random-bot"] * 2 if i % 2 == 0 else ["random-bot", "rl-agent"] * 2
            result = control.run_match(a.referee, {"bots": seats, "seed": i})
            winner = seats[result["winner"]] if result["winner"] is not None else "nobody"
            print(f"arena match {i + 1}: {result['end']}, game points "
                  f"{result['game_points'][0]}-{result['game_points'][1]}, {winner} won",
                  flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="training budget (10)")
    parser.add_argument("--generations", type=int, default=None,
                        help="stop after this many generations (default: when --seconds are spent)")
    parser.add_argument("--population", type=int, default=16, help="candidates per generation")
    parser.add_argument("--deals", type=int, default=64, help="deals per candidate (64)")
    parser.add_argument("--eval-matches", type=int, default=200, help="self-play matches (200)")
    parser.add_argument("--arena-matches", type=int, default=4, help="arena matches, 0: none")
    parser.add_argument("--out", type=Path, default=Path("weights.npz"), metavar="PATH",
                        help="the weights file, or a folder for weights.npz (weights.npz)")
    parser.add_argument("--force", action="store_true", help="overwrite the --out file")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    path = args.out / "weights.npz" if args.out.is_dir() else args.out
    if path.exists() and not args.force:
        print(f"train.py: error: {str(path)!r} exists: give --out another path, or --force to "
              "overwrite it", file=sys.stderr)
        return 2
    if args.arena_matches and not arena_installed():
        print("the arena matches are skipped: they need sueca-arena, which this Python does not "
              "have (pip install ./referee ./arena; --arena-matches 0 skips them)", flush=True)
        args.arena_matches = 0
    weights = train(args.seconds, args.generations, args.population, args.deals, args.seed)
    print("weights: " + ", ".join(f"{n} {w:+.2f}" for n, w in zip(linear_agent.FEATURES, weights)))
    _rate, low, _high = evaluate(weights, args.eval_matches, args.seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:  # np.savez would add .npz to a name without it
        np.savez(out, weights=weights)
    print(f"saved {path}", flush=True)
    if args.arena_matches:
        arena(path.resolve(), args.arena_matches)
    beats = low > 0.5
    print("the agent beats random" if beats else "the agent does not beat random yet: train longer")
    return 0 if beats else 1


if __name__ == "__main__":
    sys.exit(main())
