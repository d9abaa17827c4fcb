"""``sueca-bot run`` refuses bad input at start-up: one line quoting the bad value, exit code 2,
no stack trace. Each case runs the real command; a check that came too late would leave it
trying to connect to a closed port forever (and the test would time out). The token comes from
$SUECA_TOKEN or --token-file; --token still works, with a warning. Help texts are plain text."""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sueca.sdk.cli import UserError, build_parser
from sueca.sdk.cli.run import TOKEN_WARNING, token_from_args

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


def _run(*args: str, cwd: Path, token: str | None = "bot.x") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SUECA_TOKEN"}
    if token is not None:
        env["SUECA_TOKEN"] = token
    return subprocess.run([SUECA_BOT, "run", *args], capture_output=True, text=True, timeout=30,
                          cwd=cwd, env=env)


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
    out = _run("random", "--server", _closed_port(), option, value,
               cwd=tmp_path)
    assert _one_line_error(out) == f"error: bad {option} '{value}': must be {rule}\n"


@pytest.mark.parametrize("value", [str(2**31), "1" + "0" * 400])
def test_a_huge_number_is_refused_in_one_line(tmp_path, value):
    out = _run("random", "--server", _closed_port(), "--capacity", value,
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
    out = _run(target, "--server", _closed_port(), cwd=tmp_path)
    err = _one_line_error(out)
    assert err.startswith(f"error: bot {target!r}: ") and says in err


@pytest.mark.parametrize("target", ["bots_here:Good", "bots_here:make_good", "random",
                                    "./bots_here.py:make_good"])
def test_a_bot_class_or_factory_passes_the_check(tmp_path, target):
    """The check lets real bots through: the run goes on to the next check (a bad address)."""
    (tmp_path / "bots_here.py").write_text(BOT_FILE)
    out = _run(target, "--server", "127.0.0.1:notaport", cwd=tmp_path)
    assert _one_line_error(out) == "error: bad server address '127.0.0.1:notaport': " \
                                   "expected host:port\n"


# -- the token: $SUECA_TOKEN, --token-file, or --token with a warning ---------------------------

BAD_SERVER = "error: bad server address '127.0.0.1:notaport': expected host:port\n"


def test_token_on_the_command_line_warns_and_still_works(tmp_path):
    out = _run("random", "--server", "127.0.0.1:notaport", "--token", "bot.x", cwd=tmp_path,
               token=None)
    assert out.returncode == 2
    assert out.stderr == TOKEN_WARNING + "\n" + BAD_SERVER  # warned, then went on to the next check
    assert "SUECA_TOKEN" in TOKEN_WARNING and "--token-file" in TOKEN_WARNING


def test_token_file_and_environment_give_no_warning(tmp_path):
    (tmp_path / "token").write_text("bot.secret\n")
    out = _run("random", "--server", "127.0.0.1:notaport", "--token-file", "token", cwd=tmp_path,
               token=None)
    assert _one_line_error(out) == BAD_SERVER
    out = _run("random", "--server", "127.0.0.1:notaport", cwd=tmp_path, token="bot.secret")
    assert _one_line_error(out) == BAD_SERVER


def test_no_token_names_the_two_good_ways(tmp_path):
    out = _run("random", "--server", "127.0.0.1:1", cwd=tmp_path, token=None)
    err = _one_line_error(out)
    assert "SUECA_TOKEN" in err and "--token-file" in err
    assert "set but empty" not in err


def test_an_empty_sueca_token_says_what_left_it_empty(tmp_path, monkeypatch):
    """`export SUECA_TOKEN=$(sueca-arena bots add MYBOT ...)` run again after a restart: the
    name is registered already, bots add fails, and the variable is left empty."""
    with pytest.raises(UserError, match=r"SUECA_TOKEN is set but empty \(a `bots add`"):
        _token(tmp_path, monkeypatch, env="")


def _token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *argv: str,
           env: str | None = None) -> str:
    if env is None:
        monkeypatch.delenv("SUECA_TOKEN", raising=False)
    else:
        monkeypatch.setenv("SUECA_TOKEN", env)
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["run", "random", *argv])
    return token_from_args(args)


def test_which_token_is_used(tmp_path, monkeypatch, capsys):
    (tmp_path / "t").write_text("  alice.from-file \n")
    assert _token(tmp_path, monkeypatch, "--token-file", "t", env="alice.env") == "alice.from-file"
    assert _token(tmp_path, monkeypatch, env="alice.env") == "alice.env"
    assert capsys.readouterr().err == ""
    assert _token(tmp_path, monkeypatch, "--token", "alice.flag", env="alice.env") == "alice.flag"
    assert capsys.readouterr().err == TOKEN_WARNING + "\n"


