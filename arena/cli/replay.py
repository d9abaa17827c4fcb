"""``sueca-arena replay verify FILE | show TARGET``: check a replay file, or watch one match.

``verify`` re-plays every record (one ``sueca-replay/1`` JSON object per line) through the
engine and reports each line whose recorded hands, tricks or scores do not follow from its decks
and cards: exit code 0 when all are right, 1 when any is wrong, 2 when the file cannot be read.
``show`` prints one match trick by trick, cards and the cross score: TARGET is a replay file
(``--match ID`` picks a match in it), or else the id of a match the arena recorded in Redis.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sueca.arena.cli.common import UserError, add_redis, open_store
from sueca.sdk.settings import current

SHOWN_PROBLEMS = 3  # problems per bad record in the table (--json has them all)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="verify a replay file, or show a match (file or Redis)",
                       description=(__doc__ or "").split("\n\n", 1)[-1])
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    v = actions.add_parser("verify", help="re-play every record and report the wrong ones")
    v.add_argument("file", metavar="FILE", help="a replay file (JSON lines)")
    v.add_argument("--json", action="store_true", help="print one JSON object instead")
    v.set_defaults(func=run_verify)
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
    from sueca.engine import replay as replays

    path = Path(path_text)
    if not path.exists():
        raise UserError(f"no such replay file {path_text!r}")
    if path.is_dir():
        raise UserError(f"replay file {path_text!r} is a directory")
    try:
        yield from replays.read(path)
    except UnicodeDecodeError:
        raise UserError(f"replay file {path_text!r} is not UTF-8 text") from None
    except OSError as err:
        raise UserError(f"cannot read replay file {path_text!r}: {err.strerror}") from None


def verify_file(path_text: str) -> dict[str, Any]:
    """{"file", "records", "bad": [{"line", "match_id", "problems"}], "ok"} for a replay file."""
    from sueca.engine import replay as replays

    checked = 0
    bad = []
    for line, rec, error in _lines(path_text):
        checked += 1
        match_id = rec.get("match_id") if isinstance(rec, dict) else None
        problems = [error] if error is not None else replays.verify(rec)
        if problems:
            bad.append({"line": line, "match_id": match_id, "problems": problems})
    return {"file": path_text, "records": checked, "bad": bad, "ok": not bad}


def run_verify(args: argparse.Namespace) -> int:
    report = verify_file(args.file)
    if args.json:
        print(json.dumps(report))
        return 0 if report["ok"] else 1
    from sueca.arena import render

    out = render.stdout()
    if report["bad"]:
        rows = []
        for b in report["bad"]:
            shown = b["problems"][:SHOWN_PROBLEMS]
            more = len(b["problems"]) - len(shown)
            text = "\n".join(shown) + (f"\n(+{more} more)" if more > 0 else "")
            rows.append([b["line"], b["match_id"] if b["match_id"] is not None else "-", text])
        out.print(render.table(f"bad records in {args.file}", ["line", "match", "problems"], rows,
                               right=["line"]))
        out.print(f"{len(report['bad'])} of {report['records']} records in {args.file} are bad")
        return 1
    if not report["records"]:
        out.print(f"no records in {args.file}")
    else:
        out.print(f"{report['records']} records in {args.file}: all verified")
    return 0


def find_record(path_text: str, match_id: str | None) -> dict[str, Any]:
    """The record with ``match_id`` (the first record when None)."""
    from sueca.engine.replay import FORMAT

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
    from sueca.engine import replay as replays

    problems = replays.verify(rec)
    if problems:  # the renderer trusts the record; a bad one is shown as its problems
        raise UserError(f"match {rec.get('match_id')!r} in {args.target!r} is not a valid "
                        f"replay: {problems[0]} (run `sueca-arena replay verify` for all)")
    from sueca.arena import render

    render.stdout().print(render.render_match(rec))
    return 0


def _show_stored(args: argparse.Namespace) -> int:
    """``replay show ID``: the match recorded in Redis, as ``matches show ID`` shows it."""

    from sueca.arena.cli.matches import show_match

    if args.match is not None:
        raise UserError(f"no replay file {args.target!r} (--match ID picks a match in a file)")
    if not (args.redis or current().redis_url):
        raise UserError(f"no replay file {args.target!r}; to show a match recorded in Redis, "
                        "pass --redis URL or set SUECA_REDIS_URL")
    store = open_store(args)
    try:
        return show_match(store, args.target, args.json, replay_only=True)
    except UserError as err:
        raise UserError(f"{err}: no replay file by that name, nor a match with that id in "
                        "Redis") from None
