"""Faults over the wire: authentication, every protocol fault (raw gRPC client), renúncia
(rule and lenient), timeout with the time bank, disconnect with and without coming back."""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import grpc
import pytest
from kits.net import RawBot, play_until_done, sessions_of, wait_for

from sueca.engine import CARDS, replay
from sueca.referee import control
from sueca.v1 import sueca_pb2 as pb

pytestmark = pytest.mark.slow

POOL = ThreadPoolExecutor(4)


def start_match(address: str, **spec: Any) -> Future:
    spec.setdefault("bots", ["mallory", "alice", "bob", "alice"])
    return POOL.submit(control.run_match, address, spec, 60)


def connect(address: str, name: str, token: str, capacity: int = 1) -> RawBot:
    bot = RawBot(address, name, token, capacity)
    msg = bot.next_message()
    assert msg is not None and msg.HasField("welcome"), bot.status
    wait_for(lambda: sessions_of(address, name) >= 1, 10, f"{name} session")
    return bot


def play_to_end(bot: RawBot, fut: Future, turn: pb.TurnRequest | None = None) -> dict:
    if turn is not None:
        bot.play(turn)
    play_until_done([bot], [fut])
    return fut.result(10)


def error_of(bot: RawBot) -> pb.ActionError:
    msg = bot.expect(lambda m: m.errors, 10, "action error")
    assert len(msg.errors) == 1, msg.errors
    return msg.errors[0]


def _error_keeping_turns(bot: RawBot, turns: list[pb.TurnRequest]) -> pb.ActionError:
    """The next action error; the turns of every message up to it are added to ``turns`` (a
    turn that arrived first must still be answered, or the match times out)."""
    deadline = time.monotonic() + 10
    while True:
        msg = bot.next_message(timeout=max(0.01, deadline - time.monotonic()))
        assert msg is not None, f"stream ended before an action error: {bot.status}"
        turns += msg.turns
        if msg.errors:
            return msg.errors[0]
        assert time.monotonic() < deadline, "no action error within 10 s"


def action(turn: pb.TurnRequest, **kw: Any) -> pb.BotMessage:
    fields = {"game_id": turn.game_id, "request_id": turn.request_id, **kw}
    return pb.BotMessage(actions=[pb.Action(**fields)])


# -- authentication ------------------------------------------------------------------------------

@pytest.mark.parametrize("bot,token_of,code,words", [
    ("alice", lambda t: "alice.wrong", grpc.StatusCode.UNAUTHENTICATED,
     "wrong token for bot 'alice': not the token `sueca-arena bots add` printed for it"),
    ("alice", lambda t: "", grpc.StatusCode.UNAUTHENTICATED, "no token"),
    ("bob", lambda t: t["alice"], grpc.StatusCode.UNAUTHENTICATED,
     "wrong token for bot 'bob': this token was issued to another bot"),
    ("nobody", lambda t: "nobody.x", grpc.StatusCode.UNAUTHENTICATED, "'nobody'"),
])
def test_authentication_failures(referee, tokens, bot, token_of, code, words):
    raw = RawBot(referee.address, bot, token_of(tokens))
    assert raw.next_message() is None
    assert raw.status.code() == code and words in raw.status.details()


def test_hello_must_come_first_and_be_sane(referee, tokens):
    raw = RawBot(referee.address, "alice", tokens["alice"], hello=False)
    raw.send(pb.BotMessage(actions=[pb.Action(game_id="x/0", card=1)]))
    assert raw.next_message() is None
    assert raw.status.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "hello" in raw.status.details()
    raw = RawBot(referee.address, "alice", tokens["alice"], capacity=0)
    assert raw.next_message() is None
    assert raw.status.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "capacity 0" in raw.status.details()


# -- protocol faults -----------------------------------------------------------------------------

