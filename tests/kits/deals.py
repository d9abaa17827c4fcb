"""Helpers for the engine tests: decks built from wanted hands, scripted deals, state capture.

The rule knowledge here (rank order, points, who takes a trick) is written out again from
docs/rules.md on purpose, independent of the engine, so the tests check the engine against the rules
and not against itself. Cards are handled as text ("AS", "7H") on this side.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from sueca.engine import CARDS, Card, Deal, Match, card

ROOT_DIR = str(Path(__file__).resolve().parents[2])  # the repository root
SUIT_LETTERS = "CDHS"
HIGH_TO_LOW = "A7KJQ65432"  # docs/rules.md § Cards; 000, 001, 002, 003
RANK_POINTS = {"A": 11, "7": 10, "K": 4, "J": 3, "Q": 2, "6": 0, "5": 0, "4": 0, "3": 0, "2": 0}
ALL_TEXTS = [r + s for s in SUIT_LETTERS for r in HIGH_TO_LOW]


def cs(text: str) -> list[Card]:
    """``"AS 7H"`` -> [AS, 7H] as engine cards."""
    return [card(t) for t in text.split()]


def points_of(texts: Iterable[object]) -> int:
    return sum(RANK_POINTS[str(t)[0]] for t in texts)


def beats(a: str, b: str) -> bool:
    """Same suit: does a rank above b? (docs/rules.md § Cards: A 7 K J Q 6 5 4 3 2)."""
    return HIGH_TO_LOW.index(a[0]) < HIGH_TO_LOW.index(b[0])


def trick_winner(leader: int, cards: Sequence[object], trump_suit: str) -> int:
    """Seat taking a full trick: highest trump if any, else highest card of the led suit."""
    texts = [str(c) for c in cards]
    best = 0
    for i in range(1, len(texts)):
        t, b = texts[i], texts[best]
        if t[1] == b[1]:
            if beats(t, b):
                best = i
        elif t[1] == trump_suit:  # a trump over a non-trump
            best = i
        # a card of neither the winning suit nor trump never wins
    return (leader + best) % 4


def build_deck(hands: Sequence[Iterable[object]], dealer: int, trump_card: str = "last",
               trump: object = None) -> list[Card]:
    """The 40-card deck (top first) that deals ``hands`` (by seat) with ``dealer``.

    ``last`` (docs/rules.md; 000-003): seats from the one after the dealer get deck[0:10], ...,
    the dealer deck[30:40]; the turned card is deck[39]. ``first`` (000, 001, 003): the dealer gets
    deck[0:10] and deck[0] is turned, then the seats after him in order. ``trump`` (a card of
    the dealer's hand) is put in the turned position; by default the dealer's hand order is kept.
    """
    hs = [[card(c) for c in h] for h in hands]
    assert all(len(h) == 10 for h in hs), [len(h) for h in hs]
    assert sorted(c for h in hs for c in h) == list(CARDS), "hands must hold the 40 cards once"
    mine = hs[dealer]
    if trump is not None:
        t = card(trump)
        assert t in mine, f"turned card {t} must be in the dealer's hand"
        mine.remove(t)
        mine = mine + [t] if trump_card == "last" else [t] + mine
    order = [(dealer + 1 + i) % 4 for i in range(4)] if trump_card == "last" else \
        [(dealer + i) % 4 for i in range(4)]
    deck: list[Card] = []
    for seat in order:
        deck += mine if seat == dealer else hs[seat]
    return deck


def hands_with(fixed: dict[int, Iterable[object]], seed: int = 0,
               avoid: dict[int, str] | None = None) -> list[list[Card]]:
    """Hands holding the ``fixed`` cards, the rest dealt at random (seeded). ``avoid[seat]``
    lists suit letters that seat must not get among the random cards."""
    rng = random.Random(seed)
    hands = [[card(c) for c in fixed.get(s, ())] for s in range(4)]
    used = {c for h in hands for c in h}
    rest = [c for c in CARDS if c not in used]
    rng.shuffle(rest)
    avoid = avoid or {}
    # seats with restrictions pick first so the others absorb what is left
    for s in sorted(range(4), key=lambda s: -len(avoid.get(s, ""))):
        bad = avoid.get(s, "")
        while len(hands[s]) < 10:
            pick = next(c for c in rest if str(c)[1] not in bad)
            rest.remove(pick)
            hands[s].append(pick)
    return hands


class Script(NamedTuple):
    dealer: int
    deck: list[Card]
    plays: list[Card]
    hands: list[list[Card]]
    winners: list[int]
    points: tuple[int, int]
    tricks_won: tuple[int, int]


def script(dealer: int, tricks: Sequence[str], trump: str, trump_card: str = "last") -> Script:
    """A whole deal written as ten tricks (cards in play order, the first led by the seat after
    the dealer). Seats are derived with the rules' own trick winner; returns the deck and plays."""
    trump_c = card(trump)
    hands: list[list[Card]] = [[], [], [], []]
    leader = (dealer + 1) % 4
    winners = []
    pts = [0, 0]
    won = [0, 0]
    plays: list[Card] = []
    for t in tricks:
        cards = cs(t)
        assert len(cards) == 4, t
        for i, c in enumerate(cards):
            hands[(leader + i) % 4].append(c)
        plays += cards
        leader = trick_winner(leader, cards, str(trump_c)[1])
        winners.append(leader)
        pts[leader % 2] += points_of(cards)
        won[leader % 2] += 1
    deck = build_deck(hands, dealer, trump_card, trump_c)
    return Script(dealer, deck, plays, hands, winners, (pts[0], pts[1]), (won[0], won[1]))


def play_all(game: Deal | Match, plays: Iterable[object]) -> list[Any]:
    """Play cards in order, checking each is fully legal first (no renúncia slips in)."""
    out = []
    for c in plays:
        game.verify_play(c)
        out.append(game.play(c))
    return out


# -- scripted deals (dealer 3, hearts trump; the seat after the dealer is seat 0) -----------------
# Every trick but the last two is four cards of one suit, so following suit is never in doubt.

TIE_60_60 = [  # 003: "60 : 60" -- the leader's team takes clubs and diamonds, the others the rest
    "AC 7C KC JC", "QC 6C 5C 4C", "AD 7D KD JD", "QD 6D 5D 4D",
    "7S AS KS JS", "QS 6S 5S 4S", "AH 7H KH JH", "QH 6H 5H 4H",
    "3D 3S 3H 3C", "2H 2C 2D 2S",
]
LEADER_62 = [  # the leader's team 62, the dealer's team 58 -> 1 game point (61-90)
    "AC 7C KC JC", "QC 6C 5C 4C", "AD 7D KD JD", "QD 6D 5D 4D",
    "7S AS KS JS", "4S 6S 5S QS", "JH AH 7H KH", "QH 6H 5H 4H",
    "3D 3S 3H 3C", "2H 2C 2D 2S",
]
DEALER_62 = [  # the dealer's team 62, the leader's team 58 -> 1 game point
    "7C AC KC JC", "QC 6C 5C 4C", "AD 7D KD JD", "QD 6D 5D 4D",
    "7S AS KS JS", "4S QS 6S 5S", "JH AH 7H KH", "QH 6H 5H 4H",
    "3D 3C 3S 3H", "2H 2D 2C 2S",
]
LEADER_BANDEIRA = [  # the leader takes every trick: 120 points, 10 tricks
    "AC 7C KC JC", "QC 6C 5C 4C", "AD 7D KD JD", "QD 6D 5D 4D",
    "AS 7S KS JS", "QS 6S 5S 4S", "AH 7H KH JH", "QH 6H 5H 4H",
    "3H 3C 3D 3S", "2H 2C 2D 2S",
]
LEADER_120_NOT_ALL = [  # 001: 120 points but one pointless trick lost (9 tricks)
    "AC 7C KC JC", "QC 6C 5C 4C", "AD 7D KD JD", "QD 6D 5D 4D",
    "AS 7S KS JS", "QS 6S 5S 4S", "AH 7H KH JH", "QH 6H 5H 4H",
    "3H 2H 3D 3S", "2C 3C 2D 2S",
]


def scripted(name: str, dealer: int = 3, trump_card: str = "last") -> Script:
    """One of the scripted deals above, dealt by ``dealer``: the trump is always a heart the
    dealer holds (the seats shift with the dealer, the tricks stay the same)."""
    tricks = globals()[name]
    # find a heart in the dealer's hand: derive hands with a placeholder trump suit first
    probe = script(dealer, tricks, "2H", trump_card) if _holds(dealer, tricks, "2H") else None
    if probe is not None:
        return probe
    for r in reversed(HIGH_TO_LOW):
        t = r + "H"
        if _holds(dealer, tricks, t):
            return script(dealer, tricks, t, trump_card)
    raise AssertionError(f"dealer {dealer} holds no heart in {name}")


def _holds(dealer: int, tricks: Sequence[str], text: str) -> bool:
    leader = (dealer + 1) % 4
    for t in tricks:
        cards = t.split()
        for i, c in enumerate(cards):
            if c == text:
                return (leader + i) % 4 == dealer
        leader = trick_winner(leader, cards, "H")
    return False


# -- state capture: an act that raises must leave all of this unchanged ---------------------------

def _freeze(value: Any) -> Any:
    if isinstance(value, Deal):
        return deal_state(value)
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, random.Random):
        return value.getstate()
    return value


