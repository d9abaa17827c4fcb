"""The ``SUECA_*`` variables of the league (Redis, workers, scheduler, ratings, retention), and
the registry of every layer's variables.

:class:`ArenaSettings` extends the referee's settings, which extend the SDK's, so it holds every
variable; ``sueca-arena`` reads and checks them all when it starts. :data:`ALL_VARIABLES` (by
layer: SDK, referee, league) is what ``docs/settings.md`` is generated from::

    python -m sueca.arena.settings --markdown > docs/settings.md

and a test fails when the page and the declarations differ. The machinery is
:mod:`sueca.sdk.config`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from sueca.arena.fairplay import RULE_WORDS, FairPlayError, Rule, parse_rule
from sueca.referee import settings as referee_settings
from sueca.referee.settings import RefereeSettings
from sueca.sdk import config
from sueca.sdk import settings as sdk_settings
from sueca.sdk.config import (
    SettingsError,
    Variable,
    checked,
    count,
    digits,
    port,
    positive,
    replace,
    seconds,
    text,
    use,
    whole,
)

__all__ = ["VARIABLES", "ALL_VARIABLES", "LAYERS", "ArenaSettings", "SettingsError", "Variable",
           "current", "use", "replace", "markdown"]


def _addresses(raw: str) -> tuple[str, ...]:
    return tuple(a.strip() for a in raw.split(",") if a.strip())


def _prefix(raw: str) -> str:
    value = raw.strip() or "sueca:"
    if any(c.isspace() for c in value) or len(value) > 64:
        raise ValueError("a Redis key prefix is one word of at most 64 characters")
    return value


_host = checked(str.strip, lambda v: bool(v) and not any(c.isspace() for c in v),
                "an address to listen on, such as 127.0.0.1 or 0.0.0.0")
_runner = checked(str.strip, lambda v: v in ("referee", "local"), "referee or local")
def _rule(raw: str) -> Rule | None:
    try:
        return parse_rule(raw)
    except FairPlayError:
        raise ValueError(RULE_WORDS) from None


_days = checked(digits, lambda n: True, "a whole number of days, at least 0 (0 keeps everything)")


VARIABLES: tuple[Variable, ...] = (
    Variable("SUECA_REDIS_URL", "", "referee, worker, scheduler, league commands",
             "the league's Redis (bots, matches, results, Celery's broker): `redis://`, "
             "`rediss://`, `unix://`, or `redis+sentinel://[:password@]host:port[,host:port...]"
             "/SERVICE/DB` for a Redis behind Sentinel "
             "([deploying.md](deploying.md#redis-behind-sentinel)); `--redis` wins",
             text),
    Variable("SUECA_KEY_PREFIX", "sueca:", "everything that uses Redis",
             "prefix of every Redis key, so several leagues can share one Redis", _prefix),
    Variable("SUECA_REFEREES", "", "worker, scheduler",
             "comma list of referee replicas besides those heartbeating into Redis",
             _addresses),
    Variable("SUECA_RUNNER", "referee", "worker",
             "referee, or local: play bots in-process (trusted code only)", _runner),
    Variable("SUECA_LOCAL_BOTS", "", "worker with SUECA_RUNNER=local",
             "comma list of NAME=SPEC bots the local runner may load", text),
    Variable("SUECA_METRICS_PORT", "", "worker",
             "serve the worker's Prometheus metrics on this port", port),
    Variable("SUECA_METRICS_ADDR", "0.0.0.0", "worker, scheduler",
             "the address the worker's and the scheduler's metrics listen on (0.0.0.0: every "
             "interface, for a deploy's scraper; `serve` sets its `--metrics-host`)", _host),
    Variable("SUECA_METRICS_MAX_BOTS", "100", "worker",
             "bots with their own `bot` label in the worker's `sueca_bot_*` series (the first "
             "seen); the rest are `bot=\"_other\"`", whole),
    Variable("SUECA_MATCH_TIMEOUT", "300", "worker", "seconds one match may take", seconds),
    Variable("SUECA_PLACE_WAIT", "20", "worker",
             "seconds a match waits for free seats before it is retried later", seconds),
    Variable("SUECA_MATCH_ATTEMPTS", "5", "worker",
             "attempts at a match before it is recorded as failed", count),
    Variable("SUECA_RETRY_BASE", "0.5", "worker",
             "first retry delay in seconds (doubling, with jitter)", seconds),
    Variable("SUECA_VISIBILITY_TIMEOUT", "600", "worker",
             "seconds before Redis hands an unacknowledged match to another worker", seconds),
    Variable("SUECA_ELO_K", "24", "worker, ratings commands",
             "Elo K of a new league (then kept in Redis)", positive),
    Variable("SUECA_RETAIN_DAYS", "0", "retention run",
             "archive (or drop) replays, match records and results-log entries of matches "
             "recorded more than this many days ago; 0 keeps everything", _days),
    Variable("SUECA_SUSPEND_AFTER", "5/10", "scheduler, tournament and bots commands, web",
             "X/Y: a bot that faulted (bot error, timeout, disconnect) in X of its last Y "
             "matches is suspended from the ladder and tournaments until a new version or "
             "`bots lift`; off: never (a competition's own fair_play rule still applies in it)", _rule),
    Variable("SUECA_CHALLENGES_PER_HOUR", "6", "bots challenge",
             "challenges (`bots challenge`) one bot may ask for in any hour; 0: none", whole),
    Variable("SUECA_ARCHIVE_DIR", "", "retention run",
             "directory of retention's gzip JSON-lines archive files; `--archive` wins", text),
)


@dataclass(frozen=True)
class ArenaSettings(RefereeSettings):
    """The referee's settings and the parsed value of every :data:`VARIABLES` entry (``None``:
    not set, no default)."""

    variables: ClassVar[tuple[Variable, ...]] = RefereeSettings.variables + VARIABLES

    redis_url: str | None
    key_prefix: str
    referees: tuple[str, ...]
    runner: str
    local_bots: str | None
    metrics_port: int | None
    metrics_addr: str
    metrics_max_bots: int
    match_timeout: float
    place_wait: float
    match_attempts: int
    retry_base: float
    visibility_timeout: float
    elo_k: float
    retain_days: int
    suspend_after: Rule | None
    challenges_per_hour: int
    archive_dir: str | None


config.check_declared(ArenaSettings)


def current() -> ArenaSettings:
    """This process's settings (:func:`sueca.sdk.config.current`): what :func:`use` pinned,
    else the environment now."""
    return config.current(ArenaSettings)


#: Each layer's title, settings module and own variables, lowest first.
LAYERS: tuple[tuple[str, str, tuple[Variable, ...]], ...] = (
    ("The bot: sueca-sdk", "sueca.sdk.settings", sdk_settings.VARIABLES),
    ("The referee: sueca-referee", "sueca.referee.settings", referee_settings.VARIABLES),
    ("The league: sueca-arena", "sueca.arena.settings", VARIABLES),
)

#: Every ``SUECA_*`` variable of every layer, lowest layer first.
ALL_VARIABLES: tuple[Variable, ...] = ArenaSettings.variables

assert ALL_VARIABLES == tuple(v for _, _, own in LAYERS for v in own)


def markdown() -> str:
    """``docs/settings.md``: every layer's variables as a table (default, who reads it, what
    it means)."""
    lines = [
        "# Settings",
        "",
        "<!-- Generated from the declarations by `python -m sueca.arena.settings --markdown > "
        "docs/settings.md`; a test fails when the two differ. -->",
        "",
        "Every `SUECA_*` environment variable is declared by the layer that reads it, and "
        "checked when a command starts: a bad value stops `sueca-arena` or `sueca-bot` with one "
        "line quoting it (`error: SUECA_MATCH_TIMEOUT='soon' is not usable: not a number of "
        "seconds above 0`), exit 2. `sueca-bot` reads the bot's variables only; `sueca-arena` "
        "reads all of them. A command's own flags win over the variables (`--redis` over "
        "`SUECA_REDIS_URL`, `worker --referee` over `SUECA_REFEREES`). A variable set to an "
        "empty string means its default, as unset does"
        + "".join(f", except `{v.name}` (set but blank is refused, never read as unset)"
                  for v in ALL_VARIABLES if v.verbatim) + ".",
    ]
    for title, module, own in LAYERS:
        lines += ["", f"## {title}", "", f"Declared in `{module}`.", "",
                  "| variable | default | read by | meaning |", "|---|---|---|---|"]
        lines += [f"| `{v.name}` | {f'`{v.default}`' if v.default else '—'} | "
                  f"{_cell(v.used_by)} | {_cell(v.meaning)} |" for v in own]
    return "\n".join(lines) + "\n"


def _cell(words: str) -> str:
    return words.replace("|", "\\|")


def main(argv: Sequence[str] | None = None) -> int:
    """``--markdown``: print :func:`markdown`; anything else: say so, exit 2."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args != ["--markdown"]:
        print("usage: python -m sueca.arena.settings --markdown > docs/settings.md",
              file=sys.stderr)
        return 2
    sys.stdout.write(markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
