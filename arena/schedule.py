"""Who plays whom: round-robin tournaments and the continuous ladder's pairings.

Round-robin: every pair of bots (A, B) plays ``k`` matches, A in seats 0 and 2 against B in 1
and 3, then the other way round. The first dealer moves one seat every two matches, so over a
pair's matches both bots deal first and both teams lead first equally often.

Duplicate (``duplicate=True``): the matches come in pairs that share one seed and one first
dealer — the same decks — with the teams swapped, so each bot plays the cards the other had.
The pair is scored together (see :func:`sueca.arena.ratings.pair_outcome`).

Seeds come from a random secret kept in the tournament's spec: a bot that knows the tournament id
and the pairings still cannot compute the decks. A schedule is a pure function of the spec, so
re-running a tournament id rebuilds exactly the same matches.

Ladder: :func:`pick_pairs` chooses among bots with free capacity, favouring bots with few games
and, for each, the opponent with the closest Elo; :class:`Ladder` keeps a target number of
matches in flight, under a Redis lock so that two schedulers never exceed it.
"""

from __future__ import annotations

import hashlib
import logging
import random
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .store import DONE, FAILED, Store, text

__all__ = ["round_robin", "tournament_spec", "same_tournament", "pick_pairs", "Ladder", "connected_bots",
           "derive_seed", "match_spec"]


def derive_seed(secret: str, *parts: object) -> str:
    """A 64-bit match seed from the tournament secret and the match's place in the schedule."""
    digest = hashlib.sha256(":".join([secret, *map(str, parts)]).encode()).digest()
    return str(int.from_bytes(digest[:8], "big"))


