"""Match seeds: derived from a secret (a tournament's, a competition's seed key) and the
match's place, and re-derived for a match played again; what a verifier recomputes."""

from __future__ import annotations

import hashlib

from sueca.codec import SpecDict

__all__ = ["derive_seed", "reseeded"]


def derive_seed(secret: str, *parts: object) -> str:
    """A 64-bit match seed from the tournament secret and the match's place in the schedule."""
    digest = hashlib.sha256(":".join([secret, *map(str, parts)]).encode()).digest()
    return str(int.from_bytes(digest[:8], "big"))


def reseeded(spec: SpecDict, attempt: int) -> SpecDict:
    """The spec to play on ``attempt`` (1, 2, ...): from the second attempt on, a fresh seed.

    An earlier attempt may have got far before it died (timeout, worker lost, referee shut
    down), and its bots have seen those cards: dealing them again would hand them the hands.
    The cost falls on duplicate pairs: a re-seeded half is no longer dealt its twin's decks, so
    the pair no longer cancels the luck of the cards. The results-log entry therefore records
    the seed actually played (:func:`sueca.arena.match_job.outcome_to_result`), and scoring and ratings
    (:func:`sueca.arena.ratings.live.pair_outcome`) take two halves played on different seeds as two
    single games, not as one duplicate game (docs/operating.md, "Ratings").
    """
    if attempt <= 1 or spec.get("seed") is None:
        return spec
    digest = hashlib.sha256(f"sueca-retry:{spec['seed']}:{attempt}".encode()).digest()
    return {**spec, "seed": str(int.from_bytes(digest[:8], "big"))}
