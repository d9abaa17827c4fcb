"""``sueca-arena matches [show ID]``: recent matches (filtered by tournament, bot and end as
the web's match list is), or one match trick by trick."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, cast

from sueca.arena.cli.common import (
    Bounded,
    Column,
    UserError,
    add_redis,
    console,
    fitted_table,
    open_store,
)
from sueca.arena.records import MatchRow
from sueca.engine.game import ABORTED, FAULT_ENDS, NORMAL

if TYPE_CHECKING:
    from rich.console import Console

    from sueca.arena.store import Store

# what --end takes: the web's filter values (sueca.arena.web.data.MATCH_ENDS), without importing
# the web's queries (half a second) to build the parser
MATCH_ENDS = (NORMAL, *FAULT_ENDS, ABORTED)
MAX_PAGE_SIZE = 200  # --limit at most: the web's page size bound (web.data.MAX_PAGE_SIZE)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("matches", help="recent matches, or `matches show ID` for one replay")
    add_redis(p)
    p.add_argument("--tournament", metavar="ID", help="only this tournament's matches "
                   "(ladder: the ladder's)")
    p.add_argument("--bot", metavar="NAME", help="only the recorded matches this bot played")
    p.add_argument("--end", metavar="KIND", choices=[str(end) for end in MATCH_ENDS],
                   help=f"only the recorded matches that ended so: {', '.join(MATCH_ENDS)}")
    p.add_argument("--limit", metavar="N", action=Bounded, kind=int, low=1, high=MAX_PAGE_SIZE,
                   default=20, help=f"the newest N matches (default 20, at most {MAX_PAGE_SIZE})")
    p.add_argument("--json", action="store_true", help="the rows as JSON, every column")
    p.set_defaults(func=cmd_matches)
    # a real sub-command, so that `matches show --help` prints the help of `show` (a positional
    # "show ID" would print the help of `matches`); optional, since `matches` alone lists
    acts = p.add_subparsers(dest="action", metavar="ACTION",
                            help="none: the recent matches; `show ID`: one match")
    show = acts.add_parser("show", help="one match: its result and replay, trick by trick")
    show.add_argument("mid", metavar="ID")
    # SUPPRESS: `matches --redis URL show ID` keeps the URL (or folder) given before `show`
    add_redis(show, default=argparse.SUPPRESS)
    show.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                      help="the match, its result and replay as JSON")
    show.set_defaults(func=cmd_matches_show)


def cmd_matches_show(args: argparse.Namespace) -> int:
    return show_match(open_store(args), args.mid, args.json)


def cmd_matches(args: argparse.Namespace) -> int:
    """The newest matches, filtered as the web's ``/matches?bot=&end=&tournament=`` (the same
    query: :meth:`sueca.arena.web.data.LeagueView.matches`)."""
    from sueca.arena.web.data import BadQuery, LeagueView, NotFound
    store = open_store(args)
    try:
        page = LeagueView(store).matches(1, args.limit, args.tournament, args.bot, args.end)
    except NotFound:
        raise UserError(f"unknown tournament {args.tournament!r}") from None
    except BadQuery as err:
        raise UserError(str(err)) from None
    # a bot may have matches without being registered (removed, or a local bot): only a name
    # with neither is a mistake worth saying so
    if args.bot is not None and not page["total"] and not store.bots.exists(args.bot):
        raise UserError(f"unknown bot {args.bot[:64]!r}: no recorded match and not registered "
                        "(`sueca-arena bots list` names the registered bots)")
    keys = MatchRow.__annotations__  # the CLI's row: the web's, without its extra keys
    out = [cast(MatchRow, {k: v for k, v in r.items() if k in keys}) for r in page["matches"]]
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print_matches(out, page["total"], console())
    return 0


# The columns and the order in which a narrow terminal leaves them out (0 first): the id is
# never left out nor cut; the teams (bots' names) fold rather than be cut, and go last.
_COLUMNS: tuple[Column, ...] = (
    ("id", None), ("status", 3), ("team 0", 7), ("team 1", 6), ("score", 4),
    ("winner", 5), ("end", 2), ("tries", 1), ("note", 0))


def _team(a: str, b: str) -> str:
    """A team's cell: its bot once when one bot holds both seats (as the web's rows), else both
    with a space to wrap at (a narrow terminal then folds between the names, not inside one)."""
    return a if a == b else f"{a} + {b}"


def print_matches(rows: list[MatchRow], total: int, out: Console) -> None:
    """The matches as a table fitted to ``out`` (:func:`fitted_table`): ids always whole."""
    cells = []
    for r in rows:
        seats = r["seats"] or ["?"] * 4
        gp = r["game_points"]
        end = r["end"] or ""
        if r["fault_bot"]:
            end += f" by {r['fault_bot']}"
        cells.append([r["id"], r["status"], _team(seats[0], seats[2]), _team(seats[1], seats[3]),
                      f"{gp[0]}-{gp[1]}" if gp else "",
                      "" if r["winner"] is None else f"team {r['winner']}", end,
                      str(r["attempts"]), r["error"] or ""])
    caption = f"{len(rows)} of {total} (newest first; --limit N for more)" if total > len(rows) \
        else f"{total} match{'es' if total != 1 else ''}"
    out.print(fitted_table("Matches", caption, _COLUMNS, cells, out, name=(2, 3), whole=(0,)))


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


