"""The example bots in other languages (sdk/examples: C, JavaScript, Java) play the league's
ladder: each is registered, connected as a ``sueca-bot run exec:...`` process, paired by
``sueca-arena scheduler`` and played through the referee by a worker, its results recorded with
no fault of its own. A missing compiler or runtime fails with the command that installs it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from kits.arena import cli
from kits.wait import wait_for

from sueca.arena.local_arena import LocalArena

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "sdk" / "examples"
TOOLS = {"cc": "gcc", "node": "nodejs", "java": "default-jdk-headless"}
EXEC_BOTS = ("exec-c", "exec-js", "exec-java")


def need(tool: str) -> str:
    found = shutil.which(tool)
    assert found, f"{tool} is not installed: apt-get install -y {TOOLS[tool]} (.ci/provision)"
    return found


def test_the_exec_examples_play_the_ladder(tmp_path: Path) -> None:
    c_bot = tmp_path / "cbot"
    subprocess.run([need("cc"), "-O2", "-o", str(c_bot), str(EXAMPLES / "c" / "bot.c")],
                   check=True, timeout=120)
    bots = {"exec-c": f"exec:{c_bot}",
            "exec-js": f"exec:{need('node')} {EXAMPLES / 'js' / 'bot.js'}",
            "exec-java": f"exec:{need('java')} {EXAMPLES / 'java' / 'Bot.java'}",
            "random": "random"}
    logs = tmp_path / "arena"
    logs.mkdir()
    arena = LocalArena(None, None, bots, capacity=4, concurrency=2, log_dir=logs)
    arena.start(timeout=90)
    try:
        env = arena.env()
        store = arena.store

        def played() -> list[dict[str, object]] | None:
            results = [r for _, r in store.results()]  # this arena plays only the ladder
            seated = {name for r in results for name in r["seats"]}
            if set(EXEC_BOTS) <= seated:
                return results  # type: ignore[return-value]
            # another round of the ladder: it pairs among the connected bots named here
            cli("scheduler", "--once", "--target", "2", "--bots", ",".join(bots), env=env)
            return None

        results = wait_for(played, 150, "a ladder match of each exec example", interval=1.0)
        assert results is not None
        for r in results:
            assert r["tournament"] == "ladder", r
            assert r["fault_bot"] not in EXEC_BOTS, r
            assert r["end"] == "normal", r
    finally:
        arena.stop()
