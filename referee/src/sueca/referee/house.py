"""House bots: seats the referee plays itself, in-process, with trusted built-in bots.

Load-testing a bot (``sueca-arena loadtest``) wants every move the referee waits for to be the
target's: the other three seats are played here, by the SDK's example bots, at no network cost.
A house bot is named ``house:<example>`` (``house:random``, ``house:heuristic``). That name can
never be a network bot's:

* the operator turns house bots on, one by one, when starting the referee
  (``sueca-arena referee --house-bots random,heuristic``); off by default;
* a match spec naming a house bot the referee was not started with is refused
  (PERMISSION_DENIED), before anything is placed;
* a bot stream saying hello as ``house:...`` is refused (PERMISSION_DENIED), whatever its token,
  even on an ``--insecure`` referee; the registry cannot register the name either (``:`` is not
  allowed in bot names).

A house seat is bound to a :class:`HouseSession`, which looks to the match runner like any bot
session: the runner pushes the seat's turn request to it; the session answers on the next
event-loop pass (never inside the runner's own call), through :meth:`Seat.offer`, so a house
answer is checked exactly as a network answer is. It is shown what the seat may see and nothing
else (:class:`sueca.engine.observation.SeatView` of its own seat).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from sueca.engine.game import End
from sueca.engine.observation import SeatView
from sueca.sdk.bot import MatchInfo, bot_seed
from sueca.sdk.bots import EXAMPLES
from sueca.v1 import sueca_pb2 as pb

if TYPE_CHECKING:
    from sueca.referee.clocked_match import Seat

log = logging.getLogger("sueca.referee.house")

HOUSE_PREFIX = "house:"
NAME_SHOWN = 60  # characters of a refused name quoted in a message (a hello comes from anyone)


class HouseBotError(ValueError):
    """A --house-bots value that names no built-in bot; the message quotes it."""


def is_house_name(name: str) -> bool:
    """Is ``name`` reserved for the referee's own seats?"""
    return name.startswith(HOUSE_PREFIX)


def quote(name: str) -> str:
    text = repr(name)
    return text if len(text) <= NAME_SHOWN else text[:NAME_SHOWN] + "...'"


def parse_house_bots(text: str | Iterable[str]) -> tuple[str, ...]:
    """``random,heuristic`` (or a list) -> ``('random', 'heuristic')``, each a built-in example
    bot; :class:`HouseBotError` quoting the first that is not."""
    parts = text.split(",") if isinstance(text, str) else list(text)
    names: list[str] = []
    for part in parts:
        name = part.strip().removeprefix(HOUSE_PREFIX)
        if name not in EXAMPLES:
            raise HouseBotError(f"bad house bot {quote(part)}: house bots are the built-in "
                                f"{', '.join(EXAMPLES)}")
        if name not in names:
            names.append(name)
    if not names:
        raise HouseBotError("--house-bots names no bot: give e.g. random,heuristic")
    return tuple(names)


class HouseSession:
    """The 'connection' of one house seat (one per seat, made by :meth:`HouseBots.session`).

    ``games`` is filled by the hub's bind with the one seat it plays; everything the runner
    pushes other than that seat's open turn request (match start, tricks, ends) is dropped:
    the bot reads the live match through its seat's view.
    """

    __slots__ = ("bot", "factory", "games", "player", "loop")

    def __init__(self, bot: str, factory: Callable[[], Any]) -> None:
        self.bot = bot
        self.factory = factory
        self.games: dict[str, Seat] = {}
        self.player: Any = None
        self.loop = asyncio.get_running_loop()

    def push(self, field: bytes) -> None:
        for seat in self.games.values():
            if seat.open and field is seat.request:
                self.loop.call_soon(self._answer, seat, seat.request_id)

    def push_lazy(self, field: bytes) -> None:
        pass

    def _answer(self, seat: Seat, request_id: int) -> None:
        if not seat.open or seat.request_id != request_id or seat.game_id not in self.games:
            return  # the turn was closed meanwhile (match stopped)
        runner = seat.runner
        try:
            if self.player is None:
                plan = runner.plan
                self.player = self.factory()
                self.player.start(MatchInfo(seat.game_id, seat.seat, tuple(plan.bots),
                                            plan.variant, bot_seed(plan.seed, seat.seat)))
            view = SeatView(runner.match, seat.seat)
            if seat.redeal:
                action = pb.Action(game_id=seat.game_id, request_id=request_id,
                                   redeal=bool(self.player.redeal(view)))
            else:
                action = pb.Action(game_id=seat.game_id, request_id=request_id,
                                   card=int(self.player.play(view)))
        except Exception:  # a built-in bot failing is a bug: the match ends, never the referee
            log.exception("house bot %s failed in match %s", self.bot, runner.match_id,
                          extra={"match_id": runner.match_id, "bot": self.bot,
                                 "game_id": seat.game_id})
            runner.stop(End.ABORTED)
            return
        fault = seat.offer(action)
        if fault is not None:  # reckless may commit renúncias on purpose: that is the game
            log.debug("house bot %s: %s", self.bot, fault[1])


class HouseBots:
    """The house bots an operator turned on for this referee."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self.factories = {HOUSE_PREFIX + n: EXAMPLES[n] for n in parse_house_bots(names)} \
            if names else {}

    def __bool__(self) -> bool:
        return bool(self.factories)

    def names(self) -> list[str]:
        return sorted(self.factories)

    def session(self, name: str) -> HouseSession | None:
        """A fresh session for one seat of house bot ``name``; None when it is not on."""
        factory = self.factories.get(name)
        return None if factory is None else HouseSession(name, factory)

    def refusal(self, name: str) -> str:
        on = ", ".join(self.names()) or "none"
        return (f"bot {quote(name)} is a house bot, and this referee plays no house bot of that "
                f"name (house bots on: {on}; the operator turns them on with "
                "`sueca-arena referee --house-bots random,heuristic`)")
