"""Recovery without a human: leases, the reaper, and a worker SIGKILLed mid-match.

Real Redis throughout; the last test runs real ``sueca-arena worker`` processes and a real
``sueca-arena tournament run`` (the process that re-queues while it waits), with Celery's
visibility timeout left at its 600 s default — the re-run must come from the lease lapsing.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest
from kits.arena import ROOT, SUECA_ARENA
from kits.wait import wait_for

from sueca.arena.recovery import Reaper
from sueca.arena.store import LeaseHeld


def _match(store, mid="m1"):
    store.create_match(mid, {"match_id": mid, "bots": ["random", "heuristic"] * 2, "seed": "7",
                             "first_dealer": 0, "variant": {}})
    return mid


def test_a_lease_keeps_a_second_attempt_out_until_it_lapses(store):
    mid = _match(store)
    assert store.claim(mid)
    assert store.start_attempt(mid, owner="hostA/1/t1", lease=0.5)[0] == 1
    with pytest.raises(LeaseHeld, match="hostA/1/t1"):
        store.start_attempt(mid, owner="hostB/2/t1")
    assert store.match(mid)["attempts"] == 1                    # the refusal counted nothing
    assert store.renew_lease(mid, "hostA/1/t1", 0.5)            # the owner's heartbeat
    assert not store.renew_lease(mid, "hostB/2/t1")             # nobody else's
    wait_for(lambda: not store.r.exists(store.keys.lease(mid)), 10,  # the owner died
             "hostA's 0.5 s lease to lapse")
    assert store.start_attempt(mid, owner="hostB/2/t1")[0] == 2
    assert not store.release_lease(mid, "hostA/1/t1")           # only the owner ends it
    store.record_result(mid, {"match_id": mid, "end": "normal"})
    assert not store.r.exists(store.keys.lease(mid))
    assert store.inflight() == []


def test_the_reaper_requeues_a_match_whose_owner_died_and_only_after_confirming(store):
    mid = _match(store)
    assert store.claim(mid)
    assert store.inflight() == [mid]
    store.start_attempt(mid, owner="dead/1/t", lease=0.2)
    sent: list[list[str]] = []
    reaper = Reaper(store, sent.append, confirm=0.5)
    wait_for(lambda: not store.r.exists(store.keys.lease(mid)), 10, "the dead owner's lease to lapse")
    first_seen = time.monotonic()
    first = reaper.sweep()
    assert first.stale == [mid] and sent == []                   # seen once: not yet
    second = wait_for(lambda: (s := reaper.sweep()).requeued and s, 10,
                      "the reaper to re-queue the lost match")
    assert time.monotonic() - first_seen >= 0.5                  # not before it confirmed
    assert second.requeued == [mid] and sent == [[mid]]
    m = store.match(mid)
    assert m["status"] == "queued" and m["attempts"] == 1        # attempts kept: the limit holds
    assert Reaper(store, sent.append, confirm=0.0).sweep().requeued == []  # queued by us: wait


def test_the_reaper_leaves_live_and_waiting_matches_alone(store):
    live, waiting = _match(store, "live"), _match(store, "waiting")
    for mid in (live, waiting):
        assert store.claim(mid)
    store.start_attempt(live, owner="alive/1/t", lease=30)
    # a message for `waiting` in the queue, as kombu stores it
    body = __import__("base64").b64encode(json.dumps([[waiting], {}, {}]).encode()).decode()
    msg = {"body": body, "headers": {"id": "task-1"}, "properties": {"body_encoding": "base64"}}
    store.r.lpush(store.keys.celery_prefix() + "sueca.matches", json.dumps(msg))
    assert store.broker_messages(["sueca.matches"])[0] == {waiting}
    sent: list[list[str]] = []
    reaper = Reaper(store, sent.append, confirm=0.0)
    for _ in range(3):
        seen = reaper.sweep()
        assert (seen.running, seen.queued, seen.requeued) == (1, 1, [])
    # the broker is flushed: the waiting match has nothing left standing for it
    store.r.delete(store.keys.celery_prefix() + "sueca.matches")
    reaper.sweep()
    assert reaper.sweep().requeued == [waiting] and sent == [[waiting]]


def test_an_attempt_starts_and_reads_its_match_in_one_script(store):
    """What a task needs to play (the spec, the error so far) comes back with the attempt;
    the refusals count nothing."""
    from sueca.arena.store import UnknownMatch
    mid = _match(store)
    assert store.claim(mid)
    n, m = store.start_attempt(mid, owner="hostA/1/t1", task="t1")
    assert n == 1 and m["status"] == "running" and m["attempts"] == 1 and m["id"] == mid
    assert m["spec"]["seed"] == "7" and m["owner"] == "hostA/1/t1" and m["task"] == "t1"
    assert m == store.match(mid)
    with pytest.raises(LeaseHeld, match="hostA/1/t1"):
        store.start_attempt(mid, owner="hostB/2/t1")
    with pytest.raises(UnknownMatch, match="'nope'"):
        store.start_attempt("nope")
    store.record_result(mid, {"match_id": mid, "end": "normal"})
    assert store.start_attempt(mid, owner="hostB/2/t1") == (-1, None)
    assert store.match(mid)["attempts"] == 1                     # refusals counted nothing


def test_a_heartbeat_racing_the_record_never_brings_the_lease_back(store):
    mid = _match(store)
    assert store.claim(mid)
    assert store.start_attempt(mid, owner="hostA/1/t1")[0] == 1
    store.record_result(mid, {"match_id": mid, "end": "normal"})
    assert not store.r.exists(store.keys.lease(mid))             # the record ended it
    assert store.renew_lease(mid, "hostA/1/t1")                  # a late beat: not "lost"...
    assert not store.r.exists(store.keys.lease(mid))             # ...and nothing written


def test_a_redelivered_task_records_once_and_a_lapsed_lease_is_played_again(store):
    """play_and_record as a task runs it, local runner, real Redis: a second delivery while the
    first attempt's lease lives stands down (no attempt counted); once that owner is gone and
    its lease lapsed, the match is played and recorded, once; a late delivery then skips it."""
    from sueca.arena.match_job import play_and_record
    mid = _match(store)
    assert store.claim(mid)
    store.start_attempt(mid, owner="dead/1/t", lease=0.3)        # its worker dies mid-match
    with pytest.raises(LeaseHeld):
        play_and_record(store, mid, mode="local", owner="host/2/t2")
    assert store.match(mid)["attempts"] == 1
    wait_for(lambda: not store.r.exists(store.keys.lease(mid)), 10, "the dead owner's lease to lapse")
    out = play_and_record(store, mid, mode="local", owner="host/2/t2")
    assert (out["status"], out["attempt"]) == ("recorded", 2)
    assert not store.r.exists(store.keys.lease(mid))             # ended by the record
    assert play_and_record(store, mid, mode="local", owner="host/3/t3")["status"] == "skipped"
    assert [r["match_id"] for _, r in store.results()] == [mid]  # recorded exactly once
    assert store.match(mid)["attempts"] == 2


@pytest.mark.slow
def test_a_worker_killed_mid_match_is_replaced_within_30s(league, start_worker, tmp_path):
    """SIGKILL the whole worker (main process and pool) playing a match; `tournament run`
    re-queues the match when its lease lapses and the other worker plays it — not after the
    600 s visibility timeout. Recorded exactly once."""
    store = league.store
    env = league.env(SLOWBOT_THINK="0.03")                      # a ~6 s match
    workers = [start_worker("--runner", "local", "-c", "1", SLOWBOT_THINK="0.03")
               for _ in range(2)]
    log = open(tmp_path / "run.log", "w+")
    run = subprocess.Popen([SUECA_ARENA, "tournament", "run", "--bots", "slow,slow2", "-k", "1",
                            "--id", "tt-reap", "--json"], env=env, cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        def running() -> dict | None:
            assert run.poll() is None, "tournament run exited"
            mids = store.tournament_matches("tt-reap")
            m = store.match(mids[0]) if mids else None
            return m if m and m["status"] == "running" else None

        m = wait_for(running, 60, "the tournament's match to be running",
                     detail=lambda: open(log.name).read())
        (mid,) = store.tournament_matches("tt-reap")
        pid = int(m["owner"].split("/")[1])                      # the pool process playing it
        (victim,) = [w for w in workers if pid in w.children()]
        # a sleep on purpose: the kill should land a few moves into the match, not on the
        # attempt's first line
        time.sleep(0.5)
        victim.kill()
        killed = time.monotonic()
        wait_for(lambda: store.match(mid)["attempts"] >= 2, 60,
                 "a second attempt after the kill", detail=lambda: open(log.name).read())
        delay = time.monotonic() - killed
        print(f"re-run started {delay:.1f} s after the kill")
        assert delay <= 30
        out, _ = run.communicate(timeout=90)
    finally:
        if run.poll() is None:
            run.kill()
        log.close()
    assert run.returncode == 0, open(log.name).read()
    assert json.loads(out)["recorded"] == 1
    assert len([r for _, r in store.results() if r["match_id"] == mid]) == 1
    text = open(log.name).read()
    assert "re-queued 1 lost match" in text
    assert "is a worker running" not in text and "no worker answers" not in text, text
    assert re.search(r"running 0 · queued 0 · workers [12]\b", text), text  # Celery's ping


@pytest.mark.slow
def test_tournament_run_says_when_no_worker_answers(league, tmp_path):
    """Without a worker the hint says so (from Celery's ping), and the command gives up at its
    --timeout with the matches left queued for a re-run."""
    out = subprocess.run([SUECA_ARENA, "tournament", "run", "--bots", "random,heuristic",
                          "-k", "1", "--id", "tt-noworker", "--timeout", "22"],
                         env=league.env(), cwd=ROOT, capture_output=True, text=True, timeout=90)
    assert out.returncode == 2, out.stderr
    assert "no worker answers a ping" in out.stderr, out.stderr
    assert "re-run with --id tt-noworker" in out.stderr and "Traceback" not in out.stderr
    # leave nothing for the workers of later tests: no message, no match in flight
    league.store.r.delete(league.store.keys.celery_prefix() + "sueca.matches")
    for mid in league.store.tournament_matches("tt-noworker"):
        league.store.record_failure(mid, "test: no worker on purpose")


@pytest.mark.slow
def test_a_tournament_with_a_bot_not_connected_says_which_at_once(referee_arena):
    """Says which bot is not connected at once, not "no progress for 15 s: is a worker
    running?" after 107 s."""
    from kits.arena import cli
    env = referee_arena.cli_env
    cli("bots", "add", "ghost", env=env)
    try:
        started = time.monotonic()
        out = cli("tournament", "run", "--bots", "random,ghost", "--id", "ghost-t", env=env,
                  check=2)
        assert time.monotonic() - started < 20
        assert "'ghost' not connected to any referee" in out.stderr, out.stderr
        assert "random" not in out.stderr.split("not connected")[0]
        assert "Traceback" not in out.stderr
        assert referee_arena.store.tournament("ghost-t") is None    # nothing written
    finally:
        cli("bots", "remove", "ghost", env=env)


def test_no_celery_setting_drops_a_message_on_a_broker_loss():
    from sueca.arena.celery_app import make_app
    conf = make_app("redis://127.0.0.1:1/0").conf
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_cancel_long_running_tasks_on_connection_loss is False
    assert conf.task_ignore_result  # a worker never writes to (or waits on) the result backend


@pytest.mark.slow
def test_a_redis_crash_under_a_running_match_loses_nothing_without_any_reaper(tmp_path):
    """Redis SIGKILLed and restarted from its append-only file while a worker
    plays; nothing runs that could re-queue (no scheduler, no waiting tournament run). The
    attempt under way goes on and records its result once — it is not cancelled and
    acknowledged as revoked, which would leave the match `running` for ever."""
    from kits.arena import Worker, arena_env, cli

    from sueca.arena.keys import Keys
    from sueca.arena.redisproc import RedisServer
    from sueca.arena.store import Store, connect
    prefix = "crash:"
    server = RedisServer(appendonly=True).start()
    worker = None
    try:
        # 100 ms a card: a 12-24 s match, still playing when Redis is back ~5 s after the kill
        # even on a loaded machine (at 50 ms the shortest seeds end in 6 s, and a match that
        # ends while Redis is down records on a second attempt)
        env = arena_env(server.url, prefix, SLOWBOT_THINK="0.1")
        for bot in ("slow", "slow2"):
            cli("bots", "add", bot, env=env)
        worker = Worker(server.url, prefix, "--runner", "local", "-c", "1",
                        log=tmp_path / "worker.log", SLOWBOT_THINK="0.1").wait_ready()
        # queue the match, and leave: nothing is watching it any more
        cli("tournament", "run", "--bots", "slow,slow2", "-k", "1", "--id", "crash-t",
            "--timeout", "1", env=env, check=2)
        store = Store(connect(server.url), Keys(prefix))
        (mid,) = store.tournament_matches("crash-t")
        wait_for(lambda: store.match(mid)["status"] == "running", 30, "the match to be running",
                 detail=worker.text)
        # mid-match, once the append-only file holds the attempt (its lease): a SIGKILL loses
        # only what Redis had not yet written there
        lease = store.keys.lease(mid).encode()
        wait_for(lambda: any(lease in f.read_bytes() for f in Path(server.dir).glob("appendonly*")
                             if f.is_file()),
                 30, "the attempt's lease in the append-only file")
        server.kill()
        time.sleep(2.0)  # a sleep on purpose: Redis stays away a while under the running match
        server.start(timeout=30)
        store = Store(connect(server.url), Keys(prefix))
        wait_for(lambda: store.match(mid)["status"] == "done", 90, "the match to be recorded",
                 detail=lambda: f"{store.match(mid)}\n{worker.text()}")
        assert store.match(mid)["attempts"] == 1            # the same attempt, not a replay
        assert len([r for _, r in store.results() if r["match_id"] == mid]) == 1
    finally:
        if worker is not None:
            worker.stop()
        server.stop()


@pytest.mark.slow
def test_the_ladder_scheduler_requeues_a_lost_match_of_any_tournament(tmp_path):
    """The scheduler runs for months: every in-flight match whose owner died is its business,
    not only the ladder's (here a tournament match nobody waits for)."""
    import os
    import signal

    from kits.arena import arena_env, cli

    from sueca.arena.keys import Keys
    from sueca.arena.redisproc import RedisServer
    from sueca.arena.store import Store, connect
    prefix = "sched:"
    with RedisServer() as server:
        env = arena_env(server.url, prefix)
        for bot in ("random", "heuristic"):
            cli("bots", "add", bot, env=env)
        store = Store(connect(server.url), Keys(prefix))
        mid = _match(store, "orphan")
        assert store.claim(mid)
        store.start_attempt(mid, owner="gone/1/t", lease=0.5)    # then its worker died
        log = open(tmp_path / "scheduler.log", "w+")
        proc = subprocess.Popen([SUECA_ARENA, "scheduler", "--bots", "random,heuristic",
                                 "--target", "1", "--interval", "0.2"], env=env, cwd=ROOT,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_for(lambda: store.match(mid)["status"] == "queued", 30,
                     "the scheduler to re-queue the orphan",
                     detail=lambda: f"exit {proc.poll()}\n{open(log.name).read()[-3000:]}")
            # and its task is sent (the status is written first, the task then)
            wait_for(lambda: mid in store.broker_messages(["sueca.matches"])[0], 10,
                     "the re-queued orphan's task on the broker")
            assert store.match(mid)["error"].startswith("re-queued")
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(15)
            log.close()
