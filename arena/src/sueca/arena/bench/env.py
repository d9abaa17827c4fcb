"""RL environment speed: agent steps/s of the PettingZoo env against the engine's playout.

The env plays random legal actions; the observation encoding's share is measured too.

The env side is what a learner's loop does: ``env()`` (PettingZoo's order-enforcing wrapper
included), ``agent_iter``, ``last()`` (an observation dict per step: the array and the action
mask), a random legal card from the mask, ``step``, a new match at each end. The same loop on
``raw_env()`` shows what the wrapper costs. The baseline is the engine's random playout
(``play_local`` with four ``RandomBot``s), counted in cards played: an agent step is one card.
The three run in alternating blocks in one process, so a noisy machine slows them alike.

Rates are given per wall-clock second and per CPU-second of this process (``process_time``):
on a machine shared with other work the wall clock counts the time spent waiting for a core,
so "on one core" is the CPU figure, and the target is checked on it.

The encoding's share is the CPU time to replay the env run's own matches through the four
seats' :class:`~sueca.sdk.env.SeatEncoder` (every deal, card and trick, as the env tells it)
plus one observation copy and one action mask per step, over the CPU time of a step of the env
loop. Needs the SDK's ``rl`` extra.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import Any

import numpy as np

from sueca.engine import DEFAULT, legal_mask
from sueca.engine.cards import SUIT_MASKS, cards_of
from sueca.sdk.bots import RandomBot
from sueca.sdk.cli import Bounded
from sueca.sdk.local import play_local

BLOCKS = 5  # env, raw env and engine alternate this many times
TARGET = 10_000  # agent steps/s on one core (docs/benchmarks.md § env)
VECTOR_TARGET = 1_000_000  # agent steps/s on one core of the vector env, random legal actions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--steps", action=Bounded, kind=int, low=1, default=None,
                        help="agent steps on each side (100000; with --vector 5000000)")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="seed (0)")
    parser.add_argument("--vector", action="store_true",
                        help="the vector env (VectorSuecaEnv) against raw_env() instead")
    parser.add_argument("--batch", action=Bounded, kind=int, low=1, high=65536, default=1024,
                        help="matches stepped at once by the vector env (1024)")


class _EnvLoop:
    """The learner's loop with random legal actions; keeps the finished matches."""

    def __init__(self, make: Any, seed: int) -> None:
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


def encoding_replay(matches: list[Any]) -> int:
    """Tell the four seats' encoder every event of ``matches`` and take one observation copy
    and one action mask per card, as the env does (the caller times it); returns the cards."""
    from sueca.sdk.env import SeatEncoder, mask_array  # deferred: the SDK's optional rl extra

    cards = 0
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
    return cards


