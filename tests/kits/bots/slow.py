"""Bots for the league tests, importable by worker processes (tests/arena is on their path)."""

from __future__ import annotations

import os
import time
from typing import Any

from sueca.sdk.bots import RandomBot

#: seconds per card: a match of ~200 cards takes about two seconds (SLOWBOT_THINK to change)
THINK = float(os.environ.get("SLOWBOT_THINK") or 0.01)


class SlowBot(RandomBot):
    """A random player that thinks for a while: long enough to kill a worker mid-match."""

    def play(self, observation: Any):  # type: ignore[no-untyped-def]
        time.sleep(THINK)
        return super().play(observation)


class SleepyBot(RandomBot):
    """Never answers in time: every match it plays ends by its timeout (a fault)."""

    def play(self, observation: Any):  # type: ignore[no-untyped-def]
        time.sleep(1.0)
        return super().play(observation)
