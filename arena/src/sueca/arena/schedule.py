"""Who plays whom: round-robin tournaments and the continuous ladder's pairings.

Round-robin: every pair of bots (A, B) plays ``k`` matches, A in seats 0 and 2 against B in 1
and 3, then the other way round. The first dealer moves one seat every two matches, so over a
pair's matches both bots deal first and both teams lead first equally often.

Duplicate (``duplicate=True``): the matches come in pairs that share one seed and one first
dealer — the same decks — with the teams swapped, so each bot plays the cards the other had.
A pair is scored per match, ½ for each match won (:func:`sueca.arena.ratings.live.pair_outcome`).

Seeds come from a random secret kept in the tournament's spec: a bot that knows the tournament id
and the pairings still cannot compute the decks. A schedule is a pure function of the spec, so
re-running a tournament id rebuilds exactly the same matches.

Ladder: :func:`pick_pairs` chooses who plays next, for information and fairness (its docstring
says how and why); :class:`Ladder` keeps a target number of matches in flight, under a Redis
lock so that two schedulers never exceed it, and is woken by every recorded result
(:meth:`Ladder.wait`) so that a finished match frees its slot at once. The arena's ladder and
every open or frozen competition share that target, each playing its own ladder among its
entrants (:mod:`sueca.arena.competitions.ladder`).
"""

from __future__ import annotations

import logging
import math
import random
import secrets
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sueca.arena.competitions.ladder import LOCK, Play, board_of, next_board
from sueca.arena.competitions.ladder import plays as competition_plays
from sueca.arena.lifecycle import DEFAULT
from sueca.arena.ratings.fit import ELO, PRIOR_SD, PROVISIONAL_GAMES, Fit
from sueca.arena.records import ScheduledMatch, TournamentSpec
from sueca.arena.seeds import derive_seed, reseeded
from sueca.arena.store import DONE, FAILED, RUNNING, Store
from sueca.arena.store.fairplay import playable
from sueca.codec import SpecDict

__all__ = ["round_robin", "tournament_spec", "same_tournament", "pick_pairs", "Ladder",
           "connected_bots", "derive_seed", "reseeded", "match_spec", "RECENT", "NEWCOMER_SHARE", "EXPLORE",
           "SETTLED", "REPEAT"]

#: The ladder matches remembered for the newcomers' cap (``ladder:recent``).
RECENT = 100
#: A provisional bot plays at most this share of the last :data:`RECENT` ladder matches.
NEWCOMER_SHARE = 0.3
#: Weight of any pairing, however certain its outcome, so that every pair is sampled now and then.
EXPLORE = 0.02
#: The floor of a bot's chance to be drawn first, against the uncertainty of its place.
SETTLED = 0.1
#: A pair that met this many times in the last :data:`RECENT` matches weighs half as much.
REPEAT = 5.0


def match_spec(mid: str, seats: Sequence[str], *, seed: str, first_dealer: int,
               variant: Mapping[str, Any],  # Any: a Variant's to_dict(), JSON values
               limits: Mapping[str, int | None] | None = None,
               ) -> SpecDict:
    """The spec the referee runs (``MatchSpec`` in the proto). ``variant`` is a Variant's
    ``to_dict()``; ``limits`` the referee's clocks for it (None or absent: its defaults)."""
    spec: SpecDict = {"match_id": mid, "bots": list(seats), "variant": dict(variant),
                      "seed": seed, "first_dealer": first_dealer}
    limits = limits or {}
    move, bank, grace = limits.get("move_ms"), limits.get("bank_ms"), limits.get("grace_ms")
    if move is not None:
        spec["move_ms"] = move
    if bank is not None:
        spec["bank_ms"] = bank
    if grace is not None:
        spec["grace_ms"] = grace
    return spec


