"""``sueca-arena matches [show ID]``: recent matches, or one match trick by trick."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sueca.arena.cli.common import Bounded, UserError, add_redis, console, open_store
from sueca.arena.records import MatchRow

if TYPE_CHECKING:
    from sueca.arena.store import Store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("matches", help="recent matches, or `matches show ID` for one replay")
    add_redis(p)
    p.add_argument("--tournament", metavar="ID", help="only this tournament's matches")
    p.add_argument("--limit", action=Bounded, kind=int, low=1, default=20)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_matches)
    # a real sub-command, so that `matches show --help` prints the help of `show` (a positional
    # "show ID" would print the help of `matches`); optional, since `matches` alone lists
    acts = p.add_subparsers(dest="action", metavar="ACTION",
                            help="none: the recent matches; `show ID`: one match")
    show = acts.add_parser("show", help="one match: its result and replay, trick by trick")
    show.add_argument("mid", metavar="ID")
    # SUPPRESS: `matches --redis URL show ID` keeps the URL given before `show`
    show.add_argument("--redis", metavar="URL", default=argparse.SUPPRESS,
                      help="Redis URL (default: $SUECA_REDIS_URL)")
    show.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                      help="the match, its result and replay as JSON")
    show.set_defaults(func=cmd_matches_show)


def cmd_matches_show(args: argparse.Namespace) -> int:
    return show_match(open_store(args), args.mid, args.json)


def cmd_matches(args: argparse.Namespace) -> int:
    store = open_store(args)
    rows = store.recent_matches(args.limit, tournament=args.tournament)
    if args.tournament is not None and not rows and store.tournament(args.tournament) is None:
        raise UserError(f"unknown tournament {args.tournament!r}")
    out: list[MatchRow] = []
    for m in rows:
        # its result entry, or nothing yet (older entries may lack a key: .get)
        res: Mapping[str, Any] = (store.result_of(m["id"]) if m["status"] == "done"
                                  else None) or {}
        out.append({"id": m["id"], "status": m["status"], "seats": m["spec"].get("bots"),
                    "tournament": m.get("tournament", ""), "attempts": m["attempts"],
                    "end": res.get("end"), "winner": res.get("winner"),
                    "game_points": res.get("game_points"),
                    "fault_bot": res.get("fault_bot"),
                    "referee": res.get("referee") or m.get("referee"),
                    "error": m.get("error") or None})
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    from rich.table import Table
    table = Table(title="Matches")
    for col in ("id", "status", "team 0", "team 1", "end", "winner", "score", "tries", "note"):
        table.add_column(col)
    for r in out:
        seats = r["seats"] or ["?"] * 4
        gp = r["game_points"]
        table.add_row(r["id"], r["status"], f"{seats[0]}+{seats[2]}", f"{seats[1]}+{seats[3]}",
                      r["end"] or "", "" if r["winner"] is None else f"team {r['winner']}",
                      f"{gp[0]}-{gp[1]}" if gp else "", str(r["attempts"]),
                      r["error"] or (f"{r['end']} by {r['fault_bot']}" if r["fault_bot"] else ""))
    console().print(table)
    return 0


def show_match(store: Store, mid: str, as_json: bool, replay_only: bool = False) -> int:
    """Print match ``mid`` of ``store`` trick by trick (``matches show ID``, ``replay show ID``).

    With ``as_json``: ``{"match", "result", "replay"}``, or only the replay record (``null``
    when there is none yet) with ``replay_only``. An unknown id is a :class:`UserError`.
    """
    m = store.match(mid)
    if m is None and store.is_recorded(mid):
        raise UserError(f"match {mid!r} was archived by retention: its record and replay are "
                        f"in the archive directory's matches/DAY.jsonl.gz (DAY: the UTC day "
                        f"it was recorded), no longer in Redis")
    if m is None:
        raise UserError(f"unknown match {mid!r}")
    rec = store.replay(mid)
    if as_json:
        doc = rec if replay_only else {"match": m, "result": store.result_of(mid), "replay": rec}
        print(json.dumps(doc, indent=2))
        return 0
    if rec is None:
        print(f"match {mid}: {m['status']}" + (f" — {m['error']}" if m.get("error") else ""))
        return 0
    from sueca.arena.render import render_match
    console().print(render_match(rec))
    return 0


