"""JSON logs from the league's long-running processes. A real Celery worker: Celery's own lines (start-up, "ready", task
received and succeeded) and ours come out as one JSON object a line, the banner is not printed,
and the lines logged while a match is played carry its match id. The web pages under uvicorn
(as ``serve`` runs them): uvicorn's own lines are JSON too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from kits.wait import wait_for

from sueca.arena.tournaments import new_spec, run_tournament

pytestmark = pytest.mark.slow


def test_a_json_worker_writes_only_json_lines_with_the_match_ids(league, start_worker):
    worker = start_worker("--runner", "local", "-c", "1", SUECA_LOG_FORMAT="json").wait_ready()
    report = run_tournament(league.store, new_spec(["random", "heuristic"], 2),
                            tid="tt-json-logs", quiet=True, timeout=60)
    mids = set(league.store.tournament_matches("tt-json-logs"))
    assert report["recorded"] == len(mids) > 0
    def succeeded() -> set[str]:  # a line half written fails json.loads: not yet
        return {json.loads(line).get("match_id") for line in worker.log.read_text().splitlines()
                if "succeeded" in line}

    wait_for(lambda: mids <= succeeded(), 20, "each match's 'succeeded' line in the worker's log")
    worker.stop()
    lines = worker.log.read_text().splitlines()
    records = [json.loads(line) for line in lines]  # every line: one object, or this fails
    assert all({"ts", "level", "logger", "msg"} <= r.keys() for r in records)
    assert all(r["ts"].endswith("Z") for r in records)
    assert any(r["msg"].endswith(" ready.") and r["logger"].startswith("celery")
               for r in records)
    # Celery's "succeeded" line of each match's task names the match
    done = {r.get("match_id") for r in records if "succeeded" in r["msg"]}
    assert mids <= done, (mids, done)
    assert not any("celery@" in line and "v5" in line for line in lines)  # no banner


def test_the_web_process_under_uvicorn_logs_json(redis_url: str) -> None:
    import urllib.request

    from sueca.arena.redisproc import free_port
    env = {**os.environ, "SUECA_REDIS_URL": redis_url, "SUECA_LOG_FORMAT": "json"}
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory",
                             "sueca.arena.web.app:from_env", "--port", str(port),
                             "--log-level", "info"], env=env, stderr=subprocess.PIPE, text=True)
    def up() -> bool:
        if proc.poll() is None:  # exited: what it said is checked below
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).close()
        return True

    wait_for(up, 30, "the web process to answer", interval=0.2)
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=20)[1]
    records = [json.loads(line) for line in err.splitlines()]
    assert any(r["msg"].startswith("Uvicorn running on") for r in records), err
    assert any(r["msg"].startswith("Finished server process") for r in records), err
