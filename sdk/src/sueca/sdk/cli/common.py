"""What the ``sueca-bot`` commands (and ``sueca-arena``, which builds on them) share: the user
error, checked number options, the TLS flags, loading a bot named on the command line, and
help texts without the markup of the docstrings they come from.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from sueca.sdk.settings import Settings, SettingsError, current

__all__ = ["INT_LIMIT", "Bounded", "UserError", "add_tls_flags", "load_checked", "plain",
           "plain_help", "tls_from_args"]


class UserError(Exception):
    """A mistake on the command line: printed as one line ``error: <message>``, exit code 2.

    ``sueca-arena`` raises and catches this same class.
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


def settings() -> Settings:
    """The settings (:mod:`sueca.sdk.settings`); a bad one is a one-line :class:`UserError`."""
    try:
        return current()
    except SettingsError as err:
        raise UserError(str(err)) from None


def add_tls_flags(p: argparse.ArgumentParser) -> None:
    """``--tls`` and ``--tls-ca`` (and ``--tls-server-name``) for a command that connects to a
    referee; :func:`tls_from_args` turns them into :class:`sueca.sdk.channels.ClientTLS`."""
    p.add_argument("--tls", action="store_true", default=None,
                   help="connect with TLS, checking the referee's certificate against the "
                        "root certificates bundled with grpcio (default $SUECA_TLS)")
    p.add_argument("--tls-ca", default=settings().tls_ca, metavar="FILE",
                   help="connect with TLS, checking the referee's certificate against this PEM "
                        "CA file (default $SUECA_TLS_CA)")
    p.add_argument("--tls-server-name", default=settings().tls_server_name,
                   metavar="NAME",
                   help="the name the referee's certificate must carry, when it is not the host "
                        "dialled (default $SUECA_TLS_SERVER_NAME)")


def tls_from_args(args: argparse.Namespace) -> Any:
    """The :class:`sueca.sdk.channels.ClientTLS` the flags of :func:`add_tls_flags` ask for; a bad
    CA file is a :class:`UserError` quoting its path."""
    # deferred: sueca.sdk.channels imports grpc, ~170 ms CPU measured, needed by `run` alone
    from sueca.sdk.channels import CredentialsError, client_tls, tls_requested
    try:
        return client_tls(bool(args.tls) or tls_requested(), args.tls_ca, args.tls_server_name)
    except CredentialsError as err:
        raise UserError(str(err)) from None


def load_checked(spec: str) -> Callable[[], Any]:
    """The bot factory named by ``spec`` (:func:`sueca.sdk.bots.load_bot`: an example name,
    ``module:Class`` or ``file.py:Class``), with one bot made now to check it is a Bot
    (:func:`sueca.sdk.bots.check_bot`); a bad spec is a :class:`UserError` quoting it."""
    # deferred: the loader brings exec: bots (asyncio, subprocess), ~50 ms CPU measured
    from sueca.sdk.bots import BotLoadError, check_bot, load_bot
    try:
        factory = load_bot(spec)
        check_bot(spec, factory)
    except BotLoadError as err:
        raise UserError(str(err)) from None
    return factory


# reST that docstrings carry into help texts: :role:`text <target>`, :role:`~a.b.Name`,
# :role:`name`, ``literal``, **strong**, and "::" ending a paragraph (a literal block follows)
_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`(?:([^`<]*?)\s*<[^`>]*>|~?([^`]*))`")
_LITERAL = re.compile(r"``(.+?)``", re.S)
_STRONG = re.compile(r"\*\*(.+?)\*\*", re.S)
_LITERAL_BLOCK = re.compile(r"(\S)::$", re.M)


def _role(m: re.Match[str]) -> str:
    if m.group(1) is not None:  # :role:`text <target>`: the text
        return m.group(1)
    name = m.group(2)
    return name.rsplit(".", 1)[-1] if m.group(0).split("`", 1)[1].startswith("~") else name


def plain(text: str) -> str:
    """``text`` without reST markup, as a terminal shows it: ``:class:`~a.b.Match``` is
    ``Match``, ````--data DIR```` is ``--data DIR``, ``**x**`` is ``x``, a paragraph's "::" is
    ":". Single backquotes stay: in plain text they quote a command."""
    text = _ROLE.sub(_role, text)
    text = _LITERAL.sub(r"\1", text)
    text = _STRONG.sub(r"\1", text)
    return _LITERAL_BLOCK.sub(r"\1:", text)


def plain_help(parser: argparse.ArgumentParser) -> None:
    """Strip markup (:func:`plain`) from the description, epilog and option helps of
    ``parser`` and of every sub-command under it: help texts are often docstrings, written for
    the API reference, and ``--help`` shows them to people in a terminal."""
    seen: set[int] = set()

    def walk(p: argparse.ArgumentParser) -> None:
        if id(p) in seen:
            return
        seen.add(id(p))
        if p.description:
            p.description = plain(p.description)
        if p.epilog:
            p.epilog = plain(p.epilog)
        for action in p._actions:
            if isinstance(action.help, str):
                action.help = plain(action.help)
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    if isinstance(choice.help, str):
                        choice.help = plain(choice.help)
                for sub in action.choices.values():
                    walk(sub)

    walk(parser)
