"""``sueca-bot run`` says what it has done: a summary line every SUECA_BOT_SUMMARY_SECONDS and
one at stop (sueca.sdk.summary), checked against real matches on a real referee."""

from __future__ import annotations

import re
import signal
from fractions import Fraction
from pathlib import Path

from kits.net import KEY_PREFIX
from kits.wait import wait_for

from sueca.sdk.summary import Summary
from sueca.v1 import sueca_pb2 as pb

# raises in its first play of the process (a bot error: that match is lost), then plays the
# first legal card
BOT = '''
from sueca.sdk import Bot

class FailsOnce(Bot):
    failed = False

    def play(self, obs):
        if not FailsOnce.failed:
            FailsOnce.failed = True
            raise RuntimeError("first move")
        return obs.legal[0]
'''

LINE = re.compile(r"([\d.]+) match(?:es)? played: ([\d.]+) won, ([\d.]+) lost · faults: (.+?) · "
                  r"(?:([\d.]+) (ms|µs) a move \((\d+) moves\)|no moves yet)")


def test_the_summary_counts_matches_as_the_arena_does_faults_and_moves(referee, redis_url: str, random_bots,
                                                   bot_proc, tmp_path: Path) -> None:
    import redis

    from sueca.arena.keys import Keys
    from sueca.arena.store.bots import BotRegistry
    from sueca.referee import control
    token = BotRegistry(redis.Redis.from_url(redis_url), Keys(KEY_PREFIX)).add("summarised")
    (tmp_path / "failsonce.py").write_text(BOT)
    bot = bot_proc(f"{tmp_path / 'failsonce.py'}:FailsOnce", referee.address, token,
                   capacity=2, env={"SUECA_BOT_SUMMARY_SECONDS": "0.3"})
    wait_for(lambda: "0 matches played: 0 won, 0 lost · faults: none · no moves yet" in bot.logs(),
             10, "a summary line before any game", detail=bot.logs)
    seats = ["summarised", "alice", "summarised", "bob"]
    first = control.run_match(referee.address, {"bots": seats, "seed": 1})
    assert first["end"] == "bot_error" and first["fault_bot"] == "summarised", first
    second = control.run_match(referee.address, {"bots": seats, "seed": 2})
    assert second["end"] == "normal", second
    # the bot holds both seats of team 0: two games of each match, one match as the arena
    # counts it (a bot in two seats played one match)
    won = int(second["winner"] == 0)

    def last() -> tuple[str, ...] | None:
        found = LINE.findall(bot.logs())
        return found[-1] if found else None
    expected = ("2", str(won), str(2 - won), "bot error 1")
    wait_for(lambda: (last() or ())[:4] == expected, 10, f"a summary line {expected}",
             detail=bot.logs)
    assert bot.stop(signal.SIGTERM) == 0
    logs = bot.logs()
    at_stop = logs[:logs.rindex("stopped")]
    line = LINE.findall(at_stop)[-1]
    assert line[:4] == expected, logs
    # the moves: the failed one and every one of the second match (40 cards, half of them
    # this bot's two seats'), no fewer; each in well under a second
    assert int(line[6]) >= 1 + 20 and 0 < float(line[4]) < 1000, line


def test_the_line_counts_each_kind_of_fault_of_its_own_seat_only() -> None:
    s = Summary()
    s.deal_end(1, pb.DealEnd(end="renuncia", fault_seat=1))
    s.deal_end(1, pb.DealEnd(end="renuncia", fault_seat=2))   # another seat's
    s.match_end(1, pb.MatchEnd(winner=1, end="normal", fault_seat=-1))
    s.match_end(2, pb.MatchEnd(winner=1, end="timeout", fault_seat=2))
    s.match_end(3, pb.MatchEnd(winner=-1, end="aborted", fault_seat=-1))
    s.answered(4, 0.010)
    assert s.line() == ("3 matches played: 1 won, 1 lost · faults: renúncia 1, timeout 1 · "
                        "2.50 ms a move (4 moves)")


def test_a_match_shared_by_seats_counts_once_and_the_shares_add_up() -> None:
    """Two games of one match (the bot in seats 0 and 2) count one match; a share left by a
    seat another process serves shows as a fraction, and a fast bot's moves in µs."""
    s = Summary()
    half = Fraction(1, 2)
    s.match_end(0, pb.MatchEnd(winner=0, end="normal", fault_seat=-1), half)
    s.match_end(2, pb.MatchEnd(winner=0, end="normal", fault_seat=-1), half)
    s.match_end(1, pb.MatchEnd(winner=0, end="normal", fault_seat=-1), half)
    s.answered(1000, 0.0000252 * 1000)
    assert s.line() == ("1.5 matches played: 1 won, 0.5 lost · faults: none · "
                        "25.2 µs a move (1000 moves)")
