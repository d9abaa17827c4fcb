"""``sueca-arena bench serve`` in small: two short serve runs end with one JSON line, the paced
one cheaper than flat out, and no folder or process left behind."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest
from kits.arena import ROOT, SUECA_ARENA

pytestmark = pytest.mark.slow


def test_bench_serve_small_run() -> None:
    before = set(Path(tempfile.gettempdir()).glob("sueca-bench-serve-*"))
    out = subprocess.run([SUECA_ARENA, "bench", "serve", "--seconds", "10", "--pace", "30"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    paced, flat = result["paced"], result["flat_out"]
    assert result["bench"] == "serve" and paced["pace"] == 30 and flat["pace"] == 0
    assert flat["matches"] > paced["matches"] >= 1
    assert 0 < paced["cpu_seconds"] < flat["cpu_seconds"]
    assert result["cpu_ratio"] == pytest.approx(paced["cpu_seconds"] / flat["cpu_seconds"],
                                                abs=0.01)
    assert flat["data_bytes"] > paced["data_bytes"] > 0
    assert "what a pace costs" in out.stderr  # the table
    assert set(Path(tempfile.gettempdir()).glob("sueca-bench-serve-*")) == before
