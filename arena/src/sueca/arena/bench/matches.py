"""Matches for the benches: play a batch through ``MatchService.RunMatch`` and turn it, with
the referee's metrics scraped before and after, into the figures the benches report (moves/s,
the referee's move round trip, faults), and the end of a run (warnings, the JSON last, the exit
status).

Random bots never fault, so a match that fails or ends by a fault means something is broken:
the batch stops scheduling after a few, and the run exits 1.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import grpc

from sueca.arena import render
from sueca.arena.processes import Supervisor
from sueca.arena.promscrape import Samples, deltas_by_label, histogram_delta
from sueca.arena.quantiles import histogram_quantile, nearest_rank
from sueca.codec import ResultDict, SpecDict
from sueca.engine import End
from sueca.referee.control import CHANNEL_OPTIONS, MatchAborted, run_match_async

#: The referee's histogram of move round trips (turn request sent -> the bot's answer read).
RTT_METRIC = "sueca_referee_move_rtt_seconds"
#: The referee's count of moves played.
MOVES_METRIC = "sueca_referee_moves_total"


def play(address: str | Sequence[str], names: Sequence[str], *, n: int, conc: int, move_ms: int,
          timeout: float, fleet: Supervisor,
          seats: Callable[[int], list[str]] | None = None, label: str = "matches",
          ) -> dict[str, Any]:
    """Play ``n`` matches, ``conc`` at once; match i goes to ``address`` (or the i-th of several,
    round robin) and seats ``seats(i)`` (default: ``names`` rotated by i)."""
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
        spec: SpecDict = {"match_id": f"bench-{run_id}-{i}", "bots": seats(i),
                "seed": base_seed + i, "move_ms": move_ms, "bank_ms": move_ms,
                "grace_ms": 2000, "quiet": True}
        result: ResultDict | None = None
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
            if result["end"] != End.NORMAL and error is None:
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
        channels = [[grpc.aio.insecure_channel(a, options=CHANNEL_OPTIONS) for _ in range(per)]
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

    with render.progress(n, label) as advance:
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


def batch_figures(played: Mapping[str, Any], before: Samples, after: Samples) -> dict[str, Any]:
    """The JSON figures of one batch of matches (from :func:`play` and two scrapes)."""
    rtt = histogram_delta(before, after, RTT_METRIC)
    secs = played["seconds"]
    return {
        "failed": played["failed"], "skipped": played["skipped"],
        "abnormal": played["abnormal"], "ends": played["ends"],
        "faults": deltas_by_label(before, after, "sueca_referee_faults_total", "kind"),
        "first_error": played["first_error"],
        "moves": played["moves"], "deals": played["deals"], "seconds": round(secs, 3),
        "moves_per_s": round(played["moves"] / secs, 1) if secs > 0 else 0.0,
        "matches_per_s": round(sum(played["ends"].values()) / secs, 3) if secs > 0 else 0.0,
        "move_rtt_p50_ms": _ms(histogram_quantile(rtt, 0.50)),
        "move_rtt_p99_ms": _ms(histogram_quantile(rtt, 0.99)),
        "move_rtt_samples": int(rtt[-1][1]) if rtt else 0,
        "match_seconds_p50": _rounded(nearest_rank(sorted(played["durations"]), 0.50)),
        "match_seconds_max": _rounded(nearest_rank(sorted(played["durations"]), 1.0)),
    }


def progress(line: str, kind: str = "referee") -> None:
    print(f"bench {kind}: {line}", file=sys.stderr, flush=True)


def verdict(result: Mapping[str, Any], batches: Sequence[Mapping[str, Any]]) -> int:
    """The end of a bench run: a warning line per thing that went wrong in any of ``batches``,
    the JSON last, and exit status 1 when anything did (the figures are then not to be
    trusted)."""
    bad = [line for figures in batches for line in broken(figures)]
    for line in bad:
        print(f"warning: {line}", file=sys.stderr, flush=True)
    print(json.dumps(result), flush=True)
    return 1 if bad else 0


def broken(figures: Mapping[str, Any]) -> list[str]:
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


def sum_faults(many: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Referee faults by kind, summed over several batches."""
    out: Counter[str] = Counter()
    for faults in many:
        out.update(faults)
    return dict(out)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)
