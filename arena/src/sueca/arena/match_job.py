"""Running one match for the league, and recording it: the domain behind the Celery task.

Two ways to run a match:

``referee`` (production)
    Place the match on a referee replica where every bot has free capacity (``ListBots`` on
    each known replica: ``SUECA_REFEREES`` plus replicas that heartbeat into Redis), then
    ``RunMatch`` through :func:`sueca.referee.control.run_match`.
``local`` (tests, laptops without a referee)
    Play the example bots in-process, the same engine and the same replay record. A bot name
    maps to an example (``random``, ``heuristic``, ``reckless``) or, through
    ``SUECA_LOCAL_BOTS="name=module:Class,..."``, to any class.

:func:`play_and_record` is the whole job of one task run; it raises :class:`Transient` for
what is worth retrying (no replica reachable, no free capacity, Redis lost) and
:class:`Permanent` for what is not (a bad spec, an unknown bot). The task decides about retries.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from enum import StrEnum
from functools import partial
from typing import Any

import grpc

from sueca.arena import botstats
from sueca.arena.fairplay import CHALLENGE
from sueca.arena.records import JobResult, JobStatus, MatchRecord, Outcome, ResultEntry, Timing
from sueca.arena.seeds import reseeded
from sueca.arena.settings import current
from sueca.arena.store import (
    HEARTBEAT_SECONDS,
    LEASE_SECONDS,
    TRANSIENT_REDIS_ERRORS,
    Store,
    UnknownMatch,
    default_owner,
)
from sueca.arena.store.ratings import catch_up
from sueca.codec import SpecDict, fault_detail, parse_seed
from sueca.engine import BotFailed, End, Variant, replay
from sueca.engine.errors import SuecaError
from sueca.referee import control
from sueca.referee.control import BotStatus
from sueca.sdk.bots import BotLoadError, load_bot
from sueca.sdk.channels import CredentialsError, client_tls_from_env, open_channel
from sueca.sdk.local import play_local
from sueca.sdk.logs import log_context

__all__ = ["Transient", "TransientKind", "Permanent", "run_match", "run_local", "run_on_referee",
           "place", "play_and_record", "replicas", "outcome_to_result"]

#: gRPC status codes worth another try: the replica is down or busy, a bot is (re)connecting.
TRANSIENT_CODES = {"UNAVAILABLE", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "DEADLINE_EXCEEDED",
                   "ABORTED", "ALREADY_EXISTS", "CANCELLED", "INTERNAL", "UNKNOWN"}
# the referee refused this worker's operator token: the worker's configuration, not the match
REFUSED_CODES = {"UNAUTHENTICATED", "PERMISSION_DENIED"}
TOKEN_HINT = "check SUECA_OPERATOR_TOKEN on this worker"
# a referee's public port when it serves the operator API on its own (referee --operator-port)
PUBLIC_PORT_HINT = "a public port? list the referee's --operator-port in SUECA_REFEREES"


class TransientKind(StrEnum):
    """What a :class:`Transient` error lacked: the label of the retries metric."""

    REDIS = "redis"        # the arena's Redis did not answer
    CAPACITY = "capacity"  # no replica had every bot connected with a free seat
    ABORTED = "aborted"    # the referee aborted the match (shut down under it)
    REFEREE = "referee"    # no referee reachable, or one refused this worker


class Transient(Exception):
    """Worth retrying later: the message says what was missing, ``kind`` what sort of thing."""

    def __init__(self, message: str, kind: TransientKind = TransientKind.REFEREE) -> None:
        super().__init__(message)
        self.kind = kind


class Permanent(Exception):
    """Retrying cannot help: the match is recorded as failed with this message."""


# -- local -------------------------------------------------------------------------------------
def _local_bots() -> dict[str, str]:
    out = {}
    for item in (current().local_bots or "").split(","):
        name, sep, target = item.partition("=")
        if sep:
            out[name.strip()] = target.strip()
    return out


def run_local(spec: SpecDict) -> Outcome:
    """Play ``spec`` in-process (:func:`sueca.sdk.local.play_local`); returns the outcome (see
    :func:`run_match`)."""
    mapping = _local_bots()
    seed = spec.get("seed")
    if seed is not None:  # as the referee reads it: "42" deals what Match(seed=42) deals
        seed = parse_seed(str(seed))
    seats = list(spec["bots"])
    mid = spec.get("match_id", "")
    fd = spec.get("first_dealer")
    try:
        factories = [load_bot(mapping.get(name, name)) for name in seats]
        variant = Variant.from_dict(spec.get("variant") or {})
        match = play_local(factories, variant, seed, mid, seats,
                           spec.get("decks") or (), None if fd is None or fd < 0 else fd)
        detail = None
    except BotFailed as err:  # that seat's bot_error, as a referee records a resigning bot
        match, detail = err.match, fault_detail(err.detail)
        if match.end is None:
            match.stop(End.BOT_ERROR, err.seat)
        else:  # a hook raised after the last card: the result stands
            detail = None
    except (BotLoadError, SuecaError, ValueError) as err:
        raise Permanent(str(err)) from None
    fault_seat = match.fault_seat
    assert match.end is not None  # played to the end, or stopped just above
    return {"match_id": mid, "end": match.end, "winner": match.winner,
            "game_points": list(match.game_points), "fault_seat": fault_seat,
            "fault_bot": seats[fault_seat] if fault_seat is not None else None,
            "fault_detail": detail, "replay": replay.record(match, mid, seats),
            "referee": "local"}


# -- referee -----------------------------------------------------------------------------------
def replicas(store: Store | None) -> list[str]:
    """Known referee replicas: ``SUECA_REFEREES`` (comma-separated) and live heartbeats."""
    found = list(current().referees)
    if store is not None:
        try:
            for a in _announced(store):
                if a not in found:
                    found.append(a)
        except TRANSIENT_REDIS_ERRORS:
            pass
    return found


_announced_cache: tuple[Store, float, list[str]] | None = None


def _announced(store: Store, fresh: float = 1.0) -> list[str]:
    """The replicas heartbeating into ``store``, read at most once per ``fresh`` seconds by
    this process: an entry lives 30 s after a replica's last heartbeat, so a newer read
    changes little, and a read per match would cost a Redis round trip each."""
    global _announced_cache
    now = time.monotonic()
    if _announced_cache is None or _announced_cache[0] is not store or (
            now - _announced_cache[1] > fresh):
        _announced_cache = (store, now, store.referees())
    return list(_announced_cache[2])


def _code(err: BaseException) -> str | None:
    code = getattr(err, "code", None)
    if callable(code):
        try:
            return str(code().name)
        except Exception:
            return None
    return None


def place(bots: Sequence[str], addresses: Sequence[str],
          list_bots: Callable[[str], Sequence[BotStatus]], *, wait: float = 20.0,
          poll: float = 0.1, exclude: Sequence[str] = ()) -> str:
    """A replica where every bot has a free seat for each seat it takes, the least loaded one.

    Waits up to ``wait`` seconds for capacity to free up; :class:`Transient` if none does.
    """
    need = Counter(bots)
    deadline = time.monotonic() + wait
    problems: dict[str, str] = {}
    while True:
        best, best_slack = None, -1
        for addr in addresses:
            if addr in exclude:
                continue
            try:
                status = {b["bot"]: b for b in list_bots(addr)}
            except CredentialsError as err:  # our TLS files, not the replica: say so now
                raise Transient(f"this worker's TLS settings: {err}") from None
            except Exception as err:  # an unreachable replica: try the others
                code = _code(err)
                problems[addr] = (f"refused our operator token ({code}; {TOKEN_HINT})"
                                  if code in REFUSED_CODES
                                  else f"no operator API there ({code}: {PUBLIC_PORT_HINT})"
                                  if code == "UNIMPLEMENTED"
                                  else f"unreachable ({code or type(err).__name__})")
                continue
            missing = [n for n in need if n not in status]
            short = [n for n, c in need.items() if n in status and int(status[n]["free"]) < c]
            if missing:
                problems[addr] = f"{', '.join(missing)} not connected"
                continue
            if short:
                problems[addr] = f"no free capacity for {', '.join(short)}"
                continue
            slack = min(int(status[n]["free"]) - c for n, c in need.items())
            if slack > best_slack:
                best, best_slack = addr, slack
        if best is not None:
            return best
        if time.monotonic() >= deadline:
            detail = "; ".join(f"{a}: {p}" for a, p in problems.items()) or "no replica known"
            raise Transient(f"no referee replica can host bots {', '.join(sorted(need))} "
                            f"({detail})", TransientKind.CAPACITY)
        time.sleep(poll)


_channels: dict[str, grpc.Channel] = {}
_channels_pid = -1
_channels_lock = threading.Lock()


def _channel(address: str) -> grpc.Channel:
    """This process's gRPC channel to the referee at ``address``, shared by every match it
    runs (by all the threads of a ``--pool threads`` worker: a channel is thread-safe, the
    lock keeps two of them from being opened): a channel per match cost a connection set-up
    and teardown per match on both sides. A forked pool process opens its own (gRPC channels
    do not survive a fork)."""
    global _channels_pid
    with _channels_lock:
        if _channels_pid != os.getpid():
            _channels.clear()
            _channels_pid = os.getpid()
        ch = _channels.get(address)
        if ch is None:
            # four seats of up to 2,000 turn times: more than gRPC's default 8 KiB of metadata
            options = [*control.CHANNEL_OPTIONS, ("grpc.max_metadata_size", 1 << 20)]
            ch = _channels[address] = open_channel(address, client_tls_from_env(), options)
    return ch


def _drop_channel(address: str) -> None:
    """After a failed call: the next attempt connects afresh (new TLS settings, a restarted
    referee) instead of waiting out the old channel's reconnect back-off. The old channel is
    forgotten, not closed: other matches of this process (threads) may still be playing on it;
    gRPC closes it when the last of them lets go of it."""
    with _channels_lock:
        _channels.pop(address, None)


def run_on_referee(spec: SpecDict, addresses: Sequence[str], timeout: float, *,
                   wait: float = 20.0, placed: Callable[[str], object] | None = None,
                   ) -> Outcome:
    """Place and run ``spec``; the outcome names the ``referee`` and has the ``timing`` (place,
    run seconds). ``placed(address)`` is told each replica the match is sent to, before it runs.

    With several replicas the match goes where ListBots shows free capacity for every seat.
    With one there is nothing to choose: RunMatch itself reserves the seats atomically (no race
    between a ListBots answer and the run), and a busy or absent bot is waited for the same way.
    """
    if not addresses:
        raise Transient("no referee replica known: give --referee ADDR or start a referee "
                        "with --redis so that it announces itself")
    deadline = time.monotonic() + wait
    t0 = time.perf_counter()
    last_busy = ""
    while True:
        if len(addresses) == 1:
            addr = addresses[0]
        else:
            addr = place(spec["bots"], addresses, control.list_bots,
                         wait=max(0.0, deadline - time.monotonic()))
        t1 = time.perf_counter()
        if placed is not None:
            placed(addr)
        try:
            return _run_timed(addr, spec, timeout, replicas=len(addresses), place=t1 - t0)
        except Exception as err:
            code = _code(err)
            msg = err.details() if code and hasattr(err, "details") else str(err)
            if code not in ("RESOURCE_EXHAUSTED", "FAILED_PRECONDITION"):  # busy: channel fine
                _drop_channel(addr)
            if code in ("RESOURCE_EXHAUSTED", "FAILED_PRECONDITION"):
                last_busy = msg
                if time.monotonic() < deadline:  # busy, or lost a race for a seat: again
                    time.sleep(0.05 + random.random() * 0.1)
                    continue
                raise Transient(f"no referee replica can host bots "
                                f"{', '.join(sorted(set(spec['bots'])))} ({addr}: {last_busy})",
                                TransientKind.CAPACITY) from None
            if code in REFUSED_CODES:  # retried like a lost replica, the same with one or many
                raise Transient(f"referee {addr} refused our operator token ({code}; "
                                f"{TOKEN_HINT}): {msg}") from None
            if code == "UNIMPLEMENTED":  # a public port: the worker's settings, not the match
                raise Transient(f"referee {addr} has no operator API there "
                                f"({PUBLIC_PORT_HINT}): {msg}") from None
            if isinstance(err, CredentialsError):  # our TLS files changed since start-up
                raise Transient(f"this worker's TLS settings: {err}") from None
            if code is None and isinstance(err, (ValueError, TypeError)):
                raise Permanent(f"referee {addr} refused the match: {err}") from None
            if code is None or code in TRANSIENT_CODES:
                raise Transient(f"referee {addr}: {code or type(err).__name__}: {msg}") from None
            raise Permanent(f"referee {addr}: {code}: {msg}") from None


class _AskTimes(grpc.UnaryStreamClientInterceptor):
    """Adds request metadata ``sueca-turn-times: 1`` and keeps the call, whose trailing
    metadata holds every seat's turn times."""

    call: Any = None  # Any: grpc's call object (a Call and an iterator, not typed as both)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        # Any: the hook is generic per call in grpc's stubs; this one passes everything through
        details = details._replace(metadata=[*(details.metadata or ()),
                                             ("sueca-turn-times", "1")])
        self.call = continuation(details, request)
        return self.call


