"""The bots' health totals in Redis (``stats:bot:{name}``, :mod:`sueca.arena.botstats`): read
for the leaderboard and the bot pages, and folded again from the results log when they are
missing. The result's own script adds to them (:mod:`sueca.arena.store.results`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence

import redis

from sueca.arena import botstats
from sueca.arena.records import BotHealth, ResultEntry
from sueca.arena.store.client import text
from sueca.arena.store.errors import StoreError, TotalsLost
from sueca.arena.store.replays import ReplayStore
from sueca.arena.store.results import ResultsLog

__all__ = ["BotStatsStore"]

log = logging.getLogger("sueca.arena.store")


class BotStatsStore(ResultsLog, ReplayStore):
    """Reading and rebuilding the per-bot health totals."""

    _stats_ready = False  # ensure_bot_stats found them folded (per instance once set)

    def bot_stats(self, names: Sequence[str]) -> dict[str, BotHealth]:
        """Each bot's health totals (:func:`sueca.arena.botstats.summary`), one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for name in names:
            pipe.hgetall(self.keys.bot_stats(name))
        return {name: botstats.summary(raw) for name, raw in zip(names, pipe.execute())}

    def ensure_bot_stats(self) -> bool:
        """Fold the health totals from the log once per arena (:meth:`rebuild_bot_stats`): an
        arena recorded by an older version has results but no totals. True when it folded;
        after that one GET per process."""
        if self._stats_ready:
            return False
        if self.r.exists(self.keys.bot_stats_format()):
            self._stats_ready = True
            return False
        try:
            self.rebuild_bot_stats()
        except TotalsLost as err:  # no later try can do better: said once, not retried
            log.warning("per-bot totals not rebuilt: %s", err)
            self._stats_ready = True
            return False
        except StoreError:  # a busy league: the next recorded result tries again
            return False
        self._stats_ready = True
        return True

    def rebuild_bot_stats(self, attempts: int = 5) -> int:
        """Fold every bot's health totals again from the results log (the stats of an entry
        that has none are read from its replay, :func:`sueca.arena.botstats.stats_of`) and
        swap them in at once; returns the number of bots. A result recorded or a checkpoint
        taken meanwhile makes the swap fail (WATCH) and the fold start over.

        Once retention trimmed the log, the fold starts from the totals the ratings checkpoint
        holds (:func:`sueca.arena.store.ratings.checkpoint` keeps them with the ratings), so
        totals lost from Redis come back exact. A checkpoint taken before it kept them has
        none: then the rebuild is refused (a fold of the tail alone would undercount)."""
        cp_key = self.keys.ratings_checkpoint()
        for _ in range(attempts):
            cut, start = (text(v) for v in self.r.hmget(cp_key, "cursor", "bot_stats"))
            if cut is not None and start is None:
                raise TotalsLost(f"retention trimmed the results log through entry {cut} with a "
                                 "checkpoint that holds no bot totals (made by an older "
                                 "version): the trimmed entries cannot be counted again")
            upto = self.last_result()
            totals = botstats.Totals()
            if start is not None:
                totals.bots = json.loads(start)
            if upto is not None:
                self.fold_bot_stats(totals, (res for _, res in self.results(after=cut,
                                                                            through=upto)))
            with self.r.pipeline() as pipe:
                try:
                    pipe.watch(self.keys.results(), cp_key)  # type: ignore[no-untyped-call]
                    now = pipe.xrevrange(self.keys.results(), "+", "-", count=1)
                    if (text(now[0][0]) if now else None) != upto \
                            or text(pipe.hget(cp_key, "cursor")) != cut:
                        continue
                    old = [text(b) for b in pipe.smembers(self.keys.bot_stats_index())]
                    pipe.multi()
                    pipe.delete(self.keys.bot_stats_index(),
                                *(self.keys.bot_stats(b) for b in old))
                    for bot, row in totals.bots.items():
                        pipe.hset(self.keys.bot_stats(bot), mapping=row)  # type: ignore[arg-type]
                    if totals.bots:
                        pipe.sadd(self.keys.bot_stats_index(), *totals.bots)
                    pipe.set(self.keys.bot_stats_format(), "1")
                    pipe.execute()
                    return len(totals.bots)
                except redis.WatchError:
                    continue
        raise StoreError(f"results kept arriving: the bot stats could not be rebuilt in "
                         f"{attempts} attempts; try again when the league is quieter")

    def fold_bot_stats(self, totals: botstats.Totals, entries: Iterable[ResultEntry]) -> int:
        """Add results-log entries to ``totals``, 500 at a time: the replays of those without
        stats are read in one round trip per batch (an entry whose replay retention already
        archived adds its games and faults, but no moves or renúncias). Returns how many."""
        batch: list[ResultEntry] = []
        n = 0
        for res in entries:
            batch.append(res)
            n += 1
            if len(batch) >= 500:
                self._fold_batch(totals, batch)
                batch = []
        self._fold_batch(totals, batch)
        return n

    def _fold_batch(self, totals: botstats.Totals, batch: list[ResultEntry]) -> None:
        old = [r for r in batch if not isinstance(r.get("stats"), list)]
        got = self.replays([str(r.get("match_id")) for r in old])
        replays = {id(r): rep for r, rep in zip(old, got) if rep is not None}
        for res in batch:
            when = res.get("time")
            totals.add([str(b) for b in res.get("seats") or ()],
                       botstats.stats_of(res, replays.get(id(res))),
                       float(when) if isinstance(when, int | float) else None)
