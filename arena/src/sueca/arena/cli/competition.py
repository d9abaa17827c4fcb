"""``sueca-arena competition create|show|list|enter|open|freeze|final|close|export|verify``:
seasons with a lifecycle (draft, open, frozen, final, closed), moved by command or by the times
set at creation (the scheduler moves them: :func:`sueca.arena.competitions.moves.advance`);
the final event (:mod:`sueca.arena.final`), and a competition's export and the check of its
seeds against the key revealed at close (:mod:`sueca.arena.export`), in the last block.

Times are ISO 8601 (``2026-12-02T18:00``, UTC unless an offset is given: ``+01:00``, ``Z``)
or relative to now (``+90s``, ``+30m``, ``+2h``, ``+1d``); they are stored as unix times.
Every move records who asked (``--by``, else the OS user) and when.
"""

from __future__ import annotations

import argparse
import getpass
import json
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from sueca.arena import final
from sueca.arena.cli.common import (
    Bounded,
    Column,
    UserError,
    add_redis,
    clean,
    console,
    emit,
    fitted_table,
    open_store,
)
from sueca.arena.competitions.moves import move
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
from sueca.arena.format import MISSING, when
from sueca.arena.league.competition import CompetitionReport, EntryRow, competition_report
from sueca.arena.lifecycle import (
    DEFAULT,
    DEFAULT_FAIR_PLAY,
    FINAL_FORMATS,
    NEXT_STATE,
    CompetitionError,
    CompetitionSpec,
    DivisionSpec,
    FairPlaySpec,
    FinalSpec,
    State,
    new_spec,
    parse_time,
)
from sueca.arena.records import Transition
from sueca.arena.store.versions import VersionError
from sueca.engine import Variant, VariantError
from sueca.sdk.logs import printable

if TYPE_CHECKING:
    from rich.console import Console

    from sueca.arena.store import Store

#: the command of each move, by the state it moves to
MOVES = {"open": State.OPEN, "freeze": State.FROZEN, "final": State.FINAL, "close": State.CLOSED}
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_TIME_HELP = ("an ISO 8601 time (2026-12-02T18:00, UTC unless it has an offset) or a time "
              "from now (+90s, +30m, +2h, +1d)")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "competition", help="seasons: create, enter, open, freeze, final, close",
        description="Competitions on this arena, each with its rules and a lifecycle: draft "
                    "(created), open (entries and new versions accepted, its ladder rated in "
                    "it), frozen (no new entries or versions; its ladder plays on), final (its "
                    "final event), closed (results kept). A move is made by its command or, "
                    "when the competition was created with its time, by the scheduler. The "
                    "default competition 'ladder' is the arena's ladder: always open, every "
                    "registered bot in it.")
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = _action(acts, "create", "create a competition (in draft) with its rules and times",
                     cmd_create)
    create.description = (f"Create a competition, in draft. A time (WHEN) is {_TIME_HELP}; a "
                          "move without one is made by its command only.")
    create.add_argument("name", metavar="NAME", help="1-40 lower-case letters, digits, '_', "
                                                     "'.', '-'")
    create.add_argument("--variant", nargs="+", action="extend", default=[],
                        metavar="KEY=VALUE", help="rule variants of its matches, e.g. "
                                                  "tie=double target=8")
    create.add_argument("--move-ms", action=Bounded, kind=int, low=1,
                        help="per-move time limit on the referee")
    create.add_argument("--bank-ms", action=Bounded, kind=int, low=0,
                        help="per-seat time bank on the referee (0: none)")
    create.add_argument("--grace-ms", action=Bounded, kind=int, low=0,
                        help="network grace added to each move's limit on the referee")
    for flag, what in (("--open-at", "opens it (entries are taken from its creation until "
                                     "it freezes)"),
                       ("--freeze-at", "freezes it: no new entries or versions after it"),
                       ("--final-at", "starts its final"), ("--close-at", "closes it")):
        create.add_argument(flag, metavar="WHEN", help=f"when the scheduler {what}")
    create.add_argument("--final", choices=FINAL_FORMATS, default="none", dest="final_format",
                        help="the final event's format (default none: the standings when it "
                             "closes are its result)")
    create.add_argument("--final-top", action=Bounded, kind=int, low=2, metavar="N",
                        help="how many enter the final, by rating of record (default all)")
    create.add_argument("--best-of", action=Bounded, kind=int, low=1, default=1, metavar="N",
                        help="duplicate pairs per tie of the final (default 1)")
    size = create.add_mutually_exclusive_group()
    size.add_argument("--division-size", action=Bounded, kind=int, low=2, metavar="N",
                      help="split the entrants into divisions of at most N bots by rating")
    size.add_argument("--divisions", action=Bounded, kind=int, low=1, metavar="N",
                      help="split the entrants into N divisions by rating")
    create.add_argument("--promote", action=Bounded, kind=int, low=0, metavar="N",
                        help="bots promoted and relegated between adjacent divisions each cycle "
                             "(default 1)")
    create.add_argument("--every", metavar="DURATION",
                        help="a promotion cycle's length: 90s, 30m, 2h, 1d (default 1d)")
    create.add_argument("--placement", action=Bounded, kind=int, low=0, metavar="K",
                        help="placement matches a newcomer plays, against bots across the "
                             "ratings, before it gets a division (default 3)")
    create.add_argument("--hosted-only", action="store_true",
                        help="accept hosted bots only (entered by a hosted submission)")
    fair = DEFAULT_FAIR_PLAY
    create.add_argument("--fair-play", metavar="X/Y",
                        help="suspend a bot that faulted (crash, bot error, timeout, "
                             "disconnect) in X of its last Y matches (default "
                             f"{fair['faults']}/{fair['of_last']})")
    create.add_argument("--challenges-per-hour", action=Bounded, kind=int, low=0, metavar="N",
                        help="challenge matches a bot's owner may ask for an hour (default "
                             f"{fair['challenges_per_hour']})")
    show = _action(acts, "show", "a competition's state, times, entrants and moves", cmd_show,
                   by=False)
    show.add_argument("name", metavar="NAME")
    _action(acts, "list", "every competition with its state", cmd_list, by=False)
    enter = _action(acts, "enter", "enter a registered bot (draft or open only)", cmd_enter)
    enter.add_argument("name", metavar="NAME")
    enter.add_argument("bot", metavar="BOT")
    for action, to in MOVES.items():
        mover = _action(acts, action, f"move a competition to {to}", cmd_move)
        mover.add_argument("name", metavar="NAME")
        if to is State.FINAL:  # the final event's driver: sueca.arena.final
            mover.add_argument("--wait", action="store_true", help="wait for the final to be "
                               "played, round by round (progress on stderr)")
    add_record_actions(acts)  # export, verify


