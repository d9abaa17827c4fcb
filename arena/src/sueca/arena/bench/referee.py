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

Two more shapes, each with its own baseline in the same run:

- ``--sessions N``: N simulated bots (:mod:`sueca.arena.bench.simbots`), each its own registered
  name, session and TCP connection, on one referee: its RSS with none and with N idle sessions,
  then the matches over the N sessions, then the same matches over ``--baseline-sessions``.
- ``--replicas 2``: two referees on one Redis, every ``sueca-bot run`` process connected to both
  (``--server A,B``); the matches on one referee, then spread over both, alternated in rounds.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sueca.arena.bench import cpu_seconds, measured

RTT_METRIC = "sueca_referee_move_rtt_seconds"
MAX_SESSIONS = 5000
MOVES_METRIC = "sueca_referee_moves_total"
_ARENA = [sys.executable, "-m", "sueca.arena.cli"]
_BOT = [sys.executable, "-c", "import sys; from sueca.sdk.cli import main; sys.exit(main())"]


#: Simulated sessions per simulator process by default. On 2 cores shared with the referee a
#: simulator waits for a CPU now and then, and its sessions' answers wait with it; 4 processes
#: of 250 sessions gave a 1,000-session p99 of 39.5-78.1 ms (3 runs of 5 under 50), 2 of 500
#: gave 55.6-59.4 ms (README, issue 13).
SESSIONS_PER_SIMULATOR = 250


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from sueca.sdk.cli import Bounded

    # The defaults are the arena's shape: a bot is one process holding many games (capacity),
    # and a referee runs many matches at once, so every message carries a batch of turns. Two
    # bot processes, not one per seat: on a small machine (2 cores) more processes than cores
    # only split the batches (measured on 2 cores: 4 processes gave half the moves/s of 2).
    parser.add_argument("--matches", action=Bounded, kind=int, low=1, default=512,
                        help="matches to play (default 512)")
    parser.add_argument("--bot-processes", action=Bounded, kind=int, low=1, default=None,
                        help="`sueca-bot run BOT` processes (default 2); with --sessions, "
                             "simulator processes (default: one per "
                             f"{SESSIONS_PER_SIMULATOR} sessions, at least 2)")
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
    scale = parser.add_argument_group(
        "scale", "--sessions N: N simulated bot sessions (each its own bot and connection) from "
        "--bot-processes light processes, then the same matches over --baseline-sessions; "
        "--replicas 2: two referees, every bot process connected to both, matches on one, "
        "then on both")
    scale.add_argument("--sessions", action=Bounded, kind=int, low=1, high=MAX_SESSIONS,
                       default=None,
                       help="simulated bot sessions, one registered bot each (default: off, "
                            "`sueca-bot run` processes instead)")
    scale.add_argument("--baseline-sessions", action=Bounded, kind=int, low=1, default=8,
                       help="sessions of the same-run baseline of --sessions (default 8)")
    scale.add_argument("--replicas", action=Bounded, kind=int, low=1, high=2, default=1,
                       help="referees (2: throughput of two replicas against one, same run)")
    scale.add_argument("--rounds", action=Bounded, kind=int, low=1, default=1,
                       help="with --replicas 2: rounds of (one referee, two referees), "
                            "alternated (default 1)")


def bot_processes(sessions: int | None, baseline_sessions: int) -> int:
    """The default --bot-processes: 2, or with --sessions one simulator per
    SESSIONS_PER_SIMULATOR sessions (at least 2, at most the baseline's sessions)."""
    if sessions is None:
        return 2
    return max(1, min(baseline_sessions, sessions,
                      max(2, math.ceil(sessions / SESSIONS_PER_SIMULATOR))))


