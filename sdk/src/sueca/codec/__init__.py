"""The one place where engine objects become protobuf messages, and messages become engine objects.

The referee builds every message a bot sees here, straight from engine state (hands as masks,
tricks as tuples), so what a seat is told is decided in one short module that a reviewer can
read whole: a seat's :func:`observation` carries its own hand and public play, nothing else.

Match specs travel as plain dicts between the league (Celery, the CLI) and the referee's control
client (typed as :class:`SpecDict`); :func:`spec_to_pb` and :func:`spec_from_pb` are the two
directions, and :func:`check_spec` turns a wire spec into engine values (a :class:`MatchPlan`)
or raises :class:`SpecError` quoting the bad field. Imports only protobuf and the engine, so the
SDK may use it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TypedDict

from sueca.engine import (
    CARDS,
    Card,
    DealResult,
    DeckError,
    End,
    Match,
    SuecaError,
    Trick,
    Variant,
    VariantError,
    card,
)
from sueca.engine.cards import cards_of, validate_deck
from sueca.v1 import sueca_pb2 as pb

__all__ = [
    "SpecError", "MatchPlan", "SpecDict", "ResultDict", "end_from_pb", "variant_to_pb",
    "variant_from_pb", "trick_to_pb", "trick_from_pb",
    "deal_end_to_pb", "deal_result_from_pb", "observation", "turn_request", "match_start",
    "match_end", "result_to_pb", "result_to_dict", "spec_to_pb", "spec_from_pb", "check_spec",
    "parse_seed", "event_to_dict", "varint", "field_bytes", "game_id_field", "trick_bytes",
    "observation_bytes", "turn_request_bytes", "trick_event_bytes", "event_bytes",
    "error_bytes", "welcome_bytes", "action_bytes", "resign_bytes", "fault_detail",
    "FAULT_DETAIL_CHARS",
]

# Defaults for clocks a spec leaves at 0 (proto3 cannot tell 0 from absent).
DEFAULT_MOVE_MS = 2000
DEFAULT_BANK_MS = 20000
DEFAULT_GRACE_MS = 5000
MAX_CLOCK_MS = 3_600_000
MAX_DECKS = 1000
FAULT_DETAIL_CHARS = 200  # a resigning bot's reason, as the match record keeps it
RESIGN_REASON_CHARS = 1000  # what the SDK sends of it (the referee keeps less)


class SpecError(ValueError):
    """A match spec the referee cannot run; the message names the bad field and value."""


# -- variants -----------------------------------------------------------------------------------

def variant_to_pb(v: Variant) -> pb.Variant:
    return pb.Variant(trump_card=v.trump_card, tie=v.tie, bandeira=v.bandeira, target=v.target,
                      weak_hand_redeal=v.weak_hand_redeal, direction=v.direction)


def variant_from_pb(m: pb.Variant) -> Variant:
    """Empty fields mean the default; anything else must be a valid value (VariantError)."""
    values: dict[str, Any] = {}
    for key in ("trump_card", "tie", "bandeira", "direction"):
        text = getattr(m, key)
        if text:
            values[key] = text
    if m.target:
        values["target"] = m.target
    if m.weak_hand_redeal:
        values["weak_hand_redeal"] = True
    return Variant.from_dict(values)


# -- tricks and deals ---------------------------------------------------------------------------

def trick_to_pb(t: Trick) -> pb.Trick:
    return pb.Trick(leader=t.leader, cards=t.cards, winner=-1 if t.winner is None else t.winner,
                    points=t.points)


def trick_from_pb(m: pb.Trick) -> Trick:
    return Trick(m.leader, tuple(map(CARDS.__getitem__, m.cards)),
                 None if m.winner < 0 else m.winner, m.points)


def deal_end_to_pb(r: DealResult) -> pb.DealEnd:
    return pb.DealEnd(number=r.number, dealer=r.dealer, end=r.end, points=r.points,
                      game_points=r.game_points,
                      fault_seat=-1 if r.fault_seat is None else r.fault_seat)


def end_from_pb(text: str) -> End:
    """An ``end`` field (DealEnd, MatchEnd, MatchResult) as the engine's :class:`End`."""
    try:
        return End(text)
    except ValueError:
        raise ValueError(f"unknown end {text[:40]!r}: expected one of "
                         f"{', '.join(End)}") from None


