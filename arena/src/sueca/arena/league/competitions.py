"""The competitions' part of the league's read model: the list with states, and a
competition's page (state and times, the transition log, entrants with version, division and
rating of record, the final, the standings once closed, every match, the seed hash and, once
closed, the key).

Read-only, as the rest of :mod:`sueca.arena.league`. A competition's results are found in one
pass over the results log, kept here and extended with the log's new entries only
(:class:`CompetitionIndex`), so a page view does not re-read the log. The seed key is shown only
once the store reveals it (at close); the final's tournament secret is never shown.
"""

from __future__ import annotations

import threading
from typing import TypedDict, cast

from sueca.arena.brackets import FORMATS, Bracket, Placing
from sueca.arena.competitions.results import RecordRating, final_id, ratings_of, rows_of
from sueca.arena.final import FinalProgress, progress
from sueca.arena.league.rows import BadQuery, NotFound, check_page
from sueca.arena.lifecycle import DEFAULT, CompetitionError, State
from sueca.arena.ratings.fit import identity
from sueca.arena.ratings.standings import StandingsRow, standings
from sueca.arena.records import ResultEntry
from sueca.arena.store import Store
from sueca.arena.store.ratings import cached_fit, stored_config
from sueca.arena.tournaments import tournament_bracket

__all__ = ["CompetitionIndex", "CompetitionSummary", "CompetitionPage", "EntrantRow",
           "CompetitionMatch", "competition_list", "competition_page", "MATCHES_PER_PAGE"]

MATCHES_PER_PAGE = 100  # match links a competition's page lists at a time (?page=N)


class CompetitionSummary(TypedDict):
    name: str
    state: str
    created: float
    entrants: int
    final: str  # its format, "none" for no final


class EntrantRow(TypedDict):
    bot: str
    version: int  # the version that plays (frozen at the freeze), else the current
    frozen: bool  # whether ``version`` is the frozen one
    division: int | None
    rating: float | None  # the competition's rating of record (of that version)
    rating_pm: float | None
    matches: int  # rated matches in the competition


class CompetitionMatch(TypedDict):
    id: str
    tournament: str  # the final's id, or "" / the competition's ladder
    seats: list[str]
    winner: int | None
    end: str
    time: float


class CompetitionPage(TypedDict):
    name: str
    state: str
    created: float
    spec: dict[str, object]
    times: dict[str, float | None]  # opens_at, freezes_at, final_at, closes_at
    log: list[dict[str, object]]
    entrants: list[EntrantRow]
    final: FinalProgress | None
    final_standings: list[StandingsRow]  # once closed, a round-robin final's table
    bracket: Bracket | None  # a knockout's or double elimination's bracket, round by round
    placings: list[Placing]  # once closed, a bracket's places
    seed_hash: str
    seed_key: str | None  # once closed
    matches: list[CompetitionMatch]  # newest first, this page of them
    match_count: int
    page: int
    pages: int


#: the parts of a result a competition's page has no use for (the largest): not kept
_DROPPED = ("stats", "fault_detail")


class CompetitionIndex:
    """Each competition's recorded results (without :data:`_DROPPED`), from one pass over
    the results log and its new entries since, and each one's rating of record fit over them,
    refit only when a result came (thread-safe; a page view reads the log's tail only). The
    default competition's results are not kept: its rating of record is the arena's."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._last: str | None = None
        self._by: dict[str, list[ResultEntry]] = {}
        self._fits: dict[str, tuple[int, dict[str, RecordRating]]] = {}
        self._lock = threading.Lock()

    def results(self, name: str) -> list[ResultEntry]:
        with self._lock:
            for eid, res in self.store.results(after=self._last):
                self._last = eid
                comp = res.get("competition") or ""
                tid = res.get("tournament") or ""
                if not comp and tid.endswith("-final"):
                    comp = tid[:-len("-final")]
                if comp:
                    kept = {k: v for k, v in res.items() if k not in _DROPPED}
                    self._by.setdefault(comp, []).append(cast(ResultEntry, kept))
            return list(self._by.get(name, ()))

    def ratings(self, name: str, results: list[ResultEntry],
                initial: float) -> dict[str, RecordRating]:
        """The competition's rating of record over ``results`` (its own, all of them)."""
        with self._lock:
            got = self._fits.get(name)
            if got is None or got[0] != len(results):
                got = (len(results), ratings_of(results, initial))
                self._fits[name] = got
            return got[1]


