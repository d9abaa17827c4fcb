"""The bot registry: names and salted token hashes in Redis (never the token itself).

A token is shown once, by ``sueca-arena bots add``; the referee checks it on every connection.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import secrets
import time
from typing import Any

import redis

from sueca.arena.keys import Keys, default_keys

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")


class BotRegistryError(ValueError):
    """A bad or unknown bot name; the message quotes it."""


def _digest(salt: str, token: str) -> str:
    return hashlib.sha256((salt + token).encode()).hexdigest()


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME.match(name):
        raise BotRegistryError(
            f"bad bot name {name!r}: 1-40 letters, digits, '_', '.', '-', starting with a "
            "letter or digit")
    return name


class BotRegistry:
    def __init__(self, client: redis.Redis, keys: Keys | None = None) -> None:
        self.r = client
        self.keys = keys or default_keys()

    def add(self, name: str) -> str:
        """Register ``name`` and return its new token (shown once); refuses an existing name."""
        check_name(name)
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

    def remove(self, name: str) -> None:
        if not self.r.exists(self.keys.bot(name)):
            raise BotRegistryError(f"unknown bot {name!r}")
        pipe = self.r.pipeline()
        pipe.delete(self.keys.bot(name))
        pipe.srem(self.keys.bots(), name)
        pipe.execute()

    def names(self) -> list[str]:
        return sorted(n.decode() if isinstance(n, bytes) else n for n in self.r.smembers(self.keys.bots()))

    def exists(self, name: str) -> bool:
        return bool(self.r.sismember(self.keys.bots(), name))

    def verify(self, name: str, token: str) -> bool:
        """True only for the token issued to ``name``; constant-time compare."""
        if not isinstance(name, str) or not isinstance(token, str):
            return False
        rec = self.r.hmget(self.keys.bot(name), ["salt", "hash"])
        if rec[0] is None or rec[1] is None:
            return False
        salt = rec[0].decode() if isinstance(rec[0], bytes) else rec[0]
        stored = rec[1].decode() if isinstance(rec[1], bytes) else rec[1]
        return hmac.compare_digest(_digest(salt, token), stored)


class RegistryAuth:
    """The referee's :class:`~sueca.referee.server.Authenticator` over this registry: tokens
    checked against the salted hashes in Redis, once per connection, off the event loop."""

    def __init__(self, client: Any) -> None:
        self.client = client  # a redis.Redis (sueca.arena.store.connect checks the URL and pings)
        self.registry = BotRegistry(self.client)

    async def verify(self, bot: str, token: str) -> bool:
        return await asyncio.to_thread(self.registry.verify, bot, token)

    async def known(self, bot: str) -> bool | None:
        try:
            return await asyncio.to_thread(self.registry.exists, bot)
        except Exception:  # Redis trouble must not hide the real answer: "not connected"
            return None
