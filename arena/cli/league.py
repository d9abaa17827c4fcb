"""League commands: ``tournament``, ``leaderboard``, ``matches``, ``worker``, ``scheduler`` and
``ratings``. Each takes ``--redis URL`` (default: SUECA_REDIS_URL); an unreachable Redis is a
plain error, not a stack trace. Heavy imports (celery, rich, openskill) happen inside commands.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from sueca.arena.cli import Bounded, UserError


# -- shared helpers ----------------------------------------------------------------------------
def add_redis(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--redis", metavar="URL", default=None,
                        help="Redis URL (default: $SUECA_REDIS_URL)")


def add_port(parser: argparse.ArgumentParser, flag: str, **kwargs: Any) -> None:
    """A TCP port option to listen on: 1..65535 (0, "any free port", would be unknowable)."""
    parser.add_argument(flag, action=Bounded, kind=int, low=1, high=65535, **kwargs)


def redis_url(args: argparse.Namespace) -> str:
    url = getattr(args, "redis", None) or os.environ.get("SUECA_REDIS_URL")
    if not url:
        raise UserError("no Redis given: pass --redis URL or set SUECA_REDIS_URL "
                        "(or try `sueca-arena demo`, which starts its own)")
    return url


def add_redis_action(actions: argparse._SubParsersAction, name: str, help: str, func: Any,
                     with_json: bool = True) -> argparse.ArgumentParser:
    """An ACTION parser taking ``--redis URL`` (and ``--json``) that runs ``func``."""
    p = actions.add_parser(name, help=help)
    add_redis(p)
    if with_json:
        p.add_argument("--json", action="store_true")
    p.set_defaults(func=func)
    return p


def open_store(args: argparse.Namespace):  # -> Store
    from sueca.arena.store import Store, StoreUnavailable
    try:
        return Store.from_url(redis_url(args))
    except StoreUnavailable as err:
        raise UserError(str(err)) from None


def _fmt(x: float | None, digits: int = 0) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isinf(x)) else f"{x:.{digits}f}"


def _clean(x: Any) -> Any:
    """JSON-safe: no inf/nan."""
    if isinstance(x, float) and (math.isinf(x) or math.isnan(x)):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def _emit(args: argparse.Namespace, data: Any, show: Any) -> None:
    """``data`` as JSON with ``--json`` (no inf/nan), else ``show(data)``."""
    if args.json:
        print(json.dumps(_clean(data), indent=2))
    else:
        show(data)


def _console(stderr: bool = False):
    """A rich console; piped output gets 120 columns so tables never wrap a bot's name."""
    from rich.console import Console
    console = Console(stderr=stderr, highlight=False)
    if not console.is_terminal:
        console = Console(stderr=stderr, highlight=False, width=120)
    return console


def add_parser(sub: argparse._SubParsersAction) -> None:
    _add_tournament(sub)
    _add_leaderboard(sub)
    _add_matches(sub)
    _add_worker(sub)
    _add_scheduler(sub)
    _add_ratings(sub)


