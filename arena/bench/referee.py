"""Referee throughput: real bots over gRPC, matches through the control API, against ping-pong.

One run starts a private Redis, registers the bench bots, starts a referee and P ``sueca-bot run
random`` processes, plays N matches with C at once through ``MatchService.RunMatch`` (quiet
streams, from threads, via :func:`sueca.referee.control.run_match`), and then (with everything else
stopped) the bare gRPC ping-pong baseline, so the ratio of the two is taken on the same machine
in the same run (a shared machine is noisy). Everything started is stopped, failure or not.

Random bots never fault, so a match that fails or ends by a fault means something is broken: the
bench says so on stderr, stops scheduling after a few, and exits 1 (its JSON still comes last).

Moves and deals are counted from each match's replay; the move round trip (referee sends a turn
request, the bot's answer arrives) comes from the referee's own histogram
``sueca_referee_move_rtt_seconds``, read before and after the matches on its metrics port.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sueca.arena.bench import measured

RTT_METRIC = "sueca_referee_move_rtt_seconds"
MOVES_METRIC = "sueca_referee_moves_total"
_ARENA = [sys.executable, "-m", "sueca.arena.cli"]
_BOT = [sys.executable, "-c", "import sys; from sueca.sdk.cli import main; sys.exit(main())"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from sueca.sdk.cli import Bounded

    # The defaults are the arena's shape: a bot is one process holding many games (capacity),
    # and a referee runs many matches at once, so every message carries a batch of turns. Two
    # bot processes, not one per seat: on a small machine (2 cores) more processes than cores
    # only split the batches (measured on 2 cores: 4 processes gave half the moves/s of 2).
    parser.add_argument("--matches", action=Bounded, kind=int, low=1, default=512,
                        help="matches to play (default 512)")
    parser.add_argument("--bot-processes", action=Bounded, kind=int, low=1, default=2,
                        help="`sueca-bot run BOT` processes (default 2)")
    parser.add_argument("--concurrency", action=Bounded, kind=int, low=1, default=128,
                        help="matches running at once (default 128)")
    parser.add_argument("--bots", action=Bounded, kind=int, low=1, default=None,
                        help="distinct bot names, processes shared round-robin among them "
                             "(default: one per process from 4 processes up, else 1)")
    parser.add_argument("--capacity", action=Bounded, kind=int, low=1, default=None,
                        help="games per bot process (default: 4 x concurrency, never a limit)")
    parser.add_argument("--bot", default="random",
                        help="the example bot every process runs (default random; reckless "
                             "exercises the fault path)")
    parser.add_argument("--bot-threads", action=Bounded, kind=int, low=0, default=None,
                        help="passed to `sueca-bot run --threads` (default: the SDK's; 0 plays "
                             "in the event loop)")
    parser.add_argument("--move-ms", action=Bounded, kind=int, low=1, default=2000,
                        help="per-move limit, and the seat's time bank, in the match spec "
                             "(default 2000: random bots answer in milliseconds)")
    parser.add_argument("--match-timeout", action=Bounded, kind=float, low=0, above=True, default=120.0,
                        help="seconds one RunMatch call may take (default 120)")
    parser.add_argument("--pingpong-seconds", action=Bounded, kind=float, low=0, above=True, default=2.0,
                        help="measured seconds of the ping-pong baseline (default 2)")
    parser.add_argument("--pingpong-streams", action=Bounded, kind=int, low=1, default=None,
                        help="streams of the ping-pong baseline (default: --concurrency, the "
                             "same number of round trips in flight)")
    parser.add_argument("--keep-logs", action="store_true",
                        help="keep the referee and bot logs and print where they are")


def run(args: argparse.Namespace) -> int:
    result = measured("referee", measure, args)
    if result is None:
        return 1
    print(f"referee: {result['moves']} moves, {result['deals']} deals in "
          f"{result['seconds']:.2f}s = {result['moves_per_s']:.0f} moves/s; move rtt p50 "
          f"{result['move_rtt_p50_ms']} ms p99 {result['move_rtt_p99_ms']} ms; ping-pong "
          f"{result['pingpong_round_trips_per_s']:.0f}/s; ratio {result['ratio']}; CPU per "
          f"move {result['cpu_us_per_move']} us, per round trip "
          f"{result['pingpong_cpu_us_per_round_trip']} us: cpu ratio {result['cpu_ratio']}",
          flush=True)
    if result["abnormal"]:
        print(f"warning: {result['abnormal']} match(es) failed or ended by a fault, "
              f"{result['skipped']} not played; first: {result['first_error']}; referee faults "
              f"{result['faults']}", file=sys.stderr, flush=True)
    print(json.dumps(result), flush=True)
    return 0 if not result["abnormal"] else 1


# --- the run ---------------------------------------------------------------------------------

def measure(args: argparse.Namespace) -> dict[str, Any]:
    from sueca.arena.bench import pingpong as bench_pingpong
    from sueca.arena.redisproc import RedisServer, free_port
    from sueca.sdk.channels import drop_tls_settings

    drop_tls_settings()  # its own referee is plaintext on loopback
    n, procs_n, conc = args.matches, args.bot_processes, args.concurrency
    if n < 1 or procs_n < 1 or conc < 1:
        raise ValueError(f"need --matches, --bot-processes and --concurrency >= 1, got "
                         f"{n}, {procs_n}, {conc}")
    n_bots = args.bots or (procs_n if procs_n >= 4 else 1)
    if not 1 <= n_bots <= procs_n:
        raise ValueError(f"--bots must be between 1 and --bot-processes ({procs_n}), not {n_bots}")
    capacity = args.capacity or 4 * conc

    logs = Path(tempfile.mkdtemp(prefix="sueca-bench-"))
    fleet = _Fleet(logs)
    redis = RedisServer()
    try:
        redis.start()
        names = [f"bench-{k}" for k in range(n_bots)]
        tokens = _register(redis.url, names)
        port = free_port()
        metrics_port = free_port()
        while metrics_port == port:
            metrics_port = free_port()
        address = f"127.0.0.1:{port}"
        fleet.start("referee", [*_ARENA, "referee", "--port", str(port), "--metrics-port",
                                str(metrics_port), "--redis", redis.url])
        _wait_for_referee(address, fleet)
        threads = [] if args.bot_threads is None else ["--threads", str(args.bot_threads)]
        for k in range(procs_n):
            name = names[k % n_bots]
            fleet.start(f"bot-{k}", [*_BOT, "run", args.bot, "--server", address,
                                     "--token", tokens[name], "--capacity", str(capacity),
                                     *threads])
        _wait_for_sessions(address, names, procs_n, fleet)
        pids = [os.getpid()] + [p.pid for p in fleet.procs.values()]
        before = _scrape(metrics_port)
        cpu_before = bench_pingpong.cpu_seconds(pids)
        played = _play(address, names, n, conc, args.move_ms, args.match_timeout, fleet)
        cpu_after = bench_pingpong.cpu_seconds(pids)
        after = _scrape(metrics_port)
    except BaseException:
        fleet.dump_tails()
        raise
    finally:
        fleet.stop()
        redis.stop()
        if not args.keep_logs:
            fleet.remove_logs()
        else:
            print(f"logs kept in {logs}", file=sys.stderr)

    # the baseline runs alone, after the referee and the bots have stopped
    pingpong = bench_pingpong.measure(seconds=args.pingpong_seconds,
                                      streams=args.pingpong_streams or conc, warmup=0.5)
    rtt = _histogram_delta(before, after, RTT_METRIC)
    moves_metric = _counter_delta(before, after, MOVES_METRIC)
    secs = played["seconds"]
    moves_per_s = played["moves"] / secs if secs > 0 else 0.0
    pp = pingpong["round_trips_per_s"]
    # CPU of every process of the run (this one, the referee, the bots) per move: steadier
    # than moves/s on a shared machine; cpu_ratio = ping-pong's CPU per round trip / this
    cpu_move = (None if cpu_before is None or cpu_after is None or not played["moves"]
                else (cpu_after - cpu_before) / played["moves"] * 1e6)
    pp_cpu = pingpong.get("cpu_us_per_round_trip")
    return {
        "matches": n, "failed": played["failed"], "skipped": played["skipped"],
        "abnormal": played["abnormal"], "ends": played["ends"],
        "faults": _faults(before, after),
        "bot_processes": procs_n, "bots": n_bots, "concurrency": conc, "capacity": capacity,
        "bot": args.bot, "bot_threads": args.bot_threads,
        "moves": played["moves"], "deals": played["deals"], "seconds": round(secs, 3),
        "moves_per_s": round(moves_per_s, 1),
        "deals_per_s": round(played["deals"] / secs, 2) if secs > 0 else 0.0,
        "matches_per_s": round(sum(played["ends"].values()) / secs, 3) if secs > 0 else 0.0,
        "move_rtt_p50_ms": _ms(_quantile(rtt, 0.50)),
        "move_rtt_p99_ms": _ms(_quantile(rtt, 0.99)),
        "move_rtt_samples": int(rtt[-1][1]) if rtt else 0,
        "referee_moves_metric": moves_metric,
        "pingpong_round_trips_per_s": pp, "pingpong_streams": pingpong["streams"],
        "ratio": round(moves_per_s / pp, 3) if pp else None,
        "cpu_us_per_move": None if cpu_move is None else round(cpu_move, 2),
        "pingpong_cpu_us_per_round_trip": pp_cpu,
        "cpu_ratio": round(pp_cpu / cpu_move, 3) if pp_cpu and cpu_move else None,
        "first_error": played["first_error"],
    }


def _register(redis_url: str, names: Sequence[str]) -> dict[str, str]:
    import redis

    from sueca.arena.bots import BotRegistry

    client = redis.Redis.from_url(redis_url)
    try:
        registry = BotRegistry(client)
        return {name: registry.add(name) for name in names}
    finally:
        client.close()


def _wait_for_referee(address: str, fleet: _Fleet, timeout: float = 30.0) -> None:
    """Until the referee's gRPC health service answers SERVING (or the referee dies)."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while True:
            fleet.check()
            try:
                reply = health.Check(health_pb2.HealthCheckRequest(), timeout=0.5,
                                     wait_for_ready=True)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the referee did not serve on {address} within "
                                   f"{timeout:.0f}s")
            time.sleep(0.1)


