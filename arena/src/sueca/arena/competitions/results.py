"""A competition's recorded results and the rating of record fit over them alone: what its
final is seeded from, its page shows and its export carries."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypedDict

from sueca.arena.ratings.fit import Fit, fit_results
from sueca.arena.ratings.live import rated
from sueca.arena.records import ResultEntry
from sueca.arena.store import Store

__all__ = ["RecordRating", "final_id", "competition_results", "ratings_of", "rows_of"]


class RecordRating(TypedDict):
    """A bot's rating of record in a competition: rating, its 95% interval, rated matches."""

    rating: float
    pm: float
    games: int


def final_id(name: str) -> str:
    """The id of competition ``name``'s final tournament."""
    return f"{name}-final"


def competition_results(store: Store, name: str) -> list[ResultEntry]:
    """The competition's recorded results in log order: its ladder's and its final's."""
    final = final_id(name)
    return [r for _, r in store.results()
            if r.get("competition") == name or r.get("tournament") == final]


def ratings_of(results: Iterable[ResultEntry], initial: float) -> dict[str, RecordRating]:
    """The rating of record fit over ``results`` alone: the competition's, one row per version
    that played (:func:`~sueca.arena.ratings.fit.identity`: ``bot``, ``bot@2``...)."""
    return rows_of(fit_results((r for r in results if rated(r)), initial))


def rows_of(fit: Fit) -> dict[str, RecordRating]:
    """A fit's rows as an export records them."""
    return {b: {"rating": r, "pm": fit.pm.get(b, 0.0), "games": fit.games.get(b, 0)}
            for b, r in sorted(fit.rating.items())}
