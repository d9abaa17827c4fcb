"""The 40-card Sueca deck: card numbers, text form, rank order and points.

A card is an ``int`` from 0 to 39: ``suit * 10 + strength``, where strength 0..9 runs up the
Sueca rank order 2 3 4 5 6 Q J K 7 A. So within a suit a bigger number beats a smaller one, and
sets of cards are bit masks (bit ``c`` set = card ``c`` held). Speed of the whole arena rests on
that: following suit is one AND, a hand is one int.

:class:`Card` is an ``int`` subclass that prints as ``AS``, ``7H``; the 40 canonical instances are
in :data:`CARDS` and every table hands those out, so no Card is built in the hot path.
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import CardError, DeckError

SUITS = "CDHS"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
RANKS = "23456QJK7A"  # weakest to strongest
RANK_POINTS = (0, 0, 0, 0, 0, 2, 3, 4, 10, 11)
TOTAL_POINTS = 120
FULL_DECK = (1 << 40) - 1
SUIT_MASKS = tuple(((1 << 10) - 1) << (10 * s) for s in range(4))


class Card(int):
    """One card; use :data:`CARDS` or :func:`card`, never ``Card(n)`` in new code."""

    __slots__ = ()

    @property
    def suit(self) -> int:
        """Suit number 0..3 for C D H S."""
        return self // 10

    @property
    def suit_letter(self) -> str:
        return SUITS[self // 10]

    @property
    def rank(self) -> str:
        """Rank letter: one of ``A 7 K J Q 6 5 4 3 2``."""
        return RANKS[self % 10]

    @property
    def strength(self) -> int:
        """0 (a two) to 9 (an ace): order within a suit."""
        return self % 10

    @property
    def points(self) -> int:
        return RANK_POINTS[self % 10]

    def __str__(self) -> str:
        return RANKS[self % 10] + SUITS[self // 10]

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


CARDS: tuple[Card, ...] = tuple(Card(i) for i in range(40))
POINTS: tuple[int, ...] = tuple(RANK_POINTS[i % 10] for i in range(40))
SUIT_OF: tuple[int, ...] = tuple(i // 10 for i in range(40))
_BY_TEXT = {str(c): c for c in CARDS}


def parse_card(text: str) -> Card:
    """Parse ``AS``, ``7h``, ``qd``: rank then suit, any case."""
    if not isinstance(text, str):
        raise CardError(f"bad card {text!r}: expected text such as 'AS' or '7H'")
    found = _BY_TEXT.get(text.strip().upper())
    if found is not None:
        return found
    raise CardError(_explain(text))


def _explain(text: str) -> str:
    bad = f"bad card {text!r}: "
    t = text.strip().upper()
    if not t:
        return bad + "empty; a card is a rank then a suit, e.g. 'AS', '7H', 'QD', '2C'"
    if t[:-1] in ("8", "9", "10", "T"):
        return bad + "Sueca has no 8s, 9s or 10s (40-card deck: A 7 K J Q 6 5 4 3 2)"
    if len(t) != 2:
        return bad + "a card is two characters, a rank then a suit, e.g. 'AS', '7H'"
    rank, suit = t[0], t[1]
    if rank not in RANKS:
        return bad + f"rank {rank!r} is not one of A 7 K J Q 6 5 4 3 2"
    return bad + f"suit {suit!r} is not one of C D H S"


def card(value: object) -> Card:
    """Coerce a Card, a card number 0..39 or a card text to the canonical :class:`Card`."""
    if value.__class__ is Card:
        return value
    if isinstance(value, str):
        return parse_card(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 40:
        return CARDS[value]
    raise CardError(f"bad card {value!r}: expected a card text such as 'AS' or a number 0..39")


def parse_cards(texts: Iterable[object]) -> list[Card]:
    return [card(t) for t in texts]


# Decoding a mask into its cards is the hottest thing a bot does (its hand, its legal cards), so
# it is three lookups in tables of 14-bit chunks instead of a loop over bits.
_CHUNK = 14
_CHUNK_MASK = (1 << _CHUNK) - 1


def _chunk_table(offset: int) -> tuple[tuple[Card, ...], ...]:
    width = min(_CHUNK, 40 - offset)
    return tuple(
        tuple(CARDS[offset + b] for b in range(width) if m >> b & 1) for m in range(1 << width)
    )


_T0, _T1, _T2 = _chunk_table(0), _chunk_table(14), _chunk_table(28)


# Cards of one suit, by suit and 10-bit mask: legal cards when following suit are one lookup.
SUIT_TABLES: tuple[tuple[tuple[Card, ...], ...], ...] = tuple(
    tuple(tuple(CARDS[10 * s + b] for b in range(10) if m >> b & 1) for m in range(1024))
    for s in range(4)
)


def cards_of(mask: int) -> tuple[Card, ...]:
    """The cards in a bit mask, weakest clubs first."""
    return _T0[mask & _CHUNK_MASK] + _T1[(mask >> 14) & _CHUNK_MASK] + _T2[mask >> 28]


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def hand_points(mask: int) -> int:
    return sum(POINTS[c] for c in cards_of(mask))


def validate_deck(deck: Iterable[object]) -> tuple[Card, ...]:
    """A deck given by a user or a replay: exactly the 40 cards once each, top card first."""
    try:
        cards = tuple(card(c) for c in deck)
    except CardError as err:
        raise DeckError(f"bad deck: {err}") from None
    except TypeError:
        raise DeckError(f"bad deck {deck!r}: expected a list of 40 cards") from None
    if len(cards) != 40:
        raise DeckError(f"bad deck: {len(cards)} cards, a Sueca deck has 40")
    if mask_of(cards) != FULL_DECK:
        seen: set[Card] = set()
        twice = sorted({c for c in cards if c in seen or seen.add(c)})  # type: ignore[func-returns-value]
        missing = sorted(set(CARDS) - set(cards))
        raise DeckError(
            f"bad deck: {' '.join(map(str, twice))} appear twice and "
            f"{' '.join(map(str, missing))} are missing"
        )
    return cards