def _wait_for_sessions(address: str, names: Sequence[str], sessions: int, fleet: _Fleet,
                       timeout: float = 30.0) -> None:
    from sueca.referee.control import list_bots

    wanted = set(names)
    deadline = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < deadline:
        fleet.check()
        seen = sum(b["sessions"] for b in list_bots(address) if b["bot"] in wanted)
        if seen >= sessions:
            return
        time.sleep(0.1)
    raise RuntimeError(f"only {seen} of {sessions} bot sessions connected within {timeout:.0f}s")


def _play(address: str, names: Sequence[str], n: int, conc: int, move_ms: int,
          timeout: float, fleet: _Fleet) -> dict[str, Any]:
    import asyncio
    import random

    import grpc

    from sueca.referee.control import _OPTIONS, MatchAborted, run_match_async

    run_id = uuid.uuid4().hex[:8]
    base_seed = random.getrandbits(48)
    totals: dict[str, Any] = {"moves": 0, "deals": 0, "failed": 0, "ends": Counter(),
                              "abnormal": 0, "skipped": 0, "first_error": None}
    # random bots never fault: after this many faulted or failed matches, stop scheduling
    stop_after = max(4, conc)

    async def one(i: int, channel: grpc.aio.Channel) -> None:
        if totals["abnormal"] >= stop_after:
            totals["skipped"] += 1  # the system is broken: do not wait out every timeout
            return
        # quiet: only the result comes back, as a scheduler asks; no per-card control events
        spec = {"match_id": f"bench-{run_id}-{i}",
                "bots": [names[(i + j) % len(names)] for j in range(4)],
                "seed": base_seed + i, "move_ms": move_ms, "bank_ms": move_ms,
                "grace_ms": 2000, "quiet": True}
        result: dict[str, Any] | None = None
        error: Exception | None = None
        try:
            result = await run_match_async(channel, address, spec, timeout=timeout)
        except MatchAborted as err:  # its moves were played: counted, and reported as failed
            result, error = err.result, err
        except Exception as err:
            error = err
        if result is not None:
            moves, deals = count_replay(result.get("replay") or {})
            totals["moves"] += moves
            totals["deals"] += deals
            totals["ends"][result["end"]] += 1
            if result["end"] != "normal" and error is None:
                totals["abnormal"] += 1
                if totals["first_error"] is None:
                    totals["first_error"] = (f"match {i} ended {result['end']!r} (seat "
                                             f"{result.get('fault_seat')}, bot "
                                             f"{result.get('fault_bot')!r})")
        if error is not None:
            totals["failed"] += 1
            totals["abnormal"] += 1
            if totals["first_error"] is None:
                totals["first_error"] = f"match {i}: {type(error).__name__}: {error}"[:500]

    async def play_all() -> float:
        # One event loop and a few shared connections, as a scheduler would run them: a thread
        # and a connection per match cost this process more CPU than both bots together (lock
        # contention in sync gRPC), and that CPU is taken from the referee on a small machine.
        channels = [grpc.aio.insecure_channel(address, options=_OPTIONS)
                    for _ in range(max(1, min(4, conc // 32)))]
        queue = iter(range(n))

        async def worker(k: int) -> None:
            for i in queue:
                await one(i, channels[k % len(channels)])

        try:
            start = time.perf_counter()
            await asyncio.gather(*(worker(k) for k in range(min(conc, n))))
            return time.perf_counter() - start
        finally:
            for c in channels:
                await c.close()

    totals["seconds"] = asyncio.run(play_all())
    totals["ends"] = dict(totals["ends"])
    fleet.check()
    if totals["failed"] + totals["skipped"] == n:
        raise RuntimeError(f"every match failed; first: {totals['first_error']}")
    return totals


def count_replay(replay: Mapping[str, Any]) -> tuple[int, int]:
    """(cards played, deals) of a ``sueca-replay/1`` record."""
    deals = replay.get("deals") or []
    moves = sum(len(t.get("cards") or ()) for d in deals for t in d.get("tricks") or ())
    return moves, len(deals)


# --- Prometheus text ------------------------------------------------------------------------

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _scrape(port: int) -> Samples:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        return parse_samples(reply.read().decode())


def parse_samples(text: str) -> Samples:
    from prometheus_client.parser import text_string_to_metric_families

    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = float(s.value)
    return out


def _faults(before: Samples, after: Samples) -> dict[str, int]:
    """sueca_referee_faults_total by kind, between the scrapes (random bots should have none)."""
    out: dict[str, int] = {}
    for key, value in after.items():
        if key[0] == "sueca_referee_faults_total":
            delta = int(value - before.get(key, 0.0))
            if delta:
                out[dict(key[1]).get("kind", "")] = delta
    return out


def _counter_delta(before: Samples, after: Samples, name: str) -> float | None:
    keys = [k for k in after if k[0] in (name, name.removesuffix("_total"))]
    if not keys:
        return None
    return sum(after[k] - before.get(k, 0.0) for k in keys)


def _histogram_delta(before: Samples, after: Samples, name: str) -> list[tuple[float, float]]:
    """Cumulative (upper bound, count) pairs of the buckets filled between the two scrapes,
    summed over every other label."""
    buckets: dict[float, float] = {}
    for key, value in after.items():
        if key[0] != name + "_bucket":
            continue
        labels = dict(key[1])
        le = float(labels.get("le", "+Inf"))
        buckets[le] = buckets.get(le, 0.0) + value - before.get(key, 0.0)
    return sorted(buckets.items())


def _quantile(buckets: list[tuple[float, float]], q: float) -> float | None:
    """Like PromQL's histogram_quantile: linear within the bucket that holds the rank."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    rank = q * buckets[-1][1]
    lower_bound, lower_count = 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if le == float("inf"):
                return lower_bound  # beyond the last finite bucket: its bound is all we know
            if count == lower_count:
                return le
            return lower_bound + (le - lower_bound) * (rank - lower_count) / (count - lower_count)
        lower_bound, lower_count = le, count
    return buckets[-1][0]


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


# --- child processes ------------------------------------------------------------------------

class _Fleet:
    """The child processes of one run, each in its own process group with a log file."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self._files: list[Any] = []

    def start(self, name: str, argv: Sequence[str]) -> None:
        log = open(self.logs / f"{name}.log", "wb")
        self._files.append(log)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.procs[name] = subprocess.Popen(list(argv), stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=env,
                                            start_new_session=True)

    def check(self) -> None:
        """Raise if a child has exited: a bench against a dead referee measures nothing."""
        for name, proc in self.procs.items():
            code = proc.poll()
            if code is not None:
                raise RuntimeError(f"{name} exited with code {code}: {self.tail(name)}")

    def tail(self, name: str, lines: int = 15) -> str:
        try:
            text = (self.logs / f"{name}.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def dump_tails(self) -> None:
        for name in self.procs:
            tail = self.tail(name, 10)
            if tail:
                print(f"--- {name} (last lines) ---\n{tail}", file=sys.stderr)

    def stop(self, grace: float = 5.0) -> None:
        # bots first (they drain), then the referee; each whole process group
        order = sorted(self.procs, key=lambda name: name == "referee")
        _signal_all([self.procs[name] for name in order], signal.SIGTERM)
        deadline = time.monotonic() + grace
        for name in order:
            proc = self.procs[name]
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_all([proc], signal.SIGKILL)
                proc.wait()
        for f in self._files:
            f.close()
        self._files.clear()

    def remove_logs(self) -> None:
        import shutil

        shutil.rmtree(self.logs, ignore_errors=True)


def _signal_all(procs: Sequence[subprocess.Popen[bytes]], sig: int) -> None:
    for proc in procs:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, sig)  # the child leads its own group (start_new_session)
            except ProcessLookupError:
                pass

