"""The Redis key layout — the only module that spells a key.

Everything the arena stores lives under one prefix (``sueca:`` by default, so several arenas or
test runs can share a server; ``SUECA_KEY_PREFIX`` sets it for every process, see
:func:`default_keys`). Keys:

=====================================  ======  ===============================================
key                                    type    holds
=====================================  ======  ===============================================
``bots``                               set     registered bot names
``bot:{name}``                         hash    ``salt``, ``hash`` (sha256 of salt+token), ``created``,
                                               ``version`` (the current one; absent: 1)
``bot:{name}:versions``                hash    version number -> JSON of who started it, when,
                                               its note and hosted submission (absent: only
                                               version 1, from ``created``)
``versions:started``                   string  how many versions were started (a counter the
                                               pages' caches watch)
``competitions``                       zset    competition name -> creation time
``competition:{name}``                 hash    ``spec`` (JSON), ``state`` (draft, open, frozen,
                                               final, closed), ``created``, ``seed_hash``
                                               (public), ``secret`` (the seed key: shown only
                                               once closed)
``competition:{name}:log``             list    JSON of each state change: from, to, when, who
``competition:{name}:entries``         hash    bot -> JSON entry (when, who, the version that
                                               plays, division, placement matches played)
``competition:{name}:divisions``       list    JSON of each change of its divisions: the split,
                                               a newcomer placed, a promotion cycle (when, who,
                                               each bot's move)
``referees``                           zset    referee address -> last heartbeat (unix time),
                                               written by each referee started with --redis
``referee:{addr}:bots``                hash    bot name -> free capacity on that replica (TTL)
``tournament:{id}``                    hash    ``spec`` (JSON), ``created``, ``status``, ``total``
``tournament:{id}:matches``            list    match ids in schedule order
``tournaments``                        zset    tournament id -> creation time (for listing)
``match:{id}``                         hash    ``spec`` (JSON, the referee's MatchSpec),
                                               ``status`` (pending, queued, running, done,
                                               failed), ``attempts``, ``error``, ``referee``,
                                               ``tournament``, ``pair`` (duplicate pair id),
                                               ``competition``, ``versions`` (JSON bot ->
                                               version scheduled),
                                               ``updated``, ``result`` (stream entry id), ``end``
``matches``                            zset    match id -> creation time (for listing)
``results``                            stream  the append-only results log: one entry per
                                               result, field ``data`` = result JSON
``recorded:{id}``                      string  the idempotency key: stream entry id of a result
                                               (a tournament's match keeps it when retention
                                               archives the match: :mod:`sueca.arena.retention`)
``replay:{id}``                        string  zlib-compressed sueca-replay/1 JSON
``ratings:elo``                        hash    bot -> Elo rating (float repr)
``ratings:openskill``                  hash    bot -> JSON {mu, sigma}
``ratings:games``                      hash    bot -> rated games played (a duplicate pair is one)
``ratings:score``                      hash    bot -> rated score (win 1, draw 1/2), for Elo's ±
``ratings:pending``                    hash    duplicate pair id -> JSON of the half whose twin
                                               is not in the log yet
``ratings:cursor``                     string  last results-log entry folded into the ratings
``ratings:rebuilding``                 string  set while a rebuild runs (expires): the live
                                               fold waits, results stay in the log
``ratings:config``                     hash    ``elo_k``, ``elo_initial``: how to rebuild them;
                                               ``format`` (older ratings are rebuilt once)
``ratings:matchups``                   hash    the rating of record's sufficient statistics:
                                               ``g:{matchup}`` matches, ``w:{matchup}`` wins of
                                               its first side (:mod:`sueca.arena.ratings.fit`)
``ratings:record``                     hash    the last fit of record (``cursor`` it was fit
                                               at, ``fit`` JSON): a cache, refit when stale
``ratings:matchups:{competition}``     hash    a named competition's own matchup counts (as
                                               ``ratings:matchups``, of its results only)
``ratings:record:{competition}``       hash    its last fit of record (as ``ratings:record``)
``ratings:competitions``               set     the competitions that have such counts (what a
                                               rebuild replaces)
``ratings:checkpoint``                 hash    the live fold's whole state at results entry
                                               ``cursor`` (``state`` JSON, ``results`` count,
                                               ``elo_k``, ``elo_initial``): the results log is
                                               trimmed up to ``cursor`` and a rebuild starts
                                               here (:mod:`sueca.arena.retention`)
``ladder:running``                     set     match ids the ladder has in flight
``ladder:recent``                      list    the bots of the last 100 ladder matches
                                               scheduled, newest first (``a b``), for the
                                               newcomers' cap
``competition:{name}:ladder-recent``   list    the same for competition ``name``'s ladder
``inflight``                           zset    match id -> time it was queued, for every match
                                               queued or running (the reaper's work list)
``lease:{id}``                         string  owner (host/pid/task id) of the attempt playing
                                               match ``id``; a TTL the owner's heartbeat
                                               renews every few seconds: gone = owner dead
``lock:{name}``                        string  short-lived scheduler locks (SET NX PX)
``stats:bot:{name}``                   hash    a bot's health totals (:mod:`sueca.arena.botstats`):
                                               ``games``, ``moves``, ``renuncias``,
                                               ``timeouts``, ``disconnects``, ``turns``,
                                               ``max_us``, ``last``, latency buckets
                                               ``h0``..``h16``; written with the result
``stats:bots``                         set     bot names that have a ``stats:bot:`` hash
``stats:format``                       string  set by the first fold of those totals from the
                                               log (an arena older than them is folded once)
``metrics:bots``                       zset    bot -> when a worker first saw it: the first
                                               ``SUECA_METRICS_MAX_BOTS`` get their own
                                               Prometheus label (:mod:`sueca.arena.metrics`)
``celery:*``                           (any)   the Celery broker's own keys (kombu
                                               ``global_keyprefix``): queues, unacked messages
=====================================  ======  ===============================================
"""

