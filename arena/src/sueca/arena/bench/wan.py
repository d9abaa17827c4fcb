"""Bots across the internet: the referee bench with a delaying proxy between bots and referee.

One run starts a private Redis, a referee and a delaying TCP proxy in front of it
(:mod:`sueca.arena.delayproxy`: ``--rtt-ms`` added round trip, ``--jitter-ms`` jitter), then
plays the same matches twice with ``--bot-processes`` ``sueca-bot run random`` processes: first
connected straight to the referee (the baseline, same run), then through the proxy. Reported per
phase: moves/s, moves/s per bot process, the referee's move round trip (which includes the
added delay: the referee charges network time to the bot), and match duration. Random bots
never time out or fault at the default clocks, so a timeout or fault fails the run (exit 1).

With ``C`` matches in flight, a match waits one round trip per card, so the distant phase is
bounded by ``C / (rtt + think time)`` moves/s: more games in flight buy throughput back.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from sueca.arena.bench import measured
from sueca.arena.bench.fleet import (
    BOT,
    private_arena,
    register,
    scrape_port,
    start_referee,
    stop_all,
    wait_for_referee,
    wait_for_sessions,
)
from sueca.arena.bench.matches import batch_figures, play, progress, verdict
from sueca.arena.redisproc import free_port
from sueca.sdk.channels import drop_tls_settings
from sueca.sdk.cli import Bounded


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rtt-ms", action=Bounded, kind=float, low=0, default=50.0,
                        help="round trip the proxy adds (default 50)")
    parser.add_argument("--jitter-ms", action=Bounded, kind=float, low=0, default=10.0,
                        help="jitter per direction, uniform within ± half of this (default 10)")
    parser.add_argument("--matches", action=Bounded, kind=int, low=1, default=256,
                        help="matches per phase (default 256)")
    parser.add_argument("--concurrency", action=Bounded, kind=int, low=1, default=128,
                        help="matches in flight (default 128)")
    parser.add_argument("--bot-processes", action=Bounded, kind=int, low=1, default=2,
                        help="`sueca-bot run random` processes (default 2)")
    parser.add_argument("--move-ms", action=Bounded, kind=int, low=1, default=2000,
                        help="per-move limit and time bank in the match spec (default 2000, "
                             "the referee's default)")
    parser.add_argument("--match-timeout", action=Bounded, kind=float, low=0, above=True,
                        default=300.0, help="seconds one RunMatch call may take (default 300)")


def run(args: argparse.Namespace) -> int:
    if args.jitter_ms > args.rtt_ms:
        print(f"bench wan: --jitter-ms {args.jitter_ms:g} is more than --rtt-ms "
              f"{args.rtt_ms:g}", file=sys.stderr)
        return 2
    result = measured("wan", measure, args)
    if result is None:
        return 1
    near, far = result["direct"], result["proxied"]
    print(f"bots {result['rtt_ms']:g} ms (±{result['jitter_ms'] / 2:g}) away, "
          f"{result['concurrency']} matches at once: {far['moves_per_s']:.0f} moves/s "
          f"({far['moves_per_s_per_bot']:.0f} per bot process), match p50 "
          f"{far['match_seconds_p50']} s, move rtt p50 {far['move_rtt_p50_ms']} ms; direct: "
          f"{near['moves_per_s']:.0f} moves/s, match p50 {near['match_seconds_p50']} s; ratio "
          f"{result['ratio']}", flush=True)
    return verdict(result, [near, far])


def measure(args: argparse.Namespace) -> dict[str, Any]:
    drop_tls_settings()
    procs_n, n, conc = args.bot_processes, args.matches, args.concurrency
    load = [round(x, 2) for x in os.getloadavg()]
    phases: dict[str, dict[str, Any]] = {}
    with private_arena(False) as (fleet, redis):
        names = ["wan-bot"]
        tokens = register(redis.url, names)
        address, metrics_port = start_referee(fleet, "referee", redis.url)
        proxy = f"127.0.0.1:{free_port()}"
        fleet.start("proxy", [sys.executable, "-m", "sueca.arena.delayproxy", "--port",
                              proxy.rpartition(":")[2], "--to", address, "--rtt-ms",
                              f"{args.rtt_ms:g}", "--jitter-ms", f"{args.jitter_ms:g}"])
        wait_for_referee(proxy, fleet)  # the referee's health service, through the proxy
        for phase, server in (("direct", address), ("proxied", proxy)):
            bots = [f"{phase}-bot-{k}" for k in range(procs_n)]
            for bot in bots:
                fleet.start(bot, [*BOT, "run", "random", "--server", server, "--token",
                                  tokens[names[0]], "--capacity", str(4 * conc)])
            wait_for_sessions(address, names, procs_n, fleet)
            progress(f"{phase}: {procs_n} bot process(es) connected"
                      + (f" through a {args.rtt_ms:g} ms proxy" if server == proxy else ""),
                      kind="wan")
            before = scrape_port(metrics_port)
            played = play(address, names, n=n, conc=conc, move_ms=args.move_ms,
                           timeout=args.match_timeout, fleet=fleet, label=phase)
            figures = batch_figures(played, before, scrape_port(metrics_port))
            figures["moves_per_s_per_bot"] = round(figures["moves_per_s"] / procs_n, 1)
            phases[phase] = figures
            progress(f"{phase}: {figures['moves_per_s']:.0f} moves/s, match p50 "
                      f"{figures['match_seconds_p50']} s", kind="wan")
            stop_all(fleet, bots)
            wait_for_sessions(address, names, 0, fleet, at_most=True)
            time.sleep(0.2)
    near, far = phases["direct"], phases["proxied"]
    return {
        "rtt_ms": args.rtt_ms, "jitter_ms": args.jitter_ms, "matches": n, "concurrency": conc,
        "bot_processes": procs_n, "move_ms": args.move_ms,
        "direct": near, "proxied": far,
        "ratio": round(far["moves_per_s"] / near["moves_per_s"], 3) if near["moves_per_s"] else None,
        "timeouts": far["ends"].get("timeout", 0) + near["ends"].get("timeout", 0),
        "abnormal": near["abnormal"] + far["abnormal"],
        "load_average_start": load, "load_average_end": [round(x, 2) for x in os.getloadavg()],
    }
