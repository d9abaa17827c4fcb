"""``sueca-arena bots add|list|remove|version``: the bot registry (tokens are shown once, stored
hashed) and its versions."""

from __future__ import annotations

import argparse
import getpass
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
from sueca.arena.store.versions import MAX_NOTE, VersionError
from sueca.sdk.logs import shown

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
    add_version_parser(acts)


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
    """The registered bots, by name, with their current version, the leaderboard's rating of
    record (its rank too: the current version's), the live Elo beside it and whether a referee
    lists it as connected; a bot with no rated match is unrated (one whose current version has
    none yet is provisional at the initial rating)."""
    store, registry = _registry(args)
    board = {r["bot"]: r for r in leaderboard(store)}
    online = connected_bots(store)
    names = registry.names()
    versions = store.versions.currents(names)
    # the --json rows: a bot's leaderboard row, or no games (and whether it is connected)
    rows: list[dict[str, object]] = []
    for name in names:
        row = board.get(name)
        rows.append({**(json_row(row) if row is not None
                        else {"bot": name, "games": 0, "connected": name in online}),
                     "version": versions.get(name, 1)})
    if args.json:
        print(json.dumps(clean(rows), indent=2))
        return 0
    if not rows:
        print("no bots registered: `sueca-arena bots add NAME`")
        return 0
    out = console()
    cells = [_cells(board.get(name), name, versions.get(name, 1), name in online)
             for name in names]
    out.print(fitted_table("Bots", "v: current version · rating: the leaderboard's rating of "
                           "record (the current version's), 95% interval · ? provisional · "
                           "live Elo: incremental · online: connected to a referee now",
                           columns=_COLUMNS, rows=cells, out=out, name=0))
    return 0


def _cells(row: BoardRow | None, name: str, version: int, connected: bool) -> list[str]:
    if row is None:
        return [name, str(version), "unrated", "", "0", "", "yes" if connected else "no"]
    return [name + (" ?" if row["provisional"] else ""), str(version),
            pm(row["rating"], row["rating_pm"]), str(row["rank"]), str(row["matches"]),
            pm(row["elo"], row["elo_pm"]), "yes" if connected else "no"]


# (header, drop rank): the name, its version, the rating of record and whether it is online
# always; live Elo is dropped first
_COLUMNS: tuple[Column, ...] = (("bot", None), ("v", None), ("rating ±95%", None), ("rank", 2),
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


# -- bots version ---------------------------------------------------------------------------
def add_version_parser(acts: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    v = add_redis_action(acts, "version", "start a new version of a bot: it keeps its name, "
                         "the new version is rated afresh", cmd_version)
    v.add_argument("name")
    v.add_argument("--note", default="", metavar="TEXT",
                   help="what changed (shown on the bot's page)")
    v.add_argument("--by", default=None, metavar="WHO",
                   help="who starts it (default: the OS user running the command)")


def cmd_version(args: argparse.Namespace) -> int:
    """Start the next version of a bot: what plays from now on is rated as that version (the
    bot's process is not touched: the owner says which code it runs by bumping)."""
    note = str(args.note)
    if len(note) > MAX_NOTE or not note.isprintable():
        raise UserError(f"bad --note {shown(note, 60)}: one line of at most {MAX_NOTE} "
                        f"printable characters ({len(note)} given)")
    store = open_store(args)
    by = args.by if args.by is not None else _os_user()
    try:
        version = store.versions.bump(args.name, by=by, note=args.note)
    except VersionError as err:
        raise UserError(str(err)) from None
    if args.json:
        print(json.dumps({"bot": args.name, "version": version, "by": by, "note": args.note}))
    else:
        print(f"{args.name} is at version {version}: its matches from now on are rated as "
              f"version {version}")
    return 0


def _os_user() -> str:
    """Who runs this command, as the OS says (``unknown`` where it cannot say)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no LOGNAME/USER (a bare container)
        return "unknown"
