"""What the web front end shows, read from Redis through the league's own store layer.

Read-only by construction: nothing here calls a store method that writes (no ``catch_up``, no
``load_config`` — which fixes the config on first use — no claims, no status changes). The
ratings are read as the workers left them; the per-bot counts the ratings do not keep (wins,
draws, losses, last seen) and the by-bot and by-end match indexes are a fold over the
results log, kept in this process and advanced from its last entry on each request, so a page
costs a few Redis round trips however long the history is. Faults by kind and move latency are
the league's per-bot totals (:mod:`sueca.arena.botstats`, written with each result), read
again whenever a result was recorded since; a bot's connected sessions come from the referee
replicas themselves (ListBots, asked at most once a few seconds per replica).

Hidden information: a match's hands (its replay) and its seed are shown only once the match is
recorded *and* its duplicate twin (same seed, same decks) is finished too; until then a visitor
sees who plays and the status. Tournament secrets are never shown.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import NotRequired, TypedDict

from sueca.arena.leaderboard import (
    ORDER_KEYS,
    RankedColumns,
    SortColumns,
    health_columns,
    rank,
    rating_columns,
)
from sueca.arena.ratings.fit import Fit
from sueca.arena.ratings.fit import fit as fit_record
from sueca.arena.ratings.live import Ratings, rated
from sueca.arena.ratings.standings import StandingsRow, standings
from sueca.arena.records import (
    BotHealth,
    HealthColumns,
    LeaderboardRow,
    MatchRecord,
    MatchRow,
    Progress,
    RatingColumns,
    ResultEntry,
)
from sueca.arena.store import DONE, FAILED, Store
from sueca.arena.store.client import entry_key
from sueca.arena.store.ratings import (
    RatingsConfig,
    TrimPoint,
    cached_fit,
    load,
    load_checkpoint,
    load_matchups,
    ratings_stamp,
    stored_config,
    trim_point,
)
from sueca.arena.tournaments import FormatView, format_view
from sueca.engine.game import ABORTED, FAULT_ENDS, NORMAL
from sueca.engine.replay import ReplayRecord

MAX_PAGE_SIZE = 200
MAX_PAGE = 10**9  # Redis ranges are 64-bit: a larger offset would be its error, not ours
HISTORY = 500  # rating points a bot page shows (the latest)
LIST_BOTS_TTL = 3.0  # seconds a replica's ListBots answer is reused (bot pages hit it)
LIST_BOTS_TIMEOUT = 1.0  # a replica that does not answer in time: sessions unknown
HEALTH_TTL = 10.0  # seconds the leaderboard's health columns may lag a rebuild of them
#: seconds the rating of record may lag the results log before this process refits it itself
#: (a refit is 0.2-0.4 s of CPU with 1,000 bots: never per page view; see LeagueView._record)
RECORD_TTL = 30.0
#: the ends a recorded match can have (``/matches?end=``)
MATCH_ENDS = (NORMAL, *FAULT_ENDS, ABORTED)
FAULT_LINES = 20  # fault lines a bot page shows (its latest faulted matches)
MAX_DETAIL = 300  # characters of a fault's detail shown (the referee caps it too)
FEATURED_SCAN = 30  # newest matches looked at for the front page's featured match
#: seat-stats fields of each fault kind (records.SeatStats)
_FAULT_COUNTS = (("renuncia", "renuncias"), ("timeout", "timeouts"),
                 ("disconnect", "disconnects"))


class LogColumns(TypedDict):
    """A bot's counts from this process's fold over the results log (after any trim)."""

    logged: int
    won: int
    drawn: int
    lost: int
    last_seen: float | None


class WebRow(LeaderboardRow, LogColumns):
    """A leaderboard row on the web: the CLI's row, and the log's counts."""


class HistoryPoint(TypedDict):
    """A bot's live ratings after one of its rated games."""

    time: float | None
    elo: float
    mu: float
    sigma: float


class HeadToHead(TypedDict):
    opponent: str
    won: int
    drawn: int
    lost: int


class Connection(TypedDict):
    """A replica the bot is connected to: its free seats there and its sessions (None:
    the replica did not say)."""

    referee: str
    free: int
    sessions: int | None


