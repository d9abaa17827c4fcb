"""What a networked bot has done since it started, as one log line (:class:`Summary`).

``sueca-bot run`` logs the line every ``SUECA_BOT_SUMMARY_SECONDS`` (a minute by default) and
when it stops, so that an author watching the terminal can tell the bot is playing, and how
well: games played, won and lost, faults by kind, and the mean time the bot took per move.
"""

from __future__ import annotations

from collections import Counter

from sueca.v1 import sueca_pb2 as pb

#: Match ends that are a seat's fault (the seat in ``fault_seat``); a renúncia ends a deal
MATCH_FAULTS = ("timeout", "disconnect", "bot_error")
DEAL_FAULT = "renuncia"


class Summary:
    """Counts of one process's games. Fed by the client's event loop only: no lock."""

    def __init__(self) -> None:
        self.played = self.won = self.lost = 0
        self.faults: Counter[str] = Counter()
        self.moves = 0
        self.move_seconds = 0.0

    def deal_end(self, seat: int, end: pb.DealEnd) -> None:
        """A deal of a game played at ``seat`` ended: a renúncia of this seat is a fault."""
        if end.end == DEAL_FAULT and end.fault_seat == seat:
            self.faults[DEAL_FAULT] += 1

    def match_end(self, seat: int, end: pb.MatchEnd) -> None:
        """A game played at ``seat`` ended: won or lost by its team (an aborted match is
        neither), and a fault when it ended by this seat's timeout, disconnect or error."""
        self.played += 1
        if end.winner == seat % 2:
            self.won += 1
        elif end.winner >= 0:
            self.lost += 1
        if end.end in MATCH_FAULTS and end.fault_seat == seat:
            self.faults[end.end] += 1

    def resigned(self) -> None:
        """This process resigned a game (its bot raised, or answered no card it holds): the
        referee ends the match as this seat's bot error, lost."""
        self.played += 1
        self.lost += 1
        self.faults["bot_error"] += 1

    def answered(self, moves: int, seconds: float) -> None:
        """The bot answered ``moves`` turns, taking ``seconds`` in all."""
        self.moves += moves
        self.move_seconds += seconds

    def line(self) -> str:
        """``12 games played: 7 won, 5 lost · faults: timeout 1 · 3.20 ms a move (480 moves)``"""
        faults = ", ".join(f"{kind} {n}" for kind, n in sorted(self.faults.items())) or "none"
        per_move = (f"{1000 * self.move_seconds / self.moves:.2f} ms a move ({self.moves} moves)"
                    if self.moves else "no moves yet")
        return (f"{self.played} game{'s' if self.played != 1 else ''} played: {self.won} won, "
                f"{self.lost} lost · faults: {faults} · {per_move}")
