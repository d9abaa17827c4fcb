"""Engine objects to protobuf messages and back: variants, tricks, deals, and what one seat
is told (:func:`observation`: its own hand and public play, nothing else). The referee builds
every message a bot sees from these, so the hidden-information guarantee of the wire is this
module, short enough for a reviewer to read whole."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sueca.engine import CARDS, DealResult, End, Match, Trick, Variant
from sueca.engine.cards import cards_of
from sueca.v1 import sueca_pb2 as pb

__all__ = ["variant_to_pb", "variant_from_pb", "trick_to_pb", "trick_from_pb", "deal_end_to_pb",
           "end_from_pb", "deal_result_from_pb", "observation", "turn_request", "match_start",
           "match_end"]


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
