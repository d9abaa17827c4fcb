"""Engine speed: random-vs-random deals per second, against a bare bitmask sketch of Sueca.

The engine side is the real thing: ``sueca.sdk.local.play_local`` with four ``RandomBot``s reading
``observation.legal``, whole matches (seeding, bot start, scoring) until ``--deals`` deals are
played. The baseline is a dozen lines that deal and play random legal cards with int masks and no
observation, records or checks: roughly the fastest plain Python can go, so ``ratio`` says what
the engine's bookkeeping costs. The two run in alternating blocks in one process, so a noisy
machine slows both alike.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from sueca.engine import DEFAULT
from sueca.sdk.bots import RandomBot
from sueca.sdk.cli import Bounded
from sueca.sdk.local import play_local

BLOCKS = 10  # engine and baseline alternate this many times

_POINTS = tuple((0, 0, 0, 0, 0, 2, 3, 4, 10, 11)[c % 10] for c in range(40))
_SUIT = tuple(((1 << 10) - 1) << (10 * s) for s in range(4))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--deals", action=Bounded, kind=int, low=1, default=100_000,
                        help="deals to play on each side (100000)")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="seed (0)")


def sketch_deals(n: int, rng: random.Random) -> int:
    """Play ``n`` random deals the plainest way; returns team 0's card points (to use them)."""
    rnd = rng.random
    cards = list(range(40))
    dealer = rng.randrange(4)
    total = 0
    for _ in range(n):
        rng.shuffle(cards)
        hands = [0, 0, 0, 0]
        for i, c in enumerate(cards):
            hands[i // 10] |= 1 << c
        trump = cards[39] // 10
        leader = (dealer + 1) & 3
        points = [0, 0]
        for _trick in range(10):
            best = -1
            winner = led = leader
            led_mask = 0
            pts = 0
            for k in range(4):
                seat = (leader + k) & 3
                hand = hands[seat]
                legal = hand & led_mask or hand
                for _skip in range(int(rnd() * legal.bit_count())):
                    legal &= legal - 1  # drop the lowest card: a random one remains lowest
                bit = legal & -legal
                c = bit.bit_length() - 1
                hands[seat] = hand ^ bit
                suit = c // 10
                if k == 0:
                    led, led_mask = suit, _SUIT[suit]
                key = 20 + c % 10 if suit == trump else 10 + c % 10 if suit == led else -1
                if key > best:
                    best, winner = key, seat
                pts += _POINTS[c]
            points[winner & 1] += pts
            leader = winner
        total += points[0]
        dealer = (dealer + 1) & 3
    return total


class _Engine:
    """Engine matches, played block by block; counts deals."""

    def __init__(self, seed: int) -> None:
        self.play_local, self.variant, self.bots = play_local, DEFAULT, [RandomBot] * 4
        self.names = ["random"] * 4
        self.seed = seed
        self.matches = 0

    def run(self, deals: int) -> int:
        played = 0
        while played < deals:
            i = self.matches
            self.matches += 1
            match = self.play_local(self.bots, self.variant, self.seed * 1_000_003 + i,
                                    f"bench-{i}", self.names)
            played += len(match.deals)
        return played


def measure(deals: int, seed: int) -> dict[str, float]:
    engine = _Engine(seed)
    rng = random.Random(seed)
    blocks = max(1, min(BLOCKS, deals // 1000))
    engine_deals = sketched = 0
    engine_s = sketch_s = 0.0
    clock = time.perf_counter
    for b in range(blocks):
        target = deals * (b + 1) // blocks
        t = clock()
        engine_deals += engine.run(target - engine_deals)  # whole matches: may overshoot
        engine_s += clock() - t
        t = clock()
        sketch_deals(target - sketched, rng)
        sketch_s += clock() - t
        sketched = target
    rate = engine_deals / engine_s
    baseline = sketched / sketch_s if sketch_s > 0 else 0.0
    return {"deals": engine_deals, "seconds": round(engine_s, 3), "deals_per_s": round(rate),
            "baseline_deals_per_s": round(baseline),
            "ratio": round(rate / baseline, 3) if baseline else 0.0}


def run(args: argparse.Namespace) -> int:
    result = measure(args.deals, args.seed)
    print(f"engine: {result['deals']} deals in {result['seconds']:.2f} s = "
          f"{result['deals_per_s']} deals/s (random bots, full matches); bitmask sketch: "
          f"{result['baseline_deals_per_s']} deals/s; ratio {result['ratio']:.2f}")
    print(json.dumps(result))
    return 0
