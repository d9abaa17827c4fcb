"""Dealing, the trump, the lead and the tricks (docs/rules.md § Dealing and the
trump, § Playing a trick, § Worked examples)."""

import random

import pytest
from kits.deals import (
    build_deck,
    cs,
    hands_with,
    play_all,
    points_of,
    scripted,
    state,
    trick_winner,
)

from sueca.engine import (
    CARDS,
    Deal,
    Match,
    NotYourTurnError,
    RenunciaError,
    SeatView,
    Variant,
    card,
    shuffled_deck,
)


def _random_deck(seed):
    rng = random.Random(seed)
    deck = list(CARDS)
    rng.shuffle(deck)
    return deck


@pytest.mark.parametrize("dealer", range(4))
def test_trump_card_last_deals_from_the_seat_after_the_dealer(dealer):
    """000: "da diez -en un solo grupo- a cada jugador empezando por el de su izquierda. La carta
    inferior del mazo, que es también la última carta que se da a sí mismo el dador, se descubre";
    001: "The bottom card of the deck, which belongs to the dealer, is turned face up"."""
    deck = _random_deck(dealer)
    deal = Deal(deck, dealer, "last")
    for i in range(4):
        seat = (dealer + 1 + i) % 4
        assert sorted(deal.hand(seat)) == sorted(deck[10 * i:10 * i + 10]), seat
    assert sorted(deal.hand(dealer)) == sorted(deck[30:40])
    assert deal.trump == deck[39] and deal.trump_suit == deck[39].suit
    assert deck[39] in deal.hand(dealer)


@pytest.mark.parametrize("dealer", range(4))
def test_trump_card_first_dealer_takes_the_top_ten(dealer):
    """001: "the dealer can choose to deal the first ten cards to himself, the next ten to the
    player to his right ... the dealer's first card (the top card of the deck after the cut) is
    turned up"; 000: "el dador se da el primer grupo de cartas y la carta de muestra es la primera
    superior del mazo"; 003 table of variants: "第一张定将"."""
    deck = _random_deck(10 + dealer)
    deal = Deal(deck, dealer, "first")
    for i in range(4):
        seat = (dealer + i) % 4
        assert sorted(deal.hand(seat)) == sorted(deck[10 * i:10 * i + 10]), seat
    assert deal.trump == deck[0] and deal.trump_suit == deck[0].suit
    assert deck[0] in deal.hand(dealer)


@pytest.mark.parametrize("trump_card", ["last", "first"])
@pytest.mark.parametrize("dealer", range(4))
def test_build_deck_helper_and_match_deal_the_wanted_hands(dealer, trump_card):
    """docs/rules.md § Dealing and the trump: the deck after shuffling and cutting, the dealer and
    the trump_card variant decide every hand, so a recorded deck replays the same hands."""
    hands = hands_with({dealer: ["5H"]}, seed=dealer)
    deck = build_deck(hands, dealer, trump_card, trump="5H")
    m = Match(Variant(trump_card=trump_card), decks=[deck], first_dealer=dealer)
    for s in range(4):
        assert sorted(m.deal.hand(s)) == sorted(hands[s])
    assert str(m.deal.trump) == "5H"
    again = Match(Variant(trump_card=trump_card), decks=[deck], first_dealer=dealer)
    assert again.deal.start_hands == m.deal.start_hands


def test_003_opening_example_player_2_deals_5h_is_trump():
    """003: "玩家2发牌；他的最后一张是红心 5：红心为将。玩家3坐在他右边，首先出牌" (player 2 deals;
    his last card is 5H, hearts are trump; player 3, after him, leads)."""
    dealer = 2
    deck = build_deck(hands_with({dealer: ["5H"]}, seed=3), dealer, "last", "5H")
    assert str(deck[39]) == "5H"
    deal = Deal(deck, dealer, "last")
    assert str(deal.trump) == "5H" and "CDHS"[deal.trump_suit] == "H"
    assert deal.turn == deal.leader == 3
    assert card("5H") in deal.hand(dealer) and deal.trump_held


@pytest.mark.parametrize("trump_card", ["last", "first"])
@pytest.mark.parametrize("dealer", range(4))
def test_seat_after_dealer_leads_the_first_trick(dealer, trump_card):
    """001: "The player to the right of the dealer leads to the first trick" (the next seat in
    playing order); 000: "El jugador mano, que inicialmente es el jugador de la izquierda del
    dador"; 002: "El jugador que comienza la primera ronda es el jugador a la izquierda del
    distribuidor"."""
    deal = Deal(_random_deck(dealer), dealer, trump_card)
    assert deal.turn == deal.leader == (dealer + 1) % 4
    m = Match(Variant(trump_card=trump_card), seed=5, first_dealer=dealer)
    assert m.turn == (dealer + 1) % 4
    with pytest.raises(NotYourTurnError):
        deal.verify_play(deal.hand(dealer)[0], seat=dealer)