def _action(acts: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str,
            func: Any, *, by: bool = True) -> argparse.ArgumentParser:  # Any: a command
    p = acts.add_parser(name, help=help)
    add_redis(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    if by:
        p.add_argument("--by", metavar="WHO", default=None,
                       help="who asks, recorded with the move (default: the OS user)")
    p.set_defaults(func=func)
    return p


# -- parsing ---------------------------------------------------------------------------------
def when_of(flag: str, text: str, now: float) -> float:
    """``text`` as a unix time (:func:`sueca.arena.lifecycle.parse_time`); a
    UserError naming ``flag`` and quoting it otherwise."""
    try:
        return parse_time(text, now)
    except CompetitionError as err:
        raise UserError(f"{flag}: {err}") from None


def parse_duration(flag: str, text: str) -> float:
    """``90s``, ``30m``, ``2h``, ``1d`` (or seconds) as seconds, above 0; UserError quoting it."""
    found = _DURATION.fullmatch(text.strip())
    seconds: float | None = float(found[1]) * _UNITS[found[2]] if found else None
    if seconds is None:
        try:
            seconds = float(text)
        except ValueError:
            seconds = None
    if seconds is None or not 0 < seconds < float("inf"):
        raise UserError(f"bad {flag} {text!r}: a duration above 0, such as 90s, 30m, 2h, 1d")
    return seconds


def parse_fair_play(text: str) -> tuple[int, int]:
    """``X/Y`` (X faults in the last Y matches, 1 <= X <= Y) as (X, Y); UserError quoting it."""
    x, sep, y = text.partition("/")
    if sep and x.strip().isdigit() and y.strip().isdigit() and 1 <= int(x) <= int(y):
        return int(x), int(y)
    raise UserError(f"bad --fair-play {text!r}: X/Y, X faults in the last Y matches "
                    f"(1 <= X <= Y), e.g. 3/10")


def spec_of(args: argparse.Namespace, now: float) -> CompetitionSpec:
    """The spec ``create`` asks for; UserError quoting a bad option."""
    try:
        variant = Variant.parse(args.variant).to_dict()
    except VariantError as err:
        raise UserError(str(err)) from None
    times = {key: when_of(flag, getattr(args, dest), now) if getattr(args, dest) else None
             for key, flag, dest in (("opens_at", "--open-at", "open_at"),
                                     ("freezes_at", "--freeze-at", "freeze_at"),
                                     ("final_at", "--final-at", "final_at"),
                                     ("closes_at", "--close-at", "close_at"))}
    final: FinalSpec = {"format": args.final_format, "top": args.final_top,
                        "best_of": args.best_of}
    divisions: DivisionSpec | None = None
    if args.division_size is not None or args.divisions is not None:
        divisions = {"size": args.division_size, "count": args.divisions,
                     "promote": 1 if args.promote is None else args.promote,
                     "every_s": (86400.0 if args.every is None
                                 else parse_duration("--every", args.every)),
                     "placement": 3 if args.placement is None else args.placement}
    else:
        unused = [flag for flag, value in (("--promote", args.promote), ("--every", args.every),
                                           ("--placement", args.placement)) if value is not None]
        if unused:
            raise UserError(f"{', '.join(unused)} without --division-size N or --divisions N: "
                            "a competition without divisions has no promotions or placement")
    fair: FairPlaySpec = dict(DEFAULT_FAIR_PLAY)  # type: ignore[assignment]
    if args.fair_play is not None:
        fair["faults"], fair["of_last"] = parse_fair_play(args.fair_play)
    if args.challenges_per_hour is not None:
        fair["challenges_per_hour"] = args.challenges_per_hour
    try:
        return new_spec(args.name, variant=variant,
                        limits={"move_ms": args.move_ms, "bank_ms": args.bank_ms,
                                "grace_ms": args.grace_ms},
                        **times, final=final, divisions=divisions,
                        hosted_only=bool(args.hosted_only), fair_play=fair)
    except CompetitionError as err:
        raise UserError(str(err)) from None


def who(args: argparse.Namespace) -> str:
    """Who asks: ``--by`` or the OS user."""
    by = getattr(args, "by", None)
    if by is not None:
        if not by.strip() or len(by) > 80 or not by.isprintable():
            raise UserError(f"bad --by {by!r}: a name of 1 to 80 printable characters")
        return str(by.strip())
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name in this environment (a container's uid)
        return "unknown"


# -- commands --------------------------------------------------------------------------------
def cmd_create(args: argparse.Namespace) -> int:
    spec = spec_of(args, time.time())  # a bad option is said before Redis is asked
    by = who(args)
    store = open_store(args)
    try:
        store.competitions.create(spec, by=by)
    except CompetitionError as err:
        raise UserError(str(err)) from None
    return _show(args, store, spec["name"])


def cmd_show(args: argparse.Namespace) -> int:
    return _show(args, open_store(args), args.name)


def cmd_enter(args: argparse.Namespace) -> int:
    by = who(args)
    store = open_store(args)
    try:
        # hosted: the bot runs a submission on the bot hosts at its current version (a
        # competition may take hosted bots only)
        hosted = store.hosted.hosted().get(args.bot)
        entry = store.competitions.enter(
            args.name, args.bot, by=by, hosted=hosted is not None
            and hosted["version"] == store.versions.current(args.bot))
    except CompetitionError as err:
        raise UserError(str(err)) from None
    emit(args, entry, lambda e: print(f"entered {e['bot']} in {args.name}"))
    return 0


def cmd_move(args: argparse.Namespace) -> int:
    to = MOVES[args.action]
    by = who(args)
    store = open_store(args)
    try:
        if to is State.FINAL:  # the final event: sueca.arena.final starts it (and waits)
            return final_command(store, args, lambda: move(store, args.name, to, by=by))
        if to is State.CLOSED:
            final.check_closable(store, args.name)
        step = move(store, args.name, to, by=by)
    except (CompetitionError, VersionError) as err:
        raise UserError(str(err)) from None
    emit(args, step, lambda s: print(f"{args.name}: {s['from_state']} -> {s['to']} (by "
                                     f"{s['by']}, {when(s['at'])} UTC)"))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    store = open_store(args)
    now = time.time()
    rows: list[dict[str, Any]] = []
    for name in store.competitions.names():
        record = store.competitions.get(name)
        if record is None:  # removed meanwhile
            continue
        rows.append({"name": name, "state": str(record["state"]),
                     "entrants": len(store.competitions.entries(name)),
                     "created": record["created"], "next": _next(record["spec"],
                                                                 record["state"], now)})
    if args.json:
        print(json.dumps(clean(rows), indent=2))
        return 0
    out = console()
    cells = [[r["name"], r["state"], str(r["entrants"]), _next_words(r["next"]),
              when(r["created"]) if r["created"] else "always"] for r in rows]
    columns: tuple[Column, ...] = (("competition", None), ("state", None), ("entrants", None),
                                   ("next move (UTC)", 1), ("created (UTC)", 0))
    out.print(fitted_table("Competitions", f"{len(rows)} on this arena", columns=columns,
                           rows=cells, out=out, name=0))
    return 0


def _next(spec: CompetitionSpec, state: State, now: float) -> dict[str, Any] | None:
    """The next move the competition's times set: ``{"to", "at", "due"}``, or None when the
    next move is by command only (or nothing follows)."""
    to = NEXT_STATE.get(state)
    at = None if to is None else {State.OPEN: spec["opens_at"], State.FROZEN: spec["freezes_at"],
                                  State.FINAL: spec["final_at"],
                                  State.CLOSED: spec["closes_at"]}.get(to)
    if to is None or at is None:
        return None
    return {"to": str(to), "at": at, "due": at <= now}


def _next_words(step: Mapping[str, Any] | None) -> str:
    if step is None:
        return "by command"
    return f"{step['to']} {when(step['at'])}" + (" (due)" if step.get("due") else "")


def _show(args: argparse.Namespace, store: Store, name: str) -> int:
    try:
        data = competition_report(store, name)
    except CompetitionError as err:
        raise UserError(str(err)) from None
    emit(args, data, print_report)
    return 0


def print_report(data: CompetitionReport, out: Console | None = None) -> None:
    """The state, rules and times, the entrants, the moves and the divisions' changes, each
    fitted to the console."""
    out = out or console()
    spec = data["spec"]
    default = data["name"] == DEFAULT
    lines = [f"[bold]Competition {escape(data['name'])}[/] — {data['state']}"
             + (" (the arena's ladder: every registered bot, always open)" if default else "")]
    words = Variant.from_dict(spec["variant"]).words()
    limits = {k: v for k, v in spec["limits"].items() if v is not None}
    lines.append(f"rules: {' '.join(words) or 'default'}"
                 + "".join(f" {k}={v}" for k, v in sorted(limits.items())))
    if not default:
        lines += [f"{label}: {when(at) + ' UTC' if at is not None else 'by command'}"
                  for label, at in (("opens", spec["opens_at"]), ("freezes", spec["freezes_at"]),
                                    ("final starts", spec["final_at"]),
                                    ("closes", spec["closes_at"]))]
        final = spec["final"]
        lines.append(f"final event: {final['format']}" + (
            f", top {final['top'] or 'all'}, best of {final['best_of']}"
            if final["format"] != "none" else ""))
        shape = spec["divisions"]
        if shape:
            split = (f"of at most {shape['size']} bots" if shape["size"]
                     else f"{shape['count']}")
            lines.append(f"divisions: {split} by rating, {shape['promote']} promoted every "
                         f"{_duration(shape['every_s'])}, {shape['placement']} placement "
                         "matches for a newcomer")
        fair = spec["fair_play"]
        lines.append(f"fair play: suspended after {fair['faults']} faults in "
                     f"{fair['of_last']} matches; {fair['challenges_per_hour']} challenges "
                     "an hour")
        if spec["hosted_only"]:
            lines.append("entries: hosted bots only")
        lines.append(f"seed hash: {data['seed_hash']}"
                     + (f" · seed key: {data['seed_key']}" if data["seed_key"] else ""))
    for line in lines:
        out.print(line, highlight=False, soft_wrap=True)
    entries = data["entries"]
    placement = spec["divisions"]["placement"] if spec["divisions"] else 0
    cells = [[e["bot"], _version_cell(e), _division_cell(e, placement),
              when(e["entered"]) if e["entered"] else MISSING, str(e["by"]) or MISSING]
             for e in entries]
    columns: tuple[Column, ...] = (("bot", None), ("version", None), ("division", None),
                                   ("entered (UTC)", 1), ("by", 0))
    out.print(fitted_table("Entrants", f"{len(entries)} · version: the frozen one once frozen, "
                           "else the current one (*) · division 1 is the top", columns=columns,
                           rows=cells, out=out, name=0))
    if default:
        return
    moves = [[m["from_state"] or "(created)", m["to"], when(m["at"]), str(m["by"])]
             for m in data["log"]]
    out.print(fitted_table("Moves", f"{len(moves)} recorded", columns=(
        ("from", None), ("to", None), ("at (UTC)", None), ("by", None)), rows=moves, out=out,
        name=3))
    changes = data["divisions_log"]
    if changes:
        rows = [[c["kind"], when(c["at"]), c["by"],
                 " ".join(f"{m['bot']}→{m['to'] + 1}" for m in c["moves"]) or "(no one)"]
                for c in changes]
        out.print(fitted_table("Divisions", "each change: bot→its division (1 is the top)",
                               columns=(("change", None), ("at (UTC)", None), ("by", None),
                                        ("moves", None)), rows=rows, out=out, name=3))


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


def _version_cell(entry: EntryRow) -> str:
    if entry["version"] is not None:
        return str(entry["version"])
    return f"{entry['current_version']}*"


def _division_cell(entry: EntryRow, placement: int) -> str:
    if entry["division"] is not None:
        return str(entry["division"] + 1)
    if placement:
        return f"placing {entry['placed']}/{placement}"
    return MISSING


# -- the final event, the export and the seed check (sueca.arena.final, sueca.arena.export) --
SHOWN = 20  # wrong seeds listed (--json has them all)


def add_record_actions(acts: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
