"""The league's records as TypedDicts: what it writes to Redis and reads back (a results-log
entry, a match, a tournament and its progress), a seat's stats in an entry, a bot's health and
a leaderboard row. Their producers and readers (:mod:`sueca.arena.store`, :mod:`.match_job`,
:mod:`.botstats`, :mod:`.leaderboard`, :mod:`.tournaments`) are checked against them by mypy
(``make check``), and ``tests/arena/test_records.py`` checks real records' keys against them.

The results log keeps entries for good (ratings are rebuilt from it), so a key added later is
``NotRequired``: entries written before it lack it, and readers take it with ``.get``.

No ``from __future__ import annotations`` here, on purpose: on Python 3.11 a TypedDict whose
annotations are strings counts its ``NotRequired`` keys as required (``__required_keys__``).
"""

from enum import StrEnum
from typing import Any, NotRequired, TypedDict

from sueca.codec import ResultDict, SpecDict

__all__ = ["MatchStatus", "NoteKind", "ResultEntry", "SeatStats", "MatchRecord",
           "TournamentSpec", "ScheduledMatch", "TournamentRecord", "Progress", "BotHealth",
           "LiveColumns", "RatingColumns", "HealthColumns", "LeaderboardRow", "MatchRow",
           "Timing", "Outcome", "JobStatus", "JobResult", "SpecDict", "CompetitionState",
           "NEXT_STATE", "CompetitionSpec", "FinalSpec", "DivisionSpec", "FairPlaySpec",
           "Transition", "Entry", "DivisionMove", "DivisionChange", "CompetitionRecord",
           "VersionInfo"]


class MatchStatus(StrEnum):
    """A league match's ``status`` field in Redis (the value is what is stored)."""

    PENDING = "pending"  # stored, not yet handed to a worker
    QUEUED = "queued"    # a task for it is on the Celery queue
    RUNNING = "running"  # a referee is playing it
    DONE = "done"        # its result is recorded (exactly once)
    FAILED = "failed"    # given up for a reason that is not a bot's fault (see ``error``)


class NoteKind(StrEnum):
    """What a match's ``error`` note is (its ``error_kind`` field in Redis)."""

    RETRY = "retry"        # an attempt's transient error: the match is tried again
    REQUEUED = "requeued"  # the recovery re-queued it: its task was lost, nothing went wrong
    FAILED = "failed"      # why it failed for good


class Timing(TypedDict, total=False):
    """Seconds an attempt spent: placing the match on a replica, playing it, recording it and
    folding the live ratings."""

    place: float
    run: float
    record: float
    ratings: float


class Outcome(ResultDict):
    """One match played (:func:`sueca.arena.match_job.run_match`): the referee's result as the
    control client types it, and who played it how."""

    referee: str  # the replica's address, or "local" (the in-process runner)
    replicas: NotRequired[int]  # replicas known when it was placed
    timing: NotRequired[Timing]
    turn_times: NotRequired[dict[int, list[int]] | None]  # by seat, microseconds (referee only)


class JobStatus(StrEnum):
    """What one run of a match's task did (:func:`sueca.arena.match_job.play_and_record`)."""

    RECORDED = "recorded"    # played and recorded
    DUPLICATE = "duplicate"  # played, but another attempt recorded it first
    SKIPPED = "skipped"      # recorded before this run started
    FAILED = "failed"        # given up (the task's: a permanent error or too many attempts)


class JobResult(TypedDict):
    """A match task's return value."""

    status: JobStatus
    match_id: str
    entry: NotRequired[str]  # the results-log entry id (recorded, duplicate)
    end: NotRequired[str]
    attempt: NotRequired[int]
    referee: NotRequired[str]
    timing: NotRequired[Timing]
    error: NotRequired[str]  # why it failed


class SeatStats(TypedDict):
    """One seat's numbers in a results-log entry's ``stats``
    (:func:`sueca.arena.botstats.seat_stats`): a fault count only when not 0, the latency keys
    only when the referee sent turn times."""

    moves: int
    renuncias: NotRequired[int]
    timeouts: NotRequired[int]
    disconnects: NotRequired[int]
    bot_errors: NotRequired[int]
    turns: NotRequired[int]
    p50_ms: NotRequired[float]
    p99_ms: NotRequired[float]
    max_ms: NotRequired[float]
    hist: NotRequired[list[int]]  # turns per latency bucket (botstats.BOUNDS_US), trailing zeros cut


