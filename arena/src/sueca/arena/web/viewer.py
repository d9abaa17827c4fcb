"""The replay viewer's model: one position of a recorded match, from its ``sueca-replay/1`` record.

A position is (deal, trick, card), all 1-based as the page shows them. Trick 0 is the deal as
dealt (four full hands, the turned trump, nothing played; its card is 0). Trick ``t``, card ``c``
is the table once the ``c``-th card of the ``t``-th trick is down: those cards at their seats in
play order, the hands without every card played so far (they shrink card by card), the deal's
running card points over the tricks already taken, and — once the trick's last card is down —
who took it. The page for a position is one URL (``?deal=2&trick=5&card=3``), so a position can be
shared and every step is a plain link; the page's script follows them without reloading (it
fetches the step's page and swaps in its viewer, the keys included). Without ``card`` a trick
is shown complete, so a ``?deal=2&trick=5`` link opens the table of that trick's last card.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from sueca.arena.league.rows import BadQuery

SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
SUIT_ORDER = "CDHS"
RANK_ORDER = "23456QJK7A"  # Sueca's order within a suit, low to high

Step = tuple[int, int, int]  # (deal, trick, card)


class CardView(TypedDict):
    """A card as the page draws it: ``name`` (``"7H"``), ``rank``, ``suit`` (its symbol), ``red``."""

    name: str
    rank: str
    suit: str
    red: bool


class TableCard(CardView):
    """A card on the table: also its place in the trick's play order, and whether it is the
    card just played."""

    order: int
    latest: bool


class Taken(TypedDict):
    n: int
    winner: int | None
    points: int


class Position(TypedDict):
    """One position of a replay (see the module's notes); ``prev`` ... ``last`` are the steps
    the viewer's buttons go to (None: no such step)."""

    deal: int
    trick: int
    card: int
    cards: int
    deals: int
    tricks: int
    complete: bool
    dealer: int | None
    trump: CardView
    hands: list[list[CardView]]
    table: list[TableCard | None]
    leader: int | None
    to_play: int | None
    winner: int | None
    trick_points: int | None
    taken: list[Taken]
    points: list[int]
    cross_before: list[int]
    cross_after: list[int] | None
    deal_points: list[int] | None
    deal_end: str | None
    fault_seat: int | None
    prev: Step | None
    next: Step | None
    prev_trick: Step | None
    next_trick: Step | None
    prev_deal: Step | None
    next_deal: Step | None
    first: Step
    last: Step

#: each seat's side of the drawn table by the variant's ``direction`` (docs/rules.md): seat 0 at
#: the bottom, partners opposite, play going round the table the way the match says
PLACES = {"counterclockwise": ("south", "east", "north", "west"),
          "clockwise": ("south", "west", "north", "east")}


def places(direction: object) -> tuple[str, ...]:
    """The side of the table each seat (0 to 3) is drawn at (an unknown direction: Portugal's,
    counter-clockwise)."""
    return PLACES.get(str(direction), PLACES["counterclockwise"])


def card_view(name: str) -> CardView:
    rank, suit = name[:-1], name[-1:]
    return {"name": name, "rank": rank, "suit": SUITS.get(suit, suit),
            "red": suit in ("D", "H")}


def _sort_key(name: str) -> tuple[int, int]:
    rank, suit = name[:-1], name[-1:]
    return (SUIT_ORDER.find(suit), RANK_ORDER.find(rank))


def _tricks(deal: dict[str, Any]) -> list[dict[str, Any]]:
    return list(deal.get("tricks") or [])


def _cards(trick: dict[str, Any]) -> list[str]:
    return list(trick.get("cards") or [])


def steps(record: Mapping[str, Any]) -> list[Step]:  # Any: a sueca-replay/1 record, as JSON
    """Every position of the match in order: each deal as dealt, then card by card."""
    out: list[Step] = []
    for d, deal in enumerate(record.get("deals") or [], 1):
        out.append((d, 0, 0))
        for t, trick in enumerate(_tricks(deal), 1):
            n = len(_cards(trick))
            out += [(d, t, c) for c in range(1, n + 1)] if n else [(d, t, 0)]
    return out


def _complete(deals: list[dict[str, Any]], deal: int, trick: int) -> Step:
    """(deal, trick) with all its cards down (trick 0: as dealt)."""
    if trick == 0:
        return (deal, 0, 0)
    return (deal, trick, len(_cards(_tricks(deals[deal - 1])[trick - 1])))


def position(record: Mapping[str, Any], deal: int, trick: int,  # Any: a sueca-replay/1 record
             card: int | None = None) -> Position:
    """The view of (deal, trick, card) in ``record`` (``card`` None: the trick complete);
    :class:`BadQuery` names a position that is not in it."""
    deals = record.get("deals") or []
    if not 1 <= deal <= len(deals):
        raise BadQuery(f"bad deal {deal!r}: this match has deals 1 to {len(deals)}")
    d = deals[deal - 1]
    tricks = _tricks(d)
    if not 0 <= trick <= len(tricks):
        raise BadQuery(f"bad trick {trick!r}: deal {deal} has tricks 0 to {len(tricks)}")
    current = tricks[trick - 1] if trick else None
    down = _cards(current) if current is not None else []
    if card is None:
        card = len(down)
    elif not (min(1, len(down)) <= card <= len(down)):
        raise BadQuery(f"bad card {card!r}: " + (
            f"trick {trick} of deal {deal} has cards 1 to {len(down)}" if trick
            else "the deal as dealt (trick 0) has no card to show; card 0 or none"))
    complete = current is not None and card == len(down)
    played: set[str] = set(down[:card])
    points = [0, 0]
    taken: list[Taken] = []
    for n, t in enumerate(tricks[:trick], 1):
        if n == trick and not complete:
            break
        played.update(_cards(t))
        w = t.get("winner")
        if w is not None:
            points[w & 1] += int(t.get("points") or 0)
        taken.append({"n": n, "winner": w, "points": t.get("points", 0)})
    cross = [0, 0]
    for earlier in deals[:deal - 1]:
        gp = earlier.get("game_points") or [0, 0]
        cross = [cross[0] + gp[0], cross[1] + gp[1]]
    last = trick == len(tricks) and (complete or not tricks)
    gp = d.get("game_points") or [0, 0]
    after = [cross[0] + gp[0], cross[1] + gp[1]] if last else None
    table: list[TableCard | None] = [None] * 4
    leader = None if current is None else int(current.get("leader", 0))
    if leader is not None:
        for i, c in enumerate(down[:card]):
            v = card_view(c)
            table[(leader + i) & 3] = {"name": v["name"], "rank": v["rank"], "suit": v["suit"],
                                       "red": v["red"], "order": i + 1, "latest": i + 1 == card}
    hands = [[card_view(c) for c in sorted(hand, key=_sort_key) if c not in played]
             for hand in d.get("hands") or [[]] * 4]
    order = steps(record)
    here = order.index((deal, trick, card))
    n_deals = len(deals)
    prev_deal = (deal - 1, 0, 0) if deal > 1 else None
    next_deal = (deal + 1, 0, 0) if deal < n_deals else None
    return {
        "deal": deal, "trick": trick, "card": card, "cards": len(down),
        "deals": n_deals, "tricks": len(tricks), "complete": complete,
        "dealer": d.get("dealer"), "trump": card_view(str(d.get("trump", "??"))),
        "hands": hands, "table": table, "leader": leader,
        "to_play": (int(tricks[0].get("leader", 0)) if tricks else None) if leader is None
        else None if complete else (leader + card) & 3,
        "winner": current.get("winner") if complete and current is not None else None,
        "trick_points": current.get("points") if complete and current is not None else None,
        "taken": taken, "points": points, "cross_before": cross, "cross_after": after,
        "deal_points": d.get("points") if last else None, "deal_end": d.get("end") if last else None,
        "fault_seat": d.get("fault_seat") if last else None,
        "prev": order[here - 1] if here > 0 else None,
        "next": order[here + 1] if here + 1 < len(order) else None,
        "prev_trick": _complete(deals, deal, trick - 1) if trick > 0 else (
            _complete(deals, deal - 1, len(_tricks(deals[deal - 2]))) if deal > 1 else None),
        "next_trick": _complete(deals, deal, trick + 1) if trick < len(tricks) else next_deal,
        "prev_deal": prev_deal, "next_deal": next_deal,
        "first": order[0], "last": order[-1],
    }


def query(step: Step) -> str:
    """The query string of a position's URL."""
    deal, trick, card = step
    return f"?deal={deal}&trick={trick}" + (f"&card={card}" if trick else "")


def parse_position(deal: str | None, trick: str | None, card: str | None = None
                   ) -> tuple[int, int, int | None]:
    """``?deal=``, ``?trick=`` and ``?card=`` as numbers (default deal 1, trick 0, and the
    trick complete)."""
    out: list[int | None] = []
    for name, value, default in (("deal", deal, 1), ("trick", trick, 0), ("card", card, None)):
        if value is None:
            out.append(default)
            continue
        try:
            out.append(int(value))
        except ValueError:
            raise BadQuery(f"bad {name} {value[:40]!r}: a whole number") from None
    d, t, c = out
    assert d is not None and t is not None
    return d, t, c


__all__ = ["position", "parse_position", "card_view", "steps", "query", "places", "PLACES",
           "Position", "CardView", "TableCard", "Taken"]
