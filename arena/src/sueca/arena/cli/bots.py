"""``sueca-arena bots add|list|remove``: the bot registry (tokens are shown once, stored hashed)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from sueca.arena.cli.common import (
    Column,
    UserError,
    add_redis_action,
    clean,
    console,
    fitted_table,
    fmt,
    open_store,
)

if TYPE_CHECKING:
    from sueca.arena.store import Store
    from sueca.arena.store.bots import BotRegistry


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bots", help="register, list and remove bots")
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add_redis_action(acts, "add", "register a bot and print its token (shown only once)",
                     cmd_add).add_argument("name")
    add_redis_action(acts, "list", "registered bots with the rating the leaderboard ranks by",
                     cmd_list)
    add_redis_action(acts, "remove", "unregister a bot (its results stay in the log)", cmd_remove,
                     with_json=False).add_argument("name")


def _registry(args: argparse.Namespace) -> tuple[Store, BotRegistry]:
    store = open_store(args)
    return store, store.bots


def cmd_add(args: argparse.Namespace) -> int:
    from sueca.arena.store.bots import BotRegistryError
    _, registry = _registry(args)
    try:
        token = registry.add(args.name)
    except BotRegistryError as err:
        raise UserError(str(err)) from None
    if args.json:
        print(json.dumps({"bot": args.name, "token": token}))
    else:
        print(token)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """The registered bots, by name, with the leaderboard's rating of record (its rank too) and
    the live Elo beside it; a bot with no rated match is unrated."""
    from sueca.arena.leaderboard import json_row, leaderboard
    store, registry = _registry(args)
    board = {r["bot"]: r for r in leaderboard(store)}
    rows: list[dict[str, Any]] = []  # the --json rows: a bot's leaderboard row, or no games
    for name in registry.names():
        row = board.get(name)
        rows.append(json_row(row) if row is not None else {"bot": name, "games": 0})
    if args.json:
        print(json.dumps(clean(rows), indent=2))
        return 0
    if not rows:
        print("no bots registered: `sueca-arena bots add NAME`")
        return 0
    out = console()
    cells = [[r["bot"] + (" ?" if r.get("provisional") else ""),
              "unrated" if r.get("rating") is None else f"{r['rating']:.0f} ± {fmt(r['rating_pm'])}",
              "" if r.get("rank") is None else str(r["rank"]), str(r.get("matches", 0)),
              "" if r.get("elo") is None else f"{r['elo']:.0f} ± {fmt(r['elo_pm'])}"]
             for r in rows]
    out.print(fitted_table("Bots", "rating: the leaderboard's rating of record, 95% interval "
                           "· ? provisional · live Elo: incremental", _COLUMNS, cells, out,
                           name=0))
    return 0


# (header, drop rank): the name and the rating of record always; live Elo is dropped first
_COLUMNS: tuple[Column, ...] = (("bot", None), ("rating ±95%", None), ("rank", 2),
                                ("rated\nmatches", 1), ("live Elo", 0))


def cmd_remove(args: argparse.Namespace) -> int:
    from sueca.arena.store.bots import BotRegistryError
    _, registry = _registry(args)
    try:
        registry.remove(args.name)
    except BotRegistryError as err:
        raise UserError(str(err)) from None
    print(f"removed {args.name}")
    return 0
