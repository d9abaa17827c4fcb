"""A bot's seed must reveal nothing of the decks, whatever seed the operator chose.

The attack: the SDK's code is public, so a bot that is told its ``bot_seed`` tries small
match seeds until one derives that bot seed, then deals that match itself and knows all four
hands. With the referee's keyed derivation the search finds nothing; the same search against the
unkeyed derivation finds the seed at once and predicts the hand, so the test can fail.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor

import pytest
from kits.net import RawBot, play_until_done, sessions_of, wait_for

from sueca.engine import Match
from sueca.referee import control
from sueca.sdk.bot import bot_seed, bot_seeds
from sueca.v1 import sueca_pb2 as pb

SEARCHED = 20_000  # match seeds the bot tries (0..SEARCHED): an operator's "seed: 1" is among them


def search(seen: int, seat: int) -> list[int]:
    """The bot's attack: every small match seed whose (public, unkeyed) bot seed is ``seen``."""
    return [s for s in range(SEARCHED) if bot_seed(s, seat) == seen]


def hand_of(seed: int, seat: int) -> set[int]:
    """The hand a seat is dealt first in a match of ``seed`` (default variant, no decks)."""
    mask = Match(seed=seed).deal.hands[seat]
    return {c for c in range(40) if mask >> c & 1}


def test_unkeyed_seeds_are_the_published_formula_and_keys_change_them():
    """No key: the published unkeyed SHA-256 formula, which the golden replays and in-process
    play are dealt by. A key: other seeds, the same for the same key."""
    unkeyed = int.from_bytes(hashlib.sha256(b"sueca-bot:7:2").digest()[:8], "big")
    assert bot_seed(7, 2) == unkeyed == bot_seeds(7)[2]
    keyed = bot_seeds(7, b"k" * 32)
    assert keyed == bot_seeds(7, b"k" * 32) and keyed[2] != unkeyed
    assert bot_seeds(7, b"j" * 32) != keyed
    assert len(set(keyed)) == 4


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 42])
def test_a_bot_cannot_recover_a_small_match_seed_from_its_bot_seed(referee, random_bots, tokens,
                                                                  seed):
    spy = RawBot(referee.address, "spy", tokens["spy"], capacity=1)
    assert spy.next_message().HasField("welcome")
    wait_for(lambda: sessions_of(referee.address, "spy") == 1, 10, "spy's session")
    with ThreadPoolExecutor(1) as pool:
        fut = pool.submit(control.run_match, referee.address,
                          {"bots": ["spy", "alice", "bob", "alice"], "seed": seed,
                           "match_id": f"seed-spy-{seed}"}, 60)
        play_until_done([spy], [fut])
        result = fut.result(10)
    spy.cancel()
    messages = [pb.RefereeMessage.FromString(b) for b in spy.raw]
    start = next(e.match_start for m in messages for e in m.events if e.HasField("match_start"))
    first_turn = next(t for m in messages for t in m.turns)
    seat, seen = start.seat, start.bot_seed
    observed = set(first_turn.observation.hand)
    assert len(observed) == 10 and seat == 0
    # the decks really come from this small seed: whoever finds it knows every hand
    assert hand_of(seed, seat) == observed
    assert result["replay"]["seed"] in (seed, str(seed))

    # the bot's search over small seeds finds nothing, so it predicts no hand
    assert search(seen, seat) == []
    # control: the very same search against the unkeyed derivation finds the seed at once
    # and predicts the hand (what a referee deriving unkeyed seeds would leak, which this test
    # would catch)
    found = search(bot_seed(seed, seat), seat)
    assert found == [seed] and hand_of(found[0], seat) == observed
