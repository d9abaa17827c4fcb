"""``seeded_random`` is ``random.Random(seed)``: same state, same draws, for every kind of seed.

Replays, duplicate decks and every bot's ``rng`` depend on it, so a Python whose ``Random``
seeds differently must fail here, not silently change every match.
"""

from __future__ import annotations

import random

import pytest

from sueca.engine.seeding import seeded_random

SEEDS = [0, 1, 7, -5, 2**32 - 1, 2**32, 2**64 - 1, 2**64 + 12345, -(2**70), 3**100,
         "abc", "", b"bytes", None]


@pytest.mark.parametrize("seed", SEEDS, ids=repr)
def test_same_state_as_random_random(seed: object) -> None:
    ours, theirs = seeded_random(seed), random.Random(seed)
    assert type(ours) is random.Random
    if seed is not None:  # None seeds from the OS: only the type can be compared
        assert ours.getstate() == theirs.getstate()
        assert [ours.random() for _ in range(5)] == [theirs.random() for _ in range(5)]
        assert ours.gauss(0, 1) == theirs.gauss(0, 1)
        assert ours.gauss(0, 1) == theirs.gauss(0, 1)  # the cached second normal value too


def test_many_int_seeds() -> None:
    rng = random.Random(42)
    for _ in range(300):
        seed = rng.getrandbits(rng.choice((8, 32, 64, 65, 128)))
        assert seeded_random(seed).getstate() == random.Random(seed).getstate(), seed
