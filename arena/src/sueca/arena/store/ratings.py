"""The ratings' state in Redis: the live fold (:mod:`sueca.arena.ratings.live`) applied
incrementally as results are recorded (:func:`catch_up`), the rating of record's matchup counts
and its cached fit (:func:`versions_of_record` by version, :func:`fit_of_record` by bot: each
bot's playing version), the same for each named competition over its own results, the rebuild
from the results log (:func:`rebuild`) and the checkpoint that lets retention trim the log
(:func:`checkpoint`). The folds themselves
are pure (:mod:`sueca.arena.ratings`); this module only reads and writes their state.

A worker calls :func:`catch_up` after recording; ``sueca-arena ratings rebuild`` is the same
fold from nothing. Same inputs, same order, same float operations, and floats stored as their
``repr`` (which reads back exactly): so the two give identical numbers, bit for bit.

Settings (K and the initial rating) are stored in Redis on first use and changed only by
``sueca-arena ratings set-config``, which rebuilds everything from the log.

Checkpoint: to keep Redis bounded, retention (:mod:`sueca.arena.retention`) stores the fold's
whole state at a results entry E (:func:`checkpoint`: every bot's Elo, OpenSkill mu and sigma,
games and score, the duplicate halves waiting for their twin, the rating of record's matchup
counts, the arena's and each competition's) and trims the log up to E in the same transaction.
A rebuild then starts from that state and folds the tail: the same operations on the same
floats in the same order as a fold of the whole log, so the numbers stay identical
(``tests/arena/test_retention.py`` compares the two). What needs the trimmed entries
themselves (another K or initial rating, a tournament's table) needs them back from the archive
files.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple, TypedDict, cast

import redis
from redis.client import Pipeline
from redis.typing import EncodableT, FieldT

from sueca.arena import botstats
from sueca.arena.ratings.fit import Fit, MatchupCounts, competition_key, fit
from sueca.arena.ratings.live import DEFAULT_ELO_INITIAL, DEFAULT_ELO_K, FoldState, Rating, Ratings
from sueca.arena.records import ResultEntry
from sueca.arena.settings import current
from sueca.arena.store.botstats import BotStatsStore
from sueca.arena.store.client import Entries, entry_key, now, text
from sueca.arena.store.competitions import Competitions
from sueca.arena.store.errors import RatingsError
from sueca.arena.store.versions import BotVersions

__all__ = ["catch_up", "rebuild", "load", "load_config", "stored_config", "save_config",
           "fit_of_record", "versions_of_record", "read_record", "playing", "cached_fit",
           "load_matchups", "checkpoint", "load_checkpoint", "trim_point", "ratings_stamp",
           "RatingsConfig", "RebuildReport", "Checkpoint", "CheckpointReport", "TrimPoint",
           "Archive", "FORMAT", "REBUILD_ATTEMPTS"]

# Every function takes the store (a :class:`sueca.arena.store.Store`), typed as the parts it
# uses: the results log, and the bots' health totals that a checkpoint carries along.

#: Tries to write a rebuild before the live ratings move on again (each try folds only the
#: results recorded since the last), and restarts after retention trims the log meanwhile
REBUILD_ATTEMPTS = 50
#: How long the live fold waits for a rebuild at most (renewed as it goes): a rebuild that
#: died leaves the live ratings paused no longer than this
REBUILD_PAUSE_MS = 120_000

#: The archived results-log entries, in log order (:func:`sueca.arena.retention.archived_results`)
Archive = Callable[[], Iterable[tuple[str, ResultEntry]]]


class RatingsConfig(NamedTuple):
    """How this arena's live ratings are computed."""

    elo_k: float
    elo_initial: float


class RebuildReport(TypedDict):
    """What :func:`rebuild` did: ``max_diff`` is the largest absolute difference between the
    rebuilt and the live numbers (0.0: identical); ``checkpoint`` the entry it started from;
    ``versions`` the bot versions the rating of record rates, ``competitions`` the named
    competitions whose own counts it rebuilt."""

    results: int
    bots: int
    versions: int
    competitions: list[str]
    max_diff: float
    elo_k: float
    elo_initial: float
    ratings: dict[str, Rating]
    checkpoint: str | None
    checkpoint_results: int


