"""RL environment speed: agent steps/s of the PettingZoo env with random legal actions, the
observation encoding's share, against the engine's own random playout.

The env side is what a learner's loop does: ``env()`` (PettingZoo's order-enforcing wrapper
included), ``agent_iter``, ``last()`` (an observation dict per step: the array and the action
mask), a random legal card from the mask, ``step``, a new match at each end. The same loop on
``raw_env()`` shows what the wrapper costs. The baseline is the engine's random playout
(``play_local`` with four ``RandomBot``s), counted in cards played: an agent step is one card.
The three run in alternating blocks in one process, so a noisy machine slows them alike.

The encoding's share is the time to replay the env run's own matches through the four seats'
:class:`~sueca.sdk.env.SeatEncoder` (every deal, card and trick, as the env tells it) plus
one observation copy and one action mask per step, over the time of the env loop itself.
Needs the SDK's ``rl`` extra.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import Any

from sueca.sdk.cli import Bounded

BLOCKS = 5  # env, raw env and engine alternate this many times
TARGET = 10_000  # agent steps/s on one core (docs/benchmarks.md § env)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--steps", action=Bounded, kind=int, low=1, default=100_000,
                        help="agent steps on each side (100000)")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="seed (0)")


class _EnvLoop:
    """The learner's loop with random legal actions; keeps the finished matches."""

    def __init__(self, make: Any, seed: int) -> None:
        import numpy as np
        self.flatnonzero = np.flatnonzero
        self.env = make()
        self.env.reset(seed=seed)
        self.rng = random.Random(seed)
        self.matches: list[Any] = []

    def run(self, steps: int) -> int:
        e, rnd, nonzero = self.env, self.rng.random, self.flatnonzero
        done = 0
        while done < steps:
            agent = e.agent_selection
            obs, _reward, term, trunc, _info = e.last()
            if term or trunc:
                if agent == e.agents[-1] and len(e.agents) == 1:
                    self.matches.append(e.unwrapped.game.match)
                    e.step(None)
                    e.reset()
                else:
                    e.step(None)
                continue
            legal = nonzero(obs["action_mask"])
            e.step(int(legal[int(rnd() * len(legal))]))
            done += 1
        return done


class _Engine:
    """The engine's random playout, whole matches; counts cards played."""

    def __init__(self, seed: int) -> None:
        from sueca.engine import DEFAULT
        from sueca.sdk.bots import RandomBot
        from sueca.sdk.local import play_local

        self.play_local, self.variant, self.bots = play_local, DEFAULT, [RandomBot] * 4
        self.seed = seed
        self.matches = 0

    def run(self, steps: int) -> int:
        done = 0
        while done < steps:
            i = self.matches
            self.matches += 1
            match = self.play_local(self.bots, self.variant, self.seed * 1_000_003 + i,
                                    f"bench-{i}", ["random"] * 4)
            done += sum(len(t.cards) for d in match.deals for t in d.tricks)
        return done


def encoding_seconds(matches: list[Any]) -> tuple[float, int]:
    """Time to tell the four seats' encoder every event of ``matches`` and take one observation copy and
    one action mask per card, as the env does; returns (seconds, cards)."""
    from sueca.engine import legal_mask
    from sueca.engine.cards import SUIT_MASKS, cards_of
    from sueca.sdk.env import SeatEncoder, mask_array

    clock = time.perf_counter
    cards = 0
    t = clock()
    for match in matches:
        encoder = SeatEncoder()
        target = match.variant.target
        for deal in match.deals:
            hands = list(deal.start_hands)
            encoder.deal([cards_of(h) for h in hands], deal.trump, deal.dealer, deal.number,
                         (0, 0), 0, target)
            for trick in deal.tricks:
                led_mask = 0
                for s, c in zip(trick.seats(), trick.cards, strict=True):
                    mask_array(cards_of(legal_mask(hands[s], led_mask)))
                    encoder.arrays[s].copy()
                    led_mask = led_mask or SUIT_MASKS[c // 10]
                    hands[s] ^= 1 << c
                    encoder.play(s, c)
                    cards += 1
                encoder.trick(trick.winner, trick.points)
    return clock() - t, cards


def measure(steps: int, seed: int) -> dict[str, Any]:
    from sueca.sdk.env import env, raw_env

    loops = {"env": _EnvLoop(env, seed), "raw": _EnvLoop(raw_env, seed + 1)}
    engine = _Engine(seed)
    done = {"env": 0, "raw": 0, "engine": 0}
    seconds = {"env": 0.0, "raw": 0.0, "engine": 0.0}
    clock = time.perf_counter
    blocks = max(1, min(BLOCKS, steps // 2000))
    for b in range(blocks):
        target = steps * (b + 1) // blocks
        for name, runner in (("env", loops["env"]), ("raw", loops["raw"]), ("engine", engine)):
            t = clock()
            done[name] += runner.run(target - done[name])
            seconds[name] += clock() - t
        rate = done["env"] / seconds["env"]
        print(f"bench env: block {b + 1}/{blocks}: {rate:,.0f} steps/s so far",
              file=sys.stderr, flush=True)
    enc_s, enc_cards = encoding_seconds(loops["env"].matches)
    env_rate = done["env"] / seconds["env"]
    raw_rate = done["raw"] / seconds["raw"]
    engine_rate = done["engine"] / seconds["engine"]
    share = (enc_s / enc_cards) * env_rate if enc_cards else 0.0  # encoding s per step x steps/s
    return {"steps": done["env"], "seconds": round(seconds["env"], 3),
            "steps_per_s": round(env_rate), "raw_steps_per_s": round(raw_rate),
            "baseline_steps_per_s": round(engine_rate),
            "ratio": round(env_rate / engine_rate, 3),
            "encoding_share": round(share, 3), "encoding_share_raw": round(share * raw_rate / env_rate, 3),
            "target_steps_per_s": TARGET, "meets_target": env_rate >= TARGET}


def run(args: argparse.Namespace) -> int:
    try:
        result = measure(args.steps, args.seed)
    except ModuleNotFoundError as err:  # the SDK's rl extra is not installed
        print(f"error: {err}", file=sys.stderr)
        return 2
    rows = [("env() (wrapped)", f"{result['steps_per_s']:,}", f"{result['encoding_share']:.0%}"),
            ("raw_env()", f"{result['raw_steps_per_s']:,}", f"{result['encoding_share_raw']:.0%}"),
            ("engine playout", f"{result['baseline_steps_per_s']:,}", "-")]
    print(f"{'loop':<18} {'steps/s':>10} {'encoding':>9}")
    for name, rate, share in rows:
        print(f"{name:<18} {rate:>10} {share:>9}")
    verdict = "met" if result["meets_target"] else "NOT met"
    print(f"{result['steps']:,} agent steps in {result['seconds']:.2f} s; target "
          f"{TARGET:,} steps/s: {verdict}; env/engine ratio {result['ratio']:.3f}")
    print(json.dumps(result))
    return 0
