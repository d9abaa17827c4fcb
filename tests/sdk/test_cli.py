"""``sueca-bot run`` refuses bad input at start-up: one line quoting the bad value, exit code 2,
no stack trace. Each case runs the real command; a check that came too late would leave it
trying to connect to a closed port forever (and the test would time out)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

SUECA_BOT = str(Path(sys.executable).parent / "sueca-bot")

BOT_FILE = '''
from sueca.sdk import Bot


class Good(Bot):
    def play(self, obs):
        return obs.legal[0]


def make_good():
    return Good()


class NotABot:
    def play(self, obs):
        return obs.legal[0]


class NeedsArgs(Bot):
    def __init__(self, depth):
        self.depth = depth

    def play(self, obs):
        return obs.legal[0]


def make_nothing():
    return None
'''


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SUECA_BOT, "run", *args], capture_output=True, text=True, timeout=30,
                          cwd=cwd)


def _one_line_error(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
    assert "Traceback" not in out.stderr
    return out.stderr


@pytest.mark.parametrize("option, value, rule", [
    ("--max-backoff", "-1", "a number above 0"),
    ("--max-backoff", "0", "a number above 0"),
    ("--max-backoff", "inf", "a number above 0"),
    ("--drain-timeout", "-5", "a number at least 0"),
    ("--capacity", "0", "a whole number at least 1"),
    ("--capacity", "many", "a whole number at least 1"),
    ("--threads", "-1", "a whole number at least 0"),
])
def test_a_bad_number_is_refused_before_connecting(tmp_path, option, value, rule):
    out = _run("random", "--server", _closed_port(), "--token", "bot.x", option, value,
               cwd=tmp_path)
    assert _one_line_error(out) == f"error: bad {option} '{value}': must be {rule}\n"


@pytest.mark.parametrize("value", [str(2**31), "1" + "0" * 400])
def test_a_huge_number_is_refused_in_one_line(tmp_path, value):
    out = _run("random", "--server", _closed_port(), "--token", "bot.x", "--capacity", value,
               cwd=tmp_path)
    assert _one_line_error(out) == f"error: bad --capacity '{value}': out of range " \
                                   f"(-{2**31 - 1}..{2**31 - 1})\n"


@pytest.mark.parametrize("target, says", [
    ("json:dumps", "dumps() cannot make a bot: TypeError"),
    ("os:getcwd", "getcwd() made a str, not a Bot"),
    ("bots_here:NotABot", "NotABot() made a NotABot, not a Bot"),
    ("bots_here:NeedsArgs", "NeedsArgs() cannot make a bot: TypeError"),
    ("bots_here:make_nothing", "make_nothing() made a NoneType, not a Bot"),
])
def test_something_that_makes_no_bot_is_refused_at_start_up(tmp_path, target, says):
    (tmp_path / "bots_here.py").write_text(BOT_FILE)
    out = _run(target, "--server", _closed_port(), "--token", "bot.x", cwd=tmp_path)
    err = _one_line_error(out)
    assert err.startswith(f"error: bot {target!r}: ") and says in err


@pytest.mark.parametrize("target", ["bots_here:Good", "bots_here:make_good", "random",
                                    "./bots_here.py:make_good"])
def test_a_bot_class_or_factory_passes_the_check(tmp_path, target):
    """The check lets real bots through: the run goes on to the next check (a bad address)."""
    (tmp_path / "bots_here.py").write_text(BOT_FILE)
    out = _run(target, "--server", "127.0.0.1:notaport", "--token", "bot.x", cwd=tmp_path)
    assert _one_line_error(out) == "error: bad server address '127.0.0.1:notaport': " \
                                   "expected host:port\n"
