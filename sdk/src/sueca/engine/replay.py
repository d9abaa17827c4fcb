"""Replay records: one JSON object per match (format ``sueca-replay/1``), one per line in a file.

A replay holds every deck, hand and card, so any record can be re-played through the engine and
checked (:func:`verify`). docs/bot-authors.md documents the format field by field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from .cards import CARDS, card
from .errors import ReplayError, SuecaError
from .game import _STOPS, REDEAL, Deal, End, Match
from .variant import Variant

FORMAT = "sueca-replay/1"


class TrickRecord(TypedDict):
    leader: int
    cards: list[str]
    winner: int | None  # None: cut short by a renúncia, or still on the table
    points: int


class DealRecord(TypedDict):
    dealer: int
    deck: list[str]  # top card first
    hands: list[list[str]]  # by seat, as dealt
    trump: str
    tricks: list[TrickRecord]
    points: list[int]
    game_points: list[int]
    end: End | None
    fault_seat: int | None


class ReplayRecord(TypedDict):
    """One ``sueca-replay/1`` record as :func:`record` makes it (docs/bot-authors.md documents it)."""

    format: str
    match_id: str
    variant: dict[str, Any]
    seats: list[str]
    seed: int | str | None
    deals: list[DealRecord]
    game_points: list[int]
    winner: int | None
    end: End | None


_NAMES = tuple(str(c) for c in CARDS)  # a record names ~600 cards: one lookup each


def _names(cards: Sequence[int]) -> list[str]:
    return list(map(_NAMES.__getitem__, cards))


def _deal_record(deal: Deal, trump_card: str, game_points: tuple[int, int]) -> DealRecord:
    start = (deal.dealer + 1) & 3 if trump_card == "last" else deal.dealer
    hands: list[list[str]] = [[], [], [], []]
    for i in range(4):
        hands[(start + i) & 3] = _names(deal.deck[10 * i: 10 * i + 10])
    tricks: list[TrickRecord] = [{"leader": t.leader, "cards": _names(t.cards),
                                  "winner": t.winner, "points": t.points} for t in deal.tricks]
    if deal.trick:  # a deal stopped mid-trick keeps the cards already on the table
        tricks.append({"leader": deal.leader, "cards": _names(deal.trick), "winner": None,
                       "points": 0})
    return {
        "dealer": deal.dealer, "deck": _names(deal.deck), "hands": hands,
        "trump": str(deal.trump), "tricks": tricks, "points": list(deal.points),
        "game_points": list(game_points), "end": deal.end, "fault_seat": deal.fault_seat,
    }


def record(match: Match, match_id: str, seats: Sequence[str]) -> ReplayRecord:
    """The replay of a match (finished or stopped); ``seats`` names the bot in seat 0..3."""
    results = {r.number: r for r in match.results}
    deals = []
    for deal in match.deals:
        if deal.end is None:
            continue  # only a match still running has an unfinished deal
        deals.append(_deal_record(deal, match.variant.trump_card, results[deal.number].game_points))
    return {
        "format": FORMAT, "match_id": match_id, "variant": match.variant.to_dict(),
        "seats": list(seats), "seed": match.seed, "deals": deals,
        "game_points": list(match.game_points), "winner": match.winner, "end": match.end,
    }


def replay(rec: Mapping[str, Any]) -> Match:
    """Re-play a record's decks, redeal calls and cards through the engine; raise ReplayError
    at the first action the rules refuse."""
    if not isinstance(rec, Mapping) or rec.get("format") != FORMAT:
        raise ReplayError(f"not a {FORMAT} record: format is {_get(rec, 'format')!r}")
    try:
        variant = Variant.from_dict(rec["variant"])
        deals = rec["deals"]
        if not isinstance(deals, list) or not deals:
            raise ReplayError(f"deals must be a non-empty list, not {deals!r:.60}")
        match = Match(variant, seed=rec.get("seed"), decks=[d["deck"] for d in deals],
                      first_dealer=deals[0]["dealer"])
        for k, d in enumerate(deals):
            if match.over:
                raise ReplayError(f"deal {k + 1}: the match was already over after deal {k}")
            if d["end"] == REDEAL:
                match.redeal(True)
                continue
            if match.awaiting_redeal and (d["tricks"] or d["end"] not in _STOPS):
                match.redeal(False)  # the first player kept a weak hand
            for t in d["tricks"]:
                for c in t["cards"]:
                    if match.deal.number != k:
                        raise ReplayError(f"deal {k + 1}: card {c} is played after the deal "
                                          "ended")
                    match.play(card(c))
            if d["end"] in _STOPS:
                match.stop(d["end"], d["fault_seat"])
        return match
    except SuecaError as err:
        if isinstance(err, ReplayError):
            raise
        raise ReplayError(str(err)) from None
    except (KeyError, TypeError, IndexError) as err:
        raise ReplayError(f"malformed record: {type(err).__name__} {err}") from None


def _get(rec: Any, key: str) -> Any:
    return rec.get(key) if isinstance(rec, Mapping) else rec


def verify(rec: Mapping[str, Any]) -> list[str]:
    """Every way the record differs from what its decks and plays give; empty when it is right."""
    try:
        match = replay(rec)
    except ReplayError as err:
        return [str(err)]
    again: Mapping[str, Any] = record(match, rec.get("match_id", ""), rec.get("seats", []))
    problems = []
    for key in ("variant", "game_points", "winner", "end"):
        if again[key] != rec.get(key):
            problems.append(f"{key} is {rec.get(key)!r}; the plays give {again[key]!r}")
    if len(again["deals"]) != len(rec["deals"]):
        problems.append(f"{len(rec['deals'])} deals recorded; the plays give {len(again['deals'])}")
    for k, (mine, theirs) in enumerate(zip(again["deals"], rec["deals"])):
        for key, value in mine.items():
            if theirs.get(key) != value:
                problems.append(f"deal {k + 1}: {key} is {theirs.get(key)!r:.120}; "
                                f"the deck and plays give {value!r:.120}")
    return problems


def write(path: str | Path, records: Sequence[Mapping[str, Any]], append: bool = True) -> None:
    with open(path, "a" if append else "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")


def read(path: str | Path) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """(line number, record or None, error or None) for every non-blank line of a replay file."""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield n, json.loads(line), None
            except json.JSONDecodeError as err:
                yield n, None, f"not JSON: {err}"
