"""Ratings: the rating of record (an order-free fit), and the live Elo and OpenSkill columns.

The rating of record (:mod:`sueca.arena.record`) is a Bradley–Terry fit over the whole results
log; it needs only counts per matchup, which this module keeps in Redis as the log grows
(:func:`catch_up`) and fits on demand (:func:`record`, cached by log position). It is what the
leaderboard ranks by and what the ladder pairs by.

The *live* columns are a fold over the results log, :meth:`Ratings.apply`, one logged result at
a time, in log order: Elo and OpenSkill move after every game, so they show a new bot's
trajectory, but they depend on the order games finished, and K keeps Elo noisy for ever. The
live ratings in Redis are that fold applied incrementally (a worker calls :func:`catch_up` after
recording); ``sueca-arena ratings rebuild`` is the same fold from nothing (:func:`rebuild`).
Same inputs, same order, same float operations, and floats stored as their ``repr`` (which
reads back exactly): so the two give identical numbers, bit for bit.

What is rated
  * A match with a winner: team 0 (seats 0, 2) against team 1 (seats 1, 3). In a 2-bot match
    (A in seats 0, 2; B in 1, 3) the teams are A,A against B,B.
  * A match a bot ended by a fault (timeout, disconnect) is a loss for its team, as the referee
    records it; a renúncia is just a scored deal. Aborted or failed matches never reach the log
    and a result marked ``rated: false`` is skipped.
  * The two matches of a duplicate pair (same decks, teams swapped) are scored per match: ½ of
    the pair for each match won, so 2-0 is a win, 1-1 a draw. (Deciding a 1-1 split by total
    game points, as before, made a pair imply about twice the Elo gap of single matches.) The
    live fold rates the pair as one game once both halves are in the log; the rating of record
    simply counts both matches. Two halves whose logged ``seed`` differs (one was re-played on a
    fresh seed, :func:`sueca.arena.match_job.reseeded`) were not dealt the same decks: the live
    fold rates them as two single games. An entry without a ``seed`` (logged before the field
    existed) is taken to have been played on its pair's seed.

Live Elo: a side's rating is the mean of its seats' ratings; every distinct bot moves by
``K * (S - E)`` once per game (not once per seat). Its ± is the usual error margin of a
performance rating, ``1.96 * 400/ln 10 / sqrt(n p (1 - p))`` with ``p = (score + 1) / (n + 2)``:
it ignores the opponents' strength and K's noise, so it is *not* a 95% interval (the rating of
record's is). OpenSkill: ``mu ± 2 sigma``; the team's strength is the sum of its seats, so A,A
counts A twice.

Settings (K and the initial rating) are stored in Redis on first use and changed only by
``sueca-arena ratings set-config``, which rebuilds everything from the log.

Checkpoint: to keep Redis bounded, retention (:mod:`sueca.arena.retention`) stores the fold's
whole state at a results entry E (:func:`checkpoint`: every bot's Elo, OpenSkill mu and sigma,
games and score, the duplicate halves waiting for their twin, the rating of record's matchup
counts) and trims the log up to E in the same transaction. A rebuild then starts from that
state and folds the tail: the same operations on the same floats in the same order as a fold of
the whole log, so the numbers stay identical (``tests/arena/test_retention.py`` compares the
two). What needs the trimmed entries themselves (another K or initial rating, a tournament's
table) needs them back from the archive files.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, cast

import redis

from sueca.arena import botstats
from sueca.arena import record as _record
from sueca.arena.records import ResultEntry
from sueca.arena.settings import current
from sueca.arena.store import Store, _entry, text

__all__ = ["Rating", "Ratings", "rated", "pair_outcome", "same_decks", "catch_up", "rebuild",
           "load", "load_config", "save_config", "record", "load_matchups", "standings",
           "checkpoint", "load_checkpoint", "entry_key", "RatingsError",
           "DEFAULT_ELO_K", "DEFAULT_ELO_INITIAL"]

DEFAULT_ELO_K = 24.0
DEFAULT_ELO_INITIAL = 1500.0
#: Tries to write a rebuild before the live ratings move on again (each try folds only the
#: results recorded since the last), and restarts after retention trims the log meanwhile
REBUILD_ATTEMPTS = 50
#: How long the live fold waits for a rebuild at most (renewed as it goes): a rebuild that
#: died leaves the live ratings paused no longer than this
REBUILD_PAUSE_MS = 120_000
_Z95 = 1.96
_ELO_SCALE = 400.0 / math.log(10)
_UNRATED_ENDS = ("aborted", "failed")


class RatingsError(ValueError):
    """A rating operation the stored data cannot support; the message says what and why."""


def entry_key(eid: str) -> tuple[int, int]:
    """A results-stream entry id (``ms-seq``) as a tuple that sorts as Redis orders ids."""
    return _entry(eid)


@dataclasses.dataclass(slots=True)
class Rating:
    elo: float
    mu: float
    sigma: float
    games: int = 0
    score: float = 0.0

    @property
    def elo_pm(self) -> float | None:
        """95% interval half-width of the Elo rating; None before the first game."""
        if self.games <= 0:
            return None
        p = (self.score + 1.0) / (self.games + 2.0)
        return _Z95 * _ELO_SCALE / math.sqrt(self.games * p * (1.0 - p))

    @property
    def mu_pm(self) -> float:
        return 2.0 * self.sigma

    @property
    def ordinal(self) -> float:
        """OpenSkill's conservative estimate, mu - 3 sigma."""
        return self.mu - 3.0 * self.sigma

    def as_dict(self) -> dict[str, Any]:
        return {"elo": self.elo, "elo_pm": self.elo_pm, "mu": self.mu, "mu_pm": self.mu_pm,
                "sigma": self.sigma, "ordinal": self.ordinal, "games": self.games,
                "score": self.score}


