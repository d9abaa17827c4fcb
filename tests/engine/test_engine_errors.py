"""Bad input: every error quotes the bad value and leaves the game exactly as it was (docs/rules.md
§ Renúncia and other faults: a card the seat does not hold, a play out of turn, a malformed or
unknown message is refused with a clear error and never applied to the game)."""

import pytest
from kits.deals import build_deck, hands_with, play_all, scripted, state

from sueca.engine import (
    CARDS,
    CardError,
    CardNotInHandError,
    Deal,
    DeckError,
    GameOverError,
    IllegalPlayError,
    Match,
    NotYourTurnError,
    RenunciaError,
    SuecaError,
    Variant,
    VariantError,
    card,
    parse_card,
)

# -- card parsing ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text,hint", [
    ("10H", "no 8s, 9s or 10s"),
    ("8C", "no 8s, 9s or 10s"),
    ("9s", "no 8s, 9s or 10s"),
    ("TS", "no 8s, 9s or 10s"),
    ("XZ", "rank 'X' is not one of A 7 K J Q 6 5 4 3 2"),
    ("1S", "rank '1' is not one of"),
    ("AX", "suit 'X' is not one of C D H S"),
    ("ASS", "two characters"),
    ("A", "two characters"),
    ("", "empty"),
    ("   ", "empty"),
])
def test_bad_card_text_is_refused_quoting_it(text, hint):
    """docs/rules.md § Cards: 40 cards, no 8, 9, 10 (001: "remove the 8s, 9s and 10s"); a malformed
    card is a protocol fault refused with a clear error."""
    with pytest.raises(CardError) as err:
        parse_card(text)
    assert repr(text) in str(err.value) and hint in str(err.value)
    with pytest.raises(CardError, match=repr(text).replace("(", r"\(")):
        card(text)


@pytest.mark.parametrize("value", [None, 5.0, b"AS", ["AS"], True])
def test_non_text_card_is_refused_by_parse_card(value):
    """docs/rules.md § Renúncia and other faults: a malformed message is refused with a clear error."""
    with pytest.raises(CardError) as err:
        parse_card(value)
    assert repr(value) in str(err.value)


@pytest.mark.parametrize("value", [None, 40, -1, True, False, 1.0, b"AS", ("A", "S")])
def test_bad_card_value_is_refused_by_card(value):
    """docs/rules.md § How the arena writes cards: a card is one of the 40 (a number 0..39 or its
    text)."""
    with pytest.raises(CardError) as err:
        card(value)
    assert repr(value) in str(err.value)


def test_errors_are_value_errors_of_one_tree():
    """errors.py: every engine error is a ValueError (SuecaError) so callers catch one type."""
    for cls in (CardError, DeckError, VariantError, IllegalPlayError, NotYourTurnError,
                CardNotInHandError, RenunciaError, GameOverError):
        assert issubclass(cls, SuecaError) and issubclass(cls, ValueError)


# -- acts refused, nothing changed -----------------------------------------------------------------

def _match():
    s = scripted("LEADER_62", dealer=3)
    return s, Match(Variant(target=8), seed=1, decks=[s.deck], first_dealer=3)


@pytest.mark.parametrize("bad", ["10H", "XZ", "", "1S", None, 40, 2.5])
@pytest.mark.parametrize("use", ["match", "deal"])
def test_malformed_card_in_play_changes_nothing(bad, use):
    """docs/rules.md § Renúncia and other faults: a malformed or unknown message is refused with a
    clear error and never applied to the game."""
    s, m = _match()
    play_all(m, s.plays[:2])
    game = m if use == "match" else m.deal
    before = state(m)
    with pytest.raises(CardError) as err:
        game.play(bad)
    assert repr(bad) in str(err.value)
    assert state(m) == before
    with pytest.raises(CardError):
        game.verify_play(bad)
    assert state(m) == before


