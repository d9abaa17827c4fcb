"""``sueca-arena matches [show ID]``: recent matches (filtered by tournament, bot and end as
the web's match list is, through the same read model), or one match trick by trick."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

from rich.text import Text

from sueca.arena.cli.common import (
    Bounded,
    Column,
    UserError,
    add_redis,
    console,
    fit_columns,
    fitted_table,
    open_store,
)
from sueca.arena.format import MISSING, score
from sueca.arena.league.limits import MATCH_ENDS, MAX_DETAIL, MAX_PAGE_SIZE
from sueca.arena.league.rows import BadQuery, NotFound
from sueca.arena.league.view import LeagueView
from sueca.arena.records import MatchRow
from sueca.arena.render import render_match
from sueca.engine.game import FAULT_ENDS, End
from sueca.sdk.logs import printable

if TYPE_CHECKING:
    from rich.console import Console

    from sueca.arena.store import Store

ELLIPSIS = "…"
SHORT_ID = 6  # characters a shortened id keeps at least (its unique tail)


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
    show.add_argument("mid", metavar="ID", help="a match id, or the end of one (as a narrow "
                      "`matches` table shows it, …a1b2c3) that no other match id ends with")
    # SUPPRESS: `matches --redis URL show ID` keeps the URL (or folder) given before `show`
    add_redis(show, default=argparse.SUPPRESS)
    show.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                      help="the match, its result and replay as JSON")
    show.set_defaults(func=cmd_matches_show)


def cmd_matches_show(args: argparse.Namespace) -> int:
    return show_match(open_store(args), args.mid, as_json=args.json)


def cmd_matches(args: argparse.Namespace) -> int:
    """The newest matches, filtered as the web's ``/matches?bot=&end=&tournament=`` (the same
    query: :meth:`sueca.arena.league.view.LeagueView.matches`)."""
    store = open_store(args)
    try:
        page = LeagueView(store).matches(1, args.limit, tournament=args.tournament, bot=args.bot,
                                    end=args.end)
    except NotFound:
        raise UserError(f"unknown tournament {args.tournament!r}") from None
    except BadQuery as err:
        raise UserError(str(err)) from None
    # a bot may have matches without being registered (removed, or a local bot): only a name
    # with neither is a mistake worth saying so
    if args.bot is not None and not page["total"] and not store.bots.exists(args.bot):
        raise UserError(f"unknown bot {args.bot[:64]!r}: no recorded match and not registered "
                        f"(`sueca-arena bots list` names the registered bots)"
                        f"{store.bots.case_hint(args.bot)}")
    keys = MatchRow.__annotations__  # the CLI's row: the list's, without its extra keys
    out = [cast(MatchRow, {k: v for k, v in r.items() if k in keys}) for r in page["matches"]]
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print_matches(out, page["total"], console(), known=lambda: _all_ids(store))
    return 0


def _all_ids(store: Store) -> list[str]:
    return store.match_page(0, max(1, store.match_count()))[1]


# The columns and the order in which a narrow terminal leaves them out (0 first): what a person
# reads a match list for (who played, who won, the score) goes last, and before it goes, the
# id shortens to its unique tail (which `matches show` takes); the teams (bots' names) fold
# rather than be cut.
_COLUMNS: tuple[Column, ...] = (
    ("id", None), ("status", 2), ("team 0", 9), ("team 1", 8), ("score", 6),
    ("winner", 7), ("end", 3), ("tries", 0), ("note", 1))
_WANTED = (2, 3, 4, 5)  # teams, score, winner: the id shortens before any of these goes
_NAMES = (2, 3)


def _team(a: str, b: str) -> str:
    """A team's cell: its bot once when one bot holds both seats (as the web's rows), else both
    with a space to wrap at (a narrow terminal then folds between the names, not inside one)."""
    return a if a == b else f"{a} + {b}"


def _cells(r: MatchRow, mid: str) -> list[str]:
    seats = r["seats"] or ["?"] * 4
    end = r["end"] or ""
    fault = any(end == f for f in FAULT_ENDS)
    if r["fault_bot"]:
        end += f" by {r['fault_bot']}"
    gp = r["game_points"]
    # a fault's win was not played for: its score says the fault rather than 0–0
    shown = (r["end"] or MISSING) if fault and not any(gp or ()) else score(gp) if gp else ""
    return [mid, r["status"], _team(seats[0], seats[2]), _team(seats[1], seats[3]), shown,
            "" if r["winner"] is None else f"team {r['winner']}", end, str(r["attempts"]),
            r["error"] or ""]


def print_matches(rows: list[MatchRow], total: int, out: Console, *,
                  known: Callable[[], Sequence[str]] | None = None) -> None:
    """The matches as a table fitted to ``out`` (:func:`fitted_table`). Ids are whole unless
    the teams, score or winner would otherwise be left out: then, given the ``known`` ids (every
    stored match's), each shows as its shortest tail that no other id ends with."""
    cells = [_cells(r, r["id"]) for r in rows]
    keep = fit_columns(_COLUMNS, cells, out.width, names=_NAMES)
    short = False
    if known is not None and rows and any(i not in keep for i in _WANTED):
        tails = unique_tails([r["id"] for r in rows], known())
        cells = [_cells(r, tails[r["id"]]) for r in rows]
        short = True
    caption = f"{len(rows)} of {total} (newest first; --limit N for more)" if total > len(rows) \
        else f"{total} match{'es' if total != 1 else ''}"
    if short:
        caption += " · ids shortened to their end: `matches show …END` takes it"
    out.print(fitted_table("Matches", caption, columns=_COLUMNS, rows=cells, out=out,
                           name=_NAMES, whole=(0,)))


def unique_tails(ids: Sequence[str], known: Sequence[str]) -> dict[str, str]:
    """Each of ``ids`` as ``…`` and its shortest tail (at least :data:`SHORT_ID` characters)
    that no other of the ``known`` ids ends with; an id no longer than that stays whole."""
    known_set = set(known) | set(ids)
    out: dict[str, str] = {}
    todo = [m for m in dict.fromkeys(ids)]
    k = SHORT_ID
    while todo:
        counts = Counter(m[-k:] for m in known_set)
        left = []
        for m in todo:
            if len(m) <= k + 1:
                out[m] = m
            elif counts[m[-k:]] == 1:
                out[m] = ELLIPSIS + m[-k:]
            else:
                left.append(m)
        todo, k = left, k + 1
    return out


def resolve(store: Store, mid: str) -> str:
    """``mid`` if a match has that id (or had: archived), else the one match whose id ends with
    it (a leading ``…`` is ignored); a :class:`UserError` when none or several do."""
    if store.match(mid) is not None or store.is_recorded(mid):
        return mid
    tail = mid.removeprefix(ELLIPSIS).removeprefix("...")
    hits = [m for m in _all_ids(store) if m.endswith(tail)] if tail else []
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise UserError(f"match id end {mid!r} is ambiguous: {', '.join(hits[:5])}"
                        + (" ..." if len(hits) > 5 else ""))
    raise UserError(f"unknown match {mid!r}")


def show_match(store: Store, mid: str, *, as_json: bool, replay_only: bool = False) -> int:
    """Print match ``mid`` of ``store`` trick by trick (``matches show ID``, ``replay show ID``),
    then the fault reason a bot gave, if its fault ended the match (escaped and capped; held
    back while the match's duplicate twin, on the same decks, is unfinished, as on the web).

    With ``as_json``: ``{"match", "result", "replay"}``, or only the replay record (``null``
    when there is none yet) with ``replay_only``. An unknown id is a :class:`UserError`.
    """
    m = store.match(mid)
    if m is None and store.is_recorded(mid):
        raise UserError(f"match {mid!r} was archived by retention: its record and replay are "
                        f"in the archive directory's matches/DAY.jsonl.gz (DAY: the UTC day "
                        f"it was recorded), no longer in Redis")
    if m is None:
        mid = resolve(store, mid)
        m = store.match(mid)
        if m is None:  # archived: say so, as above
            return show_match(store, mid, as_json=as_json, replay_only=replay_only)
    rec = store.replay(mid)
    if as_json:
        doc = rec if replay_only else {"match": m, "result": store.result_of(mid), "replay": rec}
        print(json.dumps(doc, indent=2))
        return 0
    out = console()
    if rec is None:
        print(f"match {mid}: {m['status']}" + (f" — {m['error']}" if m.get("error") else ""))
    else:
        out.print(render_match(rec))
    reason = _fault_reason(store, mid)
    if reason is not None:
        out.print(reason)
    return 0


def _fault_reason(store: Store, mid: str) -> Text | None:
    """The line naming the bot whose fault ended the match and what it reported, as the
    read model shows it (None: no fault, or nothing reported)."""
    detail = LeagueView(store).match(mid)
    res = detail["result"]
    if res is None or not res.get("fault_bot"):
        return None
    line = Text(f"fault: {res['end']} by {res['fault_bot']}", style="red")
    if res.get("fault_detail"):
        line.append(f": {printable(str(res['fault_detail']), MAX_DETAIL)}")
    elif detail["hidden"] and res["end"] == End.BOT_ERROR:
        line.append(f" (its reason is hidden: {detail['hidden']})")
    return line
