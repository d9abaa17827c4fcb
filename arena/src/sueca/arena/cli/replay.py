"""sueca-arena replay verify FILE | show TARGET: check a replay file, or watch one match.

verify re-plays every record (one sueca-replay/1 JSON object per line) through the engine and
reports each line whose recorded hands, tricks or scores do not follow from its decks and cards:
exit code 0 when all are right, 1 when any is wrong, 2 when the file cannot be read (the SDK's
sueca-bot replay verify, the same code). show prints one match trick by trick, cards and the
cross score: TARGET is a replay file (--match ID picks a match in it), or else the id of a match
the arena recorded in Redis.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sueca.arena import render
from sueca.arena.cli.common import UserError, add_redis, open_store
from sueca.arena.cli.matches import show_match
from sueca.arena.settings import current
from sueca.engine import replay as replays
from sueca.engine.replay import FORMAT
from sueca.sdk.cli.replay import add_verify
from sueca.sdk.replayfile import ReplayFileError, lines


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("replay", help="verify a replay file, or show a match (file or Redis)",
                       description=(__doc__ or "").split("\n\n", 1)[-1],
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add_verify(actions)  # the SDK's sueca-bot replay verify: one implementation
    s = actions.add_parser("show", help="show a match trick by trick (from a file or Redis)")
    s.add_argument("target", metavar="TARGET",
                   help="a replay file (JSON lines), or the id of a match recorded in Redis")
    s.add_argument("--match", metavar="ID",
                   help="with a replay file: the match_id to show (default: the first)")
    add_redis(s)
    s.add_argument("--json", action="store_true", help="print the replay record as JSON")
    s.set_defaults(func=run_show)


def _lines(path_text: str) -> Iterator[tuple[int, Any, str | None]]:
    """The file's (line, record, error) triples; unreadable files are a UserError."""
    try:
        yield from lines(path_text)
    except ReplayFileError as err:
        raise UserError(str(err)) from None


def find_record(path_text: str, match_id: str | None) -> dict[str, Any]:  # Any: JSON from a file
    """The record with ``match_id`` (the first record when None), not yet verified."""
    seen: list[str] = []
    for _line, rec, error in _lines(path_text):
        if error is not None or not isinstance(rec, dict) or rec.get("format") != FORMAT:
            continue  # not a replay record: verify reports those
        if match_id is None or str(rec.get("match_id")) == match_id:
            return rec
        seen.append(str(rec.get("match_id")))
    if match_id is None:
        raise UserError(f"replay file {path_text!r} holds no {FORMAT} records")
    listed = ", ".join(seen[:5]) + (", ..." if len(seen) > 5 else "")
    raise UserError(f"no match {match_id!r} in {path_text!r}; it holds {listed or 'no records'}")


def run_show(args: argparse.Namespace) -> int:
    if not Path(args.target).exists():
        return _show_stored(args)
    rec = find_record(args.target, args.match)
    if args.json:
        print(json.dumps(rec, indent=2))
        return 0

    problems = replays.verify(rec)
    if problems:  # the renderer trusts the record; a bad one is shown as its problems
        raise UserError(f"match {rec.get('match_id')!r} in {args.target!r} is not a valid "
                        f"replay: {problems[0]} (run 'sueca-arena replay verify' for all)")

    render.stdout().print(render.render_match(rec))
    return 0


def _show_stored(args: argparse.Namespace) -> int:
    """``replay show ID``: the match recorded in Redis, as ``matches show ID`` shows it."""
    if args.match is not None:
        raise UserError(f"no replay file {args.target!r} (--match ID picks a match in a file)")
    if not (args.redis or current().redis_url):
        raise UserError(f"no replay file {args.target!r}; to show a match recorded in Redis, "
                        "pass --redis URL or set SUECA_REDIS_URL")
    store = open_store(args)
    try:
        return show_match(store, args.target, as_json=args.json, replay_only=True)
    except UserError as err:
        raise UserError(f"{err}: no replay file by that name, nor a match with that id in "
                        "Redis") from None
