"""The ``sueca-arena`` command line: one command per module, nothing silently dropped, versions."""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sueca.arena import cli

CLI_DIR = Path(cli.__file__).parent


def test_each_command_module_defines_exactly_its_one_command_with_the_listed_help() -> None:
    """The top-level --help lists COMMANDS' helps without importing the modules: each must be
    what its module says."""
    for module_name, command, help in cli.COMMANDS:
        sub = cli.Parser().add_subparsers()
        importlib.import_module(module_name).add_parser(sub)
        assert list(sub.choices) == [command], f"{module_name} adds {list(sub.choices)}"
        said = [c.help for c in sub._get_subactions()]
        assert said == [help], f"{command}: COMMANDS says {help!r}, its module {said}"


def test_each_bench_kinds_help_is_its_modules_first_line() -> None:
    from sueca.arena.cli.bench import KINDS
    for kind, (module_name, help) in KINDS.items():
        doc = importlib.import_module(module_name).__doc__ or ""
        assert doc.strip().splitlines()[0] == help, kind


def test_every_cli_module_is_a_command_or_the_shared_helpers() -> None:
    listed = {m.rsplit(".", 1)[1] for m, _, _ in cli.COMMANDS}
    present = {p.stem for p in CLI_DIR.glob("*.py")} - {"__init__", "__main__", "common"}
    assert present == listed


def test_no_command_module_imports_another_modules_private_names() -> None:
    for path in CLI_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sueca"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, f"{path.name} imports {private} from {node.module}"


def test_a_command_module_that_fails_to_import_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "COMMANDS", cli.COMMANDS + (("sueca.arena.cli.no_such", "x", "x"),))
    with pytest.raises(ModuleNotFoundError, match="no_such"):
        cli.build_parser()
    with pytest.raises(ModuleNotFoundError, match="no_such"):
        cli.build_parser(lazy=True).parse_args(["x"])


