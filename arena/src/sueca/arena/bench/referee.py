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
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sueca.arena.bench import cpu_seconds, measured
from sueca.arena.bench import pingpong as bench_pingpong
from sueca.arena.bench.fleet import (
    BOT,
    private_arena,
    register,
    rss_kb,
    scrape_port,
    start_referee,
    stop_all,
    wait_for_sessions,
)
from sueca.arena.bench.matches import (
    MOVES_METRIC,
    batch_figures,
    play,
    progress,
    sum_faults,
    verdict,
)
from sueca.arena.processes import Supervisor
from sueca.arena.promscrape import counter_delta, merged
from sueca.sdk.channels import drop_tls_settings
from sueca.sdk.cli import Bounded

MAX_SESSIONS = 5000


#: Simulated sessions per simulator process by default. On 2 cores shared with the referee a
#: simulator waits for a CPU now and then, and its sessions' answers wait with it: with 1,000
#: sessions, 4 processes of 250 give a p99 of about 40-80 ms, 2 of 500 about 56-60 ms
#: (docs/benchmarks.md, "referee --sessions").
SESSIONS_PER_SIMULATOR = 250


def add_arguments(parser: argparse.ArgumentParser) -> None:
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
    drop_tls_settings()  # its own referee is plaintext on loopback
    n, procs_n, conc = args.matches, args.bot_processes, args.concurrency
    if n < 1 or procs_n < 1 or conc < 1:
        raise ValueError(f"need --matches, --bot-processes and --concurrency >= 1, got "
                         f"{n}, {procs_n}, {conc}")
    n_bots = args.bots or (procs_n if procs_n >= 4 else 1)
    if not 1 <= n_bots <= procs_n:
        raise ValueError(f"--bots must be between 1 and --bot-processes ({procs_n}), not {n_bots}")
    capacity = args.capacity or 4 * conc

    with private_arena(args.keep_logs) as (fleet, redis):
        names = [f"bench-{k}" for k in range(n_bots)]
        tokens = register(redis.url, names)
        address, metrics_port = start_referee(fleet, "referee", redis.url)
        threads = [] if args.bot_threads is None else ["--threads", str(args.bot_threads)]
        for k in range(procs_n):
            name = names[k % n_bots]
            fleet.start(f"bot-{k}", [*BOT, "run", args.bot, "--server", address,
                                     "--token", tokens[name], "--capacity", str(capacity),
                                     *threads])
        wait_for_sessions(address, names, procs_n, fleet)
        # who spends the CPU: this process (the scheduler), the referee, the bot processes
        groups = {"driver": [os.getpid()], "referee": [fleet["referee"].pid],
                  "bots": [fleet[f"bot-{k}"].pid for k in range(procs_n)]}
        before = scrape_port(metrics_port)
        try:
            split0: dict[str, float] | None = {g: cpu_seconds(*p) for g, p in groups.items()}
        except OSError:  # no /proc: no CPU figure
            split0 = None
        played = play(address, names, n=n, conc=conc, move_ms=args.move_ms,
                      timeout=args.match_timeout, fleet=fleet)
        split = (None if split0 is None else
                 {g: cpu_seconds(*p) - split0[g] for g, p in groups.items()})
        after = scrape_port(metrics_port)

    # the baseline runs alone, after the referee and the bots have stopped
    pingpong = bench_pingpong.measure(seconds=args.pingpong_seconds,
                                      streams=args.pingpong_streams or conc, warmup=0.5)
    figures = batch_figures(played, before, after)
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
        "referee_moves_metric": counter_delta(before, after, MOVES_METRIC),
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


# --- --sessions: many simulated bot sessions on one referee ----------------------------------

_SIMBOTS = [sys.executable, "-m", "sueca.arena.bench.simbots"]
# The referee's documented limits that a thousand bots on one loopback address would hit: they
# exist for bots spread over many addresses (docs/protocol.md, "Threat model and per-bot limits").
IDLE_SECONDS = 3.0  # sessions connected and idle before the referee's RSS is read
LOOPBACK_LIMITS = ["--connections-per-address", "0", "--hellos-per-second", "0"]


