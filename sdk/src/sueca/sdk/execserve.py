"""``python -m sueca.sdk.execserve module:Class``: a Python SDK bot as an ``exec:`` program.

The other side of :mod:`sueca.sdk.execbot`: it reads ``sueca-exec/1`` lines on standard input,
makes one bot per game (``module:Class``, loaded as ``sueca-bot run`` loads it), hands it each
observation as the SDK's frozen :class:`~sueca.engine.observation.Snapshot` and writes its
answers on standard output. A hosted Python bot runs this inside its sandbox: it needs no
network and no token, only its standard input and output. One process takes up to
:data:`GAMES` games at once (its hello says so), so the interpreter starts once, not per game.

A bot that raises, or answers a card that is not legal, is not hidden: the traceback goes to
standard error (its owner's log) and the process exits, which loses the games it had open as
any broken program does.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from sueca.engine import DealResult, End, Trick, Variant, parse_card
from sueca.engine.observation import Snapshot

from .bot import Bot, Clock, MatchInfo
from .bots import BotLoadError, check_bot, load_bot
from .execbot.protocol import PROTOCOL

__all__ = ["GAMES", "serve", "main"]

GAMES = 64


def _trick(obj: dict[str, Any]) -> Trick:
    return Trick(obj["leader"], tuple(parse_card(c) for c in obj["cards"]), obj["winner"],
                 obj["points"])


def _snapshot(turn: dict[str, Any], variant: Variant) -> Snapshot:
    obs = turn["obs"]
    trump = parse_card(obs["trump"])
    leader = obs["leader"]
    return Snapshot(
        seat=obs["seat"], hand=tuple(parse_card(c) for c in obs["hand"]),
        legal=tuple(parse_card(c) for c in turn["legal"]), trump=trump, trump_suit=trump.suit,
        trump_held=obs["trump_held"], dealer=obs["dealer"], leader=leader,
        trick=tuple(((leader + i) & 3, parse_card(c)) for i, c in enumerate(obs["trick"])),
        tricks=tuple(_trick(t) for t in obs["tricks"]), points=tuple(obs["points"]),
        game_points=tuple(obs["game_points"]),
        held_over=obs["held_over"], variant=variant, deal_number=obs["deal"])


def _answer(value: Any) -> Any:
    return asyncio.run(value) if inspect.isawaitable(value) else value  # type: ignore[arg-type]


def serve(factory: Callable[[], Any], stdin: IO[str], stdout: IO[str]) -> int:
    """Play every game ``stdin`` asks for with bots from ``factory`` (checked to make
    :class:`~sueca.sdk.Bot` instances); 0 at end of input."""
    def say(obj: dict[str, Any]) -> None:
        stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
        stdout.flush()

    games: dict[str, tuple[Bot, Variant]] = {}
    for line in stdin:
        msg = json.loads(line)
        kind, game = msg.get("type"), msg.get("game", "")
        if kind == "hello":
            say({"type": "hello", "protocol": PROTOCOL, "games": GAMES})
        elif kind == "start":
            bot, variant = factory(), Variant.from_dict(msg["variant"])
            bot.start(MatchInfo(game, msg["seat"], tuple(msg["seats"]), variant, msg["seed"]))
            games[game] = (bot, variant)
        elif kind == "turn":
            bot, variant = games[game]
            bot.clock = Clock(move_s=msg["ms"] / 1000, bank_s=0.0, received=time.monotonic())
            obs = _snapshot(msg, variant)
            if msg["kind"] == "redeal":
                say({"game": game, "id": msg["id"], "redeal": bool(_answer(bot.redeal(obs)))})
            else:
                say({"game": game, "id": msg["id"], "card": str(_answer(bot.play(obs)))})
        elif kind == "trick":
            games[game][0].on_trick_end(_trick(msg))
        elif kind == "deal":
            games[game][0].on_deal_end(DealResult(
                msg["number"], msg["dealer"], End(msg["end"]), tuple(msg["points"]),
                tuple(msg["game_points"]), msg["fault_seat"]))
        elif kind == "end":
            bot, _ = games.pop(game)
            bot.on_match_end(tuple(msg["game_points"]), msg["winner"], End(msg["end"]))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m sueca.sdk.execserve module:Class", file=sys.stderr)
        return 2
    try:
        factory = load_bot(args[0])
        check_bot(args[0], factory)
    except BotLoadError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return serve(factory, sys.stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
