"""House bots: seats the referee plays itself, only those the operator turned on, never a
network bot's name. A real referee on a real socket, a real SDK bot process as the target."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from kits.net import BIN, BotProc, RawBot, sessions_of, wait_for

from sueca.referee import control
from sueca.referee.house import HouseBotError, parse_house_bots
from sueca.referee.server import ServerThread, StaticAuth

TOKENS = {"alice": "alice.secret", "house:random": "house.secret"}


@pytest.fixture(scope="module")
def house_referee() -> ServerThread:
    with ServerThread(StaticAuth(TOKENS), house_bots=("random", "heuristic")) as srv:
        yield srv


def test_a_network_bot_plays_against_house_bots(house_referee: ServerThread,
                                                tmp_path: Path) -> None:
    bot = BotProc("random", house_referee.address, TOKENS["alice"], capacity=8,
                  log_path=tmp_path / "alice.log")
    try:
        wait_for(lambda: sessions_of(house_referee.address, "alice") >= 1, 30, "alice")
        seen: list[dict] = []
        for k, seats in enumerate((["alice", "house:random", "house:heuristic", "house:random"],
                                   ["house:heuristic", "house:random", "house:random", "alice"])):
            result = control.run_match(house_referee.address, {
                "match_id": f"house-{k}", "bots": seats, "seed": 7 + k,
                "move_ms": 2000, "bank_ms": 2000}, timeout=60, on_event=seen.append)
            assert result["end"] == "normal", result
            assert result["replay"]["seats"] == seats
            alice = seats.index("alice")
            cards = [e for e in seen if e["type"] == "card"]
            assert cards and sum(1 for e in cards if e["seat"] == alice) * 4 == len(cards)
            seen.clear()
        # house bots are no sessions: nothing to list, nothing for a scheduler to place
        assert {b["bot"] for b in control.list_bots(house_referee.address)} == {"alice"}
    finally:
        bot.stop()


@pytest.mark.parametrize("auth", [StaticAuth(TOKENS), StaticAuth(None)],
                         ids=["right-token", "insecure"])
def test_no_network_bot_connects_as_a_house_bot(auth: StaticAuth) -> None:
    # even when the authenticator would accept the token (a registry cannot hold the name,
    # an --insecure referee takes any)
    with ServerThread(auth, house_bots=("random",)) as srv:
        raw = RawBot(srv.address, "house:random", "house.secret")
        try:
            assert raw.next_message(timeout=10) is None  # the stream ends at once
            assert raw.status is not None
            assert raw.status.code() is grpc.StatusCode.PERMISSION_DENIED
            assert "reserved for the referee's own house bots" in raw.status.details()
            assert sessions_of(srv.address, "house:random") == 0
        finally:
            raw.close()


def test_a_house_bot_the_operator_did_not_turn_on_is_refused(house_referee: ServerThread) -> None:
    with ServerThread(StaticAuth(TOKENS)) as off:  # no house bots at all (the default)
        with pytest.raises(control.RefereeError) as err:
            control.run_match(off.address, {"bots": ["house:random"] * 4}, timeout=10)
        assert err.value.code() is grpc.StatusCode.PERMISSION_DENIED
        assert "'house:random' is a house bot" in str(err.value)
        assert "house bots on: none" in str(err.value)
    with pytest.raises(control.RefereeError) as err:
        control.run_match(house_referee.address, {"bots": ["house:reckless"] * 4}, timeout=10)
    assert err.value.code() is grpc.StatusCode.PERMISSION_DENIED
    assert "house bots on: house:heuristic, house:random" in str(err.value)


def test_four_house_bots_play_a_match_alone(house_referee: ServerThread) -> None:
    result = control.run_match(house_referee.address, {
        "bots": ["house:random", "house:heuristic"] * 2, "seed": 3}, timeout=30)
    assert result["end"] == "normal"
    assert sum(len(t["cards"]) for d in result["replay"]["deals"] for t in d["tricks"]) >= 40


def test_turn_times_come_back_only_to_a_caller_that_asks(house_referee: ServerThread) -> None:
    from sueca import codec as conv
    from sueca.arena.loadtest.generator import parse_turn_times
    from sueca.v1 import sueca_pb2_grpc as pb_grpc

    spec = conv.spec_to_pb({"bots": ["house:random", "house:heuristic"] * 2, "seed": 11,
                            "quiet": True})
    with grpc.insecure_channel(house_referee.address) as ch:
        stub = pb_grpc.MatchServiceStub(ch)
        call = stub.RunMatch(spec, metadata=(("sueca-turn-times", "1"),), timeout=30)
        events = list(call)
        result = conv.result_to_dict(events[-1].result)
        trailing = call.trailing_metadata()
        plain = stub.RunMatch(spec, timeout=30)
        list(plain)
        assert parse_turn_times(plain.trailing_metadata(), 0) is None
    assert result["end"] == "normal"
    cards = [0, 0, 0, 0]
    for deal in result["replay"]["deals"]:
        for trick in deal["tricks"]:
            for k in range(len(trick["cards"])):
                cards[(trick["leader"] + k) % 4] += 1
    for seat in range(4):
        times = parse_turn_times(trailing, seat)
        assert times is not None and len(times) == cards[seat] > 0  # one per card it played
        assert all(0 <= t < 5 for t in times)


def test_house_bot_names_are_checked() -> None:
    assert parse_house_bots("random, heuristic,random") == ("random", "heuristic")
    assert parse_house_bots(["house:random"]) == ("random",)
    with pytest.raises(HouseBotError, match="bad house bot 'mybot:Greedy'"):
        parse_house_bots("random,mybot:Greedy")
    proc = subprocess.run([str(BIN / "sueca-arena"), "referee", "--insecure", "--port", "1",
                           "--house-bots", "random,./evil.py:X"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "bad house bot './evil.py:X'" in proc.stderr
    assert "Traceback" not in proc.stderr


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
