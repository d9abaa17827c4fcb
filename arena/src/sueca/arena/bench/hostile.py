"""Honest matches/s on a referee under attack by hostile clients, against none, in the same run.

One run starts a private Redis, a referee (default limits unless ``--referee-args``), two honest
``sueca-bot run random`` processes and, per attack, one attacker process. Each of ``--rounds``
rounds plays baseline (no attacker), attack 1, baseline, attack 2, ..., baseline, every step
``--matches`` matches ``--concurrency`` at once through ``MatchService.RunMatch``. An attack's
ratio is the median over rounds of its matches/s over the mean of the baselines around it.

The attacks (:data:`ATTACKS`), each from a process of its own at the lowest CPU priority (on a
machine with few cores an attacker's own CPU would otherwise be measured as the referee's loss;
a real attacker runs on its own machine):

- ``unread``: an authenticated bot floods faults (many bogus actions per message) and never
  reads what it is sent; cut off, it comes back and does it again;
- ``rate``: an authenticated bot sends one-action messages as fast as it can, reading replies;
- ``hello_less``: as many ``Connect`` streams without a hello as it can hold, on many connections;
- ``bad_hello``: hellos with a 60 KB name, wrong tokens and a newline in ``sdk_version``;
- ``churn``: an authenticated bot connects, is welcomed and hangs up, on a new connection each time.

Last line: one JSON object (``ratios`` by attack, ``limit_hits`` the referee counted).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shlex
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc

from sueca.arena.bench import cpu_seconds, measured
from sueca.arena.processes import Supervisor
from sueca.arena.settings import current
from sueca.sdk.channels import drop_tls_settings
from sueca.sdk.cli import Bounded, UserError
from sueca.v1 import sueca_pb2 as pb

ATTACKS = ("unread", "rate", "hello_less", "bad_hello", "churn")
ATTACKER = "mallory"  # the hostile bot's registered name
_ATTACK = [sys.executable, "-c", "from sueca.arena.bench.hostile import attack_main; "
           "attack_main()"]
_LOCAL = [("grpc.use_local_subchannel_pool", 1)]  # a channel of its own: a new connection


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--attacks", default=",".join(ATTACKS),
                        help=f"comma-separated attacks (default all: {','.join(ATTACKS)})")
    parser.add_argument("--rounds", action=Bounded, kind=int, low=1, default=3,
                        help="baseline and attack rounds, alternated (default 3)")
    parser.add_argument("--matches", action=Bounded, kind=int, low=1, default=60,
                        help="honest matches per round (default 60)")
    parser.add_argument("--concurrency", action=Bounded, kind=int, low=1, default=16,
                        help="honest matches at once (default 16)")
    parser.add_argument("--referee-args", default="",
                        help="extra `sueca-arena referee` flags, e.g. '--out-bytes 100000'")
    parser.add_argument("--keep-logs", action="store_true",
                        help="keep the referee, bot and attacker logs and print where they are")


def run(args: argparse.Namespace) -> int:
    result = measured("hostile", measure, args)
    if result is None:
        return 1
    cpu = result["referee_cpu_ms_per_match"]
    print(f"{'attack':<12} {'matches/s':>10} {'ratio':>6} {'ref ms/match':>13}  limits that "
          "acted", flush=True)
    print(f"{'(none)':<12} {result['baseline_matches_per_s']:>10.2f} {1:>6.2f} "
          f"{cpu['baseline']:>13.1f}", flush=True)
    for name in result["attacks"]:
        print(f"{name:<12} {result['matches_per_s'][name]:>10.2f} {result['ratios'][name]:>6.2f}"
              f" {cpu[name]:>13.1f}  {result['limit_hits'][name] or '-'}", flush=True)
    print(json.dumps(result), flush=True)
    return 0 if not result["abnormal"] else 1


def _attacks(text: str) -> list[str]:
    names = [a.strip() for a in text.split(",") if a.strip()]
    bad = [a for a in names if a not in ATTACKS]
    if bad or not names:
        raise UserError(f"unknown attack {bad[0] if bad else text!r}: choose from "
                        f"{', '.join(ATTACKS)}")
    return names


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Run the bench (see the module's notes); returns the JSON-able result."""
    # deferred: each attacker process imports this module (_ATTACK) and needs none of these;
    # without them (and rich, through matches) it imports in a third of the time (-X importtime)
    from sueca.arena.bench.fleet import (  # deferred: as above
        ARENA,
        BOT,
        private_arena,
        register,
        rss_kb,
        scrape_port,
        stop_all,
        wait_for_referee,
        wait_for_sessions,
    )
    from sueca.arena.promscrape import deltas_by_label  # deferred: as above
    from sueca.arena.redisproc import free_port  # deferred: as above

    attacks = _attacks(args.attacks)
    drop_tls_settings()
    speeds: dict[str, list[float]] = {"baseline": [], **{a: [] for a in attacks}}
    cpu: dict[str, list[float]] = {"baseline": [], **{a: [] for a in attacks}}
    ratios: dict[str, list[float]] = {a: [] for a in attacks}
    hits: dict[str, dict[str, int]] = {a: {} for a in attacks}
    abnormal = 0
    with private_arena(args.keep_logs) as (fleet, redis):
        tokens = register(redis.url, ["honest", ATTACKER])
        port, metrics_port = free_port(), free_port()
        address = f"127.0.0.1:{port}"
        fleet.start("referee", [*ARENA, "referee", "--port", str(port), "--operator-port", "0",
                                "--metrics-port", str(metrics_port), "--redis", redis.url,
                                *shlex.split(args.referee_args)])
        wait_for_referee(address, fleet)
        for k in range(2):
            fleet.start(f"bot-{k}", [*BOT, "run", "random", "--server", address, "--token",
                                     tokens["honest"], "--capacity", str(4 * args.concurrency)])
        wait_for_sessions(address, ["honest"], 2, fleet)
        _round(address, 8, args.concurrency, fleet)  # warm-up, not counted
        for r in range(args.rounds):
            # baseline, attack, baseline, attack, ..., baseline: each attack is compared with
            # the baselines just before and after it, so slow drifts of the machine's load
            # hit both sides alike
            last = _round(address, args.matches, args.concurrency, fleet)
            speeds["baseline"].append(last["matches_per_s"])
            cpu["baseline"].append(last["cpu_ms_per_match"])
            abnormal += last["abnormal"]
            for attack in attacks:
                name = f"attack-{attack}-{r}"
                before = scrape_port(metrics_port)
                fleet.start(name, [*_ATTACK, attack, address],
                            extra={"SUECA_TOKEN": tokens[ATTACKER]})
                time.sleep(1.0)  # let the attack reach its steady state
                played = _round(address, args.matches, args.concurrency, fleet)
                stop_all(fleet, [name], grace=0)  # killed and forgotten: its log stays
                after = scrape_port(metrics_port)
                for limit, delta in deltas_by_label(before, after,
                                                    "sueca_referee_limit_hits_total",
                                                    "limit").items():
                    hits[attack][limit] = hits[attack].get(limit, 0) + delta
                nxt = _round(address, args.matches, args.concurrency, fleet)
                speeds["baseline"].append(nxt["matches_per_s"])
                speeds[attack].append(played["matches_per_s"])
                cpu["baseline"].append(nxt["cpu_ms_per_match"])
                cpu[attack].append(played["cpu_ms_per_match"])
                base = (last["matches_per_s"] + nxt["matches_per_s"]) / 2
                ratios[attack].append(played["matches_per_s"] / base if base else 0.0)
                abnormal += played["abnormal"] + nxt["abnormal"]
                last = nxt
            print(f"round {r + 1}/{args.rounds}: " + ", ".join(
                f"{a} {ratios[a][-1]:.2f}" for a in attacks), file=sys.stderr, flush=True)
        rss = round(rss_kb(fleet["referee"].pid) / 1024, 1)
    base = statistics.median(speeds["baseline"])
    mps = {a: round(statistics.median(speeds[a]), 3) for a in attacks}
    return {
        "baseline_matches_per_s": round(base, 3),
        "attacks": attacks,
        "matches_per_s": mps,
        # per attack: the median over rounds of (attack round / mean of its two baselines)
        "ratios": {a: round(statistics.median(ratios[a]), 3) for a in attacks},
        "round_ratios": {a: [round(r, 3) for r in ratios[a]] for a in attacks},
        "rounds": {a: [round(v, 3) for v in speeds[a]] for a in speeds},
        "limit_hits": hits,
        # the referee's CPU per honest match (its own and the attack's): less noisy than speed
        "referee_cpu_ms_per_match": {a: round(statistics.median(v), 2) for a, v in cpu.items()},
        "referee_rss_mb": rss,
        "matches_per_round": args.matches, "concurrency": args.concurrency,
        "abnormal": abnormal,
        "logs": str(fleet.logs) if args.keep_logs else None,
    }