def measure_sessions(args: argparse.Namespace) -> dict[str, Any]:
    """``--sessions N``: N simulated bots (one registered name, one session and one TCP
    connection each, see :mod:`sueca.arena.bench.simbots`) on one fresh referee. Its RSS is read
    with none and then N idle sessions connected; then the matches are played over the N
    sessions (match i seats bots 4i..4i+3 mod N: with N = 4 x concurrency, one game per
    session), then the same matches over ``--baseline-sessions`` sessions (each then holds
    many games, so turns and answers travel in batches), on the same referee."""
    drop_tls_settings()
    n_sessions, n, conc = args.sessions, args.matches, args.concurrency
    base_sessions = min(args.baseline_sessions, n_sessions)  # checked by run()
    load = [round(x, 2) for x in os.getloadavg()]
    with private_arena(args.keep_logs) as (fleet, redis):
        names = [f"sim-{k}" for k in range(n_sessions)]
        progress(f"registering {n_sessions} bots")
        tokens = register(redis.url, names)
        token_file = fleet.logs / "tokens.json"
        token_file.write_text(json.dumps([[name, tokens[name]] for name in names]))
        token_file.chmod(0o600)
        address, metrics_port = start_referee(fleet, "referee", redis.url, LOOPBACK_LIMITS)
        pid = fleet["referee"].pid
        time.sleep(1.0)  # let the fresh referee settle before its RSS with no session
        rss_none = rss_kb(pid)
        # big phase: every session its own bot; capacity never the limit
        capacity = min(10_000, 4 * conc)
        sims = _start_simbots(fleet, "sim", address, token_file, n_sessions,
                              args.bot_processes, capacity)
        t0 = time.monotonic()
        wait_for_sessions(address, names, n_sessions, fleet, timeout=30 + n_sessions / 20)
        connect_s = time.monotonic() - t0
        progress(f"{n_sessions} sessions connected in {connect_s:.1f}s")
        idle_cpu = cpu_seconds(pid)
        time.sleep(IDLE_SECONDS)  # the sessions idle: keepalives and heartbeats only
        idle_cpu = (cpu_seconds(pid) - idle_cpu) / IDLE_SECONDS
        rss_idle = rss_kb(pid)
        connections = _established(int(address.rpartition(":")[2]))
        big = _phase(address, metrics_port, pid, names, n, conc, args, fleet, sims,
                     lambda i: [names[(4 * i + s) % n_sessions] for s in range(4)],
                     f"{n_sessions} sessions")
        big["connect_seconds"] = round(connect_s, 2)
        big["simbots"] = _stop_simbots(fleet, sims)
        wait_for_sessions(address, names, 0, fleet, at_most=True)
        # baseline: the same matches over a few sessions, same referee, same run
        few = names[:base_sessions]
        sims = _start_simbots(fleet, "base", address, token_file, base_sessions,
                              args.bot_processes, capacity)
        wait_for_sessions(address, few, base_sessions, fleet)
        base = _phase(address, metrics_port, pid, few, n, conc, args, fleet, sims,
                      lambda i: [few[(4 * i + s) % base_sessions] for s in range(4)],
                      f"{base_sessions} sessions")
        base["simbots"] = _stop_simbots(fleet, sims)
        peak = rss_kb(pid, "VmHWM")

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
           args: argparse.Namespace, fleet: Supervisor, sims: Sequence[str],
           seats: Callable[[int], list[str]], label: str) -> dict[str, Any]:
    """Play the matches once, with the referee's histogram, faults and CPU (and the simulators'
    CPU) read around them."""
    before = scrape_port(metrics_port)
    sim_pids = [fleet[s].pid for s in sims]
    cpu0, sim0 = cpu_seconds(pid), cpu_seconds(*sim_pids)
    played = play(address, names, n=n, conc=conc, move_ms=args.move_ms,
                  timeout=args.match_timeout, fleet=fleet, seats=seats, label=label)
    cpu, sim_cpu = cpu_seconds(pid) - cpu0, cpu_seconds(*sim_pids) - sim0
    after = scrape_port(metrics_port)
    out = batch_figures(played, before, after)
    moves, secs = played["moves"], played["seconds"]
    out["referee_cpu_share"] = round(cpu / secs, 3) if secs else None
    out["referee_cpu_us_per_move"] = round(cpu / moves * 1e6, 1) if moves else None
    out["simbots_cpu_us_per_move"] = round(sim_cpu / moves * 1e6, 1) if moves else None
    progress(f"{label}: {out['moves_per_s']:.0f} moves/s, move rtt p99 "
              f"{out['move_rtt_p99_ms']} ms, referee {out['referee_cpu_share']} of a core")
    return out


