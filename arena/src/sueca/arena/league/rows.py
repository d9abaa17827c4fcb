"""The shapes the league's read model answers with, its errors and its bounds, and the pure
functions that build a row from a record (no Redis here)."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from sueca.arena.leaderboard import BoardRow
from sueca.arena.league.limits import MAX_DETAIL, MAX_PAGE, MAX_PAGE_SIZE
from sueca.arena.ratings.fit import VersionRating
from sueca.arena.ratings.standings import StandingsRow
from sueca.arena.records import MatchRecord, MatchRow, MatchStatus, Progress, RatingColumns, ResultEntry
from sueca.arena.store.ratings import TrimPoint
from sueca.arena.tournaments import FormatView
from sueca.engine.game import End
from sueca.engine.replay import ReplayRecord

__all__ = ["LogColumns", "LeagueRow",
           "HistoryPoint", "HeadToHead", "VersionRow", "Connection", "ListedMatch", "FaultLine", "BotPage",
           "MatchesPage", "MatchDetail", "TournamentSummary", "TournamentPage", "NotFound",
           "BadQuery", "check_page", "outcome", "match_row", "fault_line"]

#: seat-stats fields of each fault kind (records.SeatStats)
_FAULT_COUNTS = ((End.RENUNCIA, "renuncias"), (End.TIMEOUT, "timeouts"),
                 (End.DISCONNECT, "disconnects"))


class LogColumns(TypedDict):
    """A bot's counts from this process's fold over the results log (after any trim)."""

    logged: int
    won: int
    drawn: int
    lost: int
    last_seen: float | None


class LeagueRow(BoardRow, LogColumns):
    """A leaderboard row with the log's counts (the web's leaderboard)."""


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


class ListedMatch(MatchRow):
    """A match as a list shows it: its row, when its result was made, the version of each bot
    that played it (``versions``, bot -> version; a bot it does not name played version 1);
    on a bot's page (and with a bot filter) ``outcome`` is the match from that bot's side:
    ``won``, ``lost``, ``drawn``, or None (not finished, or the bot sat on both teams)."""

    time: float | None
    versions: dict[str, int]
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


class VersionRow(VersionRating):
    """One of a bot's versions on its page: its rating of record (of the arena's whole log),
    when and by whom it was started, the owner's note, the hosted submission it runs (None: a
    connected bot), and ``logged``, its matches in the results log (after any trim)."""

    created: float | None
    by: str
    note: str
    submission: str | None
    logged: int


class BotPage(TypedDict):
    """A bot's page; ``version`` is its current version, ``versions`` every one, newest first,
    and ``rating`` the current version's."""

    bot: str
    registered: bool
    version: int
    versions: list[VersionRow]
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
    recent_matches: list[ListedMatch]
    ends: dict[str, int]
    fault_ends: dict[str, int]
    fault_lines: list[FaultLine]


class MatchesPage(TypedDict):
    page: int
    per: int
    total: int
    pages: int
    matches: list[ListedMatch]


class MatchDetail(TypedDict):
    """A match's page: ``hidden`` says why the seed, the replay and a bot's fault detail are
    left out (None: shown)."""

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


def check_page(page: object, per: object) -> tuple[int, int]:
    """``page`` and ``per`` as whole numbers in range, else :class:`BadQuery` quoting them."""
    try:
        p, n = int(page), int(per)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise BadQuery(f"bad page {page!r} or per {per!r}: whole numbers") from None
    if not 1 <= p <= MAX_PAGE:
        raise BadQuery(f"bad page {page!r}: 1 to {MAX_PAGE}")
    if not 1 <= n <= MAX_PAGE_SIZE:
        raise BadQuery(f"bad per {per!r}: 1 to {MAX_PAGE_SIZE}")
    return p, n


def outcome(row: MatchRow, bot: str) -> str | None:
    """The match from ``bot``'s side: ``won``, ``lost`` or ``drawn``; None when it is not
    finished or ``bot`` sat on both teams (or on none)."""
    teams = {i & 1 for i, b in enumerate(row["seats"] or ()) if b == bot}
    if row["status"] != MatchStatus.DONE or len(teams) != 1 or row["end"] is None:
        return None
    if row["winner"] is None:
        return "drawn"
    return "won" if row["winner"] in teams else "lost"


def match_row(m: MatchRecord, res: ResultEntry | None) -> ListedMatch:
    """A match's list row from its record and, once recorded, its result."""
    bots = m["spec"].get("bots")
    return {"id": m["id"], "status": m["status"],
            "seats": None if bots is None else [str(b) for b in bots],
            "tournament": m.get("tournament", ""), "attempts": m["attempts"],
            "end": None if res is None else res.get("end"),
            "winner": None if res is None else res.get("winner"),
            "game_points": None if res is None else res.get("game_points"),
            "fault_bot": None if res is None else res.get("fault_bot"),
            "referee": (None if res is None else res.get("referee")) or m.get("referee"),
            "error": m.get("error") or None, "time": None if res is None else res.get("time"),
            "versions": dict((None if res is None else res.get("versions"))
                             or m.get("versions") or {})}


def fault_line(res: ResultEntry, bot: str, seats: list[str]) -> FaultLine | None:
    """What the referee held against ``bot`` in this result (its seats' fault counts, whether
    its fault ended the match, its report of the failure), or None: nothing."""
    stats = res.get("stats") or []
    counts = {str(kind): n for kind, field in _FAULT_COUNTS
              if (n := sum(int(st.get(field, 0) or 0)  # type: ignore[call-overload]
                           for i, st in enumerate(stats) if i < len(seats) and seats[i] == bot))}
    ended = res.get("fault_bot") == bot
    if not ended and not counts:
        return None
    detail = res.get("fault_detail") if ended else None
    return {"match": str(res.get("match_id", "")), "time": res.get("time"),
            "end": str(res.get("end") or ""), "ended": ended, "counts": counts,
            "detail": None if not detail else str(detail)[:MAX_DETAIL]}
