"""The rating of record: one Bradley–Terry fit over the whole results log, with 95% intervals.
Pure: the store keeps the matchup counts and caches the fit (:mod:`sueca.arena.store.ratings`).

Why not Elo: an incremental Elo depends on the order games finished (the same 604 results in
shuffled orders moved a bot by 13–35 Elo, one standard deviation), and K keeps it noisy for
ever. A bot's *version* does not change between games, so the order carries no information: the
rating of record is a function of *what* was played, not of *when*. It is the
maximum a-posteriori fit of the logistic (Elo-scale) Bradley–Terry model — what BayesElo and
Ordo compute for the CCRL and CEGT engine lists:

    P(side 0 wins) = 1 / (1 + 10 ** (-(R0 - R1) / 400)),   R_side = mean of its seats' ratings

with a normal prior of ``PRIOR_SD`` Elo on each bot, so that a bot that won its few games does
not get an infinite rating (the prior weighs about as much as one even game). Every match counts
once, with its own winner: the two halves of a duplicate pair are two matches, each won or lost
(½ of the pair for each match won), so pairs and single matches are on one scale (scoring a 1-1
split by total game points would double the gaps a pair implies). A score may be
fractional (½ is a draw): the likelihood is ``s log p + (1 - s) log(1 - p)``.

Versions: each version of a bot is rated as a player of its own, named by :func:`identity`
(``name`` for version 1, ``name@N`` for version N: a bot name has no ``@``), so a result that
says which versions played (its ``versions``; absent: version 1 each) counts for those. A log
without versions is therefore rated exactly as a log of plain names, and a bot's rating of
record is the row of the version it plays now (:meth:`Fit.for_bots`); its older versions keep
theirs (:meth:`Fit.versions_of`).

Sufficient statistics: the fit reads only, per *matchup* (who sat on which side), the number
of matches and the wins of the first side, so the results log is summed once (incrementally,
:func:`sueca.arena.store.ratings.catch_up`) and a refit costs a few Newton steps on a dense
Hessian, whatever the number of results (numpy: a 1,000-bot Hessian solve is ~30 ms, far out
of reach of pure Python; see ``sueca-arena bench ratings``).

Intervals: ratings are shown centred on the initial rating (their mean is pinned there), and
the ± is 1.96 standard deviations of a bot's rating *relative to that mean*, from the inverse
Hessian at the fit (the posterior's Laplace approximation). ``tests/arena/ratings/test_ratings_fit.py``
simulates ladders with known strengths and checks that these intervals cover the truth 90–99%
of the time. Treating the halves of a duplicate pair as independent makes their intervals a
little wide (the shared cards make the halves' outcomes anti-correlated): conservative.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict

from sueca.arena.lifecycle import DEFAULT as DEFAULT_COMPETITION
from sueca.arena.records import ResultEntry

__all__ = ["ELO", "PRIOR_SD", "PROVISIONAL_GAMES", "Fit", "FitDict", "MatchupCounts", "matchup",
           "add_result", "fit", "fit_results", "identity", "split_identity", "seated",
           "VersionRating", "latest_versions", "competition_key"]

#: The fit's sufficient statistics: matchup key (:func:`matchup`) -> [matches, wins of its
#: first side].
MatchupCounts = dict[str, list[int]]

#: Elo points per natural log-odds unit.
ELO = 400.0 / math.log(10)
#: Standard deviation of the prior on each bot's rating, in Elo.
PRIOR_SD = 400.0
#: A bot with fewer rated matches than this is provisional (marked on the leaderboard, given
#: priority by the ladder).
PROVISIONAL_GAMES = 30
_Z95 = 1.959964


def identity(bot: str, version: int) -> str:
    """The name version ``version`` of ``bot`` is rated under: the bot's own name for version 1
    (so a log without versions is rated as it always was), ``bot@N`` for a later one."""
    return bot if version == 1 else f"{bot}@{version}"


def split_identity(name: str) -> tuple[str, int]:
    """The bot and version an :func:`identity` names."""
    bot, at, version = name.rpartition("@")
    return (bot, int(version)) if at and version.isdigit() else (name, 1)


def seated(result: ResultEntry) -> list[str]:
    """The :func:`identity` in each seat of ``result``: its bots at the versions it says played
    (``versions``, bot -> version; a bot it does not name, or a result without them: 1)."""
    versions = result.get("versions") or {}
    return [identity(b, int(versions.get(b, 1))) for b in result["seats"]]


def competition_key(name: str | None) -> str:
    """The named competition whose own standings a result played in ``name`` counts for: ""
    for the arena's default ladder (None, "" or
    :data:`~sueca.arena.lifecycle.DEFAULT`, whose standings are the arena's rating of
    record) and for a plain tournament; every rated result counts for the arena's too."""
    return "" if not name or name == DEFAULT_COMPETITION else name


