"""Playing a match in-process between four bot objects (self-play, benchmarks, replays).

A bot is anything with ``play(observation) -> card``; optional are ``redeal(observation) ->
bool`` and the hooks ``on_trick_end(trick)``, ``on_deal_end(result)``,
``on_match_end(game_points, winner, end)`` (the SDK's ``Bot`` documents them). Hooks a bot
marks ``default_hook`` (the SDK's no-op defaults) are skipped. When no bot has a hook, the
only bot code that runs is the ``play`` (or ``redeal``) of the seat to act, so the loop takes a
fast path: the seat's view gets ``legal`` as a plain attribute just for that call, and the common
case of :meth:`Deal.play` (a held card that follows suit) is inlined, a trick at a time; anything
else goes through ``Deal.play`` itself. ``tests/engine/test_engine_playout_paths.py`` checks both
paths play alike (legal cards, tricks, hands, scores), and leave the same state behind when a
bot raises.

A bot's failure comes out as :class:`BotFailed`, naming its seat: its ``play`` or ``redeal``
raised or gave an answer the rules refuse (not a card, a card it does not hold), or one of its
hooks raised. The bot's own exception is its ``__cause__`` (and ``error``), and the match is left
as it was when the bot was asked, so the caller can end it as that seat's ``bot_error``
(:meth:`Match.stop`) or report it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .cards import _CHUNK_MASK, _T0, _T1, _T2, POINTS, SUIT_MASKS, SUIT_TABLES, Card
from .game import _BITS, _KEYS, NORMAL, Deal, Match, Trick, _new
from .observation import Observation, SeatView

DETAIL_CHARS = 200  # BotFailed.detail: the first line of the bot's error, cut to this


class BotFailed(Exception):
    """The bot of ``seat`` failed: it raised, or its answer was refused by the rules (then
    ``error`` is the engine's :class:`~.errors.SuecaError` quoting it). ``match`` is the match
    it was playing, left where it stopped. ``detail`` is ``Type: first line of the message``,
    at most :data:`DETAIL_CHARS` characters, as a match record keeps a bot error's reason; the
    text is the bot's, so callers escape it before showing it (``sueca.codec.fault_detail``)."""

    def __init__(self, seat: int, error: Exception, match: Match) -> None:
        self.seat = seat
        self.error = error
        self.match = match
        text = first_line(error)
        self.detail = text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS] + "..."
        super().__init__(f"the bot of seat {seat} failed: {self.detail}")


def first_line(err: BaseException) -> str:
    """``ValueError: bad card`` for an exception: its type and the first line of its message."""
    text = str(err).strip().partition("\n")[0]
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


class Player(Protocol):
    """What :func:`play_match` needs of a bot: a card for an observation (a :class:`Card`, or
    its number or text). ``redeal`` and the hooks are optional, looked up by name."""

    def play(self, observation: Observation, /) -> object: ...


class _TurnView(SeatView):
    """The runner's view when no bot has hooks: ``legal`` is filled just before the seat is asked
    for a card and emptied right after, so it reads exactly as :class:`SeatView` computes it
    (the only bot code that runs is the ``play`` or ``redeal`` of the seat to act) without a
    property call per card."""

    __slots__ = ("legal",)
    legal: tuple[Card, ...]  # a plain slot, not SeatView's property

    def __init__(self, match: Match, seat: int) -> None:
        self._match = match
        self.seat = seat
        self.legal = ()


def _hooks(bots: Sequence[Any], name: str) -> list[tuple[int, Callable[..., Any]]]:
    """The seats whose bot has hook ``name`` (one it did not leave at its no-op default)."""
    hooks = []
    for seat, bot in enumerate(bots):
        fn = getattr(bot, name, None)
        if fn is not None and not getattr(fn, "default_hook", False):
            hooks.append((seat, fn))
    return hooks


def _tell(match: Match, hooks: list[tuple[int, Callable[..., Any]]], *args: Any) -> None:
    """Call each seat's hook; one that raises is that seat's :class:`BotFailed`."""
    for seat, fn in hooks:
        try:
            fn(*args)
        except Exception as err:
            raise BotFailed(seat, err, match) from err


