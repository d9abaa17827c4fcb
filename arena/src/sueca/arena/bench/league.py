"""What the league benchmarks share: a private arena to measure on, and one tournament played
through it (``bench tournament`` and ``bench ladder-live``)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console

from sueca.arena.celery_app import configure
from sueca.arena.local_arena import LocalArena
from sueca.arena.records import MatchStatus
from sueca.arena.schedule import round_robin, tournament_spec
from sueca.arena.tournaments import enqueue_missing, wait_for

if TYPE_CHECKING:
    from sueca.arena.local_arena import LocalArena
    from sueca.arena.records import ScheduledMatch


@contextmanager
def bench_arena(names: list[str], *, capacity: int, concurrency: int, redis: str | None,
                referee: str | None, pool: str = "prefork") -> Iterator[LocalArena]:
    """A :class:`sueca.arena.local_arena.LocalArena` (Redis and a referee unless given, one random
    bot process per name, one Celery worker with ``concurrency`` pool processes or, with
    ``pool="threads"``, threads of one process), started under
    a spinner and with the Celery app pointed at its Redis; stopped on the way out. Its logs
    are removed after a clean run and kept after a failure, for the reader of the error."""
    arena = LocalArena(redis, referee, {n: "random" for n in names}, capacity=capacity,
                       concurrency=concurrency, pool=pool)
    try:
        with Console(stderr=True, highlight=False).status(
                "starting Redis, a referee, a worker and bots..."):
            arena.start()
        assert arena.redis_url  # start() set it: the Redis given, or its own
        configure(arena.redis_url)
        yield arena
    finally:
        arena.stop()
    shutil.rmtree(arena.log_dir, ignore_errors=True)


def round_robin_specs(tid: str, names: list[str], n: int, secret: str) -> list[ScheduledMatch]:
    """``n`` round-robin matches; the same ``secret`` gives the same seeds, hence the same
    decks, dealers and bot moves wherever they are played."""
    k = -(-n // max(1, len(names) * (len(names) - 1) // 2))
    return round_robin(tid, tournament_spec(names, k, False, {}, secret=secret))[:n]


def celery_run(arena: LocalArena, tid: str, *, names: list[str], n: int, timeout: float,
               secret: str) -> float:
    """Seconds to queue ``n`` matches as tournament ``tid`` and see every one recorded
    (:func:`sueca.arena.tournaments.wait_for`); a failed match is an error."""
    spec = tournament_spec(names, 1, False, {}, secret=secret)
    arena.store.create_tournament(tid, spec,
                                  lambda t, s: round_robin_specs(t, names, n, secret))
    t0 = time.perf_counter()
    enqueue_missing(arena.store, tid)
    progress = wait_for(arena.store, tid, timeout=timeout, quiet=True)
    elapsed = time.perf_counter() - t0
    if progress["failed"]:
        bad = [m for m in arena.store.recent_matches(tournament=tid) if m["status"] == MatchStatus.FAILED]
        raise RuntimeError(f"{progress['failed']} matches failed, e.g. {bad[0]['error']}")
    return elapsed
