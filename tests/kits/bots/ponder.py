"""A bot for the live-spectating test: slow enough that a match is still being played while a
browser watches it (about 0.1 s a card, so a match takes tens of seconds)."""

from __future__ import annotations

import time
from typing import Any

from sueca.sdk.bots import RandomBot


class PonderBot(RandomBot):
    def play(self, observation: Any):  # type: ignore[no-untyped-def]
        time.sleep(0.1)
        return super().play(observation)