@pytest.mark.parametrize("use", ["match", "deal"])
def test_card_not_in_hand_changes_nothing(use):
    """docs/rules.md § Renúncia and other faults: a card the seat does not hold is refused with a
    clear error and never applied."""
    s, m = _match()
    game = m if use == "match" else m.deal
    other = m.deal.hand(2)[0]  # seat 0 is to play
    before = state(m)
    with pytest.raises(CardNotInHandError) as err:
        game.play(other)
    assert str(other) in str(err.value) and "seat 0" in str(err.value)
    assert state(m) == before
    with pytest.raises(CardNotInHandError):
        game.play(str(other).lower(), seat=0)
    assert not game.can_play(other)
    assert state(m) == before
    played = s.plays[0]
    play_all(m, [played])
    before = state(m)
    with pytest.raises(CardNotInHandError, match=str(played)):
        game.play(played)  # a card already played is in no hand
    assert state(m) == before


@pytest.mark.parametrize("use", ["match", "deal"])
@pytest.mark.parametrize("seat", [1, 2, 3, 7, -1])
def test_out_of_turn_changes_nothing(use, seat):
    """000: "Cada jugador, en su turno, juega sobre la mesa una de las cartas de su mano"; docs/rules.md
    § Renúncia and other faults: a play out of turn is refused with a clear error."""
    s, m = _match()
    game = m if use == "match" else m.deal
    mine = m.deal.hand(seat % 4)[0] if seat in (1, 2, 3) else m.deal.hand(0)[0]
    before = state(m)
    with pytest.raises(NotYourTurnError) as err:
        game.play(mine, seat=seat)
    assert f"seat {seat}" in str(err.value) and str(mine) in str(err.value)
    assert "seat 0 is to play" in str(err.value)
    assert not game.can_play(mine, seat=seat)
    assert state(m) == before
    game.play(s.plays[0], seat=0)  # the right seat may


def test_renuncia_refused_by_verify_play_changes_nothing():
    """003: renúncia = failing to follow suit while able; verify_play refuses it (a lenient
    referee asks again) and names the card, the led suit and the cards that would follow."""
    s, m = _match()
    play_all(m, s.plays[:1])  # AC led by seat 0
    off = next(c for c in m.deal.hand(1) if c.suit_letter != "C")
    before = state(m)
    with pytest.raises(RenunciaError) as err:
        m.verify_play(off, seat=1)
    msg = str(err.value)
    assert str(off) in msg and "led suit C" in msg and "seat 1" in msg and "7C" in msg
    assert not m.can_play(off)
    assert state(m) == before


def test_play_after_the_deal_is_over_changes_nothing():
    """001: "Ten tricks make a deal" (docs/rules.md § Playing a trick); a deal that has ended takes no card."""
    s = scripted("LEADER_62", dealer=3)
    deal = Deal(s.deck, 3)
    play_all(deal, s.plays)
    before = state(deal)
    for c in (s.plays[0], "AS", s.plays[-1]):
        with pytest.raises(GameOverError, match=r"deal 1 is over \(normal\)"):
            deal.play(c)
        assert not deal.can_play(c)
    assert state(deal) == before


def test_play_after_the_match_is_over_changes_nothing():
    """000: "Para ganar la partida, una pareja ha de ganar cuatro juegos" — after that no card."""
    s = scripted("LEADER_BANDEIRA", dealer=3)
    m = Match(decks=[s.deck], first_dealer=3)
    play_all(m, s.plays)
    assert m.over
    before = state(m)
    with pytest.raises(GameOverError, match=r"the match is over \(normal\)"):
        m.play(s.plays[0])
    with pytest.raises(GameOverError, match="over"):
        m.verify_play("AS", seat=0)
    with pytest.raises(GameOverError, match="over"):
        m.stop("timeout", 1)
    assert not m.can_play("AS") and m.turn is None
    assert state(m) == before


