"""Each rule is written once in the engine, and everything that answers the same question agrees
with it: follow suit (``legal_mask``), who takes a trick (``trick_keys``), how a deal or match
ends (``End``) and what a seat is shown (the ``Observation`` protocol)."""

import copy
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from kits.deals import trick_winner

from sueca.engine import (
    CARDS,
    End,
    Match,
    Observation,
    SeatView,
    Snapshot,
    Variant,
    cards_of,
    legal_mask,
    trick_keys,
)
from sueca.engine.cards import SUIT_MASKS
from sueca.engine.observation import OBSERVATION_FIELDS

hands = st.integers(min_value=0, max_value=(1 << 40) - 1)
suits = st.integers(min_value=0, max_value=3)


@given(hands, st.one_of(st.none(), suits))
def test_legal_mask_is_the_follow_suit_rule(hand, led):
    """docs/rules.md § Playing a trick, written out again over card objects: a card of the led suit if the
    hand has one, else any card; the lead (no led suit) is free."""
    held = [c for c in CARDS if hand >> c & 1]
    follow = [c for c in held if led is not None and c.suit == led]
    expected = follow or held
    got = legal_mask(hand, 0 if led is None else SUIT_MASKS[led])
    assert list(cards_of(got)) == expected


@given(suits, suits, st.lists(st.sampled_from(CARDS), min_size=4, max_size=4, unique=True),
       st.integers(min_value=0, max_value=3))
def test_trick_keys_pick_the_rules_winner(trump, _unused, cards, leader):
    led = cards[0].suit
    keys = trick_keys(trump, led)
    best = max(range(4), key=lambda i: keys[cards[i]])
    assert (leader + best) % 4 == trick_winner(leader, cards, "CDHS"[trump])


def _states(seed: int, renege: float):
    """A match at every step, with the odd renúncia (a held card that is not legal)."""
    rng = random.Random(seed)
    match = Match(Variant(weak_hand_redeal=seed % 2 == 0), seed=seed)
    while True:
        yield match
        if match.over:
            return
        if match.awaiting_redeal:
            match.redeal(rng.random() < 0.5)
            continue
        deal = match.deal
        off = [c for c in deal.hand(deal.turn) if deal.is_renuncia(c)]
        match.play(rng.choice(off) if off and rng.random() < renege else
                   rng.choice(deal.legal_cards()))


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=10**6), st.sampled_from([0.0, 0.05]))
def test_every_legality_question_is_legal_mask(seed, renege):
    for match in _states(seed, renege):
        deal = match.deal
        assert (deal.led_mask == 0) == (not deal.trick)  # led_mask is 0 between tricks
        for seat in range(4):
            hand = deal.hands[seat]
            rule = legal_mask(hand, deal.led_mask)
            assert deal.legal_mask(seat) == rule
            assert deal.legal_cards(seat) == cards_of(rule)
            mine = (deal.turn == seat and not match.over and not match.awaiting_redeal)
            assert match.legal_mask(seat) == (rule if mine else 0)
            assert match.legal_cards(seat) == (cards_of(rule) if mine else ())
            assert SeatView(match, seat).legal == match.legal_cards(seat)
        if not match.over:
            hand = deal.hands[deal.turn]
            for c in cards_of(hand):
                assert deal.is_renuncia(c) == (not legal_mask(hand, deal.led_mask) >> c & 1)


def test_play_of_an_illegal_held_card_is_a_renuncia():
    """Deal.play's inlined test is legal_mask's: every held card of every seat to play, tried on
    a copy of the deal, ends it as a renúncia exactly when legal_mask leaves it out."""
    tried = 0
    for match in _states(7, 0.0):
        if match.over or match.awaiting_redeal:
            continue
        deal = match.deal
        hand = deal.hands[deal.turn]
        for c in cards_of(hand):
            trial = copy.deepcopy(deal)
            trial.play(c)
            assert (trial.end == End.RENUNCIA) == (not legal_mask(hand, deal.led_mask) >> c & 1)
            tried += 1
    assert tried > 100


def test_end_values_are_the_recorded_words():
    """Replays, the wire and the league store these words: they must never change."""
    assert [e.value for e in End] == ["normal", "renuncia", "redeal", "timeout", "disconnect",
                                      "aborted", "bot_error"]
    assert all(isinstance(e, str) and e == e.value and str(e) == e.value for e in End)


def test_the_observation_protocol_is_what_views_and_snapshots_have():
    members = {name for name, value in vars(Observation).items() if isinstance(value, property)}
    assert members == set(OBSERVATION_FIELDS) | {"team"}
    view = SeatView(Match(seed=5), 1)
    snap = view.snapshot()
    assert isinstance(snap, Snapshot)
    for name in members:
        assert getattr(snap, name) == getattr(view, name), name
