# PYTHON_ARGCOMPLETE_OK  (shell completion: eval "$(register-python-argcomplete sueca-arena)")
"""The ``sueca-arena`` command line: one sub-command per module, each imported only when used.

Every command module exposes ``add_parser(subparsers)`` and sets ``func`` on its parser; a
module imports its heavy dependencies (grpc, celery, redis) inside functions, so ``sueca-arena
selfplay`` starts in milliseconds and works without any server.

User errors (bad variant, unknown bot, unreachable Redis, a number option out of range) are
:class:`UserError`: the message is printed on stderr and the exit code is 2, with no stack trace.
Number options are checked while parsing (:class:`sueca.sdk.cli.Bounded`), before any command runs.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from sueca.arena.cli.common import Bounded, UserError, share_options
from sueca.arena.settings import SettingsError, current
from sueca.sdk.cli import complete
from sueca.sdk.cli.common import plain_help
from sueca.sdk.logs import add_flag, setup_from_args

__all__ = ["UserError", "Bounded", "build_parser", "main"]

# (module, command) pairs; the module's add_parser() defines the command.
COMMANDS = (
    ("sueca.arena.cli.selfplay", "selfplay"),
    ("sueca.arena.cli.replay", "replay"),
    ("sueca.arena.cli.bench", "bench"),
    ("sueca.arena.cli.referee", "referee"),
    ("sueca.arena.cli.health", "health"),
    ("sueca.arena.cli.wait", "wait"),
    ("sueca.arena.cli.bots", "bots"),
    ("sueca.arena.cli.tournament", "tournament"),
    ("sueca.arena.cli.leaderboard", "leaderboard"),
    ("sueca.arena.cli.matches", "matches"),
    ("sueca.arena.cli.worker", "worker"),
    ("sueca.arena.cli.scheduler", "scheduler"),
    ("sueca.arena.cli.ratings", "ratings"),
    ("sueca.arena.cli.retention", "retention"),
    ("sueca.arena.cli.redis", "redis"),
    ("sueca.arena.cli.demo", "demo"),
    ("sueca.arena.cli.serve", "serve"),
    ("sueca.arena.cli.loadtest", "loadtest"),
    ("sueca.arena.cli.conformance", "conformance"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sueca-arena", description="Sueca Arena: a referee, a league and tools for Sueca bots.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name, _ in COMMANDS:
        # a command module that fails to import is a broken install: say so, never hide it
        importlib.import_module(module_name).add_parser(sub)
    share_options(parser)  # --redis/--data/--json before an action as well as after it
    add_flag(parser)  # --log-format on every command, at every level
    plain_help(parser)  # help texts are often docstrings: no reST markup in a terminal
    return parser


def version() -> str:
    """The installed sueca-arena version (and the SDK's, which a bot author compares with)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version
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
        parser = build_parser()
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