def deal_result_from_pb(m: pb.DealEnd) -> DealResult:
    return DealResult(m.number, m.dealer, end_from_pb(m.end), (m.points[0], m.points[1]),
                      (m.game_points[0], m.game_points[1]),
                      None if m.fault_seat < 0 else m.fault_seat)


# -- what a seat sees ---------------------------------------------------------------------------

_Observation = pb.Observation
_PlayedCard = pb.PlayedCard
_TurnRequest = pb.TurnRequest


def observation(match: Match, seat: int,
                tricks: Sequence[pb.Trick] | None = None) -> pb.Observation:
    """Everything ``seat`` may know now, straight from engine state: its own hand, the legal
    cards (empty unless it is to play), the turned trump card and public play. No other seat's
    unplayed card is read here, which is the whole hidden-information guarantee of the wire.

    ``tricks`` may pass the deal's completed tricks already converted (the match runner keeps
    them as they finish), so a turn costs one message build, not one per past trick.
    """
    deal = match.deal
    hand = deal.hands[seat]
    trick = deal.trick
    legal = match.legal_cards(seat)
    lead = deal.leader
    if tricks is None:
        tricks = [trick_to_pb(t) for t in deal.tricks]
    return _Observation(
        seat=seat, hand=cards_of(hand), legal=legal, trump=deal.trump,
        trump_suit=deal.trump_suit, trump_held=bool(deal.hands[deal.dealer] >> deal.trump & 1),
        dealer=deal.dealer, leader=lead,
        trick=[_PlayedCard(seat=(lead + i) & 3, card=c) for i, c in enumerate(trick)],
        tricks=tricks, points=deal.points, game_points=match.game_points,
        held_over=match.held, deal_number=deal.number)


def turn_request(game_id: str, request_id: int, redeal: bool, obs: pb.Observation,
                 deadline_ms: int, move_ms: int, bank_ms: int) -> pb.TurnRequest:
    return _TurnRequest(game_id=game_id, request_id=request_id,
                        kind=pb.TurnRequest.REDEAL if redeal else pb.TurnRequest.PLAY,
                        observation=obs, deadline_ms=deadline_ms, move_ms=move_ms, bank_ms=bank_ms)


def match_start(seat: int, seats: Sequence[str], variant: Variant,
                bot_seed: int) -> pb.MatchStart:
    """A seat's match start: public facts and its own bot seed, never the match id (the seats
    of one match must not be linkable by what they are told)."""
    return pb.MatchStart(seat=seat, seats=seats, variant=variant_to_pb(variant),
                         bot_seed=bot_seed)


def match_end(match: Match, seats: Sequence[str]) -> pb.MatchEnd:
    fault = match.fault_seat
    return pb.MatchEnd(game_points=match.game_points,
                       winner=-1 if match.winner is None else match.winner, end=match.end or "",
                       fault_seat=-1 if fault is None else fault,
                       fault_bot="" if fault is None else seats[fault])


def result_to_pb(match_id: str, match: Match, seats: Sequence[str],
                 replay: Mapping[str, Any] | None, fault_detail: str = "") -> pb.MatchResult:
    """The final result; ``replay`` (the sueca-replay/1 record) only for RunMatch, never Watch;
    ``fault_detail`` the reason a resigning bot gave (already made printable and capped:
    :func:`fault_detail`)."""
    fault = match.fault_seat
    return pb.MatchResult(
        match_id=match_id, end=match.end or "", winner=-1 if match.winner is None else match.winner,
        game_points=match.game_points, fault_seat=-1 if fault is None else fault,
        fault_bot="" if fault is None else seats[fault],
        replay_json=json.dumps(replay, separators=(",", ":")) if replay is not None else "",
        fault_detail=fault_detail)


