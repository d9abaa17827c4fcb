"""A bot whose code raises: its game ends at once as ``bot_error``, charged to its seat, with
the exception's first line (escaped, capped) in the result; a late answer is refused as
``late``, not as a protocol fault."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from kits.net import RawBot, sessions_of, wait_for

from sueca.codec import FAULT_DETAIL_CHARS
from sueca.referee import control
from sueca.v1 import sueca_pb2 as pb

pytestmark = pytest.mark.slow

POOL = ThreadPoolExecutor(2)
BOTLIB = "tests/kits/bots/network.py"


def test_a_raising_networked_bot_ends_its_match_within_a_second(referee, tokens, bot_proc):
    """The SDK bot (its own process) raises on its first turn; the clock would allow 30 s."""
    broken = bot_proc(f"{BOTLIB}:Raiser", referee.address, tokens["broken"], capacity=2)
    bot_proc("random", referee.address, tokens["dave"], capacity=4)
    t0 = time.monotonic()
    result = control.run_match(referee.address, {
        "bots": ["broken", "dave", "broken", "dave"], "seed": 4, "move_ms": 10_000,
        "bank_ms": 20_000})
    took = time.monotonic() - t0
    assert result["end"] == "bot_error" and result["fault_bot"] == "broken", result
    assert result["fault_seat"] in (0, 2) and result["winner"] == 1
    assert result["fault_detail"] == "RuntimeError: boom: this bot is broken on purpose"
    assert result["replay"]["end"] == "bot_error"
    assert took < 1.0, f"{took:.2f} s"  # not the 30 s the clock allowed
    wait_for(lambda: "resigning the game" in broken.logs(), 5, "the bot's own log line")
    assert "Traceback" in broken.logs()  # the traceback stays with its author


def test_a_hostile_reason_is_escaped_and_capped_and_late_answers_are_late(referee, tokens,
                                                                         bot_proc):
    """A raw bot resigns with a long reason full of control characters; its answer after the
    end is refused as ``late`` (a game it held), while another bot's id stays unknown."""
    bot = RawBot(referee.address, "mallory", tokens["mallory"])
    assert bot.next_message().HasField("welcome")
    wait_for(lambda: sessions_of(referee.address, "mallory") >= 1, 10, "mallory's session")
    bot_proc("random", referee.address, tokens["dave"], capacity=4)
    eve = RawBot(referee.address, "eve", tokens["eve"])  # not seated: only asks
    assert eve.next_message().HasField("welcome")
    fut = POOL.submit(control.run_match, referee.address, {
        "bots": ["mallory", "dave", "dave", "dave"], "seed": 5, "first_dealer": 3,
        "move_ms": 10_000}, 30)
    turn = bot.next_turn()
    reason = "ValueError: \x1b[31mred\nforged line\r" + "x" * 5000
    bot.send(pb.BotMessage(actions=[pb.Action(game_id=turn.game_id, request_id=0,
                                              resign=pb.Resign(reason=reason))]))
    result = fut.result(10)
    assert result["end"] == "bot_error" and result["fault_bot"] == "mallory"
    detail = result["fault_detail"]
    assert detail.startswith("ValueError: \\x1b[31mred\\nforged line\\rxxx"), detail
    assert len(detail) == FAULT_DETAIL_CHARS and detail.endswith("...")
    assert detail.isprintable()
    bot.play(turn)  # too late: the game is over
    e = bot.expect(lambda m: m.errors, 10, "the refusal").errors[0]
    assert e.code == "late" and "ended as bot_error" in e.message, e
    # eve never held that game: to her it is unknown, and nothing says how it ended
    eve.send(pb.BotMessage(actions=[pb.Action(game_id=turn.game_id, request_id=1, card=0)]))
    e = eve.expect(lambda m: m.errors, 10, "the refusal").errors[0]
    assert e.code == "unknown_game" and "bot_error" not in e.message, e
    bot.close()
    eve.close()


def test_the_league_records_a_bot_error_with_its_detail():
    """What the worker makes of such a result: the entry keeps the detail, the seat at fault
    gets a ``bot_errors`` count, and its bot's totals and the standings count the fault."""
    from sueca.arena import botstats
    from sueca.arena.match_job import outcome_to_result
    from sueca.arena.ratings.standings import standings
    spec = {"bots": ["a", "b", "a", "b"], "seed": "1"}
    out = {"end": "bot_error", "winner": 0, "game_points": [0, 0], "fault_seat": 1,
           "fault_bot": "b", "fault_detail": "RuntimeError: boom", "replay": None}
    entry = outcome_to_result({"id": "m1", "spec": spec}, out)
    assert entry["fault_detail"] == "RuntimeError: boom" and entry["rated"]
    assert [st.get("bot_errors", 0) for st in entry["stats"]] == [0, 1, 0, 0]
    assert botstats.increments(entry["seats"], entry["stats"])["b"]["bot_errors"] == 1
    rows = {r["bot"]: r for r in standings([entry])}
    assert (rows["b"]["faults"], rows["a"]["faults"]) == (1, 0)