def test_protocol_faults_are_answered_and_never_touch_the_game(referee, random_bots, tokens):
    bot = connect(referee.address, "mallory", tokens["mallory"])
    # eve holds a seat of another match: her game id is the one mallory may not answer
    eve = connect(referee.address, "eve", tokens["eve"])
    other = start_match(referee.address, bots=["eve", "alice", "bob", "alice"], seed=10,
                        match_id="faults-other", move_ms=30000, grace_ms=300)
    msg = eve.expect(lambda m: m.events, 10, "eve's match start")
    eve_gid = msg.events[0].game_id
    fut = start_match(referee.address, seed=11, match_id="faults", move_ms=30000)
    turn = bot.next_turn()
    gid, rid = turn.game_id, turn.request_id
    assert "faults" not in gid and gid != eve_gid  # opaque: it names no match
    hand = list(turn.observation.hand)
    not_mine = next(c for c in range(40) if c not in hand)

    bot.send(pb.BotMessage(actions=[pb.Action(game_id="nope/0", request_id=rid, card=hand[0])]))
    e = error_of(bot)
    assert (e.code, e.game_id) == ("unknown_game", "nope/0") and "'nope/0'" in e.message

    bot.send(pb.BotMessage(actions=[pb.Action(game_id=eve_gid, request_id=1, card=hand[0])]))
    e = error_of(bot)
    assert (e.code, e.game_id) == ("not_your_seat", eve_gid) and "'mallory'" in e.message
    # ...and it tells nothing of that game: not its match, seat or bot
    assert "faults-other" not in e.message and "eve" not in e.message
    eve.cancel()
    assert other.result(10)["end"] == "disconnect"

    bot.send(action(turn, card=not_mine))
    e = error_of(bot)
    assert e.code == "not_in_hand" and str(CARDS[not_mine]) in e.message

    bot.send(action(turn, request_id=rid + 7, card=turn.observation.legal[0]))
    e = error_of(bot)
    assert e.code == "stale_request" and f"request {rid + 7}" in e.message

    bot.send(b"\xff\xff\xff\xff garbage")
    e = error_of(bot)
    assert e.code == "malformed" and "could not decode BotMessage" in e.message

    bot.send(action(turn))  # neither card nor redeal
    assert error_of(bot).code == "malformed"
    bot.send(action(turn, card=77))
    e = error_of(bot)
    assert e.code == "malformed" and "card 77" in e.message
    bot.send(action(turn, redeal=True))
    assert error_of(bot).code == "malformed"
    bot.send(pb.BotMessage(hello=pb.Hello(bot="mallory", token=tokens["mallory"], capacity=1)))
    e = error_of(bot)
    assert e.code == "malformed" and "hello" in e.message

    # none of that touched the game: the same request is still open and takes a legal card
    card = turn.observation.legal[0]
    bot.play(turn, card)
    nxt = bot.next_turn()
    assert nxt.request_id == rid + 1 and card not in nxt.observation.hand
    assert sorted(nxt.observation.hand) == sorted(c for c in hand if c != card)

    # acting with no open request: out of turn (a new id) or stale (an old one)
    bot.play(nxt)
    turns: list[pb.TurnRequest] = []  # the next turn may come before or with an error: kept
    bot.send(action(nxt, request_id=rid + 5, card=nxt.observation.legal[0]))
    assert _error_keeping_turns(bot, turns).code in ("out_of_turn", "stale_request")
    bot.send(action(nxt, card=nxt.observation.legal[0]))
    assert _error_keeping_turns(bot, turns).code in ("stale_request", "out_of_turn")

    result = play_to_end(bot, fut, turns[0] if turns else None)
    assert result["end"] == "normal"
    assert replay.verify(result["replay"]) == []
    bot.close()


def test_oversized_message_is_refused_and_the_bot_may_come_back(referee, random_bots, tokens):
    bot = connect(referee.address, "mallory", tokens["mallory"])
    fut = start_match(referee.address, seed=12, match_id="oversized", grace_ms=10000)
    turn = bot.next_turn()
    bot.send(pb.BotMessage(actions=[pb.Action(game_id="x" * 100_000, card=1)]))
    assert bot.next_message(timeout=10) is None or bot.wait_end() is not None
    assert bot.wait_end().code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert not fut.done()
    # back within the grace period: the match is announced again with the same open request
    again = connect(referee.address, "mallory", tokens["mallory"])
    msg = again.expect(lambda m: m.turns, 10, "the open turn again")
    starts = [e for e in msg.events if e.HasField("match_start")]
    assert starts and starts[0].game_id == turn.game_id  # the same game, under the same id
    assert msg.turns[0].request_id == turn.request_id
    assert list(msg.turns[0].observation.hand) == list(turn.observation.hand)
    result = play_to_end(again, fut, msg.turns[0])
    assert result["end"] == "normal"
    again.close()


# -- renúncia ------------------------------------------------------------------------------------

def _renuncia_card(turn: pb.TurnRequest) -> int | None:
    legal = set(turn.observation.legal)
    off = [c for c in turn.observation.hand if c not in legal]
    return off[0] if off and turn.observation.trick else None