def _run_timed(addr: str, spec: SpecDict, timeout: float, *, replicas: int,
               place: float) -> Outcome:
    """:func:`sueca.referee.control.run_match` asking the referee for every seat's turn times:
    ``turn_times`` in the outcome, None from a referee that sends none; ``timing`` has the
    ``place`` seconds given and the run's."""
    started = time.perf_counter()
    ask = _AskTimes()  # per call (it keeps the call); the channel under it is the process's
    result = control.run_match(addr, spec, timeout,
                               channel=grpc.intercept_channel(_channel(addr), ask))
    try:
        times = botstats.parse_turn_times(ask.call.trailing_metadata())
    except Exception:  # no times is no reason to lose the result
        times = None
    timing: Timing = {"place": round(place, 4), "run": round(time.perf_counter() - started, 4)}
    return {**result, "referee": addr, "replicas": replicas, "timing": timing,
            "turn_times": times}


def run_match(spec: SpecDict, mode: str | None = None, store: Store | None = None, *,
              timeout: float | None = None, placed: Callable[[str], object] | None = None,
              ) -> Outcome:
    """Run ``spec`` (``mode`` local or referee, by default the settings' runner); the outcome
    is the referee's result (:class:`sueca.codec.ResultDict`) and who played it. ``placed``:
    see :func:`run_on_referee`."""
    mode = mode or current().runner
    if mode == "local":
        return run_local(spec)
    if mode != "referee":
        raise Permanent(f"bad runner {mode!r}: local or referee")
    timeout = timeout or current().match_timeout
    return run_on_referee(spec, replicas(store), timeout, wait=current().place_wait,
                          placed=placed)


