"""The leaderboard: live ratings of the registered bots, best first (CLI, demo, exporter)."""

from __future__ import annotations

from typing import Any


def leaderboard(store: Any, by: str = "elo") -> list[dict[str, Any]]:
    from sueca.arena.bots import BotRegistry
    from sueca.arena.ratings import catch_up, load
    catch_up(store)  # a worker that died between recording and rating leaves nothing behind
    registered = set(BotRegistry(store.r, store.keys).names())
    rows = []
    for bot, r in load(store).items():
        if bot in registered:
            rows.append({"bot": bot, **r.as_dict()})
    key = (lambda r: -r["elo"]) if by == "elo" else (lambda r: -r["ordinal"])
    rows.sort(key=lambda r: (key(r), r["bot"]))
    for n, r in enumerate(rows, 1):
        r["rank"] = n
    return rows


__all__ = ["leaderboard"]
