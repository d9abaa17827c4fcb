# PYTHON_ARGCOMPLETE_OK  (shell completion: eval "$(register-python-argcomplete sueca-arena)")
"""The ``sueca-arena`` command line: one sub-command per module, each imported only when chosen.

Every command module exposes ``add_parser(subparsers)`` and sets ``func`` on its parser, and
imports what it needs at its top. :func:`main` imports only the chosen command's module
(:class:`LazyCommands`): the 20 modules together import grpc, Redis, Celery and the web stack,
and building every parser takes several times as long as ``sueca-arena --help`` itself
needs (``farm-bench -- sueca-arena --help``). The one-line helps that ``--help`` lists are
therefore kept here, in :data:`COMMANDS`.

User errors (bad variant, unknown bot, unreachable Redis, a number option out of range) are
:class:`UserError`: the message is printed on stderr and the exit code is 2, with no stack trace.
Number options are checked while parsing (:class:`sueca.sdk.cli.Bounded`), before any command runs.
A misspelt option is named with its command and the closest real option (:meth:`Parser.parse_args`).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version

from sueca.arena.cli.common import Bounded, UserError, share_options
from sueca.arena.settings import SettingsError, current
from sueca.sdk.cli import complete
from sueca.sdk.cli.common import plain, plain_help
from sueca.sdk.logs import add_flag, setup_from_args

__all__ = ["UserError", "Bounded", "LazyCommands", "Parser", "build_parser", "main"]

# (module, command, help): the module's add_parser() defines the command; the help is the line
# the top-level --help lists without importing the module (a test holds the two the same).
COMMANDS = (
    ("sueca.arena.cli.selfplay", "selfplay", "play two bots against each other in this process"),
    ("sueca.arena.cli.replay", "replay", "verify a replay file, or show a match (file or Redis)"),
    ("sueca.arena.cli.bench", "bench", "run a benchmark (last line: one JSON object)"),
    ("sueca.arena.cli.referee", "referee", "run a referee: bots connect to it, matches run on it"),
    ("sueca.arena.cli.health", "health", "ask a referee's gRPC health service (exit 0 if serving)"),
    ("sueca.arena.cli.doctor", "doctor",
     "check a deployment from this host: Redis, sentinels, referees, workers (exit 0 if healthy)"),
    ("sueca.arena.cli.wait", "wait", "wait until servers accept connections (for scripts)"),
    ("sueca.arena.cli.bots", "bots", "register, list and remove bots"),
    ("sueca.arena.cli.tournament", "tournament",
     "run a tournament (round robin, gauntlet, Swiss, knockout...) through the workers"),
    ("sueca.arena.cli.competition", "competition",
     "seasons: create, enter, open, freeze, final, close"),
    ("sueca.arena.cli.leaderboard", "leaderboard",
     "the registered bots by rating of record (±95%%)"),
    ("sueca.arena.cli.matches", "matches", "recent matches, or `matches show ID` for one replay"),
    ("sueca.arena.cli.worker", "worker", "a Celery worker that plays and records matches"),
    ("sueca.arena.cli.scheduler", "scheduler", "the continuous ladder: keep N matches running"),
    ("sueca.arena.cli.ratings", "ratings", "rebuild ratings from the results log, or export them"),
    ("sueca.arena.cli.retention", "retention",
     "archive old matches and trim the results log (keeps Redis bounded)"),
    ("sueca.arena.cli.redis", "redis", "run a Redis on this machine (the one installed with "
     "sueca-arena) and print the SUECA_REDIS_URL to export"),
    ("sueca.arena.cli.demo", "demo", "start Redis, a referee, a worker and example bots; run a "
     "small tournament; print the leaderboard; stop everything"),
    ("sueca.arena.cli.serve", "serve", "run a persistent arena on this machine (Redis, referee, "
     "worker, ladder, web pages) until Ctrl-C"),
    ("sueca.arena.cli.loadtest", "loadtest", "load-test one bot: many matches at once against the "
     "referee's house bots; latency, throughput, faults"),
    ("sueca.arena.cli.conformance", "conformance",
     "check that a bot (or a referee) speaks the protocol"),
    ("sueca.arena.cli.bot_host", "bot-host",
     "run the hosted bots assigned to this machine, sandboxed, until stopped"),
)

_CHOSEN = "_sueca_chosen_parser"  # the namespace attribute naming the deepest command parsed


class LazyCommands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """Sub-commands whose parsers are built only when chosen (or by :meth:`load_all`).

    :meth:`add_lazy` lists a command with its help and a ``load(self)`` that adds its real
    parser; until then a bare stand-in answers ``--help`` listings. Every parser of the tree is
    a :class:`Parser`, so every level of sub-commands is one of these, and each records the
    parser it chose (for :meth:`Parser.parse_args`'s error on an unknown option)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._lazy: dict[str, Callable[[LazyCommands], None]] = {}

    def add_lazy(self, name: str, help: str, load: Callable[[LazyCommands], None]) -> None:
        self.add_parser(name, help=help)
        self._lazy[name] = load

    def load(self, name: str) -> argparse.ArgumentParser:
        """Build command ``name``'s real parser in place of its stand-in."""
        load = self._lazy.pop(name, None)
        if load is not None:
            del self._name_parser_map[name]
            self._choices_actions = [c for c in self._choices_actions if c.dest != name]
            load(self)
            real = self._name_parser_map[name]
            share_options(real)  # --redis/--data/--json before an action as well as after it
            add_flag(real)  # what build_parser gives the whole tree, for a parser built later
            plain_help(real)
            for choice in self._choices_actions:
                if choice.dest == name and isinstance(choice.help, str):
                    choice.help = plain(choice.help)
        parser: argparse.ArgumentParser = self._name_parser_map[name]
        return parser

    def load_all(self) -> None:
        """Every command's real parser, at every level (for completion and tests)."""
        for name in list(self._name_parser_map):
            for action in self.load(name)._actions:
                if isinstance(action, LazyCommands):
                    action.load_all()

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[object] | None, option_string: str | None = None) -> None:
        name = values[0] if isinstance(values, list) and values else None
        if name in self._name_parser_map:
            setattr(namespace, _CHOSEN, self.load(name))  # the sub-parser's own overrides it
        super().__call__(parser, namespace, values, option_string)


