"""The scale benchmarks with tiny numbers: ``bench referee --sessions`` (many simulated bot
sessions), ``bench referee --replicas 2`` and ``bench wan`` (bots behind a delaying proxy).

Real processes throughout (Redis, referees, simulators or ``sueca-bot run``, the proxy). The
checks are the contract and what must hold at any speed: every match normal, no fault, the
figures present and consistent, the sessions really separate connections, both replicas used,
the proxy's delay really paid. Never a speed: the machine may be shared.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from kits.procs import marked, new_mark
from kits.wait import wait_for

ARENA = [sys.executable, "-m", "sueca.arena.cli"]
def run_bench(*args: str, timeout: float) -> tuple[dict, subprocess.CompletedProcess[str]]:
    """Run a bench, check that it left no process running; its result is its last line."""
    mark = new_mark()
    proc = subprocess.run([*ARENA, "bench", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **mark})
    wait_for(lambda: not marked(mark), 15, "the bench's processes gone (one left running)",
             interval=0.1)
    lines = proc.stdout.strip().splitlines()
    assert lines, f"no output; stderr: {proc.stderr[-3000:]}"
    result = json.loads(lines[-1])
    assert isinstance(result, dict)
    return result, proc


def test_sessions_each_its_own_connection_and_bot() -> None:
    result, proc = run_bench("referee", "--sessions", "48", "--concurrency", "12",
                             "--matches", "12", "--baseline-sessions", "4", timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert result["bot_processes"] == 2  # the default for a few sessions
    assert "sessions connected" in proc.stderr  # progress is shown
    for key in ("sessions", "moves_per_s", "move_rtt_p99_ms", "faults", "abnormal",
                "rss_per_idle_session_kb", "baseline", "ratio", "referee_cpu_us_per_move"):
        assert key in result, key
    assert result["sessions"] == 48 and result["faults"] == {} and result["abnormal"] == 0
    assert result["ends"] == {"normal": 12} and result["baseline"]["ends"] == {"normal": 12}
    # every session connected on its own TCP connection (plus the bench's control channels)
    assert result["referee_connections"] >= 48
    assert result["simbots"]["welcomed"] == 48 and result["simbots"]["errors"] == 0
    # every move the referee counted was a simulated bot's answer
    assert result["simbots"]["turns"] == result["move_rtt_samples"] >= result["moves"] > 0
    assert result["baseline"]["simbots"]["welcomed"] == 4
    assert result["referee_rss_kb_idle_sessions"] > result["referee_rss_kb_no_session"] > 0
    assert result["rss_per_idle_session_kb"] > 0
    assert 0 <= result["referee_idle_cpu_share"] < 2
    assert 0 < result["move_rtt_p50_ms"] <= result["move_rtt_p99_ms"]
    assert result["ratio"] > 0


def test_sessions_refuses_more_processes_than_baseline_sessions() -> None:
    proc = subprocess.run([*ARENA, "bench", "referee", "--sessions", "8", "--bot-processes",
                           "6", "--baseline-sessions", "4"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert "--bot-processes 6" in proc.stderr and "Traceback" not in proc.stderr


def test_two_replicas_against_one() -> None:
    result, proc = run_bench("referee", "--replicas", "2", "--matches", "8", "--concurrency",
                             "4", "--bot-processes", "2", timeout=150)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert result["abnormal"] == 0 and result["faults"] == {}
    one, two = result["rounds"]
    assert (one["replicas"], two["replicas"]) == (1, 2)
    assert one["ends"] == two["ends"] == {"normal": 8}
    # one referee played every move of the first round; both shared the second
    assert one["referee_moves"][0] >= one["moves"] > 0
    assert len(one["referee_moves"]) == 1
    assert all(m > 0 for m in two["referee_moves"])
    assert sum(two["referee_moves"]) >= two["moves"]
    assert result["ratio"] == round(two["moves_per_s"] / one["moves_per_s"], 3)


def test_wan_pays_the_round_trip_without_timeouts() -> None:
    result, proc = run_bench("wan", "--rtt-ms", "100", "--jitter-ms", "20", "--matches", "4",
                             "--concurrency", "4", "--bot-processes", "1", timeout=150)
    assert proc.returncode == 0, proc.stderr[-3000:]
    near, far = result["direct"], result["proxied"]
    assert result["timeouts"] == 0 and result["abnormal"] == 0
    assert near["ends"] == far["ends"] == {"normal": 4}
    # the referee's clock saw the added round trip (at least its lower edge, 90 ms) on the
    # distant phase's median move, and not on the direct one's
    assert far["move_rtt_p50_ms"] >= 90 > near["move_rtt_p50_ms"]
    assert far["match_seconds_p50"] > near["match_seconds_p50"]
    assert far["moves_per_s_per_bot"] == far["moves_per_s"]  # one bot process


@pytest.mark.parametrize("pool", ["prefork", "threads"])
def test_redis_writes_per_match_are_counted(pool: str) -> None:
    result, proc = run_bench("redis-writes", "--matches", "3", "--bots", "4", "--pool", pool,
                             "--concurrency", "2", timeout=150)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert result["matches"] == 3 and result["writes_raw"] > 0
    # the worker's memory: its main process plus its pool processes (none for threads)
    assert result["pool"] == pool
    assert result["worker_pool_processes"] == (2 if pool == "prefork" else 0)
    assert result["worker_total_pss_kb"] == (result["worker_main_pss_kb"]
                                             + sum(result["worker_pool_pss_kb"])) > 10_000
    by_command = result["writes_per_match_by_command"]
    # the results log gets exactly one entry per match (nothing lost, nothing twice)
    assert by_command["xadd"] == 1.0
    assert result["writes_per_match"] == round(sum(by_command.values()), 1) >= 5
    assert result["idle_writes_per_s"] >= 0 and result["other_commands_per_match"] > 0


def test_simulator_processes_default_to_one_per_250_sessions() -> None:
    from sueca.arena.bench.referee import bot_processes
    assert bot_processes(None, 8) == 2                    # sueca-bot run processes
    assert [bot_processes(n, 8) for n in (4, 48, 500, 501, 1000, 1750)] == [2, 2, 2, 3, 4, 7]
    assert bot_processes(4000, 8) == 8 and bot_processes(1000, 3) == 3  # never above the baseline's