def run(args: argparse.Namespace) -> int:
    if args.sessions is not None and args.replicas > 1:
        print("bench referee: give --sessions or --replicas 2, not both", file=sys.stderr)
        return 2
    if args.bot_processes is None:
        args.bot_processes = bot_processes(args.sessions, args.baseline_sessions)
    if args.sessions is not None:
        few = min(args.baseline_sessions, args.sessions)
        if args.sessions < 4 or args.bot_processes > few:
            print(f"bench referee: need --sessions >= 4 (one match seats 4) and "
                  f"--bot-processes <= --baseline-sessions and --sessions, got --sessions "
                  f"{args.sessions}, --bot-processes {args.bot_processes}, --baseline-sessions "
                  f"{args.baseline_sessions}", file=sys.stderr)
            return 2
        return _report_sessions(measured("referee", measure_sessions, args))
    if args.replicas > 1:
        return _report_replicas(measured("referee", measure_replicas, args))
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

    with _private_arena(args.keep_logs) as (fleet, redis):
        names = [f"bench-{k}" for k in range(n_bots)]
        tokens = _register(redis.url, names)
        address, metrics_port = _start_referee(fleet, "referee", redis.url)
        threads = [] if args.bot_threads is None else ["--threads", str(args.bot_threads)]
        for k in range(procs_n):
            name = names[k % n_bots]
            fleet.start(f"bot-{k}", [*_BOT, "run", args.bot, "--server", address,
                                     "--token", tokens[name], "--capacity", str(capacity),
                                     *threads])
        _wait_for_sessions(address, names, procs_n, fleet)
        # who spends the CPU: this process (the scheduler), the referee, the bot processes
        groups = {"driver": [os.getpid()], "referee": [fleet.procs["referee"].pid],
                  "bots": [fleet.procs[f"bot-{k}"].pid for k in range(procs_n)]}
        before = _scrape(metrics_port)
        try:
            split0: dict[str, float] | None = {g: cpu_seconds(*p) for g, p in groups.items()}
        except OSError:  # no /proc: no CPU figure
            split0 = None
        played = _play(address, names, n, conc, args.move_ms, args.match_timeout, fleet)
        split = (None if split0 is None else
                 {g: cpu_seconds(*p) - split0[g] for g, p in groups.items()})
        after = _scrape(metrics_port)

    # the baseline runs alone, after the referee and the bots have stopped
    pingpong = bench_pingpong.measure(seconds=args.pingpong_seconds,
                                      streams=args.pingpong_streams or conc, warmup=0.5)
    figures = _figures(played, before, after)
    secs = played["seconds"]
    pp = pingpong["round_trips_per_s"]
    # CPU of every process of the run (this one, the referee, the bots) per move: steadier
    # than moves/s on a shared machine; cpu_ratio = ping-pong's CPU per round trip / this
    cpu_move = (None if split is None or not played["moves"]
                else sum(split.values()) / played["moves"] * 1e6)
    pp_cpu = pingpong.get("cpu_us_per_round_trip")
    return {
        "matches": n, **figures,
        "bot_processes": procs_n, "bots": n_bots, "concurrency": conc, "capacity": capacity,
        "bot": args.bot, "bot_threads": args.bot_threads,
        "deals_per_s": round(played["deals"] / secs, 2) if secs > 0 else 0.0,
        "referee_moves_metric": _counter_delta(before, after, MOVES_METRIC),
        "pingpong_round_trips_per_s": pp, "pingpong_streams": pingpong["streams"],
        "ratio": round(figures["moves_per_s"] / pp, 3) if pp else None,
        "cpu_us_per_move": None if cpu_move is None else round(cpu_move, 2),
        "pingpong_cpu_us_per_round_trip": pp_cpu,
        "cpu_ratio": round(pp_cpu / cpu_move, 3) if pp_cpu and cpu_move else None,
        # cores each part kept busy while the matches ran (1.0 = one core all the time), and
        # its CPU per move: the part near 1.0 is the single-threaded bottleneck
        "cpu_share": None if split is None or secs <= 0 else
        {g: round(c / secs, 3) for g, c in split.items()},
        "cpu_us_per_move_by_process": None if split is None or not played["moves"] else
        {g: round(c / played["moves"] * 1e6, 2) for g, c in split.items()},
        "load_average": [round(x, 2) for x in os.getloadavg()],
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
                       timeout: float = 30.0, at_most: bool = False) -> None:
    """Until ``names`` hold at least ``sessions`` sessions on the referee (``at_most``: at most,
    e.g. 0 once their processes have stopped)."""
    from sueca.referee.control import list_bots

    wanted = set(names)
    deadline = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < deadline:
        fleet.check()
        seen = sum(b["sessions"] for b in list_bots(address) if b["bot"] in wanted)
        if (seen <= sessions) if at_most else (seen >= sessions):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{seen} bot sessions connected after {timeout:.0f}s, waiting for "
                       f"{'at most' if at_most else 'at least'} {sessions}")


