"""Match results on the wire and as the league records them: :func:`result_to_pb` (the
referee's), :func:`result_to_dict` (the control client's typed :class:`ResultDict`), a
resigning bot's reason made safe to keep (:func:`fault_detail`) and events as dicts."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from sueca.codec.convert import deal_result_from_pb, end_from_pb, trick_from_pb, variant_from_pb
from sueca.engine import CARDS, End, Match
from sueca.engine.replay import ReplayRecord
from sueca.v1 import sueca_pb2 as pb

__all__ = ["FAULT_DETAIL_CHARS", "ResultDict", "result_to_pb", "result_to_dict", "fault_detail",
           "event_to_dict"]

FAULT_DETAIL_CHARS = 200  # a resigning bot's reason, as the match record keeps it


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
    (a control character or terminal escape is written as its Python escape, never cut in
    half), at most FAULT_DETAIL_CHARS characters in all, a cut one ending in "...". The text is
    the bot's: never trusted."""
    cap = FAULT_DETAIL_CHARS
    parts: list[str] = []
    size = 0
    for c in reason[:cap + 1]:  # each character is at least one of the result's
        part = c if c.isprintable() else repr(c)[1:-1]
        parts.append(part)
        size += len(part)
        if size > cap:
            break
    else:
        return "".join(parts)
    while size > cap - 3:  # room for the "...": whole escapes only
        size -= len(parts.pop())
    return "".join(parts) + "..."


class ResultDict(TypedDict):
    """A match result as the league records it (:func:`result_to_dict`)."""

    match_id: str
    end: End
    winner: int | None  # a team, or None (aborted)
    game_points: list[int]
    fault_seat: int | None
    fault_bot: str | None
    fault_detail: str | None  # a bot_error: the reason the bot resigned with (fault_detail())
    replay: ReplayRecord | None  # the sueca-replay/1 record (RunMatch), None otherwise


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
