"""The operator token: a real ``sueca-arena referee --operator-token-file`` process refuses
RunMatch, Watch and ListBots without ``authorization: Bearer <token>``, while bots keep playing
with their own tokens and health checking and reflection stay open for probes.

Operator calls go through :mod:`sueca.referee.control`, which sends ``SUECA_OPERATOR_TOKEN``: each test
sets (or clears) that variable in this process only.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from kits.net import BIN, BotProc, sessions_of, wait_for
from test_tls import TLS_ENV, ConfiguredReferee, assert_clean_error, clean_env, run_cli

from sueca.referee import control
from sueca.referee.server import REFUSED_LOG_SECONDS
from sueca.v1 import sueca_pb2 as pb
from sueca.v1 import sueca_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow

TOKEN = "op-" + secrets.token_hex(16)
SPEC = {"bots": ["north", "east", "north", "east"], "seed": 5}


@pytest.fixture(scope="module")
def guarded(redis_url: str, tokens: dict[str, str],
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConfiguredReferee]:
    """A referee that wants TOKEN (from a file), with bots north and east connected."""
    folder = tmp_path_factory.mktemp("operator")
    token_file = folder / "operator-token"
    token_file.write_text(TOKEN + "\n")
    ref = ConfiguredReferee(redis_url, ("--operator-token-file", str(token_file)),
                            log_path=folder / "referee.log")
    bots = [BotProc("random", ref.address, tokens[name], capacity=4,
                    log_path=folder / f"{name}.log") for name in ("north", "east")]
    with pytest.MonkeyPatch.context() as mp:
        clean_env(mp)
        mp.setenv("SUECA_OPERATOR_TOKEN", TOKEN)
        for b in bots:
            wait_for(lambda b=b: sessions_of(ref.address, b.name) >= 1, 30, f"bot {b.name}")
    yield ref
    for b in bots:
        b.stop()
    ref.stop()


@pytest.fixture(params=["missing", "wrong"])
def bad_token(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """This process calls as a stranger: no token at all, or a wrong one (returned)."""
    clean_env(monkeypatch)
    wrong = "guess-" + secrets.token_hex(8) if request.param == "wrong" else ""
    if wrong:
        monkeypatch.setenv("SUECA_OPERATOR_TOKEN", wrong)
    return wrong


def check_refusal(err: control.RefereeError, wrong: str) -> None:
    assert err.code() is grpc.StatusCode.UNAUTHENTICATED, err
    message = err.details()
    assert TOKEN not in message
    if wrong:
        assert message == "wrong operator token"
        assert wrong not in message
    else:
        assert "authorization: Bearer <operator token>" in message
        assert "SUECA_OPERATOR_TOKEN" in message


def test_run_match_needs_the_operator_token(guarded: ConfiguredReferee, bad_token: str) -> None:
    with pytest.raises(control.RefereeError) as err:
        control.run_match(guarded.address, SPEC, timeout=30)
    check_refusal(err.value, bad_token)


def test_list_bots_needs_the_operator_token(guarded: ConfiguredReferee, bad_token: str) -> None:
    with pytest.raises(control.RefereeError) as err:
        control.list_bots(guarded.address)
    check_refusal(err.value, bad_token)


def test_watch_needs_the_operator_token(guarded: ConfiguredReferee, bad_token: str) -> None:
    with pytest.raises(control.RefereeError) as err:
        list(control.watch(guarded.address, "no-such-match", timeout=10))
    check_refusal(err.value, bad_token)


def test_operator_runs_matches_and_bots_still_play(guarded: ConfiguredReferee,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    clean_env(monkeypatch)
    monkeypatch.setenv("SUECA_OPERATOR_TOKEN", TOKEN)
    listed = {b["bot"] for b in control.list_bots(guarded.address)}
    assert {"north", "east"} <= listed
    result = control.run_match(guarded.address, SPEC, timeout=120)
    assert result["end"] == "normal" and result["replay"]["deals"]
    # with the token, Watch gets past the check to the real answer
    with pytest.raises(control.BotUnavailable) as err:
        list(control.watch(guarded.address, "no-such-match", timeout=10))
    assert err.value.code() is grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("value,expected", [
    ("Basic " + TOKEN, "must read 'Bearer <operator token>'"),
    ("Bearer", "must read 'Bearer <operator token>'"),
    (TOKEN, "must read 'Bearer <operator token>'"),
    ("Bearer " + TOKEN[:-1], "wrong operator token"),
    ("Bearer " + TOKEN + "x", "wrong operator token"),
], ids=["basic", "bearer-alone", "no-scheme", "one-short", "one-long"])  # the token is random
def test_malformed_authorization_is_refused(guarded: ConfiguredReferee, value: str,
                                            expected: str) -> None:
    with grpc.insecure_channel(guarded.address) as ch:
        with pytest.raises(grpc.RpcError) as err:
            pb_grpc.MatchServiceStub(ch).ListBots(pb.ListBotsRequest(), timeout=5,
                                                  metadata=(("authorization", value),))
    assert err.value.code() is grpc.StatusCode.UNAUTHENTICATED
    assert expected in err.value.details() and TOKEN not in err.value.details()


def test_health_and_reflection_stay_open(guarded: ConfiguredReferee) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
    with grpc.insecure_channel(guarded.address) as ch:
        health = health_pb2_grpc.HealthStub(ch).Check(
            health_pb2.HealthCheckRequest(service="sueca.v1.MatchService"), timeout=5)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        answers = reflection_pb2_grpc.ServerReflectionStub(ch).ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5)
        services = {s.name for a in answers for s in a.list_services_response.service}
    assert "sueca.v1.MatchService" in services


def test_public_bind_without_token_warns(redis_url: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch, tokens: dict[str, str],
                                         bot_proc) -> None:
    """On every interface without a token: a warning at start-up, and anyone may list bots.
    The same with SUECA_OPERATOR_TOKEN in the referee's environment: no warning, locked."""
    clean_env(monkeypatch)
    open_ref = ConfiguredReferee(redis_url, ("--host", "0.0.0.0"), log_path=tmp_path / "a.log")
    try:
        bot_proc("random", open_ref.address, tokens["twin"])
        assert [b["bot"] for b in control.list_bots(open_ref.address)] == ["twin"]
        wait_for(lambda: "without an operator token" in open_ref.logs(), 10, "the warning")
    finally:
        open_ref.stop()
    locked = ConfiguredReferee(redis_url, ("--host", "0.0.0.0"),
                               env={"SUECA_OPERATOR_TOKEN": TOKEN}, log_path=tmp_path / "b.log")
    try:
        with pytest.raises(control.RefereeError) as err:
            control.list_bots(locked.address)
        assert err.value.code() is grpc.StatusCode.UNAUTHENTICATED
        monkeypatch.setenv("SUECA_OPERATOR_TOKEN", TOKEN)
        bot_proc("random", locked.address, tokens["twin"])
        assert [b["bot"] for b in control.list_bots(locked.address)] == ["twin"]
        assert "operator token required" in locked.logs()
        assert "without an operator token" not in locked.logs()
    finally:
        locked.stop()


