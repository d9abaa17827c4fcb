"""The 40-card deck, rank order and card points (docs/rules.md § Cards)."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kits.deals import ALL_TEXTS, HIGH_TO_LOW, RANK_POINTS, build_deck, cs, hands_with

from sueca.engine import CARDS, RANKS, SUITS, Card, CardError, Deal, card, parse_card, parse_cards


def test_deck_is_forty_cards_without_eights_nines_tens():
    """001: "It is played with 40 cards (remove the 8s, 9s and 10s from a standard 52 card
    deck)"; 003: 40 cards, A, 2 to 7, J, Q, K in four suits."""
    assert len(CARDS) == 40 and len(set(CARDS)) == 40
    assert sorted(str(c) for c in CARDS) == sorted(ALL_TEXTS)
    assert set(SUITS) == set("CDHS")
    assert set(RANKS) == set("A7KJQ65432")
    assert not any(str(c)[0] in "89T" or str(c).startswith("10") for c in CARDS)
    assert all(isinstance(c, Card) and CARDS[c] is c for c in CARDS)


@pytest.mark.parametrize("suit", "CDHS")
def test_rank_order_a_7_k_j_q_6_5_4_3_2(suit):
    """001: "The rank of the cards in each suit, from high to low, is: ace, 7, king, jack, queen,
    6, 5, 4, 3, 2"; 002 (low to high) "2, 3, 4, 5, 6, Q, J, K, 7, A"; 003: "J 比 Q 大"."""
    in_suit = [c for c in CARDS if c.suit_letter == suit]
    high_to_low = sorted(in_suit, key=lambda c: c.strength, reverse=True)
    assert "".join(c.rank for c in high_to_low) == "A7KJQ65432"
    assert card("J" + suit).strength > card("Q" + suit).strength  # the jack beats the queen
    assert card("7" + suit).strength == 8  # the manilha is second


def test_card_points_11_10_4_3_2_sum_to_120():
    """001: "ace 11 points, seven 10, king 4, jack 3, queen 2, 6-2 0 points. There are 120 points
    in the deck altogether"; 000: "El total de puntos de la baraja ... es de 120"."""
    for c in CARDS:
        assert c.points == RANK_POINTS[c.rank], c
    assert {c.rank: c.points for c in CARDS} == {
        "A": 11, "7": 10, "K": 4, "J": 3, "Q": 2, "6": 0, "5": 0, "4": 0, "3": 0, "2": 0}
    assert sum(c.points for c in CARDS) == 120


@pytest.mark.parametrize("low,high", [
    (HIGH_TO_LOW[j], HIGH_TO_LOW[i]) for i, j in itertools.combinations(range(10), 2)])
@pytest.mark.parametrize("high_first", [False, True])
def test_rank_order_decides_a_trick(low, high, high_first):
    """000: "Si no hay triunfo, gana la carta más alta del palo de salida"; ranks per 001
    "ace, 7, king, jack, queen, 6, 5, 4, 3, 2". Leader and dealer play two clubs, the other two
    seats hold neither clubs nor trumps (hearts): the higher rank must take the trick."""
    dealer, leader = 3, 0
    lead, answer = (high, low) if high_first else (low, high)
    clubs = [r + "C" for r in HIGH_TO_LOW if r not in (low, high)]
    hearts = [r + "H" for r in HIGH_TO_LOW]
    fixed = {leader: [lead + "C"] + clubs[:4] + hearts[:5],
             dealer: [answer + "C"] + clubs[4:] + hearts[5:]}
    hands = hands_with(fixed, seed=len(low + high))
    deal = Deal(build_deck(hands, dealer, "last", "2H"), dealer)
    assert str(deal.trump) == "2H"
    deal.play(lead + "C")
    deal.play([c for c in deal.legal_cards() if str(c)[1] in "DS"][0])
    deal.play([c for c in deal.legal_cards() if str(c)[1] in "DS"][0])
    result = deal.play(answer + "C")
    assert result.trick is not None
    assert result.trick.winner == (leader if high_first else dealer)


@pytest.mark.parametrize("text", ALL_TEXTS)
def test_every_card_text_parses_and_prints_back(text):
    """docs/rules.md § How the arena writes cards: the 40 cards, rank then suit, e.g. AS, 7H."""
    c = parse_card(text)
    assert str(c) == text and repr(c) == text and f"{c:>3}" == " " + text
    assert parse_card(text.lower()) is c and parse_card(f"  {text} ") is c
    assert card(c) is c and card(int(c)) is c and card(text) is c


def test_parse_cards_and_helpers():
    """docs/rules.md § How the arena writes cards: four suits C D H S, 10 ranks each."""
    assert parse_cards(["AS", "7h", 0, CARDS[39]]) == cs("AS 7H 2C AS")
    assert card("QD").suit_letter == "D" and card("QD").suit == SUITS.index("D")


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(max_size=5))
def test_any_text_is_a_card_or_a_card_error_quoting_it(text):
    """docs/rules.md § Renúncia and other faults: a malformed message is refused with a clear error."""
    try:
        c = parse_card(text)
    except CardError as err:
        assert repr(text) in str(err)
        assert text.strip().upper() not in ALL_TEXTS
    else:
        assert str(c) == text.strip().upper()
