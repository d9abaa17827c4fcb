"""``sueca-arena worker``: a Celery worker that plays and records matches."""

from __future__ import annotations

import argparse
import os
from typing import Any

from sueca.arena import settings
from sueca.arena.cli.common import (
    Bounded,
    add_port,
    add_redis,
    check_operator_settings,
    check_port_free,
    open_store,
    redis_url,
)
from sueca.sdk.logs import current_format


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("worker", help="a Celery worker that plays and records matches")
    add_redis(p)
    p.add_argument("--concurrency", "-c", action=Bounded, kind=int, low=1, default=2,
                   help="matches played at once: pool processes, or threads with --pool "
                        "threads (default 2)")
    p.add_argument("--pool", choices=("prefork", "threads"), default="prefork",
                   help="prefork (default): a process per match in flight; threads: one "
                        "process plays --concurrency matches in threads (a match waits on the "
                        "referee, so threads cost far less memory)")
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
    p.add_argument("--loglevel", default="INFO", help="Celery's log level (default INFO)")
    p.add_argument("--hostname", "-n", default=None, help="Celery node name")
    p.set_defaults(func=cmd_worker)


def cmd_worker(args: argparse.Namespace) -> int:
    url = redis_url(args)
    check_operator_settings()
    open_store(args)  # a clear error now rather than a reconnect loop
    # the flags win over the environment; pool processes fork from here and inherit this
    flags: dict[str, Any] = {"redis_url": url}
    if args.referee:
        flags["referees"] = tuple(args.referee)
    if args.runner:
        flags["runner"] = args.runner
    if args.metrics_port is not None:
        flags["metrics_port"] = args.metrics_port
    settings.use(settings.replace(settings.current(), **flags))
    port = settings.current().metrics_port  # checked (1..65535) by the settings already
    if port is not None:  # served from a Celery signal handler, whose errors Celery only logs
        check_port_free(settings.current().metrics_addr, port, "worker metrics",
                        "another worker? give each its own --metrics-port")
    # the app reads the settings (set just above) when its module is first imported
    from sueca.arena.celery_app import (  # deferred: reads the settings at import, see above
        app,
        configure,
        prepare_metrics_env,
        run_worker,
    )
    prepare_metrics_env()
    configure(url)
    app.conf.worker_pool = args.pool  # read by the signal handlers (what runs per process)
    name = args.hostname or f"sueca-{os.getpid()}@%h"
    # JSON logs: no banner either (it is printed, not logged), so every line is one object
    argv = ["--quiet"] if current_format() == "json" else []
    argv += ["worker", f"--pool={args.pool}", f"--concurrency={args.concurrency}",
            f"--loglevel={args.loglevel}", "-n", name, "--without-gossip", "--without-mingle",
            "-Ofair"]
    if args.queues:
        argv += ["-Q", args.queues]
    return run_worker(argv)  # 1 after an unrecoverable error: a supervisor restarts it


