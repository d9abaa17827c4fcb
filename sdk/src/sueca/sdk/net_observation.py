"""The observation a bot gets over the network, decoded lazily from the protobuf message.

:class:`Observation` satisfies the protocol :class:`sueca.engine.Observation`, as the in-process
view does (cards are :class:`~sueca.engine.Card`, tricks are :class:`~sueca.engine.Trick`
tuples, ``variant`` a :class:`~sueca.engine.Variant`), so a bot written against self-play runs
unchanged against a referee. Each attribute is decoded the first
time it is read: a bot that looks only at ``legal`` pays only for ``legal``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sueca.codec import trick_from_pb
from sueca.engine import CARDS, Card, Trick, Variant
from sueca.engine.observation import Snapshot
from sueca.v1 import sueca_pb2 as pb

__all__ = ["Observation"]

_card = CARDS.__getitem__


class Observation:
    """What one seat knows at its turn, read from a ``sueca.v1.Observation`` message."""

    __slots__ = ("_m", "variant", "seat", "_hand", "_legal", "_trick", "_tricks")

    def __init__(self, message: pb.Observation, variant: Variant) -> None:
        self._m = message
        self.variant = variant
        self.seat: int = message.seat
        self._hand: tuple[Card, ...] | None = None  # None: not decoded yet
        self._legal: tuple[Card, ...] | None = None
        self._trick: tuple[tuple[int, Card], ...] | None = None
        self._tricks: tuple[Trick, ...] | None = None

    @property
    def hand(self) -> tuple[Card, ...]:
        if self._hand is None:
            self._hand = tuple(map(_card, self._m.hand))
        return self._hand

    @property
    def legal(self) -> tuple[Card, ...]:
        if self._legal is None:
            self._legal = tuple(map(_card, self._m.legal))
        return self._legal

    @property
    def trump(self) -> Card:
        return CARDS[self._m.trump]

    @property
    def trump_suit(self) -> int:
        return self._m.trump_suit

    @property
    def trump_held(self) -> bool:
        return self._m.trump_held

    @property
    def dealer(self) -> int:
        return self._m.dealer

    @property
    def leader(self) -> int:
        return self._m.leader

    @property
    def trick(self) -> tuple[tuple[int, Card], ...]:
        """The current trick as (seat, card) pairs in play order."""
        if self._trick is None:
            self._trick = tuple((p.seat, CARDS[p.card]) for p in self._m.trick)
        return self._trick

    @property
    def tricks(self) -> tuple[Trick, ...]:
        if self._tricks is None:
            self._tricks = tuple(map(trick_from_pb, self._m.tricks))
        return self._tricks

    @property
    def points(self) -> tuple[int, int]:
        p = self._m.points
        return (p[0], p[1]) if len(p) == 2 else (0, 0)

    @property
    def game_points(self) -> tuple[int, int]:
        g = self._m.game_points
        return (g[0], g[1]) if len(g) == 2 else (0, 0)

    @property
    def held_over(self) -> int:
        return self._m.held_over

    @property
    def deal_number(self) -> int:
        return self._m.deal_number

    @property
    def team(self) -> int:
        return self.seat & 1

    def snapshot(self) -> Snapshot:
        return Snapshot(**{name: getattr(self, name) for name in Snapshot._fields})

    def __repr__(self) -> str:
        return f"Observation(seat={self.seat}, hand={' '.join(map(str, self.hand))})"


if TYPE_CHECKING:  # `make check` runs mypy, which proves this satisfies the engine's protocol
    import sueca.engine

    _PROTOCOL: type[sueca.engine.Observation] = Observation
