"""A league worker reaches a referee whose operator API has its own port: the referee
(``--operator-port``) publishes that address in Redis, the worker runs matches there with the
operator token, and the bots play through the public port. A worker told the public port
instead fails the match with a reason that names the operator port.
"""

from __future__ import annotations

import secrets
import subprocess
from collections.abc import Iterator

import pytest
from kits.arena import SUECA_ARENA
from kits.wait import wait_for

from sueca.arena.redisproc import free_port
from sueca.arena.tournaments import new_spec, run_tournament
from sueca.engine import replay

pytestmark = pytest.mark.slow

TOKEN = "op-" + secrets.token_hex(16)




@pytest.fixture(scope="module")
def split_referee(league, tmp_path_factory) -> Iterator[dict]:
    """``sueca-arena referee --operator-port`` in the league's Redis, bots random and heuristic
    connected to its public port."""
    logs = tmp_path_factory.mktemp("opport")
    port, operator_port = free_port(), free_port()
    env = league.env(SUECA_OPERATOR_TOKEN=TOKEN, SUECA_OPERATOR_PORT=str(operator_port))
    procs = [subprocess.Popen(
        [SUECA_ARENA, "referee", "--redis", league.url, "--port", str(port),
         "--metrics-port", "0", "--drain-seconds", "1"], env=env,
        stdout=open(logs / "referee.log", "ab"), stderr=subprocess.STDOUT)]
    try:
        advertised = f"127.0.0.1:{operator_port}"
        wait_for(lambda: advertised in league.store.referees(), 30, "the referee's heartbeat")
        assert f"127.0.0.1:{port}" not in league.store.referees()
        for bot in ("random", "heuristic"):
            bot_env = {k: v for k, v in env.items() if k != "SUECA_OPERATOR_TOKEN"}
            bot_env["SUECA_TOKEN"] = league.tokens[bot]
            procs.append(subprocess.Popen(
                [SUECA_ARENA.replace("sueca-arena", "sueca-bot"), "run", bot, "--server",
                 f"127.0.0.1:{port}", "--capacity", "4"], env=bot_env,
                stdout=open(logs / f"{bot}.log", "ab"), stderr=subprocess.STDOUT))

        def both_connected() -> bool:
            bots = league.store.r.hgetall(league.store.keys.referee_bots(advertised))
            return {b"random", b"heuristic"} <= set(bots)
        wait_for(both_connected, 30, "both bots on the public port")
        yield {"port": port, "operator_port": operator_port, "logs": logs}
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(20)


def test_a_worker_runs_matches_through_the_operator_port(league, start_worker, split_referee):
    start_worker("-c", "2", SUECA_OPERATOR_TOKEN=TOKEN, SUECA_PLACE_WAIT="10")
    report = run_tournament(league.store, new_spec(["random", "heuristic"], 2, duplicate=True),
                            tid="opport",
                            quiet=True, timeout=90)
    assert report["recorded"] == 2 and report["failed"] == [], report
    for mid in league.store.tournament_matches("opport"):
        m = league.store.match(mid)
        assert m["status"] == "done", m
        assert replay.verify(league.store.replay(mid)) == []


def test_a_worker_told_the_public_port_says_where_the_operator_api_is(split_referee,
                                                                       monkeypatch):
    """The worker's placement (run in this process, as a worker's pool runs it) against the
    public port alone (one replica: RunMatch; two: placement by ListBots): a Transient that
    names the operator port, so the match is retried once the settings are fixed."""
    from sueca.arena.match_job import Transient, run_on_referee
    monkeypatch.setenv("SUECA_OPERATOR_TOKEN", TOKEN)
    public = f"127.0.0.1:{split_referee['port']}"
    for replicas in ([public], [public, f"127.0.0.1:{free_port()}"]):  # RunMatch; placement
        with pytest.raises(Transient) as err:  # retried later, not failed: a settings problem
            run_on_referee({"bots": ["random", "heuristic"] * 2, "seed": 1}, replicas,
                           timeout=10, wait=0.3)
        assert f"{public}: no operator API there (UNIMPLEMENTED" in str(err.value) or \
            f"referee {public} has no operator API there" in str(err.value), err.value
        assert "--operator-port" in str(err.value)
