"""A bot whose ``play`` is ``async def`` plays the same everywhere: in-process (``play_local``,
``sueca-bot selfplay``, ``sueca-arena selfplay``) and over the network, same seed, same cards.
Before, self-play called ``play`` without awaiting it and failed with ``bad card <coroutine>``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sueca.engine import Variant
from sueca.engine import replay as replays
from sueca.sdk import Bot
from sueca.sdk.local import play_local

SUECA_BOT = str(Path(sys.executable).parent / "sueca-bot")
NAMES = ["a", "b", "a", "b"]


class SyncPick(Bot):
    """Picks with its seeded rng; counts the hooks it is told about."""

    def on_match_start(self, info: Any) -> None:
        self.tricks = self.deals = 0

    def pick(self, observation: Any) -> Any:
        assert len(observation.tricks) == self.tricks  # hooks arrive before the next turn
        legal = observation.legal
        return legal[int(self.rng.random() * len(legal))]

    def play(self, observation: Any) -> Any:
        return self.pick(observation)

    def redeal(self, observation: Any) -> bool:
        return self.rng.random() < 0.5

    def on_trick_end(self, trick: Any) -> None:
        self.tricks += 1

    def on_deal_end(self, result: Any) -> None:
        self.tricks = 0
        self.deals += 1


class AsyncPick(SyncPick):
    """The same bot with ``async def`` play, redeal and hooks (each ``sleep(0)`` yields to the
    event loop, as a real async bot does; no time passes)."""

    async def play(self, observation: Any) -> Any:  # type: ignore[override]
        await asyncio.sleep(0)
        return self.pick(observation)

    async def redeal(self, observation: Any) -> bool:  # type: ignore[override]
        await asyncio.sleep(0)
        return self.rng.random() < 0.5

    async def on_trick_end(self, trick: Any) -> None:  # type: ignore[override]
        await asyncio.sleep(0)
        self.tricks += 1

    async def on_deal_end(self, result: Any) -> None:  # type: ignore[override]
        await asyncio.sleep(0)
        self.tricks = 0
        self.deals += 1


class AsyncPlayOnly(Bot):
    """Async play, no hooks: the engine's hook-free fast path."""

    async def play(self, observation: Any) -> Any:
        return observation.legal[int(self.rng.random() * len(observation.legal))]


class SyncPlayOnly(Bot):
    def play(self, observation: Any) -> Any:
        return observation.legal[int(self.rng.random() * len(observation.legal))]


@pytest.mark.parametrize("variant", [Variant(), Variant.parse(["weak_hand_redeal=on"])])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_async_bot_plays_as_its_sync_twin(seed: int, variant: Variant) -> None:
    sync = replays.record(play_local([SyncPick] * 4, variant, seed, "m", NAMES), "m", NAMES)
    made: list[AsyncPick] = []

    def make() -> AsyncPick:
        made.append(AsyncPick())
        return made[-1]

    asyn = replays.record(play_local([make] * 4, variant, seed, "m", NAMES), "m", NAMES)
    assert asyn == sync
    assert replays.verify(asyn) == []
    assert all(b.deals == len(asyn["deals"]) for b in made)  # every async hook was awaited


def test_async_and_sync_bots_mixed_in_one_match() -> None:
    mixed = play_local([AsyncPlayOnly, SyncPlayOnly, AsyncPlayOnly, SyncPlayOnly], seed=9)
    same = play_local([SyncPlayOnly] * 4, seed=9)
    assert mixed.end == same.end == "normal"
    assert replays.record(mixed, "m", NAMES) == replays.record(same, "m", NAMES)


BOT_FILE = '''
import asyncio
from sueca.sdk import Bot


class Probe(Bot):
    async def play(self, observation):
        await asyncio.sleep(0)  # a yield to the event loop, as a real async bot does
        return observation.legal[-1]
'''


@pytest.mark.parametrize("command", ["sueca-bot", "sueca-arena"])
def test_selfplay_with_an_async_bot(tmp_path: Path, command: str) -> None:
    """A bot author's command line: ``selfplay --bots probe:Probe,random``."""
    (tmp_path / "probe.py").write_text(BOT_FILE)
    out = subprocess.run([str(Path(sys.executable).parent / command), "selfplay", "--bots",
                          "probe:Probe,random", "--matches", "6", "--json", "--replays", "r.jsonl"],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "coroutine" not in out.stderr and out.stderr == ""
    summary = json.loads(out.stdout)
    assert summary["matches"] == 6 and summary["bots"][0]["faults"] == 0
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert len(records) == 6 and all(replays.verify(r) == [] for r in records)
