"""``sueca-arena wait ADDRESS...``: wait until each address accepts TCP connections.

A server started in the background (``sueca-arena redis ... &``, ``sueca-arena referee ... &``)
needs a moment before it listens, and the next line of a script would find nothing there.
This waits for it, or says which address never answered.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from urllib.parse import urlsplit

from sueca.arena.cli.common import UserError
from sueca.sdk.cli import Bounded


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("wait", help="wait until servers accept connections (for scripts)",
                       description="Wait until every ADDRESS accepts TCP connections; exit 0, "
                                   "or 1 naming the first that did not within --timeout. "
                                   "ADDRESS is host:port or a redis:// URL.")
    p.add_argument("addresses", nargs="+", metavar="ADDRESS",
                   help="host:port, [v6 host]:port or redis://host:port/db")
    p.add_argument("--timeout", action=Bounded, kind=float, low=0, above=True, default=30.0,
                   help="seconds to wait in all (default 30)")
    p.set_defaults(func=run)


def host_port(address: str) -> tuple[str, int]:
    """``host:port`` or ``redis[s]://host:port/...`` as (host, port); UserError quoting it."""
    text = address if "://" in address else f"tcp://{address}"
    try:
        parts = urlsplit(text)
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or port is None:
        raise UserError(f"bad address {address[:100]!r}: give host:port (127.0.0.1:6379) or a "
                        "redis:// URL")
    return host, port


def run(args: argparse.Namespace) -> int:
    targets = [(a, *host_port(a)) for a in args.addresses]
    deadline = time.monotonic() + args.timeout
    for address, host, port in targets:
        while True:
            try:
                with socket.create_connection((host, port), timeout=1.0):
                    break
            except OSError as err:
                if time.monotonic() >= deadline:
                    print(f"{address} did not accept a connection within {args.timeout:g}s: "
                          f"{err.strerror or err}", file=sys.stderr)
                    return 1
                time.sleep(0.1)
    return 0