class Checkpoint(TypedDict):
    """The stored checkpoint (:func:`load_checkpoint`): the fold's ``state`` at results entry
    ``cursor``, the ``results`` it stands for, the settings it was made with, when, and the
    bots' health totals at the cursor (None in a checkpoint made before they were kept)."""

    cursor: str
    results: int
    elo_k: float
    elo_initial: float
    state: FoldState
    created: float
    bot_stats: dict[str, dict[str, float]] | None


class CheckpointReport(TypedDict):
    """What :func:`checkpoint` did: the checkpoint's entry (None: nothing to trim), the
    results it stands for, and the entries trimmed from the log now."""

    cursor: str | None
    results: int
    trimmed: int


class TrimPoint(TypedDict):
    """Where retention trimmed the results log: ``through`` entry id, ``results`` it held."""

    through: str
    results: int


def load_config(store: BotStatsStore) -> RatingsConfig:
    """(elo_k, elo_initial) of this arena, as stored; the first use stores K from
    ``SUECA_ELO_K`` (a new league's K) and the default initial rating.

    After that the variable is not read: the numbers are part of how every rating was
    computed, so they change only through :func:`save_config`, with a rebuild (``sueca-arena
    ratings set-config``); ``ratings show-config`` says when the variable differs.
    """
    key = store.keys.ratings_config()
    raw = store.r.hgetall(key)
    if len(raw) < 2:
        # both fields in one MULTI: a reader between two separate writes saw elo_k alone
        # (KeyError in a concurrent catch_up, seen once in CI)
        with store.r.pipeline(transaction=True) as pipe:
            pipe.hsetnx(key, "elo_k", repr(current().elo_k))
            pipe.hsetnx(key, "elo_initial", repr(DEFAULT_ELO_INITIAL))
            pipe.hgetall(key)
            raw = pipe.execute()[-1]
    cfg = {text(k): text(v) for k, v in raw.items()}
    return RatingsConfig(float(cfg["elo_k"]), float(cfg["elo_initial"]))


def stored_config(store: BotStatsStore) -> RatingsConfig:
    """(elo_k, elo_initial) as the league stored them, read only: the defaults when the league
    has not stored them yet (:func:`load_config` would store them)."""
    k, initial = store.r.hmget(store.keys.ratings_config(), ["elo_k", "elo_initial"])
    return RatingsConfig(DEFAULT_ELO_K if k is None else float(text(k)),
                         DEFAULT_ELO_INITIAL if initial is None else float(text(initial)))


def save_config(store: BotStatsStore, elo_k: float | None = None, elo_initial: float | None = None,
                trimmed: Archive | None = None) -> RebuildReport:
    """Store new settings and rebuild every rating with them; returns :func:`rebuild`'s report."""
    for name, value in (("elo_k", elo_k), ("elo_initial", elo_initial)):
        if value is not None and not (math.isfinite(value) and (value > 0 or name != "elo_k")):
            raise ValueError(f"bad {name} {value!r}: a finite number" +
                             (" above 0" if name == "elo_k" else ""))
    return rebuild(store, elo_k=elo_k, elo_initial=elo_initial, trimmed=trimmed)


def _read_bots(r: redis.Redis, store: BotStatsStore, names: list[str] | None) -> dict[str, Rating]:
    k = store.keys
    if names is None:
        elo = {text(a): text(b) for a, b in r.hgetall(k.ratings("elo")).items()}
        names = sorted(elo)
    if not names:
        return {}
    # one round trip: a watching pipeline (catch_up's) would send each read alone, and reads
    # after the WATCH need not travel on the watching connection to be guarded by it
    reads = store.r.pipeline(transaction=False)
    for field in ("elo", "openskill", "games", "score"):
        reads.hmget(k.ratings(field), names)
    elo_v, os_v, games_v, score_v = reads.execute()
    out: dict[str, Rating] = {}
    for name, e, o, g, s in zip(names, elo_v, os_v, games_v, score_v):
        if e is None or o is None:
            continue
        mu_sigma = json.loads(o)
        out[name] = Rating(float(text(e)), float(mu_sigma["mu"]), float(mu_sigma["sigma"]),
                           int(text(g) or 0), float(text(s) or 0.0))
    return out


