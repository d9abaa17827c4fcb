"""The games the scripted referee plays with a bot: real matches through the engine, the bot
in one seat and the script itself in the other three (the first legal card; never a redeal).

A :class:`Game` knows what its bot was asked (every request id, the open turn), turns the
engine's state into the very messages the real referee sends (built by :mod:`sueca.codec`),
and applies the bot's answers. Request ids start at a random number and grow by random steps,
so a bot that counts them itself instead of copying them is caught.
"""

from __future__ import annotations

import dataclasses
import secrets
import time
from collections.abc import Sequence

from sueca import codec as conv
from sueca.engine import CARDS, End, Match, Variant
from sueca.v1 import sueca_pb2 as pb

__all__ = ["Game", "Turn", "weak_hand_seed"]


@dataclasses.dataclass(frozen=True)
class Turn:
    request_id: int
    redeal: bool
    legal: frozenset[int]
    message: pb.TurnRequest


class Game:
    """One seat of one match, as a bot knows it: an opaque game id."""

    def __init__(self, bot: str, variant: Variant, *, seed: str, move_ms: int,
                 decks: Sequence[Sequence[int]] = ()) -> None:
        self.game_id = secrets.token_hex(8)
        self.match = Match(variant, seed=seed, decks=decks)
        self.seat = self.match.deal.turn  # the bot acts first: its first turn is immediate
        self.seats = tuple(bot if s == self.seat else f"script-{s}" for s in range(4))
        self.variant = variant
        self.move_ms = move_ms
        self.next_id = 1_000 + secrets.randbelow(1_000_000)
        self.issued: set[int] = set()
        self.answered: set[int] = set()
        self.open: Turn | None = None
        self.refusals = 0
        self.resigned: str | None = None  # the bot's reason, when it gave the game up

    @property
    def over(self) -> bool:
        return self.match.end is not None

    def _event(self, **kind: object) -> pb.GameEvent:
        return pb.GameEvent(game_id=self.game_id, **kind)  # type: ignore[arg-type]

    def start_event(self) -> pb.GameEvent:
        return self._event(match_start=conv.match_start(
            self.seat, self.seats, self.variant, secrets.randbits(63)))

    def ask(self) -> pb.TurnRequest:
        """Open a turn for the bot (it must be the bot's to act) with a fresh request id."""
        rid = self.next_id
        self.next_id += 1 + secrets.randbelow(5)
        self.issued.add(rid)
        match = self.match
        redeal = match.awaiting_redeal
        now_ms = int(time.time() * 1000)
        msg = conv.turn_request(self.game_id, rid, redeal, conv.observation(match, self.seat),
                                now_ms + self.move_ms, self.move_ms, 0)
        self.open = Turn(rid, redeal, frozenset(int(c) for c in match.legal_cards(self.seat)),
                         msg)
        return msg

    def answer(self, value: bool | int) -> list[pb.GameEvent]:
        """Apply the bot's valid answer to the open turn; the events it and the script's
        seats cause up to the bot's next turn or the end."""
        assert self.open is not None
        self.answered.add(self.open.request_id)
        self.open = None
        events: list[pb.GameEvent] = []
        if isinstance(value, bool):
            result = self.match.redeal(value, self.seat)
            if result is not None:
                events.append(self._event(deal_end=conv.deal_end_to_pb(result)))
        else:
            events += self._play(value)
        return events + self.advance()

    def _play(self, card: int) -> list[pb.GameEvent]:
        play = self.match.play(CARDS[card])
        events = []
        if play.trick is not None:
            events.append(self._event(trick_end=conv.trick_to_pb(play.trick)))
        if play.deal is not None:
            events.append(self._event(deal_end=conv.deal_end_to_pb(play.deal)))
        return events

    def advance(self) -> list[pb.GameEvent]:
        """The script's seats play until the bot is to act; the match end if it comes."""
        events: list[pb.GameEvent] = []
        match = self.match
        while match.end is None and match.deal.turn != self.seat:
            if match.awaiting_redeal:
                match.redeal(False)
                continue
            events += self._play(match.legal_cards(match.deal.turn)[0])
        if match.end is not None:
            events.append(self._event(match_end=conv.match_end(match, self.seats)))
        return events

    def stop(self) -> list[pb.GameEvent]:
        """End the match as ``aborted`` (the script has seen what it needed)."""
        self.open = None
        if self.match.end is not None:
            return []
        result = self.match.stop(End.ABORTED)
        return [self._event(deal_end=conv.deal_end_to_pb(result)),
                self._event(match_end=conv.match_end(self.match, self.seats))]


def weak_hand_seed() -> str:
    """A seed whose first deal gives the first player a weak hand (10 points or less), so
    that with ``weak_hand_redeal`` the first turn is the redeal question."""
    variant = Variant(weak_hand_redeal=True)
    n = 0
    while True:
        seed = f"conformance-weak-{n}"
        if Match(variant, seed=seed).awaiting_redeal:
            return seed
        n += 1
