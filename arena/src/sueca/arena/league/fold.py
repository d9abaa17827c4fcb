"""The read model's fold over the results log: per-bot counts the ratings do not keep (wins,
draws, losses, last seen, head to head, ends, recent faults, matches per version), the by-end
index, and each bot's live rating history from the league's own rating fold, in log order.

Kept in the process and advanced from its last entry on each query, so that a page or a
command costs a few Redis round trips however long the history is. After a trim by retention
the fold starts at the ratings checkpoint, so the history starts at the right ratings.
"""

from __future__ import annotations

import threading
from collections import deque

from sueca.arena.league.rows import FaultLine, LogColumns, fault_line
from sueca.arena.ratings.live import Ratings
from sueca.arena.records import ResultEntry
from sueca.arena.store import Store
from sueca.arena.store.ratings import RatingsConfig, load_checkpoint, stored_config

__all__ = ["BotFold", "LogFold", "FAULT_LINES"]

FAULT_LINES = 20  # fault lines a bot page shows (its latest faulted matches)


class BotFold:
    """One bot's counts in the fold."""

    __slots__ = ("matches", "won", "drawn", "lost", "last_seen", "recent", "versus", "ends",
                 "fault_ends", "fault_lines", "paired", "by_version")

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
        self.by_version: dict[int, int] = {}  # matches by the version of it that played

    def log_columns(self) -> LogColumns:
        """The leaderboard's counts from the log fold: ``logged`` rather than ``matches``,
        which in the row is the rated matches the rating of record rests on."""
        return {"logged": self.matches, "won": self.won, "drawn": self.drawn, "lost": self.lost,
                "last_seen": self.last_seen}


class LogFold:
    """The fold itself; :meth:`refresh` advances it (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cursor: str | None = None
        self._trim: str | None = None
        self._config: RatingsConfig | None = None
        self.bots: dict[str, BotFold] = {}
        self.by_end: dict[str, list[str]] = {}
        self.history: dict[str, list[tuple[float | None, float, float, float]]] = {}
        self._ratings = Ratings()

    def bot(self, name: str) -> BotFold:
        """``name``'s counts (empty ones for a bot the log does not name)."""
        return self.bots.get(name) or BotFold()

    def refresh(self, store: Store) -> None:
        """Fold the results log's entries since the last call."""
        with self._lock:
            config = stored_config(store)
            trim = store.trimmed_through()
            # first use, ratings rebuilt with another K, or the log trimmed by retention (the
            # pages say they count the log after the trim: so they do, in every process)
            if self._config != config or self._trim != trim:
                self._reset(store, config)
                self._trim = trim
            for eid, res in store.results(after=self.cursor):
                self.cursor = eid
                self._fold(res)

    def _reset(self, store: Store, config: RatingsConfig) -> None:
        self._config = config
        self.cursor = None
        self.bots = {}
        self.by_end = {}
        self.history = {}
        self._ratings = Ratings(*config)
        cp = load_checkpoint(store)
        if cp is not None and (cp["elo_k"], cp["elo_initial"]) == config:
            self._ratings = Ratings.from_state(cp["state"], *config)
            self.cursor = cp["cursor"]

    def _fold(self, res: ResultEntry) -> None:
        mid = str(res.get("match_id", ""))
        seats = [str(s) for s in res.get("seats") or ()]
        end = str(res.get("end") or "")
        winner = res.get("winner")
        self.by_end.setdefault(end, []).append(mid)
        when = res.get("time")
        versions = res.get("versions") or {}
        for team in (0, 1):
            mine = {seats[s] for s in (team, team + 2) if s < len(seats)}
            theirs = {seats[s] for s in (1 - team, 3 - team) if s < len(seats)}
            for bot in mine - theirs:
                st = self.bots.setdefault(bot, BotFold())
                st.matches += 1
                st.recent.append(mid)
                v = int(versions.get(bot, 1))
                st.by_version[v] = st.by_version.get(v, 0) + 1
                st.ends[end] = st.ends.get(end, 0) + 1
                if res.get("fault_bot") == bot:
                    st.fault_ends[end] = st.fault_ends.get(end, 0) + 1
                if isinstance(when, int | float):
                    st.last_seen = max(st.last_seen or 0.0, float(when))
                result = 1 if winner is None else 0 if winner == team else 2
                if winner is None:
                    st.drawn += 1
                elif winner == team:
                    st.won += 1
                else:
                    st.lost += 1
                for opp in theirs - mine:
                    st.versus.setdefault(opp, [0, 0, 0])[result] += 1
        for bot in set(seats):
            line = fault_line(res, bot, seats)
            if line is not None:
                st = self.bots.setdefault(bot, BotFold())
                st.fault_lines.append(line)
                if line["detail"] and res.get("pair"):
                    st.paired = {x["match"] for x in st.fault_lines} & (st.paired | {mid})
        # the league's own rating fold, in log order: each bot's rating after each rated game
        fold = self._ratings
        fold.apply(res)
        for bot in fold.dirty:
            r = fold.bots[bot]
            self.history.setdefault(bot, []).append(
                (float(when) if isinstance(when, int | float) else None, r.elo, r.mu, r.sigma))
        fold.dirty.clear()