def _play_deal(deal: Deal, acts: list[Callable[[Any], Any]], views: list[_TurnView],
               after: list[tuple[tuple[int, _TurnView, Callable[[Any], Any]], ...]]) -> None:
    """Play ``deal`` to its end for bots without hooks: :meth:`Deal.play` with its common case
    inlined, one trick at a time (a lead, then three followers that must follow suit if they
    can). The winning key and seat live in locals until the trick closes; everything a view
    shows is up to date whenever a bot runs.

    The cards a follower is shown are :func:`~.game.legal_mask`'s, decoded as
    :meth:`Deal.legal_cards` does (the equivalence test compares what every bot was shown).
    Anything else (not a canonical Card, a card not held, a renúncia) goes through ``Deal.play``
    itself, with the deal's state brought up to date first. Closing a trick is
    ``Deal._close_trick`` inlined (3% of self-play time in a same-run A/B); the equivalence test
    compares every trick, hand and score of both paths.
    """
    hands, tricks, points = deal.hands, deal.tricks, deal.points
    keys_for = _KEYS[deal.trump_suit]
    bits = _BITS
    while deal.end is None:
        if deal.trick:  # a trick that Deal.play carried on (a card given as text or int)
            s = deal.turn
            view = views[s]
            view.legal = deal.legal_cards()
            c = acts[s](view)
            view.legal = ()
            deal.play(c)
            continue
        s = deal.turn  # the lead: any held card
        view = views[s]
        hand = hands[s]
        view.legal = legal = (_T0[hand & _CHUNK_MASK] + _T1[(hand >> 14) & _CHUNK_MASK]
                              + _T2[hand >> 28])
        try:
            c = acts[s](view)
        finally:
            view.legal = ()
        if c.__class__ is not Card or c not in legal:
            deal.play(c)  # coerces the card, or raises
            continue
        hands[s] = hand ^ bits[c]
        trick = deal.trick
        trick.append(c)
        deal.led = led = c // 10
        deal.led_mask = led_mask = SUIT_MASKS[led]
        deal.keys = keys = keys_for[led]
        win_key = keys[c]
        win_seat = s
        table, shift = SUIT_TABLES[led], 10 * led
        for s, view, act in after[s]:  # noqa: B020 (s: the leader, then each follower)
            deal.turn = s
            hand = hands[s]
            follow = hand & led_mask
            if follow:
                view.legal = legal = table[follow >> shift]  # cards of the led suit held
            else:  # cards_of(hand), inlined
                view.legal = legal = (_T0[hand & _CHUNK_MASK] + _T1[(hand >> 14) & _CHUNK_MASK]
                                      + _T2[hand >> 28])
            try:
                c = act(view)
            except BaseException:  # a bot that raises leaves the deal as Deal.play would
                deal.win_key, deal.win_seat = win_key, win_seat
                raise
            finally:
                view.legal = ()
            if c.__class__ is not Card or c not in legal:
                deal.win_key, deal.win_seat = win_key, win_seat
                deal.play(c)  # coerces, raises (not held), or applies the renúncia
                break
            hands[s] = hand ^ bits[c]
            trick.append(c)
            key = keys[c]
            if key > win_key:
                win_key = key
                win_seat = s
        else:  # Deal._close_trick(win_seat), inlined (the equivalence test compares them)
            a, b, c, d = trick
            pts = POINTS[a] + POINTS[b] + POINTS[c] + POINTS[d]
            tricks.append(_new(Trick, (deal.leader, (a, b, c, d), win_seat, pts)))
            points[win_seat & 1] += pts
            trick.clear()
            deal.led_mask = 0
            deal.turn = deal.leader = win_seat
            if len(tricks) == 10:
                deal.end = NORMAL


def play_match(match: Match, bots: Sequence[Player]) -> Match:
    """Play ``match`` to its end; ``bots[s]`` plays seat ``s``. Returns the match; a bot's
    failure is :class:`BotFailed` (the match is left where it stopped)."""
    acts = [b.play for b in bots]
    on_trick, on_deal = _hooks(bots, "on_trick_end"), _hooks(bots, "on_deal_end")
    on_end = _hooks(bots, "on_match_end")
    if on_trick or on_deal or on_end:
        views: list[SeatView] = [SeatView(match, s) for s in range(4)]
    else:
        views = [_TurnView(match, s) for s in range(4)]
    # the three seats after each seat, in playing order, with their views and play methods
    a, b, c, d = [(s, views[s], acts[s]) for s in range(4)]
    after = [(b, c, d), (c, d, a), (d, a, b), (a, b, c)]
    while match.end is None:
        deal = match.deal
        try:  # whatever is raised here while a seat is to act is that seat's failure
            if match.awaiting_redeal:
                s = deal.turn
                ask = getattr(bots[s], "redeal", None)
                result = match.redeal(bool(ask(views[s])) if ask else False)
                if result is not None:
                    _tell(match, on_deal, result)
                continue
            play = deal.play
            if not (on_trick or on_deal or on_end):
                _play_deal(deal, acts, views, after)  # type: ignore[arg-type]
            elif on_trick:
                while deal.end is None:
                    s = deal.turn
                    trick = play(acts[s](views[s])).trick
                    if trick is not None:
                        _tell(match, on_trick, trick)
            else:
                while deal.end is None:
                    s = deal.turn
                    play(acts[s](views[s]))
        except BotFailed:
            raise
        except Exception as err:
            raise BotFailed(deal.turn, err, match) from err
        _tell(match, on_deal, match._finish_deal())
    # looked up again: a hook set during the match counts
    _tell(match, _hooks(bots, "on_match_end"),
          (match.game_points[0], match.game_points[1]), match.winner, match.end)
    return match
