"""Tournaments: validate and store one, queue what is missing, wait for it, and report its
table. The league logic behind ``sueca-arena tournament`` (and the demo and the tournament
benchmark); it raises :class:`TournamentError` for a user's mistake.

Five formats (:data:`FORMATS`; who meets whom is :mod:`sueca.arena.pairing`'s and
:mod:`sueca.arena.brackets`'): a round robin and a gauntlet are scheduled whole when created; a
Swiss tournament one round at a time, round r + 1 paired from the recorded results of rounds
1..r once they are all recorded; a knockout or double-elimination bracket a tie at a time, each
tie's duplicate pairs as soon as its two bots are known. Every schedule is a function of the
stored spec and the stored results (:func:`format_schedule`), so re-running a tournament's id
rebuilds the same matches, and resuming a Swiss or bracket one pairs its rounds as the first run
did. :func:`advance` pairs and queues what such a tournament needs next.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, NotRequired, TypedDict, cast

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as ProgressBar

from sueca.arena import brackets
from sueca.arena.brackets import Bracket, BracketError, Game
from sueca.arena.pairing import PairingError, gauntlet_pairs, swiss_pairs, swiss_rounds_allowed
from sueca.arena.ratings.live import pair_outcome, rated, sides
from sueca.arena.ratings.standings import StandingsRow, standings
from sueca.arena.records import (
    MatchStatus,
    NoteKind,
    Progress,
    ResultEntry,
    ScheduledMatch,
    TournamentSpec,
)
from sueca.arena.schedule import (
    derive_seed,
    match_spec,
    round_robin,
    same_tournament,
    tournament_spec,
)
from sueca.arena.store import DONE, PENDING, TRANSIENT_REDIS_ERRORS, Store, TournamentConflict
from sueca.arena.store.ratings import load_config
from sueca.engine import Variant

if TYPE_CHECKING:
    from sueca.arena.recovery import Sweep


class FailedMatch(TypedDict):
    match_id: str
    error: str


class SwissRound(TypedDict):
    """One Swiss round as paired: ``pairs`` are [higher-ranked bot, other, matches the first
    won, matches the second won] (the wins so far while the round plays)."""

    round: int
    pairs: list[tuple[str, str, int, int]]
    bye: str | None
    recorded: bool  # every match of the round recorded


class SwissScore(TypedDict):
    bot: str
    score: float  # matches won, plus half a round's matches per bye
    byes: int
    opponents: list[str]  # in round order


class CrossCell(TypedDict):
    """How a bot fared against one opponent: scoring units (a match, or a duplicate pair once
    both halves are in) won, drawn and lost, as the standings count them."""

    opponent: str
    won: int
    drawn: int
    lost: int


class CrossRow(TypedDict):
    """A bot's row of the cross table: a cell per opponent it has met, in field order."""

    bot: str
    cells: list[CrossCell]


class TournamentReport(TypedDict):
    """A tournament's table and what became of its matches (``tournament --json``)."""

    tournament: str
    format: str  # one of FORMATS
    spec: dict[str, object]  # as stored, without its secret
    matches: int
    recorded: int
    archived: int  # recorded results retention trimmed from the log (not in the standings)
    failed: list[FailedMatch]
    standings: list[StandingsRow]
    cross: list[CrossRow]  # who beat whom, rows and cells in the standings' order
    rounds: NotRequired[list[SwissRound]]  # a Swiss tournament's rounds so far
    swiss: NotRequired[list[SwissScore]]  # a Swiss tournament's scores, best first
    bracket: NotRequired[Bracket]  # a knockout's or double elimination's bracket so far


FORMATS = ("round-robin", "gauntlet", "swiss", *brackets.FORMATS)
#: the formats paired from recorded results, a round (or a tie) at a time
STAGED = ("swiss", *brackets.FORMATS)


class TournamentError(ValueError):
    """A bad tournament request (unknown bot, bad variant or id) or one that cannot finish in
    time; the message quotes the bad value and says what to do."""