@pytest.mark.parametrize("content, says", [
    (None, "No such file"),
    ("", "it is empty"),
    ("\n\n", "it is empty"),
    ("two tokens\n", "one token on one line"),
    ("x" * 5000, "more than 4096 bytes"),
    (b"\xff\xfe", "not UTF-8"),
])
def test_a_bad_token_file_is_refused_quoting_its_path(tmp_path, monkeypatch, content, says):
    path = tmp_path / "tok"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(UserError) as err:
        _token(tmp_path, monkeypatch, "--token-file", "tok")
    assert "'tok'" in str(err.value) and says in str(err.value)
    assert "two tokens" not in str(err.value)  # the file's contents never reach the message


def test_token_and_token_file_together_are_refused(tmp_path):
    (tmp_path / "t").write_text("a.b")
    out = _run("random", "--server", "127.0.0.1:1", "--token", "a.b", "--token-file", "t",
               cwd=tmp_path)
    assert out.returncode == 2 and "not allowed with" in out.stderr


# -- help texts ----------------------------------------------------------------------------------

def _all_help(parser: argparse.ArgumentParser) -> list[str]:
    texts = [parser.format_help()]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                texts.extend(_all_help(sub))
    return texts


def test_help_is_plain_text_and_never_shows_a_token_on_a_command_line():
    texts = _all_help(build_parser())
    assert len(texts) == 6  # sueca-bot, selfplay, duel, replay, replay verify, run
    for text in texts:
        assert "``" not in text and ":class:" not in text and ":func:" not in text, text
        assert "--token greedy" not in text and "--token alice" not in text
    run_help = next(t for t in texts if t.startswith("usage: sueca-bot run"))
    assert "last '.'" in run_help and "first '.'" not in run_help  # as the client takes it
    assert "--token-file" in run_help and "SUECA_TOKEN" in run_help


def test_help_names_every_example_bot():
    """Where a command's help lists the example bots, it lists them all (pimc too)."""
    from sueca.sdk.bots import EXAMPLES
    texts = _all_help(build_parser())
    for start in ("usage: sueca-bot [", "usage: sueca-bot selfplay", "usage: sueca-bot run"):
        text = " ".join(next(t for t in texts if t.startswith(start)).split())
        listed = re.search(r"example(?: names?)? \(([^);]*)", text)
        assert listed, (start, text)
        assert listed.group(1).split(", ") == list(EXAMPLES), (start, listed.group(1))


def test_arena_selfplay_and_replay_help_is_plain_text():
    from sueca.arena.cli import build_parser as arena_parser
    texts = _all_help(arena_parser())
    for text in texts:
        if text.startswith(("usage: sueca-arena selfplay", "usage: sueca-arena replay")):
            assert "``" not in text, text


@pytest.mark.parametrize("token, says", [
    ("garbage", "bad token in $SUECA_TOKEN: it has no '.'; tokens look like NAME.SECRET"),
    (".s3cr3t-value", "bad token in $SUECA_TOKEN: it has no name before its '.'"),
    ("alice.", "bad token in $SUECA_TOKEN: the name 'alice' has no secret after its '.'"),
])
def test_a_token_not_shaped_name_dot_secret_is_refused_at_start_up(tmp_path, token, says):
    """It went to the referee, which answered "wrong token for bot 'garbage'". The port is
    closed: a command that got as far as connecting would retry until the timeout."""
    out = _run("random", "--server", _closed_port(), cwd=tmp_path, token=token)
    err = _one_line_error(out)
    assert err.startswith("error: " + says), err
    hidden = token.rpartition(".")[2] or token  # the secret, or all of it when no '.'
    assert hidden not in err, err


def test_a_bad_token_from_a_file_or_the_flag_names_where_it_came_from(tmp_path, monkeypatch):
    (tmp_path / "t").write_text("garbage\n")
    with pytest.raises(UserError, match=r"^bad token in 't': it has no '\.'"):
        _token(tmp_path, monkeypatch, "--token-file", "t")
    with pytest.raises(UserError, match=r"^bad token given with --token: it has no '\.'"):
        _token(tmp_path, monkeypatch, "--token", "garbage")
    # a name with dots is fine: the secret is after the last one
    assert _token(tmp_path, monkeypatch, env="team.alice.XyZ-_9") == "team.alice.XyZ-_9"


def test_replay_verify_numbers_deals_from_1(tmp_path):
    """A person reads the report: the first deal is deal 1, as the web's 'Deal 1 of 5'."""
    games = tmp_path / "games.jsonl"
    played = subprocess.run([SUECA_BOT, "selfplay", "--bots", "heuristic,random",
                             "--matches", "2", "--replays", str(games)], capture_output=True,
                            text=True, timeout=60)
    assert played.returncode == 0, played.stderr
    records = [json.loads(line) for line in games.read_text().splitlines()]
    records[0]["deals"][0]["points"] = [1, 119]
    games.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = subprocess.run([SUECA_BOT, "replay", "verify", str(games)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, out.stderr
    assert "deal 1: points is [1, 119]" in out.stdout and "deal 0" not in out.stdout, out.stdout
