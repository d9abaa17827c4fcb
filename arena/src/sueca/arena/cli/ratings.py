"""``sueca-arena ratings rebuild|show-config|set-config|exporter``: recompute ratings from the
results log, show or change the stored settings (a change rebuilds), serve them to Prometheus."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NotRequired, ParamSpec, TypedDict, TypeVar

from sueca.arena.cli.common import Bounded, UserError, add_port, add_redis, clean, open_store
from sueca.arena.export import ExportError, rebuild_from_export
from sueca.arena.ratings.fit import PRIOR_SD, PROVISIONAL_GAMES
from sueca.arena.retention import archived_results
from sueca.arena.settings import current
from sueca.arena.store.errors import RatingsError
from sueca.arena.store.ratings import Archive, load_config, rebuild, save_config

if TYPE_CHECKING:
    from sueca.arena.store import Store

_P = ParamSpec("_P")
_R = TypeVar("_R")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("ratings", help="rebuild ratings from the results log, or export them")
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    rb = acts.add_parser("rebuild", help="recompute every rating from the results log")
    add_redis(rb)
    rb.add_argument("--elo-k", action=Bounded, kind=float, low=0, above=True, default=None,
                    help="use (and keep) this Elo K")
    add_archive(rb)
    rb.add_argument("--check", action="store_true",
                    help="only compare with the live ratings; exit 1 if they differ")
    rb.add_argument("--from", dest="from_file", metavar="FILE", default=None,
                    help="a competition export (`competition export`): refit its rating of "
                         "record from the file's results alone, no Redis needed, and compare "
                         "with the ratings the file records (exit 1 if they differ)")
    rb.add_argument("--json", action="store_true", help="print the report as JSON")
    rb.set_defaults(func=cmd_ratings_rebuild)
    show = acts.add_parser("show-config", help="the rating settings stored in Redis")
    add_redis(show)
    show.add_argument("--json", action="store_true", help="print the settings as JSON")
    show.set_defaults(func=cmd_ratings_show_config)
    st = acts.add_parser("set-config", help="change the stored rating settings and rebuild "
                                            "every rating from the results log with them")
    add_redis(st)
    st.add_argument("--elo-k", action=Bounded, kind=float, low=0, above=True, default=None,
                    help="the live Elo's K")
    st.add_argument("--initial", action=Bounded, kind=float, low=-1e6, high=1e6, default=None,
                    help="the initial rating (live Elo's start; the rating of record's mean)")
    add_archive(st)
    st.add_argument("--json", action="store_true", help="print the settings as JSON")
    st.set_defaults(func=cmd_ratings_set_config)
    ex = acts.add_parser("exporter", help="serve sueca_rating{bot,system} for Prometheus")
    add_redis(ex)
    add_port(ex, "--metrics-port", required=True,
             help="port to serve /metrics on (one exporter per league is enough)")
    ex.add_argument("--addr", default="0.0.0.0", metavar="ADDR",
                    help="address to listen on (default 0.0.0.0, every interface; 127.0.0.1 "
                         "for this machine only)")
    ex.set_defaults(func=cmd_ratings_exporter)


def add_archive(p: argparse.ArgumentParser) -> None:
    p.add_argument("--archive", metavar="DIR", default=None,
                   help="after retention trimmed the results log: fold the archived entries "
                        "(DIR/results/*.jsonl.gz) instead of starting from the checkpoint, as "
                        "another K or initial rating needs")


def _trimmed(args: argparse.Namespace) -> Archive | None:
    """``rebuild``'s ``trimmed``: the archive's entries, read when the rebuild asks."""
    if args.archive is None:
        return None
    return lambda: archived_results(args.archive)


def _run(fn: Callable[_P, _R], *a: _P.args, **kw: _P.kwargs) -> _R:
    """``fn(*a, **kw)`` with a bad archive or a trimmed log as a user error."""
    try:
        return fn(*a, **kw)
    except (RatingsError, ValueError, OSError) as err:
        raise UserError(str(err)) from None


def cmd_ratings_rebuild(args: argparse.Namespace) -> int:
    if args.from_file is not None:
        return _rebuild_export(args)
    store = open_store(args)
    report = _run(rebuild, store, elo_k=args.elo_k, write=not args.check, trimmed=_trimmed(args))
    # the bots' recent outcomes (fair play's suspensions) are the log's too
    recent = store.fairplay.rebuild_recent(write=not args.check, trimmed=store.trimmed_through())
    same = report["max_diff"] == 0.0
    if args.json:
        out = {k: v for k, v in report.items() if k != "ratings"}
        out["identical"] = same
        out["fair_play"] = recent
        out["ratings"] = {b: r.as_dict() for b, r in sorted(report["ratings"].items())}
        print(json.dumps(clean(out), indent=2))
    else:
        verdict = ("identical to the live ratings" if same else
                   f"largest difference from the live ratings: {report['max_diff']:.6g}")
        action = "checked" if args.check else "rebuilt"
        base = ("" if report["checkpoint"] is None else
                f" ({report['checkpoint_results']} of them from the checkpoint at entry "
                f"{report['checkpoint']}, the log's tail after it)")
        rated = (f" ({report['versions']} bot versions rated"
                 + (f"; competitions {', '.join(report['competitions'])}"
                    if report["competitions"] else "") + ")"
                 if report["versions"] > report["bots"] or report["competitions"] else "")
        print(f"{action} {report['bots']} ratings{rated} from {report['results']} "
              f"results{base} (Elo K={report['elo_k']:g}, initial {report['elo_initial']:g}): "
              f"{verdict}")
        print(f"{action} {recent['bots']} bots' recent outcomes (fair play): "
              + ("identical to the live ones" if not recent["differed"] else
                 f"{recent['differed']} differed" + ("" if args.check else ", now replaced")))
    return 1 if (args.check and not (same and not recent["differed"])) else 0


def _rebuild_export(args: argparse.Namespace) -> int:
    """``rebuild --from FILE``: a competition's rating of record from its export alone."""
    for flag, given in (("--elo-k", args.elo_k), ("--archive", args.archive),
                        ("--redis", args.redis), ("--data", args.data)):
        if given is not None:
            raise UserError(f"--from {args.from_file!r} rebuilds from the file alone: leave "
                            f"out {flag}")
    try:
        report = rebuild_from_export(args.from_file)
    except ExportError as err:
        raise UserError(str(err)) from None
    if args.json:
        print(json.dumps(clean(report), indent=2))
    else:
        verdict = ("identical to the ratings it records" if report["identical"] else
                   f"largest difference from the ratings it records: {report['max_diff']:.6g}")
        print(f"rebuilt {len(report['ratings'])} ratings of record of competition "
              f"{report['competition']} from {report['results']} results in "
              f"{args.from_file}: {verdict}")
    return 0 if report["identical"] else 1


