"""Perfect-information play for the ``pimc`` bot: a fast rollout policy and an exact endgame solver.

Both work on a light state, not the engine: four hands as bit masks (bit ``c`` set = card
``c`` held, as in :mod:`sueca.engine.cards`), the trump suit, the leader of the current trick
and the cards already on it. With every hand known, a question such as "can the next opponent
still beat this card" is one mask test, which is what makes thousands of rollouts a second
possible in Python.

* :func:`rollout` plays a deal to its end, each seat playing with the habits of
  :class:`~sueca.sdk.bots.heuristic.HeuristicBot` (cash sure winners, smear the partner's safe
  tricks, take an opponent's trick with the cheapest card that cannot be beaten, trump only
  tricks worth it, lead to a partner who holds the master) made exact by seeing every hand.
* :func:`solve` is an alpha-beta search with a transposition table over the last tricks:
  the card points the side to move can be sure of against best play. Cards that are
  interchangeable (same suit, same points, no other hand holds a card between them) are
  searched once.

Who wins a trick is the engine's rule (:func:`sueca.engine.trick_keys`); the tests compare the
solver with a brute-force search of every line of play.
"""

from __future__ import annotations

from sueca.engine import trick_keys
from sueca.engine.cards import POINTS, SUIT_MASKS

__all__ = ["close_trick", "rollout", "solve"]

TRUMP_WORTH = 4  # card points a trick must carry before a side card is trumped (as heuristic)