# -- the job of one task run -------------------------------------------------------------------
def outcome_to_result(match: MatchRecord, out: Outcome,
                      played: SpecDict | None = None) -> ResultEntry:
    """The results-log entry of a finished match.

    A challenge's match (:data:`~sueca.arena.fairplay.CHALLENGE`) is never rated. ``played``
    is the spec actually played (:func:`reseeded`; default the scheduled one): its
    ``seed`` goes into the entry, so that scoring can tell a duplicate pair whose halves were
    dealt the same decks from one whose half was re-played on fresh ones.
    """
    spec = match["spec"]
    seed = (played or spec).get("seed")
    rep = out.get("replay")
    end = End(out["end"])
    entry: ResultEntry = {
        "match_id": match["id"], "tournament": match.get("tournament") or "",
        "pair": match.get("pair") or "", "seats": list(spec["bots"]),
        "seed": None if seed is None else str(seed),
        "end": end, "winner": out["winner"], "game_points": list(out["game_points"]),
        "fault_seat": out.get("fault_seat"), "fault_bot": out.get("fault_bot"),
        "fault_detail": out.get("fault_detail"),
        "deals": len(rep["deals"]) if rep else 0, "referee": out.get("referee", ""),
        "replicas": out.get("replicas", 0),
        "variant": spec.get("variant") or {}, "time": round(time.time(), 3),
        "rated": end is not End.ABORTED and match.get("tournament") != CHALLENGE,
        "stats": botstats.seat_stats(len(spec["bots"]), end, fault_seat=out.get("fault_seat"),
                                     replay=rep, times=out.get("turn_times")),
    }
    if match.get("competition"):
        entry["competition"] = match["competition"]
    if match.get("versions"):
        entry["versions"] = dict(match["versions"])
    return entry