class RatingSettings(TypedDict):
    """The rating settings as ``show-config`` prints them (and ``--json`` gives them)."""

    elo_k: float
    elo_initial: float
    record_prior_sd: float
    provisional_games: int
    env_elo_k_ignored: NotRequired[float | None]  # SUECA_ELO_K, when it differs (show-config)


def _settings(store: Store) -> RatingSettings:
    elo_k, initial = load_config(store)
    return {"elo_k": elo_k, "elo_initial": initial, "record_prior_sd": PRIOR_SD,
            "provisional_games": PROVISIONAL_GAMES}


def _print_settings(cfg: RatingSettings) -> None:
    print(f"stored in Redis (change with `sueca-arena ratings set-config`, which rebuilds):\n"
          f"  live Elo K         {cfg['elo_k']:g}\n"
          f"  initial rating     {cfg['elo_initial']:g}   (live Elo's start, the rating of "
          f"record's mean)\n"
          f"fixed:\n"
          f"  rating of record   Bradley-Terry fit, prior sd {cfg['record_prior_sd']:g} Elo\n"
          f"  provisional        fewer than {cfg['provisional_games']} games")


def cmd_ratings_show_config(args: argparse.Namespace) -> int:
    cfg = _settings(open_store(args))
    env_k = current().elo_k
    cfg["env_elo_k_ignored"] = env_k if env_k != cfg["elo_k"] else None
    if args.json:
        print(json.dumps(cfg, indent=2))
    else:
        _print_settings(cfg)
        if cfg["env_elo_k_ignored"] is not None:
            print(f"note: SUECA_ELO_K is {env_k:g} here, but it only sets the K of a new league; "
                  f"this league's K stays {cfg['elo_k']:g} until `ratings set-config --elo-k`")
    return 0


def cmd_ratings_set_config(args: argparse.Namespace) -> int:
    if args.elo_k is None and args.initial is None:
        raise UserError("nothing to change: give --elo-k K and/or --initial R "
                        "(`ratings show-config` shows the stored values)")
    store = open_store(args)
    report = _run(save_config, store, elo_k=args.elo_k, elo_initial=args.initial,
                  trimmed=_trimmed(args))
    cfg = _settings(store)
    if args.json:
        print(json.dumps({**cfg, "rebuilt_ratings": report["bots"],
                          "results": report["results"]}, indent=2))
    else:
        print(f"rebuilt {report['bots']} ratings from {report['results']} results with "
              f"Elo K={report['elo_k']:g}, initial rating {report['elo_initial']:g}")
    return 0


def cmd_ratings_exporter(args: argparse.Namespace) -> int:
    from sueca.arena.celery_app import QUEUE  # deferred: Celery, most of a second of start-up
    from sueca.arena.metrics import serve_ratings  # deferred: the exporter's alone
    store = open_store(args)
    try:
        serve_ratings(args.metrics_port, store, args.addr, queue=QUEUE)
    except OSError as err:
        raise UserError(f"cannot serve ratings on {args.addr}:{args.metrics_port}: "
                        f"{err.strerror or err} (pass another --metrics-port)") from None
    print(f"serving ratings on http://{args.addr}:{args.metrics_port}/metrics", file=sys.stderr)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    while not stop["now"]:
        time.sleep(0.5)
    return 0
