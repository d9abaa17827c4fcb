"""The bot registry: names and salted token hashes in Redis (never the token itself).

A token is shown once, by ``sueca-arena bots add``; the referee checks it on every connection
(:class:`RegistryAuth`).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Iterable

import redis

from sueca.arena.keys import Keys
from sueca.arena.store.client import StoreBase, text
from sueca.sdk.logs import shown

__all__ = ["BotRegistry", "BotRegistryError", "RegistryAuth", "check_name", "NAME"]

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")


class BotRegistryError(ValueError):
    """A bad or unknown bot name; the message quotes it."""


def _digest(salt: str, token: str) -> str:
    return hashlib.sha256((salt + token).encode()).hexdigest()


def check_name(name: str) -> str:
    """``name`` if it is a valid bot name, else :class:`BotRegistryError` quoting it."""
    if not isinstance(name, str) or not NAME.match(name):
        raise BotRegistryError(
            f"bad bot name {shown(name, 64)}: 1-40 letters, digits, '_', '.', '-', starting with a "
            "letter or digit")
    return name


class BotRegistry(StoreBase):
    """Registered bots (``bots``) and their salted token hashes (``bot:{name}``)."""

    def add(self, name: str) -> str:
        """Register ``name`` and return its new token (shown once); refuses an existing name,
        and one that differs from a registered name only in case (``mygreedy`` beside
        ``MyGreedy`` would be two bots that people, and case-blind file systems, take for one).
        """
        check_name(name)
        twin = self.case_twin(name)
        if twin is not None:
            raise BotRegistryError(f"bot {name!r} differs only in case from the registered bot "
                                   f"{twin!r}: choose another name, or use {twin!r}")
        token = f"{name}.{secrets.token_urlsafe(24)}"
        salt = secrets.token_hex(16)
        created = self.r.hsetnx(self.keys.bot(name), "salt", salt)
        if not created:
            raise BotRegistryError(f"bot {name!r} already exists; remove it first to re-issue a token")
        pipe = self.r.pipeline()
        pipe.hset(self.keys.bot(name), mapping={"hash": _digest(salt, token),
                                                "created": f"{time.time():.0f}"})
        pipe.sadd(self.keys.bots(), name)
        pipe.execute()
        return token

    def add_unverifiable(self, names: Iterable[str]) -> None:
        """Register ``names`` with no token that verifies (a benchmark's seeded league, where
        issuing a thousand real tokens one by one would only cost time)."""
        pipe = self.r.pipeline(transaction=False)
        for name in names:
            pipe.hset(self.keys.bot(check_name(name)),
                      mapping={"salt": "00", "hash": "-", "created": "0"})
            pipe.sadd(self.keys.bots(), name)
        pipe.execute()

    def remove(self, name: str) -> None:
        if not self.r.exists(self.keys.bot(name)):
            raise BotRegistryError(f"unknown bot {name!r}{self.case_hint(name)}")
        pipe = self.r.pipeline()
        pipe.delete(self.keys.bot(name), self.keys.bot_versions(name))
        pipe.srem(self.keys.bots(), name)
        pipe.execute()

    def names(self) -> list[str]:
        return sorted(text(n) for n in self.r.smembers(self.keys.bots()))

    def exists(self, name: str) -> bool:
        return bool(self.r.sismember(self.keys.bots(), name))

    def case_twin(self, name: str) -> str | None:
        """A registered name other than ``name`` that equals it but for case, if any (an arena
        registered before names were told apart regardless of case may hold several: the
        first by name order)."""
        folded = name.casefold()
        return next((n for n in self.names() if n != name and n.casefold() == folded), None)

    def case_hint(self, name: str) -> str:
        """For a message about ``name``, which its caller found unregistered: ``" (did you mean
        'MyGreedy'?)"`` when a registered name differs from it only in case, else ``""``."""
        twin = self.case_twin(name)
        return "" if twin is None else f" (did you mean {twin!r}?)"

    def issue_host_token(self, name: str) -> str:
        """A new token for a bot host to play hosted bot ``name`` with, beside its author's own
        (which stays valid): only its salted hash is stored, and each call replaces the one
        before, so a bot host that lost the bot to another can no longer connect as it."""
        if not self.exists(name):
            raise BotRegistryError(f"unknown bot {name!r}{self.case_hint(name)}")
        token = f"{name}.{secrets.token_urlsafe(24)}"
        salt = secrets.token_hex(16)
        self.r.hset(self.keys.bot(name), mapping={"host_salt": salt,
                                                  "host_hash": _digest(salt, token)})
        return token

    def verify(self, name: str, token: str) -> bool:
        """True only for the token issued to ``name``, or the one its bot host holds
        (:meth:`issue_host_token`); constant-time compares."""
        if not isinstance(name, str) or not isinstance(token, str):
            return False
        fields = ["salt", "hash", "host_salt", "host_hash"]
        salt, stored, host_salt, host_stored = (
            text(v) for v in self.r.hmget(self.keys.bot(name), fields))
        ok = False
        for s, h in ((salt, stored), (host_salt, host_stored)):
            if s is not None and h is not None:
                ok = hmac.compare_digest(_digest(s, token), h) or ok
        return ok


class RegistryAuth:
    """The referee's :class:`~sueca.referee.server.Authenticator` over this registry: tokens
    checked against the salted hashes in Redis, once per connection, off the event loop."""

    def __init__(self, client: redis.Redis, keys: Keys | None = None) -> None:
        self.client = client  # sueca.arena.store.connect checks the URL and pings
        self.registry = BotRegistry(self.client, keys)

    async def verify(self, bot: str, token: str) -> bool:
        return await asyncio.to_thread(self.registry.verify, bot, token)

    async def known(self, bot: str) -> bool | None:
        try:
            return await asyncio.to_thread(self.registry.exists, bot)
        except Exception:  # Redis trouble must not hide the real answer: "not connected"
            return None
