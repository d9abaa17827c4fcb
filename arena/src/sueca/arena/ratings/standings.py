"""A tournament's table from its results: points per scoring unit (a match, or a duplicate
pair scored as one), game points, faults, and the tournament's own ratings (the fit of record
and the live fold over its results alone). Pure: the results come from the caller."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypedDict

from sueca.arena.ratings.fit import fit, latest_versions
from sueca.arena.ratings.live import (
    DEFAULT_ELO_INITIAL,
    DEFAULT_ELO_K,
    Ratings,
    pair_outcome,
    rated,
    sides,
)
from sueca.arena.records import ResultEntry
from sueca.engine.game import End

__all__ = ["StandingsRow", "standings"]


class StandingsRow(TypedDict):
    """One bot's line of a tournament table (:func:`standings`)."""

    bot: str
    units: int
    won: int
    drawn: int
    lost: int
    points: float
    matches: int
    gp_for: int
    gp_against: int
    faults: int
    rating: float
    rating_pm: float | None
    win_pct: float | None
    incomplete_pairs: int
    elo: float
    elo_pm: float | None
    mu: float
    mu_pm: float
    sigma: float


def standings(results: Iterable[ResultEntry], elo_k: float = DEFAULT_ELO_K,
              elo_initial: float = DEFAULT_ELO_INITIAL,
              field: Iterable[str] = ()) -> list[StandingsRow]:
    """A tournament table from its results (in log order), best first: a row for each bot of
    ``field`` (the tournament's bots: one with no result yet, such as a Swiss round's bye, has
    a row of zeros) and for each bot seated in a result.

    A scoring unit is a match, or a duplicate pair once both halves are in (scored together by
    :func:`pair_outcome`): ``points`` adds 1 per unit won and 1/2 per unit drawn, ``win_pct`` is
    points per unit. ``matches``, ``gp_for``/``gp_against`` (game points) and ``faults`` (matches
    the bot ended by a timeout or disconnect) count matches. Ratings are this tournament's alone:
    ``rating``/``rating_pm`` the fit of record and ``elo``, ``mu`` the live fold, over these
    results only, from the arena's stored K and initial rating; a bot seated at several
    versions has the rating of record of its latest one here.
    """
    results = [r for r in results if rated(r)]
    rows: dict[str, StandingsRow] = {}

    def row(bot: str) -> StandingsRow:
        if bot not in rows:  # the ratings and win_pct are filled in at the end
            rows[bot] = {"bot": bot, "units": 0, "won": 0, "drawn": 0, "lost": 0, "points": 0.0,
                         "matches": 0, "gp_for": 0, "gp_against": 0, "faults": 0,
                         "rating": elo_initial, "rating_pm": None, "win_pct": None,
                         "incomplete_pairs": 0, "elo": elo_initial, "elo_pm": None, "mu": 0.0,
                         "mu_pm": 0.0, "sigma": 0.0}
        return rows[bot]

    def score(side0: list[str], side1: list[str], s0: float) -> None:
        for side, s in ((side0, s0), (side1, 1.0 - s0)):
            for bot in set(side) - (set(side0) & set(side1)):
                r = row(bot)
                r["units"] += 1
                r["points"] += s
                if s == 1.0:
                    r["won"] += 1
                elif s == 0.0:
                    r["lost"] += 1
                else:
                    r["drawn"] += 1

    for bot in field:
        row(bot)
    halves: dict[str, ResultEntry] = {}
    for res in results:
        side0, side1 = sides(res)
        for team, side in ((0, side0), (1, side1)):
            for bot in set(side):
                r = row(bot)
                r["matches"] += 1
                r["gp_for"] += res["game_points"][team]
                r["gp_against"] += res["game_points"][1 - team]
        fault_bot = res.get("fault_bot")
        if fault_bot and res.get("end") in (End.TIMEOUT, End.DISCONNECT, End.BOT_ERROR):
            row(fault_bot)["faults"] += 1
        pair = res.get("pair") or ""
        if not pair:
            score(side0, side1, 1.0 if res["winner"] == 0 else 0.0)
        elif pair in halves:
            first = halves.pop(pair)
            s = pair_outcome(first, res)
            if s is None:
                for x in (first, res):
                    a, b = sides(x)
                    score(a, b, 1.0 if x["winner"] == 0 else 0.0)
            else:
                a, b = sides(first)
                score(a, b, s)
        else:
            halves[pair] = res.copy()  # as dict(res): a shallow copy
    fold = Ratings(elo_k, elo_initial).apply_all(results)
    of_record = fit(fold.matchups, elo_initial).for_bots(latest_versions(results))
    out = []
    for bot, r in rows.items():
        rating = fold.get(bot)
        r["rating"] = of_record.rating.get(bot, elo_initial)
        r["rating_pm"] = of_record.pm.get(bot)
        r["win_pct"] = 100.0 * r["points"] / r["units"] if r["units"] else None
        r["incomplete_pairs"] = sum(1 for h in halves.values() if bot in h["seats"])
        live = rating.as_dict()
        r["elo"], r["elo_pm"], r["mu"] = live["elo"], live["elo_pm"], live["mu"]
        r["mu_pm"], r["sigma"] = live["mu_pm"], live["sigma"]
        out.append(r)
    out.sort(key=lambda r: (-r["points"], -(r["gp_for"] - r["gp_against"]), -r["elo"], r["bot"]))
    return out