def latest_versions(results: Iterable[ResultEntry]) -> dict[str, int]:
    """Each bot's highest version seated in ``results`` (a tournament's: the one its table
    shows)."""
    out: dict[str, int] = {}
    for r in results:
        versions = r.get("versions") or {}
        for b in r.get("seats") or ():
            out[b] = max(out.get(b, 1), int(versions.get(b, 1)))
    return out


def matchup(seats: Sequence[str]) -> tuple[str, bool] | None:
    """The matchup key of a match played with these seats, and whether its first side is team 0.

    The key is a JSON list ``[[bot, c], ...]`` sorted by bot, ``c`` the bot's seats on team 0
    minus its seats on team 1 (a bot's weight in the rating difference is ``c / 2``); its first
    bot always has ``c > 0``, so A-against-B and B-against-A share one key. None when the two
    teams are the same bots (nothing to rate).
    """
    coef: dict[str, int] = {}
    for i, bot in enumerate(seats):
        coef[bot] = coef.get(bot, 0) + (1 if i % 2 == 0 else -1)
    items = sorted((b, c) for b, c in coef.items() if c)
    if not items:
        return None
    team0_first = items[0][1] > 0
    if not team0_first:
        items = [(b, -c) for b, c in items]
    return json.dumps(items, separators=(",", ":")), team0_first


def add_result(stats: MatchupCounts, result: ResultEntry) -> str | None:
    """Count one rated result into ``stats`` (matchup key -> [matches, wins of the first side])
    for the versions that played (:func:`seated`); returns the key touched. The caller checks
    :func:`sueca.arena.ratings.live.rated`."""
    m = matchup(seated(result))
    if m is None:
        return None
    key, team0_first = m
    row = stats.setdefault(key, [0, 0])
    row[0] += 1
    row[1] += 1 if (result["winner"] == 0) == team0_first else 0
    return key


class VersionRating(TypedDict):
    """One version's rating of record (:meth:`Fit.versions_of`): None and no ± for a version
    that has played no rated match."""

    version: int
    rating: float | None
    rating_pm: float | None
    matches: int
    provisional: bool


class FitDict(TypedDict):
    """A :class:`Fit` as JSON (the store's cache of the last fit)."""

    rating: dict[str, float]
    pm: dict[str, float]
    games: dict[str, int]
    theta: dict[str, float]
    initial: float
    iterations: int