def match_spec(mid: str, seats: Sequence[str], seed: str, first_dealer: int,
               variant: Mapping[str, Any], limits: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The spec the referee runs (``MatchSpec`` in the proto, as a dict)."""
    spec: dict[str, Any] = {"match_id": mid, "bots": list(seats), "variant": dict(variant),
                            "seed": seed, "first_dealer": first_dealer}
    for key, value in (limits or {}).items():
        if value is not None:
            spec[key] = value
    return spec


def tournament_spec(bots: Sequence[str], matches_per_pair: int, duplicate: bool,
                    variant: Mapping[str, Any], limits: Mapping[str, Any] | None = None,
                    secret: str | None = None) -> dict[str, Any]:
    if len(bots) < 2:
        raise ValueError(f"a round-robin needs at least 2 bots, got {list(bots)!r}")
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


def same_tournament(stored: Mapping[str, Any], asked: Mapping[str, Any]) -> bool:
    """Two specs describe the same tournament when all but the secret agree."""
    return ({k: v for k, v in stored.items() if k != "secret"}
            == {k: v for k, v in asked.items() if k != "secret"})


def round_robin(tid: str, spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The matches of a round-robin, ``[{"id", "spec", "pair"}]``, in the order they are queued:
    round by round over all pairs, so partial progress covers every pair evenly."""
    bots = list(spec["bots"])
    k = int(spec["matches_per_pair"])
    duplicate = bool(spec["duplicate"])
    secret = spec["secret"]
    variant = spec["variant"]
    limits = spec.get("limits") or {}
    pairs = [(bots[i], bots[j]) for i in range(len(bots)) for j in range(i + 1, len(bots))]
    out: list[dict[str, Any]] = []

    def add(seats: list[str], seed: str, dealer: int, pair: str) -> None:
        mid = f"{tid}-{len(out):04d}"
        out.append({"id": mid, "pair": pair,
                    "spec": match_spec(mid, seats, seed, dealer, variant, limits)})

    if duplicate:
        for p in range(k // 2):
            for a, b in pairs:  # both halves: one seed, one first dealer, teams swapped
                seed = derive_seed(secret, a, b, p)
                add([a, b, a, b], seed, p % 4, f"{tid}/{a}/{b}/{p}")
                add([b, a, b, a], seed, p % 4, f"{tid}/{a}/{b}/{p}")
    else:
        for j in range(k):
            for a, b in pairs:  # the dealing bot alternates, the dealing seat rotates
                add([a, b, a, b] if j % 2 == 0 else [b, a, b, a], derive_seed(secret, a, b, j),
                    (j // 2) % 4, "")
    return out


# -- ladder ------------------------------------------------------------------------------------
def pick_pairs(free: Mapping[str, int], stats: Mapping[str, tuple[float, int]], n: int,
               rng: random.Random | None = None) -> list[tuple[str, str]]:
    """Up to ``n`` pairs of distinct bots from ``free`` (bot -> free seats; a 2-bot match takes
    two seats of each). ``stats`` gives (Elo, games) of rated bots; unrated bots count as 1500
    with 0 games.

    Each pick takes the bot with the fewest games (ties broken at random, so no bot starves),
    then the opponent minimising ``|Elo difference| + 10 * its games / (1 + mean games)`` plus a
    little noise: close ratings first, and among them bots that need games.
    """
    rng = rng or random.Random()
    free = {b: f for b, f in free.items() if f >= 2}
    games = {b: stats.get(b, (1500.0, 0))[1] for b in free}
    elo = {b: stats.get(b, (1500.0, 0))[0] for b in free}
    picked: list[tuple[str, str]] = []
    while len(picked) < n:
        live = [b for b, f in free.items() if f >= 2]
        if len(live) < 2:
            break
        rng.shuffle(live)
        a = min(live, key=lambda b: games[b])
        mean = sum(games.values()) / max(1, len(games))
        others = [b for b in live if b != a]
        b = min(others, key=lambda o: abs(elo[o] - elo[a]) + 10.0 * games[o] / (1.0 + mean)
                + rng.random() * 5.0)
        picked.append((a, b))
        for x in (a, b):
            free[x] -= 2
            games[x] += 1
    return picked


class Ladder:
    """Keeps ``target`` ladder matches in flight.

    ``connected()`` returns bot -> free seats (from the referee replicas); ``enqueue(mid)``
    sends the match's task. One :meth:`tick` runs under the ``ladder`` lock, so two schedulers
    (say, one per host for availability) never exceed ``target`` nor pick the same slot twice.
    """

    def __init__(self, store: Store, target: int, connected: Callable[[], Mapping[str, int]],
                 enqueue: Callable[[str], None], variant: Mapping[str, Any] | None = None,
                 limits: Mapping[str, Any] | None = None, rng: random.Random | None = None) -> None:
        self.store = store
        self.target = target
        self.connected = connected
        self.enqueue = enqueue
        self.variant = dict(variant or {})
        self.limits = dict(limits or {})
        self.rng = rng or random.SystemRandom()

    def running(self) -> list[str]:
        """Ladder matches still in flight; finished ones are dropped from the set."""
        key = self.store.keys.ladder_running()
        mids = sorted(text(m) for m in self.store.r.smembers(key))
        statuses = self.store.statuses(mids)
        finished = [m for m, s in zip(mids, statuses) if s in (DONE, FAILED, None)]
        if finished:
            self.store.r.srem(key, *finished)
        return [m for m, s in zip(mids, statuses) if s not in (DONE, FAILED, None)]

    def tick(self) -> list[str]:
        """Schedule what is missing; returns the new match ids (empty if another scheduler holds
        the lock)."""
        from .ratings import load
        token = self.store.lock("ladder", ttl=15.0)
        if token is None:
            return []
        try:
            running = self.running()
            need = self.target - len(running)
            if need <= 0:
                return []
            free = dict(self.connected())
            registered = set(text(b) for b in self.store.r.smembers(self.store.keys.bots()))
            free = {b: f for b, f in free.items() if b in registered}
            # seats that queued-but-not-started ladder matches will take
            for mid in running:
                m = self.store.match(mid)
                if m and m["status"] != "running":  # running ones are already off `free`
                    for b in set(m["spec"].get("bots", ())):
                        if b in free:
                            free[b] -= 2
            stats = {b: (r.elo, r.games) for b, r in load(self.store).items()}
            new = []
            for a, b in pick_pairs(free, stats, need, self.rng):
                mid = f"ladder-{time.strftime('%Y%m%d%H%M%S')}-{secrets.token_hex(3)}"
                seats = [a, b, a, b] if self.rng.random() < 0.5 else [b, a, b, a]
                spec = match_spec(mid, seats, str(self.rng.getrandbits(64)),
                                  self.rng.randrange(4), self.variant, self.limits)
                self.store.create_match(mid, spec, tournament="ladder")
                if self.store.claim(mid):
                    self.store.r.sadd(self.store.keys.ladder_running(), mid)
                    self.enqueue(mid)
                    new.append(mid)
            return new
        finally:
            self.store.unlock("ladder", token)


# -- where bots have free seats (the ladder's view of the referees) ---------------------------
def connected_bots(store: Any, static: Sequence[str] | None) -> dict[str, int]:
    """Bot -> free seats over the known replicas (or the static list, with ample seats)."""
    if static:
        return {b: 1000 for b in static}
    from sueca.arena.runner import replicas
    free: dict[str, int] = {}
    try:
        from sueca.referee import control
    except ImportError:
        return free
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
