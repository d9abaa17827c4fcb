"""``sueca-bot``: connect a bot to referees.

    sueca-bot run random --server 127.0.0.1:50051 --token alice.XXXX --capacity 8
    sueca-bot run mybots.smart:SmartBot --server ref-a:50051,ref-b:50051
    sueca-bot run ./smart.py:SmartBot              # a file works too

The token and server may come from ``SUECA_TOKEN`` and ``SUECA_SERVER``; the bot's name is the
part of the token before the first '.', unless ``--name`` says otherwise. Ctrl-C (or SIGTERM)
drains: no new games, running ones finish, then it exits; a second Ctrl-C exits at once.
A referee serving TLS needs ``--tls`` (its certificate checked against grpcio's bundled roots) or
``--tls-ca FILE`` (against that CA; ``SUECA_TLS_CA``), so the token never travels in clear.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any


class UserError(Exception):
    """A mistake on the command line: printed as one line ``error: <message>``, exit code 2.

    ``sueca-arena``'s own user error (:class:`sueca.arena.cli.UserError`) is a subclass.
    """


INT_LIMIT = 2**31 - 1  # no whole-number option means more; wire fields are 32-bit


class Bounded(argparse.Action):
    """An option whose value must be a number within bounds: ``--capacity`` at least 1, a
    timeout above 0. ``add_argument("--x", action=Bounded, kind=int, low=1)``; ``above=True``
    makes ``low`` exclusive, ``high`` is an inclusive upper bound, NaN and infinities are refused.

    Checked while the command line is parsed, before anything starts or is written: a bad value
    raises :class:`UserError` quoting the value as typed (argparse's own error would print the
    whole usage first, and would not catch ``-1`` where only positive numbers make sense).
    """

    def __init__(self, option_strings: Sequence[str], dest: str, kind: type = int,
                 low: float | None = None, above: bool = False, high: float | None = None,
                 **kwargs: Any) -> None:
        kwargs.setdefault("metavar", "N" if kind is int else "X")
        super().__init__(option_strings, dest, **kwargs)
        self.kind, self.low, self.above, self.high = kind, low, above, high

    def rule(self) -> str:
        what = "a whole number" if self.kind is int else "a number"
        parts = []
        if self.low is not None:
            parts.append(f"{'above' if self.above else 'at least'} {self.low:g}")
        if self.high is not None:
            parts.append(f"at most {self.high:g}")
        return f"{what} {' and '.join(parts)}".strip()

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        try:
            value = self.kind(values)
            ok = math.isfinite(value) if self.kind is float else True
        except (TypeError, ValueError):
            ok = False
        if ok and self.kind is int and abs(value) > INT_LIMIT:  # protobuf and C want it smaller
            if value > 0 or self.low is None:  # else the lower bound below says it better
                raise UserError(f"bad {option_string or self.dest} {values!r}: out of range "
                                f"(-{INT_LIMIT}..{INT_LIMIT})")
        if ok and self.low is not None:
            ok = value > self.low if self.above else value >= self.low
        if ok and self.high is not None:
            ok = value <= self.high
        if not ok:
            raise UserError(f"bad {option_string or self.dest} {values!r}: must be {self.rule()}")
        setattr(namespace, self.dest, value)


def check_bot(spec: str, factory: Callable[[], Any]) -> None:
    """Make one bot with ``factory`` now and check it is an :class:`sdk.Bot`.

    Without this, a spec naming any callable (``json:dumps``, a class that is not a bot, a
    class whose ``__init__`` needs arguments) would connect fine and fail only when the first
    game begins, far from the command that caused it.
    """
    from sueca.sdk.bot import Bot
    name = getattr(factory, "__qualname__", None) or repr(factory)
    try:
        made = factory()
    except Exception as err:
        raise UserError(f"bot {spec!r}: {name}() cannot make a bot: "
                        f"{type(err).__name__}: {err}") from None
    if not isinstance(made, Bot):
        raise UserError(f"bot {spec!r}: {name}() made a {type(made).__name__}, not a Bot: "
                        f"give a subclass of sdk.Bot, or a function returning an instance of "
                        f"one") from None


def load(spec: str) -> Callable[[], Any]:
    """An example name, ``module:Class`` (the current directory is importable), or
    ``path/to/file.py:Class``."""
    path, sep, attr = spec.rpartition(":")
    if sep and (path.endswith(".py") or os.sep in path):
        if not os.path.isfile(path):
            raise UserError(f"bot {spec!r}: no file {path!r}")
        name = "sueca_bot_" + os.path.splitext(os.path.basename(path))[0]
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise UserError(f"bot {spec!r}: cannot load {path!r}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as err:
            raise UserError(f"bot {spec!r}: {path!r} failed to import: "
                             f"{type(err).__name__}: {err}") from None
        found = getattr(module, attr, None)
        if found is None or not callable(found):
            raise UserError(f"bot {spec!r}: {path!r} has no class or factory {attr!r}")
        return found  # type: ignore[no-any-return]
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: the bot author's modules import
    from sueca.sdk.bots import BotLoadError, load_bot
    try:
        return load_bot(spec)
    except BotLoadError as err:
        raise UserError(str(err)) from None


def add_tls_flags(p: argparse.ArgumentParser) -> None:
    """``--tls`` and ``--tls-ca`` (and ``--tls-server-name``) for a command that connects to a
    referee; :func:`tls_from_args` turns them into :class:`sueca.sdk.channels.ClientTLS`."""
    p.add_argument("--tls", action="store_true", default=None,
                   help="connect with TLS, checking the referee's certificate against the "
                        "root certificates bundled with grpcio (default $SUECA_TLS)")
    p.add_argument("--tls-ca", default=_env().tls_ca, metavar="FILE",
                   help="connect with TLS, checking the referee's certificate against this PEM "
                        "CA file (default $SUECA_TLS_CA)")
    p.add_argument("--tls-server-name", default=_env().tls_server_name,
                   metavar="NAME",
                   help="the name the referee's certificate must carry, when it is not the host "
                        "dialled (default $SUECA_TLS_SERVER_NAME)")


def tls_from_args(args: argparse.Namespace) -> Any:
    """The :class:`sueca.sdk.channels.ClientTLS` the flags of :func:`add_tls_flags` ask for; a bad
    CA file is a :class:`UserError` quoting its path."""
    from sueca.sdk.channels import CredentialsError, client_tls, tls_requested
    try:
        return client_tls(bool(args.tls) or tls_requested(), args.tls_ca, args.tls_server_name)
    except CredentialsError as err:
        raise UserError(str(err)) from None


def _env() -> Any:
    """The settings (:mod:`sueca.sdk.settings`); a bad one is a one-line :class:`UserError`."""
    from sueca.sdk.settings import SettingsError, current
    try:
        return current()
    except SettingsError as err:
        raise UserError(str(err)) from None


def _version() -> str:
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
    p = sub.add_parser("run", help="connect a bot to referees and play until Ctrl-C")
    p.add_argument("bot", metavar="BOT",
                   help="an example (random, heuristic, reckless), module:Class or file.py:Class")
    p.add_argument("--server", default=_env().server,
                   help="referee host:port, a comma list, or a name resolving to several "
                        "(default $SUECA_SERVER)")
    p.add_argument("--token", default=_env().token,
                   help="the token `sueca-arena bots add NAME` printed (default $SUECA_TOKEN)")
    p.add_argument("--capacity", action=Bounded, kind=int, low=1, default=4,
                   help="games this process plays at once, per referee (default 4)")
    p.add_argument("--name", default=None,
                   help="bot name (default: the token's part before the first '.')")
    p.add_argument("--threads", action=Bounded, kind=int, low=0, default=None,
                   help="threads for a synchronous bot (default min(capacity, 8); 0 runs it in "
                        "the event loop, fastest for bots that take microseconds)")
    p.add_argument("--max-backoff", action=Bounded, kind=float, low=0, above=True, default=30.0,
                   help="longest wait between reconnection attempts, seconds (default 30)")
    p.add_argument("--drain-timeout", action=Bounded, kind=float, low=0, default=60.0,
                   help="on Ctrl-C, how long running games may take to finish (default 60)")
    add_tls_flags(p)
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        logging.basicConfig(level=args.log_level.upper(),
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        if not args.server:
            raise UserError("no referee address: pass --server HOST:PORT or set SUECA_SERVER")
        if not args.token:
            raise UserError("no token: pass --token or set SUECA_TOKEN (`sueca-arena bots add "
                            "NAME` prints one)")
        tls = tls_from_args(args)
        factory = load(args.bot)
        check_bot(args.bot, factory)
        from sueca.sdk.client import resolve, run
        try:
            resolve(args.server)
        except ValueError as err:
            raise UserError(str(err)) from None
        return run(factory, args.server, args.token, args.capacity, name=args.name,
                   threads=args.threads, max_backoff=args.max_backoff,
                   drain_timeout=args.drain_timeout, tls=tls)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
