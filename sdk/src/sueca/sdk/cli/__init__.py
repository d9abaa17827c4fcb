# PYTHON_ARGCOMPLETE_OK  (shell completion, when argcomplete is installed: see complete())
"""sueca-bot: write, test and connect a Sueca bot, with the SDK alone.

  sueca-bot selfplay --bots mybot:Greedy,random --matches 200    # who wins, and how surely
  sueca-bot selfplay --bots ./mybot.py:Greedy,heuristic --replays games.jsonl
  sueca-bot duel ./mybot.py:Greedy heuristic --sprt 0,20          # stronger, or not?
  sueca-bot replay verify games.jsonl                             # re-check every match
  SUECA_TOKEN=greedy.XXXX sueca-bot run mybot:Greedy --server 127.0.0.1:50051

A bot is an example name (random, heuristic, reckless, pimc; pimc:samples=64 gives it
arguments), module:Class (a module in the current directory is found), path/to/file.py:Class
or exec:COMMAND (a program in any language). Run "sueca-bot COMMAND --help" for a command's
options.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from sueca.sdk.cli.common import (
    INT_LIMIT,
    Bounded,
    UserError,
    add_tls_flags,
    plain_help,
    settings,
    tls_from_args,
)
from sueca.sdk.logs import add_flag, setup_from_args

__all__ = ["INT_LIMIT", "Bounded", "UserError", "add_tls_flags", "build_parser", "complete",
           "main", "tls_from_args"]

# the command modules, in the order --help lists them; each has add_parser(subparsers)
COMMANDS = ("sueca.sdk.cli.selfplay", "sueca.sdk.cli.duel", "sueca.sdk.cli.replay",
            "sueca.sdk.cli.run")


def _version() -> str:
    # deferred: importlib.metadata adds a measured ~38 ms to start-up, needed for --version
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("sueca-sdk")
    except PackageNotFoundError:
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sueca-bot", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(name).add_parser(sub)
    add_flag(parser)  # --log-format on every command, at every level
    plain_help(parser)  # help texts are often docstrings: no reST markup in a terminal
    return parser


def complete(parser: argparse.ArgumentParser) -> None:
    """Shell completion through argcomplete, when it is installed (the SDK needs only grpcio and
    protobuf, so it is optional here): ``pip install argcomplete`` and
    ``eval "$(register-python-argcomplete sueca-bot)"``. Without it, or when the shell is not
    asking for completions, this does nothing."""
    try:
        import argcomplete  # deferred: an optional extra
    except ImportError:
        return
    argcomplete.autocomplete(parser)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        settings()  # every SUECA_* variable is checked before anything starts
        parser = build_parser()
        complete(parser)
        args = parser.parse_args(argv)
        setup_from_args(args)
        return int(args.func(args) or 0)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
