"""``sueca-arena competition final NAME [--wait]``'s final event (:mod:`sueca.arena.final`),
``competition export NAME -o FILE`` and ``competition verify NAME|FILE``: a competition's
record as a file anyone can check, and the check of its seeds against the key revealed at close
(:mod:`sueca.arena.export`). The ``competition`` command's module adds the last two with
:func:`add_actions` and runs the final with :func:`final_command`."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sueca.arena import final
from sueca.arena.cli.common import UserError, add_redis, clean, open_store
from sueca.arena.export import (
    ExportError,
    ExportHeader,
    SeedReport,
    check_seeds,
    export_lines,
    read_export,
    write_export,
)
from sueca.arena.final import FinalProgress
from sueca.arena.format import when
from sueca.arena.lifecycle import State
from sueca.arena.records import Transition
from sueca.sdk.logs import printable

if TYPE_CHECKING:
    from sueca.arena.store import Store

__all__ = ["add_actions", "final_command"]

SHOWN = 20  # wrong seeds listed (--json has them all)


def add_actions(acts: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ex = acts.add_parser("export", help="write a competition's results and replays as JSON lines")
    ex.add_argument("name", metavar="NAME")
    ex.add_argument("-o", "--output", metavar="FILE", required=True,
                    help="the file to write (replaced): a header line, then a line per match")
    add_redis(ex)
    ex.set_defaults(func=cmd_export)
    v = acts.add_parser("verify", help="check a closed competition's seeds against its "
                                       "revealed key (in Redis, or an export file)")
    v.add_argument("target", metavar="NAME|FILE",
                   help="an export file (competition export), or a competition's name")
    add_redis(v)
    v.add_argument("--json", action="store_true", help="print the report as JSON")
    v.set_defaults(func=cmd_verify)


def final_command(store: Store, args: argparse.Namespace,
                  move_there: Callable[[], Transition]) -> int:
    """``competition final NAME [--wait]``: move the competition to its final (unless it is
    there already: then this resumes it), start the final's tournament and, with ``--wait``,
    play it round by round here; without, the scheduler queues and advances it."""
    rec = store.competitions.require(args.name)
    held = rec["spec"]["final"]["format"] in final.FINAL_FORMATS
    if held and rec["state"] is State.FROZEN:
        final.final_spec(store, args.name)  # one it cannot hold (too few entrants): not moved
    step = move_there() if rec["state"] is not State.FINAL else None
    got: FinalProgress | None = None
    if held:
        got = final.start(store, args.name)
        if args.wait:
            got = final.wait(store, args.name, quiet=args.json)
    if args.json:
        print(json.dumps(clean({"move": step, "final": got}), indent=2))
        return 0
    if step is not None:
        print(f"{args.name}: {step['from_state']} -> {step['to']} (by {step['by']}, "
              f"{when(step['at'])} UTC)")
    if got is None:
        print(f"{args.name} has no final event: close it when its standings are final")
        return 0
    state = ("over" if got["done"] else
             "the scheduler plays it round by round (or: --wait)" if not args.wait else "")
    print(f"final {got['tournament']}: {got['format']} of {len(got['seeds'])} (seeds "
          f"{', '.join(got['seeds'])}); {got['recorded']} of {got['total']} matches "
          f"recorded so far; {state}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    store = open_store(args)
    if store.competitions.get(args.name) is None:
        raise UserError(f"unknown competition {args.name!r} (`sueca-arena competition list`)")
    try:
        n = write_export(store, args.name, args.output)
    except OSError as err:
        raise UserError(f"cannot write {args.output!r}: {err.strerror or err}") from None
    rec = store.competitions.get(args.name)
    key = ("with its seed key" if rec is not None and rec["seed_key"]
           else "without its seed key (revealed at close)")
    print(f"wrote {n} matches of competition {args.name} to {args.output}, {key}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    header, matches = _load(args)
    try:
        report = check_seeds(header, matches)
    except ValueError as err:
        raise UserError(str(err)) from None
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)
    return 0 if report["ok"] else 1


def _load(args: argparse.Namespace) -> tuple[ExportHeader, list[dict[str, object]]]:
    """From the export file ``target``, else from the competition of that name in Redis."""
    if Path(args.target).exists():
        try:
            return read_export(args.target)
        except ExportError as err:
            raise UserError(str(err)) from None
    store = open_store(args)
    if store.competitions.get(args.target) is None:
        raise UserError(f"no export file {args.target!r}, nor a competition of that name "
                        "(`sueca-arena competition list`)")
    lines = export_lines(store, args.target)
    header = next(lines)
    return header, list(lines)  # type: ignore[return-value]


def _print(report: SeedReport) -> None:
    name = report["competition"]
    if report["ok"]:
        print(f"competition {name}: the revealed key matches the seed hash published at open; "
              f"all {report['checked']} match seeds and {report['deals']} decks follow from it")
        return
    for w in report["wrong"][:SHOWN]:
        print(f"{printable(w['match_id'], 120) or '(key)'}: {printable(w['problem'], 300)}")
    more = len(report["wrong"]) - SHOWN
    if more > 0:
        print(f"(+{more} more: --json lists them all)")
    print(f"competition {name}: {len(report['wrong'])} problem(s) in {report['checked']} matches"
          + ("" if report["key_matches_hash"] else "; the key does not match its hash"))
