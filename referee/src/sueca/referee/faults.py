"""The protocol faults the referee answers with an ``ActionError`` (the proto lists the codes).

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


__all__ = ["Fault"]
