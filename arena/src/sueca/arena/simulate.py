"""Simulated ladders with known strengths: how fast a schedule finds the true order, and whether
the rating of record's intervals say the truth. Used by ``sueca-arena bench ladder``, ``bench
ratings`` and the tests; no Redis, no referee, no cards: a match is won with the probability
the Elo model gives its two bots' true strengths.

The ladder is simulated as the scheduler runs it: ``target`` matches in flight, the one that
finishes is any of them (matches take different times), the fit of record is refit on every
result and the next pairing is :func:`sueca.arena.schedule.pick_pairs` on that fit, the recent
window and the in-flight counts — the same function the scheduler calls.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict, cast

from sueca.arena.ratings.fit import Fit, MatchupCounts, add_result, fit
from sueca.arena.schedule import RECENT, pick_pairs

if TYPE_CHECKING:
    from sueca.arena.records import ResultEntry

__all__ = ["Checkpoint", "Outcome", "strengths", "play", "count", "kendall_tau", "exact_order", "Sim", "run",
           "coverage", "newcomer_share"]


class Checkpoint(TypedDict):
    """How good the fit of record was after ``results`` results (:func:`run`)."""

    results: int
    tau: float     # Kendall's tau against the true order
    exact: bool    # the exact true order


class Outcome(TypedDict):
    """A simulated result: the two fields of a results-log entry that the fit counts."""

    seats: list[str]
    winner: int


def strengths(n: int, rng: random.Random, sd: float = 150.0) -> dict[str, float]:
    """``n`` bots with true Elo strengths drawn from a normal distribution (mean 0)."""
    return {f"bot{i:03d}": rng.gauss(0.0, sd) for i in range(n)}


def play(true: Mapping[str, float], a: str, b: str, rng: random.Random) -> Outcome:
    """A simulated result of a against b (seats a, b, a, b)."""
    p = 1.0 / (1.0 + 10.0 ** (-(true[a] - true[b]) / 400.0))
    return {"seats": [a, b, a, b], "winner": 0 if rng.random() < p else 1}


def count(stats: MatchupCounts, outcome: Outcome) -> None:
    """:func:`~sueca.arena.ratings.fit.add_result` for a simulated result."""
    # add_result reads only the seats and the winner of the entry it is given
    add_result(stats, cast("ResultEntry", outcome))


def kendall_tau(estimate: Mapping[str, float], true: Mapping[str, float]) -> float:
    """Kendall's tau between two orderings of the same bots (1: the same order)."""
    bots = sorted(true)
    agree = disagree = 0
    for x, y in itertools.combinations(bots, 2):
        s = (estimate.get(x, 0.0) - estimate.get(y, 0.0)) * (true[x] - true[y])
        if s > 0:
            agree += 1
        elif s < 0:
            disagree += 1
    pairs = len(bots) * (len(bots) - 1) // 2
    return (agree - disagree) / pairs if pairs else 1.0


def exact_order(estimate: Mapping[str, float], true: Mapping[str, float]) -> bool:
    return sorted(true, key=lambda b: estimate.get(b, 0.0)) == sorted(true, key=true.__getitem__)


