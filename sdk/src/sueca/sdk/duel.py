"""A duel: two bots play duplicate pairs of matches on all cores until a limit, or until the
sequential test of :mod:`sueca.sdk.sprt` decides which of two Elo hypotheses holds.

Each duplicate pair (matches 2k and 2k + 1 of :func:`sueca.sdk.selfplay.play_numbered`: the same
seed, the teams swapped) is played whole by one worker process, which loads both bots from their
specs (strings travel to workers, bots do not). Results are folded in pair order, whatever order
the workers finish in, so a duel is reproducible from its seed and the number of workers does not
change its outcome: the test stops at the same pair.

What is measured, for bot A against bot B:

- a deal is *won* by the team with more than 60 points; the deal win rate leaves out 60-60 deals
  and deals ended by a fault (a renúncia, or a bot that raised Forfeit: an ``exec:`` program
  that failed), which the faulting bot's side loses everywhere else;
- deal pairs (deal k of both matches of a duplicate pair, the same cards) are scored in the five
  pentanomial classes; the Elo and its interval, and the SPRT, come from those classes;
- each bot's time per move is measured around its ``play`` call in the worker;
- a bot playing in the worker's own process (a Python bot, not ``exec:``) that takes longer
  than ``move_limit`` seconds over one ``play`` or ``redeal`` is stopped by an alarm signal and
  forfeits that match, a ``bot_error`` charged to it like any fault: a bot that sleeps or
  spins forever cannot hang the duel.
"""

from __future__ import annotations

import inspect
import math
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from sueca.engine import Variant
from sueca.engine.game import FAULT_ENDS, REDEAL

from .bot import Forfeit
from .bots import load_bot
from .selfplay import bot_labels, play_numbered, wilson
from .sprt import Sprt, elo_interval, pair_class

__all__ = ["DuelTally", "PairResult", "duel", "play_pair"]

_RATIO = 1.05  # the move-time histogram's buckets are 5% wide (for the median)
_LOG_RATIO = math.log(_RATIO)
_FLOOR_MS = 1e-4  # moves faster than 0.1 microsecond share the first bucket
MOVE_LIMIT_S = 10.0  # the default time a Python bot may take over one play or redeal
_AGAIN_S = 0.05  # the alarm repeats this often until the bot's call has returned


class _Overtime(BaseException):
    """Raised into a bot's call by the alarm: a BaseException, so that a bot's own ``except
    Exception`` does not swallow it."""


def _alarm(signum: int, frame: object) -> None:
    signal.setitimer(signal.ITIMER_REAL, _AGAIN_S)  # again, should the bot catch this one
    raise _Overtime


def _limited(fn: Callable[[Any], Any], limit: float, what: str) -> Callable[[Any], Any]:
    """``fn`` stopped after ``limit`` seconds by SIGALRM, the bot then forfeiting the match.
    Only the main thread receives signals; elsewhere ``fn`` runs unlimited."""
    def call(view: Any) -> Any:
        if threading.current_thread() is not threading.main_thread():
            return fn(view)
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            return fn(view)
        except _Overtime:
            raise Forfeit(f"no answer to {what} within the move limit of {limit:g} s") from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    return call


@dataclass
class MoveClock:
    """One bot's move times: total, count, and a histogram in buckets 5% wide for the median."""

    seconds: float = 0.0
    moves: int = 0
    buckets: Counter[int] = field(default_factory=Counter)

    def add(self, seconds: float) -> None:
        self.seconds += seconds
        self.moves += 1
        self.buckets[int(math.log(max(seconds * 1000, _FLOOR_MS) / _FLOOR_MS) / _LOG_RATIO)] += 1

    def merge(self, other: MoveClock) -> None:
        self.seconds += other.seconds
        self.moves += other.moves
        self.buckets.update(other.buckets)

    def mean_ms(self) -> float | None:
        return self.seconds * 1000 / self.moves if self.moves else None

    def median_ms(self) -> float | None:
        """The middle bucket's geometric centre (within 2.5% of the true median)."""
        if not self.moves:
            return None
        seen = 0
        for bucket in sorted(self.buckets):
            seen += self.buckets[bucket]
            if 2 * seen >= self.moves:
                return float(_FLOOR_MS * _RATIO ** (bucket + 0.5))
        return None  # not reached: the buckets hold every move


