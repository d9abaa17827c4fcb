"""sueca-bot run BOT: connect a bot to referees and play until Ctrl-C.

  export SUECA_TOKEN=greedy.XXXX         # the token 'sueca-arena bots add greedy' printed
  sueca-bot run mybot:Greedy --server 127.0.0.1:50051 --capacity 8
  sueca-bot run ./mybot.py:Greedy --server ref-a:50051,ref-b:50051 --token-file ~/.sueca-token

The token comes from $SUECA_TOKEN or --token-file FILE; --token TOKEN works too, but a command
line is visible to every user of the machine (ps), so it prints a warning. The bot's name is the
token's part before its last '.', unless --name says otherwise. Ctrl-C (or SIGTERM) drains: no
new games, running ones finish, then it exits; a second Ctrl-C exits at once. A referee serving
TLS needs --tls (its certificate checked against grpcio's bundled roots) or --tls-ca FILE
(against that CA; $SUECA_TLS_CA), so the token never travels in clear.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from sueca.sdk import logs
from sueca.sdk.addresses import resolve
from sueca.sdk.cli.common import Bounded, UserError, add_tls_flags, load_checked, settings, tls_from_args
from sueca.sdk.cli.execflags import add_flags, use_flags

TOKEN_FILE_LIMIT = 4096  # bytes: a token is a few dozen; anything longer is the wrong file

TOKEN_WARNING = ("warning: --token puts the token on the command line, where other users of "
                 "this machine can read it (ps); set SUECA_TOKEN or pass --token-file FILE")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("run", help="connect a bot to referees and play until Ctrl-C",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("bot", metavar="BOT",
                   help="an example (random, heuristic, reckless, pimc), module:Class, file.py:Class "
                        "or exec:COMMAND (a program in any language)")
    p.add_argument("--server", default=settings().server,
                   help="referee host:port, a comma list, or a name resolving to several "
                        "(default $SUECA_SERVER)")
    token = p.add_mutually_exclusive_group()
    token.add_argument("--token-file", metavar="FILE",
                       help="read the token (the one 'sueca-arena bots add NAME' printed) from "
                            "this file (default: $SUECA_TOKEN)")
    token.add_argument("--token", metavar="TOKEN",
                       help="the token itself: visible to other users in ps, prefer "
                            "$SUECA_TOKEN or --token-file")
    p.add_argument("--capacity", action=Bounded, kind=int, low=1, default=4,
                   help="games this process plays at once, per referee (default 4)")
    p.add_argument("--name", default=None,
                   help="bot name (default: the token's part before its last '.')")
    p.add_argument("--threads", action=Bounded, kind=int, low=0, default=None,
                   help="threads for a synchronous bot (default min(capacity, 8); 0 runs it in "
                        "the event loop, fastest for bots that take microseconds)")
    p.add_argument("--max-backoff", action=Bounded, kind=float, low=0, above=True, default=30.0,
                   help="longest wait between reconnection attempts, seconds (default 30)")
    p.add_argument("--drain-timeout", action=Bounded, kind=float, low=0, default=60.0,
                   help="on Ctrl-C, how long running games may take to finish (default 60)")
    add_tls_flags(p)
    add_flags(p, timeout=False)
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                   help="the least severe log lines written (default info)")
    p.set_defaults(func=run)


def read_token_file(path: str) -> str:
    """The token in ``path`` (surrounding blanks and the newline stripped); a missing, empty or
    oversized file is a :class:`UserError` quoting the path, never the contents."""
    try:
        with open(path, "rb") as f:
            data = f.read(TOKEN_FILE_LIMIT + 1)
    except OSError as err:
        raise UserError(f"cannot read --token-file {path!r}: {err.strerror}") from None
    if len(data) > TOKEN_FILE_LIMIT:
        raise UserError(f"--token-file {path!r} holds more than {TOKEN_FILE_LIMIT} bytes: "
                        "not a token file")
    try:
        token = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise UserError(f"--token-file {path!r} is not UTF-8 text") from None
    if not token or any(c.isspace() for c in token):
        raise UserError(f"--token-file {path!r} must hold one token on one line"
                        + (" (it is empty)" if not token else ""))
    return token


def token_from_args(args: argparse.Namespace) -> str:
    """--token-file, else --token (with a warning on stderr), else $SUECA_TOKEN; refused
    here unless shaped NAME.SECRET (see :func:`check_token`)."""
    if args.token_file is not None:
        return check_token(read_token_file(args.token_file), f"in {args.token_file!r}")
    if args.token is not None:
        print(TOKEN_WARNING, file=sys.stderr)
        return check_token(str(args.token), "given with --token")
    token = settings().token
    if not token:
        # set but empty: what `export SUECA_TOKEN=$(sueca-arena bots add NAME)` leaves when
        # that bots add failed (a name registered already, after a restart of serve)
        empty = ("SUECA_TOKEN is set but empty (a `bots add` inside $(...) that failed leaves "
                 "it so; a name's token is printed once): " if "SUECA_TOKEN" in os.environ
                 else "")
        raise UserError(f"no token: {empty}set SUECA_TOKEN or pass --token-file FILE "
                        "('sueca-arena bots add NAME' prints one)")
    return check_token(token, "in $SUECA_TOKEN")


def check_token(token: str, where: str) -> str:
    """A token is NAME.SECRET (``sueca-arena bots add NAME`` prints one; the name may hold
    dots, the secret none). Anything else would go to the referee and come back as "wrong token
    for bot 'garbage'", as if the secret were wrong; it is refused at start-up instead. The
    message quotes at most the name, the part before the last '.': never the secret."""
    name, dot, secret = token.rpartition(".")
    if dot and name and secret:
        return token
    said = f"the name {name!r} has no secret after its '.'" if name else (
        "it has no name before its '.'" if dot else "it has no '.'")
    raise UserError(f"bad token {where}: {said}; tokens look like NAME.SECRET "
                    "('sueca-arena bots add NAME' prints one)")


def run(args: argparse.Namespace) -> int:
    logs.setup(level=args.log_level)  # in the format main() chose (--log-format)
    if not args.server:
        raise UserError("no referee address: pass --server HOST:PORT or set SUECA_SERVER")
    token = token_from_args(args)
    issued_to = token.rpartition(".")[0]
    if args.name is not None and args.name != issued_to:  # the referee would say "wrong token"
        raise UserError(f"--name {args.name[:64]!r} does not match the token, which was issued "
                        f"to bot {issued_to[:64]!r} (a token starts with its bot's name): drop "
                        "--name, or use that bot's token")
    tls = tls_from_args(args)
    use_flags(args)
    factory = load_checked(args.bot)
    # deferred: the client imports grpc, ~170 ms CPU measured, which no other command needs
    from sueca.sdk.client import run as run_client
    try:
        resolve(args.server)
    except ValueError as err:
        raise UserError(str(err)) from None
    return run_client(factory, args.server, token=token, capacity=args.capacity, name=args.name,
                      threads=args.threads, max_backoff=args.max_backoff,
                      drain_timeout=args.drain_timeout, tls=tls)
