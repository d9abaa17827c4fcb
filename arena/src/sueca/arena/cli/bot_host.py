"""``sueca-arena bot-host``: run the hosted bots assigned to this machine until stopped.

It claims its share of the hosted bots from Redis, builds and runs each in the sandbox as a
``sueca-bot run`` connected to ``--server``, and gives them back when it stops (SIGTERM or
Ctrl-C); killed outright, its bots start on another bot host once its claims expire
(docs/hosted-bots.md)."""

from __future__ import annotations

import argparse
import os
import signal
import socket
from pathlib import Path

from sueca.arena.cli.common import Bounded, UserError, add_port, add_redis, open_store
from sueca.arena.hosted.host import BotHost, Sandboxed
from sueca.arena.hosted.sandbox import Sandbox, SandboxError, sweep
from sueca.sdk.settings import current as sdk_settings


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bot-host", help="run the hosted bots assigned to this machine, "
                                        "sandboxed, until stopped")
    add_redis(p)
    p.add_argument("--server", default=sdk_settings().server,
                   help="the referee address the bots connect to (host:port, a comma list; "
                        "default $SUECA_SERVER)")
    p.add_argument("--work", default=None, metavar="DIR",
                   help="this host's folder: submissions unpacked and built, bots' logs "
                        "(default ./sueca-bot-host)")
    p.add_argument("--name", default=None,
                   help="this bot host's name among the others (default HOSTNAME-PID)")
    p.add_argument("--capacity", action=Bounded, kind=int, low=1, default=4,
                   help="games each bot plays at once (default 4)")
    add_port(p, "--metrics-port", default=None,
             help="serve Prometheus metrics, and /healthz for a liveness probe, on this port")
    p.set_defaults(func=cmd_bot_host)


def _sandbox(name: str, code: Path, stderr: Path) -> Sandboxed:
    try:
        return Sandbox(name, code, stderr_log=stderr)
    except SandboxError as err:
        raise RuntimeError(str(err)) from None


def cmd_bot_host(args: argparse.Namespace) -> int:
    if not args.server:
        raise UserError("no referee address: pass --server HOST:PORT or set SUECA_SERVER")
    store = open_store(args)
    work = Path(args.work or "sueca-bot-host").resolve()
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"cannot make --work {str(work)!r}: {err.strerror}") from None
    name = args.name or f"{socket.gethostname()}-{os.getpid()}"
    try:
        swept = sweep()  # the sandboxes a killed bot host of this machine left
    except SandboxError as err:
        raise UserError(str(err)) from None
    host = BotHost(store, name=name, server=args.server, work=work, sandbox=_sandbox,
                   capacity=args.capacity)
    if args.metrics_port is not None:
        host.serve(args.metrics_port)
    signal.signal(signal.SIGTERM, lambda *_: host.stop())
    signal.signal(signal.SIGINT, lambda *_: host.stop())
    print(f"bot host {name} ready: bots connect to {args.server}; work folder {work}"
          + (f"; removed {len(swept)} sandbox(es) a stopped host left" if swept else ""),
          flush=True)
    host.run()
    print(f"bot host {name} stopped", flush=True)
    return 0
