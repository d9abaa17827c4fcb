"""Load-testing one bot: many matches at once against the referee's house bots.

Every match seats the *target* once (in seat ``i % 4`` for the i-th match, so it leads and
follows alike) and the referee's own house bots (:mod:`sueca.referee.house`) in the three other
seats: every move the referee waits for over the network is the target's.

The load has a shape: up to ``games`` matches in flight, the cap growing linearly over ``ramp``
seconds, held, and shrinking over the last ``ramp`` seconds of ``duration`` (matches already
running finish; none is started after ``duration``), with at most ``rate`` new matches per
second when given. What is left after ``drain`` more seconds is cut (its RunMatch call is
cancelled, so the referee aborts it; counted as ``cut``, never as the target's fault).

How the target's latency is measured (no per-bot histogram leaves the referee): each match is
run through ``MatchService.RunMatch`` with the per-card events on, and a target's move is timed
from the arrival of the event just before its card (the card, trick or deal start after which
the referee asked the target: house bots answer in the same event-loop pass) to the arrival of
its card event. Both events travel the same stream, so this is the referee's turn time for the
target (queueing the request, the network both ways, the bot's thinking, the referee reading the
answer) as the match's caller sees it, with the caller's own delays mostly cancelling. A
redeal answer (variant weak_hand_redeal) has no event: its time is folded into the next card.

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
        share = min(1.0, (t + 1e-9) / ramp, (self.duration - t) / ramp)
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
    fatal: str | None = None
    elapsed: float = 0.0

    def at(self, now: float) -> Second:
        k = int(now - self.t0)
        while len(self.seconds) <= k:
            self.seconds.append(Second(in_flight=self.in_flight))
        return self.seconds[k]

    def error(self, message: str) -> None:
        self.failed += 1
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
        "latency_source": "RunMatch event stream: target card arrival minus the arrival of "
                          "the event before it",
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

async def _one(i: int, seat: int, spec: dict[str, Any], channel: Any, target: Target,
               stats: Stats) -> None:
    import grpc

    from sueca import wire as conv
    from sueca.referee.security import operator_metadata
    from sueca.v1 import sueca_pb2 as pb

    call = channel.unary_stream(
        "/sueca.v1.MatchService/RunMatch", request_serializer=pb.MatchSpec.SerializeToString,
        response_deserializer=pb.MatchEvent.FromString)(
            conv.spec_to_pb(spec), timeout=target.match_timeout, metadata=operator_metadata())
    clock = time.monotonic
    last = clock()
    finished = False
    try:
        async for event in call:
            now = clock()
            kind = event.WhichOneof("event")
            if kind == "card":
                sec = stats.at(now)
                sec.moves += 1
                if event.card.seat == seat:
                    sec.target_moves += 1
                    sec.latencies.append(now - last)
            elif kind == "deal_end":
                d = event.deal_end
                if d.end == "renuncia" and d.fault_seat == seat:
                    stats.renuncias += 1
            elif kind == "result":
                r = event.result
                stats.ends[r.end] += 1
                finished = True
                if r.fault_seat == seat:
                    if r.end == "timeout":
                        stats.timeouts += 1
                        stats.at(now).timeouts += 1
                    elif r.end == "disconnect":
                        stats.disconnects += 1
                        stats.at(now).faults += 1
            last = now
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

    run_id = uuid.uuid4().hex[:8]
    stats = Stats()
    channels = [control.aio_channel(target.address)
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
    sent SIGTERM if this process dies (:func:`sueca.arena.redisproc.child_setup`); all stopped
    by :meth:`stop`, the referee last."""

    NAME = "target"

    def __init__(self, spec: str, processes: int, capacity: int, house: Sequence[str]) -> None:
        self.spec, self.processes, self.capacity = spec, processes, capacity
        self.house = list(house)
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
                                    "--port", str(port), "--metrics-port", str(mport),
                                    "--redis", self.redis.url, "--drain-seconds", "2",
                                    "--house-bots", ",".join(self.house),
                                    "--log-level", "warning"])
            self._wait(lambda n: True, deadline, "the referee to serve")
            for k in range(self.processes):
                # the token in the environment, never in argv (ps shows argv to everyone)
                self._spawn(f"target-{k}", [sys.executable, "-c", "import sys; from sueca.sdk."
                                            "cli import main; sys.exit(main())", "run",
                                            self.spec, "--server", self.address, "--capacity",
                                            str(self.capacity), "--log-level", "warning"],
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

        from sueca.arena.redisproc import child_setup
        log = open(self.logs / f"{name}.log", "wb")
        try:
            self.procs[name] = (subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=dict(os.environ, PYTHONUNBUFFERED="1", **env), preexec_fn=child_setup()),
                log)
        except BaseException:
            log.close()
            raise

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