def tournament_spec(bots: Sequence[str], matches_per_pair: int, duplicate: bool,
                    variant: Mapping[str, Any], *,  # Any: a Variant's to_dict(), JSON values
                    limits: Mapping[str, int | None] | None = None,
                    secret: str | None = None) -> TournamentSpec:
    """A round robin's spec (:func:`sueca.arena.tournaments.new_spec` makes the other
    formats'), with a fresh ``secret`` unless one is given; ValueError quoting a bad value."""
    if len(bots) < 2:
        raise ValueError(f"a tournament (any format) needs at least 2 bots, got {list(bots)!r}")
    if len(set(bots)) != len(bots):
        raise ValueError(f"a bot is listed twice in {list(bots)!r}")
    if matches_per_pair < 1:
        raise ValueError(f"matches per pair must be at least 1, got {matches_per_pair}")
    if duplicate and matches_per_pair % 2:
        raise ValueError(f"--duplicate plays matches in pairs: matches per pair must be even, "
                         f"got {matches_per_pair}")
    return {"kind": "round-robin", "bots": list(bots), "matches_per_pair": matches_per_pair,
            "duplicate": bool(duplicate), "variant": dict(variant),
            "limits": {k: v for k, v in (limits or {}).items() if v is not None},
            "secret": secret or secrets.token_hex(16)}


def same_tournament(stored: TournamentSpec, asked: TournamentSpec) -> bool:
    """Two specs describe the same tournament when all but the secret agree."""
    return ({k: v for k, v in stored.items() if k != "secret"}
            == {k: v for k, v in asked.items() if k != "secret"})


