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
trailing metadata (``sueca-turn-times-us``, see :meth:`ClockedMatch.turn_times_metadata`). So
the figures are the referee's own: queueing the request and the batch it leaves in, the network
both ways, the bot's thinking, the referee reading the answer. Each is placed in time at the
arrival of the target's card event (RunMatch runs with card events on). A turn that timed out
has no time (it is counted in ``timeouts``). Against a referee that sends no turn times, the
fallback is the gap in the event stream between the target's card and the event before it
(noisier: this process's own delays compress or stretch it); ``latency_source`` says which
was used, per match.

Faults: ``timeouts``, ``disconnects``, ``bot_errors`` (the target's code raised and its SDK
resigned the game; the first reason is kept in ``first_bot_error``) and ``renuncias`` are read
from the match results and deal ends (only those charged to the target's seat);
``protocol_faults`` and ``late_answers`` (answers that came after their game ended: a slow bot,
not a broken one) from the referee's ``sueca_referee_faults_total`` of class ``protocol`` and
``late`` when its metrics address is known (always on a private arena; on a shared referee they
may be other bots'); ``failed`` counts matches whose
RunMatch call failed; ``reconnects`` are new sessions of the target seen by polling ListBots
every second (a reconnect faster than that may be missed).
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from sueca import codec as conv
from sueca.arena.promscrape import scrape, total
from sueca.arena.quantiles import nearest_rank
from sueca.engine import End
from sueca.referee import control
from sueca.referee.security import operator_metadata
from sueca.sdk.channels import client_tls_from_env, open_aio_channel
from sueca.v1 import sueca_pb2 as pb

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
    bot_errors: int = 0
    first_bot_error: str | None = None  # the reason of the first (codec.fault_detail: capped)
    renuncias: int = 0
    failed: int = 0
    cut: int = 0
    protocol_faults: int | None = None
    late_answers: int | None = None
    reconnects: int | None = None
    first_error: str | None = None
    sources: Counter[str] = field(default_factory=Counter)  # matches by latency source
    match_seconds: list[float] = field(default_factory=list)  # each finished match's duration
    fatal: str | None = None
    # by referee address: "finished", "timeouts", "faults" counts, and the target's latencies
    by_referee: defaultdict[str, Counter[str]] = field(
        default_factory=lambda: defaultdict(Counter))
    referee_latencies: defaultdict[str, list[float]] = field(
        default_factory=lambda: defaultdict(list))
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
    """Where the load goes: the referee (or several, comma-separated: the matches go to each
    in turn), the target's registered name, the house bots' names (``random`` ->
    ``house:random``), and the spec fields every match shares."""

    address: str
    bot: str
    house: Sequence[str] = ("random",)
    variant: Sequence[str] = ()
    move_ms: int | None = None
    bank_ms: int | None = None
    grace_ms: int | None = None
    match_timeout: float = 600.0
    metrics_url: str | None = None   # the referee's /metrics, for protocol faults

    @property
    def addresses(self) -> list[str]:
        return [a.strip() for a in self.address.split(",") if a.strip()]

    def spec(self, i: int, run_id: str) -> dict[str, Any]:  # Any: a match spec, as JSON
        """Match ``i``'s spec: the target in seat ``i % 4``, house bots in the others."""
        seat = i % 4
        house = [f"house:{h}" for h in self.house]
        bots = [house[k % len(house)] for k in range(4)]
        bots[seat] = self.bot
        spec: dict[str, Any] = {"match_id": f"load-{run_id}-{i}", "bots": bots, "quiet": False,
                                "variant": list(self.variant)}
        for key in ("move_ms", "bank_ms", "grace_ms"):  # a bank of 0 is sent: no bank
            if getattr(self, key) is not None:
                spec[key] = getattr(self, key)
        return spec


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _ms(x: float | None) -> float | None:
    return None if x is None else round(x * 1000, 3)


def live(stats: Stats, now: float) -> dict[str, Any]:  # Any: figures, as JSON
    """What the live view shows: the last few seconds, and the totals so far."""
    k = int(now - stats.t0)
    last = stats.seconds[k - 1] if 0 < k <= len(stats.seconds) else Second()
    recent = sorted(stats.recent(now))
    return {"elapsed": now - stats.t0, "in_flight": stats.in_flight, "started": stats.started,
            "moves_per_s": last.moves, "target_moves_per_s": last.target_moves,
            "p50_ms": _ms(nearest_rank(recent, 0.5)), "p95_ms": _ms(nearest_rank(recent, 0.95)),
            "p99_ms": _ms(nearest_rank(recent, 0.99)), "max_ms": _ms(recent[-1] if recent else None),
            "timeouts": stats.timeouts, "faults": faults(stats), "renuncias": stats.renuncias,
            "protocol_faults": stats.protocol_faults, "late_answers": stats.late_answers,
            "bot_errors": stats.bot_errors, "reconnects": stats.reconnects,
            "failed": stats.failed}


def faults(stats: Stats) -> int:
    """The target's faults: protocol faults (when known), disconnects, bot errors and failed
    matches. Timeouts are counted on their own; late answers are a slow bot's, counted apart;
    renúncias are a move of the game, not a fault here."""
    return (stats.protocol_faults or 0) + stats.disconnects + stats.bot_errors + stats.failed


def summary(stats: Stats, shape: Shape, target: Target) -> dict[str, Any]:  # Any: JSON
    """The run's result: what the table, ``--json`` and the report show."""
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
        "p50_ms": _ms(nearest_rank(lat, 0.5)), "p95_ms": _ms(nearest_rank(lat, 0.95)),
        "p99_ms": _ms(nearest_rank(lat, 0.99)), "max_ms": _ms(lat[-1] if lat else None),
        "mean_ms": _ms(sum(lat) / len(lat)) if lat else None,
        "timeouts": stats.timeouts, "disconnects": stats.disconnects,
        "bot_errors": stats.bot_errors, "first_bot_error": stats.first_bot_error,
        "renuncias": stats.renuncias, "protocol_faults": stats.protocol_faults,
        "late_answers": stats.late_answers, "failed": stats.failed, "cut": stats.cut, "faults": faults(stats),
        "reconnects": stats.reconnects, "first_error": stats.first_error,
        "stopped_early": stats.stopped_early,
        "match_s_p50": _round(nearest_rank(sorted(stats.match_seconds), 0.5)),
        "match_s_max": _round(max(stats.match_seconds, default=None)),
        "latency_source": ", ".join(f"{k} ({v} matches)" for k, v in
                                    sorted(stats.sources.items())) or None,
        "by_referee": by_referee(stats),
    }


def by_referee(stats: Stats) -> dict[str, dict[str, Any]]:  # Any: figures, as JSON
    """The run split by the referee each match was sent to: matches finished, the target's
    latency, its timeouts and faults there."""
    out = {}
    for addr in sorted(set(stats.by_referee) | set(stats.referee_latencies)):
        lat, n = sorted(stats.referee_latencies[addr]), stats.by_referee[addr]
        out[addr] = {"matches_finished": n["finished"], "samples": len(lat),
                     "p50_ms": _ms(nearest_rank(lat, 0.5)), "p99_ms": _ms(nearest_rank(lat, 0.99)),
                     "timeouts": n["timeouts"], "faults": n["faults"]}
    return out


def check_slo(result: dict[str, Any], p99_ms: float | None = None,  # Any: summary()'s JSON
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

def parse_turn_times(metadata: Sequence[tuple[str, str | bytes]] | None,
                     seat: int) -> list[float] | None:
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
               stats: Stats, referee: str = "") -> None:
    call = channel.unary_stream(
        "/sueca.v1.MatchService/RunMatch", request_serializer=pb.MatchSpec.SerializeToString,
        response_deserializer=pb.MatchEvent.FromString)(
            conv.spec_to_pb(spec), timeout=target.match_timeout,
            metadata=(*operator_metadata(), ("sueca-turn-times", "1")))
    clock = time.monotonic
    last = began = clock()
    finished = False
    mine = stats.by_referee[referee or target.address]
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
                if d.end == End.RENUNCIA and d.fault_seat == seat:
                    stats.renuncias += 1
            elif kind == "result":
                r = event.result
                stats.ends[r.end] += 1
                mine["finished"] += 1
                stats.match_seconds.append(now - began)
                stats.failed_in_row = 0
                finished = True
                if r.fault_seat == seat:
                    if r.end in (End.TIMEOUT, End.DISCONNECT, End.BOT_ERROR):
                        mine["timeouts" if r.end == End.TIMEOUT else "faults"] += 1
                    if r.end == End.TIMEOUT:
                        stats.timeouts += 1
                        stats.at(now).timeouts += 1
                    elif r.end == End.DISCONNECT:
                        stats.disconnects += 1
                        stats.at(now).faults += 1
                    elif r.end == End.BOT_ERROR:
                        stats.bot_errors += 1
                        stats.at(now).faults += 1
                        if stats.first_bot_error is None:
                            stats.first_bot_error = conv.fault_detail(r.fault_detail)
            last = now
        times = parse_turn_times(await call.trailing_metadata(), seat)
    except grpc.aio.AioRpcError as err:
        code = err.code().name if err.code() is not None else "UNKNOWN"
        details = (err.details() or "")[:300]
        stats.at(clock()).faults += 1
        mine["faults"] += 1
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
        stats.referee_latencies[referee or target.address].extend(times)
    else:  # an older referee: the gaps in the event stream
        stats.sources["event stream"] += 1
        for when, gap in zip(arrivals, gaps):
            stats.at(when).latencies.append(gap)
        stats.referee_latencies[referee or target.address].extend(gaps)


async def _poll(target: Target, stats: Stats, stop: asyncio.Event) -> None:
    """Protocol faults and late answers (referee metrics) and target sessions (ListBots), once
    a second."""
    def faults_now() -> tuple[int, int] | None:
        if not target.metrics_url:
            return None
        families = scrape(target.metrics_url, timeout=2)
        return (int(total(families, "sueca_referee_faults_total", {"class": "protocol"})),
                int(total(families, "sueca_referee_faults_total", {"class": "late"})))

    def sessions_now() -> int:
        return sum(b["sessions"] for addr in target.addresses
                   for b in control.list_bots(addr, timeout=2) if b["bot"] == target.bot)

    base: tuple[int, int] | None = None
    sessions: int | None = None
    reconnects = 0
    while True:
        try:
            f = await asyncio.to_thread(faults_now)
            if f is not None:
                base = f if base is None else base
                stats.protocol_faults = f[0] - base[0]
                stats.late_answers = f[1] - base[1]
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
                   on_tick: Callable[[dict[str, Any]], None] | None = None,  # Any: live()
                   tick: float = 0.5) -> Stats:
    """Run the load; ``on_tick`` gets :func:`live` every ``tick`` seconds. Raises
    :class:`LoadTestError` when the referee refuses the target's matches outright."""
    run_id = uuid.uuid4().hex[:8]
    stats = Stats()
    # room for the turn times in the trailing metadata (up to 4 x 2000 numbers a match)
    options = [*control.CHANNEL_OPTIONS, ("grpc.max_metadata_size", 1 << 20)]
    addresses = target.addresses
    channels = [(addr, open_aio_channel(addr, client_tls_from_env(), options))
                for _ in range(max(1, min(4, shape.games // 64 + 1))) for addr in addresses]
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
                addr, channel = channels[i % len(channels)]
                task = asyncio.create_task(_one(i, i % 4, spec, channel, target, stats, addr))
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
        for _, c in channels:
            await c.close()
    if on_tick is not None:
        on_tick(live(stats, clock()))
    if stats.fatal is not None:
        raise LoadTestError(stats.fatal)
    return stats
