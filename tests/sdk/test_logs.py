"""sueca.sdk.logs: the two formats, the fields, and that nothing a bot sends can forge a line or
a field (injected newlines, quotes, JSON, U+2028, huge values), and the --log-format flag on
every command of both CLIs (real processes)."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from sueca.sdk import logs

BIN = Path(sys.executable).parent


def record(msg: str = "hello %s", args: tuple[object, ...] = ("world",), **extra: object
           ) -> logging.LogRecord:
    rec = logging.LogRecord("sueca.test", logging.WARNING, __file__, 1, msg, args, None)
    for k, v in extra.items():
        setattr(rec, k, v)
    return rec


def as_json(rec: logging.LogRecord) -> dict[str, object]:
    line = logs.JsonFormatter().format(rec)
    assert "\n" not in line and "\r" not in line and line.isascii()
    assert len(line.splitlines()) == 1  # not even U+2028, U+0085 or \x1c split it
    return json.loads(line)


def test_a_json_line_has_the_standard_keys_then_the_fields() -> None:
    out = as_json(record(match_id="m-1", game_id="m-1.0", bot="greedy", seat=2))
    assert list(out) == ["ts", "level", "logger", "msg", "match_id", "game_id", "bot", "seat"]
    assert out["level"] == "WARNING" and out["logger"] == "sueca.test"
    assert out["msg"] == "hello world" and out["seat"] == 2  # a number stays a number
    ts = str(out["ts"])
    assert ts.endswith("Z") and ts[10] == "T" and len(ts) == len("2026-01-01T00:00:00.000Z")


@pytest.mark.parametrize("evil", [
    'x"}\n{"level": "CRITICAL", "msg": "forged',   # a quote and a newline: a forged record
    "a\rb\x00c\x1b[31mred",                         # carriage return, NUL, terminal escapes
    "line\u2028break\u0085nel\x1cfs",               # what str.splitlines() also splits on
    "é😀 unicode",                                  # survives, escaped
])
def test_bot_text_in_message_or_field_cannot_forge_a_line_or_a_key(evil: str) -> None:
    out = as_json(record("bot said %s", (evil,), bot=evil, peer=evil))
    assert out["msg"] == f"bot said {evil}" and out["bot"] == evil and out["peer"] == evil
    assert set(out) == {"ts", "level", "logger", "msg", "bot", "peer"}
    assert out["level"] == "WARNING"


def test_only_known_fields_become_keys() -> None:
    out = as_json(record(level="CRITICAL", ts="forged", admin=True, match_id="m"))
    assert out["level"] == "WARNING" and "admin" not in out and out["match_id"] == "m"
    with pytest.raises(ValueError, match="unknown log field 'admin'"):
        logs.bind(admin=True)


def test_values_are_capped_and_say_how_long_they_were() -> None:
    huge = "A" * 100_000
    out = as_json(record("%s", (huge,), bot=huge))
    assert out["bot"] == "A" * logs.FIELD_CHARS + "... (100000 long)"
    assert str(out["msg"]).startswith("A" * logs.MESSAGE_CHARS)
    assert str(out["msg"]).endswith("... (100000 long)")
    assert len(json.dumps(out)) < logs.MESSAGE_CHARS + logs.FIELD_CHARS + 200


def test_a_traceback_is_one_field_of_one_line() -> None:
    try:
        raise RuntimeError("boom\nsecond line")
    except RuntimeError:
        rec = record()
        rec.exc_info = sys.exc_info()
    out = as_json(rec)
    assert "RuntimeError: boom\nsecond line" in str(out["exc"])


def test_a_bad_format_string_still_gives_a_line() -> None:
    out = as_json(record("%d items", ("many",)))
    assert "%d items" in str(out["msg"]) and "TypeError" in str(out["msg"])


def test_text_keeps_todays_look_and_escapes_appended_fields() -> None:
    fmt = logs.TextFormatter()
    plain = fmt.format(record())
    assert plain.endswith(" WARNING sueca.test: hello world")
    line = fmt.format(record(match_id="m-1", bot="evil\nname", seat=0))
    assert line.endswith("hello world [match_id=m-1 bot='evil\\nname' seat=0]")
    assert "\n" not in line
    long = fmt.format(record(bot="b" * 1000))
    assert "... (" in long and len(long) < 400


def test_context_binds_per_task_and_extra_wins() -> None:
    fmt = logs.JsonFormatter()

    async def match(mid: str) -> list[dict[str, object]]:
        logs.bind(match_id=mid)
        await asyncio.sleep(0)  # the other task runs meanwhile, bound to its own id
        return [json.loads(fmt.format(record())),
                json.loads(fmt.format(record(match_id="explicit")))]

    async def both() -> list[list[dict[str, object]]]:
        return list(await asyncio.gather(match("a"), match("b")))

    (a, a_extra), (b, _) = asyncio.run(both())
    assert a["match_id"] == "a" and b["match_id"] == "b" and a_extra["match_id"] == "explicit"
    assert "match_id" not in json.loads(fmt.format(record()))  # nothing leaked out here
    with logs.log_context(tournament="t1", bot="x"):
        with logs.log_context(bot=None, seat=3):
            inner = json.loads(fmt.format(record()))
        outer = json.loads(fmt.format(record()))
    assert (inner.get("tournament"), inner.get("bot"), inner.get("seat")) == ("t1", None, 3)
    assert (outer.get("bot"), outer.get("seat")) == ("x", None)


def test_setup_installs_one_handler_and_follows_stderr(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        logs.setup("json", "INFO")
        logs.setup("json")
        ours = [h for h in root.handlers if h not in before]
        assert len(ours) == 1
        logging.getLogger("sueca.x").info("one %s", "line", extra={"bot": "b"})
        err = capsys.readouterr().err.splitlines()
        assert [json.loads(x)["msg"] for x in err] == ["one line"]
        assert logs.current_format() == "json"
        with pytest.raises(ValueError, match="unknown log format 'xml'"):
            logs.setup("xml")
    finally:
        for h in root.handlers:
            if h not in before:
                root.removeHandler(h)
        logs._handler = None
        logs._format = None


def _parsers(parser: object, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    """Every parser of a CLI, the top one and each command and sub-command, with its path."""
    import argparse
    assert isinstance(parser, argparse.ArgumentParser)
    out: list[tuple[tuple[str, ...], object]] = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _parsers(sub, (*path, name))
    return out


@pytest.mark.parametrize("module", ["sueca.sdk.cli", "sueca.arena.cli"])
def test_every_command_takes_log_format(module: str) -> None:
    import importlib
    parser = importlib.import_module(module).build_parser()
    every = _parsers(parser)
    assert len(every) >= 4
    for path, p in every:
        flags = [a for a in p._actions if "--log-format" in a.option_strings]  # type: ignore[attr-defined]
        assert len(flags) == 1 and flags[0].choices == ("text", "json"), path
    # given before or after the command, and not undone by the command's parser
    for argv in (["replay", "verify", "x.jsonl", "--log-format", "json"],
                 ["--log-format", "json", "replay", "verify", "x.jsonl"]):
        assert parser.parse_args(argv).log_format == "json"
    assert not hasattr(parser.parse_args(["replay", "verify", "x.jsonl"]), "log_format")


def test_a_bad_format_is_a_one_line_error_quoting_it() -> None:
    out = subprocess.run([str(BIN / "sueca-bot"), "selfplay", "--matches", "1"],
                         capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "SUECA_LOG_FORMAT": "yaml\nx"})
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "SUECA_LOG_FORMAT='yaml\\nx'" in out.stderr and "text or json" in out.stderr
    out = subprocess.run([str(BIN / "sueca-bot"), "selfplay", "--log-format", "yaml"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "'yaml'" in out.stderr


def test_the_flag_wins_over_the_environment_in_a_real_process(tmp_path: Path) -> None:
    """A bot that cannot reach its referee logs its retries: as JSON with the flag, as text
    with SUECA_LOG_FORMAT=text and no flag."""
    import os
    import signal

    from kits.wait import wait_for

    from sueca.arena.redisproc import free_port
    env = {**os.environ, "SUECA_TOKEN": "alice.secret", "SUECA_LOG_FORMAT": "text"}
    server = f"127.0.0.1:{free_port()}"  # nobody listens
    outs = []
    for n, flag in enumerate((["--log-format", "json"], [])):
        err = tmp_path / f"bot-{n}.err"
        with open(err, "w") as sink:
            proc = subprocess.Popen([str(BIN / "sueca-bot"), "run", "random", "--server",
                                     server, "--max-backoff", "0.2", *flag], env=env,
                                    stderr=sink, text=True)
            wait_for(lambda err=err: err.read_text().count("cannot connect") >= 2, 30,
                     "the bot's retries logged")
            proc.send_signal(signal.SIGTERM)
            proc.wait(20)
        outs.append(err.read_text().splitlines())
    json_lines, text_lines = outs
    assert json_lines and text_lines
    records = [json.loads(x) for x in json_lines]  # every line is JSON
    assert any("cannot connect" in str(r["msg"]) for r in records), json_lines
    assert any(r.get("bot") == "alice" for r in records), json_lines
    assert not any(x.startswith("{") for x in text_lines)
    assert any(" WARNING sueca.bot: cannot connect" in x for x in text_lines), text_lines
