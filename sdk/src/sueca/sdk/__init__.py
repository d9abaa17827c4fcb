"""The Sueca Arena bot SDK: write a :class:`Bot`, play it locally or against a referee.

Importing it needs only the engine (standard library) — never Celery, Redis or Prometheus.
"""

from sueca.engine import Card, Variant, card

from .bot import Bot, Clock, MatchInfo, bot_seed

__all__ = ["Bot", "Clock", "MatchInfo", "bot_seed", "Card", "Variant", "card"]
