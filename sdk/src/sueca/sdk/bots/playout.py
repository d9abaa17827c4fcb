"""The ``pimc`` bot's rollout: a sampled deal played to its end by four ``heuristic`` players.

:func:`playout` plays the rules of :class:`~sueca.sdk.bots.heuristic.HeuristicBot` card for
card, each seat deciding only from what it could see at the table: its own hand, the cards
played, the suits each seat has shown out of and the turned trump while the dealer holds it.
It does not peek at the other hands of the sampled deal, which is what makes a
perfect-information Monte Carlo player strong: the rollout plays as real players would, not as
a side that sees every card. The state is light (hands as bit masks, bit ``c`` = card ``c`` as
in :mod:`sueca.engine.cards`), so a whole deal costs well under a millisecond in Python.

The tests play ``heuristic`` and :func:`playout` side by side from the same positions and
check they pick the same card every time.
"""

from __future__ import annotations

from sueca.engine import Observation, trick_keys
from sueca.engine.cards import POINTS, SUIT_MASKS

__all__ = ["history", "likelihood", "playout"]

TRUMP_WORTH = 4  # card points a trick must carry before a side card is trumped (as heuristic)
_SEVEN, _ACE = 8, 9

_KEYS = tuple(tuple(trick_keys(t, led) for led in range(4)) for t in range(4))
_SUIT_OF = tuple(c // 10 for c in range(40))
_RANK = tuple(c % 10 for c in range(40))
_ABOVE = tuple(SUIT_MASKS[c // 10] & ~((2 << c) - 1) for c in range(40))  # same suit, higher
_ALL = (1 << 40) - 1
# heuristic's cost of giving a card away, as points * 16 + rank, before the guarded-7 extra
_DEAR = tuple(tuple((POINTS[c] + (6 + _RANK[c] if _SUIT_OF[c] == t else 0)) * 16 + _RANK[c]
                    for c in range(40)) for t in range(4))
_GUARD = 15 * 16  # a 7 whose ace is still out costs this much more


def _cost(c: int, trump: int, unseen: int) -> int:
    if _RANK[c] == _SEVEN and unseen >> (c + 1) & 1:
        return _DEAR[trump][c] + _GUARD
    return _DEAR[trump][c]


def _cheapest(legal: int, trump: int, unseen: int) -> int:
    best, best_cost = -1, 1 << 30
    m = legal
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        k = _cost(c, trump, unseen)
        if k < best_cost:
            best, best_cost = c, k
    return best


def _could_beat(seat: int, c: int, led: int, trump: int, void: int, held: int) -> bool:
    """Could ``seat`` (shown voids ``void``, cards it may hold ``held``) beat card c?"""
    if _SUIT_OF[c] == trump:
        if not held & _ABOVE[c] or void >> trump & 1:
            return False
        return led == trump or bool(void >> led & 1)
    if not void >> led & 1:
        return bool(held & _ABOVE[c])
    return bool(held & SUIT_MASKS[trump]) and not void >> trump & 1


def _lead(seat: int, hand: int, unseen: int, void: list[int], trump: int) -> int:
    tmask = SUIT_MASKS[trump]
    mine, out = hand & tmask, unseen & tmask
    if mine and out:
        top = mine.bit_length() - 1
        if not unseen & _ABOVE[top] and mine.bit_count() >= out.bit_count():
            return top  # draw trumps while holding the top one
    v1, v3, vp = void[(seat + 1) & 3], void[(seat + 3) & 3], void[seat ^ 2]
    cash, cash_key = -1, -1
    for s in range(4):
        if s == trump or not hand & SUIT_MASKS[s]:
            continue
        for c in (s * 10 + _SEVEN, s * 10 + _ACE):
            if hand >> c & 1 and not unseen & _ABOVE[c]:
                ruffable = out and ((v1 >> s & 1 and not v1 >> trump & 1)
                                    or (v3 >> s & 1 and not v3 >> trump & 1))
                if not ruffable and (not out or (unseen & SUIT_MASKS[s]).bit_count() >= 3):
                    k = POINTS[c] * 64 + c
                    if k > cash_key:
                        cash, cash_key = c, k
    if cash >= 0:
        return cash
    best, best_key = -1, 1 << 30
    m = hand
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        s = _SUIT_OF[c]
        opp_ruffs = bool(out) and bool((v1 | v3) >> s & 1)
        partner_ruffs = not opp_ruffs and bool(vp >> s & 1)
        dear = _cost(c, trump, unseen) >> 4
        k = (opp_ruffs * 1000 + dear - 3 * partner_ruffs + 100) * 16 + _RANK[c]
        if k < best_key:
            best, best_key = c, k
    return best


def _smear(legal: int, trump: int, unseen: int) -> int:
    best, best_key, best_value = -1, -(1 << 30), 0
    m = legal
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        v = POINTS[c]
        if _SUIT_OF[c] == trump:
            v -= 10
        elif _RANK[c] == _SEVEN and unseen >> (c + 1) & 1:
            v += 5
        elif _RANK[c] == _ACE and not unseen & _ABOVE[c]:
            v -= 2
        k = v * 16 + 15 - _RANK[c]
        if k > best_key:
            best, best_key, best_value = c, k, v
    return best if best_value > 0 else _cheapest(legal, trump, unseen)


def playout(hands: list[int], trump: int, leader: int, trick: list[int], void: list[int],
            dealer: int, trump_card: int) -> int:
    """Play to the end of the deal as four ``heuristic`` players; the card points team 0
    takes from here on (the cards on ``trick`` included). ``void`` holds the suits each seat
    has shown out of so far (the trick on the table included); the turned trump
    ``trump_card`` counts as known to be the dealer's while ``hands[dealer]`` holds it.
    ``hands`` and ``void`` are used up."""
    gained = 0
    played = _ALL & ~(hands[0] | hands[1] | hands[2] | hands[3])  # trick cards included
    n = len(trick)
    cards = list(trick)
    known = 1 << trump_card
    while True:
        seat = (leader + n) & 3
        hand = hands[seat]
        if not hand:
            return gained
        c = _choose(seat, hand, cards, leader, played, void, trump, dealer,
                    known if hands[dealer] & known and dealer != seat else 0)
        if n and _SUIT_OF[c] != _SUIT_OF[cards[0]]:
            void[seat] |= 1 << _SUIT_OF[cards[0]]
        hands[seat] = hand ^ (1 << c)
        played |= 1 << c
        cards.append(c)
        n += 1
        if n == 4:
            win_pos, pts = _winning(cards, _KEYS[trump][_SUIT_OF[cards[0]]])
            leader = (leader + win_pos) & 3
            if not leader & 1:
                gained += pts
            cards = []
            n = 0


def _winning(cards: list[int], keys: tuple[int, ...]) -> tuple[int, int]:
    """The position of the card winning ``cards`` so far, and the points on them."""
    win_pos = 0
    pts = 0
    for i, x in enumerate(cards):
        pts += POINTS[x]
        if keys[x] > keys[cards[win_pos]]:
            win_pos = i
    return win_pos, pts


def _choose(seat: int, hand: int, cards: list[int], leader: int, played: int, void: list[int],
            trump: int, dealer: int, held_by: int) -> int:
    """The card ``heuristic`` plays at ``seat`` holding ``hand``, with ``cards`` on the table
    (led by ``leader``), ``played`` every card seen so far (the table's included), ``void`` the
    suits each seat has shown out of and ``held_by`` the turned trump's bit while another seat,
    the dealer, is known to hold it (else 0)."""
    n = len(cards)
    unseen = _ALL & ~played & ~hand
    if not n:
        return _lead(seat, hand, unseen, void, trump)
    led = _SUIT_OF[cards[0]]
    follow = hand & SUIT_MASKS[led]
    legal = follow or hand
    if not legal & (legal - 1):
        return legal.bit_length() - 1
    keys = _KEYS[trump][led]
    win_pos, pts = _winning(cards, keys)
    win_card = cards[win_pos]
    win_seat = (leader + win_pos) & 3
    # opponents still to play after this seat: the next one (when n < 3) and, when n == 1,
    # the partner plays between: only seat + 1 and seat + 3 matter
    opponents = [(seat + 1) & 3] if n < 3 else []
    if win_seat == seat ^ 2:
        for o in opponents:
            held = unseen & ~held_by if held_by and o != dealer else unseen
            if _could_beat(o, win_card, led, trump, void[o], held):
                return _cheapest(legal, trump, unseen)
        return _smear(legal, trump, unseen)
    win_key = keys[win_card]
    beaters = []
    m = legal
    while m:
        low = m & -m
        x = low.bit_length() - 1
        m ^= low
        if keys[x] > win_key:
            ok = True
            for o in opponents:
                held = unseen & ~held_by if held_by and o != dealer else unseen
                if _could_beat(o, x, led, trump, void[o], held):
                    ok = False
            if ok:
                beaters.append((_cost(x, trump, unseen), x))
    beaters.sort()
    partner_to_play = n == 1
    for _, x in beaters:
        if _SUIT_OF[x] == trump and led != trump:
            if pts < TRUMP_WORTH and not partner_to_play:
                continue
            if _RANK[x] == _SEVEN and unseen >> (x + 1) & 1 and pts < 10:
                continue
        return x
    return _cheapest(legal, trump, unseen)


def history(obs: Observation) -> list[tuple[int, list[int]]]:
    """The deal's play so far as (leader, cards) per trick, the trick on the table last."""
    out = [(t.leader, [int(c) for c in t.cards]) for t in obs.tricks]
    if obs.trick:
        out.append((obs.leader, [int(c) for _, c in obs.trick]))
    return out


def likelihood(hands: list[int], plays: list[tuple[int, list[int]]], judged: int,
               model: tuple[int, int, int, float]) -> float:
    """How likely the plays so far of the seats in ``judged`` (a bit per seat) were, had they
    held ``hands`` (now, in bit masks) and played ``heuristic`` with a tremble: each play counts
    ``1 - eps`` when it is ``heuristic``'s card in that seat's place (its own hand then and the
    public play only), ``eps`` shared among the other legal cards when it is not; a forced card
    counts 1. ``model`` is (trump suit, dealer, turned trump card, eps); ``plays`` as
    :func:`history`."""
    trump, dealer, trump_card, eps = model
    start = hands[:]
    for leader, cards in plays:
        for i, c in enumerate(cards):
            start[(leader + i) & 3] |= 1 << c
    known = 1 << trump_card
    played = 0
    void = [0, 0, 0, 0]
    w = 1.0
    hit = 1.0 - eps
    for leader, cards in plays:
        table: list[int] = []
        led = _SUIT_OF[cards[0]]
        for i, c in enumerate(cards):
            seat = (leader + i) & 3
            hand = start[seat]
            if judged >> seat & 1:
                legal = ((hand & SUIT_MASKS[led]) or hand) if table else hand
                n = legal.bit_count()
                if n > 1:
                    held_by = known if start[dealer] & known and dealer != seat else 0
                    if _choose(seat, hand, table, leader, played, void, trump, dealer,
                               held_by) == c:
                        w *= hit
                    else:
                        w *= eps / (n - 1)
            if table and _SUIT_OF[c] != led:
                void[seat] |= 1 << led
            start[seat] = hand ^ (1 << c)
            played |= 1 << c
            table.append(c)
    return w
