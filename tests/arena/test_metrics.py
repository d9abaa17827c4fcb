"""Metrics endpoints of the worker (prefork, multiprocess mode) and the ratings exporter parse
with prometheus_client's own parser and carry the documented names and labels."""

from __future__ import annotations

import subprocess
import time
import urllib.request

import pytest
from kits.arena import SUECA_ARENA, cli
from kits.wait import wait_for
from prometheus_client.parser import text_string_to_metric_families

from sueca.arena.redisproc import free_port

pytestmark = pytest.mark.slow


def scrape(port: int, timeout: float = 20.0) -> dict[str, object]:
    text = wait_for(lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                                   timeout=2).read(),
                    timeout, f"/metrics on port {port}", interval=0.1)
    return {f.name: f for f in text_string_to_metric_families(text.decode())}


def test_worker_metrics_add_up_over_pool_processes(referee_arena):
    env = referee_arena.cli_env
    cli("tournament", "run", "--bots", "random,reckless", "-k", "4", "--id", "metrics-t", env=env)
    fams = scrape(referee_arena.ports["worker0_metrics"])
    recorded = fams["sueca_worker_matches_recorded"]
    assert recorded.type == "counter"
    by_end = {s.labels["end"]: s.value for s in recorded.samples if s.name.endswith("_total")}
    assert set(by_end) == {"normal", "renuncia", "timeout", "disconnect",
                           "bot_error"}  # failed: own counter
    failed = fams["sueca_worker_matches_failed"]
    assert failed.type == "counter" and [s.value for s in failed.samples
                                         if s.name.endswith("_total")] == [0]
    store = referee_arena.store
    # one worker recorded every result in this arena: the pool processes' files add up exactly
    assert sum(by_end.values()) == store.results_count()
    hist = fams["sueca_worker_task_seconds"]
    assert hist.type == "histogram"
    count = sum(s.value for s in hist.samples if s.name == "sueca_worker_task_seconds_count")
    assert count >= store.results_count()
    retries = fams["sueca_worker_retries"]
    assert retries.type == "counter"
    assert {"referee", "capacity", "redis", "aborted"} <= {s.labels["reason"] for s in retries.samples}
    # per-bot series: the pool processes' files add up to the totals recorded in Redis
    health = store.bot_stats(["random", "reckless"])
    faults = {(s.labels["bot"], s.labels["kind"]): s.value
              for s in fams["sueca_bot_faults"].samples if s.name.endswith("_total")}
    turns = {s.labels["bot"]: s.value for s in fams["sueca_bot_turn_seconds"].samples
             if s.name == "sueca_bot_turn_seconds_count"}
    for bot in ("random", "reckless"):
        for kind in ("renuncia", "timeout", "disconnect"):
            assert faults[(bot, kind)] == health[bot]["faults"][kind], (bot, kind)
        assert turns[bot] == health[bot]["turns"] > 0
    assert health["reckless"]["faults"]["renuncia"] > 0 and faults[("_other", "renuncia")] == 0
    depth = fams["sueca_worker_queue_depth"]
    assert depth.type == "gauge" and depth.samples[0].labels == {"queue": "sueca.matches"}
    assert depth.samples[0].value == 0
    build = fams["sueca_build_info"].samples
    assert len(build) == 1 and build[0].labels["component"] == "worker" and build[0].value == 1
    assert "process_cpu_seconds" in fams and "process_resident_memory_bytes" in fams


