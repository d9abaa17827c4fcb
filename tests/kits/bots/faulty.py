"""SDK bots that fail on purpose, run by path (FILE.py:Class).

SlowFirstCard, for the conformance test of the reconnect race: slow on the first card of each
deal (the card the kit's reconnect phase asks for, then drops the stream), quick otherwise, so
its answer is still being computed when the stream drops and the SDK has reconnected. Its
``play`` is a coroutine: the SDK's event loop goes on (and reconnects) while it thinks, as it
does for a synchronous bot in its thread pool; a synchronous bot run in the event loop would
hold the loop, and the drop would be seen only after its answer."""

from __future__ import annotations

import asyncio
from typing import Any

from sueca.sdk import Bot

FIRST_CARD_SECONDS = 1.0  # longer than the SDK's first reconnect (0.25-0.5 s and a hello)


class SlowFirstCard(Bot):
    async def play(self, observation: Any) -> Any:
        if not observation.tricks and not observation.trick:
            await asyncio.sleep(FIRST_CARD_SECONDS)
        return observation.legal[0]


class RaisesOnThirdCard(Bot):
    """Raises on its third card, with a message of two lines: the league's local runner records
    its seat's bot_error with the first line only."""

    def __init__(self) -> None:
        super().__init__()
        self.cards = 0

    def play(self, observation: Any) -> Any:
        self.cards += 1
        if self.cards == 3:
            raise RuntimeError("third card\x1b[31m is too many\nsecret second line")
        return observation.legal[0]


class HookRaises(Bot):
    """Plays legal cards; its on_trick_end hook raises (seat to blame: its own)."""

    def play(self, observation: Any) -> Any:
        return observation.legal[0]

    def on_trick_end(self, trick: Any) -> None:
        raise KeyError("hook")
