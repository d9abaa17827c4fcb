"""Example bots, by name, and :func:`load_bot` to find a bot from a command-line word.

``random`` plays a random legal card, ``heuristic`` plays like a club player, ``reckless`` is
random and sometimes ignores the led suit (so renúncias happen). Any other bot is named
``module:Class``, e.g. ``mybots.smart:SmartBot``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, cast

from sueca.engine import Player

from ..bot import Bot
from .heuristic import HeuristicBot
from .random_bot import RandomBot
from .reckless import RecklessBot

__all__ = ["EXAMPLES", "BotLoadError", "HeuristicBot", "RandomBot", "RecklessBot", "load_bot"]

EXAMPLES: dict[str, type[Bot]] = {
    "random": RandomBot,
    "heuristic": HeuristicBot,
    "reckless": RecklessBot,
}


class BotLoadError(ValueError):
    """A bot name that is neither an example nor an importable ``module:Class``."""


def load_bot(spec: str) -> Callable[[], Player]:
    """The bot class (or factory) named by ``spec``: an example name or ``module:Class``.

    The result is called with no arguments to make one bot for one seat of one match.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise BotLoadError(f"bad bot {spec!r}: {_valid()}")
    spec = spec.strip()
    if spec in EXAMPLES:
        return EXAMPLES[spec]
    module_name, sep, attr = spec.partition(":")
    if not sep:
        raise BotLoadError(f"unknown bot {spec!r}: {_valid()}")
    if not module_name or not attr:
        raise BotLoadError(f"bad bot {spec!r}: expected module:Class, e.g. mybots.smart:SmartBot")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise BotLoadError(f"bot {spec!r}: cannot import module {module_name!r} ({err})") from None
    found: Any = module
    for part in attr.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise BotLoadError(f"bot {spec!r}: module {module_name!r} has no {attr!r}") from None
    if not callable(found):
        raise BotLoadError(f"bot {spec!r}: {attr!r} is not a class or factory")
    if isinstance(found, type) and not callable(getattr(found, "play", None)):
        raise BotLoadError(f"bot {spec!r}: class {attr!r} has no play(observation) method")
    return cast(Callable[[], Player], found)


def _valid() -> str:
    return f"valid bots are {', '.join(EXAMPLES)} or module:Class"
