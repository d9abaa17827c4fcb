"""The leaderboard: the registered bots ranked by the rating of record (CLI, demo, exporter).

Each row has the rating of record (:mod:`sueca.arena.record`: an order-free fit over the whole
results log) with its 95% interval, the matches it rests on and whether the bot is still
provisional, then the *live* columns — incremental Elo and OpenSkill, which move after every
game and depend on the order games finished (see :mod:`sueca.arena.ratings`) — and the bot's
health (:mod:`sueca.arena.botstats`): ``faults`` by kind (``renuncia``, ``timeout``,
``disconnect``) and its move latency ``p50_ms`` and ``p99_ms`` (None without timed turns).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from .records import LeaderboardRow

__all__ = ["leaderboard", "ORDERS"]

#: ``--by``: the rating of record (default), live Elo, or OpenSkill's conservative mu - 3 sigma
ORDERS = ("rating", "elo", "openskill")


def leaderboard(store: Any, by: str = "rating") -> list[LeaderboardRow]:
    from .bots import BotRegistry
    from .ratings import load, record
    if by not in ORDERS:
        raise ValueError(f"bad order {by!r}: one of {', '.join(ORDERS)}")
    of_record = record(store)  # catches up first: a worker that died between recording and
    registered = set(BotRegistry(store.r, store.keys).names())  # rating leaves nothing behind
    rows: list[dict[str, Any]] = []
    ratings = {bot: r for bot, r in load(store).items() if bot in registered}
    health = store.bot_stats(list(ratings))
    for bot, r in ratings.items():
        h = health[bot]
        # the live columns keep their names (elo, elo_pm, mu, ..., games: pairs count once)
        rows.append({"bot": bot, "rating": of_record.rating.get(bot, of_record.initial),
                     "rating_pm": of_record.pm.get(bot), "matches": of_record.games.get(bot, 0),
                     "provisional": of_record.provisional(bot), **r.as_dict(),
                     "faults": h["faults"], "p50_ms": h["p50_ms"], "p99_ms": h["p99_ms"]})
    key: Callable[[dict[str, Any]], float] = {"rating": lambda r: -r["rating"], "elo": lambda r: -r["elo"],
           "openskill": lambda r: -r["ordinal"]}[by]
    rows.sort(key=lambda r: (key(r), r["bot"]))
    for n, row in enumerate(rows, 1):
        row["rank"] = n
    return cast(list[LeaderboardRow], rows)
