"""What one seat may know: its own hand and public play, nothing more (docs/rules.md: no signals).

:class:`Observation` is the protocol a bot reads (``Bot.play(observation)``); three classes
satisfy it: :class:`SeatView` here, the SDK's ``sueca.sdk.net_observation.Observation`` (decoded from the
wire) and :class:`Snapshot` (frozen). So a bot works unchanged in-process and over the network.

:class:`SeatView` is a *view* of a live match for one seat, computed on access: a bot that
reads only ``legal`` pays only for ``legal``, which is how self-play reaches tens of thousands of
deals a second. A view follows the match as it moves; :meth:`SeatView.snapshot` freezes one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

from .cards import Card, cards_of
from .game import Match, Trick
from .variant import Variant


class Observation(Protocol):
    """The game as one seat sees it. Attribute names are the protocol's field names
    (``sueca.v1.Observation``), plus ``variant`` (from the match start) and ``team``."""

    @property
    def seat(self) -> int: ...
    @property
    def hand(self) -> tuple[Card, ...]: ...
    @property
    def legal(self) -> tuple[Card, ...]:
        """Cards this seat may play now without a renúncia; empty when it is not its turn."""
    @property
    def trump(self) -> Card: ...
    @property
    def trump_suit(self) -> int: ...
    @property
    def trump_held(self) -> bool:
        """Whether the dealer still holds the turned trump card (it is public until played)."""
    @property
    def dealer(self) -> int: ...
    @property
    def leader(self) -> int: ...
    @property
    def trick(self) -> tuple[tuple[int, Card], ...]:
        """The current trick as (seat, card) pairs in play order."""
    @property
    def tricks(self) -> tuple[Trick, ...]:
        """The deal's finished tricks."""
    @property
    def points(self) -> tuple[int, int]:
        """Card points taken so far in this deal, by team."""
    @property
    def game_points(self) -> tuple[int, int]: ...
    @property
    def held_over(self) -> int:
        """Tied deals in a row whose game points are still to be won (variant ``tie``)."""
    @property
    def variant(self) -> Variant: ...
    @property
    def deal_number(self) -> int: ...
    @property
    def team(self) -> int: ...
    def snapshot(self) -> Snapshot:
        """This observation frozen: keep it past the call (a self-play view moves on)."""
        ...


class SeatView:
    """The game as ``seat`` sees it now (an :class:`Observation` of a live match)."""

    __slots__ = ("_match", "seat")

    def __init__(self, match: Match, seat: int) -> None:
        self._match = match
        self.seat = seat

    @property
    def hand(self) -> tuple[Card, ...]:
        return cards_of(self._match.deal.hands[self.seat])

    @property
    def legal(self) -> tuple[Card, ...]:
        """Cards this seat may play now without a renúncia; empty when it is not its turn."""
        return self._match.legal_cards(self.seat)

    @property
    def trump(self) -> Card:
        return self._match.deal.trump

    @property
    def trump_suit(self) -> int:
        return self._match.deal.trump_suit

    @property
    def trump_held(self) -> bool:
        """Whether the dealer still holds the turned trump card (it is public until played)."""
        return self._match.deal.trump_held

    @property
    def dealer(self) -> int:
        return self._match.deal.dealer

    @property
    def leader(self) -> int:
        return self._match.deal.leader

    @property
    def trick(self) -> tuple[tuple[int, Card], ...]:
        """The current trick as (seat, card) pairs in play order."""
        deal = self._match.deal
        lead = deal.leader
        return tuple(((lead + i) & 3, c) for i, c in enumerate(deal.trick))

    @property
    def tricks(self) -> tuple[Trick, ...]:
        return tuple(self._match.deal.tricks)

    @property
    def points(self) -> tuple[int, int]:
        """Card points taken so far in this deal, by team."""
        p = self._match.deal.points
        return (p[0], p[1])

    @property
    def game_points(self) -> tuple[int, int]:
        g = self._match.game_points
        return (g[0], g[1])

    @property
    def held_over(self) -> int:
        """Tied deals in a row whose game points are still to be won (variant ``tie``)."""
        return self._match.held

    @property
    def variant(self) -> Variant:
        return self._match.variant

    @property
    def team(self) -> int:
        return self.seat & 1

    @property
    def deal_number(self) -> int:
        return self._match.deal.number

    def snapshot(self) -> Snapshot:
        return Snapshot(**{name: getattr(self, name) for name in Snapshot._fields})

    def __repr__(self) -> str:
        return f"SeatView(seat={self.seat}, hand={' '.join(map(str, self.hand))})"


class Snapshot(NamedTuple):
    """A frozen observation: the same attributes, fixed at the moment it was taken."""

    seat: int
    hand: tuple[Card, ...]
    legal: tuple[Card, ...]
    trump: Card
    trump_suit: int
    trump_held: bool
    dealer: int
    leader: int
    trick: tuple[tuple[int, Card], ...]
    tricks: tuple[Trick, ...]
    points: tuple[int, int]
    game_points: tuple[int, int]
    held_over: int
    variant: Variant
    deal_number: int

    @property
    def team(self) -> int:
        return self.seat & 1

    def snapshot(self) -> Snapshot:
        return self  # already frozen


OBSERVATION_FIELDS = Snapshot._fields

if TYPE_CHECKING:  # `make check` runs mypy, which proves these satisfy the protocol
    _OBSERVATIONS: tuple[type[Observation], ...] = (SeatView, Snapshot)
