"""``sueca-arena conformance``: hold a bot, or a referee, to the wire protocol.

  sueca-arena conformance heuristic                 # starts the bot, checks it
  sueca-arena conformance --listen 127.0.0.1:50099  # waits for your bot (any language)
  sueca-arena conformance --referee 127.0.0.1:50051 # checks a referee (SUECA_TOKEN: a bot's)

Exit 0 when every check passed (skipped ones do not count), 1 when one failed, 2 for a usage
error. Progress goes to stderr; a table to stdout, or with ``--json`` one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import textwrap
from collections.abc import Sequence

from sueca.arena.cli.common import UserError
from sueca.arena.conformance.bot_script import Timing
from sueca.arena.conformance.kit import check_bot
from sueca.arena.conformance.referee_script import check_referee
from sueca.arena.conformance.report import Check, exit_code, to_json
from sueca.referee.security import operator_token_from_env, read_token_file
from sueca.sdk.channels import CredentialsError
from sueca.sdk.cli import Bounded
from sueca.sdk.cli.common import settings

NAME_WIDTH, STATUS_WIDTH, WIDTH = 14, 4, 80


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("conformance", help="check that a bot (or a referee) speaks the protocol",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("bot", nargs="?", metavar="BOT",
                   help="the bot to start and check: an example (heuristic), module:Class, "
                        "file.py:Class, or anything else sueca-bot run takes")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--listen", metavar="HOST:PORT",
                      help="serve the scripted referee here and wait for your bot")
    mode.add_argument("--referee", metavar="HOST:PORT",
                      help="check the referee at this address instead (bot token: "
                           "$SUECA_TOKEN; operator token: --operator-token-file or "
                           "$SUECA_OPERATOR_TOKEN if it wants one)")
    p.add_argument("--name", default="conformance",
                   help="the bot name the scripted referee expects (default conformance)")
    p.add_argument("--token", default=None,
                   help="with --listen: the token your bot must send (default: a new one, "
                        "printed); with --referee: the bot token (default $SUECA_TOKEN)")
    p.add_argument("--operator-token-file", default=None, metavar="FILE",
                   help="with --referee: file holding the referee's operator token, sent with "
                        "each RunMatch (default $SUECA_OPERATOR_TOKEN)")
    p.add_argument("--capacity", action=Bounded, kind=int, low=1, high=64, default=4,
                   help="games the started bot plays at once (default 4)")
    p.add_argument("--turn-seconds", action=Bounded, kind=float, low=0, above=True,
                   default=10.0, help="how long the bot gets per answer (default 10)")
    p.add_argument("--timeout", action=Bounded, kind=float, low=0, above=True, default=120.0,
                   help="with --listen: how long to wait for the bot to connect (default 120)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def _address(text: str, flag: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise UserError(f"bad {flag} {text[:100]!r}: give host:port, e.g. 127.0.0.1:50099")
    return host, int(port)


def _progress(line: str) -> None:
    print(f"conformance: {line}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    if args.referee is not None:
        if args.bot is not None:
            raise UserError(f"give a BOT ({args.bot[:100]!r}) or --referee, not both")
        checks, extra = _check_referee(args)
    else:
        checks, extra = _check_bot(args)
    data = to_json(checks, **extra)
    if args.json:
        print(json.dumps(data))
    else:
        print(table(checks, str(extra.get("bot") or extra.get("referee") or "")))
    return exit_code(checks)


def _check_bot(args: argparse.Namespace) -> tuple[list[Check], dict[str, object]]:
    if args.operator_token_file is not None:
        raise UserError(f"--operator-token-file {args.operator_token_file[:100]!r} goes with "
                        "--referee (a bot check needs no operator token)")
    if (args.bot is None) == (args.listen is None):
        raise UserError("give a BOT to start (e.g. heuristic) or --listen HOST:PORT to wait "
                        "for yours" + (f", not both ({args.bot[:100]!r})" if args.bot else ""))
    listen = _address(args.listen, "--listen") if args.listen is not None else None
    if not args.name or len(args.name) > 64 or any(c in args.name for c in ". :/\\"):
        raise UserError(f"bad --name {args.name[:100]!r}: a bot name, at most 64 characters, "
                        "no '.', ':', '/' or spaces")
    if args.token is not None and not args.token.startswith(args.name + "."):
        raise UserError(f"bad --token: it must read {args.name}.SECRET (the bot's name is "
                        "the part before its last '.')")
    if args.bot is not None:
        # deferred: it imports every example bot, which only a BOT spec needs
        from sueca.sdk.bots import BotLoadError, load_bot
        try:
            load_bot(args.bot)  # a bad spec is a usage error now, not a bot that never comes
        except BotLoadError as err:
            raise UserError(str(err)) from None
    connect = args.timeout if listen is not None else 30.0
    timing = Timing(turn=args.turn_seconds, connect=connect,
                    reconnect=max(5.0, 1.5 * args.turn_seconds),
                    drain=max(5.0, 1.5 * args.turn_seconds))
    try:
        checks, extra = asyncio.run(check_bot(args.bot, listen, name=args.name,
                                              capacity=args.capacity, timing=timing,
                                              token=args.token, progress=_progress))
    except OSError as err:
        raise UserError(f"cannot serve the scripted referee: {err}") from None
    return checks.all(), extra


def _check_referee(args: argparse.Namespace) -> tuple[list[Check], dict[str, object]]:
    _address(args.referee, "--referee")
    try:
        operator = (read_token_file(args.operator_token_file) if args.operator_token_file
                    else operator_token_from_env())
    except CredentialsError as err:
        raise UserError(str(err)) from None
    token = args.token or settings().token or ""
    name, dot, secret = token.rpartition(".")
    if not (dot and name and secret):
        raise UserError("no bot token for --referee: set SUECA_TOKEN (or --token) to a "
                        "registered bot's NAME.SECRET")
    checks = asyncio.run(check_referee(args.referee, token, seconds=args.turn_seconds,
                                       progress=_progress, operator_token=operator))
    return checks.all(), {"referee": args.referee}


def table(checks: Sequence[Check], subject: str) -> str:
    """The checks as plain text in at most 80 columns: reasons wrap, names never do."""
    lines = [f"conformance of {subject}"[:WIDTH], ""]
    indent = " " * (NAME_WIDTH + STATUS_WIDTH + 2)
    for c in checks:
        name, status, reason = c.name, c.status, c.reason
        head = f"{name:<{NAME_WIDTH}} {status.upper() if status == 'fail' else status:<{STATUS_WIDTH}} "
        body = textwrap.wrap(reason or "-", WIDTH - len(indent), break_long_words=True,
                             break_on_hyphens=False) or ["-"]
        lines.append(head + body[0])
        lines += [indent + more for more in body[1:]]
    failed = sum(1 for c in checks if c.status == "fail")
    skipped = sum(1 for c in checks if c.status == "skip")
    lines += ["", f"{len(checks) - failed - skipped} passed, {failed} failed, {skipped} skipped"]
    return "\n".join(lines)
