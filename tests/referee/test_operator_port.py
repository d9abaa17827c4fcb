"""The operator API on its own port: a real ``sueca-arena referee --operator-port`` process
serves bots and health on ``--port`` and MatchService (RunMatch, Watch, ListBots) only on the
operator port, still behind the operator token. A MatchService call on the public port is
refused UNIMPLEMENTED with a message that says where the operator API is; bots connected to the
public port play the matches run through the operator port.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from kits.net import BIN, BotProc, free_port, wait_for
from test_tls import ConfiguredReferee, clean_env, make_pki, run_cli

from sueca.referee import control
from sueca.referee.server import OPERATOR_ELSEWHERE
from sueca.v1 import sueca_pb2 as pb
from sueca.v1 import sueca_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow

TOKEN = "op-" + secrets.token_hex(16)
SPEC = {"bots": ["north", "east", "north", "east"], "seed": 7}


class SplitReferee(ConfiguredReferee):
    """A referee with ``--operator-port`` (and the operator token from a file)."""

    def __init__(self, redis_url: str, token_file: str, log_path: Path) -> None:
        self.operator_port = free_port()
        self.operator_address = f"127.0.0.1:{self.operator_port}"
        super().__init__(redis_url, ("--operator-port", str(self.operator_port),
                                     "--operator-token-file", token_file),
                         log_path=log_path)


@pytest.fixture(scope="module")
def split(redis_url: str, tokens: dict[str, str],
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[SplitReferee]:
    """The referee, with bots north and east connected to its public port."""
    folder = tmp_path_factory.mktemp("opport")
    token_file = folder / "operator-token"
    token_file.write_text(TOKEN + "\n")
    ref = SplitReferee(redis_url, str(token_file), folder / "referee.log")
    bots = [BotProc("random", ref.address, tokens[name], capacity=4,
                    log_path=folder / f"{name}.log") for name in ("north", "east")]
    with pytest.MonkeyPatch.context() as mp:
        clean_env(mp)
        mp.setenv("SUECA_OPERATOR_TOKEN", TOKEN)

        def connected() -> bool:
            seen = {b["bot"]: b["sessions"] for b in control.list_bots(ref.operator_address)}
            return all(seen.get(b.name, 0) >= 1 for b in bots)
        wait_for(connected, 30, "bots north and east on the public port")
    yield ref
    for b in bots:
        b.stop()
    ref.stop()


@pytest.fixture
def operator(monkeypatch: pytest.MonkeyPatch) -> None:
    clean_env(monkeypatch)
    monkeypatch.setenv("SUECA_OPERATOR_TOKEN", TOKEN)


def test_operator_calls_on_the_public_port_are_refused_saying_where_to_go(
        split: SplitReferee, operator: None) -> None:
    calls = [lambda: control.run_match(split.address, SPEC, timeout=10),
             lambda: control.list_bots(split.address),
             lambda: list(control.watch(split.address, "m-nothing", timeout=5))]
    for call in calls:
        with pytest.raises(control.RefereeError) as err:
            call()
        assert err.value.code() is grpc.StatusCode.UNIMPLEMENTED, err.value
        assert err.value.details() == OPERATOR_ELSEWHERE
        assert "--operator-port" in err.value.details()
        assert str(split.operator_port) not in err.value.details()  # bots need not know it
    # the refusal is in the access log (rate-limited), saying why
    wait_for(lambda: "refused a MatchService call from" in split.logs()
             and "not on the public port" in split.logs(), 10, "the log line")


def test_run_match_works_on_the_operator_port_with_the_token(
        split: SplitReferee, operator: None) -> None:
    out = control.run_match(split.operator_address, SPEC, timeout=60)
    assert out["end"] == "normal", out
    assert sum(out["game_points"]) > 0          # bots on the public port played it
    assert out["fault_seat"] is None


@pytest.mark.parametrize("wrong", ["", "guess-" + secrets.token_hex(8)], ids=["empty", "guess"])
def test_the_operator_port_still_needs_the_token(split: SplitReferee, wrong: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    clean_env(monkeypatch)
    if wrong:
        monkeypatch.setenv("SUECA_OPERATOR_TOKEN", wrong)
    for call in (lambda: control.run_match(split.operator_address, SPEC, timeout=10),
                 lambda: control.list_bots(split.operator_address)):
        with pytest.raises(control.RefereeError) as err:
            call()
        assert err.value.code() is grpc.StatusCode.UNAUTHENTICATED, err.value
        assert TOKEN not in err.value.details()


def test_bots_and_health_are_not_served_on_the_operator_port(split: SplitReferee) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    with grpc.insecure_channel(split.operator_address) as ch:
        health = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert health.status == health_pb2.HealthCheckResponse.SERVING  # probes may use either
        stream = pb_grpc.BotServiceStub(ch).Connect(iter([pb.BotMessage()]), timeout=5)
        with pytest.raises(grpc.RpcError) as err:
            next(iter(stream))
        assert err.value.code() is grpc.StatusCode.UNIMPLEMENTED


def test_the_setting_turns_it_on_and_operator_port_0_off(redis_url: str, tmp_path: Path,
                                                          operator: None) -> None:
    """SUECA_OPERATOR_PORT alone splits the ports; ``--operator-port 0`` (what the private
    arenas of demo, serve, loadtest and the benches pass) keeps one port whatever it says."""
    operator_port = free_port()
    env = {"SUECA_OPERATOR_PORT": str(operator_port)}
    token_file = tmp_path / "operator-token"
    token_file.write_text(TOKEN)
    for extra, split_ports in (((), True), (("--operator-port", "0"), False)):
        ref = ConfiguredReferee(redis_url, ("--operator-token-file", str(token_file), *extra),
                                env=env)
        try:
            if split_ports:
                with pytest.raises(control.RefereeError) as err:
                    control.list_bots(ref.address)
                assert err.value.code() is grpc.StatusCode.UNIMPLEMENTED
                control.list_bots(f"127.0.0.1:{operator_port}")
            else:
                control.list_bots(ref.address)
        finally:
            ref.stop()


def test_the_operator_port_serves_the_same_tls(redis_url: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               tokens: dict[str, str], bot_proc) -> None:
    """With --tls-cert the operator port is TLS too, with the same certificate: a worker's
    SUECA_TLS_CA reaches both; plaintext reaches neither."""
    pki = make_pki(tmp_path)
    operator_port = free_port()
    ref = ConfiguredReferee(redis_url, ("--tls-cert", str(pki["server"]),
                                        "--tls-key", str(pki["server.key"]),
                                        "--operator-port", str(operator_port)),
                            tls_ca=pki["ca"])
    operator_address = f"127.0.0.1:{operator_port}"
    try:
        clean_env(monkeypatch)
        with pytest.raises(control.RefereeError) as err:  # plaintext: no answer
            control.list_bots(operator_address, timeout=3)
        assert err.value.code() is grpc.StatusCode.UNAVAILABLE
        monkeypatch.setenv("SUECA_TLS_CA", str(pki["ca"]))
        bot_proc("random", ref.address, tokens["twin"], wait=False,
                 extra=("--tls-ca", str(pki["ca"])))
        wait_for(lambda: [b["bot"] for b in control.list_bots(operator_address)] == ["twin"], 30,
                 "the bot listed on the operator port, over TLS")
        with pytest.raises(control.RefereeError) as err:
            control.list_bots(ref.address)
        assert err.value.code() is grpc.StatusCode.UNIMPLEMENTED
    finally:
        ref.stop()


def test_operator_port_equal_to_port_is_a_clean_error() -> None:
    port = str(free_port())
    out = run_cli(str(BIN / "sueca-arena"), "referee", "--insecure", "--port", port,
                  "--operator-port", port, "--metrics-port", "0")
    assert out.returncode == 2 and "--operator-port" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
    bad = run_cli(str(BIN / "sueca-arena"), "referee", "--insecure", "--operator-port", "70000")
    assert bad.returncode == 2 and "70000" in bad.stderr, bad.stderr
    assert "Traceback" not in bad.stderr
