"""Chaos, Redis: while a tournament runs on the whole league (:mod:`kits.chaos`), SIGSTOP Redis
for longer than every client's socket timeout, then SIGKILL it and start it again from its
append-only file. The same ``tournament run`` must finish by itself, every match recorded
exactly once or failed with a reason, and the ratings rebuilt from the results log equal to the
live ones."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from kits.chaos import FROZEN, Chaos

pytestmark = pytest.mark.slow


def test_a_frozen_then_crashed_redis_loses_no_match_and_the_tournament_finishes(
        tmp_path: Path) -> None:
    with Chaos(tmp_path) as chaos:
        store, server = chaos.store, chaos.server

        # Redis frozen for longer than every client's socket timeout, once the tournament is
        # under way (its `tournament run` waiting, a match recorded and another being played)
        chaos.until(lambda: store.results_count() >= 1, 90, "a first match recorded")
        chaos.in_flight("a match in flight")
        os.kill(server.proc.pid, signal.SIGSTOP)
        time.sleep(FROZEN)  # a sleep on purpose: the freeze must outlast every socket timeout
        os.kill(server.proc.pid, signal.SIGCONT)

        # Redis crashes mid-tournament and comes back from its append-only file
        chaos.in_flight("a match in flight after the freeze")
        # everything written so far in the file (what a SIGKILL keeps): the AOF buffer empty
        chaos.until(lambda: int(store.r.info("persistence")["aof_buffer_length"]) == 0, 30,
                    "Redis's append-only buffer written out")
        server.kill()
        time.sleep(1.0)  # a sleep on purpose: Redis stays away a while mid-tournament
        server.start(timeout=30)
        chaos_over = time.monotonic()
        assert store.tournament_matches("chaos-t") == chaos.mids          # back from its file

        chaos.finish(chaos_over)
