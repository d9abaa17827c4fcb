"""The SDK's network tests use the referee tests' fixtures (:mod:`kits.net_fixtures`)."""

from kits.net_fixtures import bot_proc, referee, tokens

__all__ = ["bot_proc", "referee", "tokens"]
