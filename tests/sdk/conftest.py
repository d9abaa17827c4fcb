"""The SDK's network tests use the referee tests' fixtures (:mod:`netfixtures`)."""

from netfixtures import bot_proc, redis_url, referee, tokens

__all__ = ["bot_proc", "redis_url", "referee", "tokens"]