@pytest.mark.parametrize("end,seat,quoted", [
    ("resign", 1, "'resign'"), ("timeout", None, "None"), ("timeout", 4, "4"),
    ("disconnect", 1.0, "1.0"), ("normal", 0, "'normal'")])
def test_bad_stop_changes_nothing(end, seat, quoted):
    """docs/rules.md § Renúncia and other faults: a match is stopped only by timeout or disconnect of a seat (0..3), or
    aborted."""
    s, m = _match()
    before = state(m)
    with pytest.raises(IllegalPlayError) as err:
        m.stop(end, seat)
    assert quoted in str(err.value)
    assert state(m) == before


# -- bad decks, dealers, variants at construction --------------------------------------------------

def _deck():
    return build_deck(hands_with({}, seed=2), 0)


@pytest.mark.parametrize("make,needle", [
    (lambda d: d[:39], "39 cards"),
    (lambda d: d + d[:1], "41 cards"),
    (lambda d: d[:39] + d[:1], "appear twice"),
    (lambda d: [str(c) for c in d[:39]] + ["10H"], "'10H'"),
    (lambda d: d[:39] + [None], "None"),
])
@pytest.mark.parametrize("use", ["match", "deal"])
def test_bad_deck_is_refused(make, needle, use):
    """001: "It is played with 40 cards"; docs/rules.md § Dealing and the
    trump: a recorded deck must be the 40 cards."""
    deck = make(_deck())
    with pytest.raises(DeckError) as err:
        if use == "match":
            Match(decks=[deck], first_dealer=0)
        else:
            Deal(deck, 0)
    assert needle in str(err.value)


@pytest.mark.parametrize("deck", [5, None])
def test_deck_that_is_no_list_of_cards_is_refused(deck):
    """docs/rules.md § How the arena writes cards: a deck is the 40 cards in order."""
    with pytest.raises(DeckError) as err:
        Match(decks=[deck])
    assert repr(deck) in str(err.value)


def test_duplicate_card_in_deck_names_it_and_the_missing_one():
    """docs/rules.md § Cards: the 40 cards once each."""
    deck = list(CARDS)
    deck[5] = card("AS")  # QC replaced: AS twice
    missing = CARDS[5]
    for make in (lambda: Match(decks=[deck]), lambda: Deal(deck, 1)):
        with pytest.raises(DeckError) as err:
            make()
        assert "AS appear twice" in str(err.value) and str(missing) in str(err.value)


def test_deck_of_card_texts_is_accepted_as_the_same_deal():
    """docs/rules.md § Dealing and the trump: a recorded deck replays the same hands (decks are
    stored as text)."""
    deck = _deck()
    a, b = Deal(deck, 2), Deal([str(c) for c in deck], 2)
    assert a.start_hands == b.start_hands and a.trump is b.trump and a.deck == b.deck


@pytest.mark.parametrize("dealer", [4, -1, "0", 1.5, 1.0, True])
def test_bad_first_dealer_is_refused(dealer):
    """docs/rules.md § Players, teams and seats: seats are 0..3."""
    with pytest.raises(IllegalPlayError) as err:
        Match(seed=1, first_dealer=dealer)
    assert repr(dealer) in str(err.value) and "0, 1, 2 or 3" in str(err.value)


@pytest.mark.parametrize("dealer", [4, -1, 1.0, True])
def test_bad_dealer_of_a_deal_is_refused(dealer):
    """docs/rules.md § Players, teams and seats: seats are 0..3."""
    with pytest.raises(IllegalPlayError) as err:
        Deal(_deck(), dealer)
    assert repr(dealer) in str(err.value)


def test_bad_trump_card_of_a_deal_is_refused():
    """docs/rules.md § Dealing and the trump: trump_card is "last" or "first"."""
    with pytest.raises(VariantError) as err:
        Deal(_deck(), 0, "lats")
    assert "'lats'" in str(err.value) and "last, first" in str(err.value)