def rated(result: ResultEntry) -> bool:
    return (bool(result.get("rated", True)) and result.get("end") not in _UNRATED_ENDS
            and result.get("winner") in (0, 1) and len(result.get("seats") or ()) == 4)


def _sides(result: ResultEntry) -> tuple[list[str], list[str]]:
    s = result["seats"]
    return [s[0], s[2]], [s[1], s[3]]


def same_decks(first: ResultEntry, second: ResultEntry) -> bool:
    """Whether two logged halves of a pair were played on one seed (hence the same decks).

    A missing or null ``seed`` is unknown, taken as the same: older log entries have none.
    """
    a, b = first.get("seed"), second.get("seed")
    return a is None or b is None or str(a) == str(b)


def pair_outcome(first: ResultEntry, second: ResultEntry) -> float | None:
    """Score of ``first``'s team 0 over a duplicate pair: ½ for each match of the pair it won
    (1, ½ or 0); None if the two matches are not a proper pair: not the same sides with the
    teams swapped, or not played on the same seed (:func:`same_decks`)."""
    a0, a1 = _sides(first)
    b0, b1 = _sides(second)
    if sorted(a0) != sorted(b1) or sorted(a1) != sorted(b0) or not same_decks(first, second):
        return None
    return ((first["winner"] == 0) + (second["winner"] == 1)) / 2.0


