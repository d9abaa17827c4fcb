"""Play bots against each other in this process: no referee, no network, same rules and seeds.

``play_local`` makes one fresh bot per seat (bots keep per-match memory), starts each with the
same :class:`~sueca.sdk.bot.MatchInfo` a referee would send, and plays the match through the engine.
A seat's ``Bot.rng`` is seeded with :func:`~sueca.sdk.bot.bot_seed` of the match seed, so a match is
fully reproducible from its seed and bots; with the referee's seed key (``seed_key``, or
``SUECA_SEED_KEY``) a match played here is the very match a referee with that key played.

A bot whose ``play`` is ``async def`` plays here as it does over the network: its ``play``,
``redeal`` and hooks are awaited (on an event loop of the match's own), so the same bot behaves
the same in self-play and against a referee.

Duplicate play (:func:`play_duplicate`) removes the luck of the cards: the second match of a
pair has the same seed, hence the same decks and first dealer, with the teams swapped.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from sueca.engine import DEFAULT, BotFailed, End, Match, Player, Variant, play_match

from .bot import Forfeit, MatchInfo, bot_seeds
from .settings import current

__all__ = ["play_local", "play_duplicate", "swap_teams"]

T = TypeVar("T")
_new = tuple.__new__  # a NamedTuple without its Python-level __new__


def play_local(bots: Sequence[Callable[[], Player]], variant: Variant = DEFAULT,
               seed: int | str | None = None, match_id: str = "local",
               seat_names: Sequence[str] | None = None, decks: Iterable[Iterable[object]] = (),
               first_dealer: int | None = None, seed_key: bytes | None = None) -> Match:
    """Play one match; ``bots[s]`` (a class or a no-argument factory) makes the bot of seat s.

    ``seed_key`` keys the bots' seeds as a referee does (default: ``SUECA_SEED_KEY``, else
    none). Returns the finished :class:`~sueca.engine.Match` (``sueca.engine.replay.record``
    turns it into a replay). A bot that raises :class:`~sueca.sdk.bot.Forfeit` loses the match
    as its seat's ``bot_error``; any other failure of a bot (in ``start`` too) is
    :class:`~sueca.engine.BotFailed`, naming its seat, the match left where it stopped.
    """
    if len(bots) != 4:
        raise ValueError(f"a match needs 4 bots, one per seat; got {len(bots)}")
    names = tuple(seat_names) if seat_names is not None else tuple(
        getattr(b, "__name__", type(b).__name__) for b in bots)
    if len(names) != 4:
        raise ValueError(f"seat_names must name 4 seats; got {len(names)}")
    match = Match(variant, seed, decks, first_dealer)
    players: list[Player] = [make() for make in bots]
    loop = None
    if any(inspect.iscoroutinefunction(getattr(bot, "play", None)) for bot in players):
        loop = asyncio.new_event_loop()  # the client's criterion: play is a coroutine function
        players = [_Awaited(bot, loop) for bot in players]
    try:
        if seed_key is None:
            seed_key = (current().seed_key or "").encode()
        seeds = bot_seeds(seed, seed_key)  # bot_seed(seed, seat, seed_key) for each seat
        try:
            for seat, bot in enumerate(players):
                start = getattr(bot, "start", None)
                if start is not None:
                    try:
                        start(_new(MatchInfo, (match_id, seat, names, variant, seeds[seat])))
                    except Exception as err:
                        raise BotFailed(seat, err, match) from err
            return play_match(match, players)
        except BotFailed as err:  # a Forfeit: that seat gave up, its team loses as a bot error
            if not isinstance(err.error, Forfeit) or match.end is not None:
                raise
            _forfeit(match, players, err.seat)
            return match
    finally:
        if loop is not None:
            loop.close()


def _forfeit(match: Match, players: Sequence[Any], seat: int) -> None:
    """End ``match`` as a ``bot_error`` of ``seat`` (its bot raised
    :class:`~sueca.sdk.bot.Forfeit`), and tell every bot that it ended."""
    match.stop(End.BOT_ERROR, seat)
    for bot in players:
        hook = getattr(bot, "on_match_end", None)
        if hook is not None and not getattr(hook, "default_hook", False):
            hook((match.game_points[0], match.game_points[1]), match.winner, match.end)


class _Awaited:
    """A bot seen through a synchronous face: whatever its methods return that is awaitable
    (an ``async def`` play, redeal or hook) is run to its end on ``loop`` before the engine goes
    on, as the network client awaits it. Hooks the bot left at their no-op default stay marked
    as such, so the engine still skips them."""

    play: Callable[..., Any]

    def __init__(self, bot: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.bot = bot
        for name in ("start", "play", "redeal", "on_trick_end", "on_deal_end", "on_match_end"):
            fn = getattr(bot, name, None)
            if fn is not None and not getattr(fn, "default_hook", False):
                fn = _sync(fn, loop)
            setattr(self, name, fn)


def _sync(fn: Callable[..., Any], loop: asyncio.AbstractEventLoop) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        result = fn(*args)
        return loop.run_until_complete(result) if inspect.isawaitable(result) else result
    return call


def swap_teams(seats: Sequence[T]) -> list[T]:
    """The seating of a duplicate pair's second match: team 0's seats 0, 2 move to 1, 3."""
    return [seats[1], seats[0], seats[3], seats[2]]


def play_duplicate(bots: Sequence[Callable[[], Player]], variant: Variant = DEFAULT, *,
                   seed: int | str | None = None, match_ids: tuple[str, str] = ("dup-1", "dup-2"),
                   seat_names: Sequence[str] | None = None,
                   decks: Iterable[Iterable[object]] = (),
                   first_dealer: int | None = None) -> tuple[Match, Match]:
    """A duplicate pair: ``bots`` as seated, then the same seed and decks with teams swapped.

    In the second match the cards that team 0 held in the first go to the other team's bots,
    so over the pair both teams play both sets of hands.
    """
    decks = [list(d) for d in decks]
    names = list(seat_names) if seat_names is not None else None
    first = play_local(bots, variant, seed, match_ids[0], names, decks, first_dealer)
    second = play_local(swap_teams(bots), variant, seed, match_ids[1],
                        swap_teams(names) if names is not None else None, decks, first_dealer)
    return first, second