def new_tid() -> str:
    return time.strftime("t%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def new_spec(bots: Sequence[str], matches_per_pair: int, *, duplicate: bool = False,
             variant: Variant | None = None, limits: Mapping[str, int | None] | None = None,
             fmt: str = "round-robin", challenger: str | None = None,
             rounds: int | None = None, best_of: int | None = None) -> TournamentSpec:
    """A new tournament's spec (a fresh secret), or TournamentError quoting what is wrong.
    ``fmt`` is one of :data:`FORMATS`: a gauntlet needs its ``challenger`` (one of ``bots``),
    a Swiss tournament its number of ``rounds``; a knockout or double elimination seeds
    ``bots`` in their order and plays each tie as ``best_of`` duplicate pairs (default 1:
    ``matches_per_pair`` and ``duplicate`` follow from it); ``limits`` are the referee's clocks
    for its matches (``move_ms``, ``bank_ms``; None: the referee's defaults)."""
    if fmt in brackets.FORMATS:
        if best_of is not None and best_of < 1:
            raise TournamentError(f"bad --best-of {best_of}: a tie is at least 1 duplicate pair")
        matches_per_pair, duplicate = 2 * (best_of or 1), True
    elif best_of is not None:
        raise TournamentError(f"--best-of {best_of} is for a knockout or double-elimination "
                              "bracket: add --format knockout, or leave it out")
    try:
        spec = tournament_spec(bots, matches_per_pair, duplicate,
                               (variant or Variant()).to_dict(), limits=limits)
    except ValueError as err:
        raise TournamentError(str(err)) from None
    _shape(spec, fmt, challenger, rounds)
    if fmt in brackets.FORMATS:
        spec["best_of"] = best_of or 1
    return spec


def prepare_tournament(store: Store, spec: TournamentSpec | None, *,
                       tid: str | None = None) -> tuple[str, TournamentSpec]:
    """Validate and store a tournament (or find the one with that id); returns (id, spec).
    ``spec=None`` resumes the stored tournament ``tid`` from its stored spec, so that
    finishing an interrupted tournament needs its id only, not every option it was started
    with."""
    if spec is None:
        return _resume(store, tid)
    bots = spec["bots"]
    registry = store.bots
    unknown = [b for b in bots if not registry.exists(b)]
    if unknown:
        raise TournamentError(f"unknown bot(s) {', '.join(map(repr, unknown))}: register with "
                        f"`sueca-arena bots add NAME` (registered: "
                        f"{', '.join(registry.names()) or 'none'})")
    _require_connected(store, bots)
    tid = tid or new_tid()
    if not tid.replace("-", "").replace("_", "").replace(".", "").isalnum() or len(tid) > 80:
        raise TournamentError(f"bad tournament id {tid!r}: letters, digits, '-', '_', '.'; at most 80")
    try:
        with tournament_lock(store, tid):
            _, stored = store.create_tournament(tid, spec, schedule_of(store), same_tournament)
    except TournamentConflict as err:
        raise TournamentError(str(err)) from None
    return tid, stored


def _shape(spec: TournamentSpec, fmt: str, challenger: str | None, rounds: int | None) -> None:
    """Make ``spec`` (a round robin's) the format asked for, or raise TournamentError."""
    if fmt not in FORMATS:
        raise TournamentError(f"bad format {fmt[:40]!r}: one of {', '.join(FORMATS)}")
    if fmt != "gauntlet" and challenger is not None:
        raise TournamentError(f"--challenger {challenger[:80]!r} is for a gauntlet: add "
                              "--format gauntlet, or leave it out")
    if fmt != "swiss" and rounds is not None:
        raise TournamentError(f"--rounds {rounds} is for a Swiss tournament: add --format "
                              "swiss, or leave it out")
    spec["kind"] = fmt
    if fmt == "gauntlet":
        if challenger is None:
            raise TournamentError("a gauntlet needs its challenger: --challenger NAME, one of "
                                  f"the bots ({', '.join(spec['bots'])})")
        try:
            gauntlet_pairs(spec["bots"], challenger)
        except PairingError as err:
            raise TournamentError(str(err)) from None
        spec["challenger"] = challenger
    elif fmt == "swiss":
        most = swiss_rounds_allowed(len(spec["bots"]))
        if rounds is None or not 1 <= rounds <= most:
            raise TournamentError(
                f"bad --rounds {rounds}: a Swiss tournament of {len(spec['bots'])} bots plays "
                + ("1 round" if most == 1 else f"1 to {most} rounds")
                + " (at most half the field, so that no pair meets twice)")
        spec["rounds"] = rounds


