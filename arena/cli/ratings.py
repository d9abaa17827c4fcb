"""``sueca-arena ratings rebuild|exporter``: recompute ratings from the results log, or serve
them to Prometheus."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time

from sueca.arena.cli.common import Bounded, add_port, add_redis, clean, open_store


def add_parser(sub: argparse._SubParsersAction) -> None:
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
        print(json.dumps(clean(out), indent=2))
    else:
        verdict = ("identical to the live ratings" if same else
                   f"largest difference from the live ratings: {report['max_diff']:.6g}")
        action = "checked" if args.check else "rebuilt"
        print(f"{action} {report['bots']} ratings from {report['results']} results "
              f"(Elo K={report['elo_k']:g}): {verdict}")
    return 1 if (args.check and not same) else 0


def cmd_ratings_exporter(args: argparse.Namespace) -> int:
    from sueca.arena.celery_app import QUEUE
    from sueca.arena.metrics import serve_ratings
    store = open_store(args)
    serve_ratings(args.metrics_port, store, args.addr, queue=QUEUE)
    print(f"serving ratings on http://{args.addr}:{args.metrics_port}/metrics", file=sys.stderr)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    while not stop["now"]:
        time.sleep(0.5)
    return 0
