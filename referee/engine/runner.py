"""Playing a match in-process between four bot objects (self-play, benchmarks, replays).

A bot is anything with ``play(observation) -> card``; optional are ``redeal(observation) ->
bool`` and the hooks ``on_trick_end(trick)``, ``on_deal_end(result)``,
``on_match_end(game_points, winner, end)`` (the SDK's ``Bot`` documents them). Hooks a bot
marks ``default_hook`` (the SDK's no-op defaults) are skipped, so a bot that ignores them costs
nothing: per card the loop is one bot call and one ``Deal.play``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .game import Match
from .observation import Observation


def _hooks(bots: Sequence[Any], name: str) -> list[Callable[..., Any]]:
    hooks = []
    for bot in bots:
        fn = getattr(bot, name, None)
        if fn is not None and not getattr(fn, "default_hook", False):
            hooks.append(fn)
    return hooks


def play_match(match: Match, bots: Sequence[Any]) -> Match:
    """Play ``match`` to its end; ``bots[s]`` plays seat ``s``. Returns the match."""
    views = [Observation(match, s) for s in range(4)]
    acts = [b.play for b in bots]
    on_trick, on_deal = _hooks(bots, "on_trick_end"), _hooks(bots, "on_deal_end")
    while match.end is None:
        deal = match.deal
        if match.awaiting_redeal:
            s = deal.turn
            ask = getattr(bots[s], "redeal", None)
            result = match.redeal(bool(ask(views[s])) if ask else False)
            if result is not None:
                for fn in on_deal:
                    fn(result)
            continue
        play = deal.play
        if on_trick:
            while deal.end is None:
                s = deal.turn
                trick = play(acts[s](views[s])).trick
                if trick is not None:
                    for fn in on_trick:
                        fn(trick)
        else:
            while deal.end is None:
                s = deal.turn
                play(acts[s](views[s]))
        result = match._finish_deal()
        for fn in on_deal:
            fn(result)
    for fn in _hooks(bots, "on_match_end"):
        fn((match.game_points[0], match.game_points[1]), match.winner, match.end)
    return match
