"""Chaos, the processes: while a tournament runs on the whole league (:mod:`kits.chaos`),
SIGKILL a worker (a supervisor starts another), a referee with games in progress, a bot in the
middle of its games (restarted with the same token) and one pool process of a worker. The same
``tournament run`` must finish by itself, every match recorded exactly once or failed with a
reason, and the ratings rebuilt from the results log equal to the live ones."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from kits.arena import children
from kits.chaos import CAPACITY, Chaos, running

pytestmark = pytest.mark.slow


def test_killed_processes_lose_no_match_and_the_tournament_finishes(tmp_path: Path) -> None:
    with Chaos(tmp_path) as chaos:
        store, mids, fleet = chaos.store, chaos.mids, chaos.fleet

        # 1. a whole worker, while it plays; a supervisor would start another
        def busy_worker():
            for m in running(store, mids):
                pid = int(m["owner"].split("/")[1])
                for w in ("worker0", "worker1"):
                    if pid in children(fleet.procs[w].popen.pid):
                        return w
            return None
        fleet.kill(chaos.until(busy_worker, 60, "a worker playing a match"))
        fleet.worker("worker2")

        # 2. a referee with games in progress (the workers' RunMatch streams break)
        def busy_referee() -> bool:
            free = store.r.hgetall(store.keys.referee_bots(fleet.referees[1]))
            return any(int(v) < CAPACITY for v in free.values())
        chaos.until(busy_referee, 60, "a game on referee1")
        fleet.kill("referee1")

        # 3. a bot process in the middle of its games; it comes back (same token)
        def busy_bot() -> str | None:
            free = store.r.hgetall(store.keys.referee_bots(fleet.referees[0]))
            return next((k.decode() for k, v in free.items() if int(v) < CAPACITY), None)
        victim = chaos.until(busy_bot, 60, "a bot in a game")
        fleet.kill(victim)
        fleet.bot(victim)

        # 4. one pool process of a worker, while it plays (its parent re-queues the message)
        def busy_child() -> int | None:
            for m in running(store, mids):
                pid = int(m["owner"].split("/")[1])
                for w in ("worker0", "worker1", "worker2"):
                    p = fleet.procs[w]
                    if p.alive() and pid in children(p.popen.pid):
                        return pid
            return None
        os.kill(chaos.until(busy_child, 60, "a pool process playing a match"), signal.SIGKILL)

        chaos.finish(time.monotonic())