def _write(pipe: Pipeline, store: BotStatsStore, state: Ratings, bots: Iterable[str]) -> None:
    k = store.keys
    bots = list(bots)
    if bots:
        pipe.hset(k.ratings("elo"), mapping={b: repr(state.bots[b].elo) for b in bots})
        pipe.hset(k.ratings("openskill"), mapping={
            b: json.dumps({"mu": state.bots[b].mu, "sigma": state.bots[b].sigma}) for b in bots})
        pipe.hset(k.ratings("games"), mapping={b: state.bots[b].games for b in bots})
        pipe.hset(k.ratings("score"), mapping={b: repr(state.bots[b].score) for b in bots})


def _bots_of(results: Iterable[ResultEntry]) -> list[str]:
    names: set[str] = set()
    for r in results:
        names.update(r.get("seats") or ())
    return sorted(names)


#: What the ratings in Redis hold: "2" = with the rating of record's counts and pairs scored
#: per match. Ratings written before (no ``format``) are rebuilt once from the log.
FORMAT = "2"


def _upgrade(store: BotStatsStore) -> None:
    k = store.keys
    if store.r.exists(k.ratings_cursor()):  # folded by an older version: fold it all again
        rebuild(store, _catch_up=False)
    else:
        store.r.hset(k.ratings_config(), "format", FORMAT)


def catch_up(store: BotStatsStore, batch: int = 500) -> int:
    """Fold every logged result not yet in the live ratings; returns how many were folded.

    Optimistic: WATCH the cursor, read, compute, write in MULTI; if another process moved the
    cursor meanwhile, start again from its cursor. Results are always folded in log order, each
    exactly once, whatever the number of workers.
    """
    k = store.keys
    if text(store.r.hget(k.ratings_config(), "format")) != FORMAT:
        _upgrade(store)
    folded = 0
    while True:
        with store.r.pipeline() as pipe:
            try:
                # the settings too: a rebuild with another K that commits meanwhile must not
                # be followed by results folded with the old one
                pipe.watch(k.ratings_cursor(), k.ratings_config())  # type: ignore[no-untyped-call]
                elo_k, elo_initial = load_config(store)
                cursor, rebuilding = (text(v) for v in pipe.mget(k.ratings_cursor(),
                                                                 k.ratings_rebuilding()))
                if rebuilding is not None:  # the rebuild writes the ratings; the results
                    pipe.unwatch()          # stay in the log for the next catch-up
                    return folded
                if cursor is None and pipe.exists(k.ratings_checkpoint()):
                    # live ratings lost (deleted by hand) after a trim: folding the tail onto
                    # nothing would be wrong; start from the checkpoint instead
                    pipe.unwatch()
                    rebuild(store, _catch_up=False)
                    continue
                start = "-" if cursor is None else f"({cursor}"
                rows = cast(Entries, pipe.xrange(k.results(), start, "+", count=batch))
                if not rows:
                    return folded
                results: list[ResultEntry] = [json.loads(f[b"data"]) for _, f in rows]
                pairs = sorted({r["pair"] for r in results if r.get("pair")})
                pending: dict[str, ResultEntry] = {}
                if pairs:
                    for p, v in zip(pairs, pipe.hmget(k.ratings_pending(), pairs)):
                        if v is not None:
                            pending[p] = json.loads(v)
                state = Ratings(elo_k, elo_initial,
                                _read_bots(pipe, store, _bots_of(results + list(pending.values()))),
                                pending)
                state.apply_all(results)
                pipe.multi()
                _write(pipe, store, state, sorted(state.dirty))
                for p in state.pending_changed:
                    if p in state.pending:
                        pipe.hset(k.ratings_pending(), p, json.dumps(state.pending[p]))
                    else:
                        pipe.hdel(k.ratings_pending(), p)
                for competition, counts in [("", state.matchups), *state.competitions.items()]:
                    if competition:
                        pipe.sadd(k.ratings_competitions(), competition)
                    for key, (games, wins) in counts.items():
                        pipe.hincrby(k.ratings_matchups(competition), "g:" + key, int(games))
                        pipe.hincrby(k.ratings_matchups(competition), "w:" + key, int(wins))
                pipe.set(k.ratings_cursor(), text(rows[-1][0]))
                pipe.execute()
                folded += len(rows)
                if len(rows) < batch:  # the log's end as read after the WATCH: all folded
                    return folded
            except redis.WatchError:
                continue


