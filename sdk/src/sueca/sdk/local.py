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
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Any, TypeVar

from sueca.engine import DEFAULT, BotFailed, End, Match, Player, Variant, play_match
from sueca.engine.observation import SeatView
from sueca.engine.playout import _hooks, _tell

from .bot import Forfeit, MatchInfo, bot_seeds
from .settings import current

__all__ = ["play_local", "play_local_steps", "play_duplicate", "swap_teams"]

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
    match, players, names = _new_match(bots, variant, seed, seat_names, decks, first_dealer)
    loop = None
    if any(inspect.iscoroutinefunction(getattr(bot, "play", None)) for bot in players):
        loop = asyncio.new_event_loop()  # the client's criterion: play is a coroutine function
        players = [_Awaited(bot, loop) for bot in players]
    try:
        try:
            _start(match, players, (match_id, names, variant), seed, seed_key)
            return play_match(match, players)
        except BotFailed as err:  # a Forfeit: that seat gave up, its team loses as a bot error
            return _forfeited(err, match, players)
    finally:
        if loop is not None:
            loop.close()


def play_local_steps(bots: Sequence[Callable[[], Player]], variant: Variant, seed: int | str,
                     match_id: str, seat_names: Sequence[str], *,
                     ready: list[object]) -> Generator[Any, None, Match]:
    """:func:`play_local` as a generator, so that one thread plays many matches at once
    (:mod:`sueca.sdk.selfplay`, with an ``exec:`` program taking many games): a bot with
    ``post(kind, view, ready)`` (a blocking ``exec:`` bot) has its turn posted, and the match
    yields that bot; the caller resumes it once the bot is on ``ready`` (its answer read, or
    its time up), and ``collect(kind, view)`` gives its card or decision. Every other call is
    the one :func:`play_local` and :func:`~sueca.engine.play_match` make, in the same order
    (the hooks' path: an ``exec:`` bot has hooks), so a match played here is the match played
    there (the tests compare whole runs). Bots must be synchronous."""
    match, players, names = _new_match(bots, variant, seed, seat_names, (), None)
    try:
        _start(match, players, (match_id, names, variant), seed, None)
        yield from _steps(match, players, ready)
    except BotFailed as err:
        return _forfeited(err, match, players)
    return match


def _steps(match: Match, bots: Sequence[Any], ready: list[object]) -> Generator[Any, None, None]:
    """:func:`~sueca.engine.play_match`'s loop with hooks, a posted turn yielding its bot."""
    acts = [b.play for b in bots]
    posts = [getattr(b, "post", None) for b in bots]
    on_trick, on_deal = _hooks(bots, "on_trick_end"), _hooks(bots, "on_deal_end")
    views = [SeatView(match, s) for s in range(4)]
    while match.end is None:
        deal = match.deal
        try:  # whatever is raised here while a seat is to act is that seat's failure
            if match.awaiting_redeal:
                s = deal.turn
                post = posts[s]
                if post is not None:
                    post("redeal", views[s], ready)
                    yield bots[s]
                    call = bool(bots[s].collect("redeal", views[s]))
                else:
                    ask = getattr(bots[s], "redeal", None)
                    call = bool(ask(views[s])) if ask else False
                result = match.redeal(call)
                if result is not None:
                    _tell(match, on_deal, result)
                continue
            play = deal.play
            while deal.end is None:
                s = deal.turn
                post = posts[s]
                if post is not None:
                    post("play", views[s], ready)
                    yield bots[s]
                    card = bots[s].collect("play", views[s])
                else:
                    card = acts[s](views[s])
                trick = play(card).trick
                if trick is not None and on_trick:
                    _tell(match, on_trick, trick)
        except Exception as err:
            if isinstance(err, BotFailed):  # a hook's, already named
                raise
            raise BotFailed(deal.turn, err, match) from err
        _tell(match, on_deal, match._finish_deal())
    ended = tuple(match.game_points), match.winner, match.end
    _tell(match, _hooks(bots, "on_match_end"), *ended)


def _new_match(bots: Sequence[Callable[[], Player]], variant: Variant, seed: int | str | None,
               seat_names: Sequence[str] | None, decks: Iterable[Iterable[object]],
               first_dealer: int | None) -> tuple[Match, list[Player], tuple[str, ...]]:
    """The match, one fresh bot per seat, and the seats' names."""
    if len(bots) != 4:
        raise ValueError(f"a match needs 4 bots, one per seat; got {len(bots)}")
    names = tuple(seat_names) if seat_names is not None else tuple(
        getattr(b, "__name__", type(b).__name__) for b in bots)
    if len(names) != 4:
        raise ValueError(f"seat_names must name 4 seats; got {len(names)}")
    match = Match(variant, seed, decks, first_dealer)
    return match, [make() for make in bots], names


def _start(match: Match, players: Sequence[Any], about: tuple[str, tuple[str, ...], Variant],
           seed: int | str | None, seed_key: bytes | None) -> None:
    """Each bot's ``start`` with the :class:`MatchInfo` a referee would send (``about``: the
    match id, the seats' names, the variant); one that raises is that seat's
    :class:`BotFailed`."""
    match_id, names, variant = about
    if seed_key is None:
        seed_key = (current().seed_key or "").encode()
    seeds = bot_seeds(seed, seed_key)  # bot_seed(seed, seat, seed_key) for each seat
    for seat, bot in enumerate(players):
        start = getattr(bot, "start", None)
        if start is not None:
            try:
                start(_new(MatchInfo, (match_id, seat, names, variant, seeds[seat])))
            except Exception as err:
                raise BotFailed(seat, err, match) from err


def _forfeited(err: BotFailed, match: Match, players: Sequence[Any]) -> Match:
    """The match after a bot failed: ended as that seat's ``bot_error`` when it raised
    :class:`~sueca.sdk.bot.Forfeit`, else ``err`` raised again."""
    if not isinstance(err.error, Forfeit) or match.end is not None:
        raise err
    _forfeit(match, players, err.seat)
    return match


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
