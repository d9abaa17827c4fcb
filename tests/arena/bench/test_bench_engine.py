"""``sueca-arena bench engine``: a short run ends with one JSON line of the promised keys."""

from __future__ import annotations

import json
import random

import pytest

from sueca.arena.bench.engine import sketch_deals
from sueca.arena.cli import main


def test_bench_engine_small_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "engine", "--deals", "400", "--seed", "2"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and "deals/s" in lines[0]
    result = json.loads(lines[-1])
    assert set(result) == {"deals", "seconds", "deals_per_s", "baseline_deals_per_s", "ratio"}
    assert result["deals"] >= 400
    assert result["deals_per_s"] > 0 and result["baseline_deals_per_s"] > 0 and result["ratio"] > 0


def test_bench_engine_refuses_no_deals(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "engine", "--deals", "0"]) == 2
    assert capsys.readouterr().err == "error: bad --deals '0': must be a whole number at least 1\n"


def test_sketch_deals_hand_out_all_points() -> None:
    # team 0's points over many random deals average about half of the 120 in the deck
    n = 400
    mean = sketch_deals(n, random.Random(1)) / n
    assert 40 < mean < 80