def _spade_trick_deal():
    """003 trick example, seats: player 3 = seat 0 (leads), player 1 = seat 1, player 2 = seat 2,
    player 4 = seat 3 (the dealer, holding hearts, no spades). Hearts trump."""
    fixed = {0: ["AS"], 1: ["7S", "2S"], 2: ["QS"], 3: ["4H", "KH"]}
    avoid = {3: "S"}
    hands = hands_with(fixed, seed=7, avoid=avoid)
    return Deal(build_deck(hands, 3, "last", "KH"), 3, "last")


def test_003_worked_trick_player_4_trumps_with_4h_and_takes_13():
    """003: "玩家3出黑桃 A ... 玩家1 ... 出黑桃 2 ... 玩家2跟黑桃 Q ... 玩家4没有黑桃，用红心 4 将吃。这一墩归玩家1和4：
    11 + 0 + 2 + 0 = 13 分" (player 4 trumps with 4H and takes 13 points for players 1 and 4)."""
    deal = _spade_trick_deal()
    assert "CDHS"[deal.trump_suit] == "H"
    assert not any(c.suit_letter == "S" for c in deal.hand(3))
    plays = play_all(deal, cs("AS 2S QS 4H"))
    t = plays[-1].trick
    assert t is not None and t.winner == 3 and t.points == 13 and t.leader == 0
    assert list(t.cards) == cs("AS 2S QS 4H") and t.seats() == [0, 1, 2, 3]
    assert deal.points == [0, 13]  # team of seats 1 and 3 = players 1 and 4
    assert deal.turn == deal.leader == 3  # the winner leads next
    # "玩家1的黑桃 7 现在是场上最大的黑桃": with the ace gone, a spade trick to player 1's 7S
    assert card("7S") in deal.hand(1)


def test_follow_suit_when_able():
    """000: "Los otros jugadores, en su turno, han de jugar carta del mismo palo, si la tienen";
    001: "Players must follow suit if they can"; 003: "其他人能跟花色就必须跟"."""
    deal = _spade_trick_deal()
    deal.play("AS")
    assert set(deal.legal_cards()) == {card("7S"), card("2S")} | {
        c for c in deal.hand(1) if c.suit_letter == "S"}
    off = next(c for c in deal.hand(1) if c.suit_letter != "S")
    assert deal.is_renuncia(off) and not deal.can_play(off)
    assert not deal.is_renuncia("2S") and deal.can_play("2S")
    before = state(deal)
    with pytest.raises(RenunciaError, match=str(off)):
        deal.verify_play(off)
    assert state(deal) == before


@pytest.mark.parametrize("discard", ["4H", "other"])
def test_trumping_is_not_compulsory(discard):
    """000: "pueden jugar cualquier carta, sin que sea obligatorio fallar (jugar triunfo)";
    003 FAQ: "跟不了花色时必须将吃吗？不必。可以将吃，也可以垫任意牌" (no, a void player may trump or
    discard any card)."""
    deal = _spade_trick_deal()
    play_all(deal, cs("AS 2S QS"))
    legal = deal.legal_cards()
    assert set(legal) == set(deal.hand(3))  # void in spades: anything goes, trumps or not
    c = card("4H") if discard == "4H" else next(x for x in legal if x.suit_letter in "CD")
    t = deal.play(c).trick
    assert deal.end is None and deal.fault_seat is None
    assert t.winner == (3 if discard == "4H" else 0)  # a discard of another suit never wins


def test_highest_trump_wins_an_overtrump():
    """001: "If any cards of the trump suit are played to a trick, the highest trump wins";
    000: "gana la carta más alta del palo de triunfo"."""
    dealer = 3  # hearts trump; seats 1 and 3 void in clubs; both trump, seat 3 higher
    fixed = {0: ["AC"], 1: ["3H"], 2: ["2C"], 3: ["6H", "KH"]}
    hands = hands_with(fixed, seed=11, avoid={1: "C", 3: "C"})
    deal = Deal(build_deck(hands, dealer, "last", "KH"), dealer)
    t = play_all(deal, cs("AC 3H 2C 6H"))[-1].trick
    assert t.winner == 3 and t.points == 11
    assert trick_winner(0, cs("AC 3H 2C 6H"), "H") == 3


