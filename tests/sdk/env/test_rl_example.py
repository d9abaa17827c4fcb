"""The RL example (sdk/examples/rl/train.py, docs/rl.md) runs as a user runs it: it trains a
linear agent with numpy alone, the agent beats random in self-play (win rate and interval
printed), the weights are saved, and the agent plays in a local arena as a ``sueca-bot run``
process. A test-size setting (six generations, fewer matches); untrained, it loses."""

from __future__ import annotations

import re
import subprocess
import sys
import venv
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "sdk" / "examples" / "rl" / "train.py"

pytestmark = pytest.mark.slow

RATE = re.compile(r"agent vs random: won (\d+) of (\d+) matches, win rate ([\d.]+) "
                  r"\(95% interval ([\d.]+)\.\.([\d.]+)\)")


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


def test_without_the_rl_extra_it_says_how_to_install_it_in_one_line(tmp_path: Path) -> None:
    """A Python with the SDK and none of its rl extra (as ``make install`` leaves .venv): one
    line naming what is missing and the install command, exit 2, no traceback."""
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)
    site = next((bare / "lib").glob("python3*/site-packages"))
    (site / "sueca-sdk.pth").write_text(str(ROOT / "sdk" / "src") + "\n")
    python = bare / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import numpy"], capture_output=True).returncode
    done = subprocess.run([str(python), str(SCRIPT), "--generations", "0"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "rl extra" in done.stderr and "'numpy'" in done.stderr, done.stderr
    assert 'pip install -e "./sdk[rl]"' in done.stderr and done.stdout == ""


def test_the_weights_go_to_out_and_never_over_a_file_without_force(tmp_path: Path) -> None:
    quick = ("--generations", "0", "--eval-matches", "2", "--arena-matches", "0")
    mine = tmp_path / "weights.npz"
    mine.write_bytes(b"someone's weights")
    kept = subprocess.run([sys.executable, str(SCRIPT), *quick], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert kept.returncode == 2 and "'weights.npz' exists" in kept.stderr, kept.stderr
    assert "--force" in kept.stderr and "generation" not in kept.stdout  # refused before training
    assert mine.read_bytes() == b"someone's weights"
    out = tmp_path / "agents" / "v2.npz"
    done = subprocess.run([sys.executable, str(SCRIPT), *quick, "--out", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr  # untrained: it does not beat random
    assert out.exists() and f"saved {out}" in done.stdout
    assert mine.read_bytes() == b"someone's weights"
    forced = subprocess.run([sys.executable, str(SCRIPT), *quick, "--force"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert forced.returncode == 1, forced.stderr
    assert (np.load(mine)["weights"] == np.load(out)["weights"]).all()  # untrained: zeros


def test_the_batched_features_are_the_features_row_by_row() -> None:
    """The trainer scores its candidates with ``features_batch`` in the vector environment;
    PolicyBot plays with ``features``: both must see the same numbers (to the last bits of a
    sum taken in another order)."""
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import linear_agent
    finally:
        sys.path.remove(str(SCRIPT.parent))
    from sueca.sdk.env import VectorSuecaEnv
    env = VectorSuecaEnv(32)
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(120):  # three deals: leads, follows, last to play, trumps
        rows = obs["observation"]
        batch = linear_agent.features_batch(rows)
        for i, row in enumerate(rows):
            assert np.allclose(batch[i], linear_agent.features(row), rtol=0, atol=1e-12)
        obs, *_ = env.step((rng.random((32, 40)) * obs["action_mask"]).argmax(axis=1))
