"""The bot interface: one class, one required method, the same in-process and over the network.

A :class:`Bot` instance plays **one seat of one match**: the framework (the SDK's network client,
or in-process self-play) makes a fresh instance per match, calls :meth:`Bot.start` once, then
:meth:`Bot.play` whenever it is that seat's turn. So a bot may keep per-match memory in ``self``
without ever juggling game ids, and a synchronous bot never needs a lock.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import time
from collections.abc import Awaitable, Callable
from typing import NamedTuple, TypeVar

from sueca.engine import Card, DealResult, End, Observation, Trick, Variant
from sueca.engine.seeding import seeded_random

_F = TypeVar("_F", bound=Callable[..., object])


class MatchInfo(NamedTuple):
    """What a seat is told when a match starts: all public.

    Over the network ``match_id`` is the seat's opaque game id: the referee never names the
    match (an identifier that would link the games of a program seated as both partners).
    In-process it is the match id.
    """

    match_id: str
    seat: int
    seats: tuple[str, ...]  # bot name in seat 0..3; team 0 is seats 0 and 2
    variant: Variant
    bot_seed: int  # seeds ``Bot.rng``: same seed, same play, in-process or over the network

    @property
    def team(self) -> int:
        return self.seat & 1


class Clock(NamedTuple):
    """The clock of the turn being asked, as the referee set it: over the network only (in
    self-play no clock runs, and ``Bot.clock`` is None).

    The referee counts from when it sent the turn, so the network delay both ways is the
    bot's: :meth:`left` counts from the turn's arrival here, so keep a margin of your round
    trip to the referee."""

    move_s: float    # this move's limit; past it the seat's bank is drawn on
    bank_s: float    # the seat's time bank left for the rest of the match
    received: float  # time.monotonic() when the turn reached this process

    def left(self) -> float:
        """Seconds until this turn is lost on time (move limit plus bank), from now."""
        return self.received + self.move_s + self.bank_s - time.monotonic()


class Forfeit(Exception):
    """Raised from a bot's ``play`` or ``redeal`` to give up the match: self-play ends it as a
    ``bot_error`` charged to that seat (counted in the faults column) and goes on with the next
    match; over the network the client resigns the game with the message, as for any exception.
    An ``exec:`` bot raises it when its program fails (late, crashed, bad line). The client logs
    it as one line, no traceback, unless ``logged`` says the bot has logged why itself."""

    logged = False


_sha256 = hashlib.sha256
_from_bytes = int.from_bytes


def bot_seed(match_seed: object, seat: int, key: bytes = b"") -> int:
    """The seed of a seat's ``Bot.rng``, derived from the match seed and the operator's ``key``.

    Over the network it must reveal nothing of the match seed, which fixes every deck, whatever
    that seed is: an operator's ``seed: 1`` is found by trying small seeds in a millisecond. So
    the referee always derives it with HMAC-SHA256 under a key no bot ever sees
    (``SUECA_SEED_KEY``, else a random key per referee process). The same key gives the same
    bot seeds, so an operator who holds it replays a match exactly, in-process too
    (:func:`sueca.sdk.local.play_local` takes it, or reads ``SUECA_SEED_KEY``). With no key
    (in-process play, where every bot could read the match anyway) it is an unkeyed SHA-256.
    """
    return bot_seeds(match_seed, key)[seat]


def bot_seeds(match_seed: object, key: bytes = b"") -> tuple[int, int, int, int]:
    """``bot_seed(match_seed, seat, key)`` for seats 0..3, the prefix hashed once."""
    prefix = f"sueca-bot:{match_seed}:".encode()
    h = hmac.new(key, prefix, _sha256) if key else _sha256(prefix)
    seeds = []
    for tail in (b"0", b"1", b"2", b"3"):
        c = h.copy()
        c.update(tail)
        seeds.append(_from_bytes(c.digest()[:8], "big"))
    return seeds[0], seeds[1], seeds[2], seeds[3]


def _default(fn: _F) -> _F:
    fn.default_hook = True  # type: ignore[attr-defined]  # the runners skip hooks not overridden
    return fn


class Bot:
    """Subclass this and implement :meth:`play`.

    ``observation`` is an :class:`~sueca.engine.Observation`: ``seat``, ``hand``, ``legal``,
    ``trump``, ``trump_suit``, ``trump_held``, ``dealer``, ``leader``, ``trick`` ((seat, card)
    pairs), ``tricks``, ``points``, ``game_points``, ``held_over``, ``variant``,
    ``deal_number``, ``team``; the same in self-play and over the network.
    """

    #: Seeded per match and seat before :meth:`on_match_start`; use it for any randomness.
    rng: random.Random
    info: MatchInfo
    #: The clock of the turn being asked (set before each :meth:`play` and :meth:`redeal`
    #: over the network); None in self-play, where no clock runs.
    clock: Clock | None = None

    def start(self, info: MatchInfo) -> None:
        """Called by the framework once per match; sets ``info`` and ``rng``."""
        self.info = info
        self.rng = seeded_random(info.bot_seed)
        self.on_match_start(info)

    def play(self, observation: Observation) -> Card | Awaitable[Card]:
        """Return one card of ``observation.legal`` (returning another card is a fault); may
        be ``async def``."""
        raise NotImplementedError(f"{type(self).__name__} must implement play(observation)")

    def redeal(self, observation: Observation) -> bool | Awaitable[bool]:
        """Variant weak_hand_redeal: asked of the first player with 10 points or less."""
        return False

    @_default
    def on_match_start(self, info: MatchInfo) -> None:
        """Hook: the match begins."""

    @_default
    def on_trick_end(self, trick: Trick) -> None:
        """Hook: a trick was taken (also the trick a renúncia cut short)."""

    @_default
    def on_deal_end(self, result: DealResult) -> None:
        """Hook: a deal ended, with its card points and game points."""

    @_default
    def on_match_end(self, game_points: tuple[int, int], winner: int | None, end: End) -> None:
        """Hook: the match ended; ``winner`` is a team, or None when aborted."""
