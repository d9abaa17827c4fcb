"""How a ``SUECA_*`` environment variable is declared, parsed, checked and read.

Each layer declares the variables it reads in its own settings module: the SDK what a bot
author sets (:mod:`sueca.sdk.settings`), the referee its own (``sueca.referee.settings``), the
league the rest (``sueca.arena.settings``, which also collects every layer's variables for the
documentation). This module is the machinery they share, in the lowest layer that reads the
environment; it imports nothing but the standard library.

A layer's settings class extends the one of the layer below (:class:`BaseSettings` at the
bottom), so one object holds everything a process reads. :meth:`BaseSettings.from_env` reads
and checks a layer's variables at once, so a command fails at start-up with one line that
quotes the bad value (``SUECA_MATCH_TIMEOUT='soon' is not usable: not a number of seconds above
0``) instead of deep inside a match. Commands that learn a setting from their own flags
(``sueca-arena worker --referee``) pin a changed copy with :func:`use`, and every layer's
``current()`` returns it: nothing writes ``os.environ`` to talk to itself.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, Self, TypeVar

__all__ = ["Variable", "BaseSettings", "SettingsError", "current", "use", "replace",
           "check_declared", "checked", "optional", "digits", "text", "port", "count", "whole",
           "seconds", "positive"]


T = TypeVar("T")


class SettingsError(ValueError):
    """A ``SUECA_*`` variable with a value that cannot mean anything; the message quotes it."""


# -- parsing: each turns the raw text into a value or raises a ValueError saying what is wanted -

def checked(convert: Callable[[str], T], ok: Callable[[T], bool], says: str) -> Callable[[str], T]:
    """A parser: ``convert(raw)`` if that works and the value is ``ok``, else a ValueError that
    ``says`` what is wanted (:meth:`BaseSettings.from_env` puts the variable and its value
    first)."""
    def parse(raw: str) -> T:
        try:
            value = convert(raw)
        except ValueError:
            raise ValueError(says) from None
        if not ok(value):
            raise ValueError(says)
        return value
    return parse


def optional(parse: Callable[[str], T]) -> Callable[[str], T | None]:
    """``parse``, except that blank (unset, with no default) is None."""
    return lambda raw: parse(raw) if raw.strip() else None


def digits(raw: str) -> int:
    """Digits only: int() would also take "+1", "1_000" and "-0"."""
    if not raw.strip().isdigit():
        raise ValueError(raw)
    return int(raw)


def text(raw: str) -> str | None:
    """Free text, stripped; blank is None."""
    return raw.strip() or None


port = optional(checked(digits, lambda n: 1 <= n <= 65535,
                        "a TCP port is a whole number from 1 to 65535"))
count = checked(digits, lambda n: n >= 1, "a whole number of at least 1")
whole = checked(digits, lambda n: True, "a whole number, 0 or more")
seconds = checked(float, lambda x: math.isfinite(x) and x > 0, "not a number of seconds above 0")
positive = checked(float, lambda x: math.isfinite(x) and x > 0, "not a number above 0")


# -- declaring ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Variable:
    """One ``SUECA_*`` variable: its default (as it would be written), who reads it, and why.

    ``verbatim``: the value is kept exactly as set (None when unset, no default, not parsed)
    and checked where it is used; for a secret whose "set but blank" must not read as "unset"."""

    name: str
    default: str
    used_by: str
    meaning: str
    parse: Callable[[str], Any]
    verbatim: bool = False

    @property
    def field(self) -> str:
        """The settings attribute that holds it."""
        return self.name.removeprefix("SUECA_").lower()


@dataclass(frozen=True)
class BaseSettings:
    """The root of every layer's settings class; each subclass declares its fields in
    ``variables`` (its own after those of the layer below), one field per variable, in order."""

    variables: ClassVar[tuple[Variable, ...]] = ()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        """Every variable of this class read and checked; the first bad one is a
        :class:`SettingsError`. A variable set to an empty string means its default (as unset
        does), except a ``verbatim`` one."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for var in cls.variables:
            raw = env.get(var.name)
            if var.verbatim:
                values[var.field] = raw
                continue
            value = var.default if raw is None or not raw.strip() else raw
            try:
                values[var.field] = var.parse(value)
            except ValueError as err:
                raise SettingsError(f"{var.name}={_quote(raw or '')} is not usable: {err}") \
                    from None
        return cls(**values)


def check_declared(kind: type[BaseSettings]) -> None:
    """Raise TypeError unless ``kind``'s variables and fields match one to one, in order: a
    settings class whose declarations drifted apart is a programming error, found at import."""
    declared = [v.field for v in kind.variables]
    held = [f.name for f in fields(kind)]
    if declared != held or len({v.name for v in kind.variables}) != len(declared):
        raise TypeError(f"{kind.__qualname__}: variables {declared} do not match fields {held}")


def _quote(raw: str) -> str:
    """The bad value as typed, escaped and capped: it may be long or hold a newline."""
    return repr(raw if len(raw) <= 80 else raw[:80] + "...")


# -- reading -----------------------------------------------------------------------------------

S = TypeVar("S", bound=BaseSettings)

_pinned: BaseSettings | None = None
_cache: dict[type[BaseSettings], tuple[tuple[str | None, ...], BaseSettings]] = {}


def current(kind: type[S]) -> S:
    """The settings of this process as a ``kind``: what :func:`use` pinned, else the
    environment now. Each layer's ``current()`` is this with its own class.

    Cheap enough to call per match (local play asks for the seed key): the parsed settings are
    kept until one of the variables changes. A pinned copy of a lower layer's class (it lacks
    ``kind``'s own fields) has those read from the environment, the pinned ones kept."""
    pinned = _pinned
    if isinstance(pinned, kind):
        return pinned
    environ = os.environ
    raw = tuple(environ.get(v.name) for v in kind.variables)
    hit = _cache.get(kind)
    if hit is None or hit[0] != raw:
        hit = (raw, kind.from_env(environ))
        _cache[kind] = hit
    found = hit[1]
    assert isinstance(found, kind)
    if pinned is not None:
        found = replace(found, **{f.name: getattr(pinned, f.name) for f in fields(pinned)})
    return found


def use(settings: BaseSettings | None) -> None:
    """Pin ``settings`` for this process and its forked children (a worker's pool), e.g. a
    copy with a command's flags applied (``replace(current(), referees=...)``); every layer's
    ``current()`` returns it. ``None`` goes back to reading the environment."""
    global _pinned
    _pinned = settings
