"""``sueca-arena loadtest TARGET``: how does a bot hold up with many games at once?

TARGET is a bot as ``selfplay`` takes it (``random``, ``mybot:Greedy``, ``./mybot.py:Greedy``):
the command starts a private arena on loopback (Redis, a referee with house bots, and
``--bot-processes`` ``sueca-bot run TARGET`` processes) and stops it afterwards. Or load a bot
that is already running and registered, in any language: ``--bot NAME --server ADDR`` (that
referee must run with ``--house-bots``; the operator token comes from SUECA_OPERATOR_TOKEN).
``--server A,B`` sends the matches to several referees in turn, the result split by referee.

Every match seats the target once and house bots (``--house``) in the other seats, played inside
the referee, so every move the referee waits for is the target's. The load: up to ``--games``
matches at once, ramped up and down over ``--ramp`` seconds, for ``--duration`` seconds, at most
``--rate`` new matches per second. While it runs, a live view; at the end a table (and with
``--json`` one JSON line last), and with ``--report FILE.html`` a self-contained HTML report.

Exit status: 0 when the target did not fault and every SLO given holds; 1 when it faulted
(a timeout, bot error, disconnect, protocol fault or failed match: ``--max-timeouts`` and
``--max-faults`` default to 0, or to no limit with ``--allow-faults``) or an SLO is broken
(``--slo-p99-ms``; each broken one is named on stderr); 2 for a usage error. Late answers (after
their game ended) are counted apart and never fail the run. How the latency is measured: see
sueca.arena.loadtest.generator.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sueca.arena.cli.common import Bounded, UserError, clean
from sueca.arena.cli.common import console as make_console
from sueca.arena.loadtest.generator import (
    MAX_DURATION,
    MAX_GAMES,
    LoadTestError,
    Shape,
    Stats,
    Target,
    check_slo,
    run_load,
    summary,
)
from sueca.arena.loadtest.private_arena import PrivateArena
from sueca.arena.loadtest.report import html_report, machine
from sueca.arena.store.bots import BotRegistryError, check_name
from sueca.engine import Variant
from sueca.engine.errors import SuecaError
from sueca.referee import control
from sueca.sdk.cli.common import load_checked

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("loadtest", help="load-test one bot: many matches at once against the "
                                        "referee's house bots; latency, throughput, faults",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("target", nargs="?", metavar="TARGET",
                   help="bot to start on a private arena: random, module:Class, file.py:Class")
    p.add_argument("--bot", metavar="NAME", help="load this running, registered bot instead "
                                                 "(with --server)")
    p.add_argument("--server", metavar="ADDR[,ADDR...]",
                   help="the referee --bot is connected to: its operator address (its "
                        "--operator-port, if it has one); several, comma-separated, take the "
                        "matches in turn and the result is split by referee")
    p.add_argument("--metrics-url", metavar="URL", default=None,
                   help="with --server: that referee's /metrics, to count protocol faults")
    p.add_argument("--house", default="random", metavar="NAMES",
                   help="house bots in the other seats, comma-separated (default random; "
                        "also heuristic, reckless)")
    p.add_argument("--games", action=Bounded, kind=int, low=1, high=MAX_GAMES, default=16,
                   help="matches in flight at the steady state (default 16, at most 2000)")
    p.add_argument("--duration", action=Bounded, kind=float, low=0, high=MAX_DURATION, above=True,
                   default=10.0, help="seconds of load (default 10, at most 3600)")
    p.add_argument("--rate", action=Bounded, kind=float, low=0, default=0.0,
                   help="new matches per second at most (default 0: no limit but --games)")
    p.add_argument("--ramp", action=Bounded, kind=float, low=0, default=None,
                   help="seconds of ramp-up and of ramp-down (default min(5, duration/4))")
    p.add_argument("--drain-seconds", action=Bounded, kind=float, low=0, high=600, default=30.0,
                   help="after --duration, how long running matches may take (default 30)")
    p.add_argument("--variant", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
                   help="rule variants, e.g. tie=double target=8")
    p.add_argument("--move-ms", action=Bounded, kind=int, low=1, help="per-move time limit")
    p.add_argument("--bank-ms", action=Bounded, kind=int, low=0,
                   help="per-seat time bank (0: none, every move within --move-ms)")
    p.add_argument("--grace-ms", action=Bounded, kind=int, low=1,
                   help="time a lost connection has to come back")
    p.add_argument("--bot-processes", action=Bounded, kind=int, low=1, high=16, default=1,
                   help="`sueca-bot run TARGET` processes on the private arena (default 1)")
    p.add_argument("--net-rtt-ms", action=Bounded, kind=float, low=0, high=2000, default=0.0,
                   help="with TARGET: put a delaying TCP proxy (loopback) between the target's "
                        "processes and the referee, adding this round trip (default 0: none)")
    p.add_argument("--net-jitter-ms", action=Bounded, kind=float, low=0, high=2000, default=0.0,
                   help="with --net-rtt-ms: jitter, ± half of this per direction, never "
                        "reordering a stream (default 0)")
    p.add_argument("--slo-p99-ms", action=Bounded, kind=float, low=0, above=True, default=None,
                   help="fail (exit 1) when the target's p99 latency is above this")
    p.add_argument("--max-timeouts", action=Bounded, kind=int, low=0, default=None,
                   help="fail (exit 1) on more timeouts than this (default 0, none with "
                        "--allow-faults)")
    p.add_argument("--max-faults", action=Bounded, kind=int, low=0, default=None,
                   help="fail (exit 1) on more faults: protocol faults, disconnects, bot "
                        "errors, failed matches (default 0, none with --allow-faults)")
    p.add_argument("--allow-faults", action="store_true",
                   help="a target that faults does not fail the run: only the limits given "
                        "(--max-timeouts, --max-faults, --slo-p99-ms) do")
    p.add_argument("--report", metavar="FILE.html", default=None,
                   help="write a self-contained HTML report (charts, settings, machine)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON line last")
    p.add_argument("--keep-logs", action="store_true",
                   help="keep the private arena's logs and print where they are")
    p.set_defaults(func=run)


def _check(args: argparse.Namespace) -> tuple[list[str], Any]:  # Any: the bot factory
    """Every argument checked before anything starts: (house bots, bot factory or None)."""
    from sueca.referee.house import HouseBotError, parse_house_bots  # deferred: bots, ~12 ms
    if (args.target is None) == (args.bot is None):
        raise UserError("give either TARGET (a bot to start: random, mybot:Greedy, "
                        "./mybot.py:Greedy) or --bot NAME --server ADDR (a running bot)")
    if args.bot is not None and not args.server:
        raise UserError(f"--bot {args.bot!r} needs --server ADDR: the referee it is connected to")
    if args.target is not None and (args.server or args.metrics_url):
        raise UserError("--server and --metrics-url go with --bot; TARGET gets its own arena")
    if args.bot is not None and (args.net_rtt_ms or args.net_jitter_ms):
        raise UserError("--net-rtt-ms and --net-jitter-ms go with TARGET: the proxy sits in "
                        "front of the private arena's referee")
    if args.net_jitter_ms > args.net_rtt_ms:
        raise UserError(f"--net-jitter-ms {args.net_jitter_ms:g} is more than --net-rtt-ms "
                        f"{args.net_rtt_ms:g}: the delay each way would go below zero")
    try:
        house = list(parse_house_bots(args.house))
    except HouseBotError as err:
        raise UserError(str(err).replace("--house-bots", "--house")) from None
    try:
        Variant.parse(args.variant)
    except SuecaError as err:
        raise UserError(str(err)) from None
    if args.report is not None:
        folder = Path(args.report).resolve().parent
        if not folder.is_dir():
            raise UserError(f"cannot write --report {args.report!r}: no folder {str(folder)!r}")
    factory = None
    if args.target is not None:
        factory = load_checked(args.target)
    else:
        try:
            check_name(args.bot)
        except BotRegistryError as err:
            raise UserError(str(err)) from None
    return house, factory


def run(args: argparse.Namespace) -> int:
    """Start the private arena (for TARGET), run the load, judge it, and stop the arena,
    keeping its logs (and saying where) when the run failed or ``--keep-logs`` asks."""
    house, _ = _check(args)
    err_console = make_console(stderr=True)
    shape = Shape(games=args.games, duration=args.duration, rate=args.rate, ramp=args.ramp,
                  drain=args.drain_seconds)
    arena = None
    broken: list[str] = ["the run did not finish"]
    try:
        if args.target is not None:
            with err_console.status(f"starting a private arena: Redis, a referee with house "
                                    f"bots, {args.bot_processes} x {args.target}..."):
                try:
                    arena = PrivateArena(args.target, args.bot_processes,
                                         capacity=args.games, house=house,
                                         net_rtt_ms=args.net_rtt_ms,
                                         net_jitter_ms=args.net_jitter_ms).start()
                except RuntimeError as err:
                    raise UserError(f"the private arena did not start: {err}") from None
            address, bot, metrics_url = arena.address, PrivateArena.NAME, arena.metrics_url
        else:
            address, bot, metrics_url = args.server, args.bot, args.metrics_url
            for one in address.split(","):
                _check_connected(one.strip(), bot, args.games, err_console)
        target = Target(address=address, bot=bot, house=house, variant=args.variant,
                        move_ms=args.move_ms, bank_ms=args.bank_ms, grace_ms=args.grace_ms,
                        metrics_url=metrics_url)
        try:
            stats = asyncio.run(_run_live(target, shape, err_console))
        except LoadTestError as err:
            raise UserError(str(err)) from None
        result = _judge(args, summary(stats, shape, target), arena, err_console)
        broken = result["slo_broken"]
    finally:
        if arena is not None:
            with err_console.status("stopping the private arena..."):
                kept = arena.stop(keep_logs=args.keep_logs or bool(broken))
            if kept:
                err_console.print(f"logs kept in {kept}", markup=False, soft_wrap=True)
    print_result(result, make_console(stderr=args.json))
    if args.report:
        _write_report(args.report, html_report(result, stats))
        err_console.print(f"report written to {args.report}", markup=False)
    for line in broken:
        print(f"failed: {line}", file=sys.stderr)
    if broken and not args.allow_faults and None in (args.max_timeouts, args.max_faults):
        print("(--max-timeouts and --max-faults are 0 unless given; --allow-faults lifts "
              "them)", file=sys.stderr)
    if args.json:
        print(json.dumps(clean(result)), flush=True)
    return 1 if broken else 0


def _judge(args: argparse.Namespace, result: dict[str, Any], arena: PrivateArena | None,
           err_console: Console) -> dict[str, Any]:  # Any: the JSON result of the run
    """The run's ``result`` with what was asked, the machine, where the first bot error was
    raised, whether a target process exited, and the SLOs it broke (``slo_broken``)."""
    exited = None
    if arena is not None:
        try:
            arena.check()
        except RuntimeError as err:  # the target died: that is the result, not a crash
            exited = str(err)[:2000]
        if result.get("first_bot_error"):
            result["first_bot_error_at"] = arena.first_raise()
    result["target"] = args.target or args.bot
    result["mode"] = "private arena" if args.target is not None else "running bot"
    result["bot_processes"] = args.bot_processes if args.target is not None else None
    result["net_rtt_ms"], result["net_jitter_ms"] = args.net_rtt_ms, args.net_jitter_ms
    result["machine"] = machine()
    no_limit = None if args.allow_faults else 0
    max_timeouts = no_limit if args.max_timeouts is None else args.max_timeouts
    max_faults = no_limit if args.max_faults is None else args.max_faults
    broken = check_slo(result, args.slo_p99_ms, max_timeouts, max_faults)
    result["target_exited"] = exited
    if exited is not None:
        broken.append("a target process exited during the run: " + exited.splitlines()[0])
        err_console.print(f"a target process exited during the run: {exited}", markup=False)
    result["slo"] = {"p99_ms": args.slo_p99_ms, "max_timeouts": max_timeouts,
                     "max_faults": max_faults}
    result["slo_broken"] = broken
    return result


def _write_report(path: str, page: str) -> None:
    """All or nothing: never a half-written report under the name asked for."""
    partial = f"{path}.partial"
    try:
        with open(partial, "w", encoding="utf-8") as f:
            f.write(page)
        os.replace(partial, path)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise UserError(f"cannot write --report {path!r}: {err}") from None


def _check_connected(address: str, bot: str, games: int, console: Console) -> None:
    try:
        bots = control.list_bots(address)
    except control.RefereeError as err:
        raise UserError(f"cannot list the bots of referee {address!r}: {err}") from None
    row = next((b for b in bots if b["bot"] == bot), None)
    if row is None or not row["sessions"]:
        raise UserError(f"bot {bot!r} is not connected to referee {address!r}: start it "
                        "(`sueca-bot run ... --server ADDR`) first")
    if row["capacity"] < games:
        console.print(f"[yellow]warning:[/] bot {bot!r} has capacity {row['capacity']} on "
                      f"{address}, fewer than --games {games}: matches beyond it will fail")


async def _run_live(target: Target, shape: Shape, console: Console) -> Stats:
    if not console.is_terminal:
        return await run_load(target, shape)
    from rich.live import Live  # deferred: rich (~25 ms), for this run only
    with Live(_live_table({}), console=console, refresh_per_second=4, transient=True) as view:
        return await run_load(target, shape, on_tick=lambda s: view.update(_live_table(s)))


def _v(x: Any, unit: str = "") -> str:
    return "—" if x is None else f"{x:g}{unit}" if isinstance(x, float) else f"{x}{unit}"


def _live_table(s: dict[str, Any]) -> Table:  # Any: live()'s figures
    """The live view: one line per kind of figure, narrow enough for 80 columns."""
    from rich.table import Table  # deferred: rich (~25 ms), for this run only
    t = Table(title=f"loadtest — {s.get('elapsed', 0.0):.1f}s", show_header=False)
    t.add_column("what")
    t.add_column("now", justify="right")
    t.add_row("matches in flight / started", f"{_v(s.get('in_flight'))} / {_v(s.get('started'))}")
    t.add_row("moves/s (all seats / target)",
              f"{_v(s.get('moves_per_s'))} / {_v(s.get('target_moves_per_s'))}")
    t.add_row("target p50/p95/p99/max, last 5 s",
              f"{_v(s.get('p50_ms'))} / {_v(s.get('p95_ms'))} / {_v(s.get('p99_ms'))} / "
              f"{_v(s.get('max_ms'))} ms")
    t.add_row("timeouts/faults/late/renúncias",
              f"{_v(s.get('timeouts'))} / {_v(s.get('faults'))} / {_v(s.get('late_answers'))} / "
              f"{_v(s.get('renuncias'))}")
    return t


def print_result(r: dict[str, Any], out: Console) -> None:  # Any: the JSON result
    """The result as a table on ``out``, then the first errors (where the first bot error was
    raised, when the bot's log says)."""
    from rich.table import Table  # deferred: rich (~25 ms), for this run only
    t = Table(title=f"Load test of {r['target']} — {r['games']} games at once, "
                    f"{r['seconds']:.1f}s", show_header=True)
    t.add_column("measure")
    t.add_column("value", justify="right")
    rows = [("matches started / finished", f"{r['matches_started']} / {r['matches_finished']}"),
            ("moves (all seats), moves/s", f"{r['moves']}, {r['moves_per_s']:g}"),
            ("target moves, per s", f"{r['target_moves']}, {r['target_moves_per_s']:g}"),
            ("target latency p50 / p95 / p99", f"{_v(r['p50_ms'])} / {_v(r['p95_ms'])} / "
                                               f"{_v(r['p99_ms'])} ms"),
            ("target latency max / mean", f"{_v(r['max_ms'])} / {_v(r['mean_ms'])} ms"),
            ("timeouts", _v(r["timeouts"])), ("disconnects", _v(r["disconnects"])),
            ("bot errors", _v(r["bot_errors"])),
            ("renúncias", _v(r["renuncias"])), ("protocol faults", _v(r["protocol_faults"])),
            ("late answers", _v(r["late_answers"])),
            ("failed matches", _v(r["failed"])), ("cut at the end", _v(r["cut"])),
            ("reconnects", _v(r["reconnects"])),
            ("match duration p50 / max", f"{_v(r['match_s_p50'])} / {_v(r['match_s_max'])} s"),
            ("ends", ", ".join(f"{k} {v}" for k, v in sorted(r["ends"].items())) or "—")]
    split = r.get("by_referee") or {}
    if len(split) > 1:  # the run split by the referee each match went to
        rows += [(f"on {addr}", f"{n['matches_finished']} matches, p50/p99 {_v(n['p50_ms'])} / "
                                f"{_v(n['p99_ms'])} ms, {n['timeouts'] + n['faults']} faults")
                 for addr, n in split.items()]
    for name, value in rows:
        t.add_row(name, value)
    out.print(t)
    if r.get("stopped_early"):
        out.print(f"[yellow]{r['stopped_early']}[/]")
    if r.get("first_bot_error"):
        at = f" (raised at {r['first_bot_error_at']})" if r.get("first_bot_error_at") else ""
        out.print(f"first bot error: {r['first_bot_error']}{at}", markup=False, soft_wrap=True)
    if r.get("first_error"):
        out.print(f"first error: {r['first_error']}", markup=False)