def load(store: BotStatsStore) -> dict[str, Rating]:
    """The live ratings of every rated bot."""
    return _read_bots(store.r, store, None)


def _parse_matchups(raw: Mapping[bytes | str, bytes | str]) -> MatchupCounts:
    out: MatchupCounts = {}
    for field, value in raw.items():
        kind, _, key = text(field).partition(":")
        row = out.setdefault(key, [0, 0])
        row[0 if kind == "g" else 1] = int(text(value))
    return out


def load_matchups(store: BotStatsStore, competition: str | None = None) -> MatchupCounts:
    """The rating of record's counts as stored: matchup -> [matches, wins of its first side];
    the arena's, or a named ``competition``'s own (None or the default ladder: the arena's)."""
    return _parse_matchups(store.r.hgetall(store.keys.ratings_matchups(competition_key(competition))))


def _competition_counts(r: redis.Redis, store: BotStatsStore) -> dict[str, MatchupCounts]:
    """Every named competition's counts as stored (``r``: a client or a watching pipeline)."""
    k = store.keys
    names = sorted(text(n) for n in r.smembers(k.ratings_competitions()))
    return {c: _parse_matchups(r.hgetall(k.ratings_matchups(c))) for c in names}


def versions_of_record(store: BotStatsStore, competition: str | None = None) -> Fit:
    """The rating of record of every version that played (keyed by
    :func:`~sueca.arena.ratings.fit.identity`: ``name`` for version 1, ``name@N``), fit over
    the whole results log, or over a named ``competition``'s results only.

    Catches up with the log first; the fit is cached in Redis with the log position it was
    made at, and a stale cache warm-starts the next fit (a few chord steps rather than Newton
    from nothing).
    """
    catch_up(store)
    return _record(store, competition, write=True)


def read_record(store: BotStatsStore, competition: str | None = None) -> Fit:
    """:func:`versions_of_record` read only (the pages'): the cached fit when it is at the live
    ratings' position, else a fit of the stored counts, neither caught up nor cached."""
    return _record(store, competition, write=False)


def _record(store: BotStatsStore, competition: str | None, *, write: bool) -> Fit:
    k = store.keys
    name = competition_key(competition)
    initial = (load_config(store) if write else stored_config(store)).elo_initial
    with store.r.pipeline(transaction=True) as pipe:
        pipe.get(k.ratings_cursor())
        pipe.hgetall(k.ratings_matchups(name))
        pipe.hgetall(k.ratings_record(name))
        raw_cursor, raw, raw_cached = pipe.execute()
    cursor = text(raw_cursor) or ""
    cached = {text(a): text(b) for a, b in raw_cached.items()}
    old = Fit.from_dict(json.loads(cached["fit"])) if cached.get("fit") else None
    if old is not None and cached.get("cursor") == cursor and old.initial == initial:
        return old
    stats = _parse_matchups(raw)
    new = fit(stats, initial, start=old.theta if old is not None and old.theta else None)
    if write:
        store.r.hset(k.ratings_record(name),
                     mapping={"cursor": cursor, "fit": json.dumps(new.as_dict())})
    return new


def fit_of_record(store: BotStatsStore, competition: str | None = None) -> Fit:
    """The rating of record of every rated bot, keyed by bot: the row of the version it plays
    (:meth:`~sueca.arena.ratings.fit.Fit.for_bots` of :func:`versions_of_record`), fit over
    the whole results log or a named ``competition``'s results only (what its final is seeded
    from). A bot whose current version has played no rated match has no row yet."""
    versions = versions_of_record(store, competition)
    return versions.for_bots(playing(store, versions.bots(), competition))