def competition_list(store: Store) -> list[CompetitionSummary]:
    out: list[CompetitionSummary] = []
    for name in store.competitions.names():
        rec = store.competitions.get(name)
        if rec is None:
            continue
        out.append({"name": name, "state": str(rec["state"]), "created": rec["created"],
                    "entrants": len(store.competitions.entries(name)),
                    "final": str((rec["spec"].get("final") or {}).get("format", "none"))})
    return out


def competition_page(store: Store, index: CompetitionIndex, name: str,
                     page: int | str = 1) -> CompetitionPage:
    rec = store.competitions.get(name)
    if rec is None:
        raise NotFound(f"no competition {name!r}")
    p, per = check_page(page, MATCHES_PER_PAGE)
    results = [r for r in index.results(name) if (r.get("competition") or DEFAULT) == name
               or r.get("tournament") == final_id(name)]
    if name == DEFAULT:  # the arena's ladder: the arena's rating of record, as last fit
        fit = cached_fit(store)
        ratings = {} if fit is None else rows_of(fit)
    else:
        ratings = index.ratings(name, results, stored_config(store).elo_initial)
    entries = store.competitions.entries(name)
    currents = store.versions.currents(list(entries))
    entrants: list[EntrantRow] = []
    for bot, e in entries.items():
        version = e["version"] or currents.get(bot, 1)
        r = ratings.get(identity(bot, version))
        entrants.append({"bot": bot, "version": version,
                         "frozen": e["version"] is not None, "division": e["division"],
                         "rating": None if r is None else r["rating"],
                         "rating_pm": None if r is None else r["pm"],
                         "matches": 0 if r is None else r["games"]})
    entrants.sort(key=lambda e: (e["division"] if e["division"] is not None else 1 << 30,
                                 -(e["rating"] if e["rating"] is not None else -1e9), e["bot"]))
    tid = final_id(name)
    final = None
    table: list[StandingsRow] = []
    bracket: Bracket | None = None
    t = store.tournament(tid)
    if t is not None:
        try:
            final = progress(store, name)
        except CompetitionError:
            final = None
        mine = [r for r in results if r.get("tournament") == tid]
        if final is not None and final["format"] in FORMATS:
            bracket = tournament_bracket(tid, t["spec"], mine)
        elif rec["state"] is State.CLOSED and final is not None:
            table = standings(mine, stored_config(store).elo_k, field=final["seeds"])
    newest = sorted(results, key=lambda r: r["time"], reverse=True)
    pages = max(1, -(-len(newest) // per))
    if p > pages:
        raise BadQuery(f"page {p} is past the last ({pages}) of competition {name!r}'s matches")
    spec = rec["spec"]
    return {
        "name": name, "state": str(rec["state"]), "created": rec["created"], "spec": dict(spec),
        "times": {"opens_at": spec["opens_at"], "freezes_at": spec["freezes_at"],
                  "final_at": spec["final_at"], "closes_at": spec["closes_at"]},
        "log": [dict(t) for t in rec["log"]], "entrants": entrants, "final": final,
        "final_standings": table, "bracket": bracket,
        "placings": bracket["standings"] if bracket and rec["state"] is State.CLOSED else [],
        "seed_hash": rec["seed_hash"], "seed_key": rec["seed_key"],
        "matches": [{"id": r["match_id"], "tournament": r.get("tournament", ""),
                     "seats": list(r["seats"]), "winner": r["winner"], "end": r["end"],
                     "time": r["time"]} for r in newest[(p - 1) * per: p * per]],
        "match_count": len(newest), "page": p, "pages": pages}
