"""``sueca-arena referee``: run a referee (gRPC on --port, Prometheus on --metrics-port).

Bot tokens are checked against the registry in Redis (``--redis`` or ``SUECA_REDIS_URL``); the
referee also publishes its connected bots and their free capacity there every few seconds, so
schedulers can place matches. SIGTERM or Ctrl-C drains: no new matches, running ones get
``--drain-seconds`` to finish, the rest end as ``aborted``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import time
from typing import Any

HEARTBEAT_SECONDS = 2.0
HEARTBEAT_TTL = 10  # seconds a replica's bot list outlives its last heartbeat

log = logging.getLogger("sueca.referee")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("referee", help="run a referee: bots connect to it, matches run on it",
                       description=__doc__)
    p.add_argument("--port", type=int, default=50051, help="gRPC port (default 50051)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)")
    p.add_argument("--metrics-port", type=int, default=9464,
                   help="Prometheus /metrics port (default 9464; 0 disables)")
    p.add_argument("--redis", default=None, metavar="URL",
                   help="Redis holding the bot registry (default: $SUECA_REDIS_URL)")
    p.add_argument("--advertise", default=None, metavar="HOST:PORT",
                   help="address schedulers and bots use to reach this referee, published in "
                        "Redis (default: this host's name and --port)")
    p.add_argument("--drain-seconds", type=float, default=30.0,
                   help="on SIGTERM, how long running matches may take to finish (default 30)")
    p.add_argument("--insecure", action="store_true",
                   help="accept any token (no Redis needed): only on a private machine")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from arena.cli import UserError
    from arena.redisurl import masked

    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    redis_url = args.redis or os.environ.get("SUECA_REDIS_URL")
    if not redis_url and not args.insecure:
        raise UserError("the referee checks bot tokens in Redis: pass --redis URL (or set "
                        "SUECA_REDIS_URL), or --insecure to accept any token on a private machine")
    if not 0 < args.port < 65536:
        raise UserError(f"bad --port {args.port}: 1..65535")
    from referee.server import RegistryAuth, StaticAuth
    auth: Any
    if redis_url:
        auth = RegistryAuth(redis_url)
        try:
            auth.client.ping()
        except Exception as err:
            raise UserError(f"cannot reach Redis at {masked(redis_url)}: {err}") from None
    else:
        auth = StaticAuth(None)
        log.warning("--insecure: any token is accepted; never expose this referee")
    host = socket.gethostname() if args.host in ("0.0.0.0", "::", "[::]") else args.host
    advertise = args.advertise or f"{host}:{args.port}"
    try:
        asyncio.run(_serve(args, auth, advertise, redis_url is not None))
    except OSError as err:
        raise UserError(f"cannot start the referee on {args.host}:{args.port}: {err}") from None
    return 0


async def _serve(args: argparse.Namespace, auth: Any, advertise: str, publish: bool) -> None:
    from referee import metrics
    from referee.server import start

    if args.metrics_port:
        metrics.serve(args.metrics_port, args.host)
    ref = await start(auth, args.host, args.port, referee_id=advertise)
    log.info("referee %s listening on %s:%d%s", advertise, args.host, ref.port,
             f", metrics on :{args.metrics_port}/metrics" if args.metrics_port else "")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    beat = asyncio.create_task(_heartbeat(ref, auth, advertise)) if publish else None
    await stop.wait()
    log.info("shutting down (signal received)")
    for sig in (signal.SIGTERM, signal.SIGINT):  # a second signal stops at once
        loop.add_signal_handler(sig, lambda: os._exit(130))
    await ref.shutdown(args.drain_seconds)
    if beat is not None:
        beat.cancel()
        await asyncio.to_thread(_unpublish, auth, advertise)
    log.info("referee stopped")


async def _heartbeat(ref: Any, auth: Any, advertise: str) -> None:
    """Publish this replica and its bots' free capacity (keys in arena.keys) for schedulers."""
    while True:
        try:
            await asyncio.to_thread(_publish, auth, advertise, ref.hub.free_by_bot()
                                    if ref.accepting else {})
        except Exception as err:
            log.warning("cannot publish to Redis: %s", err)
        await asyncio.sleep(HEARTBEAT_SECONDS)


def _publish(auth: Any, advertise: str, free: dict[str, int]) -> None:
    keys = auth.registry.keys
    pipe = auth.client.pipeline()
    pipe.zadd(keys.referees(), {advertise: time.time()})
    pipe.delete(keys.referee_bots(advertise))
    if free:
        pipe.hset(keys.referee_bots(advertise), mapping=free)
        pipe.expire(keys.referee_bots(advertise), HEARTBEAT_TTL)
    pipe.execute()


def _unpublish(auth: Any, advertise: str) -> None:
    keys = auth.registry.keys
    try:
        auth.client.zrem(keys.referees(), advertise)
        auth.client.delete(keys.referee_bots(advertise))
    except Exception as err:
        log.warning("cannot remove this referee from Redis: %s", err)