class Ratings:
    """The fold state: ratings by bot and duplicate halves waiting for their twin.

    ``dirty`` and ``pending_changed`` say what :meth:`apply` touched, for incremental saving;
    ``matchups`` counts the applied results for the rating of record
    (:func:`sueca.arena.record.add_result`: only what this fold saw, added to Redis as such).
    """

    def __init__(self, elo_k: float = DEFAULT_ELO_K, elo_initial: float = DEFAULT_ELO_INITIAL,
                 bots: Mapping[str, Rating] | None = None,
                 pending: Mapping[str, ResultEntry] | None = None) -> None:
        from openskill.models import PlackettLuce
        self.elo_k = float(elo_k)
        self.elo_initial = float(elo_initial)
        self.model = PlackettLuce()
        self.bots: dict[str, Rating] = dict(bots or {})
        self.pending: dict[str, ResultEntry] = dict(pending or {})
        self.dirty: set[str] = set()
        self.pending_changed: set[str] = set()
        self.matchups: dict[str, list[float]] = {}

    def get(self, bot: str) -> Rating:
        r = self.bots.get(bot)
        if r is None:
            r = self.bots[bot] = Rating(self.elo_initial, self.model.mu, self.model.sigma)
        return r

    def apply(self, result: ResultEntry) -> None:
        """Fold one logged result in (results must come in log order)."""
        if not rated(result):
            return
        _record.add_result(self.matchups, result)
        pair = result.get("pair") or ""
        if not pair:
            side0, side1 = _sides(result)
            self._rate(side0, side1, 1.0 if result["winner"] == 0 else 0.0)
            return
        first = self.pending.pop(pair, None)
        self.pending_changed.add(pair)
        if first is None:
            self.pending[pair] = result.copy()  # as dict(result): a shallow copy
            return
        score = pair_outcome(first, result)
        if score is None:  # not a proper pair: rate both as single games rather than lose them
            for r in (first, result):
                s0, s1 = _sides(r)
                self._rate(s0, s1, 1.0 if r["winner"] == 0 else 0.0)
            return
        side0, side1 = _sides(first)
        self._rate(side0, side1, score)

    def state(self) -> dict[str, Any]:
        """Everything the fold carries from one result to the next, as JSON-able values (floats
        round-trip exactly through JSON: it writes their ``repr``)."""
        return {"bots": {b: [r.elo, r.mu, r.sigma, r.games, r.score]
                         for b, r in sorted(self.bots.items())},
                "pending": dict(sorted(self.pending.items())),
                "matchups": {m: [int(g), int(w)] for m, (g, w) in sorted(self.matchups.items())}}

    @classmethod
    def from_state(cls, state: Mapping[str, Any], elo_k: float, elo_initial: float) -> Ratings:
        """The fold as :meth:`state` saved it, ready to go on folding."""
        out = cls(elo_k, elo_initial,
                  {b: Rating(float(v[0]), float(v[1]), float(v[2]), int(v[3]), float(v[4]))
                   for b, v in state["bots"].items()},
                  state["pending"])
        out.matchups = {m: [int(g), int(w)] for m, (g, w) in state["matchups"].items()}
        return out

    def apply_all(self, results: Iterable[ResultEntry]) -> Ratings:
        for r in results:
            self.apply(r)
        return self

    def _rate(self, side0: list[str], side1: list[str], s0: float) -> None:
        both = set(side0) & set(side1)  # a bot on both teams neither wins nor loses
        r0 = [self.get(b) for b in side0]
        r1 = [self.get(b) for b in side1]
        # Elo: side rating is the mean of its seats; each distinct bot moves once.
        e0 = 1.0 / (1.0 + 10.0 ** (((r1[0].elo + r1[1].elo) / 2.0 - (r0[0].elo + r0[1].elo) / 2.0)
                                   / 400.0))
        delta = self.elo_k * (s0 - e0)
        # OpenSkill: Plackett-Luce on the two teams, each seat a player (A,A counts A twice).
        m = self.model
        teams = [[m.rating(mu=r.mu, sigma=r.sigma) for r in r0],
                 [m.rating(mu=r.mu, sigma=r.sigma) for r in r1]]
        ranks: list[float] = [0, 1] if s0 == 1.0 else [1, 0] if s0 == 0.0 else [0, 0]
        new = m.rate(teams, ranks=ranks)
        for side, ratings, updated, sign, score in ((side0, r0, new[0], 1.0, s0),
                                                    (side1, r1, new[1], -1.0, 1.0 - s0)):
            seen: set[str] = set()
            for bot, rating, upd in zip(side, ratings, updated):
                if bot in seen or bot in both:
                    continue
                seen.add(bot)
                rating.elo = rating.elo + sign * delta
                rating.mu = float(upd.mu)
                rating.sigma = float(upd.sigma)
                rating.games += 1
                rating.score += score
                self.dirty.add(bot)


