"""Hosted bots' records: submissions, which bot host runs which bot, and the owners' logs.

* ``submission:{sha256}`` holds a submission's canonical archive (at most a few MiB:
  :data:`sueca.arena.hosted.archive.MAX_ARCHIVE`), so that every bot host, on any machine,
  fetches it from the one place the whole arena already reaches; kept while the bot's
  versions are (``bots remove`` drops them).
* ``hosted`` maps each hosted bot to the version and submission that should run.
* ``hosted:hosts`` (heartbeats) and ``hosted:owner:{bot}`` (a claim with a TTL its host
  renews): a bot is run by the one host holding its claim; when that host stops renewing (it
  died), the claim expires after :data:`OWNER_TTL` seconds and another live host takes it.
* ``hosted:log:{bot}:{version}``: the bot's standard error and its runner's lines, capped
  (:data:`LOG_LINES` entries of at most :data:`LOG_CHARS` characters), readable only through
  :meth:`HostedStore.log` after the caller proved ownership.
"""

from __future__ import annotations

import json
import math
import time
from typing import TypedDict, cast

from sueca.arena.store.client import Entries, StoreBase, text, texts
from sueca.sdk.logs import printable

__all__ = ["HostedStore", "HostedBot", "LogLine", "OWNER_TTL", "HOST_TTL", "LOG_LINES",
           "LOG_CHARS", "LOG_KEEP_SECONDS"]

OWNER_TTL = 10.0   # seconds a bot's claim outlives its host's last renewal
HOST_TTL = 10.0    # seconds a host counts as live after its last heartbeat
LOG_LINES = 2000   # entries kept per bot version (the oldest go first)
LOG_CHARS = 500    # characters of one entry, escaped
LOG_KEEP_SECONDS = 30 * 86400  # a version's log is dropped this long after its last line

# renew the claim only if it is still ours; release likewise
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class HostedBot(TypedDict):
    """What should run for a hosted bot: its ``version`` and ``submission`` (sha256)."""

    version: int
    submission: str
    at: float


class LogLine(TypedDict):
    at: float
    line: str


class HostedStore(StoreBase):
    """Hosted bots in Redis (see the module's docstring)."""

    # -- submissions ---------------------------------------------------------------------
    def put_submission(self, sha256: str, archive: bytes) -> bool:
        """Store a canonical archive under its hash (the same bytes once, whoever sends them);
        whether it is new."""
        return bool(self.r.set(self.keys.submission(sha256), archive, nx=True))

    def drop_submission(self, sha256: str) -> None:
        """Forget an archive that no version came to play."""
        self.r.delete(self.keys.submission(sha256))

    def drop_unused(self, shas: list[str]) -> None:
        """Forget the archives among ``shas`` that no hosted bot runs now (those of a removed
        bot's versions: the same files submitted for another bot keep theirs)."""
        in_use = {h["submission"] for h in self.hosted().values()}
        gone = [self.keys.submission(sha) for sha in set(shas) - in_use]
        if gone:
            self.r.delete(*gone)

    def submission(self, sha256: str) -> bytes | None:
        got = self.r.get(self.keys.submission(sha256))
        return got if isinstance(got, bytes) else None

    def host(self, bot: str, *, version: int, submission: str) -> None:
        """From now on ``bot`` runs ``submission`` as ``version`` on the bot hosts."""
        entry: HostedBot = {"version": version, "submission": submission, "at": time.time()}
        self.r.hset(self.keys.hosted(), bot, json.dumps(entry))

    def unhost(self, bot: str) -> None:
        self.r.hdel(self.keys.hosted(), bot)

    def hosted(self) -> dict[str, HostedBot]:
        """Every hosted bot and what it should run, one round trip."""
        out: dict[str, HostedBot] = {}
        for name, raw in self.r.hgetall(self.keys.hosted()).items():
            out[text(name)] = json.loads(raw)
        return out

    # -- bot hosts and claims --------------------------------------------------------------
    def heartbeat(self, host: str) -> list[str]:
        """Say ``host`` is alive; the live hosts (this one among them), by name."""
        now = time.time()
        pipe = self.r.pipeline(transaction=False)
        pipe.zadd(self.keys.hosted_hosts(), {host: now})
        pipe.zremrangebyscore(self.keys.hosted_hosts(), "-inf", now - 10 * HOST_TTL)
        pipe.zrangebyscore(self.keys.hosted_hosts(), now - HOST_TTL, "+inf")
        return texts(pipe.execute()[2])

    def leave(self, host: str) -> None:
        self.r.zrem(self.keys.hosted_hosts(), host)

    def owners(self, bots: list[str]) -> dict[str, str | None]:
        """Each bot's host, None when unclaimed."""
        if not bots:
            return {}
        got = self.r.mget([self.keys.hosted_owner(b) for b in bots])
        return {b: text(v) for b, v in zip(bots, got)}

    def claim(self, bot: str, host: str) -> bool:
        """Take the unclaimed ``bot`` for ``host``."""
        return bool(self.r.set(self.keys.hosted_owner(bot), host, nx=True,
                               px=int(OWNER_TTL * 1000)))

    def renew(self, bots: list[str], host: str) -> list[str]:
        """Renew ``host``'s claims on ``bots``; the bots it still holds."""
        script = self.script(_RENEW)
        pipe = self.r.pipeline(transaction=False)
        for bot in bots:
            script(keys=[self.keys.hosted_owner(bot)], args=[host, int(OWNER_TTL * 1000)],
                   client=pipe)
        return [b for b, ok in zip(bots, pipe.execute()) if ok]

    def release(self, bot: str, host: str) -> None:
        self.script(_RELEASE)(keys=[self.keys.hosted_owner(bot)], args=[host])

    # -- owners' logs ----------------------------------------------------------------------
    def append_log(self, bot: str, version: int, lines: list[str]) -> None:
        """Add ``lines`` (each escaped and cut here) to the log of ``bot``'s ``version``."""
        if not lines:
            return
        key = self.keys.hosted_log(bot, version)
        pipe = self.r.pipeline(transaction=False)
        now = f"{time.time():.3f}"
        for line in lines:
            pipe.xadd(key, {"at": now, "line": printable(line, LOG_CHARS)},
                      maxlen=LOG_LINES, approximate=False)
        pipe.expire(key, LOG_KEEP_SECONDS)
        pipe.execute()

    def log(self, bot: str, version: int, last: int = LOG_LINES) -> list[LogLine]:
        """The last ``last`` lines of ``bot``'s ``version`` log, oldest first."""
        raw = cast(Entries, self.r.xrevrange(self.keys.hosted_log(bot, version),
                                             count=max(1, last)))
        return [{"at": float(fields[b"at"]), "line": text(fields[b"line"])}
                for _, fields in reversed(raw)]


def fair_share(bots: int, hosts: int) -> int:
    """How many bots one of ``hosts`` live hosts runs: an even split, rounded up."""
    return math.ceil(bots / max(1, hosts))
