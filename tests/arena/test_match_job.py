"""A retried match never deals again the cards an earlier attempt may have shown its bots, and a
duplicate pair whose half was retried on a fresh seed is scored as two games, not one."""

from __future__ import annotations

from sueca.arena.match_job import reseeded
from sueca.sdk.bots import RandomBot
from sueca.sdk.local import play_local


def test_first_attempt_plays_the_scheduled_seed() -> None:
    spec = {"match_id": "m", "seed": "123", "bots": ["a", "b", "a", "b"]}
    assert reseeded(spec, 1) is spec


def test_each_retry_gets_its_own_reproducible_seed_and_other_decks() -> None:
    spec = {"match_id": "m", "seed": "123", "bots": ["a", "b", "a", "b"]}
    second, third = reseeded(spec, 2), reseeded(spec, 3)
    assert second["seed"] != spec["seed"] and third["seed"] != second["seed"]
    assert reseeded(spec, 2) == second  # the same attempt number gives the same seed
    assert spec["seed"] == "123" and second["bots"] == spec["bots"]
    decks = [play_local([RandomBot] * 4, seed=int(s["seed"])).deals[0].deck
             for s in (spec, second)]
    assert decks[0] != decks[1]


def _play_pair(store, tid: str, retry_second: bool) -> list[dict]:
    """Play the two halves of one duplicate pair with the local runner, as a worker would; with
    ``retry_second`` an attempt of the second half died first (so it is played on attempt 2)."""
    from sueca.arena.match_job import play_and_record
    from sueca.arena.schedule import round_robin, tournament_spec
    spec = tournament_spec(["random", "heuristic"], 2, True, {})
    store.create_tournament(tid, spec, round_robin)
    first, second = store.tournament_matches(tid)
    play_and_record(store, first, mode="local")
    if retry_second:
        assert store.start_attempt(second)[0] == 1   # that attempt was lost with its worker
    assert play_and_record(store, second, mode="local")["attempt"] == (2 if retry_second else 1)
    return [store.result_of(m) for m in (first, second)]


def test_a_pair_played_on_one_seed_is_rated_as_one_game(store) -> None:
    from sueca.arena.store.ratings import load, rebuild
    results = _play_pair(store, "pair-ok", retry_second=False)
    scheduled = store.match(results[0]["match_id"])["spec"]["seed"]
    assert [r["seed"] for r in results] == [scheduled, scheduled]
    assert {b: r.games for b, r in load(store).items()} == {"random": 1, "heuristic": 1}
    assert rebuild(store, write=False)["max_diff"] == 0.0


def test_a_pair_whose_half_was_reseeded_is_rated_as_two_games(store) -> None:
    """The retried half is dealt other decks: the log says so, and the pair is two games."""
    from sueca.arena.store.ratings import load, rebuild
    from sueca.arena.tournaments import tournament_report
    results = _play_pair(store, "pair-retried", retry_second=True)
    second = store.match(results[1]["match_id"])
    assert results[0]["seed"] == second["spec"]["seed"]                 # as scheduled
    assert results[1]["seed"] == reseeded(second["spec"], 2)["seed"]    # the seed played
    assert results[1]["seed"] != results[0]["seed"]
    assert str(store.replay(second["id"])["seed"]) == results[1]["seed"]
    assert {b: r.games for b, r in load(store).items()} == {"random": 2, "heuristic": 2}
    assert rebuild(store, write=False)["max_diff"] == 0.0              # rebuild == live
    table = {r["bot"]: r for r in tournament_report(store, "pair-retried")["standings"]}
    assert table["random"]["units"] == 2 and table["random"]["incomplete_pairs"] == 0


def test_the_local_runner_reads_a_seed_as_the_referee_does() -> None:
    """A spec's seed is text; the referee reads "42" as the int 42 (sueca.codec.parse_seed),
    and so must the local runner, or the two would deal different decks from one spec."""
    from sueca.arena.match_job import run_local
    from sueca.codec import parse_seed
    from sueca.engine import Match
    out = run_local({"bots": ["random"] * 4, "seed": "42", "match_id": "m", "first_dealer": 1})
    dealt = Match(seed=parse_seed("42"), first_dealer=1).deals[0].deck
    assert out["replay"]["deals"][0]["deck"] == [str(c) for c in dealt]
    assert Match(seed="42", first_dealer=1).deals[0].deck != dealt  # the text would differ