def playing(store: BotStatsStore, bots: Sequence[str],
            competition: str | None = None) -> dict[str, int]:
    """The version of each of ``bots`` whose rating of record stands for it: its current one,
    or in a named ``competition`` the one its entry fixed at the freeze (so a closed
    competition's table keeps the versions that played it, whatever came after)."""
    current = BotVersions(store.r, store.keys).currents(bots)
    name = competition_key(competition)
    if name:
        for bot, entry in Competitions(store.r, store.keys).entries(name).items():
            if bot in current and entry.get("version") is not None:
                current[bot] = int(entry["version"] or 1)
    return current


def rebuild(store: BotStatsStore, elo_k: float | None = None, *, write: bool = True,
            elo_initial: float | None = None, _catch_up: bool = True,
            trimmed: Archive | None = None) -> RebuildReport:
    """Recompute every rating from the results log; with ``write``, replace the live ones (and
    keep ``elo_k`` and ``elo_initial``, when given, as this arena's settings).

    After retention trimmed the log, the fold starts from the ratings checkpoint; ``trimmed()``
    (the archived entries, :func:`sueca.arena.retention.archived_results`) folds them instead,
    which another K or initial rating needs: every entry up to the checkpoint must be there
    (else :class:`RatingsError`), and with ``write`` the checkpoint is rewritten too.

    Returns a report: ``results``, ``bots``, ``max_diff`` (largest absolute difference between
    the rebuilt and the live numbers, over Elo, mu, sigma, games, score and the record's
    counts; 0.0 means identical, compared at the live ratings' own position in the log, so
    results recorded meanwhile do not count as differences),
    ``elo_k``, ``elo_initial`` and ``ratings``.
    """
    k = store.keys
    if _catch_up:
        catch_up(store)
    cfg_k, cfg_initial = load_config(store)
    new_k = cfg_k if elo_k is None else float(elo_k)
    new_initial = cfg_initial if elo_initial is None else float(elo_initial)
    # The live fold pauses meanwhile (catch_up sees the flag and leaves the results in the
    # log), so the live ratings stand still to be compared and replaced; without it a league
    # that never stops recording moved them on before every write. The flag expires if this
    # process dies; a catch-up at the end folds what came meanwhile.
    store.r.set(k.ratings_rebuilding(), "1", px=REBUILD_PAUSE_MS)
    try:
        return _rebuild(store, new_k, new_initial, write, trimmed)
    finally:
        store.r.delete(k.ratings_rebuilding())
        if _catch_up:
            catch_up(store)


