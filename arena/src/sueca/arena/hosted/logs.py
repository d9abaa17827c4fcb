"""A hosted bot's log, for its owner only: one check of the token and one lookup, shared by
``sueca-arena bots logs`` and the web page behind the same token.

The token is checked as the referee checks it (the registry's salted hash); a wrong or missing
one is :class:`Refused` and nothing of the log is read. The lines were escaped and cut when
they were stored (:meth:`sueca.arena.store.hosted.HostedStore.append_log`).
"""

from __future__ import annotations

from typing import TypedDict

from sueca.arena.store import Store
from sueca.arena.store.hosted import LOG_LINES, LogLine

__all__ = ["Refused", "OwnerLog", "check_owner", "owner_log"]


class Refused(ValueError):
    """Not the bot's owner (or no such bot): the message says which, never what the log holds."""


class OwnerLog(TypedDict):
    bot: str
    version: int
    lines: list[LogLine]


def check_owner(store: Store, bot: str, token: str, what: str) -> None:
    """:class:`Refused` unless ``token`` is bot ``bot``'s; ``what`` says what it would allow."""
    if not store.bots.exists(bot):
        raise Refused(f"unknown bot {bot[:64]!r}{store.bots.case_hint(bot[:64])}")
    if not token:
        raise Refused(f"no token: {what} only with the token of bot {bot!r}")
    if not store.bots.verify(bot, token):
        raise Refused(f"wrong token for bot {bot!r}: {what} only with its own token")


def owner_log(store: Store, bot: str, token: str, *, version: int | None = None,
              last: int = LOG_LINES) -> OwnerLog:
    """The last ``last`` lines of ``bot``'s log (``version``: default the one its bot hosts
    run, else its current version), after :func:`check_owner`."""
    check_owner(store, bot, token, "a bot's log is shown")
    if version is None:
        hosted = store.hosted.hosted().get(bot)
        version = hosted["version"] if hosted is not None else store.versions.current(bot)
    return {"bot": bot, "version": version,
            "lines": store.hosted.log(bot, version, last=max(1, min(last, LOG_LINES)))}
