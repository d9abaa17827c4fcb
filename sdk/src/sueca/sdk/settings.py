"""Every ``SUECA_*`` environment variable, read in this one module.

Each variable is declared once in :data:`VARIABLES` with its default and meaning (the README's
settings table is checked against this list by a test). :meth:`Settings.from_env` reads and
checks them all at once, so a command fails at start-up with one line that quotes the bad value
(``SUECA_MATCH_TIMEOUT='soon' is not usable: not a number of seconds above 0``) instead of deep
inside a match. Commands that learn a setting from their own flags (``sueca-arena worker --referee``)
pass a changed copy on with :func:`use`: nothing writes ``os.environ`` to talk to itself.

It lives in the SDK, the lowest layer that reads the environment, so the referee and the league
read the same object; it imports nothing but the standard library.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

__all__ = ["Variable", "VARIABLES", "Settings", "SettingsError", "current", "use", "replace"]


T = TypeVar("T")


class SettingsError(ValueError):
    """A ``SUECA_*`` variable with a value that cannot mean anything; the message quotes it."""


def _text(raw: str) -> str | None:
    return raw.strip() or None


def _flag(raw: str) -> bool:
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("", "0", "false", "no", "off"):
        return False
    raise ValueError("1, true, yes or on for TLS; 0, false, no, off or empty for plaintext")


def _checked(convert: Callable[[str], T], ok: Callable[[T], bool], says: str) -> Callable[[str], T]:
    """A parser: ``convert(raw)`` if that works and the value is ``ok``, else a ValueError that
    ``says`` what is wanted (:meth:`Settings.from_env` puts the variable and its value first)."""
    def parse(raw: str) -> T:
        try:
            value = convert(raw)
        except ValueError:
            raise ValueError(says) from None
        if not ok(value):
            raise ValueError(says)
        return value
    return parse


def _optional(parse: Callable[[str], T]) -> Callable[[str], T | None]:
    """``parse``, except that blank (unset, with no default) is None."""
    return lambda raw: parse(raw) if raw.strip() else None


def _digits(raw: str) -> int:
    """Digits only: int() would also take "+1", "1_000" and "-0"."""
    if not raw.strip().isdigit():
        raise ValueError(raw)
    return int(raw)


_port = _optional(_checked(_digits, lambda n: 1 <= n <= 65535,
                           "a TCP port is a whole number from 1 to 65535"))
_count = _checked(_digits, lambda n: n >= 1, "a whole number of at least 1")
_whole = _checked(_digits, lambda n: True, "a whole number, 0 or more")
_days = _checked(_digits, lambda n: True, "a whole number of days, at least 0 (0 keeps everything)")
_seconds = _checked(float, lambda x: math.isfinite(x) and x > 0, "not a number of seconds above 0")
_positive = _checked(float, lambda x: math.isfinite(x) and x > 0, "not a number above 0")
_limit = _optional(_checked(float, lambda x: math.isfinite(x) and x >= 0,
                            "a number at least 0 (0 disables the limit)"))
_runner = _checked(str.strip, lambda v: v in ("referee", "local"), "referee or local")
_log_format = _checked(lambda raw: raw.strip().lower(), lambda v: v in ("text", "json"),
                       "text or json")


def _addresses(raw: str) -> tuple[str, ...]:
    return tuple(a.strip() for a in raw.split(",") if a.strip())


def _seed_key(raw: str) -> str | None:
    key = raw.strip()
    if key and len(key) < 16:
        raise ValueError(f"a seed key needs at least 16 characters, this one has {len(key)}")
    return key or None


def _prefix(raw: str) -> str:
    value = raw.strip() or "sueca:"
    if any(c.isspace() for c in value) or len(value) > 64:
        raise ValueError("a Redis key prefix is one word of at most 64 characters")
    return value


@dataclass(frozen=True)
class Variable:
    """One ``SUECA_*`` variable: its default (as it would be written), who reads it, and why."""

    name: str
    default: str
    used_by: str
    meaning: str
    parse: Callable[[str], Any]

    @property
    def field(self) -> str:
        """The :class:`Settings` attribute that holds it."""
        return self.name.removeprefix("SUECA_").lower()


VARIABLES: tuple[Variable, ...] = (
    Variable("SUECA_REDIS_URL", "", "referee, worker, scheduler, league commands",
             "the league's Redis (bots, matches, results, Celery's broker); `--redis` wins",
             _text),
    Variable("SUECA_KEY_PREFIX", "sueca:", "everything that uses Redis",
             "prefix of every Redis key, so several leagues can share one Redis", _prefix),
    Variable("SUECA_TOKEN", "", "sueca-bot", "the bot's token (`NAME.SECRET`)", _text),
    Variable("SUECA_SERVER", "", "sueca-bot",
             "referee address(es): host:port, a comma list, or a name resolving to several",
             _text),
    Variable("SUECA_TLS", "", "sueca-bot, workers, scheduler, CLI",
             "dial referees over TLS checked against grpcio's bundled roots", _flag),
    Variable("SUECA_TLS_CA", "", "sueca-bot, workers, scheduler, CLI",
             "dial referees over TLS checked against this CA file", _text),
    Variable("SUECA_TLS_SERVER_NAME", "", "sueca-bot, workers, scheduler, CLI",
             "the name the referee's certificate is checked against, when it differs from "
             "the host dialled", _text),
    Variable("SUECA_TLS_CERT", "", "referee", "PEM certificate (chain) to serve TLS with",
             _text),
    Variable("SUECA_TLS_KEY", "", "referee", "PEM private key of SUECA_TLS_CERT", _text),
    Variable("SUECA_OPERATOR_TOKEN", "", "referee, workers, scheduler, CLI",
             "bearer token of MatchService (RunMatch, Watch, ListBots); unset: open", _text),
    Variable("SUECA_OPERATOR_PORT", "", "referee",
             "serve MatchService on this port only (with `--operator-host`, default loopback), "
             "bots and health on `--port`; unset: all on `--port`", _port),
    Variable("SUECA_REFEREES", "", "worker, scheduler",
             "comma list of referee replicas besides those heartbeating into Redis",
             _addresses),
    Variable("SUECA_RUNNER", "referee", "worker",
             "referee, or local: play bots in-process (trusted code only)", _runner),
    Variable("SUECA_LOCAL_BOTS", "", "worker with SUECA_RUNNER=local",
             "comma list of NAME=SPEC bots the local runner may load", _text),
    Variable("SUECA_METRICS_PORT", "", "worker",
             "serve the worker's Prometheus metrics on this port", _port),
    Variable("SUECA_METRICS_MAX_BOTS", "100", "worker",
             "bots with their own `bot` label in the worker's `sueca_bot_*` series (the first "
             "seen); the rest are `bot=\"_other\"`", _whole),
    Variable("SUECA_MATCH_TIMEOUT", "300", "worker", "seconds one match may take", _seconds),
    Variable("SUECA_PLACE_WAIT", "20", "worker",
             "seconds a match waits for free seats before it is retried later", _seconds),
    Variable("SUECA_MATCH_ATTEMPTS", "5", "worker",
             "attempts at a match before it is recorded as failed", _count),
    Variable("SUECA_RETRY_BASE", "0.5", "worker",
             "first retry delay in seconds (doubling, with jitter)", _seconds),
    Variable("SUECA_VISIBILITY_TIMEOUT", "600", "worker",
             "seconds before Redis hands an unacknowledged match to another worker", _seconds),
    Variable("SUECA_ELO_K", "24", "worker, ratings commands",
             "Elo K of a new league (then kept in Redis)", _positive),
    Variable("SUECA_RETAIN_DAYS", "0", "retention run",
             "archive (or drop) replays, match records and results-log entries of matches "
             "recorded more than this many days ago; 0 keeps everything", _days),
    Variable("SUECA_ARCHIVE_DIR", "", "retention run",
             "directory of retention's gzip JSON-lines archive files; `--archive` wins", _text),
    Variable("SUECA_SEED_KEY", "", "referee, self-play",
             "secret key of the bots' seeds (HMAC): a bot cannot learn the decks from its seed; "
             "unset, a referee picks a random one", _seed_key),
    Variable("SUECA_LOG_FORMAT", "text", "every command",
             "log lines as `text` or `json` (one object a line, with match, game and bot ids); "
             "`--log-format` wins", _log_format),
    *(Variable(f"SUECA_{name.upper()}", "", "referee", f"per-bot limit `--{name.replace('_', '-')}` "
               "(unset: its built-in default; 0 disables it)", _limit)
      for name in ("out_bytes", "out_items", "errors_per_message", "errors_per_second",
                   "messages_per_second", "actions_per_second", "hello_seconds",
                   "streams_per_connection", "connections_per_address", "sessions_per_bot",
                   "refusals_per_second", "hellos_per_second")),
)


@dataclass(frozen=True)
class Settings:
    """The parsed value of every :data:`VARIABLES` entry (``None``: not set, no default)."""

    redis_url: str | None
    key_prefix: str
    token: str | None
    server: str | None
    tls: bool
    tls_ca: str | None
    tls_server_name: str | None
    tls_cert: str | None
    tls_key: str | None
    operator_token: str | None
    operator_port: int | None
    referees: tuple[str, ...]
    runner: str
    local_bots: str | None
    metrics_port: int | None
    metrics_max_bots: int
    match_timeout: float
    place_wait: float
    match_attempts: int
    retry_base: float
    visibility_timeout: float
    elo_k: float
    retain_days: int
    archive_dir: str | None
    seed_key: str | None
    log_format: str
    out_bytes: float | None
    out_items: float | None
    errors_per_message: float | None
    errors_per_second: float | None
    messages_per_second: float | None
    actions_per_second: float | None
    hello_seconds: float | None
    streams_per_connection: float | None
    connections_per_address: float | None
    sessions_per_bot: float | None
    refusals_per_second: float | None
    hellos_per_second: float | None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Every variable read and checked; the first bad one is a :class:`SettingsError`.

        A variable set to an empty string means its default (as unset does), except the
        operator token, where "set but blank" is refused later rather than read as "open"."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for var in VARIABLES:
            raw = env.get(var.name)
            if var.name == "SUECA_OPERATOR_TOKEN":
                values[var.field] = raw  # checked (blank, spaces) where it is used
                continue
            text = var.default if raw is None or not raw.strip() else raw
            try:
                values[var.field] = var.parse(text)
            except ValueError as err:
                raise SettingsError(f"{var.name}={_quote(raw or '')} is not usable: {err}") \
                    from None
        return cls(**values)


def _quote(raw: str) -> str:
    """The bad value as typed, escaped and capped: it may be long or hold a newline."""
    return repr(raw if len(raw) <= 80 else raw[:80] + "...")


_pinned: Settings | None = None


_NAMES = tuple(v.name for v in VARIABLES)
_cache: tuple[tuple[str | None, ...], Settings] | None = None


def current() -> Settings:
    """The settings of this process: what :func:`use` pinned, else the environment now.

    Cheap enough to call per match (local play asks for the seed key): the parsed settings are
    kept until one of the variables changes."""
    global _cache
    if _pinned is not None:
        return _pinned
    environ = os.environ
    raw = tuple(environ.get(name) for name in _NAMES)
    if _cache is None or _cache[0] != raw:
        _cache = (raw, Settings.from_env(environ))
    return _cache[1]


def use(settings: Settings | None) -> None:
    """Pin ``settings`` for this process and its forked children (a worker's pool), e.g. a
    copy with a command's flags applied (``replace(current(), referees=...)``); ``None``
    goes back to reading the environment."""
    global _pinned
    _pinned = settings


assert [v.field for v in VARIABLES] == [f.name for f in fields(Settings)]
