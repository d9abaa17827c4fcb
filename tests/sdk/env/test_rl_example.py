"""The RL example (sdk/examples/rl/train.py, docs/rl.md) runs as a user runs it: it trains a
linear agent with numpy alone, the agent beats random in self-play (win rate and interval
printed), the weights are saved, and the agent plays in a local arena as a ``sueca-bot run``
process. A test-size setting (six generations, fewer matches); untrained, it loses."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "sdk" / "examples" / "rl" / "train.py"

pytestmark = pytest.mark.slow

RATE = re.compile(r"agent vs random: won (\d+) of (\d+) matches, win rate ([\d.]+) "
                  r"\(95% interval ([\d.]+)-([\d.]+)\)")


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_the_example_trains_an_agent_that_beats_random_and_plays_in_an_arena(
        tmp_path: Path) -> None:
    done = run(tmp_path, "--generations", "6", "--deals", "8", "--eval-matches", "60",
               "--arena-matches", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "generation 6: mean reward" in done.stdout
    wins, matches, rate, low, high = RATE.search(done.stdout).groups()  # type: ignore[union-attr]
    assert int(matches) == 60 and float(low) > 0.5 and float(low) <= float(rate) <= float(high)
    assert (tmp_path / "weights.npz").exists()
    assert re.search(r"arena match 1: normal, game points \d+-\d+, \S+ won", done.stdout)
    assert done.stdout.rstrip().endswith("the agent beats random")


def test_untrained_it_does_not_beat_random(tmp_path: Path) -> None:
    done = run(tmp_path, "--generations", "0", "--eval-matches", "60", "--arena-matches", "0")
    assert done.returncode == 1
    assert "the agent does not beat random yet" in done.stdout


def test_without_the_arena_installed_the_arena_step_is_skipped_with_a_note(tmp_path: Path) -> None:
    """In the SDK-only install docs/rl.md starts from (``pip install "./sdk[rl]"``), the
    default run still trains and evaluates, and says why it plays no arena match."""
    hide = ("import runpy, sys; sys.modules['sueca.arena'] = None; "
            f"sys.argv = [{str(SCRIPT)!r}, '--out', {str(tmp_path)!r}, '--generations', '0', "
            "'--eval-matches', '4']; runpy.run_path(sys.argv[0], run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", hide], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    assert "the arena matches are skipped: they need sueca-arena" in done.stdout, done.stdout
    assert "arena match 1" not in done.stdout and (tmp_path / "weights.npz").exists()
    assert done.returncode == 1  # untrained: it does not beat random
