"""A bot spinning a CPU in a thread while it plays, through ``sueca-bot run 'exec:...'`` against
a real referee: its matches are still answered with no fault, it gets no more CPU than its
limit (its cgroup's CPU time over the wall clock, measured), and a neighbour bot in a sandbox of
its own keeps its pace: its matches are timed beside the same bot without its spinning thread,
then beside the spinner's.
``SUECA_TEST_SANDBOX_OFF=cpus`` turns it red."""

from __future__ import annotations

import os
import shlex
import statistics
import threading
import time

import redis
from kits.net import KEY_PREFIX, ROOT
from kits.sandbox import sandbox, small

from sueca.arena.hosted.sandbox import Sandbox
from sueca.arena.keys import Keys
from sueca.arena.store.bots import BotRegistry
from sueca.referee import control

EXAMPLE_C = ROOT / "sdk" / "examples" / "c" / "bot.c"
CPUS = 0.25  # the spinner's limit (kits.sandbox.SMALL)


def _pace(address: str, bot: str, matches: int, seed: int) -> float:
    """Median (mean of two: the default) seconds per match of ``bot`` in all four seats."""
    times = []
    for n in range(matches):
        start = time.monotonic()
        result = control.run_match(address, {"bots": [bot] * 4, "seed": seed + n}, timeout=60)
        times.append(time.monotonic() - start)
        assert result["end"] == "normal" and result["fault_bot"] in (None, ""), result
    return statistics.median(times)


def _beside(address: str, steady: str, other: str, box: Sandbox,
            ) -> tuple[float, list[dict[str, object]], float, int]:
    """``steady``'s pace while ``other`` (in ``box``) plays match after match: that pace, the
    other's results, the CPUs its cgroup used meanwhile and the periods its limit held it
    back."""
    played: list[dict[str, object]] = []
    stop = threading.Event()

    def matches() -> None:
        seed = 100
        while not stop.is_set():
            played.append(dict(control.run_match(
                address, {"bots": [other] * 4, "seed": seed}, timeout=60)))
            seed += 1

    before, start = box.cgroup.counters(), time.monotonic()
    thread = threading.Thread(target=matches, daemon=True)
    thread.start()
    pace = _pace(address, steady, 2, seed=1)
    stop.set()
    thread.join(60)
    after = box.cgroup.counters()
    share = (after["cpu_ns"] - before["cpu_ns"]) / 1e9 / (time.monotonic() - start)
    return pace, played, share, after["throttled"] - before["throttled"]


def test_a_spinning_bot_gets_its_cpu_share_and_its_neighbour_keeps_pace(
        tmp_path, referee, redis_url, bot_proc):
    registry = BotRegistry(redis.Redis.from_url(redis_url), Keys(KEY_PREFIX))
    names = {kind: f"{kind}{os.getpid()}" for kind in ("steady", "fair", "spin")}
    tokens = {kind: registry.add(name) for kind, name in names.items()}
    with sandbox(tmp_path / "steady", "steady", str(EXAMPLE_C),
                 limits=small(cpus=0.5)) as steady, \
            sandbox(tmp_path / "spin", "spin", str(EXAMPLE_C), "spin_bot.c") as spin:
        for box, kind, program in ((steady, "steady", "./bot"), (spin, "fair", "./bot"),
                                   (spin, "spin", "./spin_bot")):
            bot_proc(f"exec:{shlex.join(box.argv([program]))}", referee.address, tokens[kind],
                     capacity=4)
        # the same bot without its spinning thread, in the same sandbox, is the baseline
        fair_pace, _, fair_share, _ = _beside(referee.address, names["steady"], names["fair"],
                                              spin)
        pace, played, share, throttled = _beside(referee.address, names["steady"],
                                                 names["spin"], spin)
    assert played, "the spinner played no match"
    for result in played:
        assert result["end"] == "normal" and result["fault_bot"] in (None, ""), result
    assert share <= CPUS * 1.2 + 0.03, f"the spinner used {share:.2f} CPUs"
    assert share >= fair_share, (share, fair_share)  # it did spin
    assert throttled > 0, "its CPU limit never held it back"  # the limit, not the load, held
    # a shared machine's noise is large (the same bot's pace varies by a third from one run to
    # the next); a spinner without its limit takes every core, and this by far
    assert pace <= fair_pace * 1.5 + 0.3, (fair_pace, pace)