def fault_detail(reason: str) -> str:
    """A resigning bot's reason as the match record keeps it: one line of printable characters
    (a control character or terminal escape is written as its Python escape), at most
    FAULT_DETAIL_CHARS characters plus "...". The text is the bot's: never trusted."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1]
                   for c in reason[:FAULT_DETAIL_CHARS + 1])
    return text if len(text) <= FAULT_DETAIL_CHARS else text[:FAULT_DETAIL_CHARS] + "..."


class ResultDict(TypedDict):
    """A match result as the league records it (:func:`result_to_dict`)."""

    match_id: str
    end: End
    winner: int | None  # a team, or None (aborted)
    game_points: list[int]
    fault_seat: int | None
    fault_bot: str | None
    fault_detail: str | None  # a bot_error: the reason the bot resigned with (fault_detail())
    replay: dict[str, Any] | None  # the sueca-replay/1 record (RunMatch), None otherwise


def result_to_dict(m: pb.MatchResult) -> ResultDict:
    """A MatchResult as the plain dict the league records (``replay`` parsed, or None)."""
    return {
        "match_id": m.match_id, "end": end_from_pb(m.end), "winner": None if m.winner < 0 else m.winner,
        "game_points": list(m.game_points),
        "fault_seat": None if m.fault_seat < 0 else m.fault_seat,
        "fault_bot": m.fault_bot or None,
        "fault_detail": fault_detail(m.fault_detail) if m.fault_detail else None,
        "replay": json.loads(m.replay_json) if m.replay_json else None,
    }


def event_to_dict(e: pb.MatchEvent) -> dict[str, Any]:
    """A MatchEvent (RunMatch, Watch) as a dict: ``{"type": ..., "match_id": ..., ...}``."""
    kind = e.WhichOneof("event")
    out: dict[str, Any] = {"type": kind, "match_id": e.match_id}
    if kind == "started":
        s = e.started
        out.update(seats=list(s.seats), variant=variant_from_pb(s.variant).to_dict())
    elif kind == "card":
        out.update(seat=e.card.seat, card=str(CARDS[e.card.card]))
    elif kind == "trick_end":
        t = trick_from_pb(e.trick_end)
        out.update(leader=t.leader, cards=[str(c) for c in t.cards], winner=t.winner,
                   points=t.points)
    elif kind == "deal_end":
        r = deal_result_from_pb(e.deal_end)
        out.update(number=r.number, dealer=r.dealer, end=r.end, points=list(r.points),
                   game_points=list(r.game_points), fault_seat=r.fault_seat)
    elif kind == "deal_start":
        d = e.deal_start
        out.update(number=d.number, dealer=d.dealer, trump=str(CARDS[d.trump]))
    elif kind == "result":
        out.update(result_to_dict(e.result))
    return out


# -- hand-rolled encoders for the hot path ------------------------------------------------------
#
# A turn request is built once per card, for every card of every match, so it is encoded here
# straight to bytes (protobuf's wire format is a concatenation of tagged fields) instead of
# building message objects and copying them into a batch. Cards, points and small counts are
# single-byte varints. tests/codec/test_codec.py checks every encoder against the generated classes
# (on random messages, with hypothesis), so a field number out of step with sueca.proto fails.

_V = tuple(bytes((n,)) for n in range(128))
_U64 = (1 << 64) - 1


def varint(n: int) -> bytes:
    """Protobuf base-128 varint; negative numbers as 64-bit two's complement (int32 -1)."""
    if 0 <= n < 16384:  # cards, points, request ids, clocks in ms: one lookup
        return _VT[n]
    n &= _U64
    # 14 bits a lookup: a deadline in epoch ms (41 bits, one per turn request) costs three,
    # not six rounds of a bytearray loop (measured: 0.8 us instead of 2.7)
    out = _C14[n & 0x3FFF]
    n >>= 14
    while n >= 16384:
        out += _C14[n & 0x3FFF]
        n >>= 14
    return out + _VT[n]


_VT = _V + tuple(bytes(((n & 127) | 128, n >> 7)) for n in range(128, 16384))
_C14 = tuple(bytes(((n & 127) | 128, (n >> 7) | 128)) for n in range(16384))  # more follows


def field_bytes(tag: int, payload: bytes) -> bytes:
    """A length-delimited field: ``tag`` is (field number << 3) | 2, below 128."""
    n = len(payload)
    return _V[tag] + (_V[n] if n < 128 else varint(n)) + payload