@dataclasses.dataclass(slots=True)
class Fit:
    """Ratings of record (Elo scale, mean = ``initial``), their 95% half-widths and games."""

    rating: dict[str, float]
    pm: dict[str, float]
    games: dict[str, int]
    theta: dict[str, float]  # natural units, for a warm start
    initial: float
    iterations: int = 0

    def provisional(self, bot: str) -> bool:
        return self.games.get(bot, 0) < PROVISIONAL_GAMES

    def bots(self) -> list[str]:
        """The bots of this fit's versions (:func:`split_identity`), by name."""
        return sorted({split_identity(n)[0] for n in self.rating})

    def for_bots(self, versions: Mapping[str, int]) -> Fit:
        """This fit (of versions, by :func:`identity`) with one row per bot: the row of the
        version ``versions`` names (a bot it does not name: version 1). A bot whose version has
        played no rated match has no row (it reads as the initial rating, provisional)."""
        out = Fit({}, {}, {}, {}, self.initial, self.iterations)
        for name in self.rating:
            bot, version = split_identity(name)
            if versions.get(bot, 1) == version:
                out.rating[bot], out.games[bot] = self.rating[name], self.games.get(name, 0)
                if name in self.pm:
                    out.pm[bot] = self.pm[name]
                if name in self.theta:
                    out.theta[bot] = self.theta[name]
        return out

    def versions_of(self, bot: str, upto: int = 1) -> list[VersionRating]:
        """``bot``'s versions 1 to at least ``upto`` (its current one), newest first, each with
        its rating of record (None before its first rated match) and rated matches."""
        seen = [v for b, v in map(split_identity, self.rating) if b == bot]
        out: list[VersionRating] = []
        for v in range(max([upto, *seen]), 0, -1):
            name = identity(bot, v)
            out.append({"version": v, "rating": self.rating.get(name),
                        "rating_pm": self.pm.get(name), "matches": self.games.get(name, 0),
                        "provisional": self.provisional(name)})
        return out

    def as_dict(self) -> FitDict:
        return {"rating": dict(self.rating), "pm": dict(self.pm), "games": dict(self.games),
                "theta": dict(self.theta), "initial": self.initial,
                "iterations": self.iterations}

    @classmethod
    def from_dict(cls, d: FitDict) -> Fit:
        return cls(dict(d["rating"]), dict(d["pm"]), {k: int(v) for k, v in d["games"].items()},
                   dict(d["theta"]), float(d["initial"]), int(d.get("iterations", 0)))


