"""replay verify FILE: check a replay file.

Re-plays every record (one sueca-replay/1 JSON object per line) through the engine and reports
each line whose recorded hands, tricks or scores do not follow from its decks and cards: exit
code 0 when all are right, 1 when any is wrong, 2 when the file cannot be read or holds no
record.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from sueca.sdk.cli.common import UserError
from sueca.sdk.logs import printable
from sueca.sdk.replayfile import ReplayFileError, verify_file
from sueca.sdk.table import MISSING, table

SHOWN_PROBLEMS = 3  # problems per bad record in the table (--json has them all)


def add_parser(sub: Any) -> None:
    p = sub.add_parser("replay", help="verify a replay file", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add_verify(actions)


def add_verify(actions: Any) -> None:
    """The ``verify`` action, for ``sueca-bot replay`` and ``sueca-arena replay`` alike."""
    v = actions.add_parser("verify", help="re-play every record and report the wrong ones",
                           description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    v.add_argument("file", metavar="FILE", help="a replay file (JSON lines)")
    v.add_argument("--json", action="store_true", help="print one JSON object instead")
    v.set_defaults(func=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    try:
        report = verify_file(args.file)
    except ReplayFileError as err:
        raise UserError(str(err)) from None
    if not report["records"]:  # nothing verified is no success: a wrong path or an empty run
        raise UserError(f"no records found in {args.file!r}: a replay file holds one "
                        f"sueca-replay/1 JSON object per line")
    if args.json:
        print(json.dumps(report))
        return 0 if report["ok"] else 1
    if report["bad"]:
        rows = []
        for b in report["bad"]:
            shown = [_one_line(p) for p in b["problems"][:SHOWN_PROBLEMS]]
            more = len(b["problems"]) - len(shown)
            text = "\n".join(shown) + (f"\n(+{more} more)" if more > 0 else "")
            rows.append([b["line"], _one_line(b["match_id"]) if b["match_id"] is not None
                         else MISSING, text])
        print(table(f"bad records in {args.file}", ["line", "match", "problems"], rows,
                    right=["line"]))
        print(f"{len(report['bad'])} of {report['records']} records in {args.file} are bad")
        return 1
    skipped = (f" ({report['skipped']} lines of a competition export that are not replays "
               "skipped)" if report["skipped"] else "")
    print(f"{report['records']} records in {args.file}: all verified{skipped}")
    return 0


def _one_line(value: Any, limit: int = 200) -> str:
    """A value from the file, as one capped line of printable text (a replay file is input:
    it may hold anything, terminal escapes included)."""
    return printable(value if isinstance(value, str) else repr(value), limit)