# -- Redis --------------------------------------------------------------------------------------
def load_config(store: Store) -> tuple[float, float]:
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
    cfg = {text(k): float(text(v)) for k, v in raw.items()}
    return cfg["elo_k"], cfg["elo_initial"]


def save_config(store: Store, elo_k: float | None = None, elo_initial: float | None = None,
                trimmed: Callable[[], Iterable[tuple[str, ResultEntry]]] | None = None,
                ) -> dict[str, Any]:
    """Store new settings and rebuild every rating with them; returns :func:`rebuild`'s report."""
    for name, value in (("elo_k", elo_k), ("elo_initial", elo_initial)):
        if value is not None and not (math.isfinite(value) and (value > 0 or name != "elo_k")):
            raise ValueError(f"bad {name} {value!r}: a finite number" +
                             (" above 0" if name == "elo_k" else ""))
    return rebuild(store, elo_k=elo_k, elo_initial=elo_initial, trimmed=trimmed)


def _read_bots(r: Any, store: Store, names: list[str] | None) -> dict[str, Rating]:
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
    out = {}
    for name, e, o, g, s in zip(names, elo_v, os_v, games_v, score_v):
        if e is None or o is None:
            continue
        mu_sigma = json.loads(o)
        out[name] = Rating(float(text(e)), float(mu_sigma["mu"]), float(mu_sigma["sigma"]),
                           int(text(g) or 0), float(text(s) or 0.0))
    return out


def _write(pipe: Any, store: Store, state: Ratings, bots: Iterable[str]) -> None:
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


def _upgrade(store: Store) -> None:
    k = store.keys
    if store.r.exists(k.ratings_cursor()):  # folded by an older version: fold it all again
        rebuild(store, _catch_up=False)
    else:
        store.r.hset(k.ratings_config(), "format", FORMAT)


def catch_up(store: Store, batch: int = 500) -> int:
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
                rows = cast("list[tuple[bytes, dict[bytes, bytes]]]",
                            pipe.xrange(k.results(), start, "+", count=batch))
                if not rows:
                    return folded
                results: list[ResultEntry] = [json.loads(f[b"data"]) for _, f in rows]
                pairs = sorted({r["pair"] for r in results if r.get("pair")})
                pending = {}
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
                for key, (games, wins) in state.matchups.items():
                    pipe.hincrby(k.ratings_matchups(), "g:" + key, int(games))
                    pipe.hincrby(k.ratings_matchups(), "w:" + key, int(wins))
                pipe.set(k.ratings_cursor(), text(rows[-1][0]))
                pipe.execute()
                folded += len(rows)
                if len(rows) < batch:  # the log's end as read after the WATCH: all folded
                    return folded
            except redis.WatchError:
                continue


def load(store: Store) -> dict[str, Rating]:
    """The live ratings of every rated bot."""
    return _read_bots(store.r, store, None)