def test_loopback_without_token_does_not_warn(redis_url: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    clean_env(monkeypatch)
    ref = ConfiguredReferee(redis_url, log_path=tmp_path / "c.log")
    try:
        wait_for(lambda: "listening on" in ref.logs(), 10, "the start-up line")
        assert "without an operator token" not in ref.logs()
    finally:
        ref.stop()


@pytest.mark.parametrize("content,problem", [(None, "does not exist"), ("", "is empty"),
                                             ("two words\n", "more than one word")])
def test_bad_operator_token_file(content: str | None, problem: str, tmp_path: Path) -> None:
    path = tmp_path / "token"
    if content is not None:
        path.write_text(content)
    out = run_cli(str(BIN / "sueca-arena"), "referee", "--insecure", "--metrics-port", "0",
                  "--operator-token-file", str(path))
    assert_clean_error(out, str(path))
    assert problem in out.stderr


def test_the_scheme_is_case_insensitive(guarded: ConfiguredReferee) -> None:
    """RFC 7235: 'bearer' is 'Bearer'."""
    with grpc.insecure_channel(guarded.address) as ch:
        answer = pb_grpc.MatchServiceStub(ch).ListBots(
            pb.ListBotsRequest(), timeout=5, metadata=(("authorization", "bearer " + TOKEN),))
    assert {b.bot for b in answer.bots} >= {"north", "east"}


def test_every_match_service_method_wants_the_token(guarded: ConfiguredReferee,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Walks the service as declared, so a method added later cannot be open by mistake."""
    clean_env(monkeypatch)
    methods = pb.DESCRIPTOR.services_by_name["MatchService"].methods
    assert {m.name for m in methods} >= {"RunMatch", "Watch", "ListBots"}
    with grpc.insecure_channel(guarded.address) as ch:
        for m in methods:
            request_cls = getattr(pb, m.input_type.name)
            path = f"/sueca.v1.MatchService/{m.name}"
            call = (ch.unary_stream if m.server_streaming else ch.unary_unary)(
                path, request_serializer=request_cls.SerializeToString,
                response_deserializer=lambda b: b)
            with pytest.raises(grpc.RpcError) as err:
                answer = call(request_cls(), timeout=5)
                if m.server_streaming:
                    list(answer)
            assert err.value.code() is grpc.StatusCode.UNAUTHENTICATED, m.name
    assert "refused a MatchService call" in guarded.logs() and TOKEN not in guarded.logs()


@pytest.mark.parametrize("value,problem", [("   ", "is empty"), ("tok\u00e9n", "printable ASCII")])
def test_a_blank_or_unsendable_token_in_the_environment_stops_the_referee(
        value: str, problem: str) -> None:
    """Set but blank must not mean 'no token' (the referee would run open); a token gRPC
    cannot carry would lock every operator out."""
    env = {k: v for k, v in os.environ.items() if k not in TLS_ENV}
    out = subprocess.run([str(BIN / "sueca-arena"), "referee", "--insecure", "--metrics-port",
                          "0"], capture_output=True, text=True, timeout=30,
                         env={**env, "SUECA_OPERATOR_TOKEN": value})
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("error: SUECA_OPERATOR_TOKEN ") and problem in out.stderr


def test_refusals_are_logged_once_per_window_not_once_each(guarded: ConfiguredReferee) -> None:
    """A scanner must not be able to flood the referee's log."""
    before = guarded.logs().count("refused a MatchService call")
    with grpc.insecure_channel(guarded.address) as ch:
        stub = pb_grpc.MatchServiceStub(ch)
        for _ in range(30):
            with pytest.raises(grpc.RpcError):
                stub.ListBots(pb.ListBotsRequest(), timeout=5)
    # a sleep on purpose: the log (written by another process) gains no second line meanwhile
    time.sleep(0.5)
    logged = guarded.logs().count("refused a MatchService call")
    assert logged - before <= 1
    # the next window's first refusal reports how many went unlogged (a sleep on purpose: the
    # window's passing is under test)
    time.sleep(REFUSED_LOG_SECONDS)
    with grpc.insecure_channel(guarded.address) as ch, pytest.raises(grpc.RpcError):
        pb_grpc.MatchServiceStub(ch).ListBots(pb.ListBotsRequest(), timeout=5)
    wait_for(lambda: guarded.logs().count("refused a MatchService call") > logged, 20,
             "the next window's refusal line")
    last = [line for line in guarded.logs().splitlines()
            if "refused a MatchService call" in line][-1]
    quiet = int(last.split("(")[-1].split()[0])
    assert quiet >= 29, last


def test_a_short_operator_token_is_warned_about_and_a_long_one_not(redis_url, tmp_path):
    """Wrong operator tokens are answered at once: a short token can be guessed, so the
    referee says so when it starts (it still starts: the operator may know the port is
    private)."""
    for token, warned in (("short-secret", True), (TOKEN, False)):
        token_file = tmp_path / f"token-{warned}"
        token_file.write_text(token + "\n")
        ref = ConfiguredReferee(redis_url, ("--operator-token-file", str(token_file)),
                                log_path=tmp_path / f"referee-{warned}.log")
        ref.stop()
        said = "the operator token is only 12 characters long" in ref.logs()
        assert said is warned, ref.logs()[-2000:]


def test_wrong_operator_tokens_are_budgeted_per_address(redis_url: str, tmp_path: Path) -> None:
    """Guessing the operator token: after the address's refusal budget (here 0.5 a second, 2
    at once) of wrong tokens, tokens from there go unread, even the right one, until it refills.
    Calls that send no token guess nothing and spend none of it."""
    token_file = tmp_path / "operator-token"
    token_file.write_text(TOKEN)
    ref = ConfiguredReferee(redis_url, ("--operator-token-file", str(token_file),
                                        "--refusals-per-second", "0.5"),
                            log_path=tmp_path / "referee.log")
    try:
        with grpc.insecure_channel(ref.address) as ch:
            stub = pb_grpc.MatchServiceStub(ch)

            def call(token: str | None) -> grpc.StatusCode:
                metadata = (("authorization", "Bearer " + token),) if token is not None else ()
                try:
                    stub.ListBots(pb.ListBotsRequest(), timeout=5, metadata=metadata)
                except grpc.RpcError as err:
                    assert TOKEN not in err.details() and "guess" not in err.details()
                    if err.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
                        assert err.details().startswith(
                            "too many wrong operator tokens from 'ipv4:127.0.0.1'"), err.details()
                    return err.code()
                return grpc.StatusCode.OK

            assert [call(None) for _ in range(6)] == [grpc.StatusCode.UNAUTHENTICATED] * 6
            began = time.monotonic()
            codes = [call(f"guess-{i}") for i in range(2)] + [call("guess-2"), call(TOKEN)]
            if time.monotonic() - began < 1.5:  # else the budget refilled meanwhile
                assert codes == [grpc.StatusCode.UNAUTHENTICATED] * 2 + [
                    grpc.StatusCode.RESOURCE_EXHAUSTED] * 2, codes
            time.sleep(2.2)  # one token's worth refilled: a sleep on purpose, the refill is tested
            assert call(TOKEN) is grpc.StatusCode.OK
    finally:
        ref.stop()
    assert "operator_refusals" in ref.logs() and TOKEN not in ref.logs()
