"""The observation array a learning agent sees: one seat's knowledge as a fixed-size float32
vector, built event by event.

One encoder serves both places an agent plays. The environments (:mod:`.aec`, :mod:`.single`)
keep a :class:`SeatEncoder` per seat and tell it each event as it happens (a deal, a card, a
trick), so a step writes a handful of numbers instead of rebuilding the array. :func:`encode`
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
``played``                160   every card each relative seat played this deal (table too)
``trump_card``            40    the turned card
``trump_suit``            4     its suit
``trump_held``            1     1 while the dealer still holds the turned card
``dealer``                4     the dealer, relative seat
``leader``                4     who led (leads) the current trick, relative seat
``led_suit``              4     the suit led, while a card is on the table
``voids``                 16    4 suits per relative seat: 1 once it failed to follow that suit
``points``                2     card points this deal, own team then the other, / 120
``game_points``           2     game points, own team then the other, / the target, at most 1
``held_over``             1     tied deals still to be won, / 4, at most 1
``deal_number``           1     deals dealt before this one, / 32, at most 1
========================  ====  ==========================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from sueca.engine import Observation

__all__ = ["LAYOUT", "OBS_SIZE", "SeatEncoder", "encode", "mask_array"]

Array = npt.NDArray[np.float32]

_SIZES = (("hand", 40), ("table", 160), ("played", 160), ("trump_card", 40), ("trump_suit", 4),
          ("trump_held", 1), ("dealer", 4), ("leader", 4), ("led_suit", 4), ("voids", 16),
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


class SeatEncoder:
    """One seat's observation array, kept up to date by the events of the match.

    The caller tells it, in order: :meth:`deal` when a deal starts, :meth:`play` for every card
    put on the table (by any seat), :meth:`trick` when a trick is taken, and :meth:`scores` when
    the match's game points change outside a deal start (its end). ``array`` is the live array:
    copy it to keep it.
    """

    __slots__ = ("seat", "array", "_trump", "_dealer", "_led", "_on_table", "_team_points",
                 "_target")

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.array: Array = np.zeros(OBS_SIZE, np.float32)
        self._trump = -1
        self._dealer = -1
        self._led = -1
        self._on_table: list[int] = []  # table slots set, to clear them when the trick is taken
        self._team_points = [0, 0]  # own team, other team
        self._target = 4

    def deal(self, hand: Iterable[int], trump: int, dealer: int, number: int,
             game_points: Sequence[int], held_over: int, target: int) -> None:
        """A deal starts: ``hand`` is the observer's ten cards, ``trump`` the turned card."""
        a = self.array
        a.fill(0.0)
        for c in hand:
            a[_HAND + c] = 1.0
        seat = self.seat
        self._trump = trump
        self._dealer = dealer
        self._led = -1
        self._on_table.clear()
        self._team_points = [0, 0]
        self._target = target
        a[_TRUMP_CARD + trump] = 1.0
        a[_TRUMP_SUIT + trump // 10] = 1.0
        a[_TRUMP_HELD] = 1.0
        a[_DEALER + ((dealer - seat) & 3)] = 1.0
        a[_LEADER + ((dealer + 1 - seat) & 3)] = 1.0
        a[_DEAL_NUMBER] = min(number, 32) / 32
        self.scores(game_points, held_over)

    def play(self, seat: int, card: int) -> None:
        """``seat`` put ``card`` on the table (a lead when the table is empty)."""
        a = self.array
        rel = (seat - self.seat) & 3
        on_table = self._on_table
        if not on_table:
            self._led = led = card // 10
            a[_LED + led] = 1.0
            a[_LEADER:_LEADER + 4] = 0.0
            a[_LEADER + rel] = 1.0
        elif card // 10 != self._led:  # did not follow: that seat has no card of the led suit
            a[_VOIDS + 4 * rel + self._led] = 1.0
        slot = _TABLE + 40 * rel + card
        a[slot] = 1.0
        on_table.append(slot)
        a[_PLAYED + 40 * rel + card] = 1.0
        if rel == 0:
            a[_HAND + card] = 0.0
        if card == self._trump:
            a[_TRUMP_HELD] = 0.0

    def trick(self, winner: int | None, points: int) -> None:
        """The trick on the table was taken by ``winner`` (None: cut short by a renúncia)."""
        a = self.array
        for slot in self._on_table:
            a[slot] = 0.0
        self._on_table.clear()
        a[_LED + self._led] = 0.0
        self._led = -1
        if winner is None:
            return
        team = (winner - self.seat) & 1
        self._team_points[team] += points
        a[_POINTS + team] = self._team_points[team] / 120
        a[_LEADER:_LEADER + 4] = 0.0
        a[_LEADER + ((winner - self.seat) & 3)] = 1.0

    def scores(self, game_points: Sequence[int], held_over: int) -> None:
        """The match's game points (by team 0, 1) and tied deals held over."""
        a = self.array
        own = self.seat & 1
        target = self._target  # a match ends on reaching it: the last deal may overshoot
        a[_GAME_POINTS] = min(game_points[own], target) / target
        a[_GAME_POINTS + 1] = min(game_points[1 - own], target) / target
        a[_HELD] = min(held_over, 4) / 4


def encode(observation: Observation) -> Array:
    """The observation array of ``observation``'s seat: what :class:`SeatEncoder` holds at the
    same point of the same match (its public events replayed through one)."""
    seat = observation.seat
    own_played = [c for t in observation.tricks for s, c in zip(t.seats(), t.cards) if s == seat]
    own_played += [c for s, c in observation.trick if s == seat]
    enc = SeatEncoder(seat)
    enc.deal([*observation.hand, *own_played], observation.trump, observation.dealer,
             observation.deal_number, observation.game_points, observation.held_over,
             observation.variant.target)
    for t in observation.tricks:
        for s, c in zip(t.seats(), t.cards):
            enc.play(s, c)
        enc.trick(t.winner, t.points)
    for s, c in observation.trick:
        enc.play(s, c)
    return enc.array


def mask_array(cards: Iterable[int]) -> npt.NDArray[np.int8]:
    """The action mask: 1 for each card given (the legal cards), int8, 40 long."""
    out = np.zeros(40, np.int8)
    for c in cards:
        out[c] = 1
    return out
