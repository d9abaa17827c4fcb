"""``sueca-arena bots add|list|remove``: the bot registry (tokens are shown once, stored hashed)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from sueca.arena.cli.common import (
    Column,
    UserError,
    add_redis_action,
    clean,
    console,
    fitted_table,
    open_store,
)
from sueca.arena.format import pm
from sueca.arena.leaderboard import BoardRow, connected_bots, json_row, leaderboard
from sueca.arena.records import CompetitionState
from sueca.arena.store.bots import BotRegistry, BotRegistryError

if TYPE_CHECKING:
    from sueca.arena.store import Store


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
    """The registered bots, by name, with the leaderboard's rating of record (its rank too),
    the live Elo beside it and whether a referee lists it as connected; a bot with no rated
    match is unrated."""
    store, registry = _registry(args)
    board = {r["bot"]: r for r in leaderboard(store)}
    online = connected_bots(store)
    # the --json rows: a bot's leaderboard row, or no games (and whether it is connected)
    rows: list[dict[str, object]] = []
    for name in registry.names():
        row = board.get(name)
        rows.append(json_row(row) if row is not None
                    else {"bot": name, "games": 0, "connected": name in online})
    if args.json:
        print(json.dumps(clean(rows), indent=2))
        return 0
    if not rows:
        print("no bots registered: `sueca-arena bots add NAME`")
        return 0
    out = console()
    cells = [_cells(board.get(str(r["bot"])), str(r["bot"]), name in online)
             for r, name in ((r, str(r["bot"])) for r in rows)]
    out.print(fitted_table("Bots", "rating: the leaderboard's rating of record, 95% interval "
                           "· ? provisional · live Elo: incremental · online: connected to a "
                           "referee now", columns=_COLUMNS, rows=cells, out=out, name=0))
    return 0


def _cells(row: BoardRow | None, name: str, connected: bool) -> list[str]:
    if row is None:
        return [name, "unrated", "", "0", "", "yes" if connected else "no"]
    return [name + (" ?" if row["provisional"] else ""), pm(row["rating"], row["rating_pm"]),
            str(row["rank"]), str(row["matches"]), pm(row["elo"], row["elo_pm"]),
            "yes" if connected else "no"]


# (header, drop rank): the name, the rating of record and whether it is online always;
# live Elo is dropped first
_COLUMNS: tuple[Column, ...] = (("bot", None), ("rating ±95%", None), ("rank", 2),
                                ("rated\nmatches", 1), ("live Elo", 0), ("on-\nline", None))


def cmd_remove(args: argparse.Namespace) -> int:
    store, registry = _registry(args)
    playing = [c for c, s in store.competitions.of_bot(args.name).items()
               if s is not CompetitionState.CLOSED]
    if playing:  # its versions are that competition's record until it closes
        raise UserError(f"bot {args.name!r} is entered in competition {playing[0]!r}, which is "
                        "not closed: it can be removed once the competition closes")
    try:
        registry.remove(args.name)
    except BotRegistryError as err:
        raise UserError(str(err)) from None
    print(f"removed {args.name}")
    return 0
