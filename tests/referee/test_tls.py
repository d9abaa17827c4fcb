"""TLS between bots, operators and a referee: a real ``sueca-arena referee --tls-cert/--tls-key``
process, real ``sueca-bot run --tls-ca`` processes, and :mod:`sueca.referee.control` reaching it
through ``SUECA_TLS_CA`` alone (as league workers do).

The certificates are made at test time with the ``openssl`` command line: a throwaway CA, a
server certificate it signs (for 127.0.0.1, localhost and referee.test), a second CA that signed
nothing here, and a key that belongs to no certificate.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from kits.net import BIN, ROOT, BotProc, RefereeProc, sessions_of, wait_for

from sueca.referee import control
from sueca.sdk.channels import TLS_ENV as CHANNEL_TLS_ENV
from sueca.sdk.channels import client_tls, open_channel

pytestmark = pytest.mark.slow

TLS_ENV = (*CHANNEL_TLS_ENV, "SUECA_OPERATOR_TOKEN")  # every setting a caller's shell may hold


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_pki(folder: Path) -> dict[str, Path]:
    """ca.crt, server.crt/server.key (signed by ca), other-ca.crt, stray.key, in ``folder``."""
    for name in ("ca", "other-ca"):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                 "-subj", f"/CN=Sueca test {name}", "-keyout", f"{name}.key",
                 "-out", f"{name}.crt", cwd=folder)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=referee.test",
             "-keyout", "server.key", "-out", "server.csr", cwd=folder)
    (folder / "san.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:referee.test\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "server.crt",
             cwd=folder)
    _openssl("genpkey", "-algorithm", "RSA", "-out", "stray.key", cwd=folder)
    (folder / "not-pem.crt").write_text("this is not a certificate\n")
    (folder / "fake.crt").write_text("-----BEGIN CERTIFICATE-----\nnonsense\n"
                                     "-----END CERTIFICATE-----\n")
    return {p.stem if p.suffix == ".crt" else p.name: p for p in folder.iterdir()}


class ConfiguredReferee(RefereeProc):
    """:class:`kits.net.RefereeProc` with extra command-line arguments and environment; its
    readiness probe speaks TLS when ``tls_ca`` is given."""

    def __init__(self, redis_url: str, extra: tuple[str, ...] = (),
                 env: dict[str, str] | None = None, tls_ca: Path | None = None,
                 log_path: Path | None = None) -> None:
        self.extra, self.extra_env, self.tls_ca = extra, env or {}, tls_ca
        super().__init__(redis_url, log_path=log_path)

    def _spawn(self, args: list[str], log_path: Path | None, env: dict[str, str]) -> None:
        super()._spawn([*args, *self.extra], log_path, {**env, **self.extra_env})

    def _healthy(self) -> bool:
        if self.tls_ca is None:
            return super()._healthy()
        if self.proc.poll() is not None:
            raise RuntimeError(f"referee exited with {self.proc.returncode}: {self.logs()}")
        from grpc_health.v1 import health_pb2, health_pb2_grpc
        with open_channel(self.address, client_tls(ca_file=str(self.tls_ca))) as ch:
            resp = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(),
                                                        timeout=1)
        return resp.status == health_pb2.HealthCheckResponse.SERVING


def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No TLS or operator setting leaks in from the caller's environment."""
    for name in TLS_ENV:
        monkeypatch.delenv(name, raising=False)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """A command line run with no TLS or operator setting from this environment."""
    env = {k: v for k, v in os.environ.items() if k not in TLS_ENV}
    env["SUECA_TOKEN"] = "alice.x"  # sueca-bot's token: never on its command line
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=30, env=env)


def assert_clean_error(out: subprocess.CompletedProcess[str], *quoted: str) -> None:
    """Exit 2, one ``error:`` line quoting each of ``quoted``, no traceback."""
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    assert "Traceback" not in out.stderr
    for text in quoted:
        assert repr(text) in lines[0], (text, lines[0])


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def tls_referee(redis_url: str, tokens: dict[str, str], pki: dict[str, Path],
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConfiguredReferee]:
    log = tmp_path_factory.mktemp("tls-referee") / "referee.log"
    ref = ConfiguredReferee(redis_url, ("--tls-cert", str(pki["server"]),
                                        "--tls-key", str(pki["server.key"])),
                            tls_ca=pki["ca"], log_path=log)
    yield ref
    ref.stop()


@pytest.fixture
def tls_env(monkeypatch: pytest.MonkeyPatch, pki: dict[str, Path]) -> None:
    """This process's operator calls (referee.control) trust the test CA, as a worker would."""
    clean_env(monkeypatch)
    monkeypatch.setenv("SUECA_TLS_CA", str(pki["ca"]))


