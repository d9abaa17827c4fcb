"""A retried match never deals again the cards an earlier attempt may have shown its bots."""

from __future__ import annotations

from arena.runner import reseeded
from sdk.local import play_local
from sdk.bots import RandomBot


def test_first_attempt_plays_the_scheduled_seed() -> None:
    spec = {"match_id": "m", "seed": "123", "bots": ["a", "b", "a", "b"]}
    assert reseeded(spec, 1) is spec


def test_each_retry_gets_its_own_reproducible_seed_and_other_decks() -> None:
    spec = {"match_id": "m", "seed": "123", "bots": ["a", "b", "a", "b"]}
    second, third = reseeded(spec, 2), reseeded(spec, 3)
    assert second["seed"] != spec["seed"] and third["seed"] != second["seed"]
    assert reseeded(spec, 2) == second  # the same attempt number gives the same seed
    assert spec["seed"] == "123" and second["bots"] == spec["bots"]
    decks = [play_local([RandomBot] * 4, seed=int(s["seed"])).deals[0].deck
             for s in (spec, second)]
    assert decks[0] != decks[1]
