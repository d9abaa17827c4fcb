"""``sueca-arena referee``: run a referee (gRPC on --port, Prometheus on --metrics-port).

Bot tokens are checked against the registry in Redis (``--redis`` or ``SUECA_REDIS_URL``); the
referee also publishes its connected bots and their free capacity there every few seconds, so
schedulers can place matches. SIGTERM or Ctrl-C drains: no new matches, running ones get
``--drain-seconds`` to finish, the rest end as ``aborted``.

Security: ``--tls-cert``/``--tls-key`` serve TLS on the same port (bots then connect with
``sueca-bot run --tls`` or ``--tls-ca``); ``--operator-token-file`` (or ``SUECA_OPERATOR_TOKEN``)
lets only callers with that token run, watch or list (league workers and the CLI send
``SUECA_OPERATOR_TOKEN``). Health checking and reflection stay open for probes.
``--operator-port`` (or ``SUECA_OPERATOR_PORT``) moves that operator API off the public port
onto ``--operator-host`` (default loopback), with the same TLS and token; the public port then
serves bots (and health, which both ports answer) only, and the address published in Redis
for workers and schedulers is the operator one.

Hostile bots: every per-bot limit (docs/protocol.md, "Threat model") has a flag, also read from
``SUECA_<FLAG>`` (``--out-bytes`` / ``SUECA_OUT_BYTES``); 0 disables it. ``SUECA_SEED_KEY``
(or ``--seed-key-file``) keys the bots' seeds: set the same key on every referee so a match
replays exactly, anywhere (``sueca-arena selfplay`` and ``play_local`` read it too).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import ipaddress
import logging
import os
import signal
import socket
from typing import TYPE_CHECKING, Any

from sueca.arena.cli.common import UserError
from sueca.arena.settings import current
from sueca.arena.store import StoreUnavailable, connect
from sueca.arena.store.bots import RegistryAuth
from sueca.arena.store.referees import RefereeStore
from sueca.referee.auth import Authenticator, StaticAuth
from sueca.referee.limits import Limits
from sueca.referee.security import operator_token_from_env, read_token_file, server_credentials
from sueca.sdk import logs
from sueca.sdk.channels import CredentialsError
from sueca.sdk.cli import Bounded

if TYPE_CHECKING:
    import grpc

    from sueca.referee.server import Referee

HEARTBEAT_SECONDS = 2.0
MIN_SEED_KEY_CHARS = 16  # a short key could be found by trying keys and small seeds together
LIMIT_HELP = {
    "out_bytes": "bytes queued towards one bot before its stream is closed (RESOURCE_EXHAUSTED)",
    "out_items": "turns, events and errors queued towards one bot before its stream is closed",
    "errors_per_message": "ActionErrors answered for one incoming message (the rest: counted)",
    "errors_per_second": "ActionErrors answered per bot stream and second",
    "messages_per_second": "messages answering nothing, per bot (its streams together) and second",
    "actions_per_second": "their actions, per bot (its streams together) and second",
    "hello_seconds": "seconds a new bot stream has to send its hello",
    "streams_per_connection": "bot streams at once on one connection",
    "connections_per_address": "connections with bot streams at once from one address "
                               "(0 behind a proxy that hides bot addresses)",
    "sessions_per_bot": "streams at once of one bot name",
    "refusals_per_second": "refused hellos (and, apart, wrong operator tokens) per address "
                           "and second before further ones from it are refused unread",
    "hellos_per_second": "hellos per address and second (5 seconds' worth at once) before "
                         "further ones are refused without asking Redis",
}
HEARTBEAT_TTL = 10  # seconds a replica's bot list outlives its last heartbeat

log = logging.getLogger("sueca.referee")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("referee", help="run a referee: bots connect to it, matches run on it",
                       description=__doc__)
    p.add_argument("--port", action=Bounded, kind=int, low=1, high=65535, default=50051,
                   help="gRPC port (default 50051)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)")
    p.add_argument("--metrics-port", action=Bounded, kind=int, low=0, high=65535, default=9464,
                   help="Prometheus /metrics port (default 9464; 0 disables)")
    p.add_argument("--redis", default=None, metavar="URL",
                   help="Redis holding the bot registry (default: $SUECA_REDIS_URL)")
    p.add_argument("--operator-port", action=Bounded, kind=int, low=0, high=65535,
                   default=None,
                   help="serve the operator API (RunMatch, Watch, ListBots) only on this port, "
                        "bots only on --port; health on both (default $SUECA_OPERATOR_PORT; 0 or "
                        "unset: everything on --port)")
    p.add_argument("--operator-host", default="127.0.0.1",
                   help="address the operator port listens on (default 127.0.0.1; a pod or "
                        "private network's address, or 0.0.0.0 behind a firewall, for workers "
                        "elsewhere)")
    p.add_argument("--advertise", default=None, metavar="HOST:PORT",
                   help="address workers and schedulers use to reach this referee's operator "
                        "API, published in Redis (default: this host's name and "
                        "--operator-port, else --port)")
    p.add_argument("--drain-seconds", type=float, default=30.0,
                   help="on SIGTERM, how long running matches may take to finish (default 30)")
    p.add_argument("--insecure", action="store_true",
                   help="accept any token (no Redis needed): only on a private machine")
    p.add_argument("--tls-cert", default=current().tls_cert, metavar="FILE",
                   help="PEM certificate (chain) to serve TLS with, with --tls-key "
                        "(default $SUECA_TLS_CERT; without it the port is plaintext)")
    p.add_argument("--tls-key", default=current().tls_key, metavar="FILE",
                   help="PEM private key of --tls-cert (default $SUECA_TLS_KEY)")
    p.add_argument("--operator-token-file", default=None, metavar="FILE",
                   help="file holding the token RunMatch, Watch and ListBots callers must send "
                        "(default: $SUECA_OPERATOR_TOKEN; without either, anyone may call them)")
    p.add_argument("--seed-key-file", default=None, metavar="FILE",
                   help="file holding the key of the bots' seeds (default: $SUECA_SEED_KEY; "
                        "without either, a random key: bot play then replays only here)")
    p.add_argument("--house-bots", default="", metavar="NAMES",
                   help="built-in bots this referee may play itself, in-process, for matches "
                        "that seat house:NAME (e.g. random,heuristic; for `sueca-arena "
                        "loadtest`); off by default, and never a network bot's name")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                   help="the least severe log lines written (default info)")
    add_limit_flags(p)
    p.set_defaults(func=run)

def add_limit_flags(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group(
        "per-bot limits", "what one bot may cost this referee (0 disables a limit); each flag "
        "is also read from SUECA_<FLAG>, e.g. SUECA_OUT_BYTES")
    for field in dataclasses.fields(Limits):
        kind = int if isinstance(field.default, int) else float
        group.add_argument("--" + field.name.replace("_", "-"), action=Bounded, kind=kind, low=0,
                           default=None, dest=field.name,
                           help=f"{LIMIT_HELP[field.name]} (default {field.default})")


def limits_from(args: argparse.Namespace) -> Limits:
    """The referee's :class:`~sueca.referee.limits.Limits` from the flags, else the settings
    (``SUECA_OUT_BYTES`` ..., checked at start-up), else the defaults."""
    env = current()
    values: dict[str, Any] = {}
    for field in dataclasses.fields(Limits):
        value = getattr(args, field.name, None)
        if value is None:
            value = getattr(env, field.name)
        if value is not None:
            kind = int if isinstance(field.default, int) else float
            values[field.name] = kind(value)
    return Limits(**values)


def seed_key_from(args: argparse.Namespace) -> bytes | None:
    """The bot seed key from ``--seed-key-file`` or ``SUECA_SEED_KEY`` (None: neither)."""
    if args.seed_key_file:
        where = f"seed key file {args.seed_key_file!r}"
        try:
            with open(args.seed_key_file, encoding="utf-8", errors="replace") as f:
                key = f.read().strip()
        except OSError as err:
            raise UserError(f"cannot read {where}: {err.strerror}") from None
        if len(key) < MIN_SEED_KEY_CHARS:
            raise UserError(f"{where} holds {len(key)} characters: a seed key needs at least "
                            f"{MIN_SEED_KEY_CHARS} (e.g. `python -c 'import secrets; "
                            "print(secrets.token_urlsafe(32))'`)")
        return key.encode()
    env_key = current().seed_key  # checked (16 characters at least) with every setting
    return None if env_key is None else env_key.encode()


def is_loopback(host: str) -> bool:
    """Does ``host`` (a --host value) listen on this machine only?"""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything


def security(args: argparse.Namespace) -> tuple[grpc.ServerCredentials | None, str | None]:
    """Server credentials (None: plaintext) and the operator token (None: none required), from
    the flags and environment; a bad file is a UserError quoting its path, before anything
    starts."""
    if bool(args.tls_cert) != bool(args.tls_key):
        given, missing = (("--tls-cert", "--tls-key") if args.tls_cert
                          else ("--tls-key", "--tls-cert"))
        raise UserError(f"{given} needs {missing} too (or set SUECA_TLS_CERT and SUECA_TLS_KEY)")
    try:
        credentials = (server_credentials(args.tls_cert, args.tls_key) if args.tls_cert
                       else None)
        token = (read_token_file(args.operator_token_file) if args.operator_token_file
                 else operator_token_from_env())
    except CredentialsError as err:
        raise UserError(str(err)) from None
    return credentials, token


def run(args: argparse.Namespace) -> int:
    logs.setup(level=args.log_level)  # in the format main() chose (--log-format)
    redis_url = args.redis or current().redis_url
    if not redis_url and not args.insecure:
        raise UserError("the referee checks bot tokens in Redis: pass --redis URL (or set "
                        "SUECA_REDIS_URL), or --insecure to accept any token on a private machine")
    credentials, operator_token = security(args)
    if operator_token is not None and len(operator_token) < 16:
        # wrong operator tokens are refused at once, without a budget: only length stops a guess
        log.warning("the operator token is only %d characters long: anyone who reaches the "
                    "operator API can guess a short one; use 32 random ones (python -c 'import "
                    "secrets; print(secrets.token_urlsafe(32))')", len(operator_token))
    from sueca.referee import house  # deferred: the SDK's example bots, for `referee` only
    try:
        args.house_bots = house.parse_house_bots(args.house_bots) if args.house_bots else ()
    except house.HouseBotError as err:
        raise UserError(str(err)) from None
    limits = limits_from(args)
    seed_key = seed_key_from(args)
    auth: Authenticator
    registry: RegistryAuth | None = None  # where this referee publishes its bots
    if redis_url:
        try:
            auth = registry = RegistryAuth(connect(redis_url, timeout=5.0))
        except StoreUnavailable as err:  # says what is wrong, the password masked
            raise UserError(str(err)) from None
    else:
        auth = StaticAuth(None)
        log.warning("--insecure: any token is accepted; never expose this referee")
    if args.operator_port is None:
        args.operator_port = current().operator_port
    args.operator_port = args.operator_port or None  # 0: off, whatever the environment says
    if args.operator_port == args.port:
        raise UserError(f"--operator-port {args.operator_port} is --port too: give the operator "
                        "API a port of its own (or leave it unset to share --port)")
    host, port = ((args.operator_host, args.operator_port) if args.operator_port
                  else (args.host, args.port))
    host = socket.gethostname() if host in ("0.0.0.0", "::", "[::]") else host
    advertise = args.advertise or f"{host}:{port}"
    try:
        asyncio.run(_serve(args, auth, advertise=advertise, registry=registry,
                           credentials=credentials, operator_token=operator_token,
                           limits=limits, seed_key=seed_key))
    except OSError as err:
        where = f"{args.host}:{args.port}" + (f" (operator {args.operator_host}:"
                                              f"{args.operator_port})" if args.operator_port
                                              else "")
        raise UserError(f"cannot start the referee on {where}: {err}") from None
    return 0


async def _serve(args: argparse.Namespace, auth: Authenticator, *, advertise: str,
                 registry: RegistryAuth | None, credentials: grpc.ServerCredentials | None,
                 operator_token: str | None, limits: Limits, seed_key: bytes | None) -> None:
    """Serve until SIGTERM or SIGINT, then drain; with a ``registry`` (the bot tokens' Redis),
    publish this replica and its bots' free capacity there meanwhile."""
    # the referee's runtime: prometheus_client, gRPC health and reflection
    from sueca.referee import metrics, server  # deferred: 0.1 s that other commands would pay

    if args.metrics_port:
        try:
            metrics.serve(args.metrics_port, args.host)
        except OSError as err:  # else it would read as a clash on the gRPC port
            raise UserError(f"cannot serve the referee's metrics on {args.host}:"
                            f"{args.metrics_port}: {err.strerror or err} (another referee? "
                            "give each its own --metrics-port, or 0 for none)") from None
    ref = await server.start(auth, args.host, port=args.port, referee_id=advertise,
                             credentials=credentials, operator_token=operator_token,
                             limits=limits, seed_key=seed_key, house_bots=args.house_bots,
                             operator_port=args.operator_port,
                             operator_host=args.operator_host)
    server.tune_gc()
    if seed_key is None:
        log.warning("no SUECA_SEED_KEY: bots' seeds use a random key of this process, so a "
                    "match's bot play replays only on this referee; set the same key on every "
                    "referee (and for selfplay) to reproduce matches anywhere")
    if args.house_bots:
        log.info("house bots on: %s", ", ".join(f"house:{n}" for n in args.house_bots))
    log.info("referee %s listening on %s:%d (%s, %s)%s", advertise, args.host, ref.port,
             "TLS" if credentials is not None else "plaintext",
             "operator token required" if operator_token else "no operator token",
             f", metrics on :{args.metrics_port}/metrics" if args.metrics_port else "")
    if ref.operator_port is not None:
        log.info("operator API (MatchService) on %s:%d only; bots and health on :%d",
                 args.operator_host, ref.operator_port, ref.port)
    operator_host = args.host if ref.operator_port is None else args.operator_host
    if operator_token is None and not is_loopback(operator_host):
        log.warning("listening on %s without an operator token: anyone who reaches the "
                    "operator API can run matches and list bots; pass --operator-token-file "
                    "FILE or set SUECA_OPERATOR_TOKEN", operator_host)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    beat = (asyncio.create_task(_heartbeat(ref, registry, advertise)) if registry is not None
            else None)
    await stop.wait()
    log.info("shutting down (signal received)")
    for sig in (signal.SIGTERM, signal.SIGINT):  # a second signal stops at once
        loop.add_signal_handler(sig, lambda: os._exit(130))
    await ref.shutdown(args.drain_seconds)
    if beat is not None and registry is not None:  # (both or neither)
        beat.cancel()
        await asyncio.to_thread(_unpublish, registry, advertise)
    log.info("referee stopped")


async def _heartbeat(ref: Referee, auth: RegistryAuth, advertise: str) -> None:
    """Publish this replica and its bots' free capacity (keys in sueca.arena.keys) for schedulers."""
    while True:
        try:
            await asyncio.to_thread(_publish, auth, advertise, ref.hub.free_by_bot()
                                    if ref.accepting else {})
        except Exception as err:
            log.warning("cannot publish to Redis: %s", err)
        await asyncio.sleep(HEARTBEAT_SECONDS)


def _publish(auth: RegistryAuth, advertise: str, free: dict[str, int]) -> None:
    RefereeStore(auth.client, auth.registry.keys).publish_referee(advertise, free, HEARTBEAT_TTL)


def _unpublish(auth: RegistryAuth, advertise: str) -> None:
    try:
        RefereeStore(auth.client, auth.registry.keys).withdraw_referee(advertise)
    except Exception as err:
        log.warning("cannot remove this referee from Redis: %s", err)
