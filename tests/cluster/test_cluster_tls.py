"""The league across hosts over TLS (tests/kits/cluster.py with ``tls=True``): every referee
serves TLS with a certificate of a throwaway CA whose names are DNS names, never its IP
(kits.cluster_tls); the bots dial both referees by address with the server name set, the
workers and the scheduler dial the referees' operator ports the same way, with the operator
token.

A ladder and a duplicate tournament (``sueca-arena tournament run`` from the scheduler host)
are played at once: both replicas used, every match ended by the rules, each recorded once,
and each match's record naming the replica that played it, as its result does. The names are
checked: a bot dialling a referee with another host's name gets no session, nor does a
plaintext one. ``sueca-arena loadtest`` loads a bot of the bot host through both replicas'
house bots, its result split by referee.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from kits.cluster import ARENA, BOT, RULES_ENDS, League, league_fixture
from kits.cluster_tls import Pki
from kits.wait import wait_for

from sueca.arena.local_arena import register_in

TOURNAMENT = "tls-dup"


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[League]:
    yield from league_fixture(tmp_path_factory, tls=True, house_bots="random")


def test_a_ladder_and_a_duplicate_tournament_at_once_over_tls(league: League) -> None:
    since = len(league.results())
    at = time.monotonic()
    run = league.sched.call([*ARENA, "tournament", "run", "--bots", "alice,bob,dave",
                             "--duplicate", "-k", "4", "--id", TOURNAMENT, "--timeout", "150",
                             "--json"], league.env, timeout=180)
    took = time.monotonic() - at
    assert run.returncode == 0, run.stderr[-3000:] + league.cluster.tail_logs()
    summary = json.loads(run.stdout)
    mids = league.store.tournament_matches(TOURNAMENT)
    played = league.results()[since:]
    ids = Counter(r["match_id"] for r in league.results())
    tournament = [r for r in played if r["match_id"] in set(mids)]
    ladder = [r for r in played if r["match_id"] not in set(mids)]
    by_referee = Counter(r["referee"] for r in played)
    ends = Counter(r["end"] for r in played)
    print(f"\nover TLS: tournament {TOURNAMENT} {len(tournament)} matches in {took:.1f} s "
          f"beside {len(ladder)} ladder matches; by referee {dict(by_referee)}; "
          f"ends {dict(ends)}; recorded twice {sum(n > 1 for n in ids.values())}")
    assert summary["recorded"] == len(mids) == len(tournament) and summary["failed"] == []
    assert ladder, "the ladder played on while the tournament ran"
    assert set(ends) <= set(RULES_ENDS), ends
    assert {r["end"] for r in tournament} == {"normal"}  # no reckless bot in it
    assert set(by_referee) == {f"{h.addr}:50052" for h in (league.ref_a, league.ref_b)}
    assert all(n == 1 for n in ids.values())
    for r in played:  # the match's record names the replica its result names
        assert (league.store.match(r["match_id"]) or {}).get("referee") == r["referee"], r


def test_a_referee_is_dialled_by_the_name_on_its_certificate(league: League) -> None:
    """The per-host name passes, another host's name is refused: the health probe, from the
    bot host, through the public port."""
    pki = league.pki
    assert pki is not None
    addr = f"{league.ref_a.addr}:50051"
    env = {"PATH": league.env["PATH"], "HOME": league.env["HOME"]}
    def probe(name: str) -> tuple[int, str]:
        got = league.bots.call([*ARENA, "health", addr, "--timeout", "5", "--tls-ca",
                                str(pki.ca), "--tls-server-name", name], env, timeout=60)
        return got.returncode, (got.stdout + got.stderr).strip()
    own, other = probe(Pki.name_of("ref-a")), probe(Pki.name_of("ref-b"))
    print(f"\nref-a by its own name: {own}; by ref-b's: {other}")
    assert own == (0, f"referee {addr}: SERVING")
    assert other[0] == 1 and other[1].startswith(f"referee {addr} unreachable: UNAVAILABLE")


def test_a_wrong_name_or_plaintext_bot_gets_no_session(league: League) -> None:
    """Three bots named eve, whom no referee knows, dial ref-a: with the right name the TLS
    handshake passes and the referee itself refuses her (its answer to her hello); with another
    host's name, or in plaintext, she never gets that far: a one-line refusal in her log, each
    retry, and nothing else."""
    pki = league.pki
    assert pki is not None
    addr = f"{league.ref_a.addr}:50051"
    env = {"PATH": league.env["PATH"], "HOME": league.env["HOME"], "SUECA_TOKEN": "eve.nope"}
    ways = {"right": ["--tls-ca", str(pki.ca), "--tls-server-name", Pki.name_of("ref-a")],
            "wrong": ["--tls-ca", str(pki.ca), "--tls-server-name", Pki.name_of("ref-b")],
            "plain": []}
    bots = {way: league.bots.run(f"eve-{way}", [*BOT, "run", "random", "--server", addr,
                                                "--name", "eve", "--max-backoff", "1",
                                                "--log-level", "info", *tls], env)
            for way, tls in ways.items()}
    try:
        wait_for(lambda: "refused bot 'eve'" in bots["right"].text(), 30,
                 "the referee to refuse eve's hello", detail=lambda: bots["right"].text())
        for way in ("wrong", "plain"):
            bot = bots[way]
            wait_for(lambda b=bot: b.text().count(f"cannot connect to {addr}") >= 2, 30,
                     f"the {way} bot to be refused twice", detail=bot.text)
            log = bot.text()
            lines = [line for line in log.splitlines() if line.strip()]
            print(f"\n{way} name: {lines[-1]}")
            assert "refused bot" not in log and "connected to" not in log, log
            assert "Traceback" not in log and "UNAVAILABLE" in lines[-1], log
            assert all(f"cannot connect to {addr}" in line or "starting" in line.lower()
                       for line in lines), log
    finally:
        for bot in bots.values():
            bot.kill()


LOADTEST_GAMES = 32


def test_loadtest_through_both_referees_is_split_by_referee(league: League,
                                                           tmp_path: Path) -> None:
    """The target on the bot host (one process, a session with each replica), the house bots
    in both referees, ``loadtest`` from the scheduler host sending the matches to each in
    turn; the ladder plays on beside it (and may seat the target too: hence the room in its
    capacity, and the matches in flight on one referee may outnumber those on the other)."""
    token = register_in(league.store, {"lt": "random"})["lt"]
    servers = ",".join(f"{h.addr}:50051" for h in (league.ref_a, league.ref_b))
    ops = [f"{h.addr}:50052" for h in (league.ref_a, league.ref_b)]
    target = league.bots.run("lt", [*BOT, "run", "random", "--server", servers, "--name", "lt",
                                    "--capacity", str(2 * LOADTEST_GAMES), "--log-level", "warning",
                                    *league.dial_tls()],
                             {"PATH": league.env["PATH"], "HOME": league.env["HOME"],
                              "SUECA_TOKEN": token})
    try:
        wait_for(lambda: all("lt" in league.store.bots_on([a]) for a in ops), 30,
                 "the target on both referees", detail=target.text)
        run = league.sched.call([*ARENA, "loadtest", "--bot", "lt", "--server", ",".join(ops),
                                 "--games", str(LOADTEST_GAMES), "--duration", "25",
                                 "--house", "random", "--report", str(tmp_path / "lt.html"),
                                 "--json"], league.env, timeout=150)
    finally:
        target.kill()
    assert run.returncode == 0, run.stderr[-3000:] + run.stdout[-2000:]
    r = json.loads(run.stdout.strip().splitlines()[-1])
    split = r["by_referee"]
    print(f"\nloadtest over TLS through both referees: {r['matches_finished']} matches in "
          f"{r['seconds']} s, target p50/p99 {r['p50_ms']} / {r['p99_ms']} ms, "
          f"faults {r['faults']}, timeouts {r['timeouts']}; by referee "
          + "; ".join(f"{a}: {n['matches_finished']} matches, p50/p99 {n['p50_ms']} / "
                      f"{n['p99_ms']} ms" for a, n in split.items()))
    assert set(split) == set(ops), split
    assert sum(n["matches_finished"] for n in split.values()) == r["matches_finished"] >= 200
    assert all(n["matches_finished"] >= r["matches_finished"] // 2 - LOADTEST_GAMES
               for n in split.values()), split
    assert (r["faults"], r["timeouts"]) == (0, 0)
    page = (tmp_path / "lt.html").read_text()
    assert "<h2>By referee</h2>" in page and all(a in page for a in ops)
