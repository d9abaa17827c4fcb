"""Shell completion for ``sueca-bot`` and ``sueca-arena`` through argcomplete, run as the shell
runs it: the command started with ``_ARGCOMPLETE=1`` and the line typed so far in ``COMP_LINE``
writes its candidates and exits. argcomplete is optional for the SDK (a bot author's install is
grpcio and protobuf only) and a dependency of sueca-arena."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("argcomplete")  # installed with sueca-arena; optional for the SDK

BIN = Path(sys.executable).parent


def candidates(line: str, tmp_path: Path) -> list[str]:
    out_file = tmp_path / "completions"
    env = dict(os.environ, _ARGCOMPLETE="1", _ARGCOMPLETE_IFS="\n", COMP_LINE=line,
               COMP_POINT=str(len(line)), COMP_TYPE="9",
               _ARGCOMPLETE_STDOUT_FILENAME=str(out_file))
    command = line.split()[0]
    p = subprocess.run([str(BIN / command)], env=env, capture_output=True, text=True, timeout=60,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    return [c.strip() for c in out_file.read_text().split("\n") if c.strip()]


@pytest.mark.parametrize("line, expected", [
    ("sueca-bot ", {"selfplay", "duel", "replay", "run"}),
    ("sueca-bot sel", {"selfplay"}),
    ("sueca-bot selfplay --du", {"--duplicate"}),
    ("sueca-bot replay ", {"verify"}),
    ("sueca-bot run random --token", {"--token", "--token-file"}),
    ("sueca-arena sel", {"selfplay"}),
    # the options its actions share are offered before the action too
    ("sueca-arena replay ", {"verify", "show", "--redis", "--data", "--json"}),
    ("sueca-arena selfplay --rep", {"--replays"}),
])
def test_completion_offers_commands_and_options(tmp_path: Path, line: str,
                                                expected: set[str]) -> None:
    found = set(candidates(line, tmp_path))
    assert expected <= found
    typed = line.split(" ")[-1]
    assert all(c.startswith(typed) for c in found)
    assert found - expected <= {"-h", "--help", "--version", "--log-format"}  # nothing else


def test_the_sdk_runs_without_argcomplete(tmp_path: Path) -> None:
    """With argcomplete hidden, sueca-bot still works (completion is then simply absent)."""
    (tmp_path / "argcomplete.py").write_text("raise ImportError('hidden for this test')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    hidden = subprocess.run([sys.executable, "-c", "import argcomplete"], env=env, capture_output=True,
                            text=True, timeout=60)
    assert hidden.returncode != 0  # the stand-in really hides it
    p = subprocess.run([str(BIN / "sueca-bot"), "selfplay", "--bots", "random,random",
                        "--matches", "2"], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "random#1" in p.stdout, p.stderr