def _placed(store: Store, mid: str, owner: str | None, referee: str) -> None:
    """The match's record names the replica its attempt is sent to. Redis away is ridden
    out: the match plays on, and its result names the replica all the same."""
    if owner:
        try:
            store.placed(mid, owner, referee)
        except TRANSIENT_REDIS_ERRORS:
            pass


class Heartbeat:
    """Renews the lease of a match being played every :data:`HEARTBEAT_SECONDS` from a daemon
    thread, and ends it on exit — so the match stays ours while we live and becomes re-runnable
    within :data:`LEASE_SECONDS` of our death. Redis trouble is ridden out: the next beat
    re-takes a lease that lapsed meanwhile, unless another owner took the match over."""

    def __init__(self, store: Store, mid: str, owner: str, *,
                 every: float = HEARTBEAT_SECONDS, lease: float = LEASE_SECONDS) -> None:
        self.store, self.mid, self.owner, self.every, self.lease = store, mid, owner, every, lease
        self.lost = False  # another owner took the match over while we played
        self.ended = False  # the lease is gone already (the result's record deleted it)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"lease-{mid}", daemon=True)

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            try:
                if not self.store.renew_lease(self.mid, self.owner, self.lease):
                    self.lost = True
            except Exception:  # Redis away: the next beat tries again
                pass

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(self.every + 1)
        if self.ended:
            return
        try:
            self.store.release_lease(self.mid, self.owner)
        except Exception:  # Redis away: the lease lapses on its own
            pass