def schedule_of(store: Store) -> Callable[[str, TournamentSpec], list[ScheduledMatch]]:
    """The tournament schedule for :meth:`Store.create_tournament`: :func:`format_schedule`
    with the tournament's recorded results read from ``store``."""
    def schedule(tid: str, spec: TournamentSpec) -> list[ScheduledMatch]:
        results = store.tournament_results(tid) if spec.get("kind") in STAGED else []
        return format_schedule(tid, spec, results)
    return schedule


def format_schedule(tid: str, spec: TournamentSpec,
                    results: Sequence[ResultEntry] = ()) -> list[ScheduledMatch]:
    """A tournament's matches so far, from its spec and (Swiss, brackets) its recorded
    results."""
    kind = spec.get("kind", "round-robin")
    if kind in brackets.FORMATS:
        return bracket_schedule(tid, spec, tournament_bracket(tid, spec, results))
    if kind == "gauntlet":
        return round_robin(tid, spec, gauntlet_pairs(spec["bots"], spec["challenger"]))
    if kind == "swiss":
        return swiss_schedule(tid, spec, results)[0]
    return round_robin(tid, spec)


def swiss_schedule(tid: str, spec: TournamentSpec, results: Sequence[ResultEntry]
                   ) -> tuple[list[ScheduledMatch], list[SwissRound], list[SwissScore]]:
    """A Swiss tournament's matches, rounds and scores so far: each round is paired
    (:func:`sueca.arena.pairing.swiss_pairs`) from the scores of the rounds before it, and
    only once every match of those is recorded. A bot's score is its matches won, plus half
    the round's matches for a bye."""
    bots = list(spec["bots"])
    k = int(spec["matches_per_pair"])
    winner_of = {r["match_id"]: (r["seats"][r["winner"]] if r["winner"] is not None else None)
                 for r in results}
    scores = dict.fromkeys(bots, 0.0)
    byes: dict[str, int] = dict.fromkeys(bots, 0)
    opponents: dict[str, list[str]] = {b: [] for b in bots}
    met: set[frozenset[str]] = set()
    matches: list[ScheduledMatch] = []
    rounds: list[SwissRound] = []
    for r in range(int(spec["rounds"])):
        pairs, bye = swiss_pairs(bots, scores, met, {b for b, n in byes.items() if n})
        scheduled = round_robin(tid, spec, pairs, first=len(matches), salt=(f"r{r + 1}",))
        matches += scheduled
        wins: dict[tuple[str, str], list[int]] = {p: [0, 0] for p in pairs}
        recorded = True
        for m in scheduled:
            if m["id"] not in winner_of:
                recorded = False
                continue
            won = winner_of[m["id"]]
            seats = m["spec"]["bots"]
            pair = (seats[0], seats[1]) if (seats[0], seats[1]) in wins else (seats[1], seats[0])
            if won is not None:
                wins[pair][pair.index(won)] += 1
        rounds.append({"round": r + 1, "bye": bye, "recorded": recorded,
                       "pairs": [(a, b, wins[(a, b)][0], wins[(a, b)][1]) for a, b in pairs]})
        for a, b in pairs:
            met.add(frozenset((a, b)))
            opponents[a].append(b)
            opponents[b].append(a)
            scores[a] += wins[(a, b)][0]
            scores[b] += wins[(a, b)][1]
        if bye is not None:
            byes[bye] += 1
            scores[bye] += k / 2 if recorded else 0  # scored with its round
        if not recorded:
            break
    place = {b: i for i, b in enumerate(bots)}
    table: list[SwissScore] = [
        {"bot": b, "score": scores[b], "byes": byes[b], "opponents": opponents[b]}
        for b in sorted(bots, key=lambda b: (-scores[b], place[b]))]
    return matches, rounds, table


def tournament_bracket(tid: str, spec: TournamentSpec,
                       results: Sequence[ResultEntry]) -> Bracket:
    """A knockout's or double elimination's bracket (:func:`sueca.arena.brackets.bracket`)
    from its spec and its recorded results: match ``{tid}-{key}`` is the bracket's match
    ``key``, its winner the bot of the winning team, its game points each bot's."""
    games: dict[str, Game] = {}
    for r in results:
        seats, team = r["seats"], r["winner"]
        games[r["match_id"].removeprefix(f"{tid}-")] = Game(
            seats[team] if team is not None else None,
            {seats[0]: r["game_points"][0], seats[1]: r["game_points"][1]})
    try:
        return brackets.bracket(spec["kind"], spec["bots"], int(spec.get("best_of", 1)), games)
    except BracketError as err:
        raise TournamentError(str(err)) from None


