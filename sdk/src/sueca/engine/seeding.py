"""Seeded ``random.Random`` generators, made without the Python layers of ``Random.__init__``.

Self-play seeds five Mersenne Twisters per match (the deck's and one per bot), and for an int
seed ``random.Random(seed)`` spends a fifth of its time in two Python-level calls
(``__init__`` → ``seed``) around the C seeding. :func:`seeded_random` calls the C seeding
directly; the generator is the same object in the same state (``tests/engine/test_engine_seeding.py``
compares ``getstate()`` for many seeds), so replays do not change.
"""

from __future__ import annotations

import random
from typing import Any

_Random = random.Random
_new = _Random.__new__
_c_seed = random._random.Random.seed  # type: ignore[attr-defined]  # what Random.seed calls


def seeded_random(seed: Any) -> random.Random:
    """``random.Random(seed)``, faster for an int seed."""
    if seed.__class__ is not int:
        return _Random(seed)  # str, bytes, None...: Random.seed's own conversions
    rng = _new(_Random)
    _c_seed(rng, seed)
    rng.gauss_next = None  # type: ignore[attr-defined]  # what Random.seed sets (undocumented)
    return rng
