"""What a session with one game costs on the wire: one referee message per turn, events riding
with it (a real referee process, four raw bots each on its own stream)."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest
from kits.net import RawBot, play_until_done, sessions_of, wait_for

from sueca.referee import control
from sueca.v1 import sueca_pb2 as pb

pytestmark = pytest.mark.slow

NAMES = ["carol", "dave", "eve", "renegade"]


def test_one_game_per_session_costs_one_message_per_turn(referee, tokens):
    """Every message a one-game bot receives carries its turn, except the one with the match
    end; the match start and every trick and deal end still arrive, in order, before the turn
    that follows them (the turn's observation counts the deal's tricks the bot was told of)."""
    bots = [RawBot(referee.address, n, tokens[n], capacity=1) for n in NAMES]
    for bot in bots:
        first = bot.next_message()
        assert first is not None and first.HasField("welcome"), bot.status
    for n in NAMES:
        wait_for(lambda n=n: sessions_of(referee.address, n) == 1, 10, f"{n} session")
    with ThreadPoolExecutor(1) as pool:
        fut = pool.submit(control.run_match, referee.address,
                          {"bots": NAMES, "seed": 31, "match_id": "one-game-each"}, 60)
        play_until_done(bots, [fut], random.Random(31))
        result = fut.result(10)
    assert result["end"] == "normal", result

    def ended(bot: RawBot) -> bool:
        last = pb.RefereeMessage.FromString(bot.raw[-1])
        return any(e.HasField("match_end") for e in last.events)

    wait_for(lambda: all(ended(b) for b in bots), 10, "every seat's match end")
    deals = result["replay"]["deals"]
    tricks = sum(len(d["tricks"]) for d in deals)
    for bot in bots:
        msgs = [pb.RefereeMessage.FromString(d) for d in bot.raw[1:]]  # after the welcome
        kinds: list[str] = []
        told = 0  # trick ends of the current deal this bot was told of
        for msg in msgs[:-1]:
            assert len(msg.turns) == 1, (bot.bot, msg)  # no message without a turn
            for ev in msg.events:  # a message's events come before its turn
                kinds.append(ev.WhichOneof("event"))
                told = 0 if kinds[-1] == "deal_end" else told + (kinds[-1] == "trick_end")
            turn = msg.turns[0]
            if turn.kind == pb.TurnRequest.PLAY:
                assert told == len(turn.observation.tricks), (bot.bot, told, turn)
        assert not msgs[-1].turns
        kinds += [ev.WhichOneof("event") for ev in msgs[-1].events]
        assert kinds[0] == "match_start" and kinds[-1] == "match_end", kinds
        assert kinds.count("match_start") == kinds.count("match_end") == 1, kinds
        assert kinds.count("trick_end") == tricks and kinds.count("deal_end") == len(deals)
        bot.close()
