"""What a networked bot has done since it started, as one log line (:class:`Summary`).

``sueca-bot run`` logs the line every ``SUECA_BOT_SUMMARY_SECONDS`` (a minute by default) and
when it stops, so that an author watching the terminal can tell the bot is playing, and how
well: matches played, won and lost, faults by kind, and the mean time the bot took per move.

Matches are counted as the arena counts them, one per match whatever the seats: a bot in both
seats of a team plays two games of one match (one per seat, each with its own opaque game id,
for the referee links no seats), so each game counts as its share of the match, one over the
number of seats its bot holds there. A process serving every seat of its bot counts whole
matches; processes sharing a bot's seats count shares that add up to the arena's count.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from sueca.sdk.table import per_move
from sueca.v1 import sueca_pb2 as pb

#: Match ends that are a seat's fault (the seat in ``fault_seat``); a renúncia ends a deal
MATCH_FAULTS = ("timeout", "disconnect", "bot_error")
DEAL_FAULT = "renuncia"
_WORDS = {"renuncia": "renúncia", "bot_error": "bot error"}  # a fault kind in the line's prose


def _count(n: Fraction) -> str:
    return str(n.numerator) if n.denominator == 1 else f"{float(n):.1f}"


class Summary:
    """Counts of one process's matches. Fed by the client's event loop only: no lock."""

    def __init__(self) -> None:
        self.played = self.won = self.lost = Fraction(0)
        self.faults: Counter[str] = Counter()
        self.moves = 0
        self.move_seconds = 0.0

    def deal_end(self, seat: int, end: pb.DealEnd) -> None:
        """A deal of a game played at ``seat`` ended: a renúncia of this seat is a fault."""
        if end.end == DEAL_FAULT and end.fault_seat == seat:
            self.faults[DEAL_FAULT] += 1

    def match_end(self, seat: int, end: pb.MatchEnd, share: Fraction = Fraction(1)) -> None:
        """A game played at ``seat`` ended, ``share`` of its match (see the module's notes):
        won or lost by its team (an aborted match is neither), and a fault when it ended by this
        seat's timeout, disconnect or error."""
        self.played += share
        if end.winner == seat % 2:
            self.won += share
        elif end.winner >= 0:
            self.lost += share
        if end.end in MATCH_FAULTS and end.fault_seat == seat:
            self.faults[end.end] += 1

    def resigned(self, share: Fraction = Fraction(1)) -> None:
        """This process resigned a game, ``share`` of its match (its bot raised, or answered no
        card it holds): the referee ends the match as this seat's bot error, lost."""
        self.played += share
        self.lost += share
        self.faults["bot_error"] += 1

    def answered(self, moves: int, seconds: float) -> None:
        """The bot answered ``moves`` turns, taking ``seconds`` in all."""
        self.moves += moves
        self.move_seconds += seconds

    def line(self) -> str:
        """``12 matches played: 7 won, 5 lost · faults: timeout 1 · 3.20 ms a move (480
        moves)``"""
        faults = ", ".join(f"{_WORDS.get(kind, kind)} {n}"
                           for kind, n in sorted(self.faults.items())) or "none"
        moves = (f"{per_move(1000 * self.move_seconds / self.moves)} a move ({self.moves} moves)"
                 if self.moves else "no moves yet")
        return (f"{_count(self.played)} match{'' if self.played == 1 else 'es'} played: "
                f"{_count(self.won)} won, {_count(self.lost)} lost · faults: {faults} · {moves}")
