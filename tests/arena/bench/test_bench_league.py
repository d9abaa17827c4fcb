"""``sueca-arena bench tournament`` and ``bench ladder-live``: small runs on their own private
arena (Redis, referee, bot processes, a Celery worker) end with one JSON line of the promised
keys, every match recorded (a failed one would fail the run), nothing left running."""

from __future__ import annotations

import json
import subprocess

import pytest
from kits.arena import ROOT, SUECA_ARENA

pytestmark = pytest.mark.slow


def _bench(*args: str) -> dict:
    out = subprocess.run([SUECA_ARENA, "bench", *args], capture_output=True, text=True,
                         timeout=180, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_bench_tournament_small_run() -> None:
    result = _bench("tournament", "--bots", "2", "--matches", "4", "--rounds", "2",
                    "--warmup", "1", "--concurrency", "1")
    assert result["bench"] == "tournament" and result["matches"] == 4
    assert result["celery_matches_per_s"] > 0 and result["direct_matches_per_s"] > 0
    assert result["ratio"] == pytest.approx(
        result["celery_matches_per_s"] / result["direct_matches_per_s"], rel=0.02)


def test_bench_ladder_live_small_run() -> None:
    result = _bench("ladder-live", "--bots", "2", "--matches", "3", "--interval", "0.2",
                    "--concurrency", "1")
    assert result["bench"] == "ladder-live"
    assert min(result[k] for k in ("tournament_matches_per_s", "ladder_matches_per_s",
                                   "ladder_tick_matches_per_s")) > 0