def bracket_schedule(tid: str, spec: TournamentSpec, b: Bracket) -> list[ScheduledMatch]:
    """The matches of bracket ``b`` so far: the two halves of a duplicate pair share a seed
    (from the secret, the tie and the pair) and a first dealer, the teams swapped."""
    out: list[ScheduledMatch] = []
    for m in brackets.schedule(b):
        mid = f"{tid}-{m.key}"
        x, y = m.seats
        out.append({"id": mid, "pair": "/".join([tid, m.tie, str(m.pair)]),
                    "spec": match_spec(mid, [x, y, x, y], seed=derive_seed(
                        spec["secret"], m.tie, m.pair), first_dealer=m.pair % 4,
                        variant=spec["variant"], limits=spec.get("limits") or {})})
    return out


class TournamentBusy(TournamentError):
    """Another caller held the tournament's lock for longer than it may."""


@contextlib.contextmanager
def tournament_lock(store: Store, tid: str, wait: float = 30.0) -> Iterator[None]:
    """Hold the tournament's lock (``lock:tournament:{id}``) while its schedule is rebuilt, so
    that two callers (a ``tournament run`` and the competitions' scheduler, or two runs) never
    write its match list from different results: the later one waits its turn, up to ``wait``
    seconds (TournamentBusy)."""
    name = f"tournament:{tid}"
    deadline = time.monotonic() + wait
    while (token := store.lock(name, ttl=wait)) is None:
        if time.monotonic() > deadline:
            raise TournamentBusy(f"tournament {tid!r}: its lock ({store.lock_key(name)}) is "
                                 f"held by another caller for over {wait:.0f}s")
        time.sleep(0.05)
    try:
        yield
    finally:
        store.unlock(name, token)


def advance(store: Store, tid: str, *, requeue_after: float = 900.0,
            mode: str | None = None) -> list[str]:
    """Pair what tournament ``tid`` needs next from its recorded results and queue it: the
    ids of the matches queued now (none when nothing is new). Idempotent, and safe for two
    callers at once (the tournament's lock; each match is claimed once): what
    ``tournament run`` does after each round, and what a scheduler calls whenever a result
    of the tournament is recorded. Any format: a round robin's or gauntlet's schedule is
    whole from the start, so this only queues what is not yet queued."""
    t = store.tournament(tid)
    if t is None or "spec" not in t:
        raise TournamentError(f"unknown tournament {tid!r}")
    with tournament_lock(store, tid):
        store.create_tournament(tid, t["spec"], schedule_of(store))
        return _enqueue(store, tid, requeue_after, mode)


def _resume(store: Store, tid: str | None) -> tuple[str, TournamentSpec]:
    """The stored tournament ``tid`` and its spec, its schedule rebuilt (idempotent), once its
    bots are connected: what re-running it with the options it was created with would do."""
    if not tid:
        raise TournamentError("no tournament to resume: give --id ID (or --bots to create one)")
    t = store.tournament(tid)
    if t is None or "spec" not in t:
        raise TournamentError(f"unknown tournament {tid!r}: give --bots NAME,NAME,... (and any "
                              f"other options) to create it")
    spec = t["spec"]
    _require_connected(store, spec["bots"])
    with tournament_lock(store, tid):
        _, stored = store.create_tournament(tid, spec, schedule_of(store), same_tournament)
    return tid, stored


def _require_connected(store: Store, bots: Sequence[str]) -> None:
    """Matches for a bot no referee holds could only wait (and fail after their retries): a
    TournamentError at once instead."""
    missing, referees = missing_bots(store, bots)
    if missing:
        raise TournamentError(
            f"bot(s) {', '.join(map(repr, missing))} not connected to any referee "
            f"({', '.join(referees)}): no free seats for them anywhere; start them "
            f"(`sueca-bot run ...`) and try again")


def enqueue_missing(store: Store, tid: str, requeue_after: float = 900.0,
                    mode: str | None = None) -> int:
    """Queue every match of ``tid`` that is neither recorded nor already queued; returns how
    many. Claims are atomic, so two concurrent runs never queue one match twice."""
    return len(_enqueue(store, tid, requeue_after, mode))