def _round(address: str, n: int, conc: int, fleet: Supervisor) -> dict[str, Any]:
    """Play ``n`` honest matches; their rate, and the referee's CPU per match meanwhile."""
    from sueca.arena.bench.matches import play  # deferred: as measure()'s, for the attackers

    pid = fleet["referee"].pid
    cpu = cpu_seconds(pid)
    played = play(address, ["honest"], n=n, conc=conc, move_ms=2000, timeout=120.0, fleet=fleet)
    secs = played["seconds"]
    done = sum(played["ends"].values())
    played["matches_per_s"] = done / secs if secs > 0 else 0.0
    played["cpu_ms_per_match"] = (cpu_seconds(pid) - cpu) * 1000 / done if done else 0.0
    return played


# --- the attackers (each runs as `attack_main KIND ADDRESS`, token in SUECA_TOKEN) ------------

def attack_main() -> None:
    """Entry point of an attacker process: run attack ``argv[1]`` against ``argv[2]`` until
    killed, at the lowest CPU priority."""
    kind, address = sys.argv[1], sys.argv[2]
    os.nice(19)
    ATTACK_FUNCTIONS[kind](address, current().token or "", lambda: False)


def _stream(address: str, first: list[bytes], options: list[tuple[str, Any]] | None = None
            ) -> tuple[Any, Any, queue.Queue[bytes | None]]:
    """A raw Connect stream: (channel, call, outgoing queue); ``first`` is sent at once."""
    channel = grpc.insecure_channel(address, options=options or _LOCAL)
    out: queue.Queue[bytes | None] = queue.Queue()
    for item in first:
        out.put(item)

    def requests() -> Iterator[bytes]:
        while True:
            item = out.get()
            if item is None:
                return
            yield item

    return channel, _connect(channel)(requests()), out


