"""Bad numbers on the league's command line: one line quoting the value, exit code 2, no stack
trace, and nothing written to Redis (the check happens while parsing, before any command)."""

from __future__ import annotations

import pytest
from kits.arena import arena_env, cli

BAD = [
    (["tournament", "run", "--bots", "random,heuristic", "--id", "bad-t", "--move-ms", "-5"],
     "--move-ms", "-5"),
    (["tournament", "run", "--bots", "random,heuristic", "--id", "bad-t", "--move-ms=0"],
     "--move-ms", "0"),
    (["tournament", "run", "--bots", "random,heuristic", "--id", "bad-t", "--bank-ms", "-1"],
     "--bank-ms", "-1"),
    (["tournament", "run", "--bots", "random,heuristic", "--id", "bad-t", "-k", "0"], "-k", "0"),
    (["tournament", "run", "--bots", "random,heuristic", "--id", "bad-t", "--timeout", "-2"],
     "--timeout", "-2"),
    (["tournament", "run", "--bots", "random,heuristic", "--id", "bad-t", "--requeue-after",
      "nan"], "--requeue-after", "nan"),
    (["matches", "--limit", "-3"], "--limit", "-3"),
    (["worker", "--concurrency", "0"], "--concurrency", "0"),
    (["worker", "--metrics-port", "70000"], "--metrics-port", "70000"),
    (["scheduler", "--once", "--target", "0"], "--target", "0"),
    (["scheduler", "--once", "--interval", "-1"], "--interval", "-1"),
    (["ratings", "rebuild", "--elo-k", "0"], "--elo-k", "0"),
    (["ratings", "exporter", "--metrics-port", "-9"], "--metrics-port", "-9"),
]


@pytest.mark.parametrize("argv, option, value", BAD, ids=[f"{a[0]} {o} {v}" for a, o, v in BAD])
def test_a_bad_number_is_one_clear_line_and_changes_nothing(store, redis_url, prefix, argv,
                                                            option, value):
    registry = store.bots
    for bot in ("random", "heuristic"):
        registry.add(bot)
    before = sorted(store.r.keys(prefix + "*"))
    out = cli(*argv, env=arena_env(redis_url, prefix), check=2, timeout=60)
    assert out.stderr.startswith(f"error: bad {option} '{value}': must be ")
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert out.stdout == ""
    assert sorted(store.r.keys(prefix + "*")) == before          # nothing queued or written


# commands that touch no Redis: self-play, the demo and the benchmarks
LOCAL_BAD = [
    (["selfplay", "--bots", "random,random", "--matches", "0"], "--matches", "0"),
    (["demo", "-k", "-1"], "-k", "-1"),
    (["demo", "--concurrency", "0"], "--concurrency", "0"),
    (["demo", "--timeout", "inf"], "--timeout", "inf"),
    (["bench", "engine", "--deals", "-10"], "--deals", "-10"),
    (["bench", "tournament", "--bots", "1"], "--bots", "1"),
    (["bench", "tournament", "--rounds", "0"], "--rounds", "0"),
    (["bench", "referee", "--concurrency", "0"], "--concurrency", "0"),
    (["bench", "referee", "--match-timeout", "0"], "--match-timeout", "0"),
    (["bench", "grpc-pingpong", "--seconds", "-1"], "--seconds", "-1"),
    (["bench", "grpc-pingpong", "--streams", "x"], "--streams", "x"),
    (["referee", "--insecure", "--port", "70000"], "--port", "70000"),
    (["referee", "--insecure", "--metrics-port", "-1"], "--metrics-port", "-1"),
]


@pytest.mark.parametrize("argv, option, value", LOCAL_BAD,
                         ids=[f"{a[0]} {o} {v}" for a, o, v in LOCAL_BAD])
def test_a_bad_number_stops_local_commands_before_they_start(argv, option, value) -> None:
    out = cli(*argv, check=2, timeout=60)
    assert out.stderr.startswith(f"error: bad {option} '{value}': must be ")
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert out.stdout == ""


@pytest.mark.parametrize("argv", [["worker"], ["scheduler", "--once"]], ids=["worker",
                                                                             "scheduler"])
@pytest.mark.parametrize("setting, says", [
    ({"SUECA_TLS_CA": "/nonexistent/ca.pem"}, "TLS CA file '/nonexistent/ca.pem' does not exist"),
    ({"SUECA_TLS": "maybe"}, "SUECA_TLS='maybe' is not usable: 1, true, yes or on for TLS; 0, "
                             "false, no, off or empty for plaintext"),
    ({"SUECA_OPERATOR_TOKEN": " "}, "SUECA_OPERATOR_TOKEN is empty"),
], ids=["ca", "tls", "token"])
def test_bad_operator_settings_stop_workers_and_schedulers_at_once(store, redis_url, prefix,
                                                                   argv, setting, says) -> None:
    """Not later, as a failed match per queued match (or an idle ladder)."""
    before = sorted(store.r.keys(prefix + "*"))
    out = cli(*argv, env=arena_env(redis_url, prefix, **setting), check=2, timeout=60)
    assert out.stderr == f"error: {says}\n"
    assert sorted(store.r.keys(prefix + "*")) == before


def test_redis_lost_in_mid_command_is_one_line_not_a_traceback(store, redis_url, monkeypatch,
                                                               capsys) -> None:
    """Start-up finds Redis; then it stops answering (simulated: the edge case, not the outage,
    which tests/arena/test_redis_outage.py plays for real)."""
    import redis

    from sueca.arena.cli import main
    from sueca.arena.store import Store

    def gone(*args: object, **kwargs: object) -> None:
        raise redis.TimeoutError("Timeout reading from socket")

    monkeypatch.setattr(Store, "match_page", gone)  # what `matches` reads first
    assert main(["matches", "--redis", redis_url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Redis stopped answering: Timeout reading from socket")
    assert err.count("\n") == 1