def _play(address: str | Sequence[str], names: Sequence[str], n: int, conc: int, move_ms: int,
          timeout: float, fleet: _Fleet,
          seats: Callable[[int], list[str]] | None = None, label: str = "matches",
          ) -> dict[str, Any]:
    """Play ``n`` matches, ``conc`` at once; match i goes to ``address`` (or the i-th of several,
    round robin) and seats ``seats(i)`` (default: ``names`` rotated by i)."""
    import asyncio
    import random

    import grpc

    from sueca.arena.render import progress
    from sueca.referee.control import _OPTIONS, MatchAborted, run_match_async

    addresses = [address] if isinstance(address, str) else list(address)
    if seats is None:
        def seats(i: int) -> list[str]:
            return [names[(i + j) % len(names)] for j in range(4)]

    run_id = uuid.uuid4().hex[:8]
    base_seed = random.getrandbits(48)
    totals: dict[str, Any] = {"moves": 0, "deals": 0, "failed": 0, "ends": Counter(),
                              "abnormal": 0, "skipped": 0, "first_error": None,
                              "durations": []}
    # random bots never fault: after this many faulted or failed matches, stop scheduling
    stop_after = max(4, conc)

    async def one(i: int, channel: grpc.aio.Channel) -> None:
        if totals["abnormal"] >= stop_after:
            totals["skipped"] += 1  # the system is broken: do not wait out every timeout
            return
        # quiet: only the result comes back, as a scheduler asks; no per-card control events
        spec = {"match_id": f"bench-{run_id}-{i}", "bots": seats(i),
                "seed": base_seed + i, "move_ms": move_ms, "bank_ms": move_ms,
                "grace_ms": 2000, "quiet": True}
        result: dict[str, Any] | None = None
        error: Exception | None = None
        started = time.perf_counter()
        try:
            result = await run_match_async(channel, addresses[i % len(addresses)], spec,
                                           timeout=timeout)
        except MatchAborted as err:  # its moves were played: counted, and reported as failed
            result, error = err.result, err
        except Exception as err:
            error = err
        if result is not None:
            totals["durations"].append(time.perf_counter() - started)
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
        per = max(1, min(4, conc // 32))
        channels = [[grpc.aio.insecure_channel(a, options=_OPTIONS) for _ in range(per)]
                    for a in addresses]
        queue = iter(range(n))

        async def worker(k: int) -> None:
            for i in queue:
                await one(i, channels[i % len(addresses)][k % per])
                advance(1)

        try:
            start = time.perf_counter()
            await asyncio.gather(*(worker(k) for k in range(min(conc, n))))
            return time.perf_counter() - start
        finally:
            for cs in channels:
                for c in cs:
                    await c.close()

    with progress(n, label) as advance:
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


# --- --sessions: many simulated bot sessions on one referee ----------------------------------

_SIMBOTS = [sys.executable, "-m", "sueca.arena.bench.simbots"]
# The referee's documented limits that a thousand bots on one loopback address would hit: they
# exist for bots spread over many addresses (README "Threat model and per-bot limits").
IDLE_SECONDS = 3.0  # sessions connected and idle before the referee's RSS is read
LOOPBACK_LIMITS = ["--connections-per-address", "0", "--hellos-per-second", "0"]


def measure_sessions(args: argparse.Namespace) -> dict[str, Any]:
    """``--sessions N``: N simulated bots (one registered name, one session and one TCP
    connection each, see :mod:`sueca.arena.bench.simbots`) on one fresh referee. Its RSS is read
    with none and then N idle sessions connected; then the matches are played over the N
    sessions (match i seats bots 4i..4i+3 mod N: with N = 4 x concurrency, one game per
    session), then the same matches over ``--baseline-sessions`` sessions (each then holds
    many games, so turns and answers travel in batches), on the same referee."""
    from sueca.sdk.channels import drop_tls_settings

    drop_tls_settings()
    n_sessions, n, conc = args.sessions, args.matches, args.concurrency
    base_sessions = min(args.baseline_sessions, n_sessions)  # checked by run()
    load = [round(x, 2) for x in os.getloadavg()]
    with _private_arena(args.keep_logs) as (fleet, redis):
        names = [f"sim-{k}" for k in range(n_sessions)]
        _progress(f"registering {n_sessions} bots")
        tokens = _register(redis.url, names)
        token_file = fleet.logs / "tokens.json"
        token_file.write_text(json.dumps([[name, tokens[name]] for name in names]))
        token_file.chmod(0o600)
        address, metrics_port = _start_referee(fleet, "referee", redis.url, LOOPBACK_LIMITS)
        pid = fleet.procs["referee"].pid
        time.sleep(1.0)  # let the fresh referee settle before its RSS with no session
        rss_none = _rss_kb(pid)
        # big phase: every session its own bot; capacity never the limit
        capacity = min(10_000, 4 * conc)
        sims = _start_simbots(fleet, "sim", address, token_file, n_sessions,
                              args.bot_processes, capacity)
        t0 = time.monotonic()
        _wait_for_sessions(address, names, n_sessions, fleet, timeout=30 + n_sessions / 20)
        connect_s = time.monotonic() - t0
        _progress(f"{n_sessions} sessions connected in {connect_s:.1f}s")
        idle_cpu = cpu_seconds(pid)
        time.sleep(IDLE_SECONDS)  # the sessions idle: keepalives and heartbeats only
        idle_cpu = (cpu_seconds(pid) - idle_cpu) / IDLE_SECONDS
        rss_idle = _rss_kb(pid)
        connections = _established(int(address.rpartition(":")[2]))
        big = _phase(address, metrics_port, pid, names, n, conc, args, fleet, sims,
                     lambda i: [names[(4 * i + s) % n_sessions] for s in range(4)],
                     f"{n_sessions} sessions")
        big["connect_seconds"] = round(connect_s, 2)
        big["simbots"] = _stop_simbots(fleet, sims)
        _wait_for_sessions(address, names, 0, fleet, at_most=True)
        # baseline: the same matches over a few sessions, same referee, same run
        few = names[:base_sessions]
        sims = _start_simbots(fleet, "base", address, token_file, base_sessions,
                              args.bot_processes, capacity)
        _wait_for_sessions(address, few, base_sessions, fleet)
        base = _phase(address, metrics_port, pid, few, n, conc, args, fleet, sims,
                      lambda i: [few[(4 * i + s) % base_sessions] for s in range(4)],
                      f"{base_sessions} sessions")
        base["simbots"] = _stop_simbots(fleet, sims)
        peak = _rss_kb(pid, "VmHWM")

    per_session = (rss_idle - rss_none) / n_sessions
    result = {
        "sessions": n_sessions, "matches": n, "concurrency": conc,
        "bot_processes": args.bot_processes, "capacity": capacity,
        **{k: v for k, v in big.items() if k != "simbots"},
        "simbots": big["simbots"],
        "referee_connections": connections,
        "referee_idle_cpu_share": round(idle_cpu, 4),
        "referee_rss_kb_no_session": rss_none, "referee_rss_kb_idle_sessions": rss_idle,
        "rss_per_idle_session_kb": round(per_session, 2),
        "referee_peak_rss_kb": peak,
        "baseline": {"sessions": base_sessions, **base},
        "ratio": (round(big["moves_per_s"] / base["moves_per_s"], 3)
                  if base["moves_per_s"] else None),
        "load_average_start": load, "load_average_end": [round(x, 2) for x in os.getloadavg()],
    }
    return result


def _phase(address: str, metrics_port: int, pid: int, names: Sequence[str], n: int, conc: int,
           args: argparse.Namespace, fleet: _Fleet, sims: Sequence[str],
           seats: Callable[[int], list[str]], label: str) -> dict[str, Any]:
    """Play the matches once, with the referee's histogram, faults and CPU (and the simulators'
    CPU) read around them."""
    before = _scrape(metrics_port)
    sim_pids = [fleet.procs[s].pid for s in sims]
    cpu0, sim0 = cpu_seconds(pid), cpu_seconds(*sim_pids)
    played = _play(address, names, n, conc, args.move_ms, args.match_timeout, fleet,
                   seats=seats, label=label)
    cpu, sim_cpu = cpu_seconds(pid) - cpu0, cpu_seconds(*sim_pids) - sim0
    after = _scrape(metrics_port)
    out = _figures(played, before, after)
    moves, secs = played["moves"], played["seconds"]
    out["referee_cpu_share"] = round(cpu / secs, 3) if secs else None
    out["referee_cpu_us_per_move"] = round(cpu / moves * 1e6, 1) if moves else None
    out["simbots_cpu_us_per_move"] = round(sim_cpu / moves * 1e6, 1) if moves else None
    _progress(f"{label}: {out['moves_per_s']:.0f} moves/s, move rtt p99 "
              f"{out['move_rtt_p99_ms']} ms, referee {out['referee_cpu_share']} of a core")
    return out


def _figures(played: Mapping[str, Any], before: Samples, after: Samples) -> dict[str, Any]:
    """The JSON figures of one batch of matches (from :func:`_play` and two scrapes)."""
    rtt = _histogram_delta(before, after, RTT_METRIC)
    secs = played["seconds"]
    return {
        "failed": played["failed"], "skipped": played["skipped"],
        "abnormal": played["abnormal"], "ends": played["ends"],
        "faults": _faults(before, after), "first_error": played["first_error"],
        "moves": played["moves"], "deals": played["deals"], "seconds": round(secs, 3),
        "moves_per_s": round(played["moves"] / secs, 1) if secs > 0 else 0.0,
        "matches_per_s": round(sum(played["ends"].values()) / secs, 3) if secs > 0 else 0.0,
        "move_rtt_p50_ms": _ms(_quantile(rtt, 0.50)),
        "move_rtt_p99_ms": _ms(_quantile(rtt, 0.99)),
        "move_rtt_samples": int(rtt[-1][1]) if rtt else 0,
        "match_seconds_p50": _nearest(played["durations"], 0.50),
        "match_seconds_max": _nearest(played["durations"], 1.0),
    }


def _nearest(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank quantile, rounded to ms (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered), max(1, math.ceil(q * len(ordered)))) - 1], 3)


