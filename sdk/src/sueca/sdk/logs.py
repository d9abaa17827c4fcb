"""The one place logging is set up, for every command of ``sueca-bot`` and ``sueca-arena``
(and the Celery worker, whose own set-up is switched off for it).

Two formats, chosen by ``--log-format`` or ``SUECA_LOG_FORMAT`` (the flag wins):

- ``text`` (default): ``2026-11-30 21:00:00,123 INFO sueca.referee: message``, with
  the ids the line knows appended: `` [match_id=m-1 bot='greedy']``;
- ``json``: one JSON object per line, ``ts`` (ISO 8601, UTC), ``level``, ``logger``, ``msg``,
  then the ids the line knows (``match_id``, ``game_id``, ``bot``, ``tournament``, ``seat``,
  ``peer``, and for refusals ``reason`` and ``suppressed``), and ``exc`` for a traceback.

The ids come from ``extra=`` on a log call, else from :func:`log_context`, which binds them to the
current thread or asyncio task (a :mod:`contextvars` variable, copied into tasks created under
it): code that handles one match sets its id once, and every line logged beneath carries it
without the id being passed around.

Every bot is hostile, so nothing a bot sent may forge a line or a field: JSON is written with
``ensure_ascii`` (a newline, a quote or U+2028 in a bot's name is an escape, never a line break
or a new key), only the names in :data:`FIELDS` become keys, and every value is capped
(:data:`FIELD_CHARS`; the message at :data:`MESSAGE_CHARS`). In text, a field that is not a
plain word is written with :func:`shown` (``repr``-escaped and capped), as messages quote
bot-sent text. Standard library only: the SDK depends on grpcio and protobuf alone.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import json
import logging
import re
import sys
import time
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any, TextIO

from sueca.sdk.settings import current

__all__ = ["FORMATS", "FIELDS", "SHOWN_CHARS", "FIELD_CHARS", "MESSAGE_CHARS", "shown",
           "printable", "capped", "log_context", "bind", "context", "JsonFormatter",
           "TextFormatter", "formatter", "setup", "setup_from_args", "current_format", "add_flag"]

FORMATS = ("text", "json")
# the only keys a record may add to a JSON line, in this order; anything else in extra= is not
# written (a key cannot come from data, so a bot can never add or overwrite one)
FIELDS = ("match_id", "game_id", "tournament", "bot", "seat", "peer", "reason", "suppressed")
SHOWN_CHARS = 64       # untrusted text is cut to this many characters in logs and status messages
FIELD_CHARS = 200      # a field value in a log line (a match id may have 200 characters)
MESSAGE_CHARS = 8192   # a message (its bot-sent parts are already cut by shown())
EXC_CHARS = 16384      # a traceback
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_PLAIN = re.compile(r"[\w.:@/\[\]+-]{1,128}", re.ASCII)  # written bare in text; else shown()

_context: contextvars.ContextVar[Mapping[str, object]] = contextvars.ContextVar(
    "sueca_log_context", default=MappingProxyType({}))


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``value`` fit for a log line or a status message: ``repr``-escaped (a newline cannot forge
    a log line) and cut to ``limit`` characters, saying how long it really was."""
    if isinstance(value, bytes | str) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value)} long)"
    return repr(value)