def play_and_record(store: Store, mid: str, mode: str | None = None, *,
                    max_attempts: int | None = None, owner: str | None = None,
                    task: str = "", fold: Callable[[Store], object] | None = None,
                    ) -> JobResult:
    """Run match ``mid`` once and record it; the result's status is ``recorded``,
    ``duplicate`` (someone recorded it while we played) or ``skipped`` (it was recorded before
    we started). Raises Transient / Permanent as described above, and
    :class:`sueca.arena.store.LeaseHeld` when another attempt is playing the match right now
    (the task waits and looks again; it never plays the match a second time meanwhile).

    ``owner`` (default host/pid/``task``) holds the match's lease while it plays; a heartbeat
    thread keeps it (:class:`Heartbeat`).

    An ``aborted`` end (the referee shut down under the match) is Transient: the match is played
    again (on a fresh seed, see :func:`reseeded`) rather than recorded without a result.

    ``fold(store)`` brings the live ratings up to date after a new result; by default
    :func:`sueca.arena.store.ratings.catch_up`, here and now (the Celery task hands it to a thread).
    """
    owner = owner or default_owner(task)
    try:
        attempt, match = store.start_attempt(mid, owner=owner, task=task)  # one round trip
    except UnknownMatch:
        raise Permanent(f"unknown match {mid!r}") from None
    except TRANSIENT_REDIS_ERRORS as err:
        raise Transient(f"Redis unavailable: {err}", TransientKind.REDIS) from None
    if match is None:
        return {"status": JobStatus.SKIPPED, "match_id": mid}
    with Heartbeat(store, mid, owner) as beat, \
            log_context(match_id=mid, tournament=match.get("tournament") or None):
        out = _play(store, match, attempt, mode, max_attempts, fold or catch_up)
        beat.ended = out["status"] is JobStatus.RECORDED  # the record script ended the lease
        return out


def _play(store: Store, match: MatchRecord, attempt: int, mode: str | None,
          max_attempts: int | None, fold: Callable[[Store], object]) -> JobResult:
    mid = match["id"]
    if max_attempts is not None and attempt > max_attempts:
        # every earlier attempt died without an answer (a worker lost each time): a match
        # that kills its worker must not be re-delivered forever
        raise Permanent(f"gave up after {attempt - 1} attempts that never finished "
                        f"(worker lost?); last error: {match.get('error') or 'none'}")
    started = time.monotonic()
    played = reseeded(match["spec"], attempt)
    out = run_match(played, mode, store,
                    placed=partial(_placed, store, mid, match.get("owner")))
    if out["end"] is End.ABORTED:
        raise Transient(f"match aborted by referee {out.get('referee', '?')}",
                        TransientKind.ABORTED)
    result = outcome_to_result(match, out, played)
    result["seconds"] = round(time.monotonic() - started, 4)
    timing = out.get("timing", Timing()).copy()
    try:
        t0 = time.perf_counter()
        new, entry = store.record_result(mid, result, out.get("replay"), must_exist=True)
        t1 = time.perf_counter()
        if new:
            store.ensure_bot_stats()  # an arena older than the per-bot totals: folded once
            fold(store)  # by default here; the task's hands it to a thread of this process
        timing["record"] = round(t1 - t0, 4)
        timing["ratings"] = round(time.perf_counter() - t1, 4)
    except TRANSIENT_REDIS_ERRORS as err:
        raise Transient(f"Redis unavailable while recording: {err}",
                        TransientKind.REDIS) from None
    if new:  # the per-bot series count each result once, as the totals in Redis do
        # deferred: creates the worker's metrics, which must follow celery_app.prepare_metrics_env
        from sueca.arena.metrics import observe_bots
        observe_bots(store, result["seats"], result["stats"], out.get("turn_times"))
    return {"status": JobStatus.RECORDED if new else JobStatus.DUPLICATE, "match_id": mid,
            "entry": entry, "end": result["end"], "attempt": attempt,
            "referee": result["referee"], "timing": timing}
