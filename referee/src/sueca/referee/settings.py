"""The ``SUECA_*`` variables of the referee: its TLS certificate, the operator API's token and
port, and the per-bot limits' defaults.

:class:`RefereeSettings` extends the SDK's :class:`~sueca.sdk.settings.Settings` (a referee
also reads the seed key and the log format), and the league's settings extend it in turn. The
machinery is :mod:`sueca.sdk.config`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from sueca.sdk import config
from sueca.sdk.config import SettingsError, Variable, checked, optional, port, replace, text, use
from sueca.sdk.settings import Settings

__all__ = ["VARIABLES", "LIMITS", "RefereeSettings", "SettingsError", "Variable", "current", "use",
           "replace"]

#: The per-bot limits with a variable each: the fields of ``sueca.referee.limits.Limits``.
LIMITS = ("out_bytes", "out_items", "errors_per_message", "errors_per_second",
          "messages_per_second", "actions_per_second", "hello_seconds", "streams_per_connection",
          "connections_per_address", "sessions_per_bot", "refusals_per_second",
          "hellos_per_second")

_limit = optional(checked(float, lambda x: math.isfinite(x) and x >= 0,
                          "a number at least 0 (0 disables the limit)"))


VARIABLES: tuple[Variable, ...] = (
    Variable("SUECA_TLS_CERT", "", "referee", "PEM certificate (chain) to serve TLS with", text),
    Variable("SUECA_TLS_KEY", "", "referee", "PEM private key of SUECA_TLS_CERT", text),
    # kept as set: "set but blank" is refused where it is used, never read as "open"
    Variable("SUECA_OPERATOR_TOKEN", "", "referee, workers, scheduler, CLI",
             "bearer token of MatchService (RunMatch, Watch, ListBots); unset: open", text,
             verbatim=True),
    Variable("SUECA_OPERATOR_PORT", "", "referee",
             "serve MatchService on this port only (with `--operator-host`, default loopback), "
             "bots and health on `--port`; unset: all on `--port`", port),
    *(Variable(f"SUECA_{name.upper()}", "", "referee", f"per-bot limit `--{name.replace('_', '-')}` "
               "(unset: its built-in default; 0 disables it)", _limit)
      for name in LIMITS),
)


@dataclass(frozen=True)
class RefereeSettings(Settings):
    """The SDK's settings and the parsed value of every :data:`VARIABLES` entry (``None``: not
    set, no default)."""

    variables: ClassVar[tuple[Variable, ...]] = Settings.variables + VARIABLES

    tls_cert: str | None
    tls_key: str | None
    operator_token: str | None
    operator_port: int | None
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


config.check_declared(RefereeSettings)


def current() -> RefereeSettings:
    """This process's settings (:func:`sueca.sdk.config.current`): what :func:`use` pinned,
    else the environment now."""
    return config.current(RefereeSettings)