def round_robin(tid: str, spec: TournamentSpec, pairs: Sequence[tuple[str, str]] | None = None,
                *, first: int = 0, salt: Sequence[str] = ()) -> list[ScheduledMatch]:
    """The matches of a round-robin, ``[{"id", "spec", "pair"}]``, in the order they are queued:
    round by round over all pairs, so partial progress covers every pair evenly.

    ``pairs`` (default: every pair of the spec's bots) lets the other formats of
    :mod:`sueca.arena.tournaments` schedule their pairs the same way: match ids count from
    ``first``, and ``salt`` (a Swiss round) goes into the seeds and pair ids."""
    bots = list(spec["bots"])
    k = int(spec["matches_per_pair"])
    duplicate = bool(spec["duplicate"])
    secret = spec["secret"]
    variant = spec["variant"]
    limits = spec.get("limits") or {}
    if pairs is None:
        pairs = [(bots[i], bots[j]) for i in range(len(bots)) for j in range(i + 1, len(bots))]
    out: list[ScheduledMatch] = []

    def add(seats: list[str], seed: str, dealer: int, pair: str) -> None:
        mid = f"{tid}-{first + len(out):04d}"
        out.append({"id": mid, "pair": pair,
                    "spec": match_spec(mid, seats, seed=seed, first_dealer=dealer,
                                           variant=variant, limits=limits)})

    if duplicate:
        for p in range(k // 2):
            for a, b in pairs:  # both halves: one seed, one first dealer, teams swapped
                seed = derive_seed(secret, a, b, *salt, p)
                pair = "/".join([tid, a, b, *salt, str(p)])
                add([a, b, a, b], seed, p % 4, pair)
                add([b, a, b, a], seed, p % 4, pair)
    else:
        for j in range(k):
            for a, b in pairs:  # the dealing bot alternates, the dealing seat rotates
                add([a, b, a, b] if j % 2 == 0 else [b, a, b, a],
                    derive_seed(secret, a, b, *salt, j), (j // 2) % 4, "")
    return out


# -- ladder ------------------------------------------------------------------------------------
def pick_pairs(free: Mapping[str, int], fit: Fit | None, n: int, *,
               rng: random.Random | None = None, recent: Sequence[tuple[str, str]] = (),
               inflight: Mapping[str, int] | None = None) -> list[tuple[str, str]]:
    """Up to ``n`` pairs of distinct bots from ``free`` (bot -> free seats; a 2-bot match takes
    two seats of each), for information and fairness.

    ``fit`` is the rating of record (None: nothing rated yet), ``recent`` the pairs of the last
    ladder matches scheduled, oldest first, ``inflight`` the ladder matches each bot has queued
    or running. Each pick:

    1. *Who plays*: a provisional bot (fewer than :data:`~sueca.arena.ratings.fit.PROVISIONAL_GAMES`
       rated matches, counting its in-flight ones) first, the one with fewest; else a bot at
       random, in proportion to :data:`SETTLED` + how unsettled its place is (the largest
       probability that the fit orders it wrongly against one of its neighbours), less likely
       the more matches it has in flight. Every bot keeps playing (nobody waits for ever) and
       nobody catches up on past games by playing all the next ones; a bot whose place is
       settled plays less (about a third as often), since its games teach little.
    2. *Not taking over*: a provisional bot already in :data:`NEWCOMER_SHARE` of the last
       :data:`RECENT` matches, or of the last 10, is left out (as either side) while two other
       bots can play. Without it, a new bot would play every match until it had caught up in
       games with the others (100% of the next 100 matches, ~178 in a row, in a simulated
       league).
    3. *Against whom*: drawn at random, in proportion to :data:`EXPLORE` + the probability that
       the fit has the two in the wrong order (normal approximation, both ratings'
       uncertainty), divided by 1 + (the times the pair met in ``recent``) / :data:`REPEAT`.
       Games go where the order is uncertain (near neighbours, and anyone against a newcomer);
       a near-certain pairing (98.8% predictable: nothing learnt) is drawn rarely, never never,
       so every pair is sampled; the random draw keeps an early, noisy fit from locking
       pairings in (pairing by nearest Elo converged more slowly than random pairing), and the
       repeat penalty keeps one near-tied pair from taking every game.

    ``sueca-arena bench ladder`` measures the result against round robin in simulated leagues.
    """
    rng = rng or random.Random()
    free = {b: f for b, f in free.items() if f >= 2}
    inflight = Counter(inflight or {})
    recent = list(recent)
    pair_count = Counter(frozenset(p) for p in recent)
    theta = fit.theta if fit is not None else {}
    prior_var = (PRIOR_SD / ELO) ** 2
    var = {b: ((fit.pm[b] / (1.959964 * ELO)) ** 2 if fit is not None and b in fit.pm
               else prior_var) for b in free}
    games = {b: (fit.games.get(b, 0) if fit is not None else 0) for b in free}
    picked: list[tuple[str, str]] = []
    while len(picked) < n:
        live = [b for b, f in free.items() if f >= 2]
        if len(live) < 2:
            break
        provisional = {b for b in live if games[b] + inflight[b] < PROVISIONAL_GAMES}
        capped = {b for b in provisional if _over_share(b, recent)}
        if len(live) - len(capped) >= 2:
            live = [b for b in live if b not in capped]
        rng.shuffle(live)
        newcomers = [b for b in live if b in provisional]
        if newcomers:  # a newcomer first
            a = min(newcomers, key=lambda b: games[b] + inflight[b])
            pairs = [(a, b) for b in live if b != a]

        else:  # a bot whose place is uncertain, the more likely the less settled it is
            unsettled = _unsettled(live, theta, var)
            a = rng.choices(live, [(SETTLED + unsettled[x]) / (1.0 + inflight[x])
                                   for x in live])[0]
            pairs = [(a, b) for b in live if b != a]
        weights = []
        for a, b in pairs:
            gap = abs(theta.get(a, 0.0) - theta.get(b, 0.0))
            weights.append((EXPLORE + _uncertain(gap, math.sqrt(var[a] + var[b])))
                           / (1.0 + pair_count[frozenset((a, b))] / REPEAT)
                           / (1.0 + inflight[b]))
        a, b = rng.choices(pairs, weights)[0]
        picked.append((a, b))
        recent.append((a, b))
        pair_count[frozenset((a, b))] += 1
        for x in (a, b):
            free[x] -= 2
            inflight[x] += 1
    return picked


def _uncertain(gap: float, sd: float) -> float:
    """The probability that the fit orders two bots wrongly: their rating gap against its
    standard deviation (normal approximation)."""
    return 0.5 * math.erfc(gap / (math.sqrt(2.0) * sd))


def _unsettled(bots: Sequence[str], theta: Mapping[str, float],
               var: Mapping[str, float], reach: int = 3) -> dict[str, float]:
    """Per bot, the largest probability that the fit orders it wrongly against another, looked
    for among its ``reach`` nearest neighbours on each side (the rest are farther apart)."""
    ranked = sorted(bots, key=lambda b: theta.get(b, 0.0))
    out = {}
    for i, x in enumerate(ranked):
        near = ranked[max(0, i - reach):i] + ranked[i + 1:i + 1 + reach]
        out[x] = max((_uncertain(abs(theta.get(x, 0.0) - theta.get(y, 0.0)),
                                 math.sqrt(var[x] + var[y])) for y in near), default=0.0)
    return out


def _over_share(bot: str, recent: Sequence[tuple[str, str]]) -> bool:
    """Whether one more match for ``bot`` would put it above :data:`NEWCOMER_SHARE` of the last
    :data:`RECENT` matches, or of the last 10 (so that its matches are spread out, not 30 in a
    row and then none)."""
    for span in (10, RECENT):
        window = recent[-span:]
        if sum(1 for p in window if bot in p) + 1 > NEWCOMER_SHARE * span:
            return True
    return False


class Ladder:
    """Keeps ``target`` ladder matches in flight, the arena's and its competitions'.

    ``connected()`` returns bot -> free seats (from the referee replicas); ``enqueue(mid)``
    sends the match's task. One :meth:`tick` runs under the ``ladder`` lock, so two schedulers
    (say, one per host for availability) never exceed ``target`` nor pick the same slot twice.
    Between ticks :meth:`wait` blocks on the results log: a recorded result wakes it at once.
    ``pace`` (matches a minute, 0 for no limit) caps how many it starts: an allowance that grows
    by one match every 60/``pace`` seconds, up to ``target`` (a short burst after a pause).
    """

    def __init__(self, store: Store, target: int, connected: Callable[[], Mapping[str, int]],
                 enqueue: Callable[[str], None], variant: Mapping[str, Any] | None = None,
                 limits: Mapping[str, Any] | None = None, rng: random.Random | None = None,
                 pace: float = 0.0) -> None:
        self.store = store
        self.target = target
        self.pace = pace
        self._allowance = float(target)  # matches it may start now (with a pace)
        self._counted = time.monotonic()
        self.connected = connected
        self.enqueue = enqueue
        self.variant = dict(variant or {})
        self.limits = dict(limits or {})
        self.rng = rng or random.SystemRandom()
        self._seen: str | None = None  # last results-log entry :meth:`wait` has seen

    def running(self) -> list[str]:
        """Ladder matches still in flight; finished ones are dropped from the set."""
        mids = self.store.ladder_running()
        statuses = self.store.statuses(mids)
        finished = [m for m, s in zip(mids, statuses) if s in (DONE, FAILED, None)]
        self.store.drop_ladder_running(finished)
        return [m for m, s in zip(mids, statuses) if s not in (DONE, FAILED, None)]

    def tick(self) -> list[str]:
        """Schedule what is missing; returns the new match ids (empty if another scheduler holds
        the lock). Every competition that plays its ladder shares the ``target``
        (:func:`sueca.arena.competitions.ladder.next_board` says how)."""
        token = self.store.lock(LOCK, ttl=15.0)
        if token is None:
            return []
        try:
            self._mark_seen()  # a result from now on wakes :meth:`wait`
            running = self.running()
            need = min(self.target - len(running), self._paced())
            if need <= 0:
                return []
            free = dict(self.connected())
            registered = self.store.bots.names()
            free = {b: f for b, f in free.items() if b in set(registered)}
            # fair play: a bot the arena's rule suspends sits out of every ladder; one a
            # competition's own rule suspends, of that competition's (Play.sitting_out)
            free = playable(self.store, free)
            records = [m for m in self.store.matches_of(running) if m]
            plays = competition_plays(self.store, registered, present=set(free),
                                      variant=self.variant, limits=self.limits, now=time.time(),
                                      running=records)
            named = {p.name: p for p in plays}
            inflight: dict[str, Counter[str]] = {p.name: Counter() for p in plays}
            by_play: Counter[str] = Counter()
            by_board: Counter[str] = Counter()
            done: set[str] = set()
            for m in records:
                bots = set(m["spec"].get("bots", ()))
                name = m.get("competition") or DEFAULT
                inflight.setdefault(name, Counter()).update(bots)
                by_play[name] += 1
                board = board_of(named[name], list(bots)) if name in named else None
                if board is not None:
                    by_board[board.key] += 1
                    if board.placing is not None:  # one placement match at a time
                        done.add(board.key)
                if m["status"] is not RUNNING:  # running ones are already off `free`; queued
                    for b in bots:            # ones will take their seats
                        if b in free:
                            free[b] -= 2
            recent: dict[str, list[tuple[str, str]]] = {}
            new: list[str] = []
            while len(new) < need:
                chosen = next_board(plays, by_play=by_play, by_board=by_board, done=done)
                if chosen is None:
                    break
                play, board = chosen
                if play.name not in recent:
                    recent[play.name] = self.recent(play.name)
                pairs = pick_pairs({b: f for b, f in free.items() if b in board.bots
                                    and b not in play.sitting_out}, play.fit,
                                   1, rng=self.rng, recent=recent[play.name],
                                   inflight=inflight[play.name])
                if not pairs or board.placing is not None:
                    done.add(board.key)
                if not pairs:
                    continue
                a, b = pairs[0]
                for x in (a, b):
                    free[x] -= 2
                    inflight[play.name][x] += 1
                recent[play.name].append((a, b))
                by_play[play.name] += 1
                by_board[board.key] += 1
                mid = self._start(play, a, b)
                if mid is not None:
                    play.count_placement(self.store, board, (a, b))
                    new.append(mid)
            self._allowance -= len(new)
            return new
        finally:
            self.store.unlock(LOCK, token)

    def recent(self, competition: str = DEFAULT) -> list[tuple[str, str]]:
        """The pairs of the last :data:`RECENT` ladder matches of ``competition`` scheduled,
        oldest first."""
        # stored newest first; the default ladder's under its old key
        return self.store.ladder_recent(RECENT, "" if competition == DEFAULT else competition)[::-1]

    def _start(self, play: Play, a: str, b: str) -> str | None:
        """Create and queue a match of ``a`` and ``b`` in ``play``'s competition; its id, or
        None when its id was taken meanwhile."""
        default = play.name == DEFAULT
        stamp = f"{time.strftime('%Y%m%d%H%M%S')}-{secrets.token_hex(3)}"
        mid = f"ladder-{stamp}" if default else f"{play.name}-{stamp}"
        seats = [a, b, a, b] if self.rng.random() < 0.5 else [b, a, b, a]
        seed = (str(self.rng.getrandbits(64)) if play.secret is None
                else derive_seed(play.secret, mid))
        spec = match_spec(mid, seats, seed=seed, first_dealer=self.rng.randrange(4),
                          variant=play.variant, limits=play.limits)
        versions = {x: play.versions.get(x, 1) for x in (a, b)}
        # the default ladder's results say nothing of versions while both are at their first
        self.store.create_match(mid, spec, tournament="ladder",
                                competition="" if default else play.name,
                                versions=None if default and max(versions.values()) == 1
                                else versions)
        if not self.store.claim(mid):
            return None
        self.store.add_ladder_match(mid, a, b, RECENT, competition="" if default else play.name)
        self.enqueue(mid)
        return mid

    def _paced(self) -> int:
        """How many matches the pace lets it start now (``target`` without one)."""
        if self.pace <= 0:
            return self.target
        now = time.monotonic()
        self._allowance = min(float(self.target),
                              self._allowance + (now - self._counted) * self.pace / 60.0)
        self._counted = now
        return int(self._allowance)

    def _mark_seen(self) -> None:
        self._seen = self.store.last_result() or "0-0"

    def wait(self, timeout: float) -> bool:
        """Block until a result is recorded (a match finished: its slot is free) or ``timeout``
        seconds pass; True if a result came. The timeout is the fallback for what writes no
        result: a match that failed, a bot that connected, a lost task."""
        if self._seen is None:
            self._mark_seen()
        assert self._seen is not None
        got = self.store.wait_results(self._seen, timeout)
        if not got:
            return False
        self._seen = got[-1][0]
        return True


# -- where bots have free seats (the ladder's view of the referees) ---------------------------
def connected_bots(store: Store | None, static: Sequence[str] | None) -> dict[str, int]:
    """Bot -> free seats over the known replicas (or the static list, with ample seats)."""
    if static:
        return {b: 1000 for b in static}
    # grpc and the referee's client cost ~0.5 s of start-up; the web imports this module
    from sueca.arena.match_job import replicas  # deferred: grpc's start-up, above
    from sueca.referee import control  # deferred: grpc's start-up, above
    free: dict[str, int] = {}
    for addr in replicas(store):
        try:
            for b in control.list_bots(addr):
                free[b["bot"]] = free.get(b["bot"], 0) + int(b["free"])
        except Exception as err:  # an unreachable replica must not stop the ladder: say so,
            problem = str(err)    # once per replica and problem, not once a tick
            if _LIST_PROBLEMS.get(addr) != problem:
                _LIST_PROBLEMS[addr] = problem
                logging.getLogger("sueca.scheduler").warning("referee %s: %s", addr, problem)
            continue
        _LIST_PROBLEMS.pop(addr, None)
    return free


_LIST_PROBLEMS: dict[str, str] = {}  # replica -> the problem last logged for it
