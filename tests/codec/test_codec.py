"""sueca.codec: the hand-rolled hot-path encoders give exactly what the generated classes
give, and match specs survive the trip to the wire and back."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sueca import codec as conv
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


# -- the hand-rolled encoders against the generated ones, on random messages (hypothesis) ------

u32 = st.integers(min_value=0, max_value=2**32 - 1)
u64 = st.integers(min_value=0, max_value=2**64 - 1)
texts = st.text(max_size=40)
seats = st.integers(min_value=0, max_value=3)
tricks = st.builds(
    lambda leader, cards, winner, points: Trick(leader, tuple(CARDS[c] for c in cards), winner,
                                                points),
    seats, st.lists(st.integers(min_value=0, max_value=39), min_size=1, max_size=4, unique=True),
    st.one_of(st.none(), seats), st.integers(min_value=0, max_value=127))


@given(st.integers(min_value=1, max_value=2**64 - 1))
def test_varint_is_protobufs(n):
    assert b"\x28" + conv.varint(n) == pb.TurnRequest(deadline_ms=n).SerializeToString()


@given(st.integers(min_value=-(2**31), max_value=-1))
def test_negative_varint_is_int32s(n):
    assert b"\x18" + conv.varint(n) == pb.Trick(winner=n).SerializeToString()


@given(tricks)
def test_trick_bytes_are_the_generated_trick(t):
    assert pb.Trick.FromString(conv.trick_bytes(t)) == conv.trick_to_pb(t)


@given(texts, u64, st.booleans(), seats, u64, u32, u32, st.integers(min_value=0, max_value=30))
@settings(max_examples=150, deadline=None)
def test_turn_request_bytes_are_the_generated_request(game_id, rid, redeal, seat, deadline,
                                                      move_ms, bank_ms, plays):
    match = Match(seed=plays)
    for _ in range(plays):
        match.play(match.deal.legal_cards()[0])
    obs = conv.observation_bytes(match, seat, b"".join(
        conv.field_bytes(0x52, conv.trick_bytes(t)) for t in match.deal.tricks))
    got = pb.RefereeMessage.FromString(conv.turn_request_bytes(
        conv.game_id_field(game_id), rid, redeal, obs, deadline, move_ms, bank_ms))
    assert got == pb.RefereeMessage(turns=[conv.turn_request(
        game_id, rid, redeal, conv.observation(match, seat), deadline, move_ms, bank_ms)])


@given(texts, tricks)
def test_trick_event_bytes_are_the_generated_event(game_id, t):
    got = pb.RefereeMessage.FromString(conv.trick_event_bytes(conv.game_id_field(game_id),
                                                              conv.trick_bytes(t)))
    assert got == pb.RefereeMessage(events=[pb.GameEvent(game_id=game_id,
                                                         trick_end=conv.trick_to_pb(t))])


@given(texts, u64, st.one_of(st.integers(min_value=0, max_value=39), st.booleans()))
def test_action_bytes_are_the_generated_action(game_id, rid, choice):
    gid = conv.game_id_field(game_id)
    if isinstance(choice, bool):
        mine, theirs = conv.action_bytes(gid, rid, redeal=choice), pb.Action(redeal=choice)
    else:
        mine, theirs = conv.action_bytes(gid, rid, card=choice), pb.Action(card=choice)
    theirs.game_id, theirs.request_id = game_id, rid
    assert pb.BotMessage.FromString(mine) == pb.BotMessage(actions=[theirs])


@given(st.integers(min_value=0, max_value=10**6), seats, st.integers(min_value=0, max_value=2**31),
       st.integers(min_value=0, max_value=2**31), st.integers(min_value=0, max_value=2**20),
       st.integers(min_value=0, max_value=2**20), st.integers(min_value=0, max_value=60))
@settings(max_examples=150, deadline=None)
def test_observation_bytes_are_the_generated_observation(seed, seat, g0, g1, held, number, plays):
    """Random states and numbers of any size (game points, held-over deals, deal numbers)."""
    rng = random.Random(seed)
    match = Match(Variant(weak_hand_redeal=seed % 2 == 0), seed=seed)
    for _ in range(plays):
        if match.over:
            break
        if match.awaiting_redeal:
            match.redeal(False)
        else:
            match.play(rng.choice(match.deal.legal_cards()))
    match.game_points[:] = [g0, g1]
    match.held = held
    match.deal.number = number
    done = b"".join(conv.field_bytes(0x52, conv.trick_bytes(t)) for t in match.deal.tricks)
    assert pb.Observation.FromString(conv.observation_bytes(match, seat, done)) == \
        conv.observation(match, seat)


def test_end_reasons_cross_the_wire_as_their_words():
    from sueca.engine import DealResult, End
    for end in End:
        r = DealResult(3, 1, end, (60, 60), (0, 0), None if end == End.NORMAL else 2)
        m = conv.deal_end_to_pb(r)
        assert m.end == end.value
        back = conv.deal_result_from_pb(pb.DealEnd.FromString(m.SerializeToString()))
        assert back == r and back.end is end
    with pytest.raises(ValueError, match="unknown end 'resigned'"):
        conv.end_from_pb("resigned")


def test_a_bank_of_0_is_no_bank_and_an_absent_bank_the_default():
    base = {"match_id": "m", "bots": ["a", "b", "c", "d"], "seed": 1}
    none = conv.spec_to_pb({**base, "bank_ms": 0})
    assert none.HasField("bank_ms") and conv.check_spec(none).bank_ms == 0
    assert conv.spec_from_pb(none)["bank_ms"] == 0
    for absent in ({**base}, {**base, "bank_ms": None}):
        m = conv.spec_to_pb(absent)
        assert not m.HasField("bank_ms") and conv.check_spec(m).bank_ms == conv.DEFAULT_BANK_MS
        assert "bank_ms" not in conv.spec_from_pb(m)
    # a spec written before the field had presence (0 was never sent) still gets the default
    old = pb.MatchSpec.FromString(pb.MatchSpec(match_id="m", bots=["a"] * 4).SerializeToString())
    assert conv.check_spec(old).bank_ms == conv.DEFAULT_BANK_MS


# -- a resigning bot's reason as the record keeps it ---------------------------------------------

def test_fault_detail_keeps_a_short_reason_whole() -> None:
    cap = conv.FAULT_DETAIL_CHARS
    assert conv.fault_detail("x" * cap) == "x" * cap
    assert conv.fault_detail("a\nb") == "a\\nb"


def _cut_fairly(reason: str, out: str) -> None:
    """``out`` is ``reason`` escaped, cut after a whole escape, then "...", within the cap."""
    pieces = [c if c.isprintable() else repr(c)[1:-1] for c in reason]
    assert len(out) <= conv.FAULT_DETAIL_CHARS and out.isprintable(), (len(out), out[-12:])
    assert out.endswith("..."), out[-12:]
    body, ends, at = out[:-3], [0], 0
    for p in pieces:
        at += len(p)
        ends.append(at)
    assert "".join(pieces).startswith(body) and len(body) in ends, (len(body), body[-12:])


@pytest.mark.parametrize("reason", [
    "x" * (conv.FAULT_DETAIL_CHARS + 1),
    "x" * 5000,
    "x" * (conv.FAULT_DETAIL_CHARS - 1) + "\x1b",   # an escape across the cap
    "x" * (conv.FAULT_DETAIL_CHARS - 4) + "\x1b[31m",  # an escape where "..." goes
    "x" * (conv.FAULT_DETAIL_CHARS - 2) + "\n\n",  # two short escapes across the cap
    "\x00" * conv.FAULT_DETAIL_CHARS,  # every character an escape of four
    "\U0010ffff" * 100,  # escapes of ten
], ids=["one-over", "long", "escape-across-cap", "escape-at-dots", "two-escapes",
        "all-escapes", "wide-escapes"])
def test_fault_detail_of_a_long_reason_fits_the_cap_with_its_dots(reason: str) -> None:
    _cut_fairly(reason, conv.fault_detail(reason))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=600))
def test_fault_detail_is_printable_capped_and_never_cuts_an_escape(reason: str) -> None:
    out = conv.fault_detail(reason)
    escaped = "".join(c if c.isprintable() else repr(c)[1:-1] for c in reason)
    if len(escaped) <= conv.FAULT_DETAIL_CHARS:
        assert out == escaped
    else:
        _cut_fairly(reason, out)
