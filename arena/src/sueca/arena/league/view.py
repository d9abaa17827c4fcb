"""The league's read model: the read-only queries behind every page of the web, every
``/api/`` answer, and the CLI's ``matches`` and ``matches show``.

Read-only by construction: nothing here calls a store method that writes (no ``catch_up``, no
``load_config`` — which fixes the config on first use — no claims, no status changes). The
ratings are read as the workers left them; the per-bot counts the ratings do not keep come
from the fold over the results log (:mod:`sueca.arena.league.fold`). Faults by kind and move
latency are the league's per-bot totals (:mod:`sueca.arena.botstats`), read again whenever a
result was recorded since; whether a bot is connected comes from the referee replicas'
heartbeats, and its sessions from the replicas themselves (ListBots, asked at most once a few
seconds per replica).

Hidden information: a match's hands (its replay), its seed and a bot's fault detail (its own
words, which may name its cards) are shown only once the match is recorded *and* its duplicate
twin (same seed, same decks) is finished too; until then a reader sees who plays and the
status. Tournament secrets are never shown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from sueca.arena.fairplay import CHALLENGE
from sueca.arena.leaderboard import (
    ORDER_KEYS,
    BoardRow,
    RankedColumns,
    SortColumns,
    board_row,
    connected_bots,
    rank,
    rating_columns,
)
from sueca.arena.league.competitions import (
    CompetitionIndex,
    CompetitionPage,
    CompetitionSummary,
    competition_list,
    competition_page,
)
from sueca.arena.league.fold import BotFold, LogFold
from sueca.arena.league.limits import MATCH_ENDS
from sueca.arena.league.rows import (
    BadQuery,
    BotPage,
    Connection,
    FaultLine,
    HeadToHead,
    LeagueRow,
    ListedMatch,
    MatchDetail,
    MatchesPage,
    NotFound,
    TournamentPage,
    TournamentSummary,
    VersionRow,
    check_page,
    match_row,
    outcome,
)
from sueca.arena.ratings.fit import Fit
from sueca.arena.ratings.fit import fit as fit_record
from sueca.arena.ratings.live import rated
from sueca.arena.ratings.standings import standings
from sueca.arena.records import BotHealth, MatchRecord, MatchStatus, RatingColumns
from sueca.arena.store import Store
from sueca.arena.store.client import entry_key
from sueca.arena.store.fairplay import suspended
from sueca.arena.store.ratings import (
    TrimPoint,
    cached_fit,
    load,
    load_matchups,
    playing,
    ratings_stamp,
    read_record,
    stored_config,
    trim_point,
)
from sueca.arena.tournaments import format_view
from sueca.engine.game import End
from sueca.referee import control

__all__ = ["LeagueView", "SORTS", "HISTORY", "RECORD_TTL"]

HISTORY = 500  # rating points a bot page shows (the latest)
LIST_BOTS_TTL = 3.0  # seconds a replica's ListBots answer is reused (bot pages hit it)
LIST_BOTS_TIMEOUT = 1.0  # a replica that does not answer in time: sessions unknown
HEALTH_TTL = 10.0  # seconds the leaderboard's health columns may lag a rebuild of them
#: seconds the rating of record may lag the results log before this process refits it itself
#: (a refit is 0.2-0.4 s of CPU with 1,000 bots: never per page view; see LeagueView._record)
RECORD_TTL = 30.0
#: the ``tournament`` of the arena's own matches, in no tournament's list
_OWN = ("ladder", CHALLENGE)
FEATURED_SCAN = 30  # newest matches looked at for the front page's featured match

#: ``?sort=`` of the leaderboard: the CLI's orders (the rating of record first), and more
SORTS: dict[str, Callable[[SortColumns], tuple[float, str] | str]] = {
    **ORDER_KEYS,
    "games": lambda r: (-r["games"], r["bot"]),
    "bot": lambda r: r["bot"],
}


class _Rated(NamedTuple):
    """What :meth:`LeagueView._rating_state` read: at ``stamp``, the rated bots' ranked
    columns, whether the fit is current, the fit of every version, each bot's current one."""

    stamp: tuple[str | None, ...]
    by_bot: dict[str, RankedColumns]
    current: bool
    versions: Fit
    playing: dict[str, int]


