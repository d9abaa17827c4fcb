"""Nothing lost when Redis stops answering mid-match: the result is recorded exactly once.

A dedicated Redis (this test freezes it with SIGSTOP), a real ``sueca-arena worker`` playing a
4-7 s match in-process, and ``sueca-arena tournament run`` waiting for it. Redis is frozen half a
second into the match and for longer than the clients' 10 s socket timeout, so the worker's
recording call gives up while its request may already be inside Redis: when Redis resumes it
may run that recording (then the retried task must find it done, not record again) or have lost
it (then the retried task plays the match again and records it). Either way the worker's log
names the recording call as what the outage broke, once, and every attempt the match counts is
accounted for: the attempt that gave up on its recording, and the attempt that recorded when
that was another one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from kits.arena import SUECA_ARENA, Worker, arena_env, cli
from kits.wait import wait_for

from sueca.arena.keys import Keys
from sueca.arena.redisproc import RedisServer
from sueca.arena.store import Store, connect
from sueca.engine import replay

pytestmark = pytest.mark.slow

FROZEN_SECONDS = 20.0  # the record, due 4-7 s in, waits longer than the 10 s socket timeout


def test_redis_frozen_mid_match_loses_nothing_and_records_once(tmp_path: Path) -> None:
    prefix = "outage:"
    with RedisServer() as server:
        env = arena_env(server.url, prefix, SUECA_VISIBILITY_TIMEOUT="5",
                        SUECA_RETRY_BASE="0.05")
        for bot in ("slow", "slow2"):
            cli("bots", "add", bot, env=env)
        # 30 ms a card: a 4-7 s match, so the freeze lands mid-match even when this process
        # stalls (at 10 ms a card some seeds end in 1.2 s)
        worker = Worker(server.url, prefix, "--runner", "local", "-c", "1",
                        log=tmp_path / "worker.log", SUECA_VISIBILITY_TIMEOUT="5",
                        SUECA_RETRY_BASE="0.05", SLOWBOT_THINK="0.03").wait_ready()
        run = subprocess.Popen([SUECA_ARENA, "tournament", "run", "--bots", "slow,slow2",
                                "-k", "1", "--id", "outage-t", "--json"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            store = Store(connect(server.url), Keys(prefix))
            mids = wait_for(lambda: store.tournament_matches("outage-t"), 60, "the schedule",
                            detail=lambda: f"tournament run exit {run.poll()}")
            wait_for(lambda: store.match(mids[0])["status"] == "running", 60,
                     "the match to be running", detail=worker.text)
            time.sleep(0.5)  # a sleep on purpose: well inside the match (its moves show nowhere)
            os.kill(server.proc.pid, signal.SIGSTOP)
            time.sleep(FROZEN_SECONDS)  # a sleep on purpose: the freeze is the thing under test
            os.kill(server.proc.pid, signal.SIGCONT)
            out, err = run.communicate(timeout=120)
        finally:
            if run.poll() is None:
                run.kill()
            worker.stop()
        assert run.returncode == 0, (err[-3000:], worker.text())
        assert "Traceback" not in err
        report = json.loads(out)
        (mid,) = mids
        assert len([r for _, r in store.results() if r["match_id"] == mid]) == 1
        assert store.match(mid)["status"] == "done"
        assert replay.verify(store.replay(mid)) == []
        assert report  # the command's own summary came back after the outage
        log = worker.child.text()  # the whole log, to count in
        lines = [line for line in log.splitlines() if f"[match_id={mid}]" in line]
        retried = [line for line in lines if " retry: " in line]
        recorded = [line for line in lines if "succeeded" in line and "'recorded'" in line]
        # the freeze hit the recording call, once: that attempt gave up and was retried
        assert len(retried) == 1 and "Redis unavailable while recording" in retried[0], log
        assert log.count("Redis unavailable") == 1, log
        # every attempt counted in Redis is the one that gave up, or the one that recorded
        # (none if Redis ran the first one's recording when it resumed)
        attempts = int(store.match(mid)["attempts"])
        assert attempts == len(retried) + len(recorded), (attempts, lines)
        assert all(f"'attempt': {attempts}," in line for line in recorded), recorded


def test_the_ladder_scheduler_waits_out_a_frozen_redis(tmp_path: Path) -> None:
    """The scheduler is a long-running process: a Redis pause is said once and waited out."""
    prefix = "outage2:"
    with RedisServer() as server:
        env = arena_env(server.url, prefix)
        for bot in ("random", "heuristic"):
            cli("bots", "add", bot, env=env)
        log = open(tmp_path / "scheduler.log", "w+")
        proc = subprocess.Popen([SUECA_ARENA, "scheduler", "--bots", "random,heuristic",
                                 "--target", "1", "--interval", "0.2"], env=env,
                                stdout=log, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        try:
            store = Store(connect(server.url), Keys(prefix))
            # it queued the ladder's first match, and is done with that tick: a freeze inside
            # the broker's first connection (kombu sets no socket timeout) would be waited out
            # in silence, and the test would look for a note that is never due
            wait_for(lambda: store.r.keys(prefix + "match:*")
                     and "ladder: queued" in Path(log.name).read_text(), 30,
                     "the ladder's first match queued", interval=0.1,
                     detail=lambda: f"exit {proc.poll()}\n{Path(log.name).read_text()[-3000:]}")
            os.kill(server.proc.pid, signal.SIGSTOP)
            time.sleep(FROZEN_SECONDS)  # a sleep on purpose: the freeze is the thing under test
            os.kill(server.proc.pid, signal.SIGCONT)
            wait_for(lambda: "Redis is back" in Path(log.name).read_text(), 30,
                     "the scheduler to say Redis is back", interval=0.1,
                     detail=lambda: f"exit {proc.poll()}\n{Path(log.name).read_text()[-3000:]}")
            assert proc.poll() is None                   # still scheduling
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(15)
            log.close()
        text = Path(log.name).read_text()
        assert text.count("Redis not answering") == 1 and "Traceback" not in text, text[-3000:]