# -- tournament --------------------------------------------------------------------------------
def _add_tournament(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tournament", help="run a round-robin tournament through the workers")
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    run = acts.add_parser("run", help="schedule what is missing, show progress, print the table")
    add_redis(run)
    run.add_argument("--bots", required=True, help="comma-separated registered bot names")
    run.add_argument("--matches-per-pair", "-k", action=Bounded, kind=int, low=1, default=2,
                     metavar="K",
                     help="matches each pair of bots plays (even with --duplicate; default 2)")
    run.add_argument("--duplicate", action="store_true",
                     help="play matches in pairs with the same decks and the teams swapped")
    run.add_argument("--variant", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
                     help="rule variants, e.g. tie=double target=8")
    run.add_argument("--id", dest="tid", help="tournament id; re-run an id to finish it")
    run.add_argument("--move-ms", action=Bounded, kind=int, low=1,
                     help="per-move time limit on the referee")
    run.add_argument("--bank-ms", action=Bounded, kind=int, low=1,
                     help="per-seat time bank on the referee")
    run.add_argument("--timeout", action=Bounded, kind=float, low=0, above=True, default=None,
                     help="give up waiting after this many seconds (the matches stay queued)")
    run.add_argument("--requeue-after", action=Bounded, kind=float, low=0, above=True,
                     default=900.0, metavar="S",
                     help="re-queue a queued/running match untouched for S seconds (default 900)")
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    run.set_defaults(func=cmd_tournament_run)
    add_redis_action(acts, "show", "the table of a tournament, as far as it has got",
                     cmd_tournament_show).add_argument("tid", metavar="ID")
    add_redis_action(acts, "list", "recent tournaments and their progress", cmd_tournament_list)


def _new_tid() -> str:
    import secrets
    return time.strftime("t%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def prepare_tournament(store: Any, bots: Sequence[str], k: int, duplicate: bool,
                       variant_words: Sequence[str], tid: str | None,
                       limits: Mapping[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """Validate and store a tournament (or find the one with that id); returns (id, spec)."""
    from sueca.arena.bots import BotRegistry
    from sueca.arena.schedule import round_robin, same_tournament, tournament_spec
    from sueca.arena.store import TournamentConflict
    from sueca.engine import Variant, VariantError
    try:
        variant = Variant.parse(variant_words)
    except VariantError as err:
        raise UserError(str(err)) from None
    registry = BotRegistry(store.r, store.keys)
    unknown = [b for b in bots if not registry.exists(b)]
    if unknown:
        raise UserError(f"unknown bot(s) {', '.join(map(repr, unknown))}: register with "
                        f"`sueca-arena bots add NAME` (registered: "
                        f"{', '.join(registry.names()) or 'none'})")
    try:
        spec = tournament_spec(bots, k, duplicate, variant.to_dict(), limits)
    except ValueError as err:
        raise UserError(str(err)) from None
    tid = tid or _new_tid()
    if not tid.replace("-", "").replace("_", "").replace(".", "").isalnum() or len(tid) > 80:
        raise UserError(f"bad tournament id {tid!r}: letters, digits, '-', '_', '.'; at most 80")
    try:
        _, stored = store.create_tournament(tid, spec, round_robin, same_tournament)
    except TournamentConflict as err:
        raise UserError(str(err)) from None
    return tid, stored


def enqueue_missing(store: Any, tid: str, requeue_after: float = 900.0,
                    mode: str | None = None) -> int:
    """Queue every match of ``tid`` that is neither recorded nor already queued; returns how
    many. Claims are atomic, so two concurrent runs never queue one match twice."""
    from sueca.arena.tasks import enqueue
    mids = [m for m in store.tournament_matches(tid) if store.claim(m, requeue_after)]
    if mids:
        try:
            enqueue(mids, mode)
        except BaseException:  # broker down, Ctrl-C: give the claims back so a re-run queues them
            for m in mids:
                store.set_status(m, "pending")
            raise
    return len(mids)


def wait_for(store: Any, tid: str, timeout: float | None = None, quiet: bool = False,
             label: str | None = None) -> dict[str, int]:
    """Progress bar (on stderr) until no match of ``tid`` is pending, queued or running.

    Redis not answering for a while (a restart, a failover, a pause) is waited out with a note,
    not a traceback: the matches are in Redis and the workers carry on when it is back."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from sueca.arena.store import TRANSIENT_REDIS_ERRORS
    deadline = None if timeout is None else time.monotonic() + timeout
    last_change, last_done, hinted = time.monotonic(), -1, False
    console = _console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[extra]}"), TimeElapsedColumn(), console=console,
                  disable=quiet, transient=False) as bar:
        progress = store.progress(tid)
        task = bar.add_task(label or f"tournament {tid}", total=progress["total"], extra="")
        while True:
            try:
                progress = store.progress(tid)
            except TRANSIENT_REDIS_ERRORS as err:
                if deadline is not None and time.monotonic() > deadline:
                    raise UserError(f"tournament {tid}: Redis stopped answering ({err}); the "
                                    f"matches stay queued — re-run with --id {tid} to wait for "
                                    "them") from None
                bar.update(task, extra="[yellow]Redis not answering: waiting[/]")
                time.sleep(0.5)
                continue
            finished = progress["done"] + progress["failed"]
            extra = f"[red]{progress['failed']} failed[/]" if progress["failed"] else ""
            bar.update(task, completed=finished, extra=extra)
            if finished >= progress["total"] or (
                    progress["pending"] + progress["queued"] + progress["running"] == 0):
                return progress
            now = time.monotonic()
            if finished != last_done:
                last_done, last_change = finished, now
            elif not hinted and now - last_change > 15 and not quiet:
                console.print("[yellow]no progress for 15 s: is a worker running? "
                              "(`sueca-arena worker --redis URL`)[/]")
                hinted = True
            if deadline is not None and now > deadline:
                raise UserError(f"tournament {tid}: {finished} of {progress['total']} matches "
                                f"done after {timeout:.0f}s; the rest stay queued — re-run with "
                                f"--id {tid} to wait for them")
            time.sleep(0.05)


def tournament_report(store: Any, tid: str) -> dict[str, Any]:
    from sueca.arena.ratings import load_config, standings
    t = store.tournament(tid)
    if t is None:
        raise UserError(f"unknown tournament {tid!r}")
    elo_k, _ = load_config(store)
    results = store.tournament_results(tid)
    failed = [{"match_id": m["id"], "error": m.get("error", "")}
              for m in store.recent_matches(tournament=tid) if m["status"] == "failed"]
    spec = {k: v for k, v in t["spec"].items() if k != "secret"}
    return {"tournament": tid, "spec": spec, "matches": t["total"], "recorded": len(results),
            "failed": failed, "standings": standings(results, elo_k)}


def print_table(report: Mapping[str, Any], console: Any = None) -> None:
    from rich.table import Table
    console = console or _console()
    dup = report["spec"].get("duplicate")
    unit = "pairs" if dup else "matches"
    table = Table(title=f"Tournament {report['tournament']} — {report['recorded']}/"
                        f"{report['matches']} matches" + (" (duplicate)" if dup else ""))
    for col, just in (("#", "right"), ("bot", "left"), (unit, "right"),
                      ("W-D-L", "right"), ("points", "right"), ("win %", "right"),
                      ("game pts", "right"), ("Elo ±95%", "right"), ("OpenSkill μ ±2σ", "right"),
                      ("faults", "right")):
        table.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
    for n, r in enumerate(report["standings"], 1):
        table.add_row(str(n), r["bot"], str(r["units"]), f"{r['won']}-{r['drawn']}-{r['lost']}",
                      f"{r['points']:g}", _fmt(r["win_pct"], 1),
                      f"{r['gp_for']}–{r['gp_against']}",
                      f"{r['elo']:.0f} ± {_fmt(r['elo_pm'])}",
                      f"{r['mu']:.1f} ± {r['mu_pm']:.1f}", str(r["faults"]))
    console.print(table)
    for f in report["failed"]:
        console.print(f"[red]failed[/] {f['match_id']}: {f['error']}")


def run_tournament(store: Any, bots: Sequence[str], k: int, duplicate: bool,
                   variant_words: Sequence[str] = (), tid: str | None = None,
                   limits: Mapping[str, Any] | None = None, timeout: float | None = None,
                   requeue_after: float = 900.0, quiet: bool = False) -> dict[str, Any]:
    tid, _ = prepare_tournament(store, bots, k, duplicate, variant_words, tid, limits)
    queued = enqueue_missing(store, tid, requeue_after)
    if not quiet:
        total = store.tournament(tid)["total"]
        _console(stderr=True).print(
            f"tournament [bold]{tid}[/]: {total} matches, {queued} queued now "
            f"(re-run with --id {tid} to finish it if interrupted)")
    store.set_tournament_status(tid, "running")
    progress = wait_for(store, tid, timeout, quiet)
    store.set_tournament_status(tid, "failed" if progress["failed"] else "done")
    return tournament_report(store, tid)


def cmd_tournament_run(args: argparse.Namespace) -> int:
    store = open_store(args)
    from sueca.arena.celery_app import configure
    configure(redis_url(args))
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    limits = {"move_ms": args.move_ms, "bank_ms": args.bank_ms}
    report = run_tournament(store, bots, args.matches_per_pair, args.duplicate, args.variant,
                            args.tid, limits, args.timeout, args.requeue_after, quiet=False)
    _emit(args, report, print_table)
    return 1 if report["failed"] else 0


def cmd_tournament_show(args: argparse.Namespace) -> int:
    report = tournament_report(open_store(args), args.tid)
    _emit(args, report, print_table)
    return 0


def cmd_tournament_list(args: argparse.Namespace) -> int:
    store = open_store(args)
    rows = []
    for tid in store.tournament_ids(50):
        t = store.tournament(tid) or {}
        p = store.progress(tid)
        rows.append({"id": tid, "bots": t.get("spec", {}).get("bots"),
                     "status": t.get("status"), **p})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    from rich.table import Table
    table = Table(title="Tournaments")
    for col in ("id", "bots", "status", "done", "failed", "total"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["id"], ",".join(r["bots"] or ()), str(r["status"]), str(r["done"]),
                      str(r["failed"]), str(r["total"]))
    _console().print(table)
    return 0


# -- leaderboard -------------------------------------------------------------------------------
def _add_leaderboard(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("leaderboard", help="live ratings of the registered bots")
    add_redis(p)
    p.add_argument("--by", choices=("elo", "openskill"), default="elo",
                   help="order by Elo or by OpenSkill's conservative mu - 3 sigma")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_leaderboard)


def leaderboard(store: Any, by: str = "elo") -> list[dict[str, Any]]:
    from sueca.arena.bots import BotRegistry
    from sueca.arena.ratings import catch_up, load
    catch_up(store)  # a worker that died between recording and rating leaves nothing behind
    registered = set(BotRegistry(store.r, store.keys).names())
    rows = []
    for bot, r in load(store).items():
        if bot in registered:
            rows.append({"bot": bot, **r.as_dict()})
    key = (lambda r: -r["elo"]) if by == "elo" else (lambda r: -r["ordinal"])
    rows.sort(key=lambda r: (key(r), r["bot"]))
    for n, r in enumerate(rows, 1):
        r["rank"] = n
    return rows


def print_leaderboard(rows: Sequence[Mapping[str, Any]], console: Any = None) -> None:
    from rich.table import Table
    table = Table(title="Leaderboard")
    for col in ("#", "bot", "Elo ±95%", "OpenSkill μ ±2σ", "games", "score"):
        table.add_column(col, justify="left" if col == "bot" else "right", no_wrap=True)
    for r in rows:
        table.add_row(str(r["rank"]), r["bot"], f"{r['elo']:.0f} ± {_fmt(r['elo_pm'])}",
                      f"{r['mu']:.1f} ± {r['mu_pm']:.1f}", str(r["games"]), f"{r['score']:g}")
    (console or _console()).print(table)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    rows = leaderboard(open_store(args), args.by)
    _emit(args, rows, print_leaderboard)
    return 0


# -- matches -----------------------------------------------------------------------------------
def _add_matches(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("matches", help="recent matches, or `matches show ID` for one replay")
    add_redis(p)
    p.add_argument("show", nargs="*", metavar="show ID",
                   help="show one match: its result and replay")
    p.add_argument("--tournament", metavar="ID", help="only this tournament's matches")
    p.add_argument("--limit", action=Bounded, kind=int, low=1, default=20)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_matches)


def cmd_matches(args: argparse.Namespace) -> int:
    store = open_store(args)
    if args.show:
        if len(args.show) != 2 or args.show[0] != "show":
            raise UserError(f"expected `matches show ID`, got {' '.join(args.show)!r}")
        return show_match(store, args.show[1], args.json)
    rows = store.recent_matches(args.limit, tournament=args.tournament)
    if args.tournament is not None and not rows and store.tournament(args.tournament) is None:
        raise UserError(f"unknown tournament {args.tournament!r}")
    out = []
    for m in rows:
        res = store.result_of(m["id"]) if m["status"] == "done" else None
        out.append({"id": m["id"], "status": m["status"], "seats": m["spec"].get("bots"),
                    "tournament": m.get("tournament", ""), "attempts": m["attempts"],
                    "end": (res or {}).get("end"), "winner": (res or {}).get("winner"),
                    "game_points": (res or {}).get("game_points"),
                    "fault_bot": (res or {}).get("fault_bot"),
                    "referee": (res or {}).get("referee") or m.get("referee"),
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
    _console().print(table)
    return 0


def show_match(store: Any, mid: str, as_json: bool, replay_only: bool = False) -> int:
    """Print match ``mid`` of ``store`` trick by trick (``matches show ID``, ``replay show ID``).

    With ``as_json``: ``{"match", "result", "replay"}``, or only the replay record (``null``
    when there is none yet) with ``replay_only``. An unknown id is a :class:`UserError`.
    """
    m = store.match(mid)
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
    _console().print(render_match(rec))
    return 0


# -- worker ------------------------------------------------------------------------------------
def _add_worker(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("worker", help="a Celery worker that plays and records matches")
    add_redis(p)
    p.add_argument("--concurrency", "-c", action=Bounded, kind=int, low=1, default=2,
                   help="pool processes (default 2)")
    p.add_argument("--referee", action="append", default=[], metavar="ADDR",
                   help="a referee replica (repeatable; replicas that heartbeat into Redis are "
                        "found without it)")
    p.add_argument("--runner", choices=("referee", "local"), default=None,
                   help="referee (default) or local: play bots in-process, no referee (trusted "
                        "code only: an in-process bot can read the engine's hidden state)")
    add_port(p, "--metrics-port", default=None,
             help="serve Prometheus metrics of all pool processes on this port")
    p.add_argument("--queues", "-Q", default=None,
                   help="comma-separated queues to consume (default: sueca.matches)")
    p.add_argument("--loglevel", default="INFO")
    p.add_argument("--hostname", "-n", default=None, help="Celery node name")
    p.set_defaults(func=cmd_worker)


def cmd_worker(args: argparse.Namespace) -> int:
    url = redis_url(args)
    check_operator_settings()
    open_store(args)  # a clear error now rather than a reconnect loop
    os.environ["SUECA_REDIS_URL"] = url
    if args.referee:
        os.environ["SUECA_REFEREES"] = ",".join(args.referee)
    if args.runner:
        os.environ["SUECA_RUNNER"] = args.runner
    if args.metrics_port is not None:
        os.environ["SUECA_METRICS_PORT"] = str(args.metrics_port)
    from sueca.arena.celery_app import app, configure, prepare_metrics_env
    prepare_metrics_env()
    configure(url)
    name = args.hostname or f"sueca-{os.getpid()}@%h"
    argv = ["worker", "--pool=prefork", f"--concurrency={args.concurrency}",
            f"--loglevel={args.loglevel}", "-n", name, "--without-gossip", "--without-mingle",
            "-Ofair"]
    if args.queues:
        argv += ["-Q", args.queues]
    app.worker_main(argv)
    return 0


# -- scheduler (ladder) ------------------------------------------------------------------------
def _add_scheduler(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scheduler", help="the continuous ladder: keep N matches running")
    add_redis(p)
    p.add_argument("--target", action=Bounded, kind=int, low=1, default=4,
                   help="matches to keep in flight (default 4)")
    p.add_argument("--interval", action=Bounded, kind=float, low=0, above=True, default=1.0,
                   help="seconds between checks")
    p.add_argument("--referee", action="append", default=[], metavar="ADDR",
                   help="a referee replica to find connected bots on (repeatable)")
    p.add_argument("--bots", default=None,
                   help="comma-separated bots to treat as connected (for --runner local workers)")
    p.add_argument("--variant", nargs="+", action="extend", default=[], metavar="KEY=VALUE")
    p.add_argument("--once", action="store_true", help="one round of scheduling, then exit")
    p.set_defaults(func=cmd_scheduler)


def connected_bots(store: Any, static: Sequence[str] | None) -> dict[str, int]:
    """Bot -> free seats over the known replicas (or the static list, with ample seats)."""
    if static:
        return {b: 1000 for b in static}
    from sueca.arena.runner import replicas
    free: dict[str, int] = {}
    try:
        from sueca.referee import control
    except ImportError:
        return free
    for addr in replicas(store):
        try:
            for b in control.list_bots(addr):
                free[b["bot"]] = free.get(b["bot"], 0) + int(b["free"])
        except Exception as err:  # an unreachable replica must not stop the ladder: say so,
            problem = str(err)    # once per replica and problem, not once a tick
            if _LIST_PROBLEMS.get(addr) != problem:
                _LIST_PROBLEMS[addr] = problem
                logging.getLogger("sueca.scheduler").warning("referee %s: %s", addr, problem)
            continue
        _LIST_PROBLEMS.pop(addr, None)
    return free


_LIST_PROBLEMS: dict[str, str] = {}  # replica -> the problem last logged for it


def check_operator_settings() -> None:
    """TLS and operator-token settings are read now, once, so that a bad CA path or a blank
    token stops a worker or scheduler with one line instead of failing every match later."""
    from sueca.sdk.channels import CredentialsError, client_tls_from_env, operator_token_from_env
    try:
        client_tls_from_env()
        operator_token_from_env()
    except CredentialsError as err:
        raise UserError(str(err)) from None


def cmd_scheduler(args: argparse.Namespace) -> int:
    from sueca.arena.schedule import Ladder
    from sueca.engine import Variant, VariantError
    check_operator_settings()
    store = open_store(args)
    from sueca.arena.celery_app import configure
    from sueca.arena.tasks import enqueue
    configure(redis_url(args))
    if args.referee:
        os.environ["SUECA_REFEREES"] = ",".join(args.referee)
    try:
        variant = Variant.parse(args.variant).to_dict()
    except VariantError as err:
        raise UserError(str(err)) from None
    static = [b.strip() for b in args.bots.split(",")] if args.bots else None
    ladder = Ladder(store, args.target, lambda: connected_bots(store, static),
                    lambda mid: enqueue([mid]), variant)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    console = _console(stderr=True)
    last_note = 0.0
    from sueca.arena.store import TRANSIENT_REDIS_ERRORS
    outage = False
    while not stop["now"]:
        try:
            new = ladder.tick()
        except TRANSIENT_REDIS_ERRORS as err:  # waited out, said once: the ladder is in Redis
            if args.once:
                raise UserError(f"Redis stopped answering: {err}") from None
            if not outage:
                console.print(f"[yellow]ladder: Redis not answering ({err}); waiting[/]")
            outage = True
            time.sleep(args.interval)
            continue
        if outage:
            console.print("ladder: Redis is back")
            outage = False
        if new:
            console.print(f"ladder: queued {len(new)} match(es): {', '.join(new)}")
        elif time.monotonic() - last_note > 30 and len(ladder.running()) < args.target:
            console.print("ladder: below target and nothing scheduled: fewer than 2 registered "
                          "bots with free seats on the known referees (or another scheduler "
                          "holds the ladder lock); waiting")
            last_note = time.monotonic()
        if args.once:
            break
        time.sleep(args.interval)
    return 0


# -- ratings -----------------------------------------------------------------------------------
def _add_ratings(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ratings", help="rebuild ratings from the results log, or export them")
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    rb = acts.add_parser("rebuild", help="recompute every rating from the results log")
    add_redis(rb)
    rb.add_argument("--elo-k", action=Bounded, kind=float, low=0, above=True, default=None,
                    help="use (and keep) this Elo K")
    rb.add_argument("--check", action="store_true",
                    help="only compare with the live ratings; exit 1 if they differ")
    rb.add_argument("--json", action="store_true")
    rb.set_defaults(func=cmd_ratings_rebuild)
    ex = acts.add_parser("exporter", help="serve sueca_rating{bot,system} for Prometheus")
    add_redis(ex)
    add_port(ex, "--metrics-port", required=True)
    ex.add_argument("--addr", default="0.0.0.0")
    ex.set_defaults(func=cmd_ratings_exporter)


def cmd_ratings_rebuild(args: argparse.Namespace) -> int:
    from sueca.arena.ratings import rebuild
    store = open_store(args)
    report = rebuild(store, elo_k=args.elo_k, write=not args.check)
    same = report["max_diff"] == 0.0
    if args.json:
        out = {k: v for k, v in report.items() if k != "ratings"}
        out["identical"] = same
        out["ratings"] = {b: r.as_dict() for b, r in sorted(report["ratings"].items())}
        print(json.dumps(_clean(out), indent=2))
    else:
        verdict = ("identical to the live ratings" if same else
                   f"largest difference from the live ratings: {report['max_diff']:.6g}")
        action = "checked" if args.check else "rebuilt"
        print(f"{action} {report['bots']} ratings from {report['results']} results "
              f"(Elo K={report['elo_k']:g}): {verdict}")
    return 1 if (args.check and not same) else 0


def cmd_ratings_exporter(args: argparse.Namespace) -> int:
    from sueca.arena.metrics import serve_ratings
    store = open_store(args)
    serve_ratings(args.metrics_port, store, args.addr)
    print(f"serving ratings on http://{args.addr}:{args.metrics_port}/metrics", file=sys.stderr)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    while not stop["now"]:
        time.sleep(0.5)
    return 0
