"""``sueca-arena bench grpc-pingpong`` and ``bench referee``: real processes, tiny numbers.

The checks are about the contract (the last line is one JSON object with the documented keys,
everything is torn down), never about speed: the machine may be shared.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest
from kits.procs import marked, new_mark
from kits.wait import wait_for

from sueca.arena import promscrape
from sueca.arena.bench import matches
from sueca.arena.quantiles import histogram_quantile

ARENA = [sys.executable, "-m", "sueca.arena.cli"]


def run_bench(*args: str, timeout: float,
              env: dict[str, str] | None = None) -> tuple[dict, subprocess.CompletedProcess[str]]:
    """Run a bench and wait until every process it started is gone; its result is its last
    line."""
    mark = new_mark()
    proc = subprocess.run([*ARENA, "bench", *args], capture_output=True, text=True,
                          timeout=timeout, env={**(os.environ if env is None else env), **mark})
    wait_for(lambda: not marked(mark), 15, "the bench's referee and bots gone (one left running)",
             interval=0.1)
    lines = proc.stdout.strip().splitlines()
    assert lines, f"no output; stderr: {proc.stderr[-2000:]}"
    result = json.loads(lines[-1])
    assert isinstance(result, dict)
    return result, proc


def test_pingpong_last_line_is_the_result() -> None:
    result, proc = run_bench("grpc-pingpong", "--seconds", "1", "--streams", "4",
                             "--warmup", "0.2", timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert set(result) >= {"round_trips", "seconds", "round_trips_per_s", "streams"}
    assert result["streams"] == 4
    assert result["round_trips"] > 0
    assert result["seconds"] == pytest.approx(1.0, abs=0.5)
    assert result["round_trips_per_s"] == pytest.approx(
        result["round_trips"] / result["seconds"], rel=0.01)
    # both processes' CPU over the measured second, per round trip (from /proc): some, and
    # not absurd (a round trip is two messages each way through Python gRPC)
    assert 1 < result["cpu_us_per_round_trip"] < 100_000


def test_pingpong_refuses_bad_arguments() -> None:
    from sueca.arena.bench import pingpong as bench_pingpong

    with pytest.raises(ValueError, match="streams"):
        bench_pingpong.measure(seconds=1, streams=0)


# --- the referee bench's pieces, no server needed ----------------------------------------------

HISTOGRAM = """\
# HELP sueca_referee_move_rtt_seconds rtt
# TYPE sueca_referee_move_rtt_seconds histogram
sueca_referee_move_rtt_seconds_bucket{le="0.001"} %d
sueca_referee_move_rtt_seconds_bucket{le="0.01"} %d
sueca_referee_move_rtt_seconds_bucket{le="0.1"} %d
sueca_referee_move_rtt_seconds_bucket{le="+Inf"} %d
sueca_referee_move_rtt_seconds_count %d
sueca_referee_move_rtt_seconds_sum 1.0
# HELP sueca_referee_moves_total moves
# TYPE sueca_referee_moves_total counter
sueca_referee_moves_total %d
"""


def test_quantiles_come_from_the_buckets_filled_between_scrapes() -> None:
    before = promscrape.parse_samples(HISTOGRAM % (5, 5, 5, 5, 5, 5))
    after = promscrape.parse_samples(HISTOGRAM % (15, 95, 105, 105, 105, 105))
    buckets = promscrape.histogram_delta(before, after, matches.RTT_METRIC)
    assert buckets == [(0.001, 10), (0.01, 90), (0.1, 100), (float("inf"), 100)]
    # rank 50 of 100 lies in (0.001, 0.01]: 40 of its 80 samples in
    assert histogram_quantile(buckets, 0.5) == pytest.approx(0.001 + 0.009 * 40 / 80)
    assert histogram_quantile(buckets, 0.99) == pytest.approx(0.01 + 0.09 * 9 / 10)
    assert promscrape.counter_delta(before, after, matches.MOVES_METRIC) == 100
    assert histogram_quantile([], 0.5) is None
    assert promscrape.histogram_delta(before, before, matches.RTT_METRIC)[-1][1] == 0


def test_moves_and_deals_are_counted_from_the_replay() -> None:
    replay = {"deals": [
        {"tricks": [{"cards": ["AS", "2S", "3S", "4S"]}] * 10},
        {"tricks": [{"cards": ["AS", "2S", "3S", "4S"]}] * 2
         + [{"cards": ["AS", "2S"], "winner": None}]},
        {"tricks": [], "end": "redeal"},
    ]}
    assert matches.count_replay(replay) == (40 + 8 + 2, 3)


# --- the whole referee bench -----------------------------------------------------------------

READY = all(importlib.util.find_spec(m) is not None
            for m in ("sueca.referee.server", "sueca.arena.cli.referee", "sueca.sdk.cli"))
needs_referee = pytest.mark.skipif(
    not READY,
    reason="bench referee needs sueca.referee.server, sueca.arena.cli.referee and sueca.sdk.cli")


@needs_referee
def test_bench_referee_small_run() -> None:
    # TLS settings for a real cluster must not reach the bench's own loopback referee
    tls = {"SUECA_TLS": "1", "SUECA_TLS_CA": "/nonexistent/ca.pem",
           "SUECA_TLS_SERVER_NAME": "elsewhere", "SUECA_TLS_CERT": "/nonexistent/cert.pem",
           "SUECA_TLS_KEY": "/nonexistent/key.pem"}
    result, proc = run_bench("referee", "--matches", "4", "--bot-processes", "4",
                             "--concurrency", "2", "--pingpong-seconds", "0.5",
                             timeout=240, env={**os.environ, **tls})
    assert proc.returncode == 0, proc.stderr[-3000:]
    for key in ("moves_per_s", "deals_per_s", "move_rtt_p50_ms", "move_rtt_p99_ms",
                "pingpong_round_trips_per_s", "ratio"):
        assert key in result, key
    assert result["failed"] == 0, result.get("first_error")
    assert sum(result["ends"].values()) == 4
    assert result["moves"] >= 4 * 40 and result["deals"] >= 4
    assert result["moves_per_s"] > 0 and result["pingpong_round_trips_per_s"] > 0
    assert result["ratio"] == pytest.approx(
        result["moves_per_s"] / result["pingpong_round_trips_per_s"], rel=0.01)
    # the baseline runs at the same concurrency: as many ping-pong streams as matches at once
    assert result["pingpong_streams"] == 2
    assert result["cpu_us_per_move"] > 0 and result["pingpong_cpu_us_per_round_trip"] > 0
    assert result["cpu_ratio"] == pytest.approx(
        result["pingpong_cpu_us_per_round_trip"] / result["cpu_us_per_move"], rel=0.01)
    # the same CPU, split by process: the RunMatch client (this bench), the referee, the bots
    split = result["cpu_us_per_move_by_process"]
    assert set(split) == set(result["cpu_share"]) == {"driver", "referee", "bots"}
    assert split["referee"] > 0 and split["bots"] > 0
    assert sum(split.values()) == pytest.approx(result["cpu_us_per_move"], abs=0.1)
    # the referee's histogram was read: one sample per move or redeal answer
    assert result["move_rtt_samples"] >= result["moves"]
    assert 0 < result["move_rtt_p50_ms"] <= result["move_rtt_p99_ms"]
    assert result["referee_moves_metric"] >= result["moves"]


@needs_referee
def test_bench_referee_failure_still_tears_down() -> None:
    # a 1 ms limit per RunMatch call: every match fails, after everything has started
    result, proc = run_bench("referee", "--matches", "2", "--bot-processes", "1",
                             "--concurrency", "2", "--match-timeout", "0.001",
                             "--pingpong-seconds", "0.2", timeout=120)
    assert proc.returncode == 1
    assert "every match failed" in result["error"]


@needs_referee
def test_bench_referee_stops_early_on_faults() -> None:
    # reckless bots commit renúncias: the matches end by a fault, the bench says so and stops
    # scheduling after a few instead of playing all of them
    result, proc = run_bench("referee", "--matches", "40", "--bot-processes", "4",
                             "--concurrency", "2", "--bot", "reckless",
                             "--pingpong-seconds", "0.2", timeout=180)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert result["abnormal"] >= 4 and result["skipped"] > 0
    assert result["faults"].get("renuncia", 0) >= 1
    assert "ended" in result["first_error"]
    assert "warning:" in proc.stderr


def test_move_rtt_buckets_read_a_loaded_referees_quantiles_closely() -> None:
    """The bench reads p50/p99 by interpolating within the referee's histogram buckets: where
    a loaded referee's move RTTs lie (10 to ~200 ms), the reading must stay close to
    the quantile of the samples themselves (coarse 20/50/100 ms bounds read a p99 of 57 ms
    as 77 ms). Samples shaped like bench referee --sessions 1000 on 2 cores."""
    import bisect
    import math
    import random

    from sueca.referee import metrics

    bounds = metrics.MOVE_RTT.bounds
    rng = random.Random(13)
    for median in (0.012, 0.024, 0.040, 0.060):
        samples = sorted(rng.lognormvariate(math.log(median), 0.35) for _ in range(20_000))
        counts = [0] * (len(bounds) + 1)
        for s in samples:
            counts[bisect.bisect_left(bounds, s)] += 1
        cumulative, total = [], 0
        for bound, n in zip((*bounds, float("inf")), counts):
            total += n
            cumulative.append((bound, float(total)))
        for q in (0.50, 0.99):
            exact = samples[int(q * len(samples))]
            read = histogram_quantile(cumulative, q)
            assert read is not None and abs(read - exact) <= 0.08 * exact, (median, q, read, exact)
