"""One seat of one match as the client plays it (:class:`Game`): the bot instance, its turns
run and answered, its hooks called, its faults logged.

A bot whose ``play`` or ``redeal`` raises (or returns something that is not a card, or a card it
does not hold) resigns that game: the referee is sent ``Resign`` with the exception's first line
(or the answer quoted), so the match ends at once as ``bot_error`` instead of waiting out the
seat's clock. The log says why in one line; a Python traceback is added only for an exception
the bot did not mean (a :class:`~sueca.sdk.bot.Forfeit` is its own decision, an ``exec:`` bot's
program is not Python).
"""

from __future__ import annotations

import inspect
import logging
import time
from fractions import Fraction
from typing import Any

from sueca.codec import (
    action_bytes,
    deal_result_from_pb,
    end_from_pb,
    game_id_field,
    resign_bytes,
    trick_from_pb,
)
from sueca.engine import Card, CardError, End, card
from sueca.engine.playout import first_line
from sueca.sdk.bot import Clock, Forfeit
from sueca.sdk.logs import printable
from sueca.sdk.net_observation import Observation
from sueca.v1 import sueca_pb2 as pb

__all__ = ["Game"]

log = logging.getLogger("sueca.bot")

_REDEAL = pb.TurnRequest.REDEAL
REASON_CHARS = 200  # a resigning bot's reason, as logged


# A match's end by this seat's fault, as the bot's log explains it
_OWN_FAULT = {
    "timeout": "no answer within the move limit plus the seat's time bank (see Bot.clock)",
    "disconnect": "its connection was gone for longer than the referee's grace period",
    "bot_error": "its code raised (or returned no card it holds) and this SDK resigned the game",
}


def _is_default(fn: Any) -> bool:
    return fn is None or getattr(fn, "default_hook", False)


