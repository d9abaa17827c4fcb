"""How the referee checks a bot's token: the :class:`Authenticator` it is given (the league's
Redis registry, :class:`sueca.arena.store.bots.RegistryAuth`, in a deploy) and
:class:`StaticAuth` for tests, embedded use and ``--insecure``."""

from __future__ import annotations

from typing import Protocol

__all__ = ["Authenticator", "StaticAuth"]


class Authenticator(Protocol):
    async def verify(self, bot: str, token: str) -> bool: ...

    async def known(self, bot: str) -> bool | None:
        """Is the bot registered? None when this authenticator cannot tell."""


class StaticAuth:
    """Tokens from a dict (tests, embedded use); ``None`` accepts any token (``--insecure``)."""

    def __init__(self, tokens: dict[str, str] | None) -> None:
        self.tokens = tokens

    async def verify(self, bot: str, token: str) -> bool:
        if self.tokens is None:
            return True
        expected = self.tokens.get(bot)
        return expected is not None and expected == token

    async def known(self, bot: str) -> bool | None:
        return None if self.tokens is None else bot in self.tokens