def _slots(obj: Any) -> list[str]:
    names: list[str] = []
    for klass in type(obj).__mro__:
        for n in getattr(klass, "__slots__", ()):
            if n not in names and hasattr(obj, n):
                names.append(n)
    return names


def deal_state(deal: Deal) -> tuple[Any, ...]:
    return tuple((n, _freeze(getattr(deal, n))) for n in _slots(deal))


def match_state(match: Match) -> tuple[Any, ...]:
    return tuple((n, _freeze(getattr(match, n))) for n in _slots(match))


def state(game: Deal | Match) -> tuple[Any, ...]:
    return deal_state(game) if isinstance(game, Deal) else match_state(game)


# -- random games ----------------------------------------------------------------------------------

VARIANTS = [
    {"trump_card": tc, "tie": tie, "bandeira": b, "target": target, "weak_hand_redeal": weak}
    for tc in ("last", "first") for tie in ("carry", "none", "double")
    for b in ("all_tricks", "all_points") for target in (4, 8) for weak in (False, True)
]


def random_match(seed: int, variant: dict[str, Any], renuncia_rate: float = 0.004,
                 stop_rate: float = 0.0, on_turn: Any = None) -> Match:
    """A match played by random legal cards, now and then a renúncia (a card that does not follow
    although the hand could, found with Deal.is_renuncia), random redeal answers and, with
    ``stop_rate``, a timeout/disconnect/abort. ``on_turn(match)`` is called before each act."""
    from sueca.engine import Variant
    rng = random.Random(seed)
    m = Match(Variant(**variant), seed=seed)
    while not m.over:
        if on_turn is not None:
            on_turn(m)
        if stop_rate and rng.random() < stop_rate:
            end = rng.choice(["timeout", "disconnect", "aborted"])
            m.stop(end, None if end == "aborted" else rng.randrange(4))
            break
        if m.awaiting_redeal:
            m.redeal(rng.random() < 0.5)
            continue
        deal = m.deal
        if deal.trick and rng.random() < renuncia_rate:
            bad = [c for c in deal.hand(deal.turn) if deal.is_renuncia(c)]
            if bad:
                m.play(rng.choice(bad))
                continue
        legal = deal.legal_cards()
        m.play(legal[int(rng.random() * len(legal))])
    return m