def _start_simbots(fleet: Supervisor, prefix: str, address: str, token_file: Path, sessions: int,
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
    progress(f"{processes} simulator process(es), {sessions} sessions connecting")
    return started


def _stop_simbots(fleet: Supervisor, sims: Sequence[str]) -> dict[str, Any]:
    """Stop the simulators; their summed report (the last JSON line each printed)."""
    children = [fleet[name] for name in sims]
    stop_all(fleet, sims, grace=20.0)
    total: dict[str, Any] = {"welcomed": 0, "turns": 0, "messages_in": 0, "messages_out": 0,
                             "errors": 0, "broken": 0, "first_error": None}
    for child in children:
        lines = child.tail(3).splitlines()
        try:
            report = json.loads(lines[-1])["simbots"]
        except (IndexError, ValueError, KeyError):
            raise RuntimeError(f"simulator {child.name} gave no report: "
                               f"{child.tail(15)}") from None
        for key in ("welcomed", "turns", "messages_in", "messages_out", "errors", "broken"):
            total[key] += report[key]
        total["first_error"] = total["first_error"] or report["first_error"]
    return total


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
    return verdict(result, [result, base])


# --- --replicas 2: two referees, the SDK connected to both -----------------------------------

def measure_replicas(args: argparse.Namespace) -> dict[str, Any]:
    """Two referees on one Redis; ``--bot-processes`` ``sueca-bot run`` processes, each given
    both addresses (``--server A,B``: one session per referee). The same matches are played on
    one referee, then spread over both (match i on referee i mod 2), ``--rounds`` times each,
    alternated, with the same bot processes: the ratio is the second's moves/s to the first's."""
    drop_tls_settings()
    n, procs_n, conc = args.matches, args.bot_processes, args.concurrency
    n_bots = args.bots or (procs_n if procs_n >= 4 else 1)
    if not 1 <= n_bots <= procs_n:
        raise ValueError(f"--bots must be between 1 and --bot-processes ({procs_n}), not {n_bots}")
    capacity = args.capacity or 4 * conc
    load = [round(x, 2) for x in os.getloadavg()]
    rounds: list[dict[str, Any]] = []
    with private_arena(args.keep_logs) as (fleet, redis):
        names = [f"bench-{k}" for k in range(n_bots)]
        tokens = register(redis.url, names)
        referees = [start_referee(fleet, f"referee-{k}", redis.url) for k in range(2)]
        addresses = [a for a, _ in referees]
        threads = [] if args.bot_threads is None else ["--threads", str(args.bot_threads)]
        bots = []
        for k in range(procs_n):
            fleet.start(f"bot-{k}", [*BOT, "run", args.bot, "--server", ",".join(addresses),
                                     "--token", tokens[names[k % n_bots]], "--capacity",
                                     str(capacity), *threads])
            bots.append(f"bot-{k}")
        for a in addresses:
            wait_for_sessions(a, names, procs_n, fleet)
        progress(f"2 referees, {procs_n} bot process(es) connected to both")
        pids = [fleet[f"referee-{k}"].pid for k in range(2)]
        bot_pids = [fleet[b].pid for b in bots]
        for r in range(args.rounds):
            for used in (1, 2):
                before = [scrape_port(m) for _, m in referees[:used]]
                cpu0 = [cpu_seconds(p) for p in pids]
                bot0 = cpu_seconds(*bot_pids)
                played = play(addresses[:used], names, n=n, conc=conc, move_ms=args.move_ms,
                               timeout=args.match_timeout, fleet=fleet,
                               label=f"round {r + 1}, {used} referee(s)")
                cpu = [cpu_seconds(p) - c for p, c in zip(pids, cpu0, strict=True)]
                bot_cpu = cpu_seconds(*bot_pids) - bot0
                after = [scrape_port(m) for _, m in referees[:used]]
                figures = batch_figures(played, merged(before), merged(after))
                secs = played["seconds"]
                figures.update(round=r + 1, replicas=used,
                               referee_moves=[counter_delta(b, a, MOVES_METRIC) for b, a
                                              in zip(before, after, strict=True)],
                               referee_cpu_share=[round(c / secs, 3) for c in cpu],
                               bot_cpu_share=round(bot_cpu / secs, 3))
                progress(f"round {r + 1}, {used} referee(s): {figures['moves_per_s']:.0f} "
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
        "faults": sum_faults(f["faults"] for f in rounds),
        "move_rtt_p99_ms": max((f["move_rtt_p99_ms"] or 0.0) for f in rounds),
        "load_average_start": load, "load_average_end": [round(x, 2) for x in os.getloadavg()],
    }


def _report_replicas(result: dict[str, Any] | None) -> int:
    if result is None:
        return 1
    print(f"referee replicas: one {result['moves_per_s_one']} moves/s, two "
          f"{result['moves_per_s_two']} moves/s; ratio (median) {result['ratio']}", flush=True)
    return verdict(result, result["rounds"])

