"""The network tests' fixtures (:mod:`kits.net_fixtures`): a referee, bot processes."""

from kits.net_fixtures import BOT_NAMES, bot_proc, random_bots, referee, tokens

__all__ = ["BOT_NAMES", "bot_proc", "random_bots", "referee", "tokens"]