def fit(stats: Mapping[str, Sequence[float]], initial: float = 1500.0, *,
        prior_sd: float = PRIOR_SD, start: Mapping[str, float] | None = None,
        tol: float = 1e-6, max_iter: int = 50) -> Fit:
    """The MAP fit of the matchup counts ``stats`` (see :func:`add_result`); ``start`` (natural
    units by bot, e.g. a previous fit's ``theta``) warm-starts it (straight to the chord
    method)."""
    import numpy as np  # deferred: numpy is most of a second to import, paid only by a fit
    keys = list(stats)
    parsed = json.loads("[" + ",".join(keys) + "]") if keys else []
    names = sorted({b for items in parsed for b, _ in items})
    index = {b: i for i, b in enumerate(names)}
    nb = len(names)
    if nb == 0:
        return Fit({}, {}, {}, {}, initial)
    # matchups grouped by their number of bots (2 for a two-bot match, up to 4), so that the
    # entries are built as arrays: per (matchup, bot) its row, bot and coefficient (the bot's
    # weight in the rating difference), and per ordered pair of bots of a matchup its Hessian cell
    by_size: dict[int, list[int]] = {}
    for r, items in enumerate(parsed):
        by_size.setdefault(len(items), []).append(r)
    parts: dict[str, list[Any]] = {"er": [], "eb": [], "ec": [], "hr": [], "hc": [], "hk": []}
    for size, rows in by_size.items():
        flat = [x for r in rows for x in parsed[r]]
        bots = np.fromiter((index[b] for b, _ in flat), dtype=np.int64,
                           count=len(flat)).reshape(-1, size)
        coefs = np.fromiter((c for _, c in flat), dtype=float,
                            count=len(flat)).reshape(-1, size) / 2.0
        rows_a = np.array(rows, dtype=np.int64)
        parts["er"].append(np.repeat(rows_a, size))
        parts["eb"].append(bots.ravel())
        parts["ec"].append(coefs.ravel())
        for i in range(size):
            for j in range(size):
                parts["hr"].append(rows_a)
                parts["hc"].append(bots[:, i] * nb + bots[:, j])
                parts["hk"].append(coefs[:, i] * coefs[:, j])
    er, eb, ec, hr, hc, hk = (np.concatenate(parts[x]) for x in ("er", "eb", "ec", "hr", "hc", "hk"))
    counts = np.array([stats[k] for k in keys], dtype=float).reshape(-1, 2)
    n, w = counts[:, 0], counts[:, 1]
    games = np.bincount(eb, weights=n[er], minlength=nb)
    prec = 1.0 / (prior_sd / ELO) ** 2
    theta = np.array([float((start or {}).get(b, 0.0)) for b in names])
    theta -= theta.mean()  # the prior's mean: the fit's mean is 0 at the optimum

    def hessian(p: Any) -> Any:  # Any: numpy arrays (numpy is imported in the function)
        h: Any = np.bincount(hc, weights=hk * (n * p * (1.0 - p))[hr], minlength=nb * nb)
        h = h.reshape(nb, nb)
        h[np.diag_indices(nb)] += prec
        return h

    def gradient(theta: Any) -> tuple[Any, Any]:  # Any: numpy arrays, as hessian's
        eta = np.bincount(er, weights=ec * theta[eb], minlength=len(keys))
        p = 0.5 * (1.0 + np.tanh(0.5 * eta))  # the logistic function, without overflow
        return np.bincount(eb, weights=ec * (w - n * p)[er], minlength=nb) - prec * theta, p

    # Newton's method while far from the optimum (one dense solve per step), then the chord
    # method: the inverse Hessian of the last point, kept (one O(n^3) inversion instead of one
    # per step) — it is also the covariance the intervals need. A warm start goes straight to it.
    iterations = 0
    grad, p = gradient(theta)
    while start is None and iterations < max_iter:
        h = hessian(p)
        step = np.linalg.solve(h, grad)
        big = float(np.abs(step).max())
        if big < 0.05:
            break
        if big > 2.0:  # a trust region of ~350 Elo per step: Newton from far away can overshoot
            step *= 2.0 / big
        theta = theta + step
        iterations += 1
        grad, p = gradient(theta)
    cov = np.linalg.inv(hessian(p))
    at = theta  # where cov was computed
    last = math.inf
    while iterations < 4 * max_iter:
        step = cov @ grad
        big = float(np.abs(step).max())
        if big > 2.0:
            step *= 2.0 / big
        theta = theta + step
        iterations += 1
        grad, p = gradient(theta)
        if big < tol:
            break
        if big > 0.5 * last:  # converging slowly (a warm start far off): linearise again
            cov, at = np.linalg.inv(hessian(p)), theta
        last = big
    if float(np.abs(theta - at).max()) > 0.05:  # the intervals need the Hessian at the fit
        cov = np.linalg.inv(hessian(p))
    # variance of theta_i - mean(theta): the rating shown is relative to the mean
    var = np.diag(cov) - 2.0 * cov.mean(axis=1) + cov.mean()
    sd = np.sqrt(np.maximum(var, 0.0))
    centre = float(theta.mean())
    rating = {b: initial + ELO * (float(theta[i]) - centre) for i, b in enumerate(names)}
    pm = {b: _Z95 * ELO * float(sd[i]) for i, b in enumerate(names)}
    return Fit(rating, pm, {b: int(games[i]) for i, b in enumerate(names)},
               {b: float(theta[i]) for i, b in enumerate(names)}, initial, iterations)


def fit_results(results: Iterable[ResultEntry], initial: float = 1500.0) -> Fit:
    """The fit of a list of rated results (a tournament's, a simulation's)."""
    stats: MatchupCounts = {}
    for r in results:
        add_result(stats, r)
    return fit(stats, initial)