from __future__ import annotations

from sueca.arena.settings import current

DEFAULT_PREFIX = "sueca:"


class Keys:
    """Key names under one prefix; every method returns a ``str`` key."""

    __slots__ = ("prefix",)

    def __init__(self, prefix: str = DEFAULT_PREFIX) -> None:
        self.prefix = prefix

    def bots(self) -> str:
        return self.prefix + "bots"

    def bot(self, name: str) -> str:
        return f"{self.prefix}bot:{name}"

    def bot_versions(self, name: str) -> str:
        return f"{self.prefix}bot:{name}:versions"

    def versions_started(self) -> str:
        return self.prefix + "versions:started"

    def competitions(self) -> str:
        return self.prefix + "competitions"

    def competition(self, name: str) -> str:
        return f"{self.prefix}competition:{name}"

    def competition_log(self, name: str) -> str:
        return f"{self.prefix}competition:{name}:log"

    def competition_entries(self, name: str) -> str:
        return f"{self.prefix}competition:{name}:entries"

    def competition_divisions(self, name: str) -> str:
        return f"{self.prefix}competition:{name}:divisions"

    def referees(self) -> str:
        return self.prefix + "referees"

    def referee_bots(self, address: str) -> str:
        return f"{self.prefix}referee:{address}:bots"

    def tournament(self, tid: str) -> str:
        return f"{self.prefix}tournament:{tid}"

    def tournament_matches(self, tid: str) -> str:
        return f"{self.prefix}tournament:{tid}:matches"

    def match(self, mid: str) -> str:
        return f"{self.prefix}match:{mid}"

    def matches(self) -> str:
        return self.prefix + "matches"

    def results(self) -> str:
        return self.prefix + "results"

    def recorded(self, mid: str) -> str:
        return f"{self.prefix}recorded:{mid}"

    def replay(self, mid: str) -> str:
        return f"{self.prefix}replay:{mid}"

    def ratings(self, system: str) -> str:
        return f"{self.prefix}ratings:{system}"

    def ratings_pending(self) -> str:
        return self.prefix + "ratings:pending"

    def ratings_cursor(self) -> str:
        return self.prefix + "ratings:cursor"

    def ratings_rebuilding(self) -> str:
        return self.prefix + "ratings:rebuilding"

    def ratings_config(self) -> str:
        return self.prefix + "ratings:config"

    def ratings_matchups(self, competition: str = "") -> str:
        """The rating of record's counts: the arena's, or a named competition's own."""
        return self.prefix + "ratings:matchups" + (f":{competition}" if competition else "")

    def ratings_record(self, competition: str = "") -> str:
        """The cached fit of record: the arena's, or a named competition's own."""
        return self.prefix + "ratings:record" + (f":{competition}" if competition else "")

    def ratings_competitions(self) -> str:
        return self.prefix + "ratings:competitions"

    def ratings_checkpoint(self) -> str:
        return self.prefix + "ratings:checkpoint"

    def retention_schedule(self) -> str:
        return self.prefix + "retention:schedule"

    def ladder_recent(self, competition: str = "") -> str:
        """The last ladder pairs of ``competition`` ("": the default ladder)."""
        if competition:
            return f"{self.prefix}competition:{competition}:ladder-recent"
        return self.prefix + "ladder:recent"

    def ladder_running(self) -> str:
        return self.prefix + "ladder:running"

    def inflight(self) -> str:
        return self.prefix + "inflight"

    def lease(self, mid: str) -> str:
        return f"{self.prefix}lease:{mid}"

    def lock(self, name: str) -> str:
        return f"{self.prefix}lock:{name}"

    def bot_stats(self, name: str) -> str:
        return f"{self.prefix}stats:bot:{name}"

    def bot_stats_index(self) -> str:
        return self.prefix + "stats:bots"

    def bot_stats_format(self) -> str:
        return self.prefix + "stats:format"

    def metrics_bots(self) -> str:
        return self.prefix + "metrics:bots"

    def tournaments(self) -> str:
        return self.prefix + "tournaments"

    def celery_prefix(self) -> str:
        """Prefix of every key the Celery broker (kombu) and result backend write."""
        return self.prefix + "celery:"


def default_keys() -> Keys:
    """The key layout under ``SUECA_KEY_PREFIX`` (default ``sueca:``): every process of one
    arena — CLI, workers, exporter — must agree on it."""
    return Keys(current().key_prefix)