def _enqueue(store: Store, tid: str, requeue_after: float, mode: str | None) -> list[str]:
    """:func:`enqueue_missing`, returning the ids queued."""
    from sueca.arena.tasks import enqueue  # deferred: Celery's ~1 s; the web imports this module
    mids = [m for m in store.tournament_matches(tid) if store.claim(m, requeue_after)]
    if mids:
        try:
            enqueue(mids, mode=mode)
        except BaseException:  # broker down, Ctrl-C: give the claims back so a re-run queues them
            for m in mids:
                store.set_status(m, MatchStatus.PENDING)
            raise
    return mids


def missing_bots(store: Store, bots: Sequence[str], grace: float = 5.0) -> tuple[list[str], list[str]]:
    """Bots of ``bots`` connected to none of the referee replicas that announce themselves in
    Redis (their ``referee:{addr}:bots`` lists), and those replicas. Nothing is missing when no
    replica announces itself (workers may play locally, or know replicas we do not): we cannot
    tell. A bot that connects within ``grace`` seconds counts as connected."""
    deadline = time.monotonic() + grace
    while True:
        addrs = store.referees()
        if not addrs:
            return [], []
        connected = store.bots_on(addrs)
        missing = [b for b in dict.fromkeys(bots) if b not in connected]
        if not missing or time.monotonic() >= deadline:
            return missing, addrs
        time.sleep(0.25)


class WorkerWatch:
    """How many Celery workers answer a ping (``app.control.inspect().ping()``, 1 s timeout),
    asked every ``every`` seconds from a daemon thread so that a slow answer never stalls the
    progress bar. ``alive`` is None until the first answer (or while the broker is away)."""

    def __init__(self, every: float = 10.0, timeout: float = 1.0, enabled: bool = True) -> None:
        self.alive: int | None = None
        self.every, self.timeout = every, timeout
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="worker-ping", daemon=True)
        if enabled:  # a quiet wait shows no status line: no broadcast to every worker
            self._thread.start()

    def _run(self) -> None:
        from sueca.arena.celery_app import app  # deferred: Celery's ~1 s, as above
        while True:
            try:
                answers = app.control.inspect(timeout=self.timeout).ping() or {}
                self.alive = len(answers)
            except Exception:  # broker away: unknown, not zero
                self.alive = None
            if self._stop.wait(self.every):
                return

    def __enter__(self) -> WorkerWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()


