"""``sueca-arena retention run|status``: move old replays, match records and results-log entries
out of Redis into gzip archive files (or drop them), behind a ratings checkpoint; see
:mod:`sueca.arena.retention`."""

from __future__ import annotations

import argparse
from typing import TypedDict

from rich.table import Table

from sueca.arena import render
from sueca.arena.cli.common import Bounded, UserError, add_redis, console, emit, open_store
from sueca.arena.retention import RetentionError, RetentionReport, memory, run
from sueca.arena.settings import current
from sueca.arena.store.ratings import load_checkpoint


class RetentionStatus(TypedDict):
    """``retention status --json``: what Redis holds and what the policy keeps."""

    memory: int
    matches: int
    results_retained: int
    checkpoint: str | None
    results_in_checkpoint: int
    retain_days: float
    archive_dir: str | None


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("retention", help="archive old matches and trim the results log "
                                         "(keeps Redis bounded)")
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = acts.add_parser("run", help="archive (or drop) what was recorded more than DAYS ago")
    add_redis(r)
    r.add_argument("--older-than", metavar="DAYS", action=Bounded, kind=float, low=0,
                   above=True, default=None,
                   help="age in days (default: $SUECA_RETAIN_DAYS; 0 or unset keeps everything)")
    r.add_argument("--archive", metavar="DIR", default=None,
                   help="directory of the gzip JSON-lines archive (default: $SUECA_ARCHIVE_DIR)")
    r.add_argument("--drop", action="store_true",
                   help="no archive: delete the old records for good")
    r.add_argument("--dry-run", action="store_true", help="only count what would be moved")
    r.add_argument("--json", action="store_true", help="print the report as JSON")
    r.set_defaults(func=cmd_retention_run)
    s = acts.add_parser("status", help="what Redis holds and where the results log was trimmed")
    add_redis(s)
    s.add_argument("--json", action="store_true", help="print the status as JSON")
    s.set_defaults(func=cmd_retention_status)


def cmd_retention_run(args: argparse.Namespace) -> int:
    days = args.older_than if args.older_than is not None else current().retain_days
    if not days:
        msg = "retention is off (SUECA_RETAIN_DAYS is 0 and no --older-than DAYS): nothing done"
        emit(args, {"off": True, "message": msg}, lambda _: print(msg))
        return 0
    archive = args.archive or (None if args.drop else current().archive_dir)
    store = open_store(args)
    try:
        report = run(store, days, archive=archive, drop=args.drop, dry_run=args.dry_run,
                     progress=None if args.json else render.progress)
    except RetentionError as err:
        raise UserError(str(err)) from None
    emit(args, report, _show_run)
    return 0


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _show_run(rep: RetentionReport) -> None:
    t = Table(title="Retention" + (" (dry run: nothing changed)" if rep["dry_run"] else ""))
    t.add_column("")
    t.add_column("value", justify="right")
    t.add_row("recorded before", f"{rep['cutoff']} ({rep['older_than_days']:g} days ago)")
    t.add_row("archived to", rep["archive"] or (
        "none given (a real run needs --archive DIR or --drop)" if rep["dry_run"]
        else "nowhere: dropped"))
    t.add_row("matches (hash + replay)" + (" to move" if rep["dry_run"] else " moved"),
              str(rep["matches"] if rep["dry_run"] else rep["removed_matches"]))
    if rep.get("deferred_matches"):
        t.add_row("matches left for the next run (their results not yet in the ratings)",
                  str(rep["deferred_matches"]))
    t.add_row("results-log entries" + (" to trim" if rep["dry_run"] else " trimmed"),
              str(rep.get("results_to_trim", 0) if rep["dry_run"] else rep["trimmed_results"]))
    t.add_row("ratings checkpoint at entry", str(rep["checkpoint"] or "—"))
    t.add_row("Redis memory before", _mb(rep["memory_before"]))
    t.add_row("Redis memory after", _mb(rep["memory_after"]))
    t.add_row("seconds", f"{rep['seconds']:.1f}")
    console().print(t)
    for f in rep["files"]:
        print(f"  {f}")


def cmd_retention_status(args: argparse.Namespace) -> int:
    store = open_store(args)
    cp = load_checkpoint(store)
    out: RetentionStatus = {"memory": memory(store), "matches": store.match_count(),
           "results_retained": store.results_count(),
           "checkpoint": None if cp is None else cp["cursor"],
           "results_in_checkpoint": 0 if cp is None else cp["results"],
           "retain_days": current().retain_days, "archive_dir": current().archive_dir}

    def show(o: RetentionStatus) -> None:
        print(f"Redis memory        {_mb(o['memory'])}\n"
              f"matches stored      {o['matches']}\n"
              f"results in the log  {o['results_retained']}")
        if o["checkpoint"]:
            print(f"trimmed             {o['results_in_checkpoint']} results up to entry "
                  f"{o['checkpoint']} (in the ratings checkpoint; tournament tables and "
                  f"history pages count only the retained ones)")
        else:
            print("trimmed             nothing (the whole results log is in Redis)")
        print("policy              " + (f"older than {o['retain_days']} days" if o["retain_days"]
                                         else "keep everything (SUECA_RETAIN_DAYS=0)"))
    emit(args, out, show)
    return 0
