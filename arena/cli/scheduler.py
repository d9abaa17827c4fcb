"""``sueca-arena scheduler``: the continuous ladder, keeping N matches in flight."""

from __future__ import annotations

import argparse
import os
import signal
import time

from sueca.arena.cli.common import (
    Bounded,
    UserError,
    add_redis,
    check_operator_settings,
    console,
    open_store,
    redis_url,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
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


def cmd_scheduler(args: argparse.Namespace) -> int:
    from sueca.arena.schedule import Ladder, connected_bots
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
    err_out = console(stderr=True)
    last_note = 0.0
    from sueca.arena.store import TRANSIENT_REDIS_ERRORS
    outage = False
    from sueca.arena.recovery import Reaper
    reaper = Reaper(store)  # re-queues in-flight matches whose task vanished (any tournament)
    while not stop["now"]:
        try:
            new = ladder.tick()
            reaper.sweep_due()
        except TRANSIENT_REDIS_ERRORS as err:  # waited out, said once: the ladder is in Redis
            if args.once:
                raise UserError(f"Redis stopped answering: {err}") from None
            if not outage:
                err_out.print(f"[yellow]ladder: Redis not answering ({err}); waiting[/]")
            outage = True
            time.sleep(args.interval)
            continue
        if outage:
            err_out.print("ladder: Redis is back")
            outage = False
        if new:
            err_out.print(f"ladder: queued {len(new)} match(es): {', '.join(new)}")
        elif time.monotonic() - last_note > 30 and len(ladder.running()) < args.target:
            err_out.print("ladder: below target and nothing scheduled: fewer than 2 registered "
                          "bots with free seats on the known referees (or another scheduler "
                          "holds the ladder lock); waiting")
            last_note = time.monotonic()
        if args.once:
            break
        time.sleep(args.interval)
    return 0