def wait_for(store: Store, tid: str, *, timeout: float | None = None, quiet: bool = False,
             label: str | None = None, reap_every: float = 2.0,
             look_every: float = 0.5) -> Progress:
    """Progress bar (on stderr) until no match of ``tid`` is pending, queued or running.

    Woken by the results log (:class:`ResultsFeed`): a recorded match moves the bar at once,
    with no polling in between, and the last one ends the wait within a round trip. Every
    ``look_every`` seconds it reads every match's status as well (one pipeline), for what
    writes no result: a match that failed, one re-queued. Polling all statuses every 50 ms
    would cost the tournament benchmark's caller 4–5 ms of CPU per match and Redis ~180 reads
    per match, on the same cores as the matches.

    While it waits it looks after the matches (:class:`sueca.arena.recovery.Reaper`): one
    whose task vanished — its worker killed, its message lost — is re-queued within seconds.
    The bar says what it sees: matches running (a live lease), queued, stale (lost, about to be
    re-queued) and the workers that answer a ping, and, while none of its matches runs, the
    ladder matches running ahead of it (they hold the worker slots; the tournament's go first
    as they free up: :class:`sueca.arena.tasks.Priority`); when nothing finishes for 15 s a
    hint says what blocks (no worker answering, the error the workers noted: a bot not
    connected...).
    ``quiet`` shows none of it, and pings no worker.

    Redis not answering for a while (a restart, a failover, a pause) is waited out with a note,
    not a traceback: the matches are in Redis and the workers carry on when it is back."""
    from sueca.arena.recovery import Reaper, Sweep  # deferred: Celery's ~1 s, as above
    deadline = None if timeout is None else time.monotonic() + timeout
    last_change, last_done, next_reap, next_look = time.monotonic(), -1, 0.0, 0.0
    hints: set[str] = set()
    console = _stderr_console()
    mids = store.tournament_matches(tid)
    status_of: dict[str, MatchStatus] = {}
    ahead = 0  # ladder matches running while none of ours does
    feed = ResultsFeed(store)  # before the first look: nothing recorded after it is missed
    reaper, seen = Reaper(store), Sweep()
    watch = WorkerWatch(enabled=not quiet)
    with watch, ProgressBar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                         TextColumn("{task.fields[extra]}"), TimeElapsedColumn(),
                         console=console, disable=quiet, transient=False) as bar:
        task = bar.add_task(label or f"tournament {tid}", total=len(mids), extra="")
        while True:
            try:
                now = time.monotonic()
                if now >= next_look:
                    status_of = dict(zip(mids, (st or PENDING for st in store.statuses(mids))))
                    next_look = now + look_every
                    if now >= next_reap:
                        seen = reaper.sweep(also=[m for m, st in status_of.items()
                                                  if st in (MatchStatus.QUEUED,
                                                            MatchStatus.RUNNING)])
                        ahead = (ladder_running(store) if not quiet and MatchStatus.RUNNING
                                 not in status_of.values() else 0)
                        next_reap = time.monotonic() + reap_every
                else:
                    for mid in feed.wait(max(0.001, next_look - now)):
                        if mid in status_of:
                            status_of[mid] = DONE
            except TRANSIENT_REDIS_ERRORS as err:
                if deadline is not None and time.monotonic() > deadline:
                    raise TournamentError(f"tournament {tid}: Redis stopped answering ({err}); the "
                                    f"matches stay queued — re-run with --id {tid} to wait for "
                                    "them") from None
                bar.update(task, extra="[yellow]Redis not answering: waiting[/]")
                next_look = 0.0
                time.sleep(0.5)
                continue
            progress = _counts(status_of)
            finished = progress["done"] + progress["failed"]
            bar.update(task, completed=finished,
                       extra=_status_line(progress, seen, watch.alive, ahead))
            if finished >= progress["total"] or (
                    progress["pending"] + progress["queued"] + progress["running"] == 0):
                return progress
            if seen.requeued and not quiet:
                console.print(f"re-queued {len(seen.requeued)} lost match(es): "
                              f"{', '.join(seen.requeued)}")
                seen.requeued = []
            now = time.monotonic()
            if finished != last_done:
                last_done, last_change = finished, now
            elif now - last_change > 15 and not quiet:
                try:
                    for hint in _hints(store, mids, watch.alive):
                        if hint not in hints:
                            hints.add(hint)
                            console.print(f"[yellow]{escape(hint)}[/]")
                except TRANSIENT_REDIS_ERRORS:
                    pass
            if deadline is not None and now > deadline:
                raise TournamentError(f"tournament {tid}: {finished} of {progress['total']} matches "
                                f"done after {timeout:.0f}s; the rest stay queued — re-run with "
                                f"--id {tid} to wait for them")


def ladder_running(store: Store) -> int:
    """How many ladder matches are running now (two round trips)."""
    return store.statuses(store.ladder_running()).count(MatchStatus.RUNNING)


def _counts(status_of: Mapping[str, MatchStatus]) -> Progress:
    """Matches by status, as :meth:`sueca.arena.store.Store.progress` counts them."""
    counts: dict[str, int] = {"pending": 0, "queued": 0, "running": 0, "done": 0, "failed": 0,
              "total": len(status_of)}
    for st in status_of.values():
        counts[st] = counts.get(st, 0) + 1
    return cast("Progress", counts)