def test_a_refused_operator_token_is_retried_and_named_the_same_with_one_or_many_replicas(
        monkeypatch, tmp_path) -> None:
    """A wrong SUECA_OPERATOR_TOKEN on a worker is its configuration, not the match: Transient
    (retried with back-off, failed with the reason after the last attempt) whether placement
    asked ListBots (several replicas) or RunMatch was called straight (one)."""
    import os
    import socket
    import subprocess

    import pytest
    from kits.arena import SUECA_ARENA
    from kits.wait import wait_for

    from sueca.arena.match_job import Transient, run_on_referee
    from sueca.arena.redisproc import free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUECA_")}
    proc = subprocess.Popen([SUECA_ARENA, "referee", "--insecure", "--port", str(port),
                             "--metrics-port", "0", "--log-level", "error"],
                            env={**env, "SUECA_OPERATOR_TOKEN": "the-right-one"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                 or True, 30, "the referee to listen", interval=0.1,
                 detail=lambda: f"referee exit {proc.poll()}")
        addr = f"127.0.0.1:{port}"
        monkeypatch.setenv("SUECA_OPERATOR_TOKEN", "a-wrong-one")
        spec = {"match_id": "m", "seed": "1", "bots": ["a", "b", "a", "b"]}
        for addresses in ([addr], [addr, addr]):
            with pytest.raises(Transient) as err:
                run_on_referee(spec, addresses, timeout=10, wait=0.5)
            assert "refused our operator token (UNAUTHENTICATED; check SUECA_OPERATOR_TOKEN" \
                in str(err.value), str(err.value)
            assert "a-wrong-one" not in str(err.value) and "the-right-one" not in str(err.value)
    finally:
        proc.terminate()
        proc.wait(10)


def test_placement_names_a_broken_tls_setting_at_once() -> None:
    """A CA file that broke after start-up is this worker's problem, not the replicas': said
    with its path at once, not after waiting for capacity as 'unreachable'."""
    import time

    import pytest

    from sueca.arena.match_job import Transient, place
    from sueca.sdk.channels import CredentialsError

    def list_bots(addr: str) -> list:
        raise CredentialsError("TLS CA file '/gone/ca.pem' does not exist")

    started = time.monotonic()
    with pytest.raises(Transient, match="this worker's TLS settings: TLS CA file '/gone/ca.pem'"):
        place(["a", "b", "a", "b"], ["r1:1", "r2:2"], list_bots, wait=5.0)
    assert time.monotonic() - started < 1.0


def test_the_scheduler_logs_an_unreachable_replica_once_not_every_tick(monkeypatch,
                                                                        caplog) -> None:
    import logging

    from sueca.arena.redisproc import free_port
    from sueca.arena.schedule import connected_bots
    monkeypatch.setenv("SUECA_REFEREES", f"127.0.0.1:{free_port()}")
    with caplog.at_level(logging.WARNING, logger="sueca.scheduler"):
        for _ in range(3):
            assert connected_bots(None, None) == {}
    assert len([r for r in caplog.records if r.name == "sueca.scheduler"]) == 1


def test_transient_errors_say_what_was_missing_by_kind(store) -> None:
    """The retries metric's label is the error's kind, not a word found in its message."""
    import pytest

    from sueca.arena.match_job import Transient, TransientKind, place, play_and_record

    busy = [{"bot": "a", "sessions": 1, "capacity": 2, "free": 0, "referee": "r"}]
    with pytest.raises(Transient) as err:
        place(["a", "b", "a", "b"], ["r1:1", "r2:1"], lambda addr: busy, wait=0)
    assert err.value.kind is TransientKind.CAPACITY and "b not connected" in str(err.value)

    def unreachable(addr: str) -> list:
        raise ConnectionError("down")
    with pytest.raises(Transient) as err:  # the same words, whatever the replicas said
        place(["a", "b", "a", "b"], ["r1:1", "r2:1"], unreachable, wait=0)
    assert err.value.kind is TransientKind.CAPACITY and "unreachable" in str(err.value)

    store.create_match("tk-1", {"match_id": "tk-1", "bots": ["random"] * 4, "seed": "1"})
    store.r.connection_pool.disconnect()
    store.r.connection_pool.connection_kwargs["port"] = 1  # this process's Redis is gone
    with pytest.raises(Transient) as err:
        play_and_record(store, "tk-1", mode="local")
    assert err.value.kind is TransientKind.REDIS, str(err.value)
