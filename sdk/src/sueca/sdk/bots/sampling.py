"""Determinization for the ``pimc`` bot: deal the unseen cards to the other three seats, every
deal consistent with what the observation shows.

What one seat knows (:func:`knowledge`): its own hand; every card played (finished tricks and
the trick on the table); how many cards each seat still holds (ten minus what it has played);
the suits each seat has shown out of (a seat that did not follow the led suit holds none of it);
and the turned trump card, in the dealer's hand for as long as ``trump_held`` says so.

:func:`sample` deals the unseen cards without ever rejecting a deal: cards whose suit only one
seat may hold go there; cards two seats may hold are dealt one at a time, each to a seat chosen
in proportion to its free places among the seats that keep the rest of the deal possible (a
check of Hall's condition, three comparisons for three seats); the cards any seat may hold are
shuffled into the places left. Every deal it returns honours every constraint; the deals are
close to uniform over the consistent ones (exactly uniform when no seat has shown a void).
"""

from __future__ import annotations

import random
from typing import NamedTuple

from sueca.engine import Observation, trick_keys
from sueca.engine.cards import FULL_DECK, SUIT_MASKS

__all__ = ["Knowledge", "SamplingError", "knowledge", "sample"]

_SUIT_OF = tuple(c // 10 for c in range(40))


class SamplingError(ValueError):
    """An observation no deal can satisfy (never from a real referee): the message says why."""


class Knowledge(NamedTuple):
    """What ``seat`` knows of the hidden hands."""

    seat: int
    hands: tuple[int, int, int, int]  # cards known to be in each hand (own hand, the turned trump)
    unseen: int                       # cards not seen anywhere: to be dealt
    need: tuple[int, int, int, int]   # cards still to deal to each seat
    void: tuple[int, int, int, int]   # per seat, a bit per suit it has shown out of
    barred: tuple[int, int, int, int] = (0, 0, 0, 0)  # per seat, cards inferred not held


def knowledge(obs: Observation, infer: bool = False) -> Knowledge:
    """The constraints the observation carries on the other seats' hands; with ``infer``,
    also what their play suggests (:func:`_inferred`)."""
    me = obs.seat
    played = 0
    count = [0, 0, 0, 0]
    void = [0, 0, 0, 0]
    for t in obs.tricks:
        led = _SUIT_OF[t.cards[0]]
        for i, c in enumerate(t.cards):
            s = (t.leader + i) & 3
            played |= 1 << c
            count[s] += 1
            if _SUIT_OF[c] != led:
                void[s] |= 1 << led
    trick = obs.trick
    if trick:
        led = _SUIT_OF[trick[0][1]]
        for s, c in trick:
            played |= 1 << c
            count[s] += 1
            if _SUIT_OF[c] != led:
                void[s] |= 1 << led
    mine = 0
    for c in obs.hand:
        mine |= 1 << c
    hands = [0, 0, 0, 0]
    hands[me] = mine
    need = [10 - k for k in count]
    need[me] = 0
    unseen = FULL_DECK & ~played & ~mine
    dealer = obs.dealer
    if obs.trump_held and dealer != me:
        bit = 1 << obs.trump
        hands[dealer] |= bit
        unseen &= ~bit
        need[dealer] -= 1
    if sum(need) != unseen.bit_count() or min(need) < 0:
        raise SamplingError(f"inconsistent observation for seat {me}: {unseen.bit_count()} unseen "
                            f"cards for hand sizes {need}")
    barred = _inferred(obs) if infer else (0, 0, 0, 0)
    return Knowledge(me, (hands[0], hands[1], hands[2], hands[3]), unseen,
                     (need[0], need[1], need[2], need[3]), (void[0], void[1], void[2], void[3]),
                     barred)


def _inferred(obs: Observation) -> tuple[int, int, int, int]:
    """Cards a seat is taken not to hold because of how it played: a seat that played last to
    a trick an opponent was winning with a card of the led suit, and followed suit without
    beating it, holds no card of that suit above the winning one (a player who can take the
    trick for sure, in suit, does; ``heuristic`` always does)."""
    barred = [0, 0, 0, 0]
    for t in obs.tricks:
        cards = t.cards
        if len(cards) != 4:
            continue
        led = _SUIT_OF[cards[0]]
        keys = trick_keys(obs.trump_suit, led)
        best = max((0, 1, 2), key=lambda i: keys[cards[i]])
        last = cards[3]
        win = cards[best]
        if best != 1 and _SUIT_OF[win] == led and _SUIT_OF[last] == led and last < win:
            barred[(t.leader + 3) & 3] |= SUIT_MASKS[led] & ~((2 << win) - 1)
    barred[obs.seat] = 0
    return barred[0], barred[1], barred[2], barred[3]


def sample(k: Knowledge, rng: random.Random) -> list[int]:
    """Four hands (bit masks): the known cards plus the unseen ones dealt at random to the other
    seats, every seat getting its count and no seat a card of a suit it has shown out of."""
    others = [s for s in (0, 1, 2, 3) if s != k.seat]
    free = [k.need[s] for s in others]
    hands = [k.hands[0], k.hands[1], k.hands[2], k.hands[3]]
    # the seats (as a 3-bit set over ``others``) that may hold each suit, and those barred
    # from each card by inference
    allowed = [sum(1 << j for j in range(3) if not k.void[others[j]] >> s & 1 and free[j])
               for s in range(4)]
    barred = [k.barred[s] for s in others]
    inferred = barred[0] | barred[1] | barred[2]
    anyone: list[int] = []
    two: list[tuple[int, int]] = []
    pair_count = [0] * 8  # cards still to deal, by pair of seats that may hold them
    m = k.unseen
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        who = allowed[_SUIT_OF[c]]
        if inferred & low:
            who &= ~((barred[0] & low and 1) | (barred[1] & low and 2) | (barred[2] & low and 4))
        if who == 7:
            anyone.append(c)
        elif who in (3, 5, 6):
            two.append((c, who))
            pair_count[who] += 1
        elif who:
            j = who.bit_length() - 1
            hands[others[j]] |= low
            free[j] -= 1
        else:
            raise SamplingError(f"no seat may hold card {c}: every other seat is void in its "
                                "suit or barred from it")
    if min(free) < 0 or pair_count[3] > free[0] + free[1] or pair_count[5] > free[0] + free[2] \
            or pair_count[6] > free[1] + free[2]:
        raise SamplingError(f"no deal fits the shown voids and hand sizes for seat {k.seat}")
    rng.shuffle(two)
    for c, who in two:
        pair_count[who] -= 1
        a = who & -who
        b = who ^ a
        ja, jb = a.bit_length() - 1, b.bit_length() - 1
        ok_a = free[ja] > 0 and _fits(pair_count, free, ja)
        ok_b = free[jb] > 0 and _fits(pair_count, free, jb)
        if ok_a and ok_b:
            j = ja if rng.random() * (free[ja] + free[jb]) < free[ja] else jb
        else:
            j = ja if ok_a else jb
        hands[others[j]] |= 1 << c
        free[j] -= 1
    rng.shuffle(anyone)
    i = 0
    for j in range(3):
        for c in anyone[i:i + free[j]]:
            hands[others[j]] |= 1 << c
        i += free[j]
    return hands


def _fits(pair_count: list[int], free: list[int], j: int) -> bool:
    """Whether the cards still to deal to pairs of seats fit once seat ``j`` takes one more."""
    free[j] -= 1
    ok = (pair_count[3] <= free[0] + free[1] and pair_count[5] <= free[0] + free[2]
          and pair_count[6] <= free[1] + free[2])
    free[j] += 1
    return ok
