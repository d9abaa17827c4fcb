"""Variant weak_hand_redeal (002; docs/rules.md § Dealing and the trump): the first player may call a redeal before
the first card when his hand is worth 10 points or less."""

import pytest
from kits.deals import build_deck, hands_with, points_of, state

from sueca.engine import Match, NotYourTurnError, RedealError, SeatView, Variant, replay

ON = Variant(weak_hand_redeal=True)
HAND_10 = "7C 2C 3C 4C 5C 6C 2D 3D 4D 5D"  # 10 points: may redeal
HAND_11 = "AC 2C 3C 4C 5C 6C 2D 3D 4D 5D"  # 11 points: may not
HAND_0 = "2C 3C 4C 5C 6C 2D 3D 4D 5D 6D"


def _match(first_hand, dealer=1, variant=ON, trump_card="last", extra=1):
    leader = (dealer + 1) % 4
    hands = hands_with({leader: first_hand.split()}, seed=dealer)
    decks = [build_deck(hands, dealer, trump_card)]
    for k in range(extra):
        decks.append(build_deck(hands_with({}, seed=100 + k), dealer, trump_card))
    return Match(variant, decks=decks, first_dealer=dealer)


@pytest.mark.parametrize("trump_card", ["last", "first"])
@pytest.mark.parametrize("hand", [HAND_10, HAND_0])
def test_weak_hand_may_call_a_redeal_same_dealer_deals_again(hand, trump_card):
    """002: "Si las cartas del primer jugador suman 10 puntos o menos, puede bajar el juego. Si lo
    hace, las cartas se barajan y se distribuyen de nuevo" (a first hand of 10 points or less may
    call a redeal; the same dealer deals again)."""
    assert points_of(hand.split()) <= 10
    m = _match(hand, dealer=1, variant=Variant(weak_hand_redeal=True, trump_card=trump_card),
               trump_card=trump_card)
    leader = 2
    assert m.awaiting_redeal and m.turn == leader
    assert m.can_redeal() and m.can_redeal(leader)
    assert not any(m.can_redeal(s) for s in range(4) if s != leader)
    assert SeatView(m, leader).legal == ()  # the question comes before any card
    result = m.redeal(True, seat=leader)
    assert result.end == "redeal" and result.number == 0 and result.dealer == 1
    assert result.game_points == (0, 0) and m.game_points == [0, 0]
    assert m.deals[0].end == "redeal" and m.results[-1] == result
    assert m.deal.number == 1 and m.deal.dealer == 1 and m.deal.deck == m.decks[1]
    assert m.turn == leader and m.held == 0


def test_weak_hand_may_decline_and_play_then_no_more_redeal():
    """002: "Si el primer jugador inicia el juego, debe bajar una carta" (declining, he plays)."""
    m = _match(HAND_10)
    assert m.redeal(False) is None
    assert not m.awaiting_redeal and m.deal.number == 0 and m.deal.end is None
    before = state(m)
    with pytest.raises(RedealError, match="weak_hand_redeal"):
        m.redeal(True)
    assert state(m) == before
    m.play(m.deal.legal_cards()[0])


def test_eleven_points_is_not_a_weak_hand():
    """002: "suman 10 puntos o menos" — 11 points may not call a redeal."""
    m = _match(HAND_11)
    assert not m.awaiting_redeal and not m.can_redeal()
    before = state(m)
    with pytest.raises(RedealError):
        m.redeal(True)
    assert state(m) == before


def test_redeal_only_with_the_variant_on():
    """docs/rules.md § Variants: weak_hand_redeal comes from 002 only and is off by default (000, 001, 003 have
    no such rule)."""
    assert Variant().weak_hand_redeal is False
    m = _match(HAND_0, variant=Variant())
    assert not m.awaiting_redeal and not m.can_redeal()
    before = state(m)
    with pytest.raises(RedealError, match="weak_hand_redeal=on"):
        m.redeal(True)
    assert state(m) == before


def test_redeal_only_before_the_first_card():
    """002: the redeal is called before the first player starts the game."""
    m = _match(HAND_10)
    m.redeal(False)
    m.play(m.deal.legal_cards()[0])
    before = state(m)
    with pytest.raises(RedealError, match="no redeal"):
        m.redeal(True, seat=m.turn)
    assert state(m) == before


def test_redeal_is_decided_by_the_first_player_only():
    """002: "Si las cartas del primer jugador suman 10 puntos o menos, puede bajar el juego" (only
    the first player may call it); the wrong seat is refused and nothing changes."""
    m = _match(HAND_10)
    before = state(m)
    with pytest.raises(NotYourTurnError, match="seat 3"):
        m.redeal(True, seat=3)
    assert state(m) == before


def test_no_card_before_the_redeal_question_is_answered():
    """002: the redeal question comes before the first card."""
    m = _match(HAND_10)
    c = m.deal.legal_cards()[0]
    before = state(m)
    assert not m.can_play(c)
    with pytest.raises(RedealError, match="seat 2"):
        m.play(c)
    assert state(m) == before


def test_redealt_deal_is_asked_again_and_replays():
    """002: after a redeal the new first hand may again be weak; the record replays."""
    dealer = 0
    hands = hands_with({1: HAND_0.split()}, seed=4)
    deck = build_deck(hands, dealer)
    m = Match(ON, seed=1, decks=[deck, deck, deck], first_dealer=dealer)
    m.redeal(True)
    assert m.awaiting_redeal and m.deal.number == 1 and m.deal.dealer == 0
    m.redeal(True)
    m.redeal(False)
    assert m.deal.number == 2 and [r.end for r in m.results] == ["redeal", "redeal"]
    while m.deal.number == 2:
        m.play(m.deal.legal_cards()[0])
    m.stop("aborted")
    rec = replay.record(m, "redeal-test", ["a", "b", "c", "d"])
    assert [d["end"] for d in rec["deals"]] == ["redeal", "redeal", "normal", "aborted"]
    assert replay.verify(rec) == []
