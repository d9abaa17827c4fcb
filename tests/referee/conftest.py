"""The network tests' fixtures (:mod:`netfixtures`): Redis, a referee, bot processes."""

from netfixtures import BOT_NAMES, bot_proc, random_bots, redis_url, referee, tokens

__all__ = ["BOT_NAMES", "bot_proc", "random_bots", "redis_url", "referee", "tokens"]
