"""proto_convert: the hand-rolled hot-path encoders give exactly what the generated classes
give, and match specs survive the trip to the wire and back."""

from __future__ import annotations

import random

import pytest

from sueca import wire as conv
from sueca.engine import CARDS, Match, Trick, Variant
from sueca.v1 import sueca_pb2 as pb


def _states():
    """Matches at many points: mid-trick, after tricks, after a renúncia, redeal questions."""
    rng = random.Random(11)
    for seed in range(6):
        variant = Variant(weak_hand_redeal=seed % 3 == 0, tie="double" if seed % 2 else "carry")
        match = Match(variant, seed=seed)
        while match.end is None:
            yield match
            if match.awaiting_redeal:
                match.redeal(rng.random() < 0.5)
                continue
            deal = match.deal
            off = [c for c in deal.hand(deal.turn) if c not in deal.legal_cards()]
            if off and rng.random() < 0.02:
                match.play(off[0])  # a renúncia: a trick cut short, winner None
            else:
                match.play(rng.choice(deal.legal_cards()))
        yield match


def test_observation_bytes_equal_the_generated_encoding():
    checked = 0
    for match in _states():
        tricks = b"".join(conv.field_bytes(0x52, conv.trick_bytes(t)) for t in match.deal.tricks)
        for seat in range(4):
            mine = pb.Observation.FromString(conv.observation_bytes(match, seat, tricks))
            assert mine == conv.observation(match, seat)
            checked += 1
    assert checked > 500


def test_big_numbers_use_multi_byte_varints():
    match = Match(seed=1)
    match.game_points[:] = [300, 7]
    match.held = 200
    match.deal.number = 1000
    obs = pb.Observation.FromString(conv.observation_bytes(match, 2, b""))
    assert list(obs.game_points) == [300, 7] and obs.held_over == 200
    assert obs.deal_number == 1000
    assert conv.varint(-1) == b"\xff" * 9 + b"\x01"


def test_turn_trick_event_and_action_bytes():
    match = Match(seed=3)
    gid = conv.game_id_field("m-ü/2")
    obs = conv.observation_bytes(match, 2, b"")
    msg = pb.RefereeMessage.FromString(
        conv.turn_request_bytes(gid, 300, True, obs, 1_700_000_000_123, 2000, 15000)
        + conv.trick_event_bytes(gid, conv.trick_bytes(Trick(3, (CARDS[1], CARDS[39]), None, 11)))
        + conv.error_bytes("m-ü/2", 4, "stale_request", "late"))
    turn = msg.turns[0]
    assert (turn.game_id, turn.request_id, turn.kind) == ("m-ü/2", 300, pb.TurnRequest.REDEAL)
    assert (turn.deadline_ms, turn.move_ms, turn.bank_ms) == (1_700_000_000_123, 2000, 15000)
    assert turn.observation == conv.observation(match, 2)
    trick = msg.events[0].trick_end
    assert (trick.leader, list(trick.cards), trick.winner, trick.points) == (3, [1, 39], -1, 11)
    assert conv.trick_from_pb(trick) == Trick(3, (CARDS[1], CARDS[39]), None, 11)
    assert msg.errors[0].code == "stale_request"
    actions = pb.BotMessage.FromString(conv.action_bytes(gid, 7, card=0)
                                       + conv.action_bytes(gid, 8, redeal=False)).actions
    assert actions[0].WhichOneof("choice") == "card" and actions[0].card == 0
    assert actions[1].WhichOneof("choice") == "redeal" and actions[1].redeal is False


def test_spec_round_trip_and_checks():
    spec = {"match_id": "m1", "bots": ["a", "b", "c", "d"], "variant": "tie=double target=8",
            "seed": 42, "decks": [[str(c) for c in CARDS]], "first_dealer": 0, "move_ms": 100,
            "bank_ms": 200, "grace_ms": 300, "lenient": True, "quiet": True}
    m = conv.spec_to_pb(spec)
    back = conv.spec_from_pb(pb.MatchSpec.FromString(m.SerializeToString()))
    assert back["variant"] == Variant(tie="double", target=8).to_dict()
    assert back["seed"] == 42 and back["first_dealer"] == 0 and back["decks"] == spec["decks"]
    plan = conv.check_spec(m)
    assert plan.first_dealer == 0 and plan.seed == 42 and plan.lenient and plan.quiet
    assert conv.check_spec(pb.MatchSpec(bots=["a"] * 4)).first_dealer is None
    assert conv.check_spec(pb.MatchSpec(bots=["a"] * 4)).move_ms == conv.DEFAULT_MOVE_MS
    assert conv.parse_seed("007") == "007" and conv.parse_seed("-5") == -5
    assert conv.parse_seed("") is None
    with pytest.raises(conv.SpecError, match="'sideways'"):
        conv.check_spec(pb.MatchSpec(bots=["a"] * 4, variant=pb.Variant(direction="sideways")))
    with pytest.raises(conv.SpecError, match="first_dealer 7"):
        conv.check_spec(pb.MatchSpec(bots=["a"] * 4, first_dealer=7))
    with pytest.raises(conv.SpecError, match="unknown match spec field"):
        conv.spec_to_pb({"bots": ["a"] * 4, "sed": 1})
