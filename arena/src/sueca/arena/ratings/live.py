"""The live Elo and OpenSkill columns: a fold over the results log, one logged result at a
time, in log order (:meth:`Ratings.apply`). Pure: no Redis (the store keeps the fold's state,
:mod:`sueca.arena.store.ratings`).

Elo and OpenSkill move after every game, so they show a new bot's trajectory, but they depend
on the order games finished, and K keeps Elo noisy for ever (the rating of record,
:mod:`sueca.arena.ratings.fit`, does not). The live ratings in Redis are this fold applied
incrementally, and a rebuild is the same fold from nothing: same inputs, same order, same float
operations, and floats stored as their ``repr`` (which reads back exactly), so the two give
identical numbers, bit for bit.

What is rated
  * A match with a winner: team 0 (seats 0, 2) against team 1 (seats 1, 3). In a 2-bot match
    (A in seats 0, 2; B in 1, 3) the teams are A,A against B,B.
  * A match a bot ended by a fault (timeout, disconnect) is a loss for its team, as the referee
    records it; a renúncia is just a scored deal. Aborted or failed matches never reach the log
    and a result marked ``rated: false`` is skipped.
  * The two matches of a duplicate pair (same decks, teams swapped) are scored per match: ½ of
    the pair for each match won, so 2-0 is a win, 1-1 a draw (deciding a 1-1 split by total
    game points would make a pair imply about twice the Elo gap of single matches). The live
    fold rates the pair as one game once both halves are in the log; the rating of record
    simply counts both matches. Two halves whose logged ``seed`` differs (one was re-played on
    a fresh seed, :func:`sueca.arena.match_job.reseeded`) were not dealt the same decks: the
    live fold rates them as two single games. An entry without a ``seed`` (logged before the
    field existed) is taken to have been played on its pair's seed.

Live Elo: a side's rating is the mean of its seats' ratings; every distinct bot moves by
``K * (S - E)`` once per game (not once per seat). Its ± is the usual error margin of a
performance rating, ``1.96 * 400/ln 10 / sqrt(n p (1 - p))`` with ``p = (score + 1) / (n + 2)``:
it ignores the opponents' strength and K's noise, so it is *not* a 95% interval (the rating of
record's is). OpenSkill: ``mu ± 2 sigma``; the team's strength is the sum of its seats, so A,A
counts A twice.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import NotRequired, TypedDict

from sueca.arena.ratings.fit import MatchupCounts, add_result, competition_key
from sueca.arena.records import LiveColumns, ResultEntry

__all__ = ["Rating", "Ratings", "FoldState", "rated", "pair_outcome",
           "same_decks", "sides", "DEFAULT_ELO_K", "DEFAULT_ELO_INITIAL"]

DEFAULT_ELO_K = 24.0
DEFAULT_ELO_INITIAL = 1500.0
_Z95 = 1.96
_ELO_SCALE = 400.0 / math.log(10)
_UNRATED_ENDS = ("aborted", "failed")


class FoldState(TypedDict):
    """Everything the fold carries from one result to the next (:meth:`Ratings.state`), as the
    ratings checkpoint stores it in JSON: per bot ``[elo, mu, sigma, games, score]``, the
    duplicate halves waiting for their twin, the rating of record's matchup counts (by version,
    :func:`~sueca.arena.ratings.fit.identity`) and each named competition's own (absent: none,
    as in a checkpoint of a log without competitions)."""

    bots: dict[str, list[float]]
    pending: dict[str, ResultEntry]
    matchups: dict[str, list[int]]
    competitions: NotRequired[dict[str, dict[str, list[int]]]]


@dataclasses.dataclass(slots=True)
class Rating:
    elo: float
    mu: float
    sigma: float
    games: int = 0
    score: float = 0.0

    @property
    def elo_pm(self) -> float | None:
        """95% interval half-width of the Elo rating; None before the first game."""
        if self.games <= 0:
            return None
        p = (self.score + 1.0) / (self.games + 2.0)
        return _Z95 * _ELO_SCALE / math.sqrt(self.games * p * (1.0 - p))

    @property
    def mu_pm(self) -> float:
        return 2.0 * self.sigma

    @property
    def ordinal(self) -> float:
        """OpenSkill's conservative estimate, mu - 3 sigma."""
        return self.mu - 3.0 * self.sigma

    def as_dict(self) -> LiveColumns:
        return {"elo": self.elo, "elo_pm": self.elo_pm, "mu": self.mu, "mu_pm": self.mu_pm,
                "sigma": self.sigma, "ordinal": self.ordinal, "games": self.games,
                "score": self.score}