class ResultEntry(TypedDict):
    """One entry of the results log: :func:`sueca.arena.match_job.outcome_to_result` makes it,
    :meth:`sueca.arena.store.Store.record_result` appends it once,
    :meth:`~sueca.arena.store.Store.results` reads it back; keys added later are NotRequired."""

    match_id: str
    tournament: str  # "" for a ladder match
    pair: str  # the duplicate pair's id, "" for a single match
    seats: list[str]  # bot names by seat; seats 0 and 2 are team 0
    seed: NotRequired[str | None]  # the seed played (a re-played half has its own); added later
    end: str  # an End of sueca.engine.game
    winner: int | None  # a team, or None (no winner)
    game_points: list[int]
    fault_seat: int | None
    fault_bot: str | None
    fault_detail: NotRequired[str | None]  # a bot_error: the bot's reason (codec.fault_detail)
    deals: int
    referee: str
    replicas: int
    variant: dict[str, Any]
    time: float  # unix seconds the result was made
    rated: bool
    stats: NotRequired[list[SeatStats]]  # by seat; older entries: from the replay
    seconds: NotRequired[float]  # the attempt's wall time (the worker adds it)
    competition: NotRequired[str]  # the competition it was rated in; absent or "": none
    versions: NotRequired[dict[str, int]]  # bot -> the version that played; absent: 1 each


class MatchRecord(TypedDict):
    """A league match as :meth:`sueca.arena.store.Store.match` and ``start_attempt`` read its
    hash: strings as stored, but ``spec`` parsed, ``status`` a :class:`MatchStatus` and
    ``attempts`` an int. Fields that only some
    states write (an attempt's referee and owner, the result's entry id) are NotRequired."""

    id: str
    spec: SpecDict  # the scheduled spec
    tournament: str
    pair: str
    status: MatchStatus
    attempts: int
    updated: str  # unix seconds, as text
    competition: NotRequired[str]  # "" or absent: no competition (a tournament, old data)
    versions: NotRequired[dict[str, int]]  # bot -> version scheduled to play; absent: 1 each
    referee: NotRequired[str]  # set by an attempt
    owner: NotRequired[str]
    task: NotRequired[str]
    error: NotRequired[str]  # why it failed or was re-queued; "" once queued or recorded
    error_kind: NotRequired[NoteKind]  # what ``error`` is
    result: NotRequired[str]  # the results-log entry id, once recorded
    end: NotRequired[str]


class TournamentSpec(TypedDict):
    """What a tournament is (:func:`sueca.arena.schedule.tournament_spec`), stored as its
    ``spec``: its schedule is a pure function of it, the ``secret`` fixing the seeds."""

    kind: str  # "round-robin", "gauntlet", "swiss", "knockout", "double-elimination" (FORMATS)
    bots: list[str]
    matches_per_pair: int
    duplicate: bool
    variant: dict[str, Any]  # a Variant's to_dict()
    limits: dict[str, int]  # the referee's per-match limits set for it (move_ms, ...)
    secret: str
    challenger: NotRequired[str]  # a gauntlet's: the bot that meets every other
    rounds: NotRequired[int]  # a Swiss tournament's
    best_of: NotRequired[int]  # a bracket's: duplicate pairs per tie (sueca.arena.brackets)
    competition: NotRequired[str]  # a competition's final: the competition its matches are in
    versions: NotRequired[dict[str, int]]  # a competition's final: the frozen versions playing


class ScheduledMatch(TypedDict):
    """One match of a tournament's schedule (:func:`sueca.arena.schedule.round_robin`)."""

    id: str
    pair: str  # the duplicate pair's id, "" for a single match
    spec: SpecDict  # the referee's MatchSpec


class TournamentRecord(TypedDict):
    """A tournament as :meth:`sueca.arena.store.Store.tournament` reads its hash (``total`` an int)."""

    id: str
    spec: TournamentSpec
    total: int
    status: str
    created: str
    updated: NotRequired[str]


class Progress(TypedDict):
    """A tournament's matches by status (:meth:`sueca.arena.store.Store.progress`): a key per
    MatchStatus value, and ``total``."""

    pending: int
    queued: int
    running: int
    done: int
    failed: int
    total: int


class BotHealth(TypedDict):
    """A bot's totals as shown (:func:`sueca.arena.botstats.summary`); the latency keys None
    without timed turns."""

    games: int
    moves: int
    faults: dict[str, int]  # by FAULT_KINDS
    turns: int
    p50_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    last: float | None  # unix seconds of its last recorded match


class LiveColumns(TypedDict):
    """A bot's live columns (:meth:`sueca.arena.ratings.live.Rating.as_dict`): incremental Elo
    and OpenSkill, where a duplicate pair counts once in ``games``."""

    elo: float
    elo_pm: float | None
    mu: float
    mu_pm: float
    sigma: float
    ordinal: float
    games: int
    score: float


class RatingColumns(LiveColumns):
    """A bot's rating of record (:mod:`sueca.arena.ratings.fit`) and the live columns."""

    rating: float  # the rating of record
    rating_pm: float | None  # its 95% interval half-width (None: never fitted)
    matches: int
    provisional: bool


