"""A bot for the live-spectating test: slow enough that a match is still being played while a
browser watches it. It answers in about 0.1 s a card; while the file named by ``$PONDER_HOLD``
exists it takes 1.5 s a card instead (inside the referee's default 2 s move clock), so the test
holds the match live for as long as its checks take, then lets it finish."""

from __future__ import annotations

import os
import time
from typing import Any

from sueca.sdk.bots import RandomBot

FAST, HELD = 0.1, 1.5  # seconds a card


class PonderBot(RandomBot):
    def play(self, observation: Any):  # type: ignore[no-untyped-def]
        hold = os.environ.get("PONDER_HOLD")
        think = HELD if hold and os.path.exists(hold) else FAST
        deadline = time.monotonic() + think
        while time.monotonic() < deadline:  # a released hold ends the wait early
            time.sleep(0.05)
            if think == HELD and not os.path.exists(hold or ""):
                break
        return super().play(observation)
