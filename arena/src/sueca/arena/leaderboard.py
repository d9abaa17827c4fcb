"""The leaderboard: the registered bots ranked by the rating of record (CLI, demo, exporter, web).

Each row has the rating of record (:mod:`sueca.arena.ratings.fit`: an order-free fit over the
whole results log) of the bot's current version, with its 95% interval, the matches it rests on
and whether the bot is still provisional (a provisional bot is ranked after every established
one), then the *live* columns — incremental Elo and OpenSkill, which move after every game and
depend on the order games finished (see :mod:`sueca.arena.ratings.live`) — and the bot's health
(:mod:`sueca.arena.botstats`): ``faults`` by kind (``renuncia``, ``timeout``, ``disconnect``)
and its move latency ``p50_ms`` and ``p99_ms`` (None without timed turns), and ``connected``
(a referee replica's last heartbeat lists it).

This module owns the row: :func:`rating_columns`, :func:`rank` and :func:`board_row` build it
for the CLI here and for the league's read model (:mod:`sueca.arena.league`, which reads a
cached fit instead of refitting), so that ``/api/leaderboard`` and ``leaderboard --json``
cannot drift.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import NotRequired, TypedDict

from sueca.arena.format import iso_time
from sueca.arena.ratings.fit import Fit
from sueca.arena.ratings.live import Rating
from sueca.arena.records import BotHealth, HealthColumns, LeaderboardRow, RatingColumns
from sueca.arena.store import Store
from sueca.arena.store.ratings import fit_of_record, load

__all__ = ["leaderboard", "ORDERS", "ORDER_KEYS", "rating_columns", "health_columns", "rank",
           "RankedColumns", "SortColumns", "DECIMALS", "json_row", "BoardRow", "board_row",
           "connected_bots"]

#: ``--by``: the rating of record (default), live Elo, or OpenSkill's conservative mu - 3 sigma
ORDERS = ("rating", "elo", "openskill")

#: sort keys of :data:`ORDERS`, best first (ties by name, so the order is stable)
ORDER_KEYS: dict[str, Callable[[SortColumns], tuple[float, str]]] = {
    "rating": lambda r: (-r["rating"], r["bot"]),
    "elo": lambda r: (-r["elo"], r["bot"]),
    "openskill": lambda r: (-r["ordinal"], r["bot"]),
}


class SortColumns(TypedDict):
    """What the orders sort by: any row with these columns (the CLI's, the web's)."""

    bot: str
    rating: float
    elo: float
    ordinal: float
    games: int


class RankedColumns(RatingColumns):
    """A bot's rating columns (:func:`rating_columns`) and, once ranked, its ``rank``."""

    bot: str
    rank: NotRequired[int]


def rating_columns(bot: str, of_record: Fit, live: Rating) -> RankedColumns:
    """``bot`` and its rating columns: the rating of record (the initial rating with no ± for a
    bot the fit has not seen yet), then the live ones (they keep their names: elo, elo_pm, mu,
    ..., games, where a duplicate pair counts once)."""
    cols = live.as_dict()
    return {"bot": bot, "rating": of_record.rating.get(bot, of_record.initial),
            "rating_pm": of_record.pm.get(bot), "matches": of_record.games.get(bot, 0),
            "provisional": of_record.provisional(bot), "elo": cols["elo"],
            "elo_pm": cols["elo_pm"], "mu": cols["mu"], "mu_pm": cols["mu_pm"],
            "sigma": cols["sigma"], "ordinal": cols["ordinal"], "games": cols["games"],
            "score": cols["score"]}


class BoardRow(LeaderboardRow):
    """A leaderboard row as the CLI and the web show it: with ``connected``, whether a referee
    replica's last heartbeat lists the bot (a bot that died, or was never started, says no),
    and ``version``, the bot's current version (whose rating of record the row shows)."""

    connected: bool
    version: int


def connected_bots(store: Store) -> set[str]:
    """The bots some live referee replica's last heartbeat lists as connected."""
    return store.bots_on(store.referees())


def board_row(r: RankedColumns, health: BotHealth, *, connected: bool,
              version: int = 1) -> BoardRow:
    """A ranked bot's row: its rating columns, its health, whether it is connected and its
    current version."""
    return {"rank": r.get("rank", 0), "bot": r["bot"], "rating": r["rating"],
            "rating_pm": r["rating_pm"], "matches": r["matches"], "provisional": r["provisional"],
            "elo": r["elo"], "elo_pm": r["elo_pm"], "mu": r["mu"], "mu_pm": r["mu_pm"],
            "sigma": r["sigma"], "ordinal": r["ordinal"], "games": r["games"],
            "score": r["score"], **health_columns(health), "connected": connected,
            "version": version}


def health_columns(h: BotHealth) -> HealthColumns:
    """The row's health columns from the bot's totals (:meth:`Store.bot_stats`)."""
    return {"faults": h["faults"], "p50_ms": h["p50_ms"], "p99_ms": h["p99_ms"]}


def rank(rows: Iterable[RankedColumns], by: str = "rating") -> list[RankedColumns]:
    """The rows in ``by``'s order, best first, each with its ``rank`` (1 = best): the established
    bots first, then the provisional ones (fewer than
    :data:`~sueca.arena.ratings.fit.PROVISIONAL_GAMES` rated matches), each group in ``by``'s
    order. A rating resting on a handful of matches is a guess; ranked among the others, a bot
    with nine lucky matches would sit above one with two thousand."""
    key = ORDER_KEYS[by]
    out = sorted(rows, key=lambda r: (r["provisional"], key(r)))
    for n, row in enumerate(out, 1):
        row["rank"] = n
    return out


def leaderboard(store: Store, by: str = "rating") -> list[BoardRow]:
    """The ranked rows (``leaderboard --json``, ``bots list``, the demo and the exporter),
    from a rating of record fitted now; the web's read model reads a cached one instead."""
    if by not in ORDERS:
        raise ValueError(f"bad order {by!r}: one of {', '.join(ORDERS)}")
    of_record = fit_of_record(store)  # catches up first: a worker that died between recording
    registered = set(store.bots.names())  # and rating leaves nothing behind
    ratings = {bot: r for bot, r in load(store).items() if bot in registered}
    health = store.bot_stats(list(ratings))
    online = connected_bots(store)
    rows = rank((rating_columns(bot, of_record, r) for bot, r in ratings.items()), by)
    versions = store.versions.currents(list(ratings))
    return [board_row(row, health[row["bot"]], connected=row["bot"] in online,
                      version=versions.get(row["bot"], 1)) for row in rows]


#: Decimals each float column keeps in JSON (``/api/leaderboard``): ratings to a tenth of a
#: point (their intervals are tens of points wide), OpenSkill to a hundredth (its μ is ~25),
#: the score and move latencies to a hundredth.
DECIMALS = {"rating": 1, "rating_pm": 1, "elo": 1, "elo_pm": 1, "mu": 2, "mu_pm": 2,
            "sigma": 2, "ordinal": 2, "score": 2, "p50_ms": 2, "p99_ms": 2}


def json_row(row: Mapping[str, object]) -> dict[str, object]:
    """A leaderboard row for JSON readers: floats rounded to :data:`DECIMALS`, NaN and infinity
    as None, ``last_seen`` (when the row has it) as :func:`iso_time`."""
    out = dict(row)
    for key, digits in DECIMALS.items():
        value = out.get(key)
        if isinstance(value, float):
            out[key] = round(value, digits) if math.isfinite(value) else None
    if "last_seen" in out:
        out["last_seen"] = iso_time(out["last_seen"])
    return out
