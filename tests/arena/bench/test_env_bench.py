"""``sueca-arena bench env``: a short run prints its table and ends with one JSON line of the
promised keys; a bad ``--steps`` is refused before anything runs."""

from __future__ import annotations

import json

import pytest

from sueca.arena.cli import main


def test_bench_env_small_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "env", "--steps", "600", "--seed", "3"]) == 0
    out = capsys.readouterr()
    lines = out.out.strip().splitlines()
    assert lines[0].split() == ["loop", "steps/s", "steps/cpu-s", "encoding"]
    assert all(len(line) <= 80 for line in lines[:-1])
    result = json.loads(lines[-1])
    assert set(result) == {"steps", "seconds", "steps_per_s", "raw_steps_per_s",
                           "baseline_steps_per_s", "ratio", "steps_per_cpu_s",
                           "raw_steps_per_cpu_s", "encoding_share", "encoding_share_raw",
                           "encoding_seconds", "target_steps_per_s", "meets_target"}
    assert result["steps"] == 600 and result["target_steps_per_s"] == 10_000
    assert result["steps_per_s"] > 0 and result["baseline_steps_per_s"] > 0
    assert result["steps_per_cpu_s"] >= result["steps_per_s"] * 0.9  # CPU time <= wall time
    assert result["meets_target"] == (result["steps_per_cpu_s"] >= 10_000)
    assert 0 < result["encoding_share"] < 1
    assert "bench env: block 1/1" in out.err


def test_bench_env_refuses_no_steps(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "env", "--steps", "0"]) == 2
    assert capsys.readouterr().err == "error: bad --steps '0': must be a whole number at least 1\n"


def test_bench_env_vector_small_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "env", "--vector", "--steps", "20000", "--batch", "64"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert all(len(line) <= 80 for line in lines[:-1])
    result = json.loads(lines[-1])
    assert result["vector"] is True and result["batch"] == 64
    assert result["steps"] >= 20000 and result["raw_steps"] >= 2000
    assert result["steps_per_cpu_s"] > 0 and result["raw_steps_per_cpu_s"] > 0
    assert result["ratio_cpu"] == round(result["steps_per_cpu_s"] / result["raw_steps_per_cpu_s"], 1)
    assert result["meets_target"] == (result["steps_per_cpu_s"] >= 1_000_000)