def _connect(channel: Any) -> Any:
    """``BotService/Connect`` on ``channel``, raw bytes both ways."""
    return channel.stream_stream("/sueca.v1.BotService/Connect",
                                 request_serializer=lambda b: b, response_deserializer=lambda b: b)


def _exhausted(call: Any) -> bool:
    """Whether the referee has ended ``call`` with RESOURCE_EXHAUSTED (a limit acted)."""
    try:
        return bool(call.done() and call.code() == grpc.StatusCode.RESOURCE_EXHAUSTED)
    except Exception:
        return False


def _hello(bot: str, token: str, sdk_version: str = "hostile") -> bytes:
    return pb.BotMessage(hello=pb.Hello(bot=bot, token=token, capacity=1,
                                        sdk_version=sdk_version)).SerializeToString()


def _bogus(n: int) -> bytes:
    return pb.BotMessage(actions=[pb.Action(game_id=f"no-such-game-{i}", request_id=i, card=1)
                                  for i in range(n)]).SerializeToString()


def unread(address: str, token: str, stop: Callable[[], bool]) -> dict[str, int]:
    """Flood faults, never read; when cut off, come back."""
    stats = {"streams": 0, "cut_off": 0, "messages": 0}
    flood = _bogus(200)
    while not stop():
        # a receive window that never grows: what is not read stays queued at the referee
        channel, call, out = _stream(address, [_hello(ATTACKER, token)],
                                     [*_LOCAL, ("grpc.http2.bdp_probe", 0)])
        stats["streams"] += 1
        try:
            while not stop() and not call.done():
                if out.qsize() < 4:  # sent as fast as the referee reads, no faster
                    out.put(flood)
                    stats["messages"] += 1
                else:
                    time.sleep(0.001)
        finally:
            out.put(None)
            if _exhausted(call):
                stats["cut_off"] += 1
            call.cancel()
            channel.close()
    return stats


