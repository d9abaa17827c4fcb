"""``sueca-arena demo`` end to end on a machine with nothing running: it starts and stops its own
Redis, referee, worker and bots, and leaves nothing behind — also when interrupted."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time

import pytest
from arenakit import ROOT, SUECA_ARENA

pytestmark = pytest.mark.slow


def _closed(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=0.5):
            return False
    except OSError:
        return True


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SUECA_") and k != "PROMETHEUS_MULTIPROC_DIR"}
    return env


def test_demo_runs_end_to_end_and_heuristic_beats_random():
    # No timing assertion: nothing promises how long the demo takes on a shared 2-core machine;
    # the subprocess timeout only catches a demo that hangs.
    # TLS settings meant for a real cluster must not reach the demo's own loopback referee
    env = {**_env(), "SUECA_TLS": "1", "SUECA_TLS_CA": "/nonexistent/ca.pem",
           "SUECA_TLS_CERT": "/nonexistent/cert.pem", "SUECA_TLS_KEY": "/nonexistent/key.pem"}
    out = subprocess.run([SUECA_ARENA, "demo", "--json"], capture_output=True, text=True,
                         timeout=240, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert report["matches"] == 18 and report["failed"] == []
    ranks = {r["bot"]: r["rank"] for r in report["leaderboard"]}
    assert set(ranks) == {"random", "heuristic", "reckless"}
    assert ranks["heuristic"] < ranks["random"]
    for r in report["leaderboard"]:
        assert r["elo_pm"] > 0 and r["games"] > 0
    redis_addr = report["redis"].split("//")[1].split("/")[0]
    assert _closed(redis_addr) and _closed(report["referee"])   # everything was stopped


def test_demo_stops_everything_on_ctrl_c():
    proc = subprocess.Popen([SUECA_ARENA, "demo", "-k", "40"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env(), cwd=ROOT)
    line = ""
    deadline = time.monotonic() + 60
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if "arena up" in line or not line:
            break
    found = re.search(r"Redis redis://([\d.]+:\d+)/0, referee ([\d.]+:\d+)", line)
    assert found, line
    time.sleep(1.0)                                   # the tournament is under way
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err
    assert _closed(found.group(1)) and _closed(found.group(2))
    logs = re.search(r"logs in (\S+)", line)
    assert logs and os.path.isdir(logs.group(1))       # kept after an interruption, for a look
    shutil.rmtree(logs.group(1), ignore_errors=True)
