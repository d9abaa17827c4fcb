"""The exact endgame of the ``pimc`` bot: perfect-information play over the last tricks.

It works on a light state, not the engine: four hands as bit masks (bit ``c`` set = card
``c`` held, as in :mod:`sueca.engine.cards`), the trump suit, the leader of the current trick
and the cards already on it. :func:`solve` is an alpha-beta search with a transposition table
at the start of each trick: the card points team 0 takes against best play by both teams.
Cards that are interchangeable (same suit, same points, no other hand holds a card between
them) are searched once.

Who wins a trick is the engine's rule (:func:`sueca.engine.trick_keys`); the tests compare the
solver with a brute-force search of every line of play.
"""

from __future__ import annotations

from sueca.engine import trick_keys
from sueca.engine.cards import POINTS, SUIT_MASKS

__all__ = ["close_trick", "solve"]

_KEYS = tuple(tuple(trick_keys(t, led) for led in range(4)) for t in range(4))
_SUIT_OF = tuple(c // 10 for c in range(40))


def close_trick(trump: int, leader: int, trick: list[int]) -> tuple[int, int]:
    """The winning seat and the card points of a full trick (four cards, ``leader`` first)."""
    keys = _KEYS[trump][_SUIT_OF[trick[0]]]
    best, pos = -2, 0
    for i, c in enumerate(trick):
        if keys[c] > best:
            best, pos = keys[c], i
    return (leader + pos) & 3, POINTS[trick[0]] + POINTS[trick[1]] + POINTS[trick[2]] + POINTS[trick[3]]


def _moves(hands: list[int], seat: int, legal: int) -> list[int]:
    """The legal cards worth searching, high first: of interchangeable cards (same suit, same
    points, no other hand holding a card between them) only the highest."""
    others = hands[(seat + 1) & 3] | hands[(seat + 2) & 3] | hands[(seat + 3) & 3]
    out = []
    prev = -1
    m = legal
    while m:
        c = m.bit_length() - 1
        m ^= 1 << c
        if (prev >= 0 and _SUIT_OF[prev] == _SUIT_OF[c] and POINTS[prev] == POINTS[c]
                and not others & ((1 << prev) - (2 << c))):
            prev = c
            continue
        out.append(c)
        prev = c
    return out


def solve(hands: list[int], trump: int, leader: int, trick: list[int],
          table: dict[tuple[int, ...], tuple[int, int]] | None = None) -> int:
    """The card points team 0 takes from here on (the trick on the table included) when
    both teams play perfectly. ``table`` may be shared between calls on the same deal.
    ``hands`` and ``trick`` are restored before returning."""
    return _search(hands, trump, leader, trick, -1, 121, {} if table is None else table)


def _search(hands: list[int], trump: int, leader: int, trick: list[int], alpha: int, beta: int,
            table: dict[tuple[int, ...], tuple[int, int]]) -> int:
    n = len(trick)
    key: tuple[int, ...] = ()
    if not n:
        if not hands[leader]:
            return 0
        key = (hands[0], hands[1], hands[2], hands[3], leader)
        bounds = table.get(key)
        if bounds is not None:
            lo, hi = bounds
            if lo == hi or lo >= beta:
                return lo
            if hi <= alpha:
                return hi
            if lo > alpha:
                alpha = lo
            if hi < beta:
                beta = hi
    alpha0, beta0 = alpha, beta
    seat = (leader + n) & 3
    hand = hands[seat]
    legal = (hand & SUIT_MASKS[_SUIT_OF[trick[0]]] or hand) if n else hand
    maximize = not seat & 1
    best = -1 if maximize else 121
    for c in _moves(hands, seat, legal):
        hands[seat] = hand ^ (1 << c)
        trick.append(c)
        if n == 3:
            winner, pts = close_trick(trump, leader, trick)
            got = 0 if winner & 1 else pts
            v = got + _search(hands, trump, winner, [], alpha - got, beta - got, table)
        else:
            v = _search(hands, trump, leader, trick, alpha, beta, table)
        trick.pop()
        hands[seat] = hand
        if maximize:
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
        elif v < best:
            best = v
            if v < beta:
                beta = v
        if alpha >= beta:
            break
    if not n:
        old = table.get(key, (-1, 121))
        if best <= alpha0:
            table[key] = (old[0], min(old[1], best))
        elif best >= beta0:
            table[key] = (max(old[0], best), old[1])
        else:
            table[key] = (best, best)
    return best
