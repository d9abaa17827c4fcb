"""The faults the referee answers with an ``ActionError`` (the proto lists the codes).

All but ``late`` are protocol faults (the bot broke the protocol); ``late`` is an answer that
arrived after its game ended (the bot was slow, or another seat ended the match meanwhile), which
the metrics count in a class of its own (:func:`sueca.referee.metrics.fault_class`).

One module owns them so that the sessions (which answer faults no game is involved in) and the
match runner (which answers the rest) share them without importing each other.
"""

from __future__ import annotations

from enum import StrEnum


class Fault(StrEnum):
    """An ``ActionError.code``: the value is what travels on the wire."""

    UNKNOWN_GAME = "unknown_game"
    NOT_YOUR_SEAT = "not_your_seat"
    NOT_IN_HAND = "not_in_hand"
    OUT_OF_TURN = "out_of_turn"
    STALE_REQUEST = "stale_request"
    RENUNCIA_REFUSED = "renuncia_refused"
    MALFORMED = "malformed"
    LATE = "late"  # an answer to a game of this bot that already ended: slow, not broken


__all__ = ["Fault"]