class Sim:
    """One simulated ladder: ``target`` matches in flight under ``policy`` (``ladder``:
    :func:`pick_pairs`; ``round-robin``: every pair once per round, each round in random order;
    ``random``: a uniformly random pair). ``rng`` draws pairings and which match finishes,
    ``outcomes`` seeds the results (:meth:`_stream`). ``scheduled`` lists every pairing made,
    in order."""

    def __init__(self, true: Mapping[str, float], rng: random.Random, policy: str = "ladder",
                 target: int = 4, outcomes: int = 0) -> None:
        if policy not in ("ladder", "round-robin", "random"):
            raise ValueError(f"bad policy {policy!r}: ladder, round-robin or random")
        self.true = dict(true)
        self.rng = rng
        self.policy = policy
        self.target = target
        self.stats: MatchupCounts = {}
        self.fit = fit(self.stats)
        self.scheduled: list[tuple[str, str]] = []
        self.flying: list[tuple[str, str]] = []
        self.results = 0
        self._rr: list[tuple[str, str]] = []
        self.outcomes = outcomes
        self._streams: dict[tuple[str, str], random.Random] = {}

    def _stream(self, a: str, b: str) -> random.Random:
        """The outcomes of a pair's matches, one stream per pair: two schedules run on the same
        ``outcomes`` seed see the same k-th result between the same two bots (common random
        numbers), so their difference is the schedules', not the dice's."""
        key = (a, b) if a < b else (b, a)
        stream = self._streams.get(key)
        if stream is None:
            stream = self._streams[key] = random.Random(f"{self.outcomes}:{key[0]}:{key[1]}")
        return stream

    def add_bot(self, name: str, strength: float) -> None:
        self.true[name] = strength
        self._rr.clear()  # the next round-robin round includes it

    def _pairs(self, k: int) -> list[tuple[str, str]]:
        bots = sorted(self.true)
        if self.policy == "ladder":
            inflight = Counter(b for p in self.flying for b in p)
            return pick_pairs({b: 2 * self.target for b in bots}, self.fit, k, rng=self.rng,
                              recent=self.scheduled[-RECENT:], inflight=inflight)
        out = []
        for _ in range(k):
            if self.policy == "random":
                a, b = self.rng.sample(bots, 2)
                out.append((a, b))
                continue
            if not self._rr:
                self._rr.extend(itertools.combinations(bots, 2))
                self.rng.shuffle(self._rr)
            out.append(self._rr.pop())
        return out

    def step(self, refit: bool | None = None) -> None:
        """Fill the free slots, then let one match in flight finish (and refit: always for the
        ladder, which needs the fit to pair, else only when ``refit``)."""
        while len(self.flying) < self.target:
            new = self._pairs(self.target - len(self.flying))
            self.flying.extend(new)
            self.scheduled.extend(new)
        a, b = self.flying.pop(self.rng.randrange(len(self.flying)))
        count(self.stats, play(self.true, a, b, self._stream(a, b)))
        self.results += 1
        if refit or (refit is None and self.policy == "ladder"):
            self.refit()

    def refit(self) -> Fit:
        self.fit = fit(self.stats, start=self.fit.theta or None)
        return self.fit


def run(true: Mapping[str, float], total: int, *, rng: random.Random, policy: str = "ladder",
        target: int = 4, checkpoints: Sequence[int] = (),
        outcomes: int = 0) -> tuple[Fit, list[Checkpoint]]:
    """Play ``total`` results under ``policy`` (see :class:`Sim`); returns the final fit and,
    at each checkpoint, ``{results, tau, exact}`` of the fit of record then."""
    sim = Sim(true, rng, policy, target, outcomes)
    marks: list[Checkpoint] = []
    wanted = set(checkpoints)
    for done in range(1, total + 1):
        sim.step(refit=True if (done in wanted or done == total) else None)
        if done in wanted:
            marks.append({"results": done, "tau": kendall_tau(sim.fit.rating, true),
                          "exact": exact_order(sim.fit.rating, true)})
    return sim.fit, marks


def coverage(fitted: Fit, true: Mapping[str, float]) -> tuple[int, int]:
    """(intervals that hold the true strength, intervals), strengths taken relative to their
    mean as the ratings are."""
    mean = sum(true.values()) / len(true)
    hits = sum(1 for b, t in true.items()
               if abs(fitted.rating[b] - fitted.initial - (t - mean)) <= fitted.pm[b])
    return hits, len(true)


def newcomer_share(established: int, rng: random.Random, *, before: int = 300, after: int = 100,
                   target: int = 4, strength: float = 0.0) -> dict[str, float]:
    """A ladder of ``established`` bots plays ``before`` results, then a new bot (of true
    strength ``strength``) joins: its share of the next ``after`` matches scheduled, and the
    largest share any other bot got."""
    sim = Sim(strengths(established, rng), rng, "ladder", target, rng.randrange(1 << 30))
    for _ in range(before):
        sim.step()
    sim.add_bot("newcomer", strength)
    mark = len(sim.scheduled)
    while len(sim.scheduled) < mark + after:
        sim.step()
    count = Counter(x for p in sim.scheduled[mark:mark + after] for x in p)
    return {"newcomer": count["newcomer"] / after,
            "max_other": max(v for k, v in count.items() if k != "newcomer") / after}