class ResultsFeed:
    """The match ids recorded in the results log from now on, read with a blocking XREAD:
    a waiter sleeps in Redis until a result comes instead of polling."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.seen = store.last_result() or "0-0"

    def wait(self, timeout: float) -> list[str]:
        """Match ids recorded since the last call, waiting up to ``timeout`` seconds for one."""
        got = self.store.wait_results(self.seen, timeout)
        if not got:
            return []
        self.seen = got[-1][0]
        return [mid for _, mid in got]


def _status_line(progress: Progress, seen: Sweep, workers: int | None, ahead: int = 0) -> str:
    parts = [f"running {progress['running']}",
             f"queued {progress['queued'] + progress['pending']}"]
    if ahead and not progress["running"] and progress["queued"] + progress["pending"]:
        parts.append(f"[yellow]waiting for {ahead} running ladder match"
                     f"{'es' if ahead != 1 else ''} to finish[/]")
    if seen.stale:
        parts.append(f"[yellow]stale {len(seen.stale)}[/]")
    if workers is not None:  # None: no ping answered yet (the first takes a second)
        parts.append(f"workers {workers}" if workers else "[red]no worker answers[/]")
    if progress["failed"]:
        parts.append(f"[red]{progress['failed']} failed[/]")
    return " · ".join(parts)


def _hints(store: Store, mids: Sequence[str], workers: int | None) -> list[str]:
    """Why nothing finished lately, from what is known: no worker answering, or the errors the
    workers noted on the waiting matches (a bot not connected, no referee reachable)."""
    out = []
    if workers == 0:
        out.append("no worker answers a ping: start one (`sueca-arena worker --redis URL`)")
    errors: dict[str, None] = {}
    for note in store.errors_of(mids):
        if (note.status in (MatchStatus.QUEUED, MatchStatus.RUNNING) and note.error
                and note.kind is not NoteKind.REQUEUED):
            errors[note.error.partition(": ")[2] or note.error] = None
    # a worker's note may quote what a referee said about a bot: capped, one line each
    out += [f"waiting: {e[:300]!r}"[:320] for e in list(errors)[:3]]
    return out


def cross_table(results: Sequence[ResultEntry], order: Sequence[str]) -> list[CrossRow]:
    """Who beat whom: per bot of ``order`` (and any other seated), the units won, drawn and
    lost against each opponent met. Units as :func:`sueca.arena.ratings.standings.standings`
    counts them: a match, or a duplicate pair once both halves are in (½ each way a draw)."""
    tally: dict[str, dict[str, list[int]]] = {}

    def score(a: str, b: str, s: float) -> None:  # team a's score against team b
        for x, y, sx in ((a, b, s), (b, a, 1.0 - s)):
            cell = tally.setdefault(x, {}).setdefault(y, [0, 0, 0])
            cell[0 if sx == 1.0 else 2 if sx == 0.0 else 1] += 1

    def one(res: ResultEntry) -> None:
        (a, a2), (b, b2) = sides(res)
        if a == a2 and b == b2 and a != b:
            score(a, b, 1.0 if res["winner"] == 0 else 0.0)

    halves: dict[str, ResultEntry] = {}
    for res in results:
        if not rated(res):
            continue
        pair = res.get("pair") or ""
        if not pair:
            one(res)
        elif pair in halves:
            first = halves.pop(pair)
            s = pair_outcome(first, res)
            if s is None:
                one(first)
                one(res)
            else:
                (a, _), (b, _) = sides(first)
                score(a, b, s)
        else:
            halves[pair] = res
    bots = list(dict.fromkeys([*order, *tally]))
    return [{"bot": a, "cells": [{"opponent": b, "won": w, "drawn": d, "lost": lo}
                                 for b in bots if b in tally.get(a, {})
                                 for w, d, lo in [tally[a][b]]]} for a in bots]


def tournament_report(store: Store, tid: str) -> TournamentReport:
    t = store.tournament(tid)
    if t is None:
        raise TournamentError(f"unknown tournament {tid!r}")
    elo_k, elo_initial = load_config(store)
    results = store.tournament_results(tid)
    failed: list[FailedMatch] = [{"match_id": m["id"], "error": m.get("error", "")}
              for m in store.recent_matches(tournament=tid) if m["status"] is MatchStatus.FAILED]
    spec = {k: v for k, v in t["spec"].items() if k != "secret"}
    table = standings(results, elo_k, elo_initial, t["spec"].get("bots") or ())
    report: TournamentReport = {
        "tournament": tid, "format": t["spec"].get("kind", "round-robin"), "spec": spec,
        "matches": t["total"], "recorded": len(results),
        "archived": store.tournament_archived(tid),
        "failed": failed, "standings": table,
        "cross": cross_table(results, [r["bot"] for r in table])}
    if report["format"] == "swiss":
        _, report["rounds"], report["swiss"] = swiss_schedule(tid, t["spec"], results)
    if report["format"] in brackets.FORMATS:
        report["bracket"] = tournament_bracket(tid, t["spec"], results)
    return report


def run_tournament(store: Store, spec: TournamentSpec | None, *, tid: str | None = None,
                   timeout: float | None = None, requeue_after: float = 900.0,
                   quiet: bool = False, resumable: bool = True) -> TournamentReport:
    """Create (or find), queue and wait for a tournament; ``spec=None`` resumes the stored
    ``tid`` (see :func:`prepare_tournament`); ``resumable=False`` leaves out the hint to re-run
    its id, for a tournament that ends with its Redis (the demo's). A Swiss or bracket
    tournament is waited for round by round: when what is queued is recorded, the next round
    is paired and queued (:func:`advance`)."""
    tid, spec = prepare_tournament(store, spec, tid=tid)
    deadline = None if timeout is None else time.monotonic() + timeout
    queued = enqueue_missing(store, tid, requeue_after)
    while True:
        stored = store.tournament(tid)
        total = 0 if stored is None else stored["total"]
        if not quiet:
            hint = (f" (if interrupted, `sueca-arena tournament run --id {tid}` finishes it)"
                    if resumable else "")
            _stderr_console().print(f"tournament [bold]{tid}[/]: {total} matches, {queued} "
                                    f"queued now{hint}")
        store.set_tournament_status(tid, "running")
        left = None if deadline is None else max(0.001, deadline - time.monotonic())
        progress = wait_for(store, tid, timeout=left, quiet=quiet,
                            label=_round_label(store, tid, spec))
        if progress["failed"] or spec.get("kind") not in STAGED:
            break
        queued = len(advance(store, tid, requeue_after=requeue_after))
        if not queued:
            break
    store.set_tournament_status(tid, "failed" if progress["failed"] else "done")
    return tournament_report(store, tid)


def _round_label(store: Store, tid: str, spec: TournamentSpec) -> str | None:
    """The progress bar's label for a Swiss round or the bracket's rounds being played."""
    kind = spec.get("kind")
    if kind == "swiss":
        return f"tournament {tid} round {_rounds_paired(store, tid, spec)}/{spec['rounds']}"
    if kind in brackets.FORMATS:
        b = tournament_bracket(tid, spec, store.tournament_results(tid))
        playing = [r["name"] for r in b["rounds"] if not r["decided"]
                   and any(t["matches"] for t in r["ties"])]
        return f"tournament {tid} {', '.join(playing) or 'bracket'}"
    return None


class FormatView(TypedDict):
    """What a tournament's page shows of its format (:func:`format_view`)."""

    format: str  # one of FORMATS
    challenger: str | None  # a gauntlet's
    rounds: list[SwissRound]  # a Swiss tournament's rounds so far (else empty)
    swiss: list[SwissScore]  # a Swiss tournament's scores, best first (else empty)
    planned: int | None  # a Swiss tournament's number of rounds
    bracket: Bracket | None  # a knockout's or double elimination's bracket so far


def format_view(tid: str, spec: TournamentSpec, results: Sequence[ResultEntry]) -> FormatView:
    """The web page's view of a tournament's format, from its stored spec and results."""
    kind = spec.get("kind") or "round-robin"
    view: FormatView = {"format": kind, "challenger": spec.get("challenger"), "rounds": [],
                        "swiss": [], "planned": spec.get("rounds"), "bracket": None}
    if kind == "swiss":
        _, view["rounds"], view["swiss"] = swiss_schedule(tid, spec, results)
    if kind in brackets.FORMATS:
        view["bracket"] = tournament_bracket(tid, spec, results)
    return view


def _rounds_paired(store: Store, tid: str, spec: TournamentSpec) -> int:
    return len(swiss_schedule(tid, spec, store.tournament_results(tid))[1])


def _stderr_console() -> Console:
    """A rich console on stderr; piped output gets 120 columns so lines never wrap a name."""
    out = Console(stderr=True, highlight=False)
    return out if out.is_terminal else Console(stderr=True, highlight=False, width=120)


__all__ = ["FORMATS", "SwissRound", "SwissScore", "TournamentError", "new_tid", "new_spec",
           "prepare_tournament", "ladder_running", "cross_table", "CrossRow", "CrossCell",
           "enqueue_missing", "wait_for", "ResultsFeed", "TournamentReport",
           "tournament_report", "run_tournament", "missing_bots", "WorkerWatch", "FormatView",
           "format_schedule", "format_view", "schedule_of", "swiss_schedule", "STAGED",
           "advance", "tournament_bracket", "bracket_schedule", "tournament_lock",
           "TournamentBusy"]
