"""The league end to end through the command line: real Redis, a real referee, bots connected
over gRPC (``sueca-bot run``), a real Celery worker — every command a subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
from kits.arena import SUECA_ARENA, children, cli
from kits.wait import wait_for

from sueca.arena.redisproc import free_port
from sueca.engine import replay

pytestmark = pytest.mark.slow


def _json(out):
    return json.loads(out.stdout)


def test_bots_add_prints_the_token_once(referee_arena):
    env = referee_arena.cli_env
    token = cli("bots", "add", "newbot", env=env).stdout.strip()
    assert token.startswith("newbot.") and len(token) > 30
    again = cli("bots", "add", "newbot", env=env, check=2)
    assert "already exists" in again.stderr and token not in again.stdout + again.stderr
    listed = _json(cli("bots", "list", "--json", env=env))
    assert "newbot" in [b["bot"] for b in listed]
    assert token not in json.dumps(listed)                      # never shown again
    assert referee_arena.store.r.hget(referee_arena.store.keys.bot("newbot"), "hash") != token
    cli("bots", "remove", "newbot", env=env)
    assert cli("bots", "remove", "newbot", env=env, check=2).stderr.startswith("error: unknown bot")


def test_tournament_runs_through_the_referee(referee_arena):
    env = referee_arena.cli_env
    store = referee_arena.store
    out = _json(cli("tournament", "run", "--bots", "random,heuristic,reckless",
                    "--matches-per-pair", "2", "--duplicate", "--id", "cli-t", "--json", env=env))
    assert out["matches"] == 6 and out["recorded"] == 6 and out["failed"] == []
    rows = {r["bot"]: r for r in out["standings"]}
    assert set(rows) == {"random", "heuristic", "reckless"}
    for r in rows.values():
        assert r["units"] == 2 and r["matches"] == 4               # 2 duplicate pairs each
        assert r["elo_pm"] > 0 and r["mu_pm"] > 0
    mids = store.tournament_matches("cli-t")
    logged = [r for _, r in store.results() if r.get("tournament") == "cli-t"]
    assert sorted(r["match_id"] for r in logged) == sorted(mids)
    for r in logged:
        assert r["referee"] == referee_arena.referee
        rec = store.replay(r["match_id"])
        assert replay.verify(rec) == [] and rec["seats"] == r["seats"]
    # the table, not JSON: rating with its ± and the games
    table = cli("tournament", "show", "cli-t", env=env).stdout
    assert "heuristic" in table and "±" in table


def test_rerunning_a_tournament_replays_nothing(referee_arena):
    env = referee_arena.cli_env
    store = referee_arena.store
    cli("tournament", "run", "--bots", "random,heuristic", "-k", "2", "--id", "cli-r", env=env)
    before = store.results_count()
    out = _json(cli("tournament", "run", "--bots", "random,heuristic", "-k", "2", "--id", "cli-r",
                    "--json", env=env))
    # nothing played again: no new result, no new attempt (what matters, rather than how long
    # the re-run took on a shared machine)
    assert out["recorded"] == 2 and store.results_count() == before
    assert [store.match(m)["attempts"] for m in store.tournament_matches("cli-r")] == [1, 1]
    clash = cli("tournament", "run", "--bots", "random,heuristic", "-k", "4", "--id", "cli-r",
                env=env, check=2)
    assert "already exists with a different specification" in clash.stderr


def test_an_interrupted_tournament_is_finished_by_its_id_alone(referee_arena):
    """The hint says `--id ID` finishes a tournament: with no other option it resumes the stored
    spec (here duplicate, a variant and a move limit that the re-run does not repeat)."""
    env = referee_arena.cli_env
    store = referee_arena.store
    cut = cli("tournament", "run", "--bots", "slow,slow2", "-k", "2", "--duplicate",
              "--variant", "target=8", "--move-ms", "5000", "--id", "cli-resume",
              "--timeout", "0.5", env=env, check=2)
    assert "re-run with --id cli-resume" in cut.stderr and "Traceback" not in cut.stderr
    out = _json(cli("tournament", "run", "--id", "cli-resume", "--json", env=env))
    assert out["matches"] == 2 and out["recorded"] == 2 and out["failed"] == []
    assert out["spec"]["duplicate"] is True and out["spec"]["variant"]["target"] == 8
    assert [store.match(m)["attempts"] for m in store.tournament_matches("cli-resume")] == [1, 1]
    # some options but not all: only what differs, old and new, and how to resume
    clash = cli("tournament", "run", "--bots", "slow,slow2", "-k", "2", "--id", "cli-resume",
                env=env, check=2)
    err = clash.stderr.strip()
    assert err.count("\n") == 0 and len(err) < 300 and "Traceback" not in err, err
    assert "duplicate: True stored, False asked" in err
    assert "variant.target: 8 stored, 4 asked" in err and "limits.move_ms: 5000 stored" in err
    assert "'tie'" not in err and "matches_per_pair" not in err and "bots" not in err
    assert "`--id cli-resume` alone" in err


@pytest.mark.parametrize(("argv", "says"), [
    ([], "give --bots NAME,NAME,... to create a tournament, or `--id ID` alone"),
    (["-k", "4", "--id", "x"], "--matches-per-pair without --bots"),
    (["--id", "never-made"], "unknown tournament 'never-made': give --bots"),
])
def test_tournament_run_without_bots_says_what_to_give(referee_arena, argv, says):
    out = cli("tournament", "run", *argv, env=referee_arena.cli_env, check=2)
    assert out.stderr.startswith("error: ") and says in out.stderr, out.stderr
    assert out.stderr.count("\n") == 1


def test_a_timeout_is_a_fault_and_a_loss_for_that_bot(referee_arena):
    env = referee_arena.cli_env
    out = _json(cli("tournament", "run", "--bots", "random,sleepy", "-k", "2", "--id", "cli-f",
                    "--move-ms", "250", "--bank-ms", "250", "--json", env=env))  # sleepy: 1 s
    rows = {r["bot"]: r for r in out["standings"]}
    assert rows["sleepy"]["faults"] == 2 and rows["sleepy"]["points"] == 0
    assert rows["random"]["points"] == 2 and rows["random"]["faults"] == 0
    results = [r for _, r in referee_arena.store.results() if r.get("tournament") == "cli-f"]
    assert {(r["end"], r["fault_bot"]) for r in results} == {("timeout", "sleepy")}


def test_leaderboard_matches_and_rebuild(referee_arena):
    env = referee_arena.cli_env
    cli("tournament", "run", "--bots", "random,heuristic", "-k", "2", "--id", "cli-l", env=env)
    board = _json(cli("leaderboard", "--json", env=env))
    assert board and [r["rank"] for r in board] == list(range(1, len(board) + 1))
    for r in board:
        assert {"elo", "elo_pm", "mu", "mu_pm", "games"} <= set(r) and r["games"] > 0
    text = cli("leaderboard", env=env).stdout
    assert "±" in text and "rated" in text
    matches = _json(cli("matches", "--tournament", "cli-l", "--json", env=env))
    assert [m["status"] for m in matches] == ["done", "done"]
    shown = cli("matches", "show", matches[0]["id"], env=env).stdout
    assert shown.strip()
    assert cli("matches", "show", "no-such-match", env=env, check=2).stderr.startswith(
        "error: unknown match")
    rebuilt = cli("ratings", "rebuild", env=env).stdout
    assert "identical to the live ratings" in rebuilt
    check = _json(cli("ratings", "rebuild", "--check", "--json", env=env))
    assert check["identical"] is True and check["max_diff"] == 0.0
    live = {r["bot"]: (r["elo"], r["mu"], r["sigma"], r["games"]) for r in board}
    again = {r["bot"]: (r["elo"], r["mu"], r["sigma"], r["games"])
             for r in _json(cli("leaderboard", "--json", env=env))}
    assert again == live                                          # rebuild changed nothing


def test_ladder_scheduler_keeps_matches_running(referee_arena):
    env = referee_arena.cli_env
    store = referee_arena.store
    before = store.results_count()
    # sleepy (1 s a move) is left out: the ladder may pair anyone, and its match would hold a
    # slot for minutes
    cli("scheduler", "--target", "2", "--once", "--bots", "random,heuristic,reckless,slow,slow2",
        env=env)
    running = [m.decode() for m in store.r.smembers(store.keys.ladder_running())]
    assert len(running) == 2
    wait_for(lambda: all(store.is_recorded(m) for m in running), 60,
             "the ladder's two matches recorded", interval=0.1)
    assert store.results_count() == before + 2
    for mid in running:
        assert set(store.match(mid)["spec"]["bots"]) <= {"random", "heuristic", "reckless", "slow",
                                                         "slow2", "sleepy"}


def test_worker_pool_killed_mid_match_with_a_real_referee(referee_arena):
    env = referee_arena.cli_env
    store = referee_arena.store
    worker = next(p for p in referee_arena.procs if p.name == "worker0")
    run = subprocess.Popen(
        [SUECA_ARENA, "tournament", "run", "--bots", "slow,slow2", "-k", "1", "--id", "cli-kill",
         "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def started() -> str | None:
            mids = store.tournament_matches("cli-kill")
            return mids[0] if mids and store.match(mids[0])["status"] == "running" else None

        mid = wait_for(started, 30, "the match to start")
        time.sleep(0.5)  # a sleep on purpose: a few moves in (they show nowhere to poll)
        pool = children(worker.popen.pid)
        assert pool
        for c in pool:
            os.kill(c, signal.SIGKILL)            # every pool process: the match dies with them
        out, err = run.communicate(timeout=90)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err
    report = json.loads(out)
    assert report["recorded"] == 1
    m = store.match(mid)
    assert m["status"] == "done" and m["attempts"] >= 2
    assert len([r for _, r in store.results() if r["match_id"] == mid]) == 1


def test_matches_go_to_the_replica_where_the_bots_are(referee_arena):
    """A second replica announces itself in Redis (no bots on it): workers now list the bots on
    both and must place every match on the first."""
    store = referee_arena.store
    port = free_port()
    other = subprocess.Popen([SUECA_ARENA, "referee", "--port", str(port), "--metrics-port", "0",
                              "--redis", referee_arena.redis_url, "--log-level", "warning"],
                             env=referee_arena.cli_env, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: f"127.0.0.1:{port}" in store.referees(), 30,
                 "the second replica announced in Redis", interval=0.1)
        out = _json(cli("tournament", "run", "--bots", "random,heuristic", "-k", "4", "--id",
                        "cli-place", "--json", env=referee_arena.cli_env))
        assert out["recorded"] == 4
        results = [r for _, r in store.results() if r.get("tournament") == "cli-place"]
        assert {r["referee"] for r in results} == {referee_arena.referee}
        assert {r["replicas"] for r in results} == {2}          # both were asked
    finally:
        other.terminate()
        other.wait(15)


@pytest.mark.parametrize("argv", [
    ["bots", "list"], ["bots", "add", "x"], ["tournament", "run", "--bots", "a,b"],
    ["tournament", "show", "x"], ["leaderboard"], ["matches"], ["ratings", "rebuild"],
    ["worker"], ["scheduler", "--once"],
])
def test_unreachable_redis_is_a_clear_error(argv):
    url = f"redis://127.0.0.1:{free_port()}/0"
    out = cli(*argv, "--redis", url, check=2, timeout=30)
    assert out.stderr.startswith(f"error: cannot reach Redis at {url}")
    assert "Traceback" not in out.stderr


def test_user_mistakes_are_clear_errors(referee_arena):
    env = referee_arena.cli_env
    bad = cli("tournament", "run", "--bots", "random,nobody", env=env, check=2)
    assert "unknown bot(s) 'nobody'" in bad.stderr
    bad = cli("tournament", "run", "--bots", "random,heuristic", "--variant", "tie=maybe",
              env=env, check=2)
    assert "bad value 'maybe' for variant 'tie'" in bad.stderr
    bad = cli("tournament", "run", "--bots", "random,heuristic", "-k", "3", "--duplicate",
              env=env, check=2)
    assert "must be even" in bad.stderr


def test_children_keep_secrets_out_of_argv_and_bots_get_only_their_token(referee_arena) -> None:
    """The URL (it may carry a password) travels in SUECA_REDIS_URL: argv is public (ps)."""
    from pathlib import Path
    procs = [p for p in referee_arena.procs if p.alive()]
    assert any(p.name == "referee" for p in procs) and any(p.name.startswith("worker")
                                                         for p in procs)
    tokens = [t.encode() for t in referee_arena.tokens.values()]
    for p in procs:
        argv = Path(f"/proc/{p.popen.pid}/cmdline").read_bytes().split(b"\0")
        assert not any(b"redis://" in a or b"unix://" in a for a in argv), (p.name, argv)
        assert not any(t in a for t in tokens for a in argv), (p.name, "a bot token in argv")
        if p.name.startswith("bot "):  # a bot holds its own token, nothing of the operators'
            env = dict(kv.split(b"=", 1) for kv in
                       Path(f"/proc/{p.popen.pid}/environ").read_bytes().split(b"\0") if kv)
            assert env[b"SUECA_TOKEN"] in tokens
            assert b"SUECA_REDIS_URL" not in env and b"SUECA_OPERATOR_TOKEN" not in env