def test_a_command_imports_only_its_own_module() -> None:
    """``sueca-arena replay ...`` builds the replay parser alone: the other command modules
    (grpc servers, Celery, the web) are not imported, and the help lists every command."""
    code = ("import sys; from sueca.arena.cli import build_parser; "
            "p = build_parser(lazy=True); p.parse_args(['replay', 'verify', 'f']); "
            "print(*sorted(m for m in sys.modules if m.startswith('sueca.arena.cli.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    loaded = {m.rsplit(".", 1)[1] for m in out.stdout.split()}
    assert "replay" in loaded and loaded <= {"common", "replay", "matches"}, out.stdout  # replay shows stored matches as `matches show`
    listing = _bare_arena("--help")
    assert listing.returncode == 0, listing.stderr
    for _, command, _ in cli.COMMANDS:
        assert f"    {command} " in listing.stdout, command


def _bare_arena(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "sueca-arena"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUECA_")}
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.parametrize(("argv", "says"), [
    (["tournament", "run", "--bots", "a,b", "--matchs", "2"],
     "sueca-arena tournament run: error: unrecognized arguments: --matchs 2 "
     "(--matchs: did you mean --matches-per-pair?)"),
    (["bench", "engine", "--dels=5"],
     "sueca-arena bench engine: error: unrecognized arguments: --dels=5 "
     "(--dels: did you mean --deals?)"),
    (["leaderboard", "--qqqqqq"], "sueca-arena leaderboard: error: unrecognized arguments: "
     "--qqqqqq (--qqqqqq: no such option of sueca-arena leaderboard)"),
    (["matches", "extra"], "sueca-arena matches: error: argument ACTION: invalid choice"),
])
def test_a_misspelt_option_is_named_with_its_command_and_the_close_one(argv, says) -> None:
    out = _bare_arena(*argv)
    assert out.returncode == 2, out
    assert out.stderr.startswith(f"usage: sueca-arena {argv[0]}"), out.stderr
    assert out.stderr.splitlines()[-1].startswith(says), out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("command", ["sueca-arena", "sueca-bot"])
def test_version(command: str) -> None:
    from importlib.metadata import version
    exe = Path(sys.executable).parent / command
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert version("sueca-sdk") in out.stdout and out.stdout.startswith(command)


def _commands(parser, path=()):
    """Every command path of ``parser`` (``()``, ``("matches",)``, ``("matches", "show")``...)
    with its parser."""
    import argparse
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def _parsers():
    from sueca.sdk import cli as bot_cli
    return [("sueca-arena", cli.build_parser()), ("sueca-bot", bot_cli.build_parser())]


@pytest.mark.parametrize(("prog", "path"), [
    (prog, path) for prog, parser in _parsers() for path, _ in _commands(parser)])
def test_every_commands_help_is_its_own(prog, path, capsys) -> None:
    """``X Y --help`` prints Y's help, not X's: the usage line names the whole command."""
    parser = dict(_parsers())[prog]
    with pytest.raises(SystemExit) as done:
        parser.parse_args([*path, "--help"])
    assert done.value.code == 0
    usage = " ".join(capsys.readouterr().out.split("\n\n")[0].split())
    assert usage.startswith(" ".join(["usage:", prog, *path]) + " "), usage


@pytest.mark.parametrize("prog", ["sueca-arena", "sueca-bot"])
def test_every_option_says_what_it_does(prog) -> None:
    """No bare ``--json`` or ``--log-level`` in a help listing (benchmarks aside: they are the
    project's own measuring tools)."""
    bare = [f"{' '.join(path)} {action.option_strings[-1]}"
            for path, parser in _commands(dict(_parsers())[prog]) if path[:1] != ("bench",)
            for action in parser._actions if action.option_strings and not action.help]
    assert not bare, bare


MARKUP = re.compile(r"``|:[a-z]+:`|\*\*\S|\S::$", re.M)


@pytest.mark.parametrize("prog", ["sueca-arena", "sueca-bot"])
def test_no_help_shows_doc_markup(prog, capsys) -> None:
    """Every command's ``--help`` (descriptions are often docstrings) is plain text: no
    ````literal````, ``:class:`...``` or ``**strong**``, whatever the terminal width."""
    parser = dict(_parsers())[prog]
    seen = 0
    for path, _ in _commands(parser):
        with pytest.raises(SystemExit):
            parser.parse_args([*path, "--help"])
        out = capsys.readouterr().out
        found = MARKUP.search(out)
        assert found is None, f"{prog} {' '.join(path)} --help: {found and found.group(0)!r}"
        seen += 1
    assert seen > 5


def test_plain_strips_the_markup_docstrings_carry() -> None:
    from sueca.sdk.cli.common import plain
    assert plain("a :class:`~sueca.engine.Match`, :func:`sueca.sdk.run` and "
                 ":ref:`the rules <rules>`") == "a Match, sueca.sdk.run and the rules"
    assert plain("keep ``--data DIR`` **here**; for example::") == \
        "keep --data DIR here; for example:"
    assert plain("run `sueca-arena bots add NAME`") == "run `sueca-arena bots add NAME`"


def test_no_command_word_is_parsed_by_hand() -> None:
    """A positional named like ``show ID`` (a word, then a placeholder) is a sub-command parsed
    by hand, whose ``--help`` would be its parent's: every positional
    is one placeholder, and every command word a sub-parser, which the test above walks."""
    import argparse
    for prog, parser in _parsers():
        for path, p in _commands(parser):
            for action in p._actions:
                if action.option_strings or isinstance(action, argparse._SubParsersAction):
                    continue
                name = str(action.metavar or action.dest)
                assert " " not in name.strip(), f"{prog} {' '.join(path)}: positional {name!r}"


def test_matches_show_is_a_command(capsys) -> None:
    parser = cli.build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["matches", "show", "--help"])
    assert capsys.readouterr().out.startswith("usage: sueca-arena matches show ")
    args = parser.parse_args(["matches", "--redis", "redis://h:1/0", "show", "m1", "--json"])
    assert (args.redis, args.mid, args.json) == ("redis://h:1/0", "m1", True)
    args = parser.parse_args(["matches", "show", "m1"])
    assert (args.redis, args.json, args.func.__name__) == (None, False, "cmd_matches_show")
    # the arena serve keeps in a folder, named before or after `show` (as its printed commands do)
    for argv in (["matches", "--data", "d", "show", "m1"], ["matches", "show", "m1", "--data", "d"]):
        args = parser.parse_args(argv)
        assert (args.data, args.redis, args.mid) == ("d", None, "m1"), argv
    args = parser.parse_args(["matches", "--limit", "3"])
    assert (args.limit, args.func.__name__) == (3, "cmd_matches")


LONG_IDS = [f"ladder-20261201-1724{k:02d}-{'0123456789abcdef' * 2}" for k in range(3)]


@pytest.fixture
def recorded(store, prefix, redis_url):
    """Three recorded matches with long ids (the last ended by a bot error of 'shaky')."""
    from sueca.arena.match_job import outcome_to_result
    for k, mid in enumerate(LONG_IDS):
        seats = ["a-bot-with-a-long-name", "shaky", "a-bot-with-a-long-name", "shaky"]
        store.create_match(mid, {"bots": seats, "seed": str(k)})
        end = "bot_error" if k == 2 else "normal"
        out = {"end": end, "winner": 0, "game_points": [4, 1], "replay": None,
               "fault_seat": 1 if k == 2 else None, "fault_bot": "shaky" if k == 2 else None}
        store.record_result(mid, outcome_to_result(store.match(mid), out))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUECA_")}
    return {**env, "SUECA_REDIS_URL": redis_url, "SUECA_KEY_PREFIX": prefix}


def _arena(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "sueca-arena"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60, env=env)


def test_piped_matches_show_whole_ids_and_filter_as_the_web(recorded) -> None:
    """``sueca-arena matches | cat``: a pipe is never cut; --bot/--end are the web's filters."""
    out = _arena(recorded, "matches")
    assert out.returncode == 0, out.stderr
    for mid in LONG_IDS:
        assert mid in out.stdout, out.stdout
    assert "…" not in out.stdout and "bot_error by shaky" in out.stdout
    assert "shaky+shaky" not in out.stdout and "│ shaky " in out.stdout  # a team of one bot: once
    only = _arena(recorded, "matches", "--bot", "shaky", "--end", "bot_error")
    assert only.returncode == 0, only.stderr
    assert LONG_IDS[2] in only.stdout and LONG_IDS[0] not in only.stdout
    bad = _arena(recorded, "matches", "--end", "boom")
    assert bad.returncode == 2 and "invalid choice: 'boom'" in bad.stderr
    assert "'bot_error'" in bad.stderr and "End." not in bad.stderr  # the values, not their repr
    nobody = _arena(recorded, "matches", "--bot", "nobody")
    assert nobody.returncode == 2 and "unknown bot 'nobody'" in nobody.stderr


@pytest.mark.parametrize("width", [80, 60])
def test_at_a_narrow_terminal_ids_stay_whole(recorded, store, width) -> None:
    """Other columns are left out (the caption says which) before an id is cut or folded."""
    from rich.console import Console

    from sueca.arena.cli.matches import print_matches
    from sueca.arena.league.view import LeagueView
    rows = LeagueView(store).matches(1, 20)["matches"]
    screen = Console(width=width, force_terminal=True, record=True, color_system=None)
    print_matches(rows, len(rows), screen)  # type: ignore[arg-type]
    text = screen.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    for mid in LONG_IDS:
        assert mid in text, text
    assert "…" not in text and "too narrow to show" in text
    rows_drawn = [line.rstrip() for line in text.splitlines() if line[:1] in "┏┃┡│└"]
    assert rows_drawn and all(line[-1] in "┓┃┩│┘" for line in rows_drawn), text  # not cropped


@pytest.mark.parametrize("prog", ["sueca-arena", "sueca-bot"])
def test_an_option_named_in_help_text_has_its_own_placeholder(prog) -> None:
    """A help text that says ``--id ID`` is about an option whose usage line says ``--id ID``
    too, not ``--id TID``."""
    import re
    wrong = []
    for path, parser in _commands(dict(_parsers())[prog]):
        takes = {flag: str(a.metavar or a.dest.upper()) for a in parser._actions if a.nargs != 0
                 for flag in a.option_strings}
        texts = [a.help or "" for a in parser._actions] + [parser.description or ""]
        for found in re.finditer(r"(--[a-z][a-z-]*) ([A-Z][A-Z_]*)\b", "\n".join(texts)):
            flag, named = found.groups()  # "--report FILE" is FILE.html's beginning: right
            if flag in takes and not takes[flag].startswith(named):
                wrong.append(f"{' '.join(path)}: {found.group(0)} but usage {flag} {takes[flag]}")
    assert not wrong, wrong


def test_tournament_run_help_says_what_it_does(capsys) -> None:
    for path in (["tournament"], ["tournament", "run"]):
        with pytest.raises(SystemExit):
            cli.build_parser().parse_args([*path, "--help"])
        out = capsys.readouterr().out
        description = out.split("\n\n")[1]
        assert not description.startswith(("positional", "options")), out
    assert "--id ID alone" in out and "[--id ID]" in out, out