class HealthColumns(TypedDict):
    """A bot's health as the leaderboard shows it (from :func:`sueca.arena.botstats.summary`)."""

    faults: dict[str, int]
    p50_ms: float | None
    p99_ms: float | None


class LeaderboardRow(RatingColumns, HealthColumns):
    """One bot's row (:func:`sueca.arena.leaderboard.leaderboard`): the CLI's ``--json``, the
    exporter and the web show it."""

    rank: int
    bot: str


class MatchRow(TypedDict):
    """One match as ``sueca-arena matches`` and the web list it: its record, and its result
    once done."""

    id: str
    status: MatchStatus
    seats: list[str] | None
    tournament: str
    attempts: int
    end: str | None
    winner: int | None
    game_points: list[int] | None
    fault_bot: str | None
    referee: str | None
    error: str | None


# -- competitions and bot versions (sueca.arena.competitions, sueca.arena.store.competitions) --
class CompetitionState(StrEnum):
    """Where a competition is in its season (its ``state`` field in Redis)."""

    DRAFT = "draft"    # created: rules and times can be read, nothing is played
    OPEN = "open"      # entries and new versions accepted; its ladder plays and rates
    FROZEN = "frozen"  # no new entries or versions; the ladder keeps playing to settle ratings
    FINAL = "final"    # the final event runs
    CLOSED = "closed"  # results fixed and kept; the seed key is revealed


#: The one move out of each state (a season only goes forward, one step at a time).
NEXT_STATE = {CompetitionState.DRAFT: CompetitionState.OPEN,
              CompetitionState.OPEN: CompetitionState.FROZEN,
              CompetitionState.FROZEN: CompetitionState.FINAL,
              CompetitionState.FINAL: CompetitionState.CLOSED}


class FinalSpec(TypedDict):
    """A competition's final event."""

    format: str  # "knockout", "double-elimination", "round-robin" or "none"
    top: int | None  # how many entrants go to the final, by rating of record (None: all)
    best_of: int  # duplicate pairs per tie


class DivisionSpec(TypedDict):
    """How a competition splits its entrants by rating of record (one of size, count)."""

    size: int | None  # bots per division
    count: int | None  # number of divisions
    promote: int  # bots moved between adjacent divisions each cycle
    every_s: float  # the cycle's length in seconds
    placement: int  # rated placement matches a newcomer plays before it gets a division


class FairPlaySpec(TypedDict):
    """When a bot is suspended, and how many challenge matches an owner may ask for."""

    faults: int  # suspended after this many faults ...
    of_last: int  # ... in its last this many matches
    challenges_per_hour: int


class CompetitionSpec(TypedDict):
    """A competition's rules and times, fixed at creation (stored as JSON)."""

    name: str
    variant: dict[str, Any]  # a Variant's to_dict()
    limits: dict[str, int | None]  # move_ms, bank_ms, grace_ms (None: the referee's default)
    opens_at: float | None  # unix times the scheduler moves it; None: by command only
    freezes_at: float | None
    final_at: float | None
    closes_at: float | None
    final: FinalSpec
    divisions: DivisionSpec | None
    hosted_only: bool  # entries only by a hosted submission
    fair_play: FairPlaySpec


class Transition(TypedDict):
    """One move of a competition's state, as its log keeps it."""

    from_state: str
    to: str
    at: float  # unix seconds
    by: str  # who asked: a user name, or "scheduler"


class Entry(TypedDict):
    """A bot entered in a competition."""

    bot: str
    entered: float
    by: str
    version: int | None  # the version that plays there: set at the freeze (None: current)
    division: int | None  # 0 is the top division; None: not placed (or no divisions)
    placed: int  # placement matches played


class DivisionMove(TypedDict):
    """A bot given a division, or moved to another one."""

    bot: str
    from_division: int | None  # None: it had none (the first split, a placed newcomer)
    to: int


class DivisionChange(TypedDict):
    """One change of a competition's divisions, as its divisions log keeps it."""

    kind: str  # "split" (the first), "placed" (a newcomer after its placement), "cycle"
    at: float  # unix seconds
    by: str  # "scheduler"
    moves: list[DivisionMove]


class CompetitionRecord(TypedDict):
    """A competition as :meth:`sueca.arena.store.competitions.Competitions.get` reads it."""

    spec: CompetitionSpec
    state: CompetitionState
    created: float
    seed_hash: str  # sha256 hex of the seed key, public from the start
    seed_key: str | None  # the seed key itself: only once closed
    log: list[Transition]


class VersionInfo(TypedDict):
    """One version of a bot (:mod:`sueca.arena.store.versions`)."""

    version: int
    created: float
    by: str
    note: str
    submission: str | None  # a hosted submission's content hash; None for a connected bot