def rate(address: str, token: str, stop: Callable[[], bool]) -> dict[str, int]:
    """One-action messages as fast as possible, reading every reply."""
    stats = {"messages": 0, "replies": 0}
    one = _bogus(1)
    while not stop():
        channel, call, out = _stream(address, [_hello(ATTACKER, token)])

        reader = threading.Thread(target=_drain, args=(call, stats), daemon=True)
        reader.start()
        while not stop() and not call.done():
            if out.qsize() < 64:
                out.put(one)
                stats["messages"] += 1
            else:
                time.sleep(0.0005)
        out.put(None)
        call.cancel()
        channel.close()
    return stats


def _drain(call: Any, stats: dict[str, int]) -> None:
    try:
        for _ in call:
            stats["replies"] += 1
    except Exception:
        pass


def hello_less(address: str, token: str, stop: Callable[[], bool], *,
               connections: int = 40, streams: int = 16) -> dict[str, int]:
    """Hold as many hello-less streams as the referee allows; reopen those it closes."""
    stats = {"opened": 0, "refused": 0}
    held: list[tuple[Any, Any]] = []
    channels = [grpc.insecure_channel(address, options=_LOCAL) for _ in range(connections)]
    while not stop():
        live = []
        for channel, call in held:
            if not call.done():
                live.append((channel, call))
            elif _exhausted(call):
                stats["refused"] += 1
        held = live
        want = connections * streams - len(held)
        for k in range(want):
            channel = channels[k % connections]
            call = _connect(channel)(iter(_forever()))
            held.append((channel, call))
            stats["opened"] += 1
        time.sleep(0.2)
    for _, call in held:
        call.cancel()
    for channel in channels:
        channel.close()
    return stats


def _forever() -> Iterator[bytes]:
    while True:
        time.sleep(3600)
        yield b""


def bad_hello(address: str, token: str, stop: Callable[[], bool]) -> dict[str, int]:
    """Refused hellos in a loop: a 60 KB name, a wrong token, a forged log line."""
    stats: dict[str, int] = {}
    hellos = [_hello("x" * 60_000, "x.y"), _hello(ATTACKER, f"{ATTACKER}.wrong-token"),
              _hello(ATTACKER, f"{ATTACKER}.wrong", "1.0\n2026-01-01 ERROR sueca: forged line")]
    channel = grpc.insecure_channel(address, options=_LOCAL)
    connect = _connect(channel)
    k = 0
    while not stop():
        try:
            for _ in connect(iter([hellos[k % len(hellos)]]), timeout=5):
                pass
            code = "OK"
        except grpc.RpcError as err:
            code = err.code().name
        stats[code] = stats.get(code, 0) + 1
        k += 1
    channel.close()
    return stats


def churn(address: str, token: str, stop: Callable[[], bool]) -> dict[str, int]:
    """Connect, take the welcome, hang up: a new connection every time."""
    stats = {"welcomed": 0, "refused": 0}
    while not stop():
        channel, call, out = _stream(address, [_hello(ATTACKER, token)])
        try:
            next(iter(call))
            stats["welcomed"] += 1
        except Exception:
            stats["refused"] += 1
        out.put(None)
        call.cancel()
        channel.close()
    return stats


ATTACK_FUNCTIONS: dict[str, Callable[[str, str, Callable[[], bool]], dict[str, int]]] = {
    "unread": unread, "rate": rate, "hello_less": hello_less, "bad_hello": bad_hello,
    "churn": churn,
}
