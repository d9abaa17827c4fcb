"""``sueca-arena bench web``: a small run seeds the league, serves the pages with uvicorn and
ends with one JSON line giving every page's server time."""

from __future__ import annotations

import json
import subprocess

from kits.arena import SUECA_ARENA


def test_bench_web_small_run() -> None:
    run = subprocess.run([SUECA_ARENA, "bench", "web", "--matches", "300", "--bots", "12",
                          "--games", "6", "--repeat", "3", "--target-ms", "5000"],
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["bench"] == "web" and result["matches"] == 300 and result["bots"] == 12
    assert result["ok"] is True and result["baseline_p50_ms"] > 0
    assert len(result["pages"]) == 14
    for path, t in result["pages"].items():
        assert 0 < t["p50_ms"] <= t["p95_ms"] <= result["worst_p95_ms"], path
    assert "/bots/bot0000" in result["pages"] and "replay viewer" in run.stdout


def test_bench_web_refuses_a_bad_count() -> None:
    run = subprocess.run([SUECA_ARENA, "bench", "web", "--bots", "2"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 2 and "--bots" in run.stderr and "'2'" in run.stderr
