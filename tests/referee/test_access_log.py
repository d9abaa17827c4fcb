"""The referee's access log of refusals, from outside: a real referee process started with
``--log-format json``, real Redis, raw gRPC clients. Every line it writes must parse as one JSON
object; each refusal is a record with its reason, peer and bot; a bot's hostile name stays one
escaped, capped field; a flood of 1,000 refusals costs a handful of lines, and the count of the
ones held back is logged (so records + suppressed = refusals, exactly)."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest
from kits.net import RawBot, RefereeProc, wait_for

from sueca.v1 import sueca_pb2 as pb
from sueca.v1 import sueca_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow
OPERATOR = "operator-token-for-access-log-tests"


def records(ref: RefereeProc) -> list[dict[str, Any]]:
    """Every line of the referee's output, each parsed as JSON (a line that is not fails)."""
    out = []
    for line in ref.logs().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            raise AssertionError(f"not a JSON line: {line!r}") from None
    return out


def refusals(ref: RefereeProc, reason: str) -> list[dict[str, Any]]:
    return [r for r in records(ref) if r["logger"] == "sueca.referee.access"
            and r.get("reason") == reason]


@pytest.fixture
def json_referee(redis_url: str, tmp_path: Path, tokens: dict[str, str]) -> Any:
    ref = RefereeProc(redis_url, log_path=tmp_path / "referee.log",
                      extra=["--log-format", "json", "--streams-per-connection", "1",
                             "--hello-seconds", "1"],
                      env={"SUECA_OPERATOR_TOKEN": OPERATOR})
    yield ref
    ref.stop()


def hello_refused(address: str, bot: str, token: str) -> grpc.RpcError:
    raw = RawBot(address, bot, token)
    status = raw.wait_end(20)
    raw.channel.close()
    assert status is not None, "the hello was accepted"
    return status


def test_refusals_are_json_records_with_reason_peer_and_bot(json_referee: RefereeProc,
                                                           tokens: dict[str, str]) -> None:
    ref = json_referee
    assert hello_refused(ref.address, "mallory", "mallory.wrong").code() is \
        grpc.StatusCode.UNAUTHENTICATED
    # an unknown bot is told "wrong token" too; the log tells them apart
    assert "wrong token for bot 'nobody'" in \
        hello_refused(ref.address, "nobody", "nobody.x").details()
    evil = 'evil\n{"level": "CRITICAL", "reason": "forged"}\u2028' + "x" * 5000
    hello_refused(ref.address, evil, "evil.x")
    with grpc.insecure_channel(ref.address) as ch, pytest.raises(grpc.RpcError):
        pb_grpc.MatchServiceStub(ch).ListBots(pb.ListBotsRequest(), timeout=5)
    # written by another process: wait for the four records
    wait_for(lambda: all(refusals(ref, why) for why in ("wrong_token", "unknown_bot", "bad_name",
                                                         "operator_token")),
             20, "the refusal records in the referee's log", detail=lambda: ref.logs()[-3000:])
    wrong = refusals(ref, "wrong_token") + refusals(ref, "unknown_bot")
    assert [r["bot"] for r in wrong] == ["mallory", "nobody"], wrong
    for r in wrong:
        assert r["peer"].startswith("ipv4:127.0.0.1:") and r["level"] == "WARNING"
        assert r["msg"].startswith(f"refused a bot hello from {r['peer']}: wrong token")
        assert "mallory.wrong" not in r["msg"] and "nobody.x" not in r["msg"]  # never a token
    (bad,) = refusals(ref, "bad_name")
    assert bad["bot"].startswith(evil[:100]) and bad["bot"].endswith(f"... ({len(evil)} long)")
    assert len(bad["bot"]) < 300 and len(bad["msg"]) < 300
    (call,) = refusals(ref, "operator_token")
    assert call["peer"].startswith("ipv4:127.0.0.1:") and "bot" not in call
    assert OPERATOR not in ref.logs()
    # a limit: a second stream on one connection; the first never says hello
    with grpc.insecure_channel(ref.address) as ch:
        connect = ch.stream_stream("/sueca.v1.BotService/Connect",
                                   request_serializer=lambda b: b,
                                   response_deserializer=lambda b: b)
        silent = threading.Event()

        def nothing() -> Any:
            silent.wait(30)
            yield from ()

        calls = [connect(nothing(), timeout=30) for _ in range(2)]
        codes = set()
        for call in calls:
            with pytest.raises(grpc.RpcError) as err:
                list(call)
            codes.add(err.value.code())
        silent.set()
    assert codes == {grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.RESOURCE_EXHAUSTED}
    wait_for(lambda: refusals(ref, "no_hello") and refusals(ref, "streams_per_connection"),
             20, "the no_hello and streams_per_connection records",
             detail=lambda: ref.logs()[-3000:])
    (late,) = refusals(ref, "no_hello")
    (limit,) = refusals(ref, "streams_per_connection")
    assert late["peer"] == limit["peer"] and "bot" not in late
    assert limit["msg"].startswith(f"refused a bot stream from {limit['peer']}: this connection")
    # the referee's other lines are JSON too (start-up)
    assert any("listening on" in r["msg"] for r in records(ref))


def test_a_flood_of_1000_refusals_stays_a_few_lines_and_every_one_is_counted(
        redis_url: str, tmp_path: Path) -> None:
    """1,000 malformed hellos (no Redis asked) from one address, the per-address budgets off so
    each is refused for itself: the access log writes at most one record per reason and 10 s,
    each saying how many it held back, and at shutdown the rest; records + held back =
    1,000 exactly, in a few kilobytes."""
    ref = RefereeProc(redis_url, log_path=tmp_path / "flood.log",
                      extra=["--log-format", "json", "--refusals-per-second", "0",
                             "--hellos-per-second", "0", "--streams-per-connection", "0"])
    channel = grpc.insecure_channel(ref.address)
    connect = channel.stream_stream("/sueca.v1.BotService/Connect",
                                    request_serializer=lambda b: b,
                                    response_deserializer=lambda b: b)
    hello = pb.BotMessage(hello=pb.Hello(bot="flood", token="not a token!",
                                         capacity=1)).SerializeToString()

    def attempt(_: int) -> str:
        try:
            list(connect(iter([hello]), timeout=20))
        except grpc.RpcError as err:
            return err.code().name
        return "OK"

    t0 = time.monotonic()
    try:
        with ThreadPoolExecutor(8) as pool:
            codes = list(pool.map(attempt, range(1000)))
    finally:
        channel.close()
    took = time.monotonic() - t0
    assert codes == ["UNAUTHENTICATED"] * 1000, {c: codes.count(c) for c in set(codes)}
    wait_for(lambda: refusals(ref, "bad_token"), 20, "the flood's first bad_token record")
    during = refusals(ref, "bad_token")
    assert 1 <= len(during) <= 1 + took / 10 + 1, (len(during), took)
    assert ref.stop() == 0
    flood = refusals(ref, "bad_token")
    logged = [r for r in flood if r["msg"].startswith("refused a bot hello")]
    held = sum(r.get("suppressed", 0) for r in flood)
    assert len(logged) + held == 1000, (len(logged), held, flood)
    if held:  # what no later record reported was logged at shutdown
        assert "more refusal(s) for bad_token" in flood[-1]["msg"], flood[-1]
    assert all(r["bot"] == "flood" for r in logged)
    size = (tmp_path / "flood.log").stat().st_size
    assert size < 8000, size  # 1,000 refusals; one line each would be ~200 KB