def test_trump_lead_highest_trump_wins():
    """003: "最大的将牌赢" (the highest trump wins), also when trumps are led."""
    dealer = 0
    fixed = {1: ["QH"], 2: ["JH"], 3: ["AS"], 0: ["7H"]}
    hands = hands_with(fixed, seed=12, avoid={3: "H"})
    deal = Deal(build_deck(hands, dealer, "last", "7H"), dealer)
    t = play_all(deal, cs("QH JH AS 7H"))[-1].trick
    assert t.winner == 0 and t.points == 2 + 3 + 11 + 10


def test_without_trumps_highest_of_led_suit_wins_even_against_higher_other_suit():
    """000: "Si no hay triunfo, gana la carta más alta del palo de salida, aunque haya cartas más
    altas de otros palos"."""
    dealer = 3  # hearts trump
    fixed = {0: ["2C"], 1: ["AS"], 2: ["3C"], 3: ["AD", "KH"]}
    hands = hands_with(fixed, seed=13, avoid={1: "CH", 3: "C"})
    deal = Deal(build_deck(hands, dealer, "last", "KH"), dealer)
    t = play_all(deal, cs("2C AS 3C AD"))[-1].trick
    assert t.winner == 2 and t.points == 22


def test_trick_winner_leads_next_and_ten_tricks_make_a_deal():
    """000: "este jugador se convierte en el mano para la siguiente baza"; 001: "The winner of
    each trick leads to the next"; docs/rules.md § Playing a trick: ten tricks make a deal."""
    s = scripted("DEALER_62", dealer=3)
    deal = Deal(s.deck, 3)
    for k in range(10):
        plays = play_all(deal, s.plays[4 * k: 4 * k + 4])
        t = plays[-1].trick
        assert t is not None and t.winner == s.winners[k]
        assert deal.turn == deal.leader == t.winner
        assert (deal.end is None) == (k < 9)
        assert all(p.trick is None for p in plays[:3])
    assert len(deal.tricks) == 10 and deal.end == "normal"
    assert [t.winner for t in deal.tricks] == s.winners
    assert tuple(deal.points) == s.points == (58, 62)


@pytest.mark.parametrize("trump_card", ["last", "first"])
def test_trump_held_until_the_dealer_plays_it(trump_card):
    """003: "将牌那张在发牌者打出之前正面朝上" (the turned card stays face up until the dealer plays
    it); 002: "La carta triunfo revelada permanece con el distribuidor"."""
    s = scripted("LEADER_BANDEIRA", dealer=3, trump_card=trump_card)
    m = Match(Variant(trump_card=trump_card), decks=[s.deck], first_dealer=3)
    views = [SeatView(m, seat) for seat in range(4)]
    trump = m.deal.trump
    assert str(trump) == "4H"  # the dealer's lowest heart, played in trick 8
    seen_played = False
    for c in s.plays:
        played = trump in {x for t in m.deal.tricks for x in t.cards} | set(m.deal.trick)
        seen_played |= played
        for v in views:
            assert v.trump == trump and v.snapshot().trump == trump
            assert v.trump_held is (not played) is v.snapshot().trump_held
        assert m.deal.trump_held is (trump in m.deal.hand(3))
        m.play(c)
    assert seen_played and m.over and m.deal.trump_held is False


def test_shuffled_deck_is_a_permutation_and_seeded():
    """docs/rules.md § Dealing and the trump: shuffle; decks from a seed are reproducible (duplicate play)."""
    a = shuffled_deck(random.Random(1))
    b = shuffled_deck(random.Random(1))
    assert a == b and sorted(a) == list(CARDS)
    assert shuffled_deck(random.Random(2)) != a
    m1, m2 = Match(seed=9), Match(seed=9)
    assert m1.deal.deck == m2.deal.deck and m1.first_dealer == m2.first_dealer


def test_points_of_a_deal_are_the_points_of_the_tricks_won():
    """001: "the aim is to win tricks containing valuable cards" — each team scores the card
    points of the tricks it took."""
    s = scripted("LEADER_62", dealer=1)
    deal = Deal(s.deck, 1)
    play_all(deal, s.plays)
    by_team = [0, 0]
    for t in deal.tricks:
        assert t.points == points_of(t.cards)
        by_team[t.winner % 2] += t.points
    assert by_team == deal.points and sum(by_team) == 120
