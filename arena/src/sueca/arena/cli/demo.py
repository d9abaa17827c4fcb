"""``sueca-arena demo``: the whole arena on one machine, with one command.

It starts — as separate processes, exactly as a deployment runs them — a private Redis
(:mod:`sueca.arena.redisproc`), a referee (``sueca-arena referee``), a Celery worker
(``sueca-arena worker``) and the example bots (``sueca-bot run``, with tokens from the bot
registry); runs a small duplicate round-robin of random, heuristic and reckless with a progress
bar; prints the leaderboard; and stops everything.

Stopping: every child runs in its own session, so a terminal's Ctrl-C reaches the demo alone,
which stops workers, then bots, then the referee, then Redis (nobody sees Redis vanish); an
interrupted start-up is stopped at once (SIGTERM to all, SIGKILL after 2 s). The logs are kept,
and named, only when something went wrong. If the demo itself is killed (even by SIGKILL) its
children get SIGTERM (Linux ``PR_SET_PDEATHSIG``) and a janitor process stops whatever is left
and removes the temporary folders (:mod:`sueca.arena.processes`).

``--redis URL`` / ``--referee ADDR`` use running ones instead (the bots are then registered as
``demo-random`` etc., so that no real bot's token is ever re-issued).

:class:`sueca.arena.local_arena.LocalArena` starts and stops them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import time
from types import FrameType

from sueca.arena.cli.common import Bounded, UserError, clean
from sueca.arena.cli.common import console as make_console
from sueca.arena.cli.leaderboard import print_leaderboard
from sueca.arena.leaderboard import leaderboard
from sueca.arena.local_arena import EXAMPLE_BOTS, LocalArena
from sueca.arena.redisurl import masked


# -- the command -----------------------------------------------------------------------------
def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help="start Redis, a referee, a worker and example bots; run a "
                                    "small tournament; print the leaderboard; stop everything")
    p.add_argument("--redis", metavar="URL", default=None,
                   help="use this Redis instead of starting a private one")
    p.add_argument("--referee", metavar="ADDR", default=None,
                   help="use this referee instead of starting one")
    p.add_argument("--matches-per-pair", "-k", action=Bounded, kind=int, low=1, default=6,
                   help="matches per pair of bots, played as duplicate pairs: an even number "
                        "(default 6)")
    p.add_argument("--concurrency", action=Bounded, kind=int, low=1, default=2,
                   help="worker pool processes")
    p.add_argument("--timeout", action=Bounded, kind=float, low=0, above=True, default=120.0,
                   help="give up after this long")
    p.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    from sueca.arena.celery_app import configure  # deferred: Celery (~0.1 s), demo only
    from sueca.arena.tournaments import (  # deferred: ~8 ms
        TournamentError,
        new_spec,
        run_tournament,
    )
    if args.matches_per_pair % 2:  # checked before anything starts, in the user's own terms
        raise UserError(f"bad --matches-per-pair {str(args.matches_per_pair)!r}: the demo plays "
                        "duplicate pairs (two matches on the same cards, teams swapped), so it "
                        "must be even")
    console = make_console(stderr=True)
    started = time.monotonic()
    shared = args.redis is not None
    names = {(f"demo-{b}" if shared else b): b for b in EXAMPLE_BOTS}
    # demo-* names are the demo's own: a second demo on a shared Redis re-issues their tokens
    arena = LocalArena(args.redis, args.referee, names, capacity=4,
                       concurrency=args.concurrency, reissue=True)

    def terminate(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, terminate)
    ok = False
    try:
        with console.status("starting Redis, a referee, a worker and 3 bots..."):
            arena.start()
        url = arena.redis_url
        console.print(f"arena up in {time.monotonic() - started:.1f}s — "
                      f"Redis {masked(url)}, referee {arena.referee}")
        configure(url)
        t0 = time.monotonic()
        try:
            # no "re-run with --id" hint: the demo has no --id, and a private Redis ends with
            # the demo (a tournament in a shared one is finished by `tournament run --id`)
            spec = new_spec(list(names), args.matches_per_pair, duplicate=True)
            report = run_tournament(arena.store, spec, timeout=args.timeout, resumable=False)
        except TournamentError as err:
            raise UserError(str(err)) from None
        elapsed = time.monotonic() - t0
        arena.check()
        rows = [r for r in leaderboard(arena.store) if r["bot"] in names]
        if args.json:
            print(json.dumps(clean({"tournament": report["tournament"],
                                     "redis": masked(url), "referee": arena.referee,
                                     "matches": report["recorded"], "seconds": elapsed,
                                     "failed": report["failed"], "leaderboard": rows}), indent=2))
        else:
            out = make_console()
            print_leaderboard(rows, out)
            per_bot = args.matches_per_pair * (len(names) - 1)
            out.print(f"rated: every match counts once, each half of a duplicate pair (two "
                      f"matches on the same cards, teams swapped) too, so each bot has "
                      f"{per_bot} rated matches")
            console.print(f"{report['recorded']} matches in {elapsed:.1f}s "
                          f"({report['recorded'] / max(elapsed, 1e-9):.1f} matches/s); "
                          f"whole demo {time.monotonic() - started:.1f}s")
        for f in report["failed"]:
            console.print(f"[red]failed[/] {f['match_id']}: {f['error']}")
        ok = not report["failed"]
        return 0 if ok else 1
    finally:
        with console.status("stopping..."):
            arena.stop()
        signal.signal(signal.SIGTERM, old)
        if ok or not any(arena.log_dir.glob("*.log")):  # kept only when something went wrong
            shutil.rmtree(arena.log_dir, ignore_errors=True)
        else:
            console.print(f"logs kept in {arena.log_dir}")
