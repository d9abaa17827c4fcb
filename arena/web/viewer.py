"""The replay viewer's model: one position of a recorded match, from its ``sueca-replay/1`` record.

A position is (deal, trick), both 1-based as the page shows them: trick 0 is the deal as dealt
(four full hands, the turned trump, nothing played), trick ``t`` is the table once the ``t``-th
trick is complete — its four cards in play order, who took it, the hands without every card
played so far, the deal's running card points and the match's game points. The page for a
position is one URL (``?deal=2&trick=5``), so a position can be shared and every step is a plain
link (the keyboard only follows them).
"""

from __future__ import annotations

from typing import Any

from .data import BadQuery

SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
SUIT_ORDER = "CDHS"
RANK_ORDER = "23456QJK7A"  # Sueca's order within a suit, low to high


def card_view(name: str) -> dict[str, Any]:
    rank, suit = name[:-1], name[-1:]
    return {"name": name, "rank": rank, "suit": SUITS.get(suit, suit),
            "red": suit in ("D", "H")}


def _sort_key(name: str) -> tuple[int, int]:
    rank, suit = name[:-1], name[-1:]
    return (SUIT_ORDER.find(suit), RANK_ORDER.find(rank))


def position(record: dict[str, Any], deal: int, trick: int) -> dict[str, Any]:
    """The view of (deal, trick) in ``record``; :class:`BadQuery` names a position that is not
    in it."""
    deals = record.get("deals") or []
    if not 1 <= deal <= len(deals):
        raise BadQuery(f"bad deal {deal!r}: this match has deals 1 to {len(deals)}")
    d = deals[deal - 1]
    tricks = d.get("tricks") or []
    if not 0 <= trick <= len(tricks):
        raise BadQuery(f"bad trick {trick!r}: deal {deal} has tricks 0 to {len(tricks)}")
    played: set[str] = set()
    points = [0, 0]
    taken = []
    for n, t in enumerate(tricks[:trick], 1):
        played.update(t.get("cards") or [])
        w = t.get("winner")
        if w is not None:
            points[w & 1] += int(t.get("points") or 0)
        taken.append({"n": n, "winner": w, "points": t.get("points", 0)})
    cross = [0, 0]
    for earlier in deals[:deal - 1]:
        gp = earlier.get("game_points") or [0, 0]
        cross = [cross[0] + gp[0], cross[1] + gp[1]]
    last = trick == len(tricks)
    gp = d.get("game_points") or [0, 0]
    after = [cross[0] + gp[0], cross[1] + gp[1]] if last else None
    table: list[dict[str, Any] | None] = [None] * 4
    current = tricks[trick - 1] if trick else None
    if current is not None:
        leader = int(current.get("leader", 0))
        for i, c in enumerate(current.get("cards") or []):
            table[(leader + i) & 3] = {**card_view(c), "order": i + 1}
    hands = [[{**card_view(c), "played": c in played} for c in sorted(hand, key=_sort_key)]
             for hand in d.get("hands") or [[]] * 4]
    n_deals = len(deals)
    prev = (deal, trick - 1) if trick > 0 else (
        (deal - 1, len(deals[deal - 2].get("tricks") or [])) if deal > 1 else None)
    nxt = (deal, trick + 1) if trick < len(tricks) else ((deal + 1, 0) if deal < n_deals else None)
    return {
        "deal": deal, "trick": trick, "deals": n_deals, "tricks": len(tricks),
        "dealer": d.get("dealer"), "trump": card_view(str(d.get("trump", "??"))),
        "hands": hands, "table": table,
        "leader": None if current is None else current.get("leader"),
        "winner": None if current is None else current.get("winner"),
        "trick_points": None if current is None else current.get("points"),
        "taken": taken, "points": points, "cross_before": cross, "cross_after": after,
        "deal_points": d.get("points") if last else None, "deal_end": d.get("end") if last else None,
        "fault_seat": d.get("fault_seat") if last else None,
        "prev": prev, "next": nxt,
        "prev_deal": (deal - 1, 0) if deal > 1 else None,
        "next_deal": (deal + 1, 0) if deal < n_deals else None,
        "first": (1, 0), "last": (n_deals, len(deals[-1].get("tricks") or [])),
    }


def parse_position(deal: str | None, trick: str | None) -> tuple[int, int]:
    """``?deal=`` and ``?trick=`` as numbers (default deal 1, trick 0)."""
    out = []
    for name, value, default in (("deal", deal, 1), ("trick", trick, 0)):
        if value is None:
            out.append(default)
            continue
        try:
            out.append(int(value))
        except ValueError:
            raise BadQuery(f"bad {name} {value[:40]!r}: a whole number") from None
    return out[0], out[1]


__all__ = ["position", "parse_position", "card_view"]