class Parser(argparse.ArgumentParser):
    """An argument parser whose sub-commands are :class:`LazyCommands` and whose unknown
    options are reported by the command they were given to."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.register("action", "parsers", LazyCommands)

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        parsed, extra = self.parse_known_args(args, namespace)
        chosen: argparse.ArgumentParser = getattr(parsed, _CHOSEN, self)
        if hasattr(parsed, _CHOSEN):
            delattr(parsed, _CHOSEN)
        if extra:
            chosen.error(unknown_arguments(chosen, extra))
        return parsed


def unknown_arguments(parser: argparse.ArgumentParser, extra: Sequence[str]) -> str:
    """``unrecognized arguments: --matchs 2 (--matchs: did you mean --matches-per-pair?)``:
    the words ``parser`` did not take, and for each unknown option the closest of its own."""
    known = [flag for action in parser._actions for flag in action.option_strings]
    hints = []
    for word in extra:
        flag = word.split("=", 1)[0]
        if flag.startswith("-") and flag not in known:
            close = max(known, key=lambda option: _likeness(flag, option), default="")
            hints.append(f"{flag}: " + (f"did you mean {close}?" if _likeness(flag, close) >= 0.6
                                        else f"no such option of {parser.prog}"))
    return f"unrecognized arguments: {' '.join(extra)}" + (f" ({'; '.join(hints)})" if hints else "")


def _likeness(typed: str, option: str) -> float:
    """How close ``typed`` is to ``option`` or to its start (argparse takes a prefix, so a
    misspelt prefix is a common typo: ``--matchs`` for ``--matches-per-pair``)."""
    return max(difflib.SequenceMatcher(None, typed, option).ratio(),
               difflib.SequenceMatcher(None, typed, option[:len(typed) + 1]).ratio())


def build_parser(lazy: bool = False) -> argparse.ArgumentParser:
    """The whole command tree, or with ``lazy`` one whose commands are built when chosen."""
    parser = Parser(
        prog="sueca-arena", description="Sueca Arena: a referee, a league and tools for Sueca bots.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    assert isinstance(sub, LazyCommands)
    for module_name, command, help in COMMANDS:
        sub.add_lazy(command, help, _command_loader(module_name))
    add_flag(parser)  # --log-format on every command, at every level
    plain_help(parser)  # help texts are often docstrings: no reST markup in a terminal
    if not lazy:
        sub.load_all()  # a command module that fails to import is a broken install: say so
    return parser


def _command_loader(module_name: str) -> Callable[[LazyCommands], None]:
    def load(sub: LazyCommands) -> None:
        importlib.import_module(module_name).add_parser(sub)
    return load


def version() -> str:
    """The installed sueca-arena version (and the SDK's, which a bot author compares with)."""
    try:
        return f"{dist_version('sueca-arena')} (sueca-sdk {dist_version('sueca-sdk')})"
    except PackageNotFoundError:
        return "(not installed)"


def _lost_redis(err: BaseException) -> bool:
    """Redis went away in the middle of a command (it answered at start-up: that is checked
    with a clear message first). redis-py's words name no password; only loaded if in use."""
    redis = sys.modules.get("redis")
    return redis is not None and isinstance(err, (redis.ConnectionError, redis.TimeoutError))


def main(argv: Sequence[str] | None = None) -> int:
    try:
        current()  # every SUECA_* variable is checked before anything starts
        parser = build_parser(lazy="_ARGCOMPLETE" not in os.environ)  # completion walks it all
        complete(parser)  # shell completion (argcomplete): a no-op unless the shell is asking
        args = parser.parse_args(argv)
        setup_from_args(args)
        return int(args.func(args) or 0)
    except (UserError, SettingsError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except Exception as err:
        if not _lost_redis(err):
            raise
        print(f"error: Redis stopped answering: {err} (run the command again when it is back)",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
