"""``sueca-bot``: connect a bot to referees.

    sueca-bot run random --server 127.0.0.1:50051 --token alice.XXXX --capacity 8
    sueca-bot run mybots.smart:SmartBot --server ref-a:50051,ref-b:50051
    sueca-bot run ./smart.py:SmartBot              # a file works too

The token and server may come from ``SUECA_TOKEN`` and ``SUECA_SERVER``; the bot's name is the
part of the token before the first '.', unless ``--name`` says otherwise. Ctrl-C (or SIGTERM)
drains: no new games, running ones finish, then it exits; a second Ctrl-C exits at once.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any


class _UserError(Exception):
    pass


def load(spec: str) -> Callable[[], Any]:
    """An example name, ``module:Class`` (the current directory is importable), or
    ``path/to/file.py:Class``."""
    path, sep, attr = spec.rpartition(":")
    if sep and (path.endswith(".py") or os.sep in path):
        if not os.path.isfile(path):
            raise _UserError(f"bot {spec!r}: no file {path!r}")
        name = "sueca_bot_" + os.path.splitext(os.path.basename(path))[0]
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise _UserError(f"bot {spec!r}: cannot load {path!r}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as err:
            raise _UserError(f"bot {spec!r}: {path!r} failed to import: "
                             f"{type(err).__name__}: {err}") from None
        found = getattr(module, attr, None)
        if found is None or not callable(found):
            raise _UserError(f"bot {spec!r}: {path!r} has no class or factory {attr!r}")
        return found  # type: ignore[no-any-return]
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: the bot author's modules import
    from sdk.bots import BotLoadError, load_bot
    try:
        return load_bot(spec)
    except BotLoadError as err:
        raise _UserError(str(err)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sueca-bot", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    p = sub.add_parser("run", help="connect a bot to referees and play until Ctrl-C")
    p.add_argument("bot", metavar="BOT",
                   help="an example (random, heuristic, reckless), module:Class or file.py:Class")
    p.add_argument("--server", default=os.environ.get("SUECA_SERVER"),
                   help="referee host:port, a comma list, or a name resolving to several "
                        "(default $SUECA_SERVER)")
    p.add_argument("--token", default=os.environ.get("SUECA_TOKEN"),
                   help="the token `sueca-arena bots add NAME` printed (default $SUECA_TOKEN)")
    p.add_argument("--capacity", type=int, default=4,
                   help="games this process plays at once, per referee (default 4)")
    p.add_argument("--name", default=None,
                   help="bot name (default: the token's part before the first '.')")
    p.add_argument("--threads", type=int, default=None,
                   help="threads for a synchronous bot (default min(capacity, 8); 0 runs it in "
                        "the event loop, fastest for bots that take microseconds)")
    p.add_argument("--max-backoff", type=float, default=30.0,
                   help="longest wait between reconnection attempts, seconds (default 30)")
    p.add_argument("--drain-timeout", type=float, default=60.0,
                   help="on Ctrl-C, how long running games may take to finish (default 60)")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        if not args.server:
            raise _UserError("no referee address: pass --server HOST:PORT or set SUECA_SERVER")
        if not args.token:
            raise _UserError("no token: pass --token or set SUECA_TOKEN (`sueca-arena bots add "
                             "NAME` prints one)")
        if args.capacity < 1:
            raise _UserError(f"bad --capacity {args.capacity}: at least 1")
        factory = load(args.bot)
        from sdk.client import resolve, run
        try:
            resolve(args.server)
        except ValueError as err:
            raise _UserError(str(err)) from None
        return run(factory, args.server, args.token, args.capacity, name=args.name,
                   threads=args.threads, max_backoff=args.max_backoff,
                   drain_timeout=args.drain_timeout)
    except _UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