class Game:
    """One seat of one match, as this process plays it: one Bot instance."""

    __slots__ = ("game_id", "gid", "bot", "variant", "seat", "is_async", "busy", "backlog",
                 "ended", "last_seen", "failed", "on_trick", "on_deal", "on_end", "moves",
                 "move_seconds", "resigned", "summarised", "share")

    def __init__(self, game_id: str, bot: Any, variant: Any, *, seat: int = 0,
                 share: Fraction = Fraction(1)) -> None:
        self.game_id = game_id
        self.seat = seat
        self.share = share  # of its match, in the client's summary (see sueca.sdk.summary)
        # turns answered, and their time from arrival to answer (as the bot's clock counts
        # it), not yet added to the client's summary (see Client._done)
        self.moves = 0
        self.move_seconds = 0.0
        self.resigned = False    # this process resigned the game (the bot raised or misplayed)
        self.summarised = False  # its end is in the client's summary
        self.gid = game_id_field(game_id)
        self.bot = bot
        self.variant = variant
        self.is_async = inspect.iscoroutinefunction(getattr(bot, "play", None))
        self.busy = False
        self.backlog: list[Any] = []
        self.ended = False
        self.last_seen = time.monotonic()
        self.failed = False
        hook = getattr(bot, "on_trick_end", None)
        self.on_trick = None if _is_default(hook) else hook
        hook = getattr(bot, "on_deal_end", None)
        self.on_deal = None if _is_default(hook) else hook
        hook = getattr(bot, "on_match_end", None)
        self.on_end = None if _is_default(hook) else hook

    # Items: ("start", MatchInfo) | ("trick", pb.Trick) | ("deal", pb.DealEnd)
    #        | ("end", pb.MatchEnd) | pb.TurnRequest
    # apply (synchronous bots, in a pool thread or the event loop) and apply_async (bots whose
    # play, redeal or hooks are coroutines) differ only in awaiting: both ask the bot through
    # _ask and encode its answer with _answer.
    def apply(self, item: Any) -> bytes | None:  # Any: one of the items above
        """Run one item against the bot (synchronous bots)."""
        if item.__class__ is tuple:
            kind, value = item
            try:
                self._hook(kind, value)
            except Exception:
                self._hook_failed(kind)
            return None
        if self.ended:
            return None
        try:
            obs = Observation(item.observation, self.variant)
            return self._answer(item, obs, self._ask(item, obs))
        except Exception as err:
            return self._failed(item, err)
        finally:
            self.moves += 1
            self.move_seconds += time.monotonic() - self.last_seen

    async def apply_async(self, item: Any) -> bytes | None:  # Any: one of the items above
        """The same for a bot whose ``play`` (and maybe hooks) are coroutines."""
        if item.__class__ is tuple:
            kind, value = item
            try:
                result = self._hook(kind, value)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                self._hook_failed(kind)
            return None
        if self.ended:
            return None
        try:
            obs = Observation(item.observation, self.variant)
            answer = self._ask(item, obs)
            if inspect.isawaitable(answer):
                answer = await answer
            return self._answer(item, obs, answer)
        except Exception as err:
            return self._failed(item, err)
        finally:
            self.moves += 1
            self.move_seconds += time.monotonic() - self.last_seen

    def _ask(self, turn: pb.TurnRequest, obs: Observation) -> Any:
        """The bot's answer to a turn (a coroutine for an async bot)."""
        bot = self.bot  # last_seen: when the message carrying this turn arrived (dispatch)
        bot.clock = Clock(turn.move_ms / 1000, turn.bank_ms / 1000, self.last_seen)
        return bot.redeal(obs) if turn.kind == _REDEAL else bot.play(obs)

    def _answer(self, turn: pb.TurnRequest, obs: Observation, value: Any) -> bytes | None:
        """The bot's answer as an encoded Action. Not a card, or a card not in the bot's hand:
        logged, and the game resigned. The referee would refuse such a card and keep the turn
        open, and the bot, having answered, would lose the game on time; resigning ends it
        within a round trip, with the card quoted as the reason. A held card that breaks suit
        goes out: it is a renúncia by the rules (or asked again in a lenient match), exactly as
        in self-play."""
        if turn.kind == _REDEAL:
            return action_bytes(self.gid, turn.request_id, redeal=bool(value))
        if value.__class__ is Card:
            c = value
        else:
            try:
                c = card(value)
            except CardError as err:
                return self._resign(turn, f"play returned {value!r:.80}, which is not a card "
                                          f"({err})")
        if c not in obs.legal and c not in obs.hand:
            return self._resign(turn, f"play returned {c}, which is not in its hand")
        return action_bytes(self.gid, turn.request_id, c)

    def _resign(self, turn: pb.TurnRequest, why: str) -> bytes:
        """Log why the bot's answer cannot go out, and resign the game with that reason."""
        log.error("bot %s: %s; resigning game %s", type(self.bot).__name__, why,
                  self.game_id, extra={"game_id": self.game_id})
        self.ended = self.resigned = True
        return resign_bytes(self.gid, turn.request_id, why)

    def _hook(self, kind: str, value: Any) -> Any:
        """Call the bot's hook for one event item; returns what it returned (a coroutine for
        an async hook, which :meth:`apply_async` awaits)."""
        if kind == "start":
            return self.bot.start(value)
        if kind == "trick":
            return None if self.on_trick is None else self.on_trick(trick_from_pb(value))
        if kind == "deal":
            return None if self.on_deal is None else self.on_deal(deal_result_from_pb(value))
        if kind == "end":
            self.ended = True
            self._lost_by_fault(value)
            return None if self.on_end is None else self.on_end(*_end_args(value))
        return None

    def _lost_by_fault(self, end: pb.MatchEnd) -> None:
        """Say so when the match ended by this seat's fault (timeout, disconnect, bot error): the
        referee's last word on it (a late answer, if any, is refused as 'late')."""
        why = _OWN_FAULT.get(end.end)
        info = getattr(self.bot, "info", None)
        if why is None or info is None or end.fault_seat != info.seat:
            return
        log.warning("game %s ended by %s of this bot (seat %d): %s", self.game_id, end.end,
                    info.seat, why, extra={"game_id": self.game_id})

    def _hook_failed(self, kind: str) -> None:
        log.exception("bot %s raised in its %s hook (game %s)", type(self.bot).__name__,
                      kind, self.game_id, extra={"game_id": self.game_id})

    def _failed(self, turn: pb.TurnRequest, err: Exception) -> bytes:
        """The bot raised answering ``turn`` (called in the ``except`` block): say so, and resign
        the game with the exception's first line, so the referee ends the match at once as a
        bot error instead of waiting out the seat's clock. A Forfeit gets one plain line (an
        ``exec:`` bot's has been logged by the bot, with its program's stderr); anything else
        its traceback, which points into the bot's code."""
        why = first_line(err)
        if not isinstance(err, Forfeit):
            log.exception("bot %s raised in %s (game %s); resigning the game",
                          type(self.bot).__name__, "redeal" if turn.kind == _REDEAL else "play",
                          self.game_id, extra={"game_id": self.game_id})
        elif not err.logged:
            log.error("bot %s gave up game %s: %s", type(self.bot).__name__, self.game_id,
                      printable(why, REASON_CHARS), extra={"game_id": self.game_id})
        self.ended = self.resigned = True
        return resign_bytes(self.gid, turn.request_id, why)


def _end_args(m: pb.MatchEnd) -> tuple[tuple[int, int], int | None, End]:
    gp = (m.game_points[0], m.game_points[1]) if len(m.game_points) == 2 else (0, 0)
    return gp, None if m.winner < 0 else m.winner, end_from_pb(m.end)
