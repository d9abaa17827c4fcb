"""``sueca-arena bench strength``: a short run ends with one JSON line of the promised figures,
the same whatever the number of workers; a bad bot spec is a usage error quoting it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sueca.arena.cli import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["bench", "strength", "--bot", "pimc:samples=2:solve=2", "--deals", "12",
                 "--seed", "5", *args]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    result = json.loads(lines[-1])
    assert isinstance(result, dict)
    return result


def test_bench_strength_small_run(capsys: pytest.CaptureFixture[str]) -> None:
    result = _run(capsys, "--workers", "1")
    assert {"deals", "won", "lost", "tied", "faulted", "deal_win_rate", "deal_win_ci",
            "ms_per_move", "ms_per_move_p90", "cpu_ms_per_move", "moves"} <= set(result)
    deals, won, lost = result["deals"], result["won"], result["lost"]
    assert isinstance(deals, int) and deals >= 12 and deals == won + lost
    low, high = result["deal_win_ci"]
    assert 0 <= low <= result["deal_win_rate"] <= high <= 1
    times = result["ms_per_move"]
    assert isinstance(times, dict) and times["bot"] > 0 and times["baseline"] > 0
    played = 20 * (deals + result["tied"])  # two seats each, ten tricks a deal
    assert result["moves"] == {"bot": played, "baseline": played}
    # the pairs are counted in order: two workers find the same deals and the same result
    again = _run(capsys, "--workers", "2")
    assert (again["won"], again["lost"], again["pairs"]) == (won, lost, result["pairs"])


def test_bench_strength_refuses_a_bad_bot(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "strength", "--bot", "pimc:samples=lots", "--deals", "4"]) == 2
    err = capsys.readouterr().err
    assert "bad value 'lots' for samples" in err and "Traceback" not in err