@dataclass
class PairResult:
    """What a worker sends back for one duplicate pair, all from bot A's side."""

    number: int
    match_wins: list[bool]  # did A win each of the two matches
    deal_scores: list[float]  # A's score (1, 1/2, 0) of each played deal of both matches
    deal_faults: list[int | None]  # the bot index (0 A, 1 B) that faulted in each deal, or None
    points: list[tuple[int, int]]  # (A's points, B's points) in each deal
    classes: list[int]  # the pentanomial class of each deal pair
    clocks: list[MoveClock]  # A's and B's move times


def _timed(factory: Callable[[], Any], clock: MoveClock, limit: float) -> Callable[[], Any]:
    """A factory making ``factory``'s bots with their ``play`` timed into ``clock`` and, when
    ``play`` and ``redeal`` are plain functions, held to ``limit`` seconds a call; a bot whose
    ``play`` cannot be replaced (slots) plays untimed."""
    def make() -> Any:
        bot = factory()
        play = bot.play
        if limit > 0 and not _is_async(play):
            play = _limited(play, limit, "play")
            redeal = getattr(bot, "redeal", None)
            if redeal is not None and not _is_async(redeal):
                try:
                    bot.redeal = _limited(redeal, limit, "redeal")
                except AttributeError:
                    pass
        if _is_async(play):
            async def timed_async(view: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await play(view)
                finally:
                    clock.add(time.perf_counter() - started)
            wrapped: Any = timed_async
        else:
            def timed(view: Any) -> Any:
                started = time.perf_counter()
                try:
                    return play(view)
                finally:
                    clock.add(time.perf_counter() - started)
            wrapped = timed
        try:
            bot.play = wrapped
        except AttributeError:
            pass
        return bot
    return make


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn)


_loaded: dict[str, Callable[[], Any]] = {}  # a worker's bot factories by spec


def _factory(spec: str) -> Callable[[], Any]:
    if spec not in _loaded:
        _loaded[spec] = load_bot(spec)
    return _loaded[spec]


def _deal_score(points: int) -> float:
    return 1.0 if points > 60 else 0.5 if points == 60 else 0.0


def play_pair(specs: Sequence[str], variant: Variant, seed: int | str,
              number: int, *, move_limit: float = MOVE_LIMIT_S) -> PairResult:
    """Play duplicate pair ``number`` (matches 2 * number and 2 * number + 1) of bot A
    (``specs[0]``) against bot B, a Python bot's call held to ``move_limit`` seconds (0: no
    limit); raises :class:`sueca.sdk.selfplay.MatchFailed`."""
    clocks = [MoveClock(), MoveClock()]
    factories = [_timed(_factory(s), c, move_limit) for s, c in zip(specs, clocks)]
    names = bot_labels(specs)
    result = PairResult(number, [], [], [], [], [], clocks)
    by_number: list[dict[int, float]] = []
    for i in (2 * number, 2 * number + 1):
        match, order, _ = play_numbered(factories, names, variant=variant, i=i, seed=seed,
                                        duplicate=True)
        a_team = i % 2
        result.match_wins.append(match.winner == a_team)
        scores: dict[int, float] = {}
        for r in match.results:
            if r.end == REDEAL:
                continue
            a_points, b_points = r.points[a_team], r.points[1 - a_team]
            fault = (order[r.fault_seat] if r.end in FAULT_ENDS and r.fault_seat is not None
                     else None)
            score = _deal_score(a_points) if fault is None else float(fault == 1)
            scores[r.number] = score
            result.deal_scores.append(score)
            result.points.append((a_points, b_points))
            result.deal_faults.append(fault)
        by_number.append(scores)
    first, second = by_number
    result.classes = [pair_class(first[k], second[k]) for k in sorted(first) if k in second]
    return result