_KEYS = tuple(tuple(trick_keys(t, led) for led in range(4)) for t in range(4))
_SUIT_OF = tuple(c // 10 for c in range(40))
_RANK = tuple(c % 10 for c in range(40))


def _above_key(trump: int, led: int) -> tuple[int, ...]:
    """Masks of the cards whose trick key beats key k, indexed by k + 1 (k = -1 .. 29)."""
    keys = _KEYS[trump][led]
    return tuple(sum(1 << c for c in range(40) if keys[c] > k) for k in range(-1, 30))


# _ABOVE[trump][led][k + 1]: the cards that would beat a trick whose best key is k
_ABOVE = tuple(tuple(_above_key(t, led) for led in range(4)) for t in range(4))
# the cost of throwing a card away: its points, then its rank; trumps are dearest
_COST = tuple(tuple(POINTS[c] * 16 + _RANK[c] + (400 + 16 * _RANK[c] if _SUIT_OF[c] == t else 0)
                    for c in range(40)) for t in range(4))


def close_trick(trump: int, leader: int, trick: list[int]) -> tuple[int, int]:
    """The winning seat and the card points of a full trick (four cards, ``leader`` first)."""
    keys = _KEYS[trump][_SUIT_OF[trick[0]]]
    best, pos = -2, 0
    for i, c in enumerate(trick):
        if keys[c] > best:
            best, pos = keys[c], i
    return (leader + pos) & 3, POINTS[trick[0]] + POINTS[trick[1]] + POINTS[trick[2]] + POINTS[trick[3]]


def _cheapest(hand: int, trump: int) -> int:
    """The card of ``hand`` that hurts least to give away (see ``_COST``)."""
    cost = _COST[trump]
    best, best_cost = -1, 1 << 30
    for s in range(4):
        m = hand & SUIT_MASKS[s]
        if m:
            c = (m & -m).bit_length() - 1
            if cost[c] < best_cost:
                best, best_cost = c, cost[c]
    return best


def _follow(hand: int, follow: int, next_hand: int, trump: int, led: int, win_key: int,
            partner_wins: bool, pts: int, n: int) -> int:
    """The card a follower chooses, seeing every hand: ``n`` cards are on the trick (worth
    ``pts``), the best with key ``win_key``; ``next_hand`` is the next seat's, the only
    opponent still to play when ``n`` < 3. ``hand`` holds more than one legal card."""
    trump_mask = SUIT_MASKS[trump]
    opp_key = -1
    if n < 3:
        keys = _KEYS[trump][led]
        f = next_hand & SUIT_MASKS[led]
        if f:
            opp_key = keys[f.bit_length() - 1]
        else:
            t = next_hand & trump_mask
            if t:
                opp_key = keys[t.bit_length() - 1]
    if partner_wins and opp_key < win_key:  # the partner's trick is safe: give it points
        give = follow or (hand & ~trump_mask)
        if give:
            top = -1
            for s in range(4):
                m = give & SUIT_MASKS[s]
                if m:
                    c = m.bit_length() - 1
                    if top < 0 or POINTS[c] > POINTS[top]:
                        top = c
            if POINTS[top] > 0:
                return top
        return (follow & -follow).bit_length() - 1 if follow else _cheapest(hand, trump)
    winners = (follow or hand) & _ABOVE[trump][led][(win_key if win_key > opp_key else opp_key) + 1]
    if winners:
        c = (winners & -winners).bit_length() - 1
        if led == trump or _SUIT_OF[c] != trump or pts >= TRUMP_WORTH or n == 1:
            return c
    return (follow & -follow).bit_length() - 1 if follow else _cheapest(hand, trump)


def _lead(hands: list[int], seat: int, trump: int, hand: int, trump_mask: int) -> int:
    """Leading: cash the sure winner worth most, else lead low to a partner who holds the
    master of a suit, else lead the cheapest card."""
    left, right, partner = hands[(seat + 1) & 3], hands[(seat + 3) & 3], hands[seat ^ 2]
    sure, sure_pts = -1, -1
    to_partner, to_partner_cost = -1, 1 << 30
    cost = _COST[trump]
    for s in range(4):
        suit = SUIT_MASKS[s]
        mine = hand & suit
        if not mine:
            continue
        top = mine.bit_length() - 1
        best_out = max((left & suit).bit_length(), (right & suit).bit_length()) - 1
        ruffed = s != trump and ((not left & suit and left & trump_mask)
                                 or (not right & suit and right & trump_mask))
        if top > best_out and not ruffed:
            p = POINTS[top] * 2 + (s != trump)
            if p > sure_pts:
                sure, sure_pts = top, p
        elif s != trump and not ruffed and (partner & suit).bit_length() - 1 > best_out:
            low = (mine & -mine).bit_length() - 1
            if cost[low] < to_partner_cost:
                to_partner, to_partner_cost = low, cost[low]
    if sure >= 0 and sure_pts > 1:
        return sure
    if to_partner >= 0:
        return to_partner
    if sure >= 0:
        return sure
    return _cheapest(hand, trump)


def rollout(hands: list[int], trump: int, leader: int, trick: list[int]) -> int:
    """Play to the end of the deal, every seat choosing as described above (cash sure winners,
    smear, take tricks cheaply); the card points team 0 takes from here on (the cards on
    ``trick`` included). ``hands`` is used up."""
    gained = 0
    keys_by_led = _KEYS[trump]
    trump_mask = SUIT_MASKS[trump]
    n = len(trick)
    led = win_key = win_seat = pts = 0
    keys = keys_by_led[0]
    if n:
        led = _SUIT_OF[trick[0]]
        keys = keys_by_led[led]
        win_key = -1
        for i, c in enumerate(trick):
            pts += POINTS[c]
            if keys[c] > win_key:
                win_key, win_seat = keys[c], (leader + i) & 3
    while True:
        if not n:
            hand = hands[leader]
            if not hand:
                return gained
            c = _lead(hands, leader, trump, hand, trump_mask)
            hands[leader] = hand ^ (1 << c)
            led = _SUIT_OF[c]
            keys = keys_by_led[led]
            win_key, win_seat, pts, n = keys[c], leader, POINTS[c], 1
        seat = (leader + n) & 3
        hand = hands[seat]
        follow = hand & SUIT_MASKS[led]
        legal = follow or hand
        if legal & (legal - 1):
            c = _follow(hand, follow, hands[(seat + 1) & 3], trump, led, win_key,
                        win_seat == seat ^ 2, pts, n)
        else:
            c = legal.bit_length() - 1
        hands[seat] = hand ^ (1 << c)
        pts += POINTS[c]
        if keys[c] > win_key:
            win_key, win_seat = keys[c], seat
        n += 1
        if n == 4:
            if not win_seat & 1:
                gained += pts
            leader, n = win_seat, 0


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