def _rebuild(store: BotStatsStore, new_k: float, new_initial: float, write: bool,
             trimmed: Archive | None) -> RebuildReport:
    k = store.keys
    for _ in range(REBUILD_ATTEMPTS):  # a new checkpoint (retention trimmed) starts it over
        cp = load_checkpoint(store)
        if cp is None:
            state, last, n = Ratings(new_k, new_initial), None, 0
        elif trimmed is not None:
            state, n = _fold_archive(trimmed(), cp, new_k, new_initial)
            last = cp["cursor"]
        elif (cp["elo_k"], cp["elo_initial"]) != (new_k, new_initial):
            raise RatingsError(
                f"the results log was trimmed at entry {cp['cursor']} after a ratings "
                f"checkpoint made with Elo K={cp['elo_k']:g} and initial rating "
                f"{cp['elo_initial']:g}; rebuilding with K={new_k:g}, initial "
                f"{new_initial:g} needs the {cp['results']} trimmed results, which only "
                f"the retention archive holds (pass it: --archive DIR)")
        else:
            state = Ratings.from_state(cp["state"], new_k, new_initial)
            last, n = cp["cursor"], cp["results"]
        at_checkpoint = None if cp is None else json.dumps(state.state(), separators=(",", ":"))
        # the bulk of the log, unwatched: results recorded meanwhile are folded below, a few
        # at a time, so a league that never stops recording still lets a rebuild finish
        last, n = _fold_through(store, state, last, n, text(store.r.get(k.ratings_cursor())))
        for _ in range(REBUILD_ATTEMPTS):
            store.r.set(k.ratings_rebuilding(), "1", px=REBUILD_PAUSE_MS)  # still at it
            with store.r.pipeline() as pipe:
                try:
                    pipe.watch(k.ratings_cursor(), k.ratings_checkpoint())  # type: ignore[no-untyped-call]
                    if text(pipe.hget(k.ratings_checkpoint(), "cursor")) != (
                            None if cp is None else cp["cursor"]):
                        pipe.unwatch()
                        break  # the log was trimmed behind a new checkpoint: fold from it
                    # the live ratings' own position: both sides compared at the same entry
                    last, n = _fold_through(store, state, last, n,
                                            text(pipe.get(k.ratings_cursor())))
                    live = _read_bots(pipe, store, None)
                    live_pending = {text(a): json.loads(b)
                                    for a, b in pipe.hgetall(k.ratings_pending()).items()}
                    live_matchups = _parse_matchups(pipe.hgetall(k.ratings_matchups()))
                    live_competitions = _competition_counts(pipe, store)
                    max_diff = _max_diff(live, state.bots)
                    if (live_pending.keys() != state.pending.keys()
                            or live_matchups != _plain(state.matchups)
                            or live_competitions != {c: _plain(m) for c, m
                                                     in state.competitions.items()}):
                        max_diff = math.inf
                    pipe.multi()
                    if write:
                        _write_rebuilt(pipe, store, state, last, new_k, new_initial,
                                       at_checkpoint if trimmed is not None else None,
                                       stale=live_competitions)
                    else:  # nothing to write, but what was read must be of one moment
                        pipe.get(k.ratings_cursor())
                    pipe.execute()
                    return {"results": n, "bots": len(state.bots), "max_diff": max_diff,
                            "versions": len({b for m in state.matchups for b, _ in json.loads(m)}),
                            "competitions": sorted(state.competitions),
                            "elo_k": new_k, "elo_initial": new_initial, "ratings": state.bots,
                            "checkpoint": None if cp is None else cp["cursor"],
                            "checkpoint_results": 0 if cp is None else cp["results"]}
                except redis.WatchError:
                    continue
        else:
            raise RatingsError(f"the live ratings moved on {REBUILD_ATTEMPTS} times while the "
                               "rebuild was being written: try again when the league records "
                               "fewer results a second")
    raise RatingsError(f"the results log was trimmed {REBUILD_ATTEMPTS} times during the rebuild: "
                       "try again when retention is not running")


def _fold_through(store: BotStatsStore, state: Ratings, last: str | None, n: int,
                  target: str | None) -> tuple[str | None, int]:
    """Fold the log's entries after ``last`` up to ``target`` (the live ratings' cursor) into
    ``state``; returns the new (last, count). Nothing when the target is not past ``last``."""
    if target is None or (last is not None and entry_key(target) <= entry_key(last)):
        return last, n
    for eid, res in store.results(after=last, through=target):
        state.apply(res)
        last = eid
        n += 1
    return last, n


def _plain(counts: MatchupCounts) -> MatchupCounts:
    return {m: [int(g), int(w)] for m, (g, w) in counts.items()}