def _start_referee(fleet: _Fleet, name: str, redis_url: str,
                   extra: Sequence[str] = ()) -> tuple[str, int]:
    """Start a referee on free ports; (its address, its metrics port) once it serves."""
    from sueca.arena.redisproc import free_port

    port = free_port()
    metrics_port = free_port()
    while metrics_port == port:
        metrics_port = free_port()
    address = f"127.0.0.1:{port}"
    fleet.start(name, [*_ARENA, "referee", "--port", str(port), "--operator-port", "0",
                       "--metrics-port", str(metrics_port), "--redis", redis_url, *extra])
    _wait_for_referee(address, fleet)
    return address, metrics_port


def _start_simbots(fleet: _Fleet, prefix: str, address: str, token_file: Path, sessions: int,
                   processes: int, capacity: int) -> list[str]:
    """``processes`` simulator processes sharing the first ``sessions`` bots evenly."""
    started = []
    for k in range(processes):
        first, last = sessions * k // processes, sessions * (k + 1) // processes
        name = f"{prefix}-{k}"
        fleet.start(name, [*_SIMBOTS, "--server", address, "--tokens", str(token_file),
                           "--first", str(first), "--count", str(last - first),
                           "--capacity", str(capacity)])
        started.append(name)
    _progress(f"{processes} simulator process(es), {sessions} sessions connecting")
    return started


