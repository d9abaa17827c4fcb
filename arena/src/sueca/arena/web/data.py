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

import json
import threading
import time
from collections.abc import Mapping
from typing import Any

from sueca.arena.bots import BotRegistry
from sueca.arena.leaderboard import ORDER_KEYS, health_columns, rank, rating_columns
from sueca.arena.ratings import (
    DEFAULT_ELO_INITIAL,
    DEFAULT_ELO_K,
    Ratings,
    entry_key,
    load,
    load_checkpoint,
    load_matchups,
    rated,
    standings,
)
from sueca.arena.record import Fit
from sueca.arena.record import fit as fit_record
from sueca.arena.records import BotHealth, ResultEntry
from sueca.arena.store import DONE, FAILED, Store, text
from sueca.engine.game import ABORTED, FAULT_ENDS, NORMAL

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


class NotFound(LookupError):
    """An unknown bot, match or tournament; the message names it."""


class BadQuery(ValueError):
    """A bad query parameter; the message quotes it."""


class _BotStats:
    __slots__ = ("matches", "won", "drawn", "lost", "last_seen", "recent", "versus")

    def __init__(self) -> None:
        self.matches = 0
        self.won = self.drawn = self.lost = 0
        self.last_seen: float | None = None
        self.recent: list[str] = []   # recorded match ids, in log order
        self.versus: dict[str, list[int]] = {}  # opponent -> [won, drawn, lost] (matches)

    def as_dict(self) -> dict[str, Any]:
        return {"matches": self.matches, "won": self.won, "drawn": self.drawn, "lost": self.lost,
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
        self._rated: tuple[tuple[Any, ...], dict[str, dict[str, Any]], bool] | None = None
        self._stored_fit: tuple[str, Fit] | None = None  # the fit record() cached in Redis
        self._own_fit: tuple[str, Fit] | None = None  # this process's, when that one lagged
        self._fit_moved = 0.0  # monotonic time the newest fit known here last moved
        self._fit_lock = threading.Lock()  # one refit at a time, not one per waiting request
        self._fold_config: tuple[float, float] | None = None
        self._history: dict[str, list[tuple[float | None, float, float, float]]] = {}
        self._fold_ratings = Ratings()
        self._health: tuple[tuple[str | None, float], dict[str, BotHealth]] | None = None
        self._sessions: dict[str, tuple[float, dict[str, int] | None]] = {}

    # -- the fold over the results log -----------------------------------------------------
    def refresh(self) -> None:
        with self._lock:
            config = self._config()
            trim = self.store.trimmed_through()
            # first use, ratings rebuilt with another K, or the log trimmed by retention (the
            # pages say they count the log after the trim: so they do, in every process)
            if self._fold_config != config or self._trim != trim:
                self._reset(config)
                self._trim = trim
            for eid, res in self.store.results(after=self._cursor):
                self._cursor = eid
                self._fold(res)

    def _config(self) -> tuple[float, float]:
        """(elo_k, elo_initial) as the league stored them, read only (defaults if unset)."""
        k, initial = self.store.r.hmget(self.store.keys.ratings_config(), ["elo_k", "elo_initial"])
        return (DEFAULT_ELO_K if k is None else float(text(k)),
                DEFAULT_ELO_INITIAL if initial is None else float(text(initial)))

    def _reset(self, config: tuple[float, float]) -> None:
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
        # the league's own rating fold, in log order: each bot's rating after each rated game
        fold = self._fold_ratings
        fold.apply(res)
        for bot in fold.dirty:
            r = fold.bots[bot]
            self._history.setdefault(bot, []).append(
                (float(when) if isinstance(when, int | float) else None, r.elo, r.mu, r.sigma))
        fold.dirty.clear()

    # -- leaderboard -----------------------------------------------------------------------
    def leaderboard(self, sort: str = "rating") -> list[dict[str, Any]]:
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
        rated = self._ratings()
        health = self._health_of(list(rated))
        rows = [{**r, **_log_columns(self._bots.get(r["bot"]) or _BotStats()),
                 **health_columns(health[r["bot"]])} for r in rated.values()]
        if sort != "rating":
            rows.sort(key=SORTS[sort])
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

    def _ratings(self) -> dict[str, dict[str, Any]]:
        """Rated registered bots by name (best rating of record first, with ``rank``), read
        again only when the ratings may have moved: a new results-log entry folded (the ratings
        cursor), a new rating of record cached, a bot registered or removed, a rebuild with
        another K. One round trip when nothing did."""
        self.refresh()
        k = self.store.keys
        pipe = self.store.r.pipeline(transaction=False)
        pipe.get(k.ratings_cursor())
        pipe.hget(k.ratings_record(), "cursor")
        pipe.scard(k.bots())
        pipe.hget(k.ratings_config(), "elo_k")
        stamp = tuple(text(x) for x in pipe.execute())
        cached = self._rated
        if cached is not None and cached[0] == stamp and (
                cached[2] or time.monotonic() - self._fit_moved < RECORD_TTL):
            return cached[1]
        with self._fit_lock:
            of_record, current = self._record(stamp[0] or "", stamp[1])
        registered = set(BotRegistry(self.store.r, k).names())
        rows = rank(rating_columns(bot, of_record, r) for bot, r in load(self.store).items()
                    if bot in registered)
        by_bot = {r["bot"]: r for r in rows}
        self._rated = (stamp, by_bot, current)
        return by_bot

    def _record(self, cursor: str, stored: str | None) -> tuple[Fit, bool]:
        """The rating of record for the results log up to ``cursor`` (the live ratings'), and
        whether it is that current.

        The fit :func:`sueca.arena.ratings.record` cached in Redis (the scheduler and the
        exporter refresh it; ``stored`` is its cursor) when it is current; else this process's
        own, fitted from the stored matchup counts — but only once the newest fit known here
        has not moved for :data:`RECORD_TTL` seconds: a refit costs a fraction of a second
        with a thousand bots, so a busy league's pages show a fit up to that much behind
        rather than refit per view. Nothing is written: the pages are read-only.
        """
        initial = self._config()[1]
        if stored is not None and (self._stored_fit is None or self._stored_fit[0] != stored):
            raw = self.store.r.hget(self.store.keys.ratings_record(), "fit")
            got = None if raw is None else Fit.from_dict(json.loads(raw))
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

    def trimmed(self) -> dict[str, Any] | None:
        """Where retention trimmed the results log (``through`` entry id, ``results`` it held),
        or None: the counts, history and head-to-head folded here cover only what follows."""
        raw = self.store.r.hmget(self.store.keys.ratings_checkpoint(), ["cursor", "results"])
        if raw[0] is None:
            return None
        return {"through": text(raw[0]), "results": int(text(raw[1]) or 0)}

    # -- bots --------------------------------------------------------------------------------
    def bot(self, name: str, recent: int = 20) -> dict[str, Any]:
        self.refresh()
        registry = BotRegistry(self.store.r, self.store.keys)
        stats = self._bots.get(name)
        if not registry.exists(name) and stats is None:
            raise NotFound(f"no bot named {name!r}")
        row = self._ratings().get(name)
        rating = None if row is None else {k: v for k, v in row.items() if k not in ("bot", "rank")}
        stats = stats or _BotStats()
        h2h = [{"opponent": opp, "won": w, "drawn": d, "lost": lost}
               for opp, (w, d, lost) in sorted(stats.versus.items())]
        health = self.store.bot_stats([name])[name]
        return {"bot": name, "registered": registry.exists(name),
                "rating": rating, "rank": None if row is None else row["rank"], **stats.as_dict(),
                **health_columns(health), "moves": health["moves"], "turns": health["turns"],
                "max_ms": health["max_ms"],
                "connected": self._connected(name),
                "history": [{"time": t, "elo": e, "mu": mu, "sigma": sg}
                            for t, e, mu, sg in self._history.get(name, [])[-HISTORY:]],
                "head_to_head": h2h, "trimmed": self.trimmed(),
                "recent_matches": self.match_rows(list(reversed(stats.recent[-recent:])))}

    def _connected(self, name: str) -> list[dict[str, Any]]:
        """Referee replicas the bot is connected to now, with its free seats there (from the
        replicas' heartbeats: the same data the ladder schedules by) and its sessions there
        (the replica's ListBots; None when it did not answer)."""
        s = self.store
        replicas = s.referees()
        pipe = s.r.pipeline(transaction=False)
        for addr in replicas:
            pipe.hget(s.keys.referee_bots(addr), name)
        return [{"referee": addr, "free": int(text(free)),
                 "sessions": (self._bots_on(addr) or {}).get(name)}
                for addr, free in zip(replicas, pipe.execute()) if free is not None]

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
    def matches(self, page: Any = 1, per: Any = 50, tournament: str | None = None,
                bot: str | None = None, end: str | None = None) -> dict[str, Any]:
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
                tour = self._tournament_of(ids)
                ids = [m for m, t in zip(ids, tour) if t == tournament]
            total = len(ids)
            chosen = list(reversed(ids))[start:start + per]
        elif tournament is not None and tournament != "ladder":
            total = int(s.r.llen(s.keys.tournament_matches(tournament)))
            chosen = [text(m) for m in s.r.lrange(s.keys.tournament_matches(tournament),
                                                  start, start + per - 1)]
        else:
            total = int(s.r.zcard(s.keys.matches()))
            chosen = [text(m) for m in s.r.zrevrange(s.keys.matches(), start, start + per - 1)]
            if tournament == "ladder":  # ladder matches are in no tournament list: filter here
                tour = self._tournament_of(chosen)
                chosen = [m for m, t in zip(chosen, tour) if t == "ladder"]
        return {"page": page, "per": per, "total": total,
                "pages": max(1, -(-total // per)), "matches": self.match_rows(chosen)}

    def _tournament_of(self, ids: list[str]) -> list[str | None]:
        pipe = self.store.r.pipeline(transaction=False)
        for mid in ids:
            pipe.hget(self.store.keys.match(mid), "tournament")
        return [text(t) for t in pipe.execute()]

    def match_rows(self, ids: list[str]) -> list[dict[str, Any]]:
        """Summary rows of matches (as ``sueca-arena matches --json`` gives them)."""
        s = self.store
        pipe = s.r.pipeline(transaction=False)
        for mid in ids:
            pipe.hgetall(s.keys.match(mid))
        raws = pipe.execute()
        done = [mid for mid, raw in zip(ids, raws) if raw and text(raw.get(b"status")) == DONE]
        results = dict(zip(done, self._results(done)))
        out = []
        for mid, raw in zip(ids, raws):
            if not raw:
                continue
            m = {text(k): text(v) for k, v in raw.items()}
            spec = json.loads(m.get("spec") or "{}")
            res = results.get(mid) or {}
            out.append({"id": mid, "status": m.get("status"), "seats": spec.get("bots"),
                        "tournament": m.get("tournament", ""),
                        "attempts": int(m.get("attempts") or 0),
                        "end": res.get("end"), "winner": res.get("winner"),
                        "game_points": res.get("game_points"), "fault_bot": res.get("fault_bot"),
                        "referee": res.get("referee") or m.get("referee"),
                        "error": m.get("error") or None, "time": res.get("time")})
        return out

    def _results(self, mids: list[str]) -> list[ResultEntry | None]:
        s = self.store
        pipe = s.r.pipeline(transaction=False)
        for mid in mids:
            pipe.get(s.keys.recorded(mid))
        entries = [text(e) for e in pipe.execute()]
        pipe = s.r.pipeline(transaction=False)
        for e in entries:
            if e is not None:
                pipe.xrange(s.keys.results(), e, e)
        rows = iter(pipe.execute())
        out: list[ResultEntry | None] = []
        for e in entries:
            got = next(rows) if e is not None else None
            out.append(json.loads(got[0][1][b"data"]) if got else None)
        return out

    def match(self, mid: str) -> dict[str, Any]:
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
        spec = dict(m["spec"])
        if hidden:  # the seed deals the decks: of this match, and of its twin
            spec.pop("seed", None)
            if result is not None:
                result = {k: v for k, v in result.items() if k != "seed"}
        m = {**m, "spec": spec}
        replay = None if hidden else self.store.replay(mid)
        return {"match": m, "result": result, "replay": replay, "hidden": hidden}

    def live(self, mid: str) -> dict[str, Any]:
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

    def _twin_unfinished(self, m: Mapping[str, Any]) -> bool:
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
            pipe = s.r.pipeline(transaction=False)
            for x in candidates:
                pipe.hmget(s.keys.match(x), ["pair", "status"])
            twins = [text(st) for p, st in pipe.execute() if text(p) == pair]
            if twins:  # a failed twin counts as unfinished: a re-run plays it on the same seed
                return any(st != DONE for st in twins)
        return False

    # -- tournaments -------------------------------------------------------------------------
    def tournaments(self, limit: int = 50) -> list[dict[str, Any]]:
        out = []
        for tid in self.store.tournament_ids(limit):
            t = self.store.tournament(tid) or {}
            out.append({"id": tid, "status": t.get("status"), "total": t.get("total"),
                        "bots": (t.get("spec") or {}).get("bots")})
        return out

    def tournament(self, tid: str) -> dict[str, Any]:
        """Spec (no secret), progress, standings (as ``tournament --json``) and the cross
        table: ``cross[a][b]`` = [won, drawn, lost] of a's matches against b."""
        t = self.store.tournament(tid)
        if t is None:
            raise NotFound(f"no tournament {tid!r}")
        results = self.store.tournament_results(tid)
        raw_k = self.store.r.hget(self.store.keys.ratings_config(), "elo_k")
        elo_k = float(text(raw_k)) if raw_k is not None else DEFAULT_ELO_K
        spec = {k: v for k, v in (t.get("spec") or {}).items() if k != "secret"}
        bots = [str(b) for b in spec.get("bots") or ()]
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
                "standings": standings(results, elo_k), "bots": bots, "cross": cross}


def _log_columns(st: _BotStats) -> dict[str, Any]:
    """The leaderboard's counts from the log fold: ``logged`` rather than ``matches``, which
    in the row (as in the CLI's) is the rated matches the rating of record rests on."""
    d = st.as_dict()
    d["logged"] = d.pop("matches")
    return d


#: ``?sort=`` of the leaderboard: the CLI's orders (the rating of record first), and more
SORTS: dict[str, Any] = {
    **ORDER_KEYS,
    "games": lambda r: (-r["games"], r["bot"]),
    "bot": lambda r: r["bot"],
}


def check_page(page: Any, per: Any) -> tuple[int, int]:
    try:
        p, n = int(page), int(per)
    except (TypeError, ValueError):
        raise BadQuery(f"bad page {page!r} or per {per!r}: whole numbers") from None
    if not 1 <= p <= MAX_PAGE:
        raise BadQuery(f"bad page {page!r}: 1 to {MAX_PAGE}")
    if not 1 <= n <= MAX_PAGE_SIZE:
        raise BadQuery(f"bad per {per!r}: 1 to {MAX_PAGE_SIZE}")
    return p, n


__all__ = ["LeagueView", "NotFound", "BadQuery", "SORTS", "MATCH_ENDS", "check_page",
           "MAX_PAGE_SIZE"]