def game_id_field(game_id: str) -> bytes:
    """Field 1 (game_id) of TurnRequest, GameEvent, Action and ActionError, encoded once."""
    return field_bytes(0x0A, game_id.encode())


def trick_bytes(t: Trick) -> bytes:
    """A Trick message, encoded (without its field tag)."""
    cards = bytes(t.cards)
    return (b"\x08" + _V[t.leader] + b"\x12" + _V[len(cards)] + cards
            + b"\x18" + varint(-1 if t.winner is None else t.winner) + b"\x20" + _V[t.points])


# Cards as bytes straight from masks: a hand (and the legal cards) by 14-bit chunks,
# a card of the current trick by (seat, card) as a whole PlayedCard field (field 9).
_HAND_BYTES = tuple(
    tuple(bytes(base + b for b in range(14) if m >> b & 1) for m in range(1 << bits))
    for base, bits in ((0, 14), (14, 14), (28, 12)))
_H0, _H1, _H2 = _HAND_BYTES
_PLAYED = tuple(tuple(b"\x4a\x04\x08" + _V[s] + b"\x10" + _V[c] for c in range(40))
                for s in range(4))


# Fields 4-7 (trump, trump_suit, trump_held, dealer) are fixed for a deal but for trump_held:
# one lookup instead of nine parts. Index: [trump_held][trump][dealer].
_TRUMP_DEALER = tuple(tuple(tuple(
    bytes((0x20, t, 0x28, t // 10, 0x30, held, 0x38, d)) for d in range(4)) for t in range(40))
    for held in (0, 1))


def observation_bytes(match: Match, seat: int, tricks: bytes) -> bytes:
    """:func:`observation`, encoded: ``tricks`` is the deal's finished tricks, each already
    encoded as field 10 (the match runner keeps them as they finish)."""
    deal = match.deal
    hands = deal.hands
    hand = hands[seat]
    own = _H0[hand & 0x3FFF] + _H1[(hand >> 14) & 0x3FFF] + _H2[hand >> 28]
    m = match.legal_mask(seat)
    legal = own if m == hand else _H0[m & 0x3FFF] + _H1[(m >> 14) & 0x3FFF] + _H2[m >> 28]
    lead = deal.leader
    trump = deal.trump
    dealer = deal.dealer
    p0, p1 = deal.points
    a, b = match.game_points
    held, number = match.held, deal.number
    if a < 128 and b < 128 and held < 128 and number < 128:  # always, but for endless matches
        tail = bytes((0x5A, 2, p0, p1, 0x62, 2, a, b, 0x68, held, 0x70, number))
    else:
        gp = varint(a) + varint(b)
        tail = (bytes((0x5A, 2, p0, p1, 0x62)) + _V[len(gp)] + gp + b"\x68" + varint(held)
                + b"\x70" + varint(number))
    head = (bytes((0x08, seat, 0x12, len(own))) + own + b"\x1a" + _V[len(legal)] + legal
            + _TRUMP_DEALER[hands[dealer] >> trump & 1][trump][dealer] + b"\x40" + _V[lead])
    for c in deal.trick:  # the cards on the table, from the leader: PlayedCard fields
        head += _PLAYED[lead][c]
        lead = (lead + 1) & 3
    return head + tricks + tail


def turn_request_bytes(game_id: bytes, request_id: int, redeal: bool, obs: bytes,
                       deadline_ms: int, move_ms: int, bank_ms: int) -> bytes:
    """A TurnRequest as field 2 of RefereeMessage: ready to go into a batch."""
    vt = _VT
    n = len(obs)
    body = b"".join((
        game_id, b"\x10", vt[request_id] if request_id < 16384 else varint(request_id),
        b"\x18\x01" if redeal else b"", b"\x22", vt[n] if n < 16384 else varint(n), obs,
        b"\x28", varint(deadline_ms), b"\x30", vt[move_ms] if move_ms < 16384 else varint(move_ms),
        b"\x38", vt[bank_ms] if bank_ms < 16384 else varint(bank_ms)))
    n = len(body)
    return b"\x12" + (vt[n] if n < 16384 else varint(n)) + body


def trick_event_bytes(game_id: bytes, trick: bytes) -> bytes:
    """GameEvent{game_id, trick_end} as field 3 of RefereeMessage."""
    return field_bytes(0x1A, game_id + field_bytes(0x1A, trick))


def event_bytes(event: pb.GameEvent) -> bytes:
    """Any GameEvent (built as a message: the rare ones) as field 3 of RefereeMessage."""
    return field_bytes(0x1A, event.SerializeToString())


def error_bytes(game_id: str, request_id: int, code: str, message: str) -> bytes:
    """An ActionError as field 4 of RefereeMessage."""
    return field_bytes(0x22, pb.ActionError(game_id=game_id, request_id=request_id, code=code,
                                            message=message).SerializeToString())


def welcome_bytes(referee_id: str, capacity: int) -> bytes:
    """A whole RefereeMessage carrying only ``welcome``."""
    return pb.RefereeMessage(welcome=pb.Welcome(referee_id=referee_id,
                                                capacity=capacity)).SerializeToString()


def action_bytes(game_id: bytes, request_id: int, card: int | None = None,
                 redeal: bool | None = None) -> bytes:
    """An Action (a card, or a redeal answer) as field 2 of BotMessage: the SDK's answers."""
    if card is not None:
        choice = b"\x18" + varint(card)
    else:
        choice = b"\x20\x01" if redeal else b"\x20\x00"
    return field_bytes(0x12, game_id + b"\x10" + varint(request_id) + choice)


def resign_bytes(game_id: bytes, request_id: int, reason: str) -> bytes:
    """An Action resigning a game (``reason``: cut to RESIGN_REASON_CHARS) as field 2 of
    BotMessage: what the SDK sends when the bot's code raised."""
    body = field_bytes(0x0A, reason[:RESIGN_REASON_CHARS].encode("utf-8", "replace"))
    return field_bytes(0x12, game_id + b"\x10" + varint(request_id) + field_bytes(0x2A, body))


# -- match specs --------------------------------------------------------------------------------

def parse_seed(text: str) -> int | str | None:
    """A wire seed back to the engine's: canonical decimal integers are ints, so ``"42"`` over
    the network deals the same cards as ``Match(seed=42)`` in-process; empty means none."""
    if text == "":
        return None
    try:
        n = int(text)
    except ValueError:
        return text
    return n if str(n) == text else text


def spec_to_pb(spec: Mapping[str, Any]) -> pb.MatchSpec:
    """A spec dict to the wire. Keys: ``bots`` (4 names), and optionally ``match_id``,
    ``variant`` (dict, ``key=value`` words or a Variant), ``seed``, ``decks`` (lists of 40 cards,
    numbers or text), ``first_dealer`` (None: drawn), ``move_ms``, ``bank_ms``, ``grace_ms``,
    ``lenient``, ``quiet``."""
    unknown = set(spec) - _SPEC_KEYS
    if unknown:
        raise SpecError(f"unknown match spec field(s) {', '.join(sorted(unknown))}: valid fields "
                        f"are {', '.join(sorted(_SPEC_KEYS))}")
    try:
        v = spec.get("variant") or {}
        if isinstance(v, Variant):
            variant = v
        elif isinstance(v, Mapping):
            variant = Variant.from_dict(v)
        elif isinstance(v, str):
            variant = Variant.parse(v.split())
        else:
            variant = Variant.parse(v)
        decks = [pb.Deck(cards=[int(card(c)) for c in d]) for d in spec.get("decks") or ()]
    except SuecaError as err:
        raise SpecError(str(err)) from None
    seed = spec.get("seed")
    m = pb.MatchSpec(
        match_id=str(spec.get("match_id") or ""), bots=list(spec.get("bots") or ()),
        variant=variant_to_pb(variant), seed="" if seed is None else str(seed), decks=decks,
        move_ms=int(spec.get("move_ms") or 0),
        grace_ms=int(spec.get("grace_ms") or 0), lenient=bool(spec.get("lenient")),
        quiet=bool(spec.get("quiet")))
    if spec.get("bank_ms") is not None:  # 0 is sent: no bank (absent: the default)
        m.bank_ms = int(spec["bank_ms"])
    fd = spec.get("first_dealer")
    if fd is not None:
        m.first_dealer = int(fd)
    return m




class SpecDict(TypedDict, total=False):
    """A match spec as the league and the control client pass it (:func:`spec_to_pb` also takes
    a variant as words or a :class:`Variant`, and cards as numbers)."""

    match_id: str
    bots: list[str]
    variant: dict[str, Any]
    seed: int | str | None
    decks: list[list[str | int]]
    first_dealer: int | None
    move_ms: int
    bank_ms: int
    grace_ms: int
    lenient: bool
    quiet: bool


_SPEC_KEYS = SpecDict.__optional_keys__  # every field (total=False): the keys spec_to_pb takes


def spec_from_pb(m: pb.MatchSpec) -> SpecDict:
    """The wire spec as a dict of the same shape :func:`spec_to_pb` takes (cards as text)."""
    return {
        "match_id": m.match_id, "bots": list(m.bots),
        "variant": variant_from_pb(m.variant).to_dict(), "seed": parse_seed(m.seed),
        "decks": [[str(CARDS[c]) if c < 40 else c for c in d.cards] for d in m.decks],
        "first_dealer": m.first_dealer if m.HasField("first_dealer") and m.first_dealer >= 0
        else None,
        "move_ms": m.move_ms, "grace_ms": m.grace_ms,
        "lenient": m.lenient, "quiet": m.quiet,
        **({"bank_ms": m.bank_ms} if m.HasField("bank_ms") else {}),
    }


class MatchPlan(NamedTuple):
    """A checked spec, in engine values, with clock defaults filled in."""

    match_id: str
    bots: tuple[str, str, str, str]
    variant: Variant
    seed: int | str | None
    decks: tuple[tuple[Card, ...], ...]
    first_dealer: int | None
    move_ms: int
    bank_ms: int
    grace_ms: int
    lenient: bool
    quiet: bool


def check_spec(m: pb.MatchSpec) -> MatchPlan:
    """Validate a wire spec; :class:`SpecError` names the first problem (INVALID_ARGUMENT)."""
    if len(m.bots) != 4:
        some = [b[:40] for b in m.bots[:6]]  # a caller's text: a few names, cut
        raise SpecError(f"a match needs 4 bots, one per seat; the spec names {len(m.bots)}: "
                        f"{some!r}{' and more' if len(m.bots) > 6 else ''}")
    for s, name in enumerate(m.bots):
        if not name:
            raise SpecError(f"seat {s} has no bot name")
    try:
        variant = variant_from_pb(m.variant)
    except VariantError as err:
        raise SpecError(str(err)) from None
    if len(m.decks) > MAX_DECKS:
        raise SpecError(f"{len(m.decks)} decks in the spec; at most {MAX_DECKS}")
    decks = []
    for k, d in enumerate(m.decks):
        try:
            decks.append(validate_deck(d.cards))
        except DeckError as err:
            raise SpecError(f"deck {k}: {err}") from None
    first_dealer = m.first_dealer if m.HasField("first_dealer") else -1
    if first_dealer not in (-1, 0, 1, 2, 3):
        raise SpecError(f"bad first_dealer {first_dealer}: a seat 0..3, or -1 to draw it")
    clocks = {}
    for key, default in (("move_ms", DEFAULT_MOVE_MS), ("bank_ms", DEFAULT_BANK_MS),
                         ("grace_ms", DEFAULT_GRACE_MS)):
        if key == "bank_ms":  # 0 given is no bank; only an absent bank gets the default
            value = m.bank_ms if m.HasField("bank_ms") else default
        else:
            value = getattr(m, key) or default
        if value > MAX_CLOCK_MS:
            raise SpecError(f"bad {key} {value}: at most {MAX_CLOCK_MS} (one hour)")
        clocks[key] = value
    return MatchPlan(
        match_id=m.match_id, bots=tuple(m.bots), variant=variant,  # type: ignore[arg-type]
        seed=parse_seed(m.seed), decks=tuple(decks),
        first_dealer=None if first_dealer < 0 else first_dealer, lenient=m.lenient,
        quiet=m.quiet, **clocks)
