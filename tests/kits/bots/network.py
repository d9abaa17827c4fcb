"""Bots for the network tests, loaded by ``sueca-bot run /path/network.py:Class``."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from sueca.sdk.bot import Bot


class FirstLegal(Bot):
    def play(self, observation: Any) -> Any:
        return observation.legal[0]


class Slow(Bot):
    """Takes SUECA_TEST_DELAY seconds (default 0.05) per card: matches last a while."""

    delay = float(os.environ.get("SUECA_TEST_DELAY", "0.05"))

    def play(self, observation: Any) -> Any:
        time.sleep(self.delay)
        return observation.legal[-1]


class AsyncRandom(Bot):
    """An async bot: play is a coroutine; also checks hooks arrive in order."""

    async def play(self, observation: Any) -> Any:
        await asyncio.sleep(0)
        legal = observation.legal
        return legal[int(self.rng.random() * len(legal))]


class Raiser(Bot):
    """Raises in play: the SDK logs it and resigns the game (the match ends as bot_error)."""

    def play(self, observation: Any) -> Any:
        raise RuntimeError("boom: this bot is broken on purpose")


class ClockReader(Bot):
    """Logs the clock of its first turn: what a bot can budget its thinking with."""

    def play(self, observation: Any) -> Any:
        import logging
        clock = self.clock
        if clock is not None and not getattr(self, "said", False):
            self.said = True
            logging.getLogger("clockreader").warning(
                "clock move_s=%s bank_s=%s left=%.3f", clock.move_s, clock.bank_s, clock.left())
        return observation.legal[0]


class NotHeld(Bot):
    """Answers with a card it does not hold: the SDK resigns the game instead of sending it."""

    def play(self, observation: Any) -> Any:
        from sueca.engine import CARDS
        return next(c for c in CARDS if c not in observation.hand)


class HookCheck(Bot):
    """Checks that hooks arrive before the next turn: the tricks it was told about are the
    tricks in the observation. Raises (so the match times out) if the SDK got the order wrong;
    prints one line per match end (the test reads the log)."""

    def on_match_start(self, info: Any) -> None:
        self.tricks = 0

    def on_trick_end(self, trick: Any) -> None:
        self.tricks += 1

    def on_deal_end(self, result: Any) -> None:
        self.tricks = 0

    def on_match_end(self, game_points: Any, winner: Any, end: str) -> None:
        print(f"HOOKCHECK match end {self.info.match_id} seat {self.info.seat} {end} "
              f"{winner} {game_points}", flush=True)

    def play(self, observation: Any) -> Any:
        if len(observation.tricks) != self.tricks:
            raise AssertionError(f"told of {self.tricks} tricks, observation has "
                                 f"{len(observation.tricks)}")
        return observation.legal[0]


class Redealer(Bot):
    """Calls every weak-hand redeal it is offered in the first deals; plays randomly."""

    def redeal(self, observation: Any) -> bool:
        assert observation.legal == () and len(observation.hand) == 10
        return observation.deal_number < 4

    def play(self, observation: Any) -> Any:
        legal = observation.legal
        return legal[int(self.rng.random() * len(legal))]