def rated(result: ResultEntry) -> bool:
    return (bool(result.get("rated", True)) and result.get("end") not in _UNRATED_ENDS
            and result.get("winner") in (0, 1) and len(result.get("seats") or ()) == 4)


def sides(result: ResultEntry) -> tuple[list[str], list[str]]:
    """A result's two teams: the bots in seats 0 and 2, and those in seats 1 and 3."""
    s = result["seats"]
    return [s[0], s[2]], [s[1], s[3]]


def same_decks(first: ResultEntry, second: ResultEntry) -> bool:
    """Whether two logged halves of a pair were played on one seed (hence the same decks).

    A missing or null ``seed`` is unknown, taken as the same: older log entries have none.
    """
    a, b = first.get("seed"), second.get("seed")
    return a is None or b is None or str(a) == str(b)


def pair_outcome(first: ResultEntry, second: ResultEntry) -> float | None:
    """Score of ``first``'s team 0 over a duplicate pair: ½ for each match of the pair it won
    (1, ½ or 0); None if the two matches are not a proper pair: not the same sides with the
    teams swapped, or not played on the same seed (:func:`same_decks`)."""
    a0, a1 = sides(first)
    b0, b1 = sides(second)
    if sorted(a0) != sorted(b1) or sorted(a1) != sorted(b0) or not same_decks(first, second):
        return None
    return ((first["winner"] == 0) + (second["winner"] == 1)) / 2.0


def _counts(matchups: Mapping[str, list[int]]) -> MatchupCounts:
    """Matchup counts as plain ints, in key order (as the checkpoint stores them)."""
    return {m: [int(g), int(w)] for m, (g, w) in sorted(matchups.items())}


