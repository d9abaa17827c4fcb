"""What sdk/README.md promises a bot author's type checker: a bot written as documented passes
``mypy --strict`` (sync or ``async def`` play and redeal, the clock, snapshots), and a bot that
gets a type wrong does not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TYPED = '''
from sueca.engine import Observation, Snapshot
from sueca.sdk import Bot, Card, Clock


class Sync(Bot):
    def play(self, obs: Observation) -> Card:
        kept: Snapshot = obs.snapshot()
        clock: Clock | None = self.clock
        if clock is not None and clock.left() < 0.05:
            return obs.legal[0]
        return kept.legal[-1]

    def redeal(self, obs: Observation) -> bool:
        return False


class Async(Bot):
    async def play(self, obs: Observation) -> Card:
        return obs.legal[0]

    async def redeal(self, obs: Observation) -> bool:
        return True
'''


def _mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "typedbot.py").write_text(source)
    env = {**os.environ, "MYPYPATH": str(ROOT / "sdk" / "src")}
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                           "--explicit-package-bases", "--namespace-packages", "typedbot.py"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


def test_a_bot_written_as_documented_type_checks_and_a_wrong_one_does_not(tmp_path: Path) -> None:
    out = _mypy(tmp_path, TYPED)
    assert out.returncode == 0, out.stdout + out.stderr
    out = _mypy(tmp_path, TYPED.replace("return obs.legal[0]\n\n    async def redeal",
                                        "return 'AS'\n\n    async def redeal"))
    assert out.returncode == 1 and "typedbot.py:20" in out.stdout, out.stdout + out.stderr
