"""The Redis key layout — the only module that spells a key.

Everything the arena stores lives under one prefix (``sueca:`` by default, so several arenas or
test runs can share a server). Keys:

=====================================  ======  ===============================================
key                                    type    holds
=====================================  ======  ===============================================
``bots``                               set     registered bot names
``bot:{name}``                         hash    ``salt``, ``hash`` (sha256 of salt+token), ``created``
``referees``                           zset    referee address -> last heartbeat (unix time)
``referee:{addr}:bots``                hash    bot name -> free capacity on that replica (TTL)
``tournament:{id}``                    hash    ``spec`` (JSON), ``created``, ``status``
``tournament:{id}:matches``            list    match ids in schedule order
``match:{id}``                         hash    ``spec`` (JSON), ``status``, ``attempts``, ``error``,
                                               ``referee``, ``tournament``, ``updated``
``matches``                            zset    match id -> creation time (for listing)
``results``                            stream  the append-only results log: one entry per result
``recorded:{id}``                      string  the idempotency key: stream entry id of a result
``replay:{id}``                        string  zlib-compressed sueca-replay/1 JSON
``ratings:elo``                        hash    bot -> Elo rating
``ratings:openskill``                  hash    bot -> JSON {mu, sigma}
``ratings:games``                      hash    bot -> rated matches played
``ladder:running``                     set     match ids the ladder has in flight
``lock:{name}``                        string  short-lived scheduler locks (SET NX PX)
=====================================  ======  ===============================================
"""

from __future__ import annotations

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

    def ladder_running(self) -> str:
        return self.prefix + "ladder:running"

    def lock(self, name: str) -> str:
        return f"{self.prefix}lock:{name}"
