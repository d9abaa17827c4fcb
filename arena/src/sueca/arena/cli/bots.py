"""``sueca-arena bots add|list|remove``: the bot registry (tokens are shown once, stored hashed)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from sueca.arena.cli.common import UserError, add_redis_action, clean, fmt, open_store

if TYPE_CHECKING:
    from sueca.arena.store import Store
    from sueca.arena.store.bots import BotRegistry


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bots", help="register, list and remove bots")
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add_redis_action(acts, "add", "register a bot and print its token (shown only once)",
                     cmd_add).add_argument("name")
    add_redis_action(acts, "list", "registered bots with their ratings", cmd_list)
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
    from sueca.arena.store.ratings import load
    store, registry = _registry(args)
    ratings = load(store)
    rows: list[dict[str, Any]] = []  # the --json rows: a bot's live columns, or no games
    for name in registry.names():
        rating = ratings.get(name)
        rows.append({"bot": name, **(rating.as_dict() if rating else {"games": 0})})
    if args.json:
        print(json.dumps(clean(rows), indent=2))
        return 0
    if not rows:
        print("no bots registered: `sueca-arena bots add NAME`")
        return 0
    for r in rows:
        if r.get("elo") is None:
            print(f"{r['bot']:<24} unrated")
        else:
            print(f"{r['bot']:<24} Elo {r['elo']:.0f} ± {fmt(r['elo_pm'])}  "
                  f"OpenSkill {r['mu']:.1f} ± {r['mu_pm']:.1f}  ({r['games']} games)")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    from sueca.arena.store.bots import BotRegistryError
    _, registry = _registry(args)
    try:
        registry.remove(args.name)
    except BotRegistryError as err:
        raise UserError(str(err)) from None
    print(f"removed {args.name}")
    return 0