def measure(steps: int, seed: int) -> dict[str, Any]:
    from sueca.sdk.env import env, raw_env  # deferred: the SDK's optional rl extra (run() says)

    loops = {"env": _EnvLoop(env, seed), "raw": _EnvLoop(raw_env, seed + 1)}
    engine = _Engine(seed)
    done = {"env": 0, "raw": 0, "engine": 0}
    seconds = {"env": 0.0, "raw": 0.0, "engine": 0.0}
    cpu = {"env": 0.0, "raw": 0.0, "engine": 0.0}
    clock, cpu_clock = time.perf_counter, time.process_time
    blocks = max(1, min(BLOCKS, steps // 2000))
    for b in range(blocks):
        target = steps * (b + 1) // blocks
        for name, runner in (("env", loops["env"]), ("raw", loops["raw"]), ("engine", engine)):
            t, c = clock(), cpu_clock()
            done[name] += runner.run(target - done[name])
            seconds[name] += clock() - t
            cpu[name] += cpu_clock() - c
        rate = done["env"] / seconds["env"]
        print(f"bench env: block {b + 1}/{blocks}: {rate:,.0f} steps/s so far",
              file=sys.stderr, flush=True)
    t, c = clock(), cpu_clock()
    enc_cards = encoding_replay(loops["env"].matches)
    enc_s, enc_cpu = clock() - t, cpu_clock() - c

    def per_s(name: str, times: dict[str, float]) -> float:
        return done[name] / times[name] if times[name] > 0 else 0.0

    env_rate, raw_rate, engine_rate = (per_s(n, seconds) for n in ("env", "raw", "engine"))
    env_cpu_rate, raw_cpu_rate = per_s("env", cpu), per_s("raw", cpu)
    enc_per_step = enc_cpu / enc_cards if enc_cards else 0.0  # CPU s to encode one step
    return {"steps": done["env"], "seconds": round(seconds["env"], 3),
            "steps_per_s": round(env_rate), "raw_steps_per_s": round(raw_rate),
            "baseline_steps_per_s": round(engine_rate),
            "ratio": round(env_rate / engine_rate, 3) if engine_rate else 0.0,
            "steps_per_cpu_s": round(env_cpu_rate), "raw_steps_per_cpu_s": round(raw_cpu_rate),
            "encoding_share": round(enc_per_step * env_cpu_rate, 3),
            "encoding_share_raw": round(enc_per_step * raw_cpu_rate, 3),
            "encoding_seconds": round(enc_s, 3),
            "target_steps_per_s": TARGET, "meets_target": env_cpu_rate >= TARGET}


class _VectorLoop:
    """The vector env with a random legal card in every match, drawn on arrays; counts agent
    steps (a step of the vector env is one per match)."""

    def __init__(self, batch: int, seed: int) -> None:
        from sueca.sdk.env.vector import VectorSuecaEnv  # deferred: the SDK's optional rl extra
        self.env = VectorSuecaEnv(batch)
        self.obs, _ = self.env.reset(seed=seed)
        self.rng = np.random.default_rng(seed)

    def run(self, steps: int) -> int:
        env, rng, n = self.env, self.rng, self.env.num_envs
        done = 0
        while done < steps:
            keys = rng.random((n, 40), dtype=np.float32) * self.obs["action_mask"]
            self.obs, *_ = env.step(keys.argmax(axis=1))
            done += n
        return done


def measure_vector(steps: int, seed: int, batch: int) -> dict[str, Any]:
    """The vector env and ``raw_env()`` in alternating blocks of one process."""
    from sueca.sdk.env import raw_env  # deferred: the SDK's optional rl extra (run() says)

    runners: tuple[_VectorLoop | _EnvLoop, ...] = (_VectorLoop(batch, seed),
                                                   _EnvLoop(raw_env, seed + 1))
    raw_steps = max(2000, steps // 100)  # the same seconds, about, at a hundredth of the rate
    done, seconds, cpu = [0, 0], [0.0, 0.0], [0.0, 0.0]
    clock, cpu_clock = time.perf_counter, time.process_time
    for b in range(BLOCKS):
        for i, (runner, total) in enumerate(zip(runners, (steps, raw_steps))):
            t, c = clock(), cpu_clock()
            done[i] += runner.run(total * (b + 1) // BLOCKS - done[i])
            seconds[i] += clock() - t
            cpu[i] += cpu_clock() - c
        print(f"bench env --vector: block {b + 1}/{BLOCKS}: "
              f"{done[0] / max(seconds[0], 1e-9):,.0f} steps/s so far", file=sys.stderr,
              flush=True)
    rate, cpu_rate = done[0] / seconds[0], done[0] / cpu[0]
    raw_rate, raw_cpu_rate = done[1] / seconds[1], done[1] / cpu[1]
    return {"vector": True, "batch": batch, "steps": done[0], "seconds": round(seconds[0], 3),
            "cpu_seconds": round(cpu[0], 3), "steps_per_s": round(rate),
            "steps_per_cpu_s": round(cpu_rate), "raw_steps": done[1],
            "raw_steps_per_s": round(raw_rate), "raw_steps_per_cpu_s": round(raw_cpu_rate),
            "ratio_cpu": round(cpu_rate / raw_cpu_rate, 1),
            "target_steps_per_s": VECTOR_TARGET, "meets_target": cpu_rate >= VECTOR_TARGET}


def run_vector(args: argparse.Namespace) -> int:
    result = measure_vector(args.steps or 5_000_000, args.seed, args.batch)
    print(f"{'loop':<24} {'steps/s':>12} {'steps/cpu-s':>12}")
    print(f"{'vector, batch ' + str(args.batch):<24} {result['steps_per_s']:>12,} "
          f"{result['steps_per_cpu_s']:>12,}")
    print(f"{'raw_env()':<24} {result['raw_steps_per_s']:>12,} "
          f"{result['raw_steps_per_cpu_s']:>12,}")
    verdict = "met" if result["meets_target"] else "NOT met"
    print(f"{result['steps']:,} agent steps in {result['cpu_seconds']:.2f} CPU s; "
          f"{result['ratio_cpu']}x raw_env() per CPU-second")
    print(f"target {VECTOR_TARGET:,} steps per CPU-second: {verdict}")
    print(json.dumps(result))
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        if args.vector:
            return run_vector(args)
        result = measure(args.steps or 100_000, args.seed)
    except ModuleNotFoundError as err:  # the SDK's rl extra is not installed
        print(f"error: {err}", file=sys.stderr)
        return 2
    rows = [("env() (wrapped)", f"{result['steps_per_s']:,}", f"{result['steps_per_cpu_s']:,}",
             f"{result['encoding_share']:.0%}"),
            ("raw_env()", f"{result['raw_steps_per_s']:,}", f"{result['raw_steps_per_cpu_s']:,}",
             f"{result['encoding_share_raw']:.0%}"),
            ("engine playout", f"{result['baseline_steps_per_s']:,}", "-", "-")]
    print(f"{'loop':<18} {'steps/s':>10} {'steps/cpu-s':>12} {'encoding':>9}")
    for name, rate, cpu_rate, share in rows:
        print(f"{name:<18} {rate:>10} {cpu_rate:>12} {share:>9}")
    verdict = "met" if result["meets_target"] else "NOT met"
    print(f"{result['steps']:,} agent steps in {result['seconds']:.2f} s; env/engine "
          f"ratio {result['ratio']:.3f}")
    print(f"target {TARGET:,} steps per CPU-second of env(): {verdict}")
    print(json.dumps(result))
    return 0
