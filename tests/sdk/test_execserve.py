"""``python -m sueca.sdk.execserve module:Class`` serves an SDK bot over ``sueca-exec/1``:
the same bot through the adapter plays exactly the games it plays in-process (same seeds,
same cards), in one process for many games; a bad class is a one-line error."""

from __future__ import annotations

import subprocess
import sys

from sueca.sdk.bots import load_bot
from sueca.sdk.local import play_local

SERVED = f"exec:{sys.executable} -m sueca.sdk.execserve sueca.sdk.bots.heuristic:HeuristicBot"


def test_a_served_bot_plays_as_it_does_in_process() -> None:
    for seed in (1, 2, 3):
        served = play_local([load_bot(SERVED), load_bot("random")] * 2, seed=seed,
                            match_id=f"m-{seed}")
        local = play_local([load_bot("heuristic"), load_bot("random")] * 2, seed=seed,
                           match_id=f"m-{seed}")
        assert served.end == "normal"
        assert served.results == local.results, seed
        assert served.game_points == local.game_points


def test_a_bad_class_is_one_line_on_stderr() -> None:
    out = subprocess.run([sys.executable, "-m", "sueca.sdk.execserve", "json:dumps"],
                         capture_output=True, text=True, timeout=30, input="")
    assert out.returncode == 2
    assert out.stderr.startswith("error: bot 'json:dumps'"), out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
