"""The observation array a learning agent sees: one seat's knowledge as a fixed-size float32
vector, built event by event.

One encoder serves both places an agent plays. The environments (:mod:`.aec`, :mod:`.single`)
keep a :class:`SeatEncoder` of the four seats and tell it each event as it happens (a deal, a
card, a trick), so a step writes a handful of numbers (one numpy assignment for all four
arrays) instead of rebuilding them. :func:`encode`
builds the same array from any :class:`sueca.engine.Observation` (self-play's view, a network
observation) by replaying that observation's public events through a fresh :class:`SeatEncoder`:
the same code writes every number, so a policy trained in the environment sees identical
arrays when :class:`~sueca.sdk.env.PolicyBot` plays it in self-play or against a referee.

Seats are relative to the observer: 0 is the observer, 1 the next seat to play (an opponent),
2 the partner, 3 the previous seat (the other opponent). Cards are numbered as in
:mod:`sueca.engine.cards` (``suit * 10 + strength``), which is also the action number.
Only public information and the observer's own hand go in: never another seat's hand.

Layout (offsets in :data:`LAYOUT`, total :data:`OBS_SIZE`):

========================  ====  ==========================================================
block                     size  meaning
========================  ====  ==========================================================
``hand``                  40    1 for each card in the observer's hand
``table``                 160   the trick on the table: 40 per relative seat
``led_suit``              4     the suit led, while a card is on the table
``leader``                4     who led (leads) the current trick, relative seat
``played``                160   every card each relative seat played this deal (table too)
``trump_card``            40    the turned card
``trump_suit``            4     its suit
``trump_held``            1     1 while the dealer still holds the turned card
``dealer``                4     the dealer, relative seat
``voids``                 16    4 suits per relative seat: 1 once it failed to follow that suit
``points``                2     card points this deal, own team then the other, / 120
``game_points``           2     game points, own team then the other, / the target, at most 1
``held_over``             1     tied deals still to be won, / 4, at most 1
``deal_number``           1     deals dealt before this one, / 32, at most 1
========================  ====  ==========================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from sueca.engine import Observation

__all__ = ["LAYOUT", "OBS_SIZE", "SeatEncoder", "encode", "mask_array"]

Array = npt.NDArray[np.float32]

# table, led_suit and leader side by side: taking a trick clears them in one assignment
_SIZES = (("hand", 40), ("table", 160), ("led_suit", 4), ("leader", 4), ("played", 160),
          ("trump_card", 40), ("trump_suit", 4), ("trump_held", 1), ("dealer", 4), ("voids", 16),
          ("points", 2), ("game_points", 2), ("held_over", 1), ("deal_number", 1))


def _layout() -> dict[str, tuple[int, int]]:
    out, at = {}, 0
    for name, size in _SIZES:
        out[name] = (at, size)
        at += size
    return out


LAYOUT: dict[str, tuple[int, int]] = _layout()
"""Block name -> (offset, size) in the observation array."""
OBS_SIZE = sum(size for _, size in _SIZES)

_HAND = LAYOUT["hand"][0]
_TABLE = LAYOUT["table"][0]
_PLAYED = LAYOUT["played"][0]
_TRUMP_CARD = LAYOUT["trump_card"][0]
_TRUMP_SUIT = LAYOUT["trump_suit"][0]
_TRUMP_HELD = LAYOUT["trump_held"][0]
_DEALER = LAYOUT["dealer"][0]
_LEADER = LAYOUT["leader"][0]
_LED = LAYOUT["led_suit"][0]
_VOIDS = LAYOUT["voids"][0]
_POINTS = LAYOUT["points"][0]
_GAME_POINTS = LAYOUT["game_points"][0]
_HELD = LAYOUT["held_over"][0]
_DEAL_NUMBER = LAYOUT["deal_number"][0]


class _Indices:
    """Flat positions in the arrays of a given tuple of observing seats, worked out once per
    tuple: what one event sets, for every observer at once, is one numpy assignment."""

    def __init__(self, seats: tuple[int, ...]) -> None:
        rows = [OBS_SIZE * i for i in range(len(seats))]
        rel = [[(s - me) & 3 for me in seats] for s in range(4)]  # rel[seat][observer]

        def at(offset: int, per_observer: Any) -> npt.NDArray[np.intp]:
            return np.array([row + offset + per_observer(i) for i, row in enumerate(rows)],
                            np.intp)

        # a card put on the table by a seat: its table and played slots in every array
        self.play = [[np.concatenate([
            at(_TABLE + c, lambda i, s=s: 40 * rel[s][i]),
            at(_PLAYED + c, lambda i, s=s: 40 * rel[s][i])]) for c in range(40)]
            for s in range(4)]
        # the flat position of the card in the hand of each observer that is that seat
        self.own = [[rows[i] + _HAND + c for i, me in enumerate(seats) if me == s]
                    for s in range(4) for c in range(40)]
        self.lead = [[np.concatenate([at(_LED + suit, lambda i: 0),
                                      at(_LEADER, lambda i, s=s: rel[s][i])])
                      for suit in range(4)] for s in range(4)]
        self.leader = [at(_LEADER, lambda i, s=s: rel[s][i]) for s in range(4)]
        self.void = [[at(_VOIDS + suit, lambda i, s=s: 4 * rel[s][i]) for suit in range(4)]
                     for s in range(4)]
        self.dealer = [at(_DEALER, lambda i, s=s: rel[s][i]) for s in range(4)]
        # a team's score in every array: the first slot of its own players, the second of the
        # others' (points, then game points)
        self.points = [at(_POINTS, lambda i, t=t: int(seats[i] & 1 != t)) for t in (0, 1)]
        self.game_points = [at(_GAME_POINTS, lambda i, t=t: int(seats[i] & 1 != t))
                            for t in (0, 1)]


_INDICES: dict[tuple[int, ...], _Indices] = {}


class SeatEncoder:
    """The observation arrays of ``seats`` (one row each, in that order), kept up to date by
    the events of the match.

    The caller tells it, in order: :meth:`deal` when a deal starts, :meth:`play` for every card
    put on the table (by any seat), :meth:`trick` when a trick is taken, and :meth:`scores` when
    the match's game points change outside a deal start (its end). ``arrays`` are live: copy a
    row to keep it. The environments keep one for the four seats, :func:`encode` one for the
    observing seat alone; every number is written by the same lines either way.
    """

    __slots__ = ("seats", "arrays", "_flat", "_at", "_trump", "_led", "_cards_on_table",
                 "_team_points", "_target")

    def __init__(self, seats: Sequence[int] = (0, 1, 2, 3)) -> None:
        self.seats = tuple(seats)
        self.arrays: npt.NDArray[np.float32] = np.zeros((len(self.seats), OBS_SIZE), np.float32)
        self._flat = self.arrays.reshape(-1)  # a view: writes land in ``arrays``
        found = _INDICES.get(self.seats)
        if found is None:
            found = _INDICES[self.seats] = _Indices(self.seats)
        self._at = found
        self._trump = -1
        self._led = -1
        self._cards_on_table = 0
        self._team_points = [0, 0]
        self._target = 4

    def deal(self, hands: Sequence[Iterable[int]], trump: int, dealer: int, number: int,
             game_points: Sequence[int], held_over: int, target: int) -> None:
        """A deal starts: ``hands[i]`` is the hand of ``seats[i]`` (the hand as it is now will
        do too: a card played is cleared from it), ``trump`` the turned card."""
        a = self.arrays
        a.fill(0.0)
        for row, hand in zip(a, hands, strict=True):
            for c in hand:
                row[_HAND + c] = 1.0
        self._trump = trump
        self._led = -1
        self._cards_on_table = 0
        self._team_points = [0, 0]
        self._target = target
        a[:, _TRUMP_CARD + trump] = 1.0
        a[:, _TRUMP_SUIT + trump // 10] = 1.0
        a[:, _TRUMP_HELD] = 1.0
        flat, at = self._flat, self._at
        flat[at.dealer[dealer]] = 1.0
        flat[at.leader[(dealer + 1) & 3]] = 1.0
        a[:, _DEAL_NUMBER] = min(number, 32) / 32
        self.scores(game_points, held_over)

    def play(self, seat: int, card: int) -> None:
        """``seat`` put ``card`` on the table (a lead when the table is empty)."""
        flat, at = self._flat, self._at
        if not self._cards_on_table:
            self._led = led = card // 10
            self.arrays[:, _LEADER:_LEADER + 4] = 0.0
            flat[at.lead[seat][led]] = 1.0
        elif card // 10 != self._led:  # did not follow: that seat has no card of the led suit
            flat[at.void[seat][self._led]] = 1.0
        self._cards_on_table += 1
        flat[at.play[seat][card]] = 1.0
        for i in at.own[40 * seat + card]:
            flat[i] = 0.0
        if card == self._trump:
            self.arrays[:, _TRUMP_HELD] = 0.0

    def trick(self, winner: int | None, points: int) -> None:
        """The trick on the table was taken by ``winner`` (None: cut short by a renúncia)."""
        self.arrays[:, _TABLE:_LEADER + 4] = 0.0  # table, led suit and leader
        self._led = -1
        self._cards_on_table = 0
        if winner is None:
            return
        flat, at = self._flat, self._at
        team = winner & 1
        pts = self._team_points
        pts[team] += points
        flat[at.points[team]] = pts[team] / 120
        flat[at.leader[winner]] = 1.0

    def scores(self, game_points: Sequence[int], held_over: int) -> None:
        """The match's game points (by team 0, 1) and tied deals held over."""
        target = self._target  # a match ends on reaching it: the last deal may overshoot
        flat, at = self._flat, self._at
        for team in (0, 1):
            flat[at.game_points[team]] = min(game_points[team], target) / target
        self.arrays[:, _HELD] = min(held_over, 4) / 4


def encode(observation: Observation) -> Array:
    """The observation array of ``observation``'s seat: what :class:`SeatEncoder` holds at the
    same point of the same match (its public events replayed through one)."""
    seat = observation.seat
    enc = SeatEncoder((seat,))
    enc.deal([observation.hand], observation.trump, observation.dealer,
             observation.deal_number, observation.game_points, observation.held_over,
             observation.variant.target)
    for t in observation.tricks:
        for s, c in zip(t.seats(), t.cards, strict=True):
            enc.play(s, c)
        enc.trick(t.winner, t.points)
    for s, c in observation.trick:
        enc.play(s, c)
    row: Array = enc.arrays[0]
    return row


def mask_array(cards: Iterable[int]) -> npt.NDArray[np.int8]:
    """The action mask: 1 for each card given (the legal cards), int8, 40 long."""
    out = np.zeros(40, np.int8)
    for c in cards:
        out[c] = 1
    return out