class LeagueView:
    """The read-only queries of the league, over ``store``; one per process (it caches)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.log = LogFold()
        self._rated: _Rated | None = None
        self._stored_fit: tuple[str, Fit] | None = None  # the fit record() cached in Redis
        self._own_fit: tuple[str, Fit] | None = None  # this process's, when that one lagged
        self._fit_moved = 0.0  # monotonic time the newest fit known here last moved
        self._fit_lock = threading.Lock()  # one refit at a time, not one per waiting request
        self._health: tuple[tuple[str | None, float], dict[str, BotHealth]] | None = None
        self._sessions: dict[str, tuple[float, dict[str, int] | None]] = {}
        self._competitions = CompetitionIndex(store)

    def refresh(self) -> None:
        """Fold the results log's new entries (:class:`~sueca.arena.league.fold.LogFold`)."""
        self.log.refresh(self.store)

    # -- leaderboard -----------------------------------------------------------------------
    def leaderboard(self, sort: str = "rating") -> list[LeagueRow]:
        """Registered bots with ratings, best first, with the log's counts.

        The rows are those of :func:`sueca.arena.leaderboard.leaderboard` (the CLI's
        ``--json``): the rating of record with its 95% interval, ``matches`` (the rated matches
        it rests on) and ``provisional``, the live ratings, ``faults`` by kind, ``p50_ms`` and
        ``p99_ms``, ``connected``; plus ``logged`` (the bot's matches in the results log after
        any trim: ``won`` + ``drawn`` + ``lost``) and ``last_seen``. ``rank`` is the rank by the
        rating of record whatever the ``sort``.
        """
        if sort not in SORTS:
            raise BadQuery(f"bad sort {sort!r}: one of {', '.join(SORTS)}")
        self.refresh()
        rated = self._rating_state()
        health = self._health_of(list(rated.by_bot))
        online = connected_bots(self.store)
        rows = [_league_row(board_row(r, health[r["bot"]], connected=r["bot"] in online,
                                      version=rated.playing.get(r["bot"], 1)),
                            self.log.bot(r["bot"]))
                for r in rated.by_bot.values()]
        if sort == "bot":
            rows.sort(key=SORTS[sort])
        elif sort != "rating":  # established bots first in every order, as rank() does
            key = SORTS[sort]
            rows.sort(key=lambda r: (r["provisional"], key(r)))
        return rows

    def _health_of(self, names: list[str]) -> dict[str, BotHealth]:
        """The bots' health totals, read again once a result was recorded since (the fold's
        cursor moved) or :data:`HEALTH_TTL` passed (a rebuild writes no result)."""
        stamp = self.log.cursor
        cached = self._health
        if cached is not None and cached[0][0] == stamp and \
                time.monotonic() - cached[0][1] < HEALTH_TTL and all(n in cached[1] for n in names):
            return cached[1]
        got = self.store.bot_stats(names)
        self._health = ((stamp, time.monotonic()), got)
        return got

    def _ratings(self) -> dict[str, RankedColumns]:
        """Rated registered bots by name (best rating of record first, with ``rank``: each
        bot's current version's)."""
        return self._rating_state().by_bot

    def _rating_state(self) -> _Rated:
        """The ratings, read again only when they may have moved: a new results-log entry
        folded (the ratings cursor), a new rating of record cached, a bot registered or
        removed, a version started, a rebuild with another K. One round trip when nothing
        did."""
        stamp = ratings_stamp(self.store)
        cached = self._rated
        if cached is not None and cached.stamp == stamp and (
                cached.current or time.monotonic() - self._fit_moved < RECORD_TTL):
            return cached
        with self._fit_lock:
            versions, current = self._record(stamp[0] or "", stamp[1])
        registered = self.store.bots.names()
        playing = self.store.versions.currents(registered)
        of_record = versions.for_bots(playing)
        rows = rank(rating_columns(bot, of_record, r) for bot, r in load(self.store).items()
                    if bot in playing)
        self._rated = _Rated(stamp, {r["bot"]: r for r in rows}, current, versions, playing)
        return self._rated

    def _record(self, cursor: str, stored: str | None) -> tuple[Fit, bool]:
        """The rating of record of every version for the results log up to ``cursor`` (the live
        ratings'), and whether it is that current.

        The fit :func:`sueca.arena.store.ratings.versions_of_record` cached in Redis (the scheduler
        and the exporter refresh it; ``stored`` is its cursor) when it is current; else this
        process's own, fitted from the stored matchup counts — but only once the newest fit
        known here has not moved for :data:`RECORD_TTL` seconds: a refit costs a fraction of a
        second with a thousand bots, so a busy league's pages show a fit up to that much
        behind rather than refit per view. Nothing is written: the pages are read-only.
        """
        initial = stored_config(self.store).elo_initial
        if stored is not None and (self._stored_fit is None or self._stored_fit[0] != stored):
            got = cached_fit(self.store)
            self._stored_fit = None if got is None else (stored, got)
            self._fit_moved = time.monotonic()
        known = [f for f in (self._stored_fit, self._own_fit)
                 if f is not None and f[1].initial == initial]
        newest = max(known, key=lambda f: entry_key(f[0]) if f[0] else (-1, -1), default=None)
        if newest is not None and (newest[0] == cursor
                                   or time.monotonic() - self._fit_moved < RECORD_TTL):
            return newest[1], newest[0] == cursor
        # the counts are read after the cursor: they hold at least what it says (a refit here
        # may then be labelled a little older than it is, never newer)
        counts = load_matchups(self.store)
        start = newest[1].theta if newest is not None and newest[1].theta else None
        self._own_fit = (cursor, fit_record(counts, initial, start=start))
        self._fit_moved = time.monotonic()
        return self._own_fit[1], True

    def competition_ratings(self, name: str) -> tuple[Fit, Fit]:
        """A named competition's rating of record over its own results, read only: by bot (each
        entrant's playing version: the one its entry fixed at the freeze, else its current
        one) and by version (:func:`~sueca.arena.ratings.fit.identity`, for
        :meth:`~sueca.arena.ratings.fit.Fit.versions_of`). The default ladder's is the
        arena's."""
        versions = read_record(self.store, name)
        return versions.for_bots(playing(self.store, versions.bots(), name)), versions

    def trimmed(self) -> TrimPoint | None:
        """Where retention trimmed the results log (``through`` entry id, ``results`` it held),
        or None: the counts, history and head-to-head folded here cover only what follows."""
        return trim_point(self.store)

    # -- bots --------------------------------------------------------------------------------
    def bot(self, name: str, recent: int = 20) -> BotPage:
        """A bot's page: its rating, counts, health, connections, history and recent matches."""
        self.refresh()
        registry = self.store.bots
        stats = self.log.bots.get(name)
        if not registry.exists(name) and stats is None:
            raise NotFound(f"no bot named {name!r}{registry.case_hint(name)}")
        rated = self._rating_state()  # one reading: the row and the versions' ratings agree
        row = rated.by_bot.get(name)
        stats = stats or BotFold()
        h2h: list[HeadToHead] = [{"opponent": opp, "won": w, "drawn": d, "lost": lost}
                                 for opp, (w, d, lost) in sorted(stats.versus.items())]
        health = self.store.bot_stats([name])[name]
        registered = registry.exists(name)
        version, versions = self._versions_page(name, registered, stats, rated.versions)
        return {"bot": name, "registered": registered, "version": version, "versions": versions,
                "rating": None if row is None else _bot_rating(row),
                "rank": None if row is None else row.get("rank"), "matches": stats.matches,
                "won": stats.won, "drawn": stats.drawn, "lost": stats.lost,
                "last_seen": stats.last_seen, "faults": health["faults"],
                "p50_ms": health["p50_ms"], "p99_ms": health["p99_ms"],
                "moves": health["moves"], "turns": health["turns"], "max_ms": health["max_ms"],
                "connected": self._connected(name),
                "history": [{"time": t, "elo": e, "mu": mu, "sigma": sg}
                            for t, e, mu, sg in self.log.history.get(name, [])[-HISTORY:]],
                "head_to_head": h2h, "trimmed": self.trimmed(),
                "recent_matches": self.match_rows(list(reversed(stats.recent[-recent:])), name),
                "ends": dict(stats.ends), "fault_ends": dict(stats.fault_ends),
                "fault_lines": self._public_lines(stats),
                "suspended": suspended(self.store, [name]).get(name)}

    def _versions_page(self, name: str, registered: bool, stats: BotFold,
                       of_record: Fit) -> tuple[int, list[VersionRow]]:
        """The bot's current version and its versions, newest first, each with its rating
        of record (in ``of_record``, by version), its matches in the log and what
        :mod:`sueca.arena.store.versions` keeps of it (an unregistered bot: what the log says
        played)."""
        history = {h["version"]: h for h in self.store.versions.history(name)} if registered \
            else {}
        current = self.store.versions.current(name) if registered \
            else max([1, *stats.by_version])
        rows: list[VersionRow] = []
        for v in of_record.versions_of(name, upto=max([current, *history])):
            info = history.get(v["version"])
            rows.append({**v, "created": None if info is None else info["created"],
                         "by": "" if info is None else info["by"],
                         "note": "" if info is None else info["note"],
                         "submission": None if info is None else info["submission"],
                         "logged": stats.by_version.get(v["version"], 0)})
        return current, rows

    def _public_lines(self, stats: BotFold) -> list[FaultLine]:
        """A bot's fault lines, newest first; the detail (the bot's own words, which may tell
        its cards) of a duplicate half held back while its twin, on the same decks, is not
        finished, as the match's hands are."""
        lines = list(reversed(stats.fault_lines))
        for i, line in enumerate(lines):
            if line["match"] in stats.paired and line["detail"]:
                m = self.store.match(line["match"])
                if m is None or self._twin_unfinished(m):
                    lines[i] = {**line, "detail": None}
        return lines

    def _connected(self, name: str) -> list[Connection]:
        """Referee replicas the bot is connected to now, with its free seats there (from the
        replicas' heartbeats: the same data the ladder schedules by) and its sessions there
        (the replica's ListBots; None when it did not answer)."""
        replicas = self.store.referees()
        return [{"referee": addr, "free": free, "sessions": (self._bots_on(addr) or {}).get(name)}
                for addr, free in zip(replicas, self.store.free_seats(replicas, name))
                if free is not None]

    def _bots_on(self, addr: str) -> dict[str, int] | None:
        """Sessions per bot on replica ``addr`` (ListBots), reused for :data:`LIST_BOTS_TTL`
        seconds so that visitors cannot turn page views into calls on the referee."""
        now = time.monotonic()
        got = self._sessions.get(addr)
        if got is not None and now - got[0] < LIST_BOTS_TTL:
            return got[1]
        try:
            bots: dict[str, int] | None = {
                b["bot"]: int(b["sessions"])
                for b in control.list_bots(addr, timeout=LIST_BOTS_TIMEOUT)}
        except Exception:  # unreachable, refused our token, ...: unknown, not an error page
            bots = None
        if len(self._sessions) > 64:  # replicas come and go: keep the map small
            self._sessions.clear()
        self._sessions[addr] = (now, bots)
        return bots

    # -- matches -----------------------------------------------------------------------------
    def matches(self, page: int | str = 1, per: int | str = 50, *, tournament: str | None = None,
                bot: str | None = None, end: str | None = None) -> MatchesPage:
        """One page of matches, newest first; filters by tournament, bot (recorded matches)
        and end (recorded matches: one of :data:`~sueca.arena.league.limits.MATCH_ENDS`).
        ``total`` counts every match the filters keep."""
        page, per = check_page(page, per)
        if end is not None and end not in MATCH_ENDS:  # else a typo reads as "no such matches"
            raise BadQuery(f"bad end {end!r}: one of {', '.join(MATCH_ENDS)}")
        start = (page - 1) * per
        s = self.store
        if tournament is not None and s.tournament(tournament) is None and tournament not in _OWN:
            raise NotFound(f"no tournament {tournament!r}")
        if bot is not None or end is not None:
            self.refresh()
            ids: list[str] | None = None
            if bot is not None:
                ids = list(self.log.bot(bot).recent)
            if end is not None:
                by_end = self.log.by_end.get(end, [])
                if ids is None:
                    ids = by_end
                else:
                    ending = set(by_end)
                    ids = [m for m in ids if m in ending]
            assert ids is not None
            if tournament is not None:
                tour = s.tournaments_of(ids)
                ids = [m for m, t in zip(ids, tour) if t == tournament]
            total = len(ids)
            chosen = list(reversed(ids))[start:start + per]
        elif tournament is not None and tournament not in _OWN:
            total, chosen = s.tournament_page(tournament, start, per)
        else:
            total, chosen = s.match_page(start, per)
            if tournament in _OWN:  # ladder and challenge matches are in no tournament list
                tour = s.tournaments_of(chosen)
                chosen = [m for m, t in zip(chosen, tour) if t == tournament]
        return {"page": page, "per": per, "total": total,
                "pages": max(1, -(-total // per)), "matches": self.match_rows(chosen, bot)}

    def match_rows(self, ids: list[str], bot: str | None = None) -> list[ListedMatch]:
        """Summary rows of matches (as ``sueca-arena matches --json`` gives them); with ``bot``,
        each row's ``outcome`` for that bot."""
        found = [m for m in self.store.matches_of(ids) if m is not None]
        done = [m["id"] for m in found if m["status"] == MatchStatus.DONE]
        results = dict(zip(done, self.store.results_of(done)))
        rows = [match_row(m, results.get(m["id"])) for m in found]
        if bot is not None:
            for row in rows:
                row["outcome"] = outcome(row, bot)
        return rows

    def featured(self, skip: str | None = None) -> MatchDetail:
        """The front page's featured match: the newest recorded match whose replay is public
        (not ``skip``, the one just shown), one played to its end before one a fault cut
        short; :class:`NotFound` when there is none yet."""
        _, ids = self.store.match_page(0, FEATURED_SCAN)
        found = [m for m in self.store.matches_of(ids)
                 if m is not None and m["status"] == MatchStatus.DONE and m["id"] != skip]
        results = self.store.results_of([m["id"] for m in found])
        normal = [m["id"] for m, r in zip(found, results)
                  if r is not None and r["end"] == End.NORMAL]
        for mid in normal + [m["id"] for m in found if m["id"] not in normal]:
            detail = self.match(mid)
            if detail["replay"] is not None:
                return detail
        raise NotFound("no finished match to show yet")

    def match(self, mid: str) -> MatchDetail:
        """``{"match", "result", "replay", "hidden"}``: as ``matches show ID --json``, with the
        seed, the replay and a bot's fault detail left out (and ``hidden`` saying why) until
        they reveal nothing."""
        m = self.store.match(mid)
        if m is None and self.store.is_recorded(mid):
            raise NotFound(f"match {mid!r} was archived by retention: it is no longer in Redis "
                           f"(the operator's archive files hold it)")
        if m is None:
            raise NotFound(f"no match {mid!r}")
        done = m.get("status") == MatchStatus.DONE
        result = self.store.result_of(mid) if done else None
        hidden = None
        if not done:
            hidden = "the hands are shown once the match is finished"
        elif self._twin_unfinished(m):
            hidden = ("the hands are shown once its duplicate twin (same decks) is finished too")
        spec = m["spec"].copy()
        if hidden:  # the seed deals the decks: of this match, and of its twin
            spec.pop("seed", None)
            if result is not None:  # and a bot's own words may name its cards
                result = result.copy()
                result.pop("seed", None)
                result.pop("fault_detail", None)
        m = {**m, "spec": spec}
        replay = None if hidden else self.store.replay(mid)
        return {"match": m, "result": result, "replay": replay, "hidden": hidden}

    def live(self, mid: str) -> MatchRecord:
        """The match, if a visitor may watch it live: not finished, and no duplicate half
        whose twin (same decks) is still to finish; else :class:`NotFound` says why."""
        m = self.store.match(mid)
        if m is None:
            raise NotFound(f"no match {mid!r}")
        if m.get("status") in (MatchStatus.DONE, MatchStatus.FAILED):
            raise NotFound(f"match {mid!r} is not running (it is {m.get('status')}); "
                           f"its page is /matches/{mid}")
        if m.get("pair"):
            raise NotFound(f"match {mid!r} is one half of a duplicate pair: its cards are its "
                           "twin's decks, so it is shown only once both are finished")
        return m

    def _twin_unfinished(self, m: MatchRecord) -> bool:
        """Whether the other half of ``m``'s duplicate pair (same seed) is not recorded yet.

        A schedule puts the two halves next to each other; the whole list is read only if not.
        """
        pair, tid = m.get("pair") or "", m.get("tournament") or ""
        if not pair or not tid:
            return False
        s = self.store
        ids = s.tournament_matches(tid)
        try:
            i = ids.index(m["id"])
            near = [x for x in ids[max(0, i - 1): i + 2] if x != m["id"]]
        except ValueError:
            near = []
        for candidates in (near, [x for x in ids if x != m["id"]]):
            twins = [st for p, st in s.pair_statuses(candidates) if p == pair]
            if twins:  # a failed twin counts as unfinished: a re-run plays it on the same seed
                return any(st != MatchStatus.DONE for st in twins)
        return False

    # -- tournaments -------------------------------------------------------------------------
    def tournaments(self, limit: int = 50) -> list[TournamentSummary]:
        """The newest tournaments: id, status, matches in all, bots."""
        out: list[TournamentSummary] = []
        for tid in self.store.tournament_ids(limit):
            t = self.store.tournament(tid)
            out.append({"id": tid, "status": None if t is None else t.get("status"),
                        "total": None if t is None else t.get("total"),
                        "bots": None if t is None else (t.get("spec") or {}).get("bots")})
        return out

    def tournament(self, tid: str) -> TournamentPage:
        """Spec (no secret), progress, standings (as ``tournament --json``) and the cross
        table: ``cross[a][b]`` = [won, drawn, lost] of a's matches against b."""
        t = self.store.tournament(tid)
        if t is None:
            raise NotFound(f"no tournament {tid!r}")
        results = self.store.tournament_results(tid)
        elo_k = stored_config(self.store).elo_k
        spec: dict[str, object] = {k: v for k, v in (t.get("spec") or {}).items()
                                   if k != "secret"}
        bots = [str(b) for b in t["spec"].get("bots") or ()]
        cross: dict[str, dict[str, list[int]]] = {a: {} for a in bots}
        for res in results:
            if not rated(res):
                continue
            seats = res["seats"]
            for team in (0, 1):
                mine, theirs = {seats[team], seats[team + 2]}, {seats[1 - team], seats[3 - team]}
                k = 0 if res["winner"] == team else 2
                for a in mine - theirs:
                    for b in theirs - mine:
                        cross.setdefault(a, {}).setdefault(b, [0, 0, 0])[k] += 1
        return {"tournament": tid, "status": t.get("status"), "created": t.get("created"),
                "spec": spec, "progress": self.store.progress(tid), "recorded": len(results),
                "archived": self.store.tournament_archived(tid),
                "standings": standings(results, elo_k, field=bots), "bots": bots, "cross": cross,
                "format": format_view(tid, t["spec"], results)}

    # -- competitions ------------------------------------------------------------------------
    def competitions(self) -> list[CompetitionSummary]:
        """Every competition with its state, the default ladder first."""
        return competition_list(self.store)

    def competition(self, name: str, page: int | str = 1) -> CompetitionPage:
        """A competition's page (:func:`sueca.arena.league.competitions.competition_page`)."""
        return competition_page(self.store, self._competitions, name, page)


def _league_row(row: BoardRow, log: BotFold) -> LeagueRow:
    cols = log.log_columns()
    return {**row, "logged": cols["logged"], "won": cols["won"], "drawn": cols["drawn"],
            "lost": cols["lost"], "last_seen": cols["last_seen"]}


def _bot_rating(r: RankedColumns) -> RatingColumns:
    return {"rating": r["rating"], "rating_pm": r["rating_pm"], "matches": r["matches"],
            "provisional": r["provisional"], "elo": r["elo"], "elo_pm": r["elo_pm"],
            "mu": r["mu"], "mu_pm": r["mu_pm"], "sigma": r["sigma"], "ordinal": r["ordinal"],
            "games": r["games"], "score": r["score"]}