class WebMatchRow(MatchRow):
    """A match's row on the web: as the CLI lists it, and when its result was made; on a bot's
    page (and ``/matches?bot=``) ``outcome`` is the match from that bot's side: ``won``,
    ``lost``, ``drawn``, or None (not finished, or the bot sat on both teams)."""

    time: float | None
    outcome: NotRequired[str | None]


class FaultLine(TypedDict):
    """One of a bot's recent matches in which the referee faulted it: ``counts`` by kind
    (renúncias, timeouts, disconnects, from its seats' stats), ``ended`` whether its fault ended
    the match (as ``end``), ``detail`` what it reported (its exception's first line), if any."""

    match: str
    time: float | None
    end: str
    ended: bool
    counts: dict[str, int]
    detail: str | None


class BotPage(TypedDict):
    bot: str
    registered: bool
    rating: RatingColumns | None
    rank: int | None
    matches: int
    won: int
    drawn: int
    lost: int
    last_seen: float | None
    faults: dict[str, int]
    p50_ms: float | None
    p99_ms: float | None
    moves: int
    turns: int
    max_ms: float | None
    connected: list[Connection]
    history: list[HistoryPoint]
    head_to_head: list[HeadToHead]
    trimmed: TrimPoint | None
    recent_matches: list[WebMatchRow]
    ends: dict[str, int]
    fault_ends: dict[str, int]
    fault_lines: list[FaultLine]


class MatchesPage(TypedDict):
    page: int
    per: int
    total: int
    pages: int
    matches: list[WebMatchRow]


class MatchDetail(TypedDict):
    """A match's page: ``hidden`` says why the seed and the replay are left out (None: shown)."""

    match: MatchRecord
    result: ResultEntry | None
    replay: ReplayRecord | None
    hidden: str | None


class TournamentSummary(TypedDict):
    id: str
    status: str | None
    total: int | None
    bots: list[str] | None


class TournamentPage(TypedDict):
    """A tournament's page: ``cross[a][b]`` = [won, drawn, lost] of a's matches against b."""

    tournament: str
    status: str
    created: str
    spec: dict[str, object]
    progress: Progress
    recorded: int
    archived: int
    standings: list[StandingsRow]
    bots: list[str]
    cross: dict[str, dict[str, list[int]]]
    format: FormatView  # the format, and a Swiss tournament's rounds (sueca.arena.tournaments)


class NotFound(LookupError):
    """An unknown bot, match or tournament; the message names it."""


class BadQuery(ValueError):
    """A bad query parameter; the message quotes it."""


class _BotStats:
    __slots__ = ("matches", "won", "drawn", "lost", "last_seen", "recent", "versus", "ends",
                 "fault_ends", "fault_lines", "paired")

    def __init__(self) -> None:
        self.matches = 0
        self.won = self.drawn = self.lost = 0
        self.last_seen: float | None = None
        self.recent: list[str] = []   # recorded match ids, in log order
        self.versus: dict[str, list[int]] = {}  # opponent -> [won, drawn, lost] (matches)
        self.ends: dict[str, int] = {}  # matches by how they ended
        self.fault_ends: dict[str, int] = {}  # matches its own fault ended, by end
        self.fault_lines: deque[FaultLine] = deque(maxlen=FAULT_LINES)  # oldest first
        self.paired: set[str] = set()  # of those, the duplicate halves with a detail

    def log_columns(self) -> LogColumns:
        """The leaderboard's counts from the log fold: ``logged`` rather than ``matches``,
        which in the row (as in the CLI's) is the rated matches the rating of record rests on."""
        return {"logged": self.matches, "won": self.won, "drawn": self.drawn, "lost": self.lost,
                "last_seen": self.last_seen}