def test_ratings_exporter_only_shows_registered_bots(referee_arena):
    from sueca.arena.store.ratings import catch_up
    store = referee_arena.store
    cli("tournament", "run", "--bots", "random,heuristic", "-k", "2", "--id", "metrics-r",
        env=referee_arena.cli_env)
    # a bot that was rated, then removed from the registry: no label for it
    store.create_match("ghost-1", {})
    store.record_result("ghost-1", {"match_id": "ghost-1", "seats": ["ghost", "random"] * 2,
                                    "winner": 1, "game_points": [0, 4], "end": "normal"})
    catch_up(store)
    port = free_port()
    proc = subprocess.Popen([SUECA_ARENA, "ratings", "exporter", "--metrics-port", str(port),
                             "--addr", "127.0.0.1"], env=referee_arena.cli_env,
                            stderr=subprocess.PIPE)
    try:
        fams = scrape(port)
    finally:
        proc.terminate()
        proc.wait(10)
    rating = fams["sueca_rating"]
    assert rating.type == "gauge"
    bots = {s.labels["bot"] for s in rating.samples}
    systems = {s.labels["system"] for s in rating.samples}
    assert {"random", "heuristic"} <= bots and "ghost" not in bots
    assert systems == {"record", "elo", "openskill_mu", "openskill_sigma"}
    # the queue depth is there when no worker runs; so are the build and the process
    depth = fams["sueca_worker_queue_depth"].samples
    assert [(s.labels, s.value) for s in depth] == [({"queue": "sueca.matches"}, 0)]
    assert fams["sueca_build_info"].samples[0].labels["component"] == "exporter"
    assert "process_cpu_seconds" in fams
    assert bots <= set(store.bots.names())
    pm = {(s.labels["bot"], s.labels["system"]): s.value
          for s in fams["sueca_rating_uncertainty"].samples}
    assert pm[("heuristic", "elo")] > 0 and pm[("heuristic", "openskill_mu")] > 0
    assert pm[("heuristic", "record")] > 0
    games = {s.labels["bot"]: s.value for s in fams["sueca_rating_games"].samples}
    assert games["heuristic"] >= 1


def test_scheduler_serves_metrics_and_health(redis_url, prefix):
    """A real scheduler process (no bots: it loops and schedules nothing) serves its build,
    its loop's heartbeat and the queue depth, and /healthz answers 200 while the loop runs."""
    from kits.arena import arena_env
    port = free_port()
    proc = subprocess.Popen([SUECA_ARENA, "scheduler", "--interval", "0.2", "--metrics-port",
                             str(port)], env=arena_env(redis_url, prefix),
                            stderr=subprocess.DEVNULL)
    try:
        fams = scrape(port)
        first = fams["sueca_scheduler_last_loop_timestamp_seconds"].samples[0].value
        assert abs(first - time.time()) < 10
        assert fams["sueca_build_info"].samples[0].labels["component"] == "scheduler"
        assert fams["sueca_scheduler_matches_queued"].samples[0].value == 0
        assert [s.value for s in fams["sueca_worker_queue_depth"].samples] == [0]
        assert "process_cpu_seconds" in fams
        # 0.2 s loops; a loaded machine may delay a few
        wait_for(lambda: scrape(port)["sueca_scheduler_last_loop_timestamp_seconds"]
                 .samples[0].value > first, 20, "the scheduler's loop to advance", interval=0.1)
        health = urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5)
        assert health.status == 200
    finally:
        proc.terminate()
        proc.wait(10)


def test_scheduler_health_fails_when_the_loop_stalls(redis_url, prefix):
    import urllib.error

    from sueca.arena.celery_app import QUEUE
    from sueca.arena.keys import Keys
    from sueca.arena.metrics import SchedulerMetrics
    from sueca.arena.store import Store, connect
    # stale after 1.5 s: a loaded machine can take far more than 0.3 s between the loop's
    # report and the first request
    health = SchedulerMetrics(Store(connect(redis_url), Keys(prefix)), QUEUE, stale_after=1.5)
    port = free_port()
    health.serve(port, "127.0.0.1")
    done = time.monotonic()
    health.loop_done(3)
    ok = urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5)
    assert ok.status == 200

    def healthz() -> int:
        try:
            return int(urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).status)
        except urllib.error.HTTPError as err:
            return int(err.code)

    # no loop_done: stalled, and said so no sooner than stale_after
    wait_for(lambda: healthz() == 503, 20, "/healthz to answer 503", interval=0.1)
    assert time.monotonic() - done >= 1.5
    with pytest.raises(urllib.error.HTTPError) as stalled:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5)
    assert stalled.value.code == 503
    assert scrape(port)["sueca_scheduler_matches_queued"].samples[0].value == 3