def _write_rebuilt(pipe: Pipeline, store: BotStatsStore, state: Ratings, last: str | None,
                   elo_k: float, elo_initial: float, at_checkpoint: str | None, *,
                   stale: Iterable[str]) -> None:
    """Queue the replacement of the live ratings by ``state`` (folded through ``last``) on a
    MULTI pipeline; ``at_checkpoint``: the checkpoint's state refolded from the archive;
    ``stale``: the competitions whose counts are stored now (replaced too)."""
    k = store.keys
    for system in ("elo", "openskill", "games", "score"):
        pipe.delete(k.ratings(system))
    pipe.delete(k.ratings_pending(), k.ratings_matchups(), k.ratings_record(),
                k.ratings_competitions())
    for c in stale:
        pipe.delete(k.ratings_matchups(c), k.ratings_record(c))
    _write(pipe, store, state, sorted(state.bots))
    for p, v in state.pending.items():
        pipe.hset(k.ratings_pending(), p, json.dumps(v))
    for competition, counts in [("", state.matchups), *state.competitions.items()]:
        if competition:
            pipe.sadd(k.ratings_competitions(), competition)
        for m, (games, wins) in counts.items():
            pipe.hset(k.ratings_matchups(competition),
                      mapping={"g:" + m: int(games), "w:" + m: int(wins)})
    if last is None:
        pipe.delete(k.ratings_cursor())
    else:
        pipe.set(k.ratings_cursor(), last)
    if at_checkpoint is not None:
        pipe.hset(k.ratings_checkpoint(), mapping={
            "state": at_checkpoint, "elo_k": repr(elo_k), "elo_initial": repr(elo_initial)})
    pipe.hset(k.ratings_config(), mapping={"elo_k": repr(elo_k), "elo_initial": repr(elo_initial),
                                           "format": FORMAT})


def _max_diff(a: Mapping[str, Rating], b: Mapping[str, Rating]) -> float:
    if a.keys() != b.keys():
        return math.inf
    worst = 0.0
    for name, ra in a.items():
        rb = b[name]
        for f in ("elo", "mu", "sigma", "games", "score"):
            worst = max(worst, abs(float(getattr(ra, f)) - float(getattr(rb, f))))
    return worst


# -- checkpoint -------------------------------------------------------------------------------
def _fold_archive(entries: Iterable[tuple[str, ResultEntry]], cp: Checkpoint,
                  elo_k: float, elo_initial: float) -> tuple[Ratings, int]:
    """The fold of the archived entries up to the checkpoint, checked complete."""
    state = Ratings(elo_k, elo_initial)
    end = entry_key(cp["cursor"])
    n = 0
    for eid, res in entries:
        if entry_key(eid) > end:
            break
        state.apply(res)
        n += 1
    if n != cp["results"]:
        raise RatingsError(f"the archive holds {n} of the {cp['results']} results trimmed up to "
                           f"entry {cp['cursor']}: it is not this league's whole archive (or "
                           f"part of it was dropped)")
    return state, n

def load_checkpoint(store: BotStatsStore, r: redis.Redis | None = None) -> Checkpoint | None:
    """The stored checkpoint (``cursor``, ``results``, ``elo_k``, ``elo_initial``, ``state``,
    ``created``, ``bot_stats``: the bots' health totals at the cursor, None in a checkpoint
    made before they were kept), or None when the results log was never trimmed. ``r``: a client or a
    watching pipeline to read it with."""
    raw = (r or store.r).hgetall(store.keys.ratings_checkpoint())
    if not raw:
        return None
    cp = {text(a): text(b) for a, b in raw.items()}
    return {"cursor": cp["cursor"], "results": int(cp["results"]),
            "elo_k": float(cp["elo_k"]), "elo_initial": float(cp["elo_initial"]),
            "state": json.loads(cp["state"]), "created": float(cp.get("created") or 0.0),
            "bot_stats": json.loads(cp["bot_stats"]) if "bot_stats" in cp else None}


def _applied(state: Ratings, entries: Iterable[tuple[str, ResultEntry]],
             advance: Callable[[int], None] | None) -> Iterator[ResultEntry]:
    """Each entry, once ``state`` has folded it (and ``advance(1)`` said so)."""
    for _, res in entries:
        state.apply(res)
        if advance is not None:
            advance(1)
        yield res


