"""Same bot, same behaviour: a bot with ``async def`` play, redeal and hooks plays the very same
cards against a real referee (a ``sueca-bot run`` process) as in-process self-play with the same
match seed. Before, self-play could not run such a bot at all."""

from __future__ import annotations

from pathlib import Path

import pytest
from kits.net import SEED_KEY  # the test referees key their bots' seeds with it

from sueca.engine import Variant
from sueca.engine import replay as replays
from sueca.referee import control
from sueca.sdk.bots import load_bot
from sueca.sdk.local import play_local

pytestmark = pytest.mark.slow

BOTS = '''
import asyncio

from sueca.sdk import Bot


class SyncPick(Bot):
    def pick(self, observation):
        legal = observation.legal
        return legal[int(self.rng.random() * len(legal))]

    def play(self, observation):
        return self.pick(observation)

    def redeal(self, observation):
        return self.rng.random() < 0.5


class AsyncPick(SyncPick):
    # each sleep(0) yields to the event loop, as a real async bot does; no time passes
    async def play(self, observation):
        await asyncio.sleep(0)
        return self.pick(observation)

    async def redeal(self, observation):
        await asyncio.sleep(0)
        return self.rng.random() < 0.5

    async def on_trick_end(self, trick):
        await asyncio.sleep(0)
'''


def test_an_async_bot_plays_the_same_cards_locally_and_over_the_network(
        referee, tokens, bot_proc, tmp_path: Path) -> None:
    (tmp_path / "picks.py").write_text(BOTS)
    bot_proc(f"{tmp_path}/picks.py:AsyncPick", referee.address, tokens["async"], capacity=8)
    bot_proc(f"{tmp_path}/picks.py:SyncPick", referee.address, tokens["twin"], capacity=8)
    variant = {"weak_hand_redeal": True, "trump_card": "first"}
    factories = [load_bot(f"{tmp_path}/picks.py:{c}") for c in ("AsyncPick", "SyncPick")]
    seats = ["async", "twin", "async", "twin"]
    for seed in (11, 12):
        remote = control.run_match(referee.address, {"bots": seats, "seed": seed,
                                                     "variant": variant})
        assert remote["end"] == "normal", remote
        local = play_local([factories[s % 2] for s in range(4)], Variant.from_dict(variant),
                           seed, "local", seats, seed_key=SEED_KEY.encode())
        here = replays.record(local, "local", seats)
        assert here["deals"] == remote["replay"]["deals"]  # every deck, card, trick and score
        assert here["game_points"] == remote["replay"]["game_points"]