def _parse_matchups(raw: Mapping[Any, Any]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for field, value in raw.items():
        kind, _, key = text(field).partition(":")
        row = out.setdefault(key, [0, 0])
        row[0 if kind == "g" else 1] = int(text(value))
    return out


def load_matchups(store: Store) -> dict[str, list[float]]:
    """The rating of record's counts as stored: matchup -> [matches, wins of its first side]."""
    return _parse_matchups(store.r.hgetall(store.keys.ratings_matchups()))


def record(store: Store) -> _record.Fit:
    """The rating of record of every rated bot, fit over the whole results log.

    Catches up with the log first; the fit is cached in Redis with the log position it was
    made at, and a stale cache warm-starts the next fit (a few chord steps rather than Newton
    from nothing).
    """
    catch_up(store)
    k = store.keys
    _, initial = load_config(store)
    with store.r.pipeline(transaction=True) as pipe:
        pipe.get(k.ratings_cursor())
        pipe.hgetall(k.ratings_matchups())
        pipe.hgetall(k.ratings_record())
        cursor, raw, cached = pipe.execute()
    cursor = text(cursor) or ""
    cached = {text(a): text(b) for a, b in cached.items()}
    old = _record.Fit.from_dict(json.loads(cached["fit"])) if cached.get("fit") else None
    if old is not None and cached.get("cursor") == cursor and old.initial == initial:
        return old
    stats = _parse_matchups(raw)
    new = _record.fit(stats, initial, start=old.theta if old is not None and old.theta else None)
    store.r.hset(k.ratings_record(), mapping={"cursor": cursor, "fit": json.dumps(new.as_dict())})
    return new


def rebuild(store: Store, elo_k: float | None = None, write: bool = True,
            elo_initial: float | None = None, _catch_up: bool = True,
            trimmed: Callable[[], Iterable[tuple[str, ResultEntry]]] | None = None,
            ) -> dict[str, Any]:
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


def _rebuild(store: Store, new_k: float, new_initial: float, write: bool,
             trimmed: Callable[[], Iterable[tuple[str, ResultEntry]]] | None) -> dict[str, Any]:
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
                    max_diff = _max_diff(live, state.bots)
                    if (live_pending.keys() != state.pending.keys()
                            or live_matchups != {m: [int(g), int(w)]
                                                 for m, (g, w) in state.matchups.items()}):
                        max_diff = math.inf
                    pipe.multi()
                    if write:
                        _write_rebuilt(pipe, store, state, last, new_k, new_initial,
                                       at_checkpoint if trimmed is not None else None)
                    else:  # nothing to write, but what was read must be of one moment
                        pipe.get(k.ratings_cursor())
                    pipe.execute()
                    return {"results": n, "bots": len(state.bots), "max_diff": max_diff,
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


def _fold_through(store: Store, state: Ratings, last: str | None, n: int,
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


def _write_rebuilt(pipe: Any, store: Store, state: Ratings, last: str | None, elo_k: float,
                   elo_initial: float, at_checkpoint: str | None) -> None:
    """Queue the replacement of the live ratings by ``state`` (folded through ``last``) on a
    MULTI pipeline; ``at_checkpoint``: the checkpoint's state refolded from the archive."""
    k = store.keys
    for system in ("elo", "openskill", "games", "score"):
        pipe.delete(k.ratings(system))
    pipe.delete(k.ratings_pending(), k.ratings_matchups(), k.ratings_record())
    _write(pipe, store, state, sorted(state.bots))
    for p, v in state.pending.items():
        pipe.hset(k.ratings_pending(), p, json.dumps(v))
    for m, (games, wins) in state.matchups.items():
        pipe.hset(k.ratings_matchups(), mapping={"g:" + m: int(games), "w:" + m: int(wins)})
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
def _fold_archive(entries: Iterable[tuple[str, ResultEntry]], cp: Mapping[str, Any],
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



def load_checkpoint(store: Store, r: Any = None) -> dict[str, Any] | None:
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


def checkpoint(store: Store, upto: str,
               advance: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Store the fold's state at results entry ``upto`` (or at the live ratings' cursor, if
    they have not folded that far: an entry is trimmed only once the live ratings hold it) and
    trim the log up to there, in one transaction.

    The state is the previous checkpoint's (if any) with the entries after it folded in, i.e.
    exactly what :func:`rebuild` computes up to there. Returns ``cursor`` (the new checkpoint,
    or None when there was nothing to trim), ``results`` (entries it stands for) and
    ``trimmed`` (entries removed from the log now). ``advance(1)`` is called per entry folded
    (a progress bar; retention renews its lock there).
    """
    import time as _time
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
                if totals is None:
                    folded = sum(1 for _ in entries)
                else:
                    totals.bots = start
                    folded = store.fold_bot_stats(totals, entries)
                fields: dict[str, Any] = {
                    "cursor": end, "results": n + folded, "elo_k": repr(elo_k),
                    "elo_initial": repr(elo_initial), "created": f"{_time.time():.3f}",
                    "state": json.dumps(state.state(), separators=(",", ":"))}
                if totals is not None:
                    fields["bot_stats"] = json.dumps(totals.bots, separators=(",", ":"))
                pipe.multi()
                pipe.hset(k.ratings_checkpoint(), mapping=fields)  # type: ignore[arg-type]
                ms, seq = entry_key(end)
                pipe.xtrim(k.results(), minid=f"{ms}-{seq + 1}", approximate=False)
                trimmed = pipe.execute()[-1]
                return {"cursor": end, "results": n + folded, "trimmed": int(trimmed)}
            except redis.WatchError:
                continue


# -- standings ---------------------------------------------------------------------------------
def standings(results: Iterable[ResultEntry], elo_k: float = DEFAULT_ELO_K,
              elo_initial: float = DEFAULT_ELO_INITIAL) -> list[dict[str, Any]]:
    """A tournament table from its results (in log order), best first.

    A scoring unit is a match, or a duplicate pair once both halves are in (scored together by
    :func:`pair_outcome`): ``points`` adds 1 per unit won and 1/2 per unit drawn, ``win_pct`` is
    points per unit. ``matches``, ``gp_for``/``gp_against`` (game points) and ``faults`` (matches
    the bot ended by a timeout or disconnect) count matches. Ratings are this tournament's alone:
    ``rating``/``rating_pm`` the fit of record and ``elo``, ``mu`` the live fold, over these
    results only, from the arena's stored K and initial rating.
    """
    results = [r for r in results if rated(r)]
    rows: dict[str, dict[str, Any]] = {}

    def row(bot: str) -> dict[str, Any]:
        if bot not in rows:
            rows[bot] = {"bot": bot, "units": 0, "won": 0, "drawn": 0, "lost": 0, "points": 0.0,
                         "matches": 0, "gp_for": 0, "gp_against": 0, "faults": 0}
        return rows[bot]

    def score(side0: list[str], side1: list[str], s0: float) -> None:
        for side, s in ((side0, s0), (side1, 1.0 - s0)):
            for bot in set(side) - (set(side0) & set(side1)):
                r = row(bot)
                r["units"] += 1
                r["points"] += s
                r["won" if s == 1.0 else "lost" if s == 0.0 else "drawn"] += 1

    halves: dict[str, ResultEntry] = {}
    for res in results:
        side0, side1 = _sides(res)
        for team, side in ((0, side0), (1, side1)):
            for bot in set(side):
                r = row(bot)
                r["matches"] += 1
                r["gp_for"] += res["game_points"][team]
                r["gp_against"] += res["game_points"][1 - team]
        fault_bot = res.get("fault_bot")
        if fault_bot and res.get("end") in ("timeout", "disconnect"):
            row(fault_bot)["faults"] += 1
        pair = res.get("pair") or ""
        if not pair:
            score(side0, side1, 1.0 if res["winner"] == 0 else 0.0)
        elif pair in halves:
            first = halves.pop(pair)
            s = pair_outcome(first, res)
            if s is None:
                for x in (first, res):
                    a, b = _sides(x)
                    score(a, b, 1.0 if x["winner"] == 0 else 0.0)
            else:
                a, b = _sides(first)
                score(a, b, s)
        else:
            halves[pair] = res.copy()  # as dict(res): a shallow copy
    fold = Ratings(elo_k, elo_initial).apply_all(results)
    of_record = _record.fit(fold.matchups, elo_initial)
    out = []
    for bot, r in rows.items():
        rating = fold.get(bot)
        r["rating"] = of_record.rating.get(bot, elo_initial)
        r["rating_pm"] = of_record.pm.get(bot)
        r["win_pct"] = 100.0 * r["points"] / r["units"] if r["units"] else None
        r["incomplete_pairs"] = sum(1 for h in halves.values() if bot in h["seats"])
        r.update({k: v for k, v in rating.as_dict().items()
                  if k in ("elo", "elo_pm", "mu", "mu_pm", "sigma")})
        out.append(r)
    out.sort(key=lambda r: (-r["points"], -(r["gp_for"] - r["gp_against"]), -r["elo"], r["bot"]))
    return out