def checkpoint(store: BotStatsStore, upto: str,
               advance: Callable[[int], None] | None = None) -> CheckpointReport:
    """Store the fold's state at results entry ``upto`` (or at the live ratings' cursor, if
    they have not folded that far: an entry is trimmed only once the live ratings hold it) and
    trim the log up to there, in one transaction.

    The state is the previous checkpoint's (if any) with the entries after it folded in, i.e.
    exactly what :func:`rebuild` computes up to there. Returns ``cursor`` (the new checkpoint,
    or None when there was nothing to trim), ``results`` (entries it stands for) and
    ``trimmed`` (entries removed from the log now). ``advance(1)`` is called per entry folded
    (a progress bar; retention renews its lock there).
    """
    catch_up(store)
    k = store.keys
    while True:
        with store.r.pipeline() as pipe:
            try:
                pipe.watch(k.ratings_checkpoint(), k.ratings_config())  # type: ignore[no-untyped-call]
                elo_k, elo_initial = load_config(store)
                live = text(pipe.get(k.ratings_cursor()))
                old = load_checkpoint(store, pipe)
                if live is None:
                    pipe.unwatch()
                    return {"cursor": None if old is None else old["cursor"],
                            "results": 0 if old is None else old["results"], "trimmed": 0}
                end = min(upto, live, key=entry_key)
                if old is not None and entry_key(old["cursor"]) >= entry_key(end):
                    pipe.unwatch()
                    return {"cursor": old["cursor"], "results": old["results"], "trimmed": 0}
                if old is None:
                    state, n, after = Ratings(elo_k, elo_initial), 0, None
                else:
                    state = Ratings.from_state(old["state"], elo_k, elo_initial)
                    n, after = old["results"], old["cursor"]
                entries = _applied(state, store.results(after=after, through=end), advance)
                # the bots' health totals at the checkpoint ride along (see
                # Store.rebuild_bot_stats); unknown after a checkpoint that kept none
                start = {} if old is None else old["bot_stats"]
                totals = None if start is None else botstats.Totals()
                if start is None or totals is None:
                    folded = sum(1 for _ in entries)
                else:
                    totals.bots = start
                    folded = store.fold_bot_stats(totals, entries)
                fields: dict[FieldT, EncodableT] = {
                    "cursor": end, "results": n + folded, "elo_k": repr(elo_k),
                    "elo_initial": repr(elo_initial), "created": now(),
                    "state": json.dumps(state.state(), separators=(",", ":"))}
                if totals is not None:
                    fields["bot_stats"] = json.dumps(totals.bots, separators=(",", ":"))
                pipe.multi()
                pipe.hset(k.ratings_checkpoint(), mapping=fields)
                ms, seq = entry_key(end)
                pipe.xtrim(k.results(), minid=f"{ms}-{seq + 1}", approximate=False)
                trimmed = pipe.execute()[-1]
                return {"cursor": end, "results": n + folded, "trimmed": int(trimmed)}
            except redis.WatchError:
                continue




def cached_fit(store: BotStatsStore, competition: str | None = None) -> Fit | None:
    """The last fit of record of the versions cached in Redis (by :func:`versions_of_record`;
    the arena's, or a named ``competition``'s), read only."""
    raw = store.r.hget(store.keys.ratings_record(competition_key(competition)), "fit")
    return None if raw is None else Fit.from_dict(json.loads(raw))


def trim_point(store: BotStatsStore) -> TrimPoint | None:
    """Where retention trimmed the results log, or None when it never did."""
    cursor, results = store.r.hmget(store.keys.ratings_checkpoint(), ["cursor", "results"])
    if cursor is None:
        return None
    return {"through": text(cursor), "results": int(text(results) or 0)}


def ratings_stamp(store: BotStatsStore
                  ) -> tuple[str | None, str | None, str | None, str | None, str | None]:
    """What moves the leaderboard's ratings, in one round trip: the live ratings' cursor, the
    cached fit's cursor, the number of registered bots, the stored Elo K and the versions
    started (a bot's row is its current version's)."""
    k = store.keys
    pipe = store.r.pipeline(transaction=False)
    pipe.get(k.ratings_cursor())
    pipe.hget(k.ratings_record(), "cursor")
    pipe.scard(k.bots())
    pipe.hget(k.ratings_config(), "elo_k")
    pipe.get(k.versions_started())
    cursor, fitted, bots, elo_k, started = pipe.execute()
    return text(cursor), text(fitted), str(bots), text(elo_k), text(started)