class LeagueView:
    """The read-only queries behind every page and every ``/api/`` answer."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._cursor: str | None = None
        self._trim: str | None = None
        self._bots: dict[str, _BotStats] = {}
        self._by_end: dict[str, list[str]] = {}
        self._rated: tuple[tuple[str | None, ...], dict[str, RankedColumns], bool] | None = None
        self._stored_fit: tuple[str, Fit] | None = None  # the fit record() cached in Redis
        self._own_fit: tuple[str, Fit] | None = None  # this process's, when that one lagged
        self._fit_moved = 0.0  # monotonic time the newest fit known here last moved
        self._fit_lock = threading.Lock()  # one refit at a time, not one per waiting request
        self._fold_config: RatingsConfig | None = None
        self._history: dict[str, list[tuple[float | None, float, float, float]]] = {}
        self._fold_ratings = Ratings()
        self._health: tuple[tuple[str | None, float], dict[str, BotHealth]] | None = None
        self._sessions: dict[str, tuple[float, dict[str, int] | None]] = {}

    # -- the fold over the results log -----------------------------------------------------
    def refresh(self) -> None:
        with self._lock:
            config = stored_config(self.store)
            trim = self.store.trimmed_through()
            # first use, ratings rebuilt with another K, or the log trimmed by retention (the
            # pages say they count the log after the trim: so they do, in every process)
            if self._fold_config != config or self._trim != trim:
                self._reset(config)
                self._trim = trim
            for eid, res in self.store.results(after=self._cursor):
                self._cursor = eid
                self._fold(res)

    def _reset(self, config: RatingsConfig) -> None:
        self._fold_config = config
        self._cursor = None
        self._bots = {}
        self._by_end = {}
        self._history = {}
        self._fold_ratings = Ratings(*config)
        # after a trim the fold goes on from the ratings checkpoint: the history then starts
        # there, at the right ratings, rather than at the initial rating
        cp = load_checkpoint(self.store)
        if cp is not None and (cp["elo_k"], cp["elo_initial"]) == config:
            self._fold_ratings = Ratings.from_state(cp["state"], *config)
            self._cursor = cp["cursor"]

    def _fold(self, res: ResultEntry) -> None:
        mid = str(res.get("match_id", ""))
        seats = [str(s) for s in res.get("seats") or ()]
        end = str(res.get("end") or "")
        winner = res.get("winner")
        self._by_end.setdefault(end, []).append(mid)
        when = res.get("time")
        for team in (0, 1):
            mine = {seats[s] for s in (team, team + 2) if s < len(seats)}
            theirs = {seats[s] for s in (1 - team, 3 - team) if s < len(seats)}
            for bot in mine - theirs:
                st = self._bots.setdefault(bot, _BotStats())
                st.matches += 1
                st.recent.append(mid)
                st.ends[end] = st.ends.get(end, 0) + 1
                if res.get("fault_bot") == bot:
                    st.fault_ends[end] = st.fault_ends.get(end, 0) + 1
                if isinstance(when, int | float):
                    st.last_seen = max(st.last_seen or 0.0, float(when))
                outcome = 1 if winner is None else 0 if winner == team else 2
                if winner is None:
                    st.drawn += 1
                elif winner == team:
                    st.won += 1
                else:
                    st.lost += 1
                for opp in theirs - mine:
                    st.versus.setdefault(opp, [0, 0, 0])[outcome] += 1
        for bot in set(seats):
            line = _fault_line(res, bot, seats)
            if line is not None:
                st = self._bots.setdefault(bot, _BotStats())
                st.fault_lines.append(line)
                if line["detail"] and res.get("pair"):
                    st.paired = {x["match"] for x in st.fault_lines} & (st.paired | {mid})
        # the league's own rating fold, in log order: each bot's rating after each rated game
        fold = self._fold_ratings
        fold.apply(res)
        for bot in fold.dirty:
            r = fold.bots[bot]
            self._history.setdefault(bot, []).append(
                (float(when) if isinstance(when, int | float) else None, r.elo, r.mu, r.sigma))
        fold.dirty.clear()

    # -- leaderboard -----------------------------------------------------------------------
    def leaderboard(self, sort: str = "rating") -> list[WebRow]:
        """Registered bots with ratings, best first, with the log's counts.

        The rows are those of :func:`sueca.arena.leaderboard.leaderboard` (the CLI's
        ``--json``): the rating of record with its 95% interval, ``matches`` (the rated matches
        it rests on) and ``provisional``, the live ratings, ``faults`` by kind (renuncia,
        timeout, disconnect), ``p50_ms`` and ``p99_ms``; plus ``logged`` (the bot's matches in
        the results log after any trim: ``won`` + ``drawn`` + ``lost``) and ``last_seen``.
        ``rank`` is the rank by the rating of record whatever the ``sort``.
        """
        if sort not in SORTS:
            raise BadQuery(f"bad sort {sort!r}: one of {', '.join(SORTS)}")
        by_bot = self._ratings()
        health = self._health_of(list(by_bot))
        rows = [_web_row(r, (self._bots.get(r["bot"]) or _BotStats()).log_columns(),
                         health_columns(health[r["bot"]])) for r in by_bot.values()]
        if sort == "bot":
            rows.sort(key=SORTS[sort])
        elif sort != "rating":  # established bots first in every order, as rank() does
            key = SORTS[sort]
            rows.sort(key=lambda r: (r["provisional"], key(r)))
        return rows

    def _health_of(self, names: list[str]) -> dict[str, BotHealth]:
        """The bots' health totals, read again once a result was recorded since (the fold's
        cursor moved) or :data:`HEALTH_TTL` passed (a rebuild writes no result)."""
        stamp = self._cursor
        cached = self._health
        if cached is not None and cached[0][0] == stamp and \
                time.monotonic() - cached[0][1] < HEALTH_TTL and all(n in cached[1] for n in names):
            return cached[1]
        got = self.store.bot_stats(names)
        self._health = ((stamp, time.monotonic()), got)
        return got

    def _ratings(self) -> dict[str, RankedColumns]:
        """Rated registered bots by name (best rating of record first, with ``rank``), read
        again only when the ratings may have moved: a new results-log entry folded (the ratings
        cursor), a new rating of record cached, a bot registered or removed, a rebuild with
        another K. One round trip when nothing did."""
        self.refresh()
        stamp = ratings_stamp(self.store)
        cached = self._rated
        if cached is not None and cached[0] == stamp and (
                cached[2] or time.monotonic() - self._fit_moved < RECORD_TTL):
            return cached[1]
        with self._fit_lock:
            of_record, current = self._record(stamp[0] or "", stamp[1])
        registered = set(self.store.bots.names())
        rows = rank(rating_columns(bot, of_record, r) for bot, r in load(self.store).items()
                    if bot in registered)
        by_bot = {r["bot"]: r for r in rows}
        self._rated = (stamp, by_bot, current)
        return by_bot

    def _record(self, cursor: str, stored: str | None) -> tuple[Fit, bool]:
        """The rating of record for the results log up to ``cursor`` (the live ratings'), and
        whether it is that current.

        The fit :func:`sueca.arena.store.ratings.fit_of_record` cached in Redis (the scheduler and the
        exporter refresh it; ``stored`` is its cursor) when it is current; else this process's
        own, fitted from the stored matchup counts — but only once the newest fit known here
        has not moved for :data:`RECORD_TTL` seconds: a refit costs a fraction of a second
        with a thousand bots, so a busy league's pages show a fit up to that much behind
        rather than refit per view. Nothing is written: the pages are read-only.
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

    def trimmed(self) -> TrimPoint | None:
        """Where retention trimmed the results log (``through`` entry id, ``results`` it held),
        or None: the counts, history and head-to-head folded here cover only what follows."""
        return trim_point(self.store)

    # -- bots --------------------------------------------------------------------------------
    def bot(self, name: str, recent: int = 20) -> BotPage:
        self.refresh()
        registry = self.store.bots
        stats = self._bots.get(name)
        if not registry.exists(name) and stats is None:
            raise NotFound(f"no bot named {name!r}")
        row = self._ratings().get(name)
        stats = stats or _BotStats()
        h2h: list[HeadToHead] = [{"opponent": opp, "won": w, "drawn": d, "lost": lost}
                                 for opp, (w, d, lost) in sorted(stats.versus.items())]
        health = self.store.bot_stats([name])[name]
        return {"bot": name, "registered": registry.exists(name),
                "rating": None if row is None else _bot_rating(row),
                "rank": None if row is None else row.get("rank"), "matches": stats.matches,
                "won": stats.won, "drawn": stats.drawn, "lost": stats.lost,
                "last_seen": stats.last_seen, "faults": health["faults"],
                "p50_ms": health["p50_ms"], "p99_ms": health["p99_ms"],
                "moves": health["moves"], "turns": health["turns"], "max_ms": health["max_ms"],
                "connected": self._connected(name),
                "history": [{"time": t, "elo": e, "mu": mu, "sigma": sg}
                            for t, e, mu, sg in self._history.get(name, [])[-HISTORY:]],
                "head_to_head": h2h, "trimmed": self.trimmed(),
                "recent_matches": self.match_rows(list(reversed(stats.recent[-recent:])), name),
                "ends": dict(stats.ends), "fault_ends": dict(stats.fault_ends),
                "fault_lines": self._public_lines(stats)}

    def _public_lines(self, stats: _BotStats) -> list[FaultLine]:
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
        from sueca.referee import control
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
    def matches(self, page: int | str = 1, per: int | str = 50, tournament: str | None = None,
                bot: str | None = None, end: str | None = None) -> MatchesPage:
        """One page of matches, newest first; filters by tournament, bot (recorded matches)
        and end (recorded matches: one of :data:`MATCH_ENDS`). ``total`` counts every match
        the filters keep."""
        page, per = check_page(page, per)
        if end is not None and end not in MATCH_ENDS:  # else a typo reads as "no such matches"
            raise BadQuery(f"bad end {end!r}: one of {', '.join(MATCH_ENDS)}")
        start = (page - 1) * per
        s = self.store
        if tournament is not None and s.tournament(tournament) is None and tournament != "ladder":
            raise NotFound(f"no tournament {tournament!r}")
        if bot is not None or end is not None:
            self.refresh()
            ids: list[str] | None = None
            if bot is not None:
                ids = list((self._bots.get(bot) or _BotStats()).recent)
            if end is not None:
                by_end = self._by_end.get(end, [])
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
        elif tournament is not None and tournament != "ladder":
            total, chosen = s.tournament_page(tournament, start, per)
        else:
            total, chosen = s.match_page(start, per)
            if tournament == "ladder":  # ladder matches are in no tournament list: filter here
                tour = s.tournaments_of(chosen)
                chosen = [m for m, t in zip(chosen, tour) if t == "ladder"]
        return {"page": page, "per": per, "total": total,
                "pages": max(1, -(-total // per)), "matches": self.match_rows(chosen, bot)}

    def match_rows(self, ids: list[str], bot: str | None = None) -> list[WebMatchRow]:
        """Summary rows of matches (as ``sueca-arena matches --json`` gives them); with ``bot``,
        each row's ``outcome`` for that bot."""
        found = [m for m in self.store.matches_of(ids) if m is not None]
        done = [m["id"] for m in found if m["status"] == DONE]
        results = dict(zip(done, self.store.results_of(done)))
        rows = [_match_row(m, results.get(m["id"])) for m in found]
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
                 if m is not None and m["status"] == DONE and m["id"] != skip]
        results = self.store.results_of([m["id"] for m in found])
        normal = [m["id"] for m, r in zip(found, results) if r is not None and r["end"] == NORMAL]
        for mid in normal + [m["id"] for m in found if m["id"] not in normal]:
            detail = self.match(mid)
            if detail["replay"] is not None:
                return detail
        raise NotFound("no finished match to show yet")

    def match(self, mid: str) -> MatchDetail:
        """``{"match", "result", "replay", "hidden"}``: as ``matches show ID --json``, with the
        seed and the replay left out (and ``hidden`` saying why) until they reveal nothing."""
        m = self.store.match(mid)
        if m is None and self.store.is_recorded(mid):
            raise NotFound(f"match {mid!r} was archived by retention: it is no longer in Redis "
                           f"(the operator's archive files hold it)")
        if m is None:
            raise NotFound(f"no match {mid!r}")
        result = self.store.result_of(mid) if m.get("status") == DONE else None
        hidden = None
        if m.get("status") != DONE:
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
        if m.get("status") in (DONE, FAILED):
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
                return any(st != DONE for st in twins)
        return False

    # -- tournaments -------------------------------------------------------------------------
    def tournaments(self, limit: int = 50) -> list[TournamentSummary]:
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


def _web_row(r: RankedColumns, log: LogColumns, health: HealthColumns) -> WebRow:
    return {"rank": r.get("rank", 0), "bot": r["bot"], "rating": r["rating"],
            "rating_pm": r["rating_pm"], "matches": r["matches"], "provisional": r["provisional"],
            "elo": r["elo"], "elo_pm": r["elo_pm"], "mu": r["mu"], "mu_pm": r["mu_pm"],
            "sigma": r["sigma"], "ordinal": r["ordinal"], "games": r["games"],
            "score": r["score"], "logged": log["logged"], "won": log["won"],
            "drawn": log["drawn"], "lost": log["lost"], "last_seen": log["last_seen"],
            "faults": health["faults"], "p50_ms": health["p50_ms"], "p99_ms": health["p99_ms"]}


def _fault_line(res: ResultEntry, bot: str, seats: list[str]) -> FaultLine | None:
    """What the referee held against ``bot`` in this result (its seats' fault counts, whether
    its fault ended the match, its report of the failure), or None: nothing."""
    stats = res.get("stats") or []
    counts = {kind: n for kind, field in _FAULT_COUNTS
              if (n := sum(int(st.get(field, 0) or 0)  # type: ignore[call-overload]
                           for i, st in enumerate(stats) if i < len(seats) and seats[i] == bot))}
    ended = res.get("fault_bot") == bot
    if not ended and not counts:
        return None
    detail = res.get("fault_detail") if ended else None
    return {"match": str(res.get("match_id", "")), "time": res.get("time"),
            "end": str(res.get("end") or ""), "ended": ended, "counts": counts,
            "detail": None if not detail else str(detail)[:MAX_DETAIL]}


def outcome(row: MatchRow, bot: str) -> str | None:
    """The match from ``bot``'s side: ``won``, ``lost`` or ``drawn``; None when it is not
    finished or ``bot`` sat on both teams (or on none)."""
    teams = {i & 1 for i, b in enumerate(row["seats"] or ()) if b == bot}
    if row["status"] != DONE or len(teams) != 1 or row["end"] is None:
        return None
    if row["winner"] is None:
        return "drawn"
    return "won" if row["winner"] in teams else "lost"


def _bot_rating(r: RankedColumns) -> RatingColumns:
    return {"rating": r["rating"], "rating_pm": r["rating_pm"], "matches": r["matches"],
            "provisional": r["provisional"], "elo": r["elo"], "elo_pm": r["elo_pm"],
            "mu": r["mu"], "mu_pm": r["mu_pm"], "sigma": r["sigma"], "ordinal": r["ordinal"],
            "games": r["games"], "score": r["score"]}


def _match_row(m: MatchRecord, res: ResultEntry | None) -> WebMatchRow:
    bots = m["spec"].get("bots")
    return {"id": m["id"], "status": m["status"],
            "seats": None if bots is None else [str(b) for b in bots],
            "tournament": m.get("tournament", ""), "attempts": m["attempts"],
            "end": None if res is None else res.get("end"),
            "winner": None if res is None else res.get("winner"),
            "game_points": None if res is None else res.get("game_points"),
            "fault_bot": None if res is None else res.get("fault_bot"),
            "referee": (None if res is None else res.get("referee")) or m.get("referee"),
            "error": m.get("error") or None, "time": None if res is None else res.get("time")}


#: ``?sort=`` of the leaderboard: the CLI's orders (the rating of record first), and more
SORTS: dict[str, Callable[[SortColumns], tuple[float, str] | str]] = {
    **ORDER_KEYS,
    "games": lambda r: (-r["games"], r["bot"]),
    "bot": lambda r: r["bot"],
}


def check_page(page: object, per: object) -> tuple[int, int]:
    try:
        p, n = int(page), int(per)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise BadQuery(f"bad page {page!r} or per {per!r}: whole numbers") from None
    if not 1 <= p <= MAX_PAGE:
        raise BadQuery(f"bad page {page!r}: 1 to {MAX_PAGE}")
    if not 1 <= n <= MAX_PAGE_SIZE:
        raise BadQuery(f"bad per {per!r}: 1 to {MAX_PAGE_SIZE}")
    return p, n


__all__ = ["LeagueView", "NotFound", "BadQuery", "SORTS", "MATCH_ENDS", "check_page",
           "MAX_PAGE_SIZE", "outcome"]
