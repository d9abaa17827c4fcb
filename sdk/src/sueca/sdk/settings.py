"""The ``SUECA_*`` variables a bot author sets, and those the SDK's own code reads.

The referee and the league declare theirs in their own settings modules, on top of these
(``sueca.referee.settings``, ``sueca.arena.settings``); the machinery (parsing, checking,
pinning) is :mod:`sueca.sdk.config`. ``sueca-bot`` checks these variables when it starts: a bad
value stops it with one line that quotes it, exit 2. The table in ``docs/settings.md`` is
generated from every layer's declarations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sueca.sdk import config
from sueca.sdk.config import BaseSettings, SettingsError, Variable, checked, replace, text, use

__all__ = ["VARIABLES", "Settings", "SettingsError", "Variable", "current", "use", "replace"]


def _tls(raw: str) -> bool:
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("", "0", "false", "no", "off"):
        return False
    raise ValueError("1, true, yes or on for TLS; 0, false, no, off or empty for plaintext")


def _seed_key(raw: str) -> str | None:
    key = raw.strip()
    if key and len(key) < 16:
        raise ValueError(f"a seed key needs at least 16 characters, this one has {len(key)}")
    return key or None


_log_format = checked(lambda raw: raw.strip().lower(), lambda v: v in ("text", "json"),
                      "text or json")


VARIABLES: tuple[Variable, ...] = (
    Variable("SUECA_TOKEN", "", "sueca-bot", "the bot's token (`NAME.SECRET`)", text),
    Variable("SUECA_SERVER", "", "sueca-bot",
             "referee address(es): host:port, a comma list, or a name resolving to several",
             text),
    Variable("SUECA_TLS", "", "sueca-bot, workers, scheduler, CLI",
             "dial referees over TLS checked against grpcio's bundled roots", _tls),
    Variable("SUECA_TLS_CA", "", "sueca-bot, workers, scheduler, CLI",
             "dial referees over TLS checked against this CA file", text),
    Variable("SUECA_TLS_SERVER_NAME", "", "sueca-bot, workers, scheduler, CLI",
             "the name the referee's certificate is checked against, when it differs from "
             "the host dialled", text),
    Variable("SUECA_SEED_KEY", "", "referee, self-play",
             "secret key of the bots' seeds (HMAC): a bot cannot learn the decks from its seed; "
             "unset, a referee picks a random one", _seed_key),
    Variable("SUECA_LOG_FORMAT", "text", "every command",
             "log lines as `text` or `json` (one object a line, with match, game and bot ids); "
             "`--log-format` wins", _log_format),
    Variable("SUECA_EXEC_TIMEOUT", "10", "self-play",
             "seconds an `exec:` bot's program may take per answer in self-play (over the "
             "network the referee's clocks apply); `--exec-timeout` wins", config.seconds),
    Variable("SUECA_EXEC_PROCESSES", "0", "every command that runs bots",
             "most processes one `exec:` bot runs at once (0: no cap); `--exec-processes` wins",
             config.whole),
    Variable("SUECA_BOT_SUMMARY_SECONDS", "60", "sueca-bot",
             "seconds between the summary lines `sueca-bot run` logs (games played, won and "
             "lost, faults by kind, ms a move); one more comes when it stops", config.seconds),
)


@dataclass(frozen=True)
class Settings(BaseSettings):
    """The parsed value of every :data:`VARIABLES` entry (``None``: not set, no default)."""

    variables: ClassVar[tuple[Variable, ...]] = VARIABLES

    token: str | None
    server: str | None
    tls: bool
    tls_ca: str | None
    tls_server_name: str | None
    seed_key: str | None
    log_format: str
    exec_timeout: float
    exec_processes: int
    bot_summary_seconds: float


config.check_declared(Settings)


def current() -> Settings:
    """This process's settings (:func:`sueca.sdk.config.current`): what :func:`use` pinned,
    else the environment now."""
    return config.current(Settings)