def _stop_simbots(fleet: _Fleet, sims: Sequence[str]) -> dict[str, Any]:
    """Stop the simulators; their summed report (the last JSON line each printed)."""
    fleet.stop(grace=20.0, only=sims)
    total: dict[str, Any] = {"welcomed": 0, "turns": 0, "messages_in": 0, "messages_out": 0,
                             "errors": 0, "broken": 0, "first_error": None}
    for name in sims:
        lines = fleet.tail(name, 3).splitlines()
        try:
            report = json.loads(lines[-1])["simbots"]
        except (IndexError, ValueError, KeyError):
            raise RuntimeError(f"simulator {name} gave no report: {fleet.tail(name)}") from None
        for key in ("welcomed", "turns", "messages_in", "messages_out", "errors", "broken"):
            total[key] += report[key]
        total["first_error"] = total["first_error"] or report["first_error"]
    return total


def _rss_kb(pid: int, field: str = "VmRSS") -> int:
    """A process's resident memory (or its peak, ``VmHWM``) in KiB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


def _established(port: int) -> int:
    """Established TCP connections to local ``port`` (this machine's /proc/net/tcp*): the
    sessions really are separate connections, not streams sharing a few."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "01" and int(fields[1].rpartition(":")[2], 16) == port:
                count += 1
    return count


def _progress(line: str, kind: str = "referee") -> None:
    print(f"bench {kind}: {line}", file=sys.stderr, flush=True)


def _report_sessions(result: dict[str, Any] | None) -> int:
    if result is None:
        return 1
    base = result["baseline"]
    print(f"referee, {result['sessions']} sessions, {result['concurrency']} matches at once: "
          f"{result['moves_per_s']:.0f} moves/s, move rtt p50 {result['move_rtt_p50_ms']} ms "
          f"p99 {result['move_rtt_p99_ms']} ms, faults {result['faults']}; "
          f"{result['rss_per_idle_session_kb']} KB per idle session; baseline "
          f"{base['sessions']} sessions: {base['moves_per_s']:.0f} moves/s, p99 "
          f"{base['move_rtt_p99_ms']} ms; ratio {result['ratio']}", flush=True)
    return _verdict(result, [result, base])


def _verdict(result: Mapping[str, Any], batches: Sequence[Mapping[str, Any]]) -> int:
    """The end of a bench run: a warning line per thing that went wrong in any of ``batches``,
    the JSON last, and exit status 1 when anything did (the figures are then not to be
    trusted)."""
    bad = [line for figures in batches for line in _broken(figures)]
    for line in bad:
        print(f"warning: {line}", file=sys.stderr, flush=True)
    print(json.dumps(result), flush=True)
    return 1 if bad else 0


def _broken(figures: Mapping[str, Any]) -> list[str]:
    """What went wrong in one batch of matches (random play never faults)."""
    out = []
    if figures["abnormal"] or figures["faults"]:
        out.append(f"{figures['abnormal']} match(es) failed or ended by a fault, "
                   f"{figures['skipped']} not played, referee faults {figures['faults']}; "
                   f"first: {figures['first_error']}")
    sims = figures.get("simbots")
    if sims and (sims["errors"] or sims["broken"]):
        out.append(f"simulated bots: {sims['errors']} ActionErrors, {sims['broken']} broken "
                   f"streams; first: {sims['first_error']}")
    return out


# --- --replicas 2: two referees, the SDK connected to both -----------------------------------

def measure_replicas(args: argparse.Namespace) -> dict[str, Any]:
    """Two referees on one Redis; ``--bot-processes`` ``sueca-bot run`` processes, each given
    both addresses (``--server A,B``: one session per referee). The same matches are played on
    one referee, then spread over both (match i on referee i mod 2), ``--rounds`` times each,
    alternated, with the same bot processes: the ratio is the second's moves/s to the first's."""
    from sueca.sdk.channels import drop_tls_settings

    drop_tls_settings()
    n, procs_n, conc = args.matches, args.bot_processes, args.concurrency
    n_bots = args.bots or (procs_n if procs_n >= 4 else 1)
    if not 1 <= n_bots <= procs_n:
        raise ValueError(f"--bots must be between 1 and --bot-processes ({procs_n}), not {n_bots}")
    capacity = args.capacity or 4 * conc
    load = [round(x, 2) for x in os.getloadavg()]
    rounds: list[dict[str, Any]] = []
    with _private_arena(args.keep_logs) as (fleet, redis):
        names = [f"bench-{k}" for k in range(n_bots)]
        tokens = _register(redis.url, names)
        referees = [_start_referee(fleet, f"referee-{k}", redis.url) for k in range(2)]
        addresses = [a for a, _ in referees]
        threads = [] if args.bot_threads is None else ["--threads", str(args.bot_threads)]
        bots = []
        for k in range(procs_n):
            fleet.start(f"bot-{k}", [*_BOT, "run", args.bot, "--server", ",".join(addresses),
                                     "--token", tokens[names[k % n_bots]], "--capacity",
                                     str(capacity), *threads])
            bots.append(f"bot-{k}")
        for a in addresses:
            _wait_for_sessions(a, names, procs_n, fleet)
        _progress(f"2 referees, {procs_n} bot process(es) connected to both")
        pids = [fleet.procs[f"referee-{k}"].pid for k in range(2)]
        bot_pids = [fleet.procs[b].pid for b in bots]
        for r in range(args.rounds):
            for used in (1, 2):
                before = [_scrape(m) for _, m in referees[:used]]
                cpu0 = [cpu_seconds(p) for p in pids]
                bot0 = cpu_seconds(*bot_pids)
                played = _play(addresses[:used], names, n, conc, args.move_ms,
                               args.match_timeout, fleet,
                               label=f"round {r + 1}, {used} referee(s)")
                cpu = [cpu_seconds(p) - c for p, c in zip(pids, cpu0, strict=True)]
                bot_cpu = cpu_seconds(*bot_pids) - bot0
                after = [_scrape(m) for _, m in referees[:used]]
                figures = _figures(played, _merged(before), _merged(after))
                secs = played["seconds"]
                figures.update(round=r + 1, replicas=used,
                               referee_moves=[_counter_delta(b, a, MOVES_METRIC) for b, a
                                              in zip(before, after, strict=True)],
                               referee_cpu_share=[round(c / secs, 3) for c in cpu],
                               bot_cpu_share=round(bot_cpu / secs, 3))
                _progress(f"round {r + 1}, {used} referee(s): {figures['moves_per_s']:.0f} "
                          f"moves/s, p99 {figures['move_rtt_p99_ms']} ms")
                rounds.append(figures)

    one = [f["moves_per_s"] for f in rounds if f["replicas"] == 1]
    two = [f["moves_per_s"] for f in rounds if f["replicas"] == 2]
    ratios = [round(b / a, 3) if a else None for a, b in zip(one, two, strict=True)]
    return {
        "replicas": 2, "matches": n, "concurrency": conc, "bot_processes": procs_n,
        "bots": n_bots, "capacity": capacity, "rounds": rounds,
        "moves_per_s_one": one, "moves_per_s_two": two, "ratios": ratios,
        "ratio": round(statistics.median(r for r in ratios if r is not None), 3) if any(ratios)
        else None,
        "abnormal": sum(f["abnormal"] for f in rounds),
        "faults": _sum_faults(f["faults"] for f in rounds),
        "move_rtt_p99_ms": max((f["move_rtt_p99_ms"] or 0.0) for f in rounds),
        "load_average_start": load, "load_average_end": [round(x, 2) for x in os.getloadavg()],
    }


def _merged(scrapes: Sequence[Samples]) -> Samples:
    """Several referees' samples summed, as one referee's."""
    out: Samples = {}
    for samples in scrapes:
        for key, value in samples.items():
            out[key] = out.get(key, 0.0) + value
    return out


def _sum_faults(many: Any) -> dict[str, int]:
    out: Counter[str] = Counter()
    for faults in many:
        out.update(faults)
    return dict(out)


def _report_replicas(result: dict[str, Any] | None) -> int:
    if result is None:
        return 1
    print(f"referee replicas: one {result['moves_per_s_one']} moves/s, two "
          f"{result['moves_per_s_two']} moves/s; ratio (median) {result['ratio']}", flush=True)
    return _verdict(result, result["rounds"])


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

@contextmanager
def _private_arena(keep_logs: bool = False) -> Iterator[tuple[_Fleet, Any]]:
    """A started private Redis and an empty fleet; on the way out (failure or not) every child
    is stopped (a failure first prints their logs' last lines), then Redis, and the logs are
    removed unless ``keep_logs``."""
    from sueca.arena.redisproc import RedisServer

    fleet = _Fleet(Path(tempfile.mkdtemp(prefix="sueca-bench-")))
    redis = RedisServer()
    try:
        redis.start()
        yield fleet, redis
    except BaseException:
        fleet.dump_tails()
        raise
    finally:
        fleet.stop()
        redis.stop()
        if not keep_logs:
            fleet.remove_logs()
        else:
            print(f"logs kept in {fleet.logs}", file=sys.stderr)


class _Fleet:
    """The child processes of one run, each in its own process group with a log file."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self._files: list[Any] = []

    def start(self, name: str, argv: Sequence[str], env: Mapping[str, str] | None = None
              ) -> None:
        """Start ``argv`` as child ``name``, with this environment plus ``env``."""
        log = open(self.logs / f"{name}.log", "wb")
        self._files.append(log)
        self.procs[name] = subprocess.Popen(
            list(argv), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}, start_new_session=True)

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

    def stop(self, grace: float = 5.0, only: Sequence[str] | None = None) -> None:
        """Stop every child (or those named in ``only``, which then leave the fleet: their logs
        stay); bots first (they drain), then referees; each whole process group."""
        chosen = list(self.procs) if only is None else [n for n in only if n in self.procs]
        order = sorted(chosen, key=lambda name: name.startswith("referee"))
        _signal_all([self.procs[name] for name in order], signal.SIGTERM)
        deadline = time.monotonic() + grace
        for name in order:
            proc = self.procs[name]
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_all([proc], signal.SIGKILL)
                proc.wait()
        if only is not None:
            for name in order:
                del self.procs[name]
            return
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

