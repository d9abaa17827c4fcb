"""``--log-format json`` on a real Celery worker: Celery's own lines (start-up, "ready", task
received and succeeded) and ours come out as one JSON object a line, the banner is not printed,
and the lines logged while a match is played carry its match id and tournament."""

from __future__ import annotations

import json
import time

import pytest

from sueca.arena.tournaments import run_tournament

pytestmark = pytest.mark.slow


def test_a_json_worker_writes_only_json_lines_with_the_match_ids(league, start_worker):
    worker = start_worker("--runner", "local", "-c", "1", SUECA_LOG_FORMAT="json").wait_ready()
    report = run_tournament(league.store, ["random", "heuristic"], 2, False, [],
                            tid="tt-json-logs", quiet=True, timeout=60)
    mids = set(league.store.tournament_matches("tt-json-logs"))
    assert report["recorded"] == len(mids) > 0
    time.sleep(0.5)  # the pool process's last lines
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
