"""``sueca-arena worker --pool threads``: one worker process plays many matches at once.

The real thing: a private Redis, a referee, bots as ``sueca-bot run`` processes and one worker
with ``--pool threads --concurrency 8``; matches go through Celery as a tournament does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request

import pytest
from kits.arena import SUECA_ARENA, TESTS, arena_env, children
from kits.wait import wait_for

from sueca.arena.promscrape import parse_samples, total

BOTS = ["t1", "t2", "t3", "t4"]
K = 3  # matches per pair
MATCHES = len(BOTS) * (len(BOTS) - 1) // 2 * K  # a round-robin of every pair, K matches each


@pytest.fixture(scope="module")
def threads_arena(tmp_path_factory: pytest.TempPathFactory):
    from sueca.arena.local_arena import LocalArena
    env = {"PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
           "SUECA_KEY_PREFIX": "sueca:", "SLOWBOT_THINK": "0.004"}
    saved = os.environ.get("SUECA_KEY_PREFIX")
    os.environ["SUECA_KEY_PREFIX"] = "sueca:"
    # slow bots (~1 s a match): long enough for matches to overlap and for a SIGTERM mid-match
    arena = LocalArena(None, None, {b: "kits.bots.slow:SlowBot" for b in BOTS}, capacity=8,
                       concurrency=8, pool="threads", metrics=True,
                       log_dir=tmp_path_factory.mktemp("threads"), extra_env=env)
    try:
        arena.start(timeout=60)
    finally:  # this process's Celery app stays as it was: tasks are sent by `sueca-arena`
        if saved is None:
            os.environ.pop("SUECA_KEY_PREFIX", None)
        else:
            os.environ["SUECA_KEY_PREFIX"] = saved
    arena.cli_env = arena_env(arena.redis_url, "sueca:")
    try:
        yield arena
    finally:
        arena.stop()


def _worker(arena) -> int:
    return next(p.popen.pid for p in arena.procs if p.name.startswith("worker"))


def _recorded(arena, tid: str) -> list[tuple[float, dict]]:
    """(recorded at, result) of each results-log entry of tournament ``tid``."""
    out = []
    for eid, result in arena.store.results():
        if result.get("tournament") == tid or str(result.get("match_id", "")).startswith(tid):
            out.append((int(eid.split("-")[0]) / 1000, result))
    return out


def _recorded_count(arena) -> float:
    """``sueca_worker_matches_recorded_total`` of the one worker process."""
    port = arena.ports["worker0_metrics"]
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return total(parse_samples(body), "sueca_worker_matches_recorded_total")


def test_one_process_plays_a_tournament_in_threads(threads_arena):
    arena = threads_arena
    worker = _worker(arena)
    assert children(worker) == [], "a threads pool forks no pool process"
    before = _recorded_count(arena)  # other tests of this module may have played first
    tid = "thr-a"
    run = subprocess.Popen([SUECA_ARENA, "tournament", "run", "--bots", ",".join(BOTS),
                            "-k", str(K), "--id", tid, "--timeout", "90", "--json"],
                           env=arena.cli_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    most = 0  # matches being played at once (their leases held), while the only process plays
    mids: set[str] = set()
    while run.poll() is None:
        mids = set(arena.store.tournament_matches(tid))
        statuses = [(arena.store.match(m) or {}).get("status") for m in mids]
        most = max(most, statuses.count("running"))
        time.sleep(0.02)  # sampling the overlap while the run lasts: a pace, not a wait
    out, err = run.communicate()
    assert run.returncode == 0, err[-3000:]
    summary = json.loads(out)
    mids = set(arena.store.tournament_matches(tid))
    assert len(mids) == MATCHES and summary["recorded"] == MATCHES and summary["failed"] == []
    assert most >= 4, most
    # every match recorded exactly once in the results log
    rows = _recorded(arena, tid)
    ids = [str(r.get("match_id") or r.get("id")) for _, r in rows]
    assert sorted(ids) == sorted(mids), ids
    for mid in mids:
        assert arena.store.match(mid)["status"] == "done"
    assert children(worker) == []  # still one process: the matches overlapped in its threads
    # the metrics of the one process: every match counted, once (the count follows the record)
    wait_for(lambda: _recorded_count(arena) >= before + MATCHES, 10, "the recorded-matches count")
    assert _recorded_count(arena) - before == MATCHES
    port = arena.ports["worker0_metrics"]
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    assert 'sueca_worker_retries_total{reason="redis"}' in body  # labels made at start


def _drain(arena, tid: str, stop, wait, at_once: int) -> None:
    """Queue a tournament, wait until ``at_once`` of its matches are being played, ``stop()``
    the worker; ``wait()`` (its exit status) must be 0, and every match it was playing must be
    recorded, once: a warm shutdown."""
    run = subprocess.Popen([SUECA_ARENA, "tournament", "run", "--bots", ",".join(BOTS),
                            "-k", "2", "--id", tid, "--timeout", "30"],
                           env=arena.cli_env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    def playing() -> list[str]:
        mids = arena.store.tournament_matches(tid)
        busy = sum((arena.store.match(m) or {}).get("status") == "running" for m in mids)
        return mids if busy >= at_once else []

    try:
        mids = wait_for(playing, 30, f"{at_once} matches being played at once", interval=0.02)
    finally:
        run.kill()  # only its waiting: the matches are queued already
        run.wait()
    running = [m for m in mids if arena.store.match(m)["status"] == "running"]
    assert len(running) >= at_once
    stop()
    assert wait() == 0
    for mid in running:
        assert arena.store.match(mid)["status"] == "done", arena.store.match(mid)
    ids = [str(r.get("match_id") or r.get("id")) for _, r in _recorded(arena, tid)]
    assert len(ids) == len(set(ids))
    assert set(running) <= set(ids)


def test_sigterm_and_ctrl_c_drain_the_matches_in_flight(threads_arena, tmp_path):
    """Runs last of this module's arena tests: it stops the arena's worker."""
    from kits.arena import Worker
    arena = threads_arena
    worker = next(p for p in arena.procs if p.name.startswith("worker"))
    _drain(arena, "thr-b", lambda: os.kill(worker.popen.pid, signal.SIGTERM),
           lambda: worker.popen.wait(60), at_once=4)
    # Ctrl-C: SIGINT to the worker's process group, as a terminal sends it
    w = Worker(arena.redis_url, "sueca:", "--pool", "threads", "-c", "8", "--referee",
               arena.referee, log=tmp_path / "worker.log").wait_ready()
    try:
        # 4 matches of thr-b are still queued: this worker plays them too
        _drain(arena, "thr-c", lambda: os.killpg(w.proc.pid, signal.SIGINT),
               lambda: w.proc.wait(60), at_once=3)
    finally:
        w.stop()


def test_a_failed_call_does_not_close_the_channel_other_threads_play_on():
    """One match's failed call forgets the process's channel to that referee, but must not close
    it: in a threads worker other matches are still streaming on it (a closed channel would end
    them all)."""
    import threading

    import grpc

    from sueca.arena import match_job as runner
    from sueca.arena.redisproc import free_port
    addr = f"127.0.0.1:{free_port()}"  # nobody listens: calls fail, the channel stays open
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(runner._channel(addr)))
               for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(c) for c in got}) == 1  # one channel per process and referee
    old = got[0]
    runner._drop_channel(addr)
    assert runner._channel(addr) is not old  # the next match connects afresh
    with pytest.raises(grpc.RpcError) as err:  # not ValueError("closed channel")
        old.unary_unary("/sueca.v1.Nothing/Here")(b"", timeout=0.2)  # type: ignore[attr-defined]
    assert err.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
    runner._drop_channel(addr)