class DuelTally:
    """The running totals of a duel, folded pair by pair in pair order."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.pairs = self.matches = self.match_wins = 0
        self.deals = self.wins = self.losses = self.ties = self.fault_deals = 0
        self.points = [0, 0]
        self.faults = [0, 0]
        self.counts = [0, 0, 0, 0, 0]
        self.clocks = [MoveClock(), MoveClock()]

    def add(self, pair: PairResult) -> None:
        self.pairs += 1
        self.matches += len(pair.match_wins)
        self.match_wins += sum(pair.match_wins)
        for score, fault, (a, b) in zip(pair.deal_scores, pair.deal_faults, pair.points):
            self.deals += 1
            self.points[0] += a
            self.points[1] += b
            if fault is not None:
                self.faults[fault] += 1
                self.fault_deals += 1
            elif score == 1.0:
                self.wins += 1
            elif score == 0.0:
                self.losses += 1
            else:
                self.ties += 1
        for k in pair.classes:
            self.counts[k] += 1
        for mine, theirs in zip(self.clocks, pair.clocks):
            mine.merge(theirs)

    def summary(self) -> dict[str, Any]:
        """The measures (the ``--json`` object's core): rates and Elo are bot A's."""
        decided = self.wins + self.losses
        elo, low, high = elo_interval(self.counts)
        a, b = self.names
        return {
            "bots": [a, b], "pairs": self.pairs, "matches": self.matches,
            "match_wins": self.match_wins,
            "match_win_rate": self.match_wins / self.matches if self.matches else 0.0,
            "match_win_ci": list(wilson(self.match_wins, self.matches)),
            "deals": self.deals, "deal_wins": self.wins, "deal_losses": self.losses,
            "deal_ties": self.ties, "fault_deals": self.fault_deals,
            "deal_win_rate": self.wins / decided if decided else 0.0,
            "deal_win_ci": list(wilson(self.wins, decided)),
            "points_per_deal": {n: p / self.deals if self.deals else 0.0
                                for n, p in zip(self.names, self.points)},
            "deal_pairs": sum(self.counts), "pentanomial": list(self.counts),
            "elo": _finite(elo), "elo_ci": [_finite(low), _finite(high)],
            "faults": dict(zip(self.names, self.faults)),
            "ms_per_move": {n: _rounded(c.mean_ms()) for n, c in zip(self.names, self.clocks)},
            "ms_per_move_median": {n: _rounded(c.median_ms())
                                   for n, c in zip(self.names, self.clocks)},
        }


def _finite(x: float) -> float | None:
    """JSON has no infinities: an unbounded Elo is null."""
    return round(x, 2) if math.isfinite(x) else None


def _rounded(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def _results(specs: Sequence[str], variant: Variant, seed: int | str, pairs: int,
             workers: int, move_limit: float) -> Generator[PairResult, None, None]:
    """Pair results in pair order, played by ``workers`` processes (in this process for 1).
    Closing the iterator early cancels the pairs not yet started."""
    if workers <= 1:
        for k in range(pairs):
            yield play_pair(specs, variant, seed, k, move_limit=move_limit)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        running: dict[int, Future[PairResult]] = {}
        done: dict[int, PairResult] = {}
        next_submit = next_yield = 0
        try:
            while next_yield < pairs:
                while next_submit < pairs and len(running) + len(done) < 4 * workers:
                    running[next_submit] = pool.submit(play_pair, list(specs), variant, seed,
                                                       next_submit, move_limit=move_limit)
                    next_submit += 1
                if next_yield not in done:
                    finished, _ = wait(running.values(), return_when=FIRST_COMPLETED)
                    for k in [k for k, f in running.items() if f in finished]:
                        done[k] = running.pop(k).result()  # a failed match raises here
                    continue
                yield done.pop(next_yield)
                next_yield += 1
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def duel(specs: Sequence[str], variant: Variant, *, seed: int | str, pairs: int,
         workers: int | None = None, sprt: Sprt | None = None,
         on_pair: Callable[[DuelTally], None] | None = None,
         move_limit: float = MOVE_LIMIT_S) -> dict[str, Any]:
    """Play up to ``pairs`` duplicate pairs (stopping when ``sprt`` decides) and return the
    summary; ``on_pair(tally)`` is called after each pair is folded in; a Python bot's call
    that takes more than ``move_limit`` seconds forfeits its match (0: no limit)."""
    workers = workers or os.cpu_count() or 1
    tally = DuelTally(bot_labels(specs))
    started = time.perf_counter()
    results = _results(specs, variant, seed, pairs, min(workers, pairs), move_limit)
    try:
        for pair in results:
            tally.add(pair)
            if sprt is not None:
                sprt.add(pair.classes)
            if on_pair is not None:
                on_pair(tally)
            if sprt is not None and sprt.verdict() is not None:
                break
    finally:
        results.close()
    summary = tally.summary()
    summary.update(seed=seed, variant=variant.to_dict(), workers=workers,
                   seconds=round(time.perf_counter() - started, 3))
    if sprt is not None:
        summary.update(sprt={"elo0": sprt.elo0, "elo1": sprt.elo1, "alpha": sprt.alpha,
                             "beta": sprt.beta},
                       llr=round(sprt.llr, 4), bounds=[round(b, 4) for b in sprt.bounds],
                       verdict=sprt.verdict())
    return summary
