"""``sueca-arena scheduler``: the continuous ladder, keeping N matches in flight, shared by
the default ladder and every open or frozen competition; and the competitions' moves that their
times ask for (:func:`sueca.arena.competitions.moves.advance`), each said on stderr.

Event-driven: between two rounds of scheduling it blocks on the results log
(:meth:`sueca.arena.schedule.Ladder.wait`), so a finished match frees its slot at once;
``--interval`` is only the fallback for what records no result (a failed match, a bot that
connected). It says what it queues once at start, then as a summary every SUMMARY_SECONDS (a
busy ladder queues a match every few moments: a line each would bury everything else), and a
total when it stops (SIGTERM or Ctrl-C)."""

from __future__ import annotations

import argparse
import signal
import time

from kombu.exceptions import OperationalError as BrokerError

from sueca.arena import final, settings
from sueca.arena.cli.common import (
    Bounded,
    UserError,
    add_port,
    add_redis,
    check_operator_settings,
    console,
    open_store,
    redis_url,
)
from sueca.arena.competitions.moves import advance
from sueca.arena.store import TRANSIENT_REDIS_ERRORS
from sueca.engine import Variant, VariantError

SUMMARY_SECONDS = 60.0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("scheduler", help="the continuous ladder: keep N matches running")
    add_redis(p)
    p.add_argument("--target", action=Bounded, kind=int, low=1, default=4,
                   help="matches to keep in flight (default 4)")
    p.add_argument("--pace", metavar="N", action=Bounded, kind=float, low=0, default=0.0,
                   help="start at most this many matches a minute (default 0: as many as "
                        "--target allows)")
    p.add_argument("--interval", action=Bounded, kind=float, low=0, above=True, default=1.0,
                   help="seconds between checks when no result comes in (a recorded result "
                        "wakes the scheduler at once)")
    p.add_argument("--referee", action="append", default=[], metavar="ADDR",
                   help="a referee replica to find connected bots on (repeatable)")
    p.add_argument("--bots", default=None,
                   help="comma-separated bots to treat as connected (for --runner local workers)")
    p.add_argument("--variant", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
                   help="rule variants of the ladder's matches, e.g. tie=double target=8")
    p.add_argument("--once", action="store_true", help="one round of scheduling, then exit")
    add_port(p, "--metrics-port", default=None,
             help="serve Prometheus metrics, and /healthz for a liveness probe, on this port")
    p.set_defaults(func=cmd_scheduler)


def cmd_scheduler(args: argparse.Namespace) -> int:
    # Celery (celery_app, tasks, the recovery) and the store's Redis client cost ~1 s of
    # start-up, which the CLI's other commands (every module is imported for --help) skip
    from sueca.arena.celery_app import QUEUE, configure  # deferred: Celery's start-up, above
    from sueca.arena.recovery import Reaper  # deferred: Celery's start-up, above
    from sueca.arena.schedule import Ladder, connected_bots  # deferred: Redis client's, above
    from sueca.arena.tasks import Priority, enqueue  # deferred: Celery's start-up, above
    check_operator_settings()
    store = open_store(args)
    configure(redis_url(args))
    if args.referee:
        settings.use(settings.replace(settings.current(), referees=tuple(args.referee)))
    try:
        variant = Variant.parse(args.variant).to_dict()
    except VariantError as err:
        raise UserError(str(err)) from None
    static = [b.strip() for b in args.bots.split(",")] if args.bots else None
    ladder = Ladder(store, args.target, lambda: connected_bots(store, static),
                    lambda mid: enqueue([mid], priority=Priority.LADDER), variant, pace=args.pace)
    health = None
    if args.metrics_port is not None:
        from sueca.arena.metrics import SchedulerMetrics  # deferred: only with --metrics-port
        health = SchedulerMetrics(store, QUEUE, stale_after=max(60.0, 20 * args.interval))
        health.serve(args.metrics_port)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    signal.signal(signal.SIGINT, lambda *_: stop.update(now=True))
    err_out = console(stderr=True)
    last_note = 0.0
    total, since, last_summary = 0, 0, time.monotonic()
    lost = (*TRANSIENT_REDIS_ERRORS, BrokerError)  # the broker is the same Redis
    outage = False
    first = True
    reaper = Reaper(store)  # re-queues in-flight matches whose task vanished (any tournament)
    while not stop["now"]:
        try:
            if not first:
                ladder.wait(args.interval)
            first = False
            for name, step in advance(store):
                err_out.print(f"competition {name}: {step['from_state']} -> {step['to']}")
            final.tick(store)  # finals: start one due, queue and pair their rounds
            new = ladder.tick()
            reaper.sweep_due()
        except lost as err:  # waited out, said once: the ladder is in Redis
            if args.once:
                raise UserError(f"Redis stopped answering: {err}") from None
            if not outage:
                err_out.print(f"[yellow]ladder: Redis not answering ({err}); waiting[/]")
            outage = True
            if health:
                health.loop_done()
            time.sleep(args.interval)
            continue
        if health:
            health.loop_done(len(new))
        if outage:
            err_out.print("ladder: Redis is back")
            outage = False
        if new and (total == 0 or args.once):  # the first ones by name; then a summary
            err_out.print(f"ladder: queued {len(new)} match(es): {', '.join(new)}")
        total, since = total + len(new), since + len(new)
        now = time.monotonic()
        if since and now - last_summary >= SUMMARY_SECONDS:
            err_out.print(f"ladder: {since} match(es) queued in the last "
                          f"{now - last_summary:.0f} s ({total} since start)")
            since, last_summary = 0, now
        if (not new and time.monotonic() - last_note > 30 and not args.pace
                and len(ladder.running()) < args.target):
            err_out.print("ladder: below target and nothing scheduled: fewer than 2 registered "
                          "bots with free seats on the known referees (or another scheduler "
                          "holds the ladder lock); waiting")
            last_note = time.monotonic()
        if args.once:
            break
    if not args.once:
        err_out.print(f"ladder stopped: {total} match(es) queued since start")
    return 0


