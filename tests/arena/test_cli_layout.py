"""The ``sueca-arena`` command line: one command per module, nothing silently dropped, versions."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from sueca.arena import cli

CLI_DIR = Path(cli.__file__).parent


def test_each_command_module_defines_exactly_its_one_command() -> None:
    import argparse
    for module_name, command in cli.COMMANDS:
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        importlib.import_module(module_name).add_parser(sub)
        assert list(sub.choices) == [command], f"{module_name} adds {list(sub.choices)}"


def test_every_cli_module_is_a_command_or_the_shared_helpers() -> None:
    listed = {m.rsplit(".", 1)[1] for m, _ in cli.COMMANDS}
    present = {p.stem for p in CLI_DIR.glob("*.py")} - {"__init__", "__main__", "common"}
    assert present == listed


def test_no_command_module_imports_another_modules_private_names() -> None:
    for path in CLI_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sueca"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, f"{path.name} imports {private} from {node.module}"


def test_a_command_module_that_fails_to_import_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "COMMANDS", cli.COMMANDS + (("sueca.arena.cli.no_such", "x"),))
    with pytest.raises(ModuleNotFoundError, match="no_such"):
        cli.build_parser()


@pytest.mark.parametrize("command", ["sueca-arena", "sueca-bot"])
def test_version(command: str) -> None:
    from importlib.metadata import version
    exe = Path(sys.executable).parent / command
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert version("sueca-sdk") in out.stdout and out.stdout.startswith(command)
