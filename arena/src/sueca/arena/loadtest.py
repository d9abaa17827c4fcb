"""Load-testing one bot: many matches at once against the referee's house bots.

Every match seats the *target* once (in seat ``i % 4`` for the i-th match, so it leads and
follows alike) and the referee's own house bots (:mod:`sueca.referee.house`) in the three other
seats: every move the referee waits for over the network is the target's.

The load has a shape: up to ``games`` matches in flight, the cap growing linearly over ``ramp``
seconds, held, and shrinking over the last ``ramp`` seconds of ``duration`` (matches already
running finish; none is started after ``duration``), with at most ``rate`` new matches per
second when given. What is left after ``drain`` more seconds is cut (its RunMatch call is
cancelled, so the referee aborts it; counted as ``cut``, never as the target's fault).

How the target's latency is measured: the referee times every answered turn of every seat (from
the turn request being queued for the bot to its valid answer being read: the same span as its
``sueca_referee_move_rtt_seconds`` histogram, which mixes all bots) and, when the RunMatch call
asks for it (request metadata ``sueca-turn-times: 1``), sends them per seat in the call's
trailing metadata (``sueca-turn-times-us``, see :meth:`MatchRunner.turn_times_metadata`). So
the figures are the referee's own: queueing the request and the batch it leaves in, the network
both ways, the bot's thinking, the referee reading the answer. Each is placed in time at the
arrival of the target's card event (RunMatch runs with card events on). A turn that timed out
has no time (it is counted in ``timeouts``). Against a referee that sends no turn times, the
fallback is the gap in the event stream between the target's card and the event before it
(noisier: this process's own delays compress or stretch it); ``latency_source`` says which
was used, per match.

Faults: ``timeouts``, ``disconnects`` and ``renuncias`` are read from the match results and deal
ends (only those charged to the target's seat); ``protocol_faults`` from the referee's
``sueca_referee_faults_total{class="protocol"}`` when its metrics address is known (always on a
private arena; on a shared referee they may be other bots'); ``failed`` counts matches whose
RunMatch call failed; ``reconnects`` are new sessions of the target seen by polling ListBots
every second (a reconnect faster than that may be missed).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_GAMES = 2000
MAX_DURATION = 3600.0
LIVE_WINDOW = 5.0   # seconds of samples behind the live view's percentiles
FATAL_CODES = ("PERMISSION_DENIED", "NOT_FOUND", "FAILED_PRECONDITION", "UNAUTHENTICATED",
               "INVALID_ARGUMENT", "UNIMPLEMENTED")


class LoadTestError(Exception):
    """The load test cannot go on (the referee refused the target's matches); the message quotes
    the referee's answer."""


@dataclass
class Shape:
    """The shape of the load: see the module's notes."""

    games: int = 16
    duration: float = 10.0
    rate: float = 0.0           # new matches per second; 0: as fast as the cap allows
    ramp: float | None = None   # seconds of ramp-up and of ramp-down (None: min(5, duration/4))
    drain: float = 30.0

    @property
    def ramp_s(self) -> float:
        return min(5.0, self.duration / 4) if self.ramp is None else self.ramp

    def cap(self, t: float) -> int:
        """Matches allowed in flight ``t`` seconds after the start."""
        if t >= self.duration:
            return 0
        ramp = self.ramp_s
        if ramp <= 0:
            return self.games
        share = min(1.0, t / ramp, (self.duration - t) / ramp)
        return max(1, math.ceil(self.games * share))


@dataclass
class Second:
    """What happened during one second of the run."""

    moves: int = 0
    target_moves: int = 0
    latencies: list[float] = field(default_factory=list)
    in_flight: int = 0
    timeouts: int = 0
    faults: int = 0


@dataclass
class Stats:
    """Everything measured, as it comes in (one event loop: no locks)."""

    t0: float = field(default_factory=time.monotonic)
    seconds: list[Second] = field(default_factory=list)
    started: int = 0
    in_flight: int = 0
    ends: Counter[str] = field(default_factory=Counter)
    timeouts: int = 0
    disconnects: int = 0
    renuncias: int = 0
    failed: int = 0
    cut: int = 0
    protocol_faults: int | None = None
    reconnects: int | None = None
    first_error: str | None = None
    sources: Counter[str] = field(default_factory=Counter)  # matches by latency source
    match_seconds: list[float] = field(default_factory=list)  # each finished match's duration
    fatal: str | None = None
    failed_in_row: int = 0        # RunMatch calls failed since the last match that finished
    stopped_early: str | None = None
    elapsed: float = 0.0

    def at(self, now: float) -> Second:
        k = int(now - self.t0)
        while len(self.seconds) <= k:
            self.seconds.append(Second(in_flight=self.in_flight))
        return self.seconds[k]

    def error(self, message: str) -> None:
        self.failed += 1
        self.failed_in_row += 1
        if self.first_error is None:
            self.first_error = message[:500]

    def latencies(self) -> list[float]:
        return [x for s in self.seconds for x in s.latencies]

    def recent(self, now: float, window: float = LIVE_WINDOW) -> list[float]:
        k = int(now - self.t0)
        lo = max(0, k - int(window) + 1)
        return [x for s in self.seconds[lo:k + 1] for x in s.latencies]


@dataclass
class Target:
    """Where the load goes: the referee, the target's registered name, the house bots' names
    (``random`` -> ``house:random``), and the spec fields every match shares."""

    address: str
    bot: str
    house: Sequence[str] = ("random",)
    variant: Sequence[str] = ()
    move_ms: int | None = None
    bank_ms: int | None = None
    grace_ms: int | None = None
    match_timeout: float = 600.0
    metrics_url: str | None = None   # the referee's /metrics, for protocol faults

    def spec(self, i: int, run_id: str) -> dict[str, Any]:
        seat = i % 4
        house = [f"house:{h}" for h in self.house]
        bots = [house[k % len(house)] for k in range(4)]
        bots[seat] = self.bot
        spec: dict[str, Any] = {"match_id": f"load-{run_id}-{i}", "bots": bots, "quiet": False,
                                "variant": list(self.variant)}
        for key in ("move_ms", "bank_ms", "grace_ms"):
            if getattr(self, key):
                spec[key] = getattr(self, key)
        return spec


def quantile(sorted_values: Sequence[float], q: float) -> float | None:
    """Nearest-rank quantile of sorted values (None when there are none)."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _ms(x: float | None) -> float | None:
    return None if x is None else round(x * 1000, 3)


def live(stats: Stats, now: float) -> dict[str, Any]:
    """What the live view shows: the last few seconds, and the totals so far."""
    k = int(now - stats.t0)
    last = stats.seconds[k - 1] if 0 < k <= len(stats.seconds) else Second()
    recent = sorted(stats.recent(now))
    return {"elapsed": now - stats.t0, "in_flight": stats.in_flight, "started": stats.started,
            "moves_per_s": last.moves, "target_moves_per_s": last.target_moves,
            "p50_ms": _ms(quantile(recent, 0.5)), "p95_ms": _ms(quantile(recent, 0.95)),
            "p99_ms": _ms(quantile(recent, 0.99)), "max_ms": _ms(recent[-1] if recent else None),
            "timeouts": stats.timeouts, "faults": faults(stats), "renuncias": stats.renuncias,
            "protocol_faults": stats.protocol_faults, "reconnects": stats.reconnects,
            "failed": stats.failed}


def faults(stats: Stats) -> int:
    """The target's faults: protocol faults (when known), disconnects and failed matches.
    Timeouts are counted on their own; renúncias are a move of the game, not a fault here."""
    return (stats.protocol_faults or 0) + stats.disconnects + stats.failed


def summary(stats: Stats, shape: Shape, target: Target) -> dict[str, Any]:
    lat = sorted(stats.latencies())
    moves = sum(s.moves for s in stats.seconds)
    target_moves = sum(s.target_moves for s in stats.seconds)
    secs = stats.elapsed or 1e-9
    return {
        "target": target.bot, "referee": target.address, "house": list(target.house),
        "games": shape.games, "duration_s": shape.duration, "rate": shape.rate,
        "ramp_s": shape.ramp_s, "variant": list(target.variant), "move_ms": target.move_ms,
        "bank_ms": target.bank_ms, "seconds": round(stats.elapsed, 3),
        "matches_started": stats.started, "matches_finished": sum(stats.ends.values()),
        "ends": dict(stats.ends), "moves": moves, "target_moves": target_moves,
        "moves_per_s": round(moves / secs, 1),
        "target_moves_per_s": round(target_moves / secs, 1),
        "peak_moves_per_s": max((s.moves for s in stats.seconds), default=0),
        "samples": len(lat),
        "p50_ms": _ms(quantile(lat, 0.5)), "p95_ms": _ms(quantile(lat, 0.95)),
        "p99_ms": _ms(quantile(lat, 0.99)), "max_ms": _ms(lat[-1] if lat else None),
        "mean_ms": _ms(sum(lat) / len(lat)) if lat else None,
        "timeouts": stats.timeouts, "disconnects": stats.disconnects,
        "renuncias": stats.renuncias, "protocol_faults": stats.protocol_faults,
        "failed": stats.failed, "cut": stats.cut, "faults": faults(stats),
        "reconnects": stats.reconnects, "first_error": stats.first_error,
        "stopped_early": stats.stopped_early,
        "match_s_p50": _round(quantile(sorted(stats.match_seconds), 0.5)),
        "match_s_max": _round(max(stats.match_seconds, default=None)),
        "latency_source": ", ".join(f"{k} ({v} matches)" for k, v in
                                    sorted(stats.sources.items())) or None,
    }


def check_slo(result: dict[str, Any], p99_ms: float | None = None,
              max_timeouts: int | None = None, max_faults: int | None = None) -> list[str]:
    """The SLOs the run broke, each as one line quoting the measured value and the limit."""
    broken = []
    if not result["samples"]:
        broken.append("no move of the target was measured")
    if p99_ms is not None and result["p99_ms"] is not None and result["p99_ms"] > p99_ms:
        broken.append(f"p99 latency {result['p99_ms']} ms > --slo-p99-ms {p99_ms:g}")
    if max_timeouts is not None and result["timeouts"] > max_timeouts:
        broken.append(f"{result['timeouts']} timeout(s) > --max-timeouts {max_timeouts}")
    if max_faults is not None and result["faults"] > max_faults:
        broken.append(f"{result['faults']} fault(s) > --max-faults {max_faults}")
    return broken


# -- the run ---------------------------------------------------------------------------------

def parse_turn_times(metadata: Any, seat: int) -> list[float] | None:
    """The seat's turn times (seconds) from RunMatch's trailing metadata
    ``sueca-turn-times-us: 0=812,977;1=...``; None when the referee sent none."""
    for key, value in metadata or ():
        if key != "sueca-turn-times-us":
            continue
        for part in str(value).split(";"):
            who, _, times = part.partition("=")
            if who == str(seat):
                return [int(x) / 1e6 for x in times.split(",") if x]
        return None
    return None


async def _one(i: int, seat: int, spec: dict[str, Any], channel: Any, target: Target,
               stats: Stats) -> None:
    import grpc

    from sueca import codec as conv
    from sueca.referee.security import operator_metadata
    from sueca.v1 import sueca_pb2 as pb

    call = channel.unary_stream(
        "/sueca.v1.MatchService/RunMatch", request_serializer=pb.MatchSpec.SerializeToString,
        response_deserializer=pb.MatchEvent.FromString)(
            conv.spec_to_pb(spec), timeout=target.match_timeout,
            metadata=(*operator_metadata(), ("sueca-turn-times", "1")))
    clock = time.monotonic
    last = began = clock()
    finished = False
    arrivals: list[float] = []   # when each of the target's cards was seen
    gaps: list[float] = []       # ... and the time since the event before it
    try:
        async for event in call:
            now = clock()
            kind = event.WhichOneof("event")
            if kind == "card":
                sec = stats.at(now)
                sec.moves += 1
                if event.card.seat == seat:
                    sec.target_moves += 1
                    arrivals.append(now)
                    gaps.append(now - last)
            elif kind == "deal_end":
                d = event.deal_end
                if d.end == "renuncia" and d.fault_seat == seat:
                    stats.renuncias += 1
            elif kind == "result":
                r = event.result
                stats.ends[r.end] += 1
                stats.match_seconds.append(now - began)
                stats.failed_in_row = 0
                finished = True
                if r.fault_seat == seat:
                    if r.end == "timeout":
                        stats.timeouts += 1
                        stats.at(now).timeouts += 1
                    elif r.end == "disconnect":
                        stats.disconnects += 1
                        stats.at(now).faults += 1
            last = now
        times = parse_turn_times(await call.trailing_metadata(), seat)
    except grpc.aio.AioRpcError as err:
        code = err.code().name if err.code() is not None else "UNKNOWN"
        details = (err.details() or "")[:300]
        stats.at(clock()).faults += 1
        stats.error(f"match {i}: {code}: {details}")
        if code in FATAL_CODES and not sum(stats.ends.values()):
            stats.fatal = f"the referee {target.address} refused the match ({code}): {details}"
        return
    if not finished:
        stats.error(f"match {i}: the stream ended without a result")
    if times is not None:  # the referee's own turn times, placed at the cards' arrivals
        stats.sources["referee"] += 1
        end = clock()
        for k, t in enumerate(times):
            stats.at(arrivals[k] if k < len(arrivals) else end).latencies.append(t)
    else:  # an older referee: the gaps in the event stream
        stats.sources["event stream"] += 1
        for when, gap in zip(arrivals, gaps):
            stats.at(when).latencies.append(gap)


async def _poll(target: Target, stats: Stats, stop: asyncio.Event) -> None:
    """Protocol faults (referee metrics) and target sessions (ListBots), once a second."""
    from sueca.referee import control

    def faults_now() -> int | None:
        if not target.metrics_url:
            return None
        import urllib.request

        from prometheus_client.parser import text_string_to_metric_families
        with urllib.request.urlopen(target.metrics_url, timeout=2) as reply:
            text = reply.read().decode()
        return int(sum(s.value for family in text_string_to_metric_families(text)
                       for s in family.samples if s.name == "sueca_referee_faults_total"
                       and s.labels.get("class") == "protocol"))

    def sessions_now() -> int:
        return sum(b["sessions"] for b in control.list_bots(target.address, timeout=2)
                   if b["bot"] == target.bot)

    base: int | None = None
    sessions: int | None = None
    reconnects = 0
    while True:
        try:
            f = await asyncio.to_thread(faults_now)
            if f is not None:
                base = f if base is None else base
                stats.protocol_faults = f - base
        except Exception:
            pass  # a missed scrape: the next one counts it
        try:
            n = await asyncio.to_thread(sessions_now)
            if sessions is not None and n > sessions:
                reconnects += n - sessions
            sessions = n
            stats.reconnects = reconnects
        except Exception:
            pass
        if stop.is_set():
            return
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
        except TimeoutError:
            pass


async def run_load(target: Target, shape: Shape,
                   on_tick: Callable[[dict[str, Any]], None] | None = None,
                   tick: float = 0.5) -> Stats:
    """Run the load; ``on_tick`` gets :func:`live` every ``tick`` seconds. Raises
    :class:`LoadTestError` when the referee refuses the target's matches outright."""
    import uuid

    from sueca.referee import control
    from sueca.sdk.channels import client_tls_from_env, open_aio_channel

    run_id = uuid.uuid4().hex[:8]
    stats = Stats()
    # room for the turn times in the trailing metadata (up to 4 x 2000 numbers a match)
    options = [*control._OPTIONS, ("grpc.max_metadata_size", 1 << 20)]
    channels = [open_aio_channel(target.address, client_tls_from_env(), options)
                for _ in range(max(1, min(4, shape.games // 64 + 1)))]
    tasks: set[asyncio.Task[None]] = set()
    stop = asyncio.Event()
    poller = asyncio.create_task(_poll(target, stats, stop))

    def done(task: asyncio.Task[None]) -> None:
        tasks.discard(task)
        stats.in_flight -= 1

    clock = time.monotonic
    next_tick = stats.t0
    try:
        while stats.fatal is None:
            now = clock()
            t = now - stats.t0
            if t >= shape.duration:
                break
            if stats.failed_in_row >= max(8, shape.games):  # the target is gone: stop burning
                stats.stopped_early = (f"stopped starting matches after {t:.1f}s: "
                                       f"{stats.failed_in_row} failed in a row")
                break
            cap = shape.cap(t)
            while (len(tasks) < cap and (shape.rate <= 0 or stats.started < 1 + shape.rate * t)):
                i = stats.started
                spec = target.spec(i, run_id)
                task = asyncio.create_task(_one(i, i % 4, spec, channels[i % len(channels)],
                                                target, stats))
                stats.started += 1
                stats.in_flight += 1
                tasks.add(task)
                task.add_done_callback(done)
            stats.at(now).in_flight = max(stats.at(now).in_flight, stats.in_flight)
            if on_tick is not None and now >= next_tick:
                on_tick(live(stats, now))
                next_tick = now + tick
            await asyncio.sleep(0.005 if shape.rate > 0 or len(tasks) < cap else 0.02)
        deadline = clock() + shape.drain
        while tasks and clock() < deadline and stats.fatal is None:
            now = clock()
            stats.at(now).in_flight = max(stats.at(now).in_flight, stats.in_flight)
            if on_tick is not None and now >= next_tick:
                on_tick(live(stats, now))
                next_tick = now + tick
            await asyncio.wait(set(tasks), timeout=min(tick, max(0.0, deadline - now)))
        stats.cut = len(tasks)
        for task in list(tasks):
            task.cancel()
        if tasks:
            await asyncio.wait(set(tasks), timeout=5)
        stats.elapsed = clock() - stats.t0
    finally:
        stop.set()
        try:
            await asyncio.wait_for(poller, 5)
        except (TimeoutError, Exception):
            poller.cancel()
        for c in channels:
            await c.close()
    if on_tick is not None:
        on_tick(live(stats, clock()))
    if stats.fatal is not None:
        raise LoadTestError(stats.fatal)
    return stats


# -- a private arena ---------------------------------------------------------------------------

class PrivateArena:
    """A private Redis, a referee with house bots, and ``processes`` ``sueca-bot run SPEC``
    processes registered as ``target``; all on loopback, each child in its own session and
    sent SIGTERM if this process dies (:func:`sueca.arena.redisproc.child_argv`); all stopped
    by :meth:`stop`, the referee last."""

    NAME = "target"

    def __init__(self, spec: str, processes: int, capacity: int, house: Sequence[str],
                 net_rtt_ms: float = 0.0, net_jitter_ms: float = 0.0) -> None:
        self.spec, self.processes, self.capacity = spec, processes, capacity
        self.house = list(house)
        self.net_rtt_ms, self.net_jitter_ms = net_rtt_ms, net_jitter_ms
        self.address = ""
        self.metrics_url = ""
        self.logs: Any = None
        self.procs: dict[str, Any] = {}
        self.redis: Any = None

    def start(self, timeout: float = 40.0) -> PrivateArena:
        import sys
        import tempfile
        from pathlib import Path

        import redis

        from sueca.arena.bots import BotRegistry
        from sueca.arena.redisproc import RedisServer, free_port
        from sueca.sdk.channels import drop_tls_settings

        drop_tls_settings()  # its own referee is plaintext on loopback
        self.logs = Path(tempfile.mkdtemp(prefix="sueca-loadtest-"))
        self.redis = RedisServer()
        deadline = time.monotonic() + timeout
        try:
            self.redis.start()
            client = redis.Redis.from_url(self.redis.url)
            try:
                token = BotRegistry(client).add(self.NAME)
            finally:
                client.close()
            port, mport = free_port(), free_port()
            while mport == port:
                mport = free_port()
            self.address = f"127.0.0.1:{port}"
            self.metrics_url = f"http://127.0.0.1:{mport}/metrics"
            self._spawn("referee", [sys.executable, "-m", "sueca.arena.cli", "referee",
                                    "--port", str(port), "--operator-port", "0",
                                    "--metrics-port", str(mport),
                                    "--redis", self.redis.url, "--drain-seconds", "2",
                                    "--house-bots", ",".join(self.house),
                                    "--log-level", "warning"])
            self._wait(lambda n: True, deadline, "the referee to serve")
            bots_dial = self.address
            if self.net_rtt_ms > 0:  # the target's processes reach the referee through it
                pport = free_port()
                self._spawn("delayproxy", [sys.executable, "-m", "sueca.arena.delayproxy",
                                           "--port", str(pport), "--to", self.address,
                                           "--rtt-ms", f"{self.net_rtt_ms:g}",
                                           "--jitter-ms", f"{self.net_jitter_ms:g}"])
                bots_dial = f"127.0.0.1:{pport}"
                self._wait_port(pport, deadline)
            for k in range(self.processes):
                # the token in the environment, never in argv (ps shows argv to everyone)
                self._spawn(f"target-{k}", [sys.executable, "-c", "import sys; from sueca.sdk."
                                            "cli import main; sys.exit(main())", "run",
                                            self.spec, "--server", bots_dial, "--capacity",
                                            str(self.capacity), "--max-backoff", "1",
                                            "--log-level", "warning"],
                            SUECA_TOKEN=token)
            self._wait(lambda n: n >= self.processes, deadline,
                       f"{self.processes} target session(s)")
        except BaseException:
            self.stop(keep_logs=True)
            raise
        return self

    def _spawn(self, name: str, argv: list[str], **env: str) -> None:
        import os
        import subprocess

        from sueca.arena.redisproc import child_argv
        log = open(self.logs / f"{name}.log", "wb")
        try:
            self.procs[name] = (subprocess.Popen(
                child_argv(argv), stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=dict(os.environ, PYTHONUNBUFFERED="1", **env),
                start_new_session=True), log)
        except BaseException:
            log.close()
            raise

    def _wait_port(self, port: int, deadline: float) -> None:
        import socket
        while True:
            self.check()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the delaying proxy did not listen on {port}; logs in "
                                       f"{self.logs}") from None
                time.sleep(0.05)

    def _wait(self, enough: Callable[[int], bool], deadline: float, what: str) -> None:
        """Until ListBots answers with ``enough(target sessions)``, or raise RuntimeError."""
        from sueca.referee import control
        while True:
            self.check()
            try:
                n = sum(b["sessions"] for b in control.list_bots(self.address, timeout=1.0)
                        if b["bot"] == self.NAME)
                if enough(n):
                    return
            except control.RefereeError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {what}; logs in {self.logs}")
            time.sleep(0.1)

    def check(self) -> None:
        """RuntimeError naming a child that exited, with the end of its log."""
        for name, (proc, _) in self.procs.items():
            if proc.poll() is not None:
                tail = (self.logs / f"{name}.log").read_text(errors="replace").splitlines()[-15:]
                raise RuntimeError(f"{name} exited with code {proc.returncode}:\n"
                                   + "\n".join(tail))

    def stop(self, keep_logs: bool = False, grace: float = 5.0) -> str | None:
        """SIGTERM the bots, then the referee; SIGKILL what is left after ``grace`` seconds;
        stop Redis. Returns the log folder when it is kept."""
        import os
        import shutil
        import signal
        import subprocess
        for names in ([n for n in self.procs if n != "referee"], ["referee"]):
            for n in names:
                if n in self.procs and self.procs[n][0].poll() is None:
                    self.procs[n][0].terminate()
            deadline = time.monotonic() + grace
            for n in names:
                if n not in self.procs:
                    continue
                proc, log = self.procs.pop(n)
                try:
                    proc.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        proc.kill()
                    proc.wait()
                log.close()
        if self.redis is not None:
            self.redis.stop()
            self.redis = None
        if self.logs is None:
            return None
        if keep_logs:
            return str(self.logs)
        shutil.rmtree(self.logs, ignore_errors=True)
        return None


def machine() -> dict[str, Any]:
    """The machine the run was measured on (for the report)."""
    import os
    import platform
    info: dict[str, Any] = {"host": platform.node(), "system": platform.platform(),
                            "python": platform.python_version(), "cpus": os.cpu_count()}
    try:
        info["load_avg"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    try:
        from importlib.metadata import version
        info["sueca_arena"] = version("sueca-arena")
    except Exception:
        pass
    return info


# -- the HTML report ---------------------------------------------------------------------------
# One file, nothing fetched: the charts are inline SVG drawn here (no script, no external URL),
# so it opens anywhere, offline, and can be attached to a CI run as it is.

_W, _H, _PAD_L, _PAD_B, _PAD_T, _PAD_R = 760, 240, 60, 34, 14, 16
COLORS = {"p50": "#2b7bb9", "p95": "#e69f00", "p99": "#d55e00", "max": "#999999",
          "moves/s": "#2b7bb9", "target moves/s": "#009e73", "in flight": "#cc79a7",
          "timeouts": "#d55e00", "faults": "#7f3fbf"}


def _esc(x: Any) -> str:
    import html
    return html.escape(str(x), quote=True)


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if v <= m * mag:
            return m * mag
    return 10 * mag


def _chart(series: Sequence[tuple[str, Sequence[tuple[float, float]]]], xmax: float,
           ylabel: str, log: bool = False, bars: bool = False,
           xtick: Callable[[float], str] | None = None) -> str:
    """An SVG line chart of ``(name, [(x, y)])`` series, x in seconds; or with ``bars`` one
    series of ``(x0, x1, y)`` bars, x ticks labelled by ``xtick(x)``."""
    w, h = _W - _PAD_L - _PAD_R, _H - _PAD_T - _PAD_B
    ys = [p[-1] for _, pts in series for p in pts
          if p[-1] is not None and (p[-1] > 0 or not log)]
    xmax = max(xmax, 1.0)
    if log:
        lo = 10 ** math.floor(math.log10(min(ys))) if ys else 0.1
        hi = 10 ** math.ceil(math.log10(max(ys))) if ys else 10.0
        hi = max(hi, lo * 10)

        def fy(y: float) -> float:
            y = min(max(y, lo), hi)
            return _PAD_T + h - h * (math.log10(y) - math.log10(lo)) / (
                math.log10(hi) - math.log10(lo))
        ticks = [lo * 10 ** k for k in range(round(math.log10(hi / lo)) + 1)]
    else:
        hi = _nice_max(max(ys) if ys else 1.0)

        def fy(y: float) -> float:
            return _PAD_T + h - h * min(y, hi) / hi
        ticks = [hi * k / 4 for k in range(5)]

    def fx(x: float) -> float:
        return _PAD_L + w * x / xmax

    out = [f'<svg viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" role="img" '
           f'aria-label="{_esc(ylabel)}">',
           f'<rect x="{_PAD_L}" y="{_PAD_T}" width="{w}" height="{h}" fill="#fafafa" '
           'stroke="#ccc"/>']
    for t in ticks:
        y = fy(t)
        out.append(f'<line x1="{_PAD_L}" x2="{_PAD_L + w}" y1="{y:.1f}" y2="{y:.1f}" '
                   'stroke="#e4e4e4"/>')
        out.append(f'<text x="{_PAD_L - 6}" y="{y + 4:.1f}" text-anchor="end" '
                   f'font-size="11">{t:g}</text>')
    step = _nice_max(xmax / 8)
    x = 0.0
    while x <= xmax + 1e-9:
        out.append(f'<text x="{fx(x):.1f}" y="{_PAD_T + h + 16}" text-anchor="middle" '
                   f'font-size="11">{xtick(x) if xtick else f"{x:g}"}</text>')
        x += step
    out.append(f'<text x="{_PAD_L + w / 2}" y="{_H - 2}" text-anchor="middle" '
               f'font-size="11">{"ms" if bars else "seconds"}</text>')
    out.append(f'<text x="12" y="{_PAD_T + h / 2}" font-size="11" text-anchor="middle" '
               f'transform="rotate(-90 12 {_PAD_T + h / 2})">{_esc(ylabel)}</text>')
    for k, (name, pts) in enumerate(series):
        color = COLORS.get(name, "#333")
        if bars:
            for x0, x1, y in pts:  # type: ignore[misc]
                top = fy(y)
                out.append(f'<rect x="{fx(x0):.1f}" y="{top:.1f}" width="'
                           f'{max(1.0, fx(x1) - fx(x0) - 1):.1f}" height="'
                           f'{_PAD_T + h - top:.1f}" fill="{color}"><title>'
                           f'{xtick(x0) if xtick else x0}-{xtick(x1) if xtick else x1} ms: '
                           f'{y:g}</title></rect>')
            continue
        good = [(px, py) for px, py in pts if py is not None and (py > 0 or not log)]
        if good:
            path = " ".join(f"{fx(px):.1f},{fy(py):.1f}" for px, py in good)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" '
                       'stroke-width="1.6"/>')
        out.append(f'<rect x="{_PAD_L + 8 + 120 * k}" y="{_PAD_T + 6}" width="10" height="10" '
                   f'fill="{color}"/><text x="{_PAD_L + 22 + 120 * k}" y="{_PAD_T + 15}" '
                   f'font-size="11">{_esc(name)}</text>')
    out.append("</svg>")
    return "".join(out)


def histogram(latencies: Sequence[float], bins: int = 40) -> list[tuple[float, float, int]]:
    """Log-spaced bins of latencies in ms: ``(low_ms, high_ms, count)``."""
    ms = [x * 1000 for x in latencies if x > 0]
    if not ms:
        return []
    lo, hi = min(ms), max(ms)
    if hi <= lo * 1.0001:
        return [(lo, hi, len(ms))]
    a, b = math.log10(lo), math.log10(hi)
    counts = [0] * bins
    for v in ms:
        counts[min(bins - 1, int((math.log10(v) - a) / (b - a) * bins))] += 1
    edges = [10 ** (a + (b - a) * k / bins) for k in range(bins + 1)]
    return [(round(edges[k], 3), round(edges[k + 1], 3), counts[k]) for k in range(bins)]


def html_report(result: dict[str, Any], stats: Stats) -> str:
    """The run as one self-contained HTML page: charts, faults, settings and the machine."""
    secs = stats.seconds
    xmax = max(len(secs), 1)
    per_q: dict[str, list[tuple[float, float]]] = {"p50": [], "p95": [], "p99": [], "max": []}
    for k, s in enumerate(secs):
        lat = sorted(s.latencies)
        if not lat:
            continue
        for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99), ("max", 1.0)):
            per_q[name].append((k + 0.5, quantile(lat, q) * 1000))  # type: ignore[operator]
    lat_chart = _chart(list(per_q.items()), xmax, "target latency, ms (log)", log=True)
    hist = histogram(stats.latencies())
    edges = [lo for lo, _, _ in hist] + [hist[-1][1]] if hist else [0.0, 1.0]

    def edge(x: float) -> str:  # bars are evenly spaced; their edges are log-spaced ms
        return f"{edges[min(len(edges) - 1, max(0, round(x)))]:.3g}"
    hist_chart = _chart([("p50", [(k, k + 1, n) for k, (_, _, n) in enumerate(hist)])],  # type: ignore[list-item]
                        max(len(hist), 1), "target moves", bars=True, xtick=edge)
    thr_chart = _chart([("moves/s", [(k + 0.5, s.moves) for k, s in enumerate(secs)]),
                        ("target moves/s", [(k + 0.5, s.target_moves)
                                            for k, s in enumerate(secs)])], xmax, "moves per s")
    flight_chart = _chart([("in flight", [(k + 0.5, s.in_flight) for k, s in enumerate(secs)])],
                          xmax, "matches in flight")
    fault_chart = _chart([("timeouts", [(k + 0.5, s.timeouts) for k, s in enumerate(secs)]),
                          ("faults", [(k + 0.5, s.faults) for k, s in enumerate(secs)])],
                         xmax, "per second")

    def table(rows: Sequence[tuple[str, Any]]) -> str:
        return "<table>" + "".join(f"<tr><th>{_esc(k)}</th><td>{_esc('—' if v is None else v)}"
                                   "</td></tr>" for k, v in rows) + "</table>"

    r = result
    verdict = ("<p class=bad>SLO broken: " + "; ".join(_esc(b) for b in r.get("slo_broken", []))
               + "</p>") if r.get("slo_broken") else "<p class=good>every SLO given holds</p>"
    headline = table([("moves/s (all seats)", r["moves_per_s"]),
                      ("target moves/s", r["target_moves_per_s"]),
                      ("target latency p50 / p95 / p99 / max (ms)",
                       f"{r['p50_ms']} / {r['p95_ms']} / {r['p99_ms']} / {r['max_ms']}"),
                      ("matches started / finished", f"{r['matches_started']} / "
                                                     f"{r['matches_finished']}"),
                      ("match duration p50 / max (s)", f"{r['match_s_p50']} / "
                                                       f"{r['match_s_max']}"),
                      ("ends", ", ".join(f"{k} {v}" for k, v in sorted(r["ends"].items())))])
    faults_t = table([(k, r.get(k)) for k in ("timeouts", "disconnects", "renuncias",
                                              "protocol_faults", "failed", "cut", "faults",
                                              "reconnects", "stopped_early", "target_exited",
                                              "first_error")])
    settings = table([(k, r.get(k)) for k in ("target", "mode", "referee", "house", "games",
                                              "duration_s", "ramp_s", "rate", "variant",
                                              "move_ms", "bank_ms", "bot_processes",
                                              "net_rtt_ms", "net_jitter_ms", "slo",
                                              "seconds", "latency_source")])
    machine_t = table(sorted((r.get("machine") or {}).items()))
    style = ("body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:820px}"
             "table{border-collapse:collapse;margin:8px 0 18px}th,td{border:1px solid #ddd;"
             "padding:3px 8px;text-align:left;font-size:13px}th{background:#f4f4f4;"
             "font-weight:600}.bad{color:#b00;font-weight:600}.good{color:#070}"
             "h2{font-size:17px;margin-top:26px}")
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>Load test of "
            f"{_esc(r['target'])}</title><style>{style}</style></head><body>"
            f"<h1>Load test of {_esc(r['target'])}</h1>{verdict}{headline}"
            f"<h2>Target latency over time (per second: p50, p95, p99, max)</h2>{lat_chart}"
            f"<h2>Target latency histogram ({r['samples']} moves)</h2>{hist_chart}"
            f"<h2>Throughput over time</h2>{thr_chart}{flight_chart}"
            f"<h2>Faults</h2>{fault_chart}{faults_t}"
            f"<h2>Settings</h2>{settings}<h2>Machine</h2>{machine_t}"
            f"<p style='font-size:12px;color:#666'>Latency: {_esc(r['latency_source'])}; see "
            "the README section on sueca-arena loadtest.</p></body></html>")
