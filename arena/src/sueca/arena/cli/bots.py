"""``sueca-arena bots add|list|remove``: the bot registry (tokens are shown once, stored hashed);
``bots submit|logs``: hosted bots' code and their owners' logs (docs/hosted-bots.md)."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from sueca.arena.cli.common import (
    Bounded,
    Column,
    UserError,
    add_redis_action,
    clean,
    console,
    fitted_table,
    open_store,
)
from sueca.arena.format import pm
from sueca.arena.hosted.archive import ArchiveError, read_source
from sueca.arena.hosted.logs import Refused, check_owner, owner_log
from sueca.arena.hosted.manifest import ManifestError
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
    _add_hosted_actions(acts)


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
    submitted = [v["submission"] for v in store.versions.history(args.name) if v["submission"]]
    try:
        registry.remove(args.name)
    except BotRegistryError as err:
        raise UserError(str(err)) from None
    store.hosted.unhost(args.name)  # its bot host stops it at its next heartbeat
    store.hosted.drop_unused(submitted)  # its versions are gone: so are their archives
    print(f"removed {args.name}")
    return 0


# -- hosted bots: submit code, read its owner's log -------------------------------------------

#: submissions one bot may make in an hour: each archive (up to 16 MiB) is kept in Redis while
#: its version is, so an owner's pace bounds what they can make the arena store
SUBMISSIONS_AN_HOUR = 10

def _add_hosted_actions(acts: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = add_redis_action(acts, "submit", "submit a bot's code for the bot hosts to run (a new "
                         "version of the bot)", cmd_submit)
    p.add_argument("name")
    p.add_argument("source", metavar="DIR|FILE.tar.gz",
                   help="a folder, or a .tar.gz, with sueca-bot.toml at its top")
    _token_flag(p)
    p = add_redis_action(acts, "logs", "a hosted bot's log (its stderr), for its owner only",
                         cmd_logs)
    p.add_argument("name")
    _token_flag(p)
    p.add_argument("--version", action=Bounded, kind=int, low=1, default=None,
                   help="the version whose log to show (default: the one the bot hosts run)")
    p.add_argument("--last", action=Bounded, kind=int, low=1, default=200,
                   help="lines to show (default 200)")


def _token_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--token", default=None,
                   help="the bot's token, proving you own it (default $SUECA_TOKEN)")


def _token(args: argparse.Namespace) -> str:
    """--token, else $SUECA_TOKEN, else a UserError saying so."""
    token = str(args.token) if args.token is not None else os.environ.get("SUECA_TOKEN", "")
    if not token:
        raise UserError(f"no token: pass bot {args.name[:64]!r}'s token with --token TOKEN or "
                        "in $SUECA_TOKEN")
    return token


def cmd_submit(args: argparse.Namespace) -> int:
    """Check the submission (nothing is written when a check fails), store its canonical
    archive under its sha256, make it the bot's new version and hand it to the bot hosts."""
    try:
        submission = read_source(Path(args.source))
    except (ArchiveError, ManifestError) as err:
        raise UserError(f"submission {args.source[:120]!r} refused: {err}") from None
    store = open_store(args)
    try:
        check_owner(store, args.name, _token(args), "a bot's code is submitted")
    except Refused as err:
        raise UserError(str(err)) from None
    hour = time.time() - 3600
    recent = sum(1 for v in store.versions.history(args.name)
                 if v["submission"] and v["created"] >= hour)
    if recent >= SUBMISSIONS_AN_HOUR:  # each archive stays in Redis: their pace is bounded
        raise UserError(f"bot {args.name!r} had {recent} submissions in the last hour: at most "
                        f"{SUBMISSIONS_AN_HOUR} an hour")
    new = store.hosted.put_submission(submission.sha256, submission.archive)
    try:
        version = store.versions.bump(args.name, by="bots submit", submission=submission.sha256,
                                      note=f"hosted submission {submission.sha256[:12]}")
    except ValueError as err:
        if new:
            store.hosted.drop_submission(submission.sha256)
        raise UserError(str(err)) from None
    store.hosted.host(args.name, version=version, submission=submission.sha256)
    if args.json:
        print(json.dumps({"bot": args.name, "version": version,
                          "submission": submission.sha256, "files": submission.files}))
    else:
        print(f"bot {args.name} version {version}: submission {submission.sha256} "
              f"({submission.files} files); a bot host starts it within seconds "
              f"(`sueca-arena bots logs {args.name}`)")
    return 0


def cmd_logs(args: argparse.Namespace) -> int:
    """The last lines of a hosted bot's log, only for the holder of its token."""
    store = open_store(args)
    try:
        got = owner_log(store, args.name, _token(args), version=args.version, last=args.last)
    except Refused as err:
        raise UserError(str(err)) from None
    if args.json:
        print(json.dumps(got, indent=2))
        return 0
    if not got["lines"]:
        print(f"bot {args.name} version {got['version']}: no log lines yet")
    for entry in got["lines"]:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(entry["at"]))
        print(f"{stamp} {entry['line']}")
    return 0