def printable(text: str, limit: int) -> str:
    """``text`` as one line of printable characters (a control character or a terminal escape
    is written as its Python escape, so it cannot forge a line or drive a terminal), cut to
    ``limit`` characters with "..." when longer."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= limit else text[:limit] + "..."


def capped(value: object, limit: int = FIELD_CHARS) -> str:
    """``value`` as text of at most ``limit`` characters (plus a note of its real length);
    not escaped: the JSON encoder does that."""
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} long)"


@contextlib.contextmanager
def log_context(**fields: object) -> Iterator[None]:
    """Lines logged inside carry ``fields`` (on top of those already bound). Bound to this
    thread or asyncio task, and to the tasks it creates meanwhile; None values unbind."""
    token = _context.set(_merged(_context.get(), fields))
    try:
        yield
    finally:
        _context.reset(token)


def bind(**fields: object) -> None:
    """:func:`log_context` for the rest of the current task or thread (a task's context is its
    own copy, so binding inside a task handling one session or match ends with the task)."""
    _context.set(_merged(_context.get(), fields))


def _merged(base: Mapping[str, object], fields: Mapping[str, object]) -> Mapping[str, object]:
    out = dict(base)
    for key, value in fields.items():
        if key not in FIELDS:
            raise ValueError(f"unknown log field {key!r}: one of {', '.join(FIELDS)}")
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def context(record: logging.LogRecord) -> dict[str, object]:
    """The fields of ``record``: those bound by :func:`log_context`, overridden by ``extra=``."""
    bound = _context.get()
    out: dict[str, object] = {}
    for key in FIELDS:
        value = getattr(record, key, None)
        if value is None:
            value = bound.get(key)
        if value is not None:
            out[key] = value if isinstance(value, int | float) and not isinstance(value, bool) \
                else capped(value)
    return out


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line, ASCII only (see the module's docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": capped(record.name),
            "msg": capped(_message(record), MESSAGE_CHARS),
        }
        line.update(context(record))
        if record.exc_info:
            line["exc"] = capped(self.formatException(record.exc_info), EXC_CHARS)
        elif record.stack_info:
            line["exc"] = capped(self.formatStack(record.stack_info), EXC_CHARS)
        return json.dumps(line, ensure_ascii=True, default=str)


class TextFormatter(logging.Formatter):
    """Today's text line, with the record's fields appended as `` [key=value ...]``."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        text = super().formatMessage(record)
        fields = context(record)
        if not fields:
            return text
        shown_fields = " ".join(f"{k}={v if _PLAIN.fullmatch(str(v)) else shown(v)}"
                                for k, v in fields.items())
        return f"{text} [{shown_fields}]"


def _message(record: logging.LogRecord) -> str:
    try:
        return record.getMessage()
    except Exception as err:  # a bad format string must not lose the line, nor crash the caller
        return f"{record.msg!r} % {record.args!r} ({type(err).__name__})"


def formatter(fmt: str) -> logging.Formatter:
    """The formatter of ``fmt`` (one of :data:`FORMATS`)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown log format {fmt!r}: text or json")
    return JsonFormatter() if fmt == "json" else TextFormatter()


class _Stderr(logging.StreamHandler[TextIO]):
    """A handler writing to whatever ``sys.stderr`` is when a line is logged (as logging's own
    last-resort handler does): a test or a daemon that swaps stderr still gets the lines."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        pass


_handler: _Stderr | None = None
_format: str | None = None


def setup(fmt: str | None = None, level: int | str | None = None) -> str:
    """Log to stderr in ``fmt`` (None: the one chosen before, else ``SUECA_LOG_FORMAT``), at
    ``level`` when given (else the root logger's level is kept). Idempotent: one handler of ours
    on the root logger, replaced, never added twice. Returns the format in use."""
    global _handler, _format
    fmt = fmt or current_format()
    handler = _Stderr()
    handler.setFormatter(formatter(fmt))
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
    root.addHandler(handler)
    _handler, _format = handler, fmt
    logging.captureWarnings(True)  # a Python warning is a log line too (JSON: not a raw one)
    if level is not None:
        root.setLevel(level.upper() if isinstance(level, str) else level)
    return fmt


def current_format() -> str:
    """The format lines are written in: the one :func:`setup` chose, else SUECA_LOG_FORMAT."""
    if _format is not None:
        return _format
    return current().log_format


def setup_from_args(args: Any, level: int | str | None = None) -> str:
    """:func:`setup` with the format of ``--log-format`` when given, else ``SUECA_LOG_FORMAT``."""
    fmt = getattr(args, "log_format", None)
    if fmt is None:
        fmt = current().log_format
    return setup(fmt, level)


def add_flag(parser: Any) -> None:
    """``--log-format {text,json}`` on ``parser`` and on every sub-command beneath it. Absent
    from the namespace unless given (``SUPPRESS``), so a sub-command never overrides what was
    given before it, and ``SUECA_LOG_FORMAT`` applies otherwise."""
    parser.add_argument("--log-format", choices=FORMATS, default=argparse.SUPPRESS,
                        help="log lines as text or one JSON object each (default "
                             "$SUECA_LOG_FORMAT, else text)")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases share a parser
                add_flag(sub)