def test_bots_play_a_full_match_over_tls(tls_referee: ConfiguredReferee, tls_env: None,
                                         tokens: dict[str, str], pki: dict[str, Path],
                                         tmp_path: Path) -> None:
    bots = [BotProc("random", tls_referee.address, tokens[name], capacity=4,
                    extra=("--tls-ca", str(pki["ca"])), log_path=tmp_path / f"{name}.log")
            for name in ("carol", "dave")]
    try:
        for b in bots:
            wait_for(lambda b=b: sessions_of(tls_referee.address, b.name) >= 1, 30,
                     f"bot {b.name} over TLS")
        result = control.run_match(tls_referee.address,
                                   {"bots": ["carol", "dave", "carol", "dave"], "seed": 11},
                                   timeout=120)
        assert result["end"] == "normal"
        assert result["winner"] in (0, 1)
        assert result["replay"]["deals"], "a full match has deals"
        assert max(result["game_points"]) >= 4

        async def over_aio() -> dict[str, object]:
            async with control.aio_channel(tls_referee.address) as channel:
                return await control.run_match_async(
                    channel, tls_referee.address,
                    {"bots": ["dave", "carol", "dave", "carol"], "seed": 12}, timeout=120)
        assert asyncio.run(over_aio())["end"] == "normal"  # control.run_match_async too
        assert all(b.proc.poll() is None for b in bots)
    finally:
        for b in bots:
            b.stop()


def test_plaintext_clients_are_refused_cleanly(tls_referee: ConfiguredReferee,
                                               monkeypatch: pytest.MonkeyPatch,
                                               tokens: dict[str, str], tmp_path: Path) -> None:
    clean_env(monkeypatch)
    with pytest.raises(control.RefereeUnavailable) as err:
        control.list_bots(tls_referee.address, timeout=5)
    assert err.value.code() is grpc.StatusCode.UNAVAILABLE
    bot = BotProc("random", tls_referee.address, tokens["eve"], extra=(),
                  log_path=tmp_path / "eve.log")
    try:
        wait_for(lambda: "cannot connect to" in bot.logs(), 30, "the plaintext bot to give up")
        assert bot.proc.poll() is None, "a refused connection is retried, not a crash"
        assert "Traceback" not in bot.logs()
        assert "UNAVAILABLE" in bot.logs()
    finally:
        bot.stop()
    assert "Traceback" not in tls_referee.logs()


def test_wrong_ca_is_refused_cleanly(tls_referee: ConfiguredReferee, pki: dict[str, Path],
                                     monkeypatch: pytest.MonkeyPatch, tokens: dict[str, str],
                                     tmp_path: Path) -> None:
    clean_env(monkeypatch)
    monkeypatch.setenv("SUECA_TLS_CA", str(pki["other-ca"]))
    with pytest.raises(control.RefereeUnavailable) as err:
        control.run_match(tls_referee.address, {"bots": ["carol"] * 4, "seed": 1}, timeout=10)
    assert err.value.code() is grpc.StatusCode.UNAVAILABLE
    bot = BotProc("random", tls_referee.address, tokens["mallory"],
                  extra=("--tls-ca", str(pki["other-ca"])), log_path=tmp_path / "mallory.log")
    try:
        wait_for(lambda: "cannot connect to" in bot.logs(), 30, "the wrong-CA bot to give up")
        assert bot.proc.poll() is None and "Traceback" not in bot.logs()
        monkeypatch.setenv("SUECA_TLS_CA", str(pki["ca"]))
        assert sessions_of(tls_referee.address, "mallory") == 0, "a wrong-CA bot got in"
    finally:
        bot.stop()