class Ratings:
    """The fold state: ratings by bot and duplicate halves waiting for their twin.

    ``dirty`` and ``pending_changed`` say what :meth:`apply` touched, for incremental saving;
    ``matchups`` counts the applied results for the rating of record
    (:func:`sueca.arena.ratings.fit.add_result`: only what this fold saw, added to Redis as
    such), ``competitions`` the results of each named competition apart
    (:func:`~sueca.arena.ratings.fit.competition_key`), for its own rating of record. The live
    Elo and OpenSkill follow a bot across its versions: they show its trajectory.
    """

    def __init__(self, elo_k: float = DEFAULT_ELO_K, elo_initial: float = DEFAULT_ELO_INITIAL,
                 bots: Mapping[str, Rating] | None = None,
                 pending: Mapping[str, ResultEntry] | None = None) -> None:
        # openskill's models are 0.1 s to import, which every command's parser would pay (it
        # imports the leaderboard, hence this module) for a fold few commands run
        from openskill.models import PlackettLuce  # deferred: 0.1 s of every command's start-up
        self.elo_k = float(elo_k)
        self.elo_initial = float(elo_initial)
        self.model = PlackettLuce()
        self.bots: dict[str, Rating] = dict(bots or {})
        self.pending: dict[str, ResultEntry] = dict(pending or {})
        self.dirty: set[str] = set()
        self.pending_changed: set[str] = set()
        self.matchups: MatchupCounts = {}
        self.competitions: dict[str, MatchupCounts] = {}

    def get(self, bot: str) -> Rating:
        r = self.bots.get(bot)
        if r is None:
            r = self.bots[bot] = Rating(self.elo_initial, self.model.mu, self.model.sigma)
        return r

    def apply(self, result: ResultEntry) -> None:
        """Fold one logged result in (results must come in log order)."""
        if not rated(result):
            return
        add_result(self.matchups, result)
        competition = competition_key(result.get("competition"))
        if competition:
            add_result(self.competitions.setdefault(competition, {}), result)
        pair = result.get("pair") or ""
        if not pair:
            side0, side1 = sides(result)
            self._rate(side0, side1, 1.0 if result["winner"] == 0 else 0.0)
            return
        first = self.pending.pop(pair, None)
        self.pending_changed.add(pair)
        if first is None:
            self.pending[pair] = result.copy()  # as dict(result): a shallow copy
            return
        score = pair_outcome(first, result)
        if score is None:  # not a proper pair: rate both as single games rather than lose them
            for r in (first, result):
                s0, s1 = sides(r)
                self._rate(s0, s1, 1.0 if r["winner"] == 0 else 0.0)
            return
        side0, side1 = sides(first)
        self._rate(side0, side1, score)

    def state(self) -> FoldState:
        """Everything the fold carries from one result to the next, as JSON-able values (floats
        round-trip exactly through JSON: it writes their ``repr``)."""
        out: FoldState = {
            "bots": {b: [r.elo, r.mu, r.sigma, r.games, r.score]
                     for b, r in sorted(self.bots.items())},
            "pending": dict(sorted(self.pending.items())),
            "matchups": _counts(self.matchups)}
        if self.competitions:
            out["competitions"] = {c: _counts(m) for c, m in sorted(self.competitions.items())}
        return out

    @classmethod
    def from_state(cls, state: FoldState, elo_k: float, elo_initial: float) -> Ratings:
        """The fold as :meth:`state` saved it, ready to go on folding."""
        out = cls(elo_k, elo_initial,
                  {b: Rating(float(v[0]), float(v[1]), float(v[2]), int(v[3]), float(v[4]))
                   for b, v in state["bots"].items()},
                  state["pending"])
        out.matchups = _counts(state["matchups"])
        out.competitions = {c: _counts(m) for c, m in state.get("competitions", {}).items()}
        return out

    def apply_all(self, results: Iterable[ResultEntry]) -> Ratings:
        for r in results:
            self.apply(r)
        return self

    def _rate(self, side0: list[str], side1: list[str], s0: float) -> None:
        both = set(side0) & set(side1)  # a bot on both teams neither wins nor loses
        r0 = [self.get(b) for b in side0]
        r1 = [self.get(b) for b in side1]
        # Elo: side rating is the mean of its seats; each distinct bot moves once.
        e0 = 1.0 / (1.0 + 10.0 ** (((r1[0].elo + r1[1].elo) / 2.0 - (r0[0].elo + r0[1].elo) / 2.0)
                                   / 400.0))
        delta = self.elo_k * (s0 - e0)
        # OpenSkill: Plackett-Luce on the two teams, each seat a player (A,A counts A twice).
        m = self.model
        teams = [[m.rating(mu=r.mu, sigma=r.sigma) for r in r0],
                 [m.rating(mu=r.mu, sigma=r.sigma) for r in r1]]
        ranks: list[float] = [0, 1] if s0 == 1.0 else [1, 0] if s0 == 0.0 else [0, 0]
        new = m.rate(teams, ranks=ranks)
        for side, ratings, updated, sign, score in ((side0, r0, new[0], 1.0, s0),
                                                    (side1, r1, new[1], -1.0, 1.0 - s0)):
            seen: set[str] = set()
            for bot, rating, upd in zip(side, ratings, updated):
                if bot in seen or bot in both:
                    continue
                seen.add(bot)
                rating.elo = rating.elo + sign * delta
                rating.mu = float(upd.mu)
                rating.sigma = float(upd.sigma)
                rating.games += 1
                rating.score += score
                self.dirty.add(bot)
