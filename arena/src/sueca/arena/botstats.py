"""Per-bot health: what each seat did in one match, and every bot's running totals.

One set of numbers in three places:

* **the results log**: each entry carries ``stats``, one small dict per seat
  (:func:`seat_stats`): ``moves`` (cards it played), ``renuncias``, ``timeouts``,
  ``disconnects`` and ``bot_errors`` (each only when not 0) and, when the referee sent its
  turn times, ``turns``, ``p50_ms``, ``p99_ms``, ``max_ms`` and ``hist`` (the turns per latency
  bucket, trailing zeros cut). About 80 bytes a seat; an entry without ``stats`` (written
  before they existed) still reads: :func:`stats_of` derives what its replay tells (moves,
  renúncias) and its end tells (timeout, disconnect, bot error).
* **Redis**: a hash per bot (``stats:bot:{name}``, :mod:`sueca.arena.keys`) with counters
  (:data:`COUNTERS`), ``max_us``, ``last`` and the latency buckets ``h0``.. ``h16``, added to by
  the very Lua script that appends the entry (:meth:`sueca.arena.store.Store.record_result`):
  a re-delivered task that finds the match recorded adds nothing.
  :meth:`~sueca.arena.store.Store.rebuild_bot_stats` folds them again from the log.
  :func:`summary` reads a hash into what the leaderboard and the bot page show.
* **Prometheus**: the worker's ``sueca_bot_*`` series (:mod:`sueca.arena.metrics`), for a
  bounded number of bots.

Latency is the referee's own time for each answered turn (the turn request queued for the bot
to its valid answer read: network both ways and the bot's thinking), sent in RunMatch's trailing
metadata when the caller asks (:data:`TURN_TIMES_KEY`). A turn that timed out has no time: it
is a timeout. The buckets are powers of two from 0.25 ms to 8.192 s (:data:`BOUNDS_US`) plus
one above; a percentile read from them (:func:`quantile`) is within a factor of two of the
true one, and never above the bot's slowest turn.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from sueca.arena.quantiles import geometric_bucket_quantile, nearest_rank
from sueca.arena.records import BotHealth, SeatStats
from sueca.engine import End

__all__ = ["BOUNDS_US", "COUNTERS", "FAULT_KINDS", "TURN_TIMES_KEY", "parse_turn_times",
           "seat_stats", "stats_of", "increments", "Totals", "summary", "quantile"]

#: Upper bounds (microseconds) of the latency buckets ``h0``..``h15``; ``h16`` counts the rest.
BOUNDS_US = tuple(250 << k for k in range(16))
#: Integer fields of a bot's hash, summed over its matches.
COUNTERS = ("games", "moves", "renuncias", "timeouts", "disconnects", "bot_errors", "turns")
#: Fault kinds, as the leaderboard, the API and ``sueca_bot_faults_total{kind}`` name them.
FAULT_KINDS = ("renuncia", "timeout", "disconnect", "bot_error")
_FAULT_FIELDS = dict(zip(FAULT_KINDS, ("renuncias", "timeouts", "disconnects", "bot_errors")))
#: The match ends charged to one seat (a renúncia is counted per deal, from the replay).
_MATCH_FAULTS = (End.TIMEOUT, End.DISCONNECT, End.BOT_ERROR)
#: The trailing metadata key of RunMatch's turn times (``sueca.referee.clocked_match``).
TURN_TIMES_KEY = "sueca-turn-times-us"
MAX_SEAT_TIMES = 10_000  # a seat's times read from the metadata at most (the referee sends 2,000)


def parse_turn_times(metadata: Iterable[tuple[str, str | bytes]] | None,
                     ) -> dict[int, list[int]] | None:
    """Each seat's turn times in microseconds from ``sueca-turn-times-us: 0=812,977;1=...``;
    None when the referee sent none. Anything malformed is skipped, not trusted."""
    for key, value in metadata or ():
        if key != TURN_TIMES_KEY:
            continue
        out: dict[int, list[int]] = {}
        for part in str(value).split(";"):
            who, _, times = part.partition("=")
            if who not in ("0", "1", "2", "3"):
                continue
            try:
                out[int(who)] = [max(0, int(x)) for x in times.split(",")[:MAX_SEAT_TIMES] if x]
            except ValueError:
                continue
        return out
    return None


def _bucket(us: int) -> int:
    return bisect_left(BOUNDS_US, us)


def _histogram(times: Sequence[int]) -> list[int]:
    hist = [0] * (len(BOUNDS_US) + 1)
    for t in times:
        hist[_bucket(t)] += 1
    while hist and not hist[-1]:
        hist.pop()
    return hist


def _rank(ordered: Sequence[int], q: float) -> int:
    """The nearest-rank ``q`` quantile of a sorted list that is not empty."""
    found = nearest_rank(ordered, q)
    assert found is not None, "no values"
    return found


def seat_stats(seats: int, end: str | None, *, fault_seat: int | None,
               replay: Mapping[str, Any] | None,  # Any: a stored replay, read defensively
               times: Mapping[int, Sequence[int]] | None = None) -> list[SeatStats]:
    """One dict per seat (see the module's notes). ``replay`` (sueca-replay/1) gives the cards
    played and the renúncias (a deal that ended ``renuncia`` names its ``fault_seat``);
    without it, a match that ended on a renúncia still charges its seat one."""
    out: list[dict[str, Any]] = [{"moves": 0, "renuncias": 0, "timeouts": 0, "disconnects": 0}
                                 for _ in range(seats)]
    deals = (replay or {}).get("deals")
    if isinstance(deals, list):
        for deal in deals:
            for trick in deal.get("tricks") or ():
                leader = int(trick.get("leader") or 0)
                for k in range(len(trick.get("cards") or ())):
                    seat = (leader + k) & 3
                    if seat < seats:
                        out[seat]["moves"] += 1
            fs = deal.get("fault_seat")
            if deal.get("end") == End.RENUNCIA and isinstance(fs, int) and 0 <= fs < seats:
                out[fs]["renuncias"] += 1
    elif end == End.RENUNCIA and fault_seat is not None and 0 <= fault_seat < seats:
        out[fault_seat]["renuncias"] += 1
    if end in _MATCH_FAULTS and fault_seat is not None and 0 <= fault_seat < seats:
        out[fault_seat][_FAULT_FIELDS[end]] = 1
    for seat, mine in (times or {}).items():
        if not 0 <= seat < seats or not mine:
            continue
        ordered = sorted(mine)
        out[seat].update(turns=len(ordered), p50_ms=round(_rank(ordered, 0.5) / 1000, 3),
                         p99_ms=round(_rank(ordered, 0.99) / 1000, 3),
                         max_ms=round(ordered[-1] / 1000, 3), hist=_histogram(ordered))
    for st in out:  # most seats commit no fault: ~45 bytes a seat of every entry saved
        for f in ("renuncias", "timeouts", "disconnects", "bot_errors"):
            if not st.get(f):
                st.pop(f, None)
    return cast(list[SeatStats], out)


def stats_of(entry: Mapping[str, Any],  # Any: a stored entry of any age, read defensively
             replay: Mapping[str, Any] | None = None) -> list[SeatStats]:
    """The per-seat stats of a results-log entry: its own, or (an entry written before they
    existed) what its ``replay`` and its end tell."""
    got = entry.get("stats")
    if isinstance(got, list):
        return cast(list[SeatStats], got)
    fs = entry.get("fault_seat")
    return seat_stats(len(entry.get("seats") or ()), entry.get("end"),
                      fault_seat=fs if isinstance(fs, int) else None, replay=replay)


def increments(seats: Sequence[str],  # Any: stored per-seat stats (keys read by name, defensively)
               stats: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """What one match adds to each bot's hash: counters and buckets summed over its seats,
    ``games`` 1 (a bot in two seats played one match), ``max_us`` its slowest turn."""
    out: dict[str, dict[str, int]] = {}
    for bot, st in zip(seats, stats):
        inc = out.setdefault(str(bot), {"games": 1, "max_us": 0})
        for f in COUNTERS[1:]:
            v = int(st.get(f) or 0)
            if v:
                inc[f] = inc.get(f, 0) + v
        for i, n in enumerate(st.get("hist") or ()):
            if n:
                inc[f"h{i}"] = inc.get(f"h{i}", 0) + int(n)
        if st.get("max_ms"):
            inc["max_us"] = max(inc["max_us"], round(float(st["max_ms"]) * 1000))
    return out


class Totals:
    """Bots' hashes folded in memory, as the Lua script would build them (for a rebuild)."""

    def __init__(self) -> None:
        self.bots: dict[str, dict[str, float]] = {}

    def add(self, seats: Sequence[str], stats: Sequence[Mapping[str, Any]],  # Any: as increments'
            when: float | None) -> None:
        for bot, inc in increments(seats, stats).items():
            row = self.bots.setdefault(bot, {})
            for f, v in inc.items():
                if f != "max_us":
                    row[f] = row.get(f, 0) + v
                elif v > row.get(f, 0):  # as the script: set only by a timed turn
                    row[f] = v
            if when is not None and when > row.get("last", 0.0):  # as the script
                row["last"] = when


def quantile(hist: Sequence[int], q: float, max_us: float) -> float | None:
    """The ``q`` quantile (ms) of a turn-time histogram (:data:`BOUNDS_US` buckets), capped at
    the slowest turn; None without turns."""
    us = geometric_bucket_quantile(hist, BOUNDS_US, q, max_us)
    return None if us is None else round(us / 1000, 3)


def summary(raw: Mapping[Any, Any] | None) -> BotHealth:  # Any: HGETALL's bytes or text
    """A bot's hash (as HGETALL returns it, bytes or text; None or empty: never recorded) as
    shown: ``games``, ``moves``, ``faults`` by kind, ``turns``, ``p50_ms``, ``p99_ms``,
    ``max_ms`` (the latency ones None without timed turns), ``last``."""
    row = {(k.decode() if isinstance(k, bytes) else str(k)): float(v) for k, v in (raw or {}).items()}
    hist = [int(row.get(f"h{i}", 0)) for i in range(len(BOUNDS_US) + 1)]
    max_us = row.get("max_us", 0.0)
    turns = int(row.get("turns", 0))
    return {"games": int(row.get("games", 0)), "moves": int(row.get("moves", 0)),
            "faults": {k: int(row.get(f, 0)) for k, f in _FAULT_FIELDS.items()},
            "turns": turns, "p50_ms": quantile(hist, 0.5, max_us),
            "p99_ms": quantile(hist, 0.99, max_us),
            "max_ms": round(max_us / 1000, 3) if turns else None,
            "last": row.get("last")}