def test_certificate_name_override(tls_referee: ConfiguredReferee, pki: dict[str, Path],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """SUECA_TLS_SERVER_NAME: a worker dialling a replica's pod IP checks the certificate
    against the Service name instead; a name the certificate lacks is refused."""
    clean_env(monkeypatch)
    monkeypatch.setenv("SUECA_TLS_CA", str(pki["ca"]))
    monkeypatch.setenv("SUECA_TLS_SERVER_NAME", "referee.test")
    assert isinstance(control.list_bots(tls_referee.address), list)
    monkeypatch.setenv("SUECA_TLS_SERVER_NAME", "elsewhere.test")
    with pytest.raises(control.RefereeUnavailable):
        control.list_bots(tls_referee.address, timeout=5)


def test_health_probe_speaks_tls(tls_referee: ConfiguredReferee, pki: dict[str, Path]) -> None:
    """``sueca-arena health``: the container probe for a TLS referee (the kubelet's own gRPC
    probe is plaintext only)."""
    health = (str(BIN / "sueca-arena"), "health", tls_referee.address)
    out = run_cli(*health, "--tls-ca", str(pki["ca"]), "--tls-server-name", "referee.test")
    assert out.returncode == 0 and "SERVING" in out.stdout, out
    out = run_cli(*health, "--timeout", "3")
    assert out.returncode == 1 and "UNAVAILABLE" in out.stdout, out
    assert "Traceback" not in out.stderr


REFEREE = (str(BIN / "sueca-arena"), "referee", "--insecure", "--metrics-port", "0",
           "--port", "1")


@pytest.mark.parametrize("case", ["missing cert", "missing key", "cert not pem", "cert fake pem",
                                  "key not pem", "key of another cert", "cert is a directory",
                                  "cert without key"])
def test_referee_refuses_bad_tls_files(case: str, pki: dict[str, Path], tmp_path: Path) -> None:
    cert, key = str(pki["server"]), str(pki["server.key"])
    missing = str(tmp_path / "nowhere.pem")
    args, quoted = {
        "missing cert": (("--tls-cert", missing, "--tls-key", key), (missing,)),
        "missing key": (("--tls-cert", cert, "--tls-key", missing), (missing,)),
        "cert not pem": (("--tls-cert", str(pki["not-pem"]), "--tls-key", key),
                         (str(pki["not-pem"]),)),
        "cert fake pem": (("--tls-cert", str(pki["fake"]), "--tls-key", key),
                          (str(pki["fake"]),)),
        "key not pem": (("--tls-cert", cert, "--tls-key", str(pki["not-pem"])),
                        (str(pki["not-pem"]),)),
        "key of another cert": (("--tls-cert", cert, "--tls-key", str(pki["stray.key"])),
                                (str(pki["stray.key"]), cert)),
        "cert is a directory": (("--tls-cert", str(tmp_path), "--tls-key", key),
                                (str(tmp_path),)),
        "cert without key": (("--tls-cert", cert), ()),
    }[case]
    out = run_cli(*REFEREE, *args)
    assert_clean_error(out, *quoted)
    if case == "cert without key":
        assert "--tls-key" in out.stderr


@pytest.mark.parametrize("case", ["missing", "not pem", "directory"])
def test_bot_refuses_bad_ca_file(case: str, pki: dict[str, Path], tmp_path: Path) -> None:
    path = {"missing": str(tmp_path / "nowhere.pem"), "not pem": str(pki["not-pem"]),
            "directory": str(tmp_path)}[case]
    out = run_cli(str(BIN / "sueca-bot"), "run", "random", "--server", "127.0.0.1:1",
                  "--tls-ca", path)
    assert_clean_error(out, path)


def test_operator_side_refuses_bad_ca_file(pki: dict[str, Path],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker with a bad SUECA_TLS_CA fails with the path, before any connection."""
    clean_env(monkeypatch)
    monkeypatch.setenv("SUECA_TLS_CA", str(pki["not-pem"]))
    with pytest.raises(ValueError, match=repr(str(pki["not-pem"])).replace(".", r"\.")):
        control.list_bots("127.0.0.1:1")


# -- settings that must not quietly mean plaintext, and a CA rotated in place ---------------------

@pytest.mark.parametrize("value", ["2", "enabled", "y"])
def test_an_unknown_sueca_tls_value_is_refused_not_read_as_plaintext(value: str) -> None:
    from sueca.sdk.channels import CredentialsError, client_tls_from_env
    with pytest.raises(CredentialsError, match=f"SUECA_TLS='{value}' is not usable"):
        client_tls_from_env({"SUECA_TLS": value})
    for off in ("", "0", "off", "No"):
        assert not client_tls_from_env({"SUECA_TLS": off}).enabled


def test_a_server_name_without_tls_is_refused() -> None:
    """--tls-server-name alone can only mean TLS was meant: never send a token in clear."""
    from sueca.sdk.channels import CredentialsError, client_tls, client_tls_from_env
    with pytest.raises(CredentialsError, match="given without TLS"):
        client_tls(False, None, "referee.test")
    with pytest.raises(CredentialsError, match="given without TLS"):
        client_tls_from_env({"SUECA_TLS_SERVER_NAME": "referee.test"})
    out = run_cli(str(BIN / "sueca-bot"), "run", "random", "--server", "127.0.0.1:1",
                  "--tls-server-name", "referee.test")
    assert out.returncode == 2 and "given without TLS" in out.stderr, out.stderr


def test_a_ca_file_rewritten_in_place_is_read_again(pki: dict[str, Path], tmp_path: Path) -> None:
    from sueca.sdk.channels import CredentialsError, client_tls_from_env
    ca = tmp_path / "ca.pem"
    ca.write_bytes(pki["ca"].read_bytes())
    env = {"SUECA_TLS_CA": str(ca)}
    assert client_tls_from_env(env).enabled
    ca.write_text("not a certificate any more\n")
    with pytest.raises(CredentialsError, match="not a PEM file"):
        client_tls_from_env(env)