def _play_until_renuncia_possible(bot: RawBot) -> tuple[pb.TurnRequest, int]:
    """Play legal cards until a turn where the hand holds an illegal card; returns that turn
    and the card (not played yet)."""
    while True:
        turn = bot.next_turn()
        bad = _renuncia_card(turn)
        if bad is not None:
            return turn, bad
        bot.play(turn)


def test_renuncia_by_rule_loses_the_deal(referee, random_bots, tokens):
    bot = connect(referee.address, "mallory", tokens["mallory"])
    fut = start_match(referee.address, seed=13, match_id="renuncia")
    turn, bad = _play_until_renuncia_possible(bot)
    bot.play(turn, bad)
    msg = bot.expect(lambda m: any(e.HasField("deal_end") for e in m.events), 10, "deal end")
    end = next(e.deal_end for e in msg.events if e.HasField("deal_end"))
    assert end.end == "renuncia" and end.fault_seat == 0
    assert end.game_points[1] >= 4  # 4 game points to the opponents, plus anything held over
    result = play_to_end(bot, fut)
    # a match to 4: the renúncia ends it at once
    assert result["end"] == "renuncia" and result["winner"] == 1
    assert result["fault_seat"] == 0 and result["fault_bot"] == "mallory"
    assert replay.verify(result["replay"]) == []
    bot.close()


def test_lenient_renuncia_is_refused_and_asked_again(referee, random_bots, tokens):
    bot = connect(referee.address, "mallory", tokens["mallory"])
    fut = start_match(referee.address, seed=13, match_id="lenient", lenient=True)
    turn, bad = _play_until_renuncia_possible(bot)
    bot.play(turn, bad)
    msg = bot.expect(lambda m: m.errors, 10, "renuncia_refused")
    e = msg.errors[0]
    assert e.code == "renuncia_refused" and str(CARDS[bad]) in e.message
    again = msg.turns[0] if msg.turns else bot.next_turn()
    assert again.request_id == turn.request_id + 1
    assert again.deadline_ms == turn.deadline_ms  # the same clock
    assert list(again.observation.hand) == list(turn.observation.hand)
    result = play_to_end(bot, fut, again)
    assert result["end"] == "normal"
    ends = [d["end"] for d in result["replay"]["deals"]]
    assert "renuncia" not in ends
    bot.close()


# -- clocks and connections ----------------------------------------------------------------------

def test_timeout_uses_the_bank_then_ends_the_match(referee, random_bots, tokens):
    bot = connect(referee.address, "mallory", tokens["mallory"])
    # margins are wide: a busy 2-core CI machine may add a few hundred ms anywhere
    fut = start_match(referee.address, seed=14, match_id="timeout", move_ms=300, bank_ms=1000)
    turn = bot.next_turn()
    assert (turn.move_ms, turn.bank_ms) == (300, 1000)
    assert abs(turn.deadline_ms - (time.time() * 1000 + 1300)) < 500
    time.sleep(0.5)  # on purpose: 0.2 s beyond the move limit comes out of the bank
    bot.play(turn)
    turn = bot.next_turn()
    assert 400 <= turn.bank_ms <= 850, turn.bank_ms
    t0 = time.monotonic()
    result = fut.result(10)  # never answered: move limit + what is left of the bank
    assert 0.6 < time.monotonic() - t0 < 4.0
    assert result["end"] == "timeout" and result["winner"] == 1
    assert (result["fault_seat"], result["fault_bot"]) == (0, "mallory")
    assert result["replay"]["end"] == "timeout"
    assert result["replay"]["deals"][-1]["fault_seat"] == 0
    # answering now is too late: the game is gone, and the refusal says it came late
    bot.play(turn)
    e = error_of(bot)
    assert e.code == "late" and "ended as timeout" in e.message, e
    bot.close()


def test_lost_connection_ends_as_disconnect_after_grace(referee, random_bots, tokens):
    bot = connect(referee.address, "mallory", tokens["mallory"])
    fut = start_match(referee.address, seed=15, match_id="gone", grace_ms=500, move_ms=30000)
    bot.play(bot.next_turn())
    bot.next_turn()
    t0 = time.monotonic()
    bot.cancel()
    result = fut.result(10)
    assert 0.4 < time.monotonic() - t0 < 3.0
    assert result["end"] == "disconnect" and result["winner"] == 1
    assert (result["fault_seat"], result["fault_bot"]) == (0, "mallory")
    assert result["replay"]["end"] == "disconnect"
