"""The referee's gRPC server: BotService (bot streams), MatchService (run, watch, list),
health and reflection, on one grpc.aio server, or MatchService on a port of its own.

Start it with :func:`start` inside an event loop, or :class:`ServerThread` from synchronous code
(tests, benchmarks); ``sueca-arena referee`` (:mod:`sueca.arena.cli.referee`) wraps both with signals,
metrics and Redis. Every error a caller can cause comes back as a gRPC status whose message
names the problem; nothing a bot sends can crash the referee or touch a game it does not hold.

Each concern has its module: :mod:`.admission` (who may open a bot stream, hellos and tokens),
:mod:`.bot_service` (a bot's stream and session), :mod:`.match_service` (the operator API);
:class:`Referee` holds the state they share and stops them in order.
"""

from __future__ import annotations

import asyncio
import gc
import secrets
import socket
import threading
import uuid
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from sueca.referee.admission import Admission
from sueca.referee.auth import Authenticator, StaticAuth
from sueca.referee.bot_service import BotService
from sueca.referee.house import HouseBots
from sueca.referee.limits import AccessLog, AddressBudget, Limits
from sueca.referee.match_service import MatchService
from sueca.referee.sessions import SessionHub
from sueca.v1 import sueca_pb2 as pb
from sueca.v1 import sueca_pb2_grpc as pb_grpc

MAX_RECEIVE_BYTES = 64 * 1024  # bots and callers never need more; bigger messages are refused
REFUSED_LOG_SECONDS = 10.0     # refused calls and hellos: one log line per window (scanners)
# HTTP/2 streams at once on one connection, any service (bot streams have their own, smaller
# limit: Limits.streams_per_connection). A scheduler multiplexes its RunMatch calls on a few
# connections, so this stays far above any concurrency it uses.
MAX_CONCURRENT_STREAMS = 1024
# Allocations between two young-generation collections (CPython's default: 700), see tune_gc
GC_YOUNG_THRESHOLD = 20_000
_T = TypeVar("_T")

SERVER_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
    ("grpc.max_concurrent_streams", MAX_CONCURRENT_STREAMS),
    # No bandwidth-delay probing: it grows a stream's receive window far beyond what the
    # referee reads, and a bot that sends faster than its read rate (Limits.messages_per_second)
    # then gets megabytes of tiny messages parsed by gRPC's threads for it (measured: ~30% of a
    # core while 10 messages a second were read). Bots' answers are small; 64 KB is plenty.
    ("grpc.http2.bdp_probe", 0),
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
    ("grpc.http2.max_pings_without_data", 0),
    # the operators' channels ping a quiet RunMatch every 10 s (control.CHANNEL_OPTIONS):
    # accept pings 5 s apart with no data, rather than gRPC's default of 5 minutes
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 5_000),
    # gRPC sets SO_REUSEPORT by default: a second referee on the same port would then start
    # silently and take half the connections. One port, one referee; a clash is an error.
    ("grpc.so_reuseport", 0),
]


class Referee:
    """The state of one referee: sessions, running matches, and the services over them."""

    def __init__(self, auth: Authenticator, referee_id: str | None = None, *,
                 operator_token: str | None = None, limits: Limits | None = None,
                 seed_key: bytes | None = None, house_bots: Sequence[str] = ()) -> None:
        self.auth = auth
        self.limits = limits = limits or Limits()
        # one access-log line per window for each reason of refusal
        self.access = AccessLog(1 / REFUSED_LOG_SECONDS)
        # operators see this one (ListBots); bots get public_id, which names no host
        self.referee_id = referee_id or f"{socket.gethostname()}-{uuid.uuid4().hex[:6]}"
        self.public_id = secrets.token_hex(8)
        # bot seeds are keyed with this (sueca.sdk.bot.bot_seed): unset, a random key per
        # process, so no bot can work back from its bot_seed to the match seed and the decks
        self.seed_key = seed_key or secrets.token_bytes(32)
        self.hub = SessionHub()
        self.hub.house = HouseBots(house_bots)  # off unless the operator names them
        self.admission = Admission(auth, limits, self.access)
        self.bots = BotService(self.hub, self.admission, limits=limits, access=self.access,
                               public_id=self.public_id)
        rate = limits.refusals_per_second  # wrong operator tokens, per address: guesses
        self.operator = MatchService(self.hub, auth, referee_id=self.referee_id,
                                     seed_key=self.seed_key, operator_token=operator_token,
                                     refusals=AddressBudget(rate, 4 * rate), access=self.access)
        self.health = HealthServicer()
        self.server: grpc.aio.Server | None = None
        self.port = 0
        # MatchService on its own port (start(operator_port=...)); None: on the public one
        self.operator_server: grpc.aio.Server | None = None
        self.operator_port: int | None = None

    @property
    def accepting(self) -> bool:
        """False once shutting down: no new match, no new bot."""
        return self.operator.accepting

    async def shutdown(self, drain_seconds: float = 30.0, grace: float = 2.0) -> None:
        """Stop taking matches and bots; let running matches finish for ``drain_seconds``;
        end the rest as ``aborted`` (never a result); close every stream; stop the server."""
        self.operator.accepting = self.bots.accepting = False
        await self.health.enter_graceful_shutdown()
        await self.operator.drain(drain_seconds)
        await asyncio.sleep(0.05)  # let RunMatch callers and bots receive the final events
        self.access.flush()  # refusals held back by the log budget are counted, not lost
        self.hub.close_all()
        if self.server is not None:
            await self.server.stop(grace)
        if self.operator_server is not None:
            await self.operator_server.stop(grace)


#: What a MatchService call on the public port hears when the operator API has its own port
#: (the number is not given: the public port is for bots, and it says nothing they need)
OPERATOR_ELSEWHERE = ("this is the referee's public port: it serves bots (BotService) and "
                      "health only; the operator API (MatchService: RunMatch, Watch, ListBots) "
                      "listens on the referee's operator port (sueca-arena referee "
                      "--operator-port, SUECA_OPERATOR_PORT): point SUECA_REFEREES or "
                      "--referee there")


def _operator_elsewhere(ref: Referee) -> grpc.GenericRpcHandler:
    """MatchService on the public port when it has its own: every method refused UNIMPLEMENTED
    with :data:`OPERATOR_ELSEWHERE` (gRPC's bare "Method not found!" would not say where to go).
    The request is never decoded."""
    async def refuse(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
        ref.access.refused("a MatchService call", "operator_elsewhere", context.peer(),
                           "the operator API is not on the public port")
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, OPERATOR_ELSEWHERE)
    return grpc.method_handlers_generic_handler("sueca.v1.MatchService", {
        "RunMatch": grpc.unary_stream_rpc_method_handler(refuse),
        "Watch": grpc.unary_stream_rpc_method_handler(refuse),
        "ListBots": grpc.unary_unary_rpc_method_handler(refuse),
    })


def _listen(server: grpc.aio.Server, host: str, port: int,
            credentials: grpc.ServerCredentials | None) -> int:
    """Bind ``host:port`` (TLS with ``credentials``); the port bound, or OSError."""
    address = f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"
    try:
        bound = (server.add_insecure_port(address) if credentials is None
                 else server.add_secure_port(address, credentials))
    except RuntimeError as err:  # grpcio >= 1.84 raises; older releases return 0
        raise OSError(f"cannot listen on {address}: {err}") from None
    if not bound:
        raise OSError(f"cannot listen on {address}")
    return int(bound)


def _server(ref: Referee, handlers: Sequence[grpc.GenericRpcHandler], *,
            services: Sequence[str], operator: bool) -> grpc.aio.Server:
    """A gRPC server with ``handlers`` (and MatchService if ``operator``), the health service
    and reflection of ``services``."""
    server = grpc.aio.server(options=SERVER_OPTIONS)
    server.add_generic_rpc_handlers(tuple(handlers))
    if operator:
        pb_grpc.add_MatchServiceServicer_to_server(  # type: ignore[no-untyped-call]
            ref.operator, server)
    health_pb2_grpc.add_HealthServicer_to_server(ref.health, server)
    health = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
    reflection.enable_server_reflection((*services, health, reflection.SERVICE_NAME), server)
    return server


async def start(auth: Authenticator, host: str = "127.0.0.1", *, port: int = 0,
                referee_id: str | None = None,
                credentials: grpc.ServerCredentials | None = None,
                operator_token: str | None = None, limits: Limits | None = None,
                seed_key: bytes | None = None, house_bots: Sequence[str] = (),
                operator_port: int | None = None,
                operator_host: str = "127.0.0.1") -> Referee:
    """Start a referee on ``host:port`` (0: a free port, see ``Referee.port``) in this loop.

    ``credentials`` (:func:`sueca.referee.security.server_credentials`) serve TLS instead of plaintext
    on the same port; ``operator_token`` makes every MatchService call prove it is an operator
    (bots keep their own tokens; health and reflection stay open for probes and grpcurl).
    ``limits`` bound what each bot may cost (:class:`sueca.referee.limits.Limits`); ``seed_key``
    keys the bots' seeds (unset: random, so only this process can reproduce its bots' play).
    ``house_bots`` (example names) are the bots this referee may seat itself
    (:mod:`sueca.referee.house`); none by default.

    ``operator_port`` (0: a free one, see ``Referee.operator_port``) moves MatchService off the
    public port onto ``operator_host:operator_port`` (loopback by default, a pod or private
    network in a deploy), with the same ``credentials`` and still behind ``operator_token``:
    what is published for bots then cannot run, watch or list anything, whatever leaks. Unset,
    both services share the public port (one port for a laptop or a demo).
    """
    ref = Referee(auth, referee_id, operator_token=operator_token, limits=limits,
                  seed_key=seed_key, house_bots=house_bots)
    bot = ref.bots.handler()
    bot_service = pb.DESCRIPTOR.services_by_name["BotService"].full_name
    match_service = pb.DESCRIPTOR.services_by_name["MatchService"].full_name
    if operator_port is None:
        server = _server(ref, (bot,), services=(bot_service, match_service), operator=True)
    else:
        server = _server(ref, (bot, _operator_elsewhere(ref)), services=(bot_service,),
                         operator=False)
        operator = _server(ref, (), services=(match_service,), operator=True)
        ref.operator_port = _listen(operator, operator_host, operator_port, credentials)
    ref.port = _listen(server, host, port, credentials)
    if operator_port is not None:
        await operator.start()
        ref.operator_server = operator
    await server.start()
    ref.server = server
    for name in ("", "sueca.v1.BotService", "sueca.v1.MatchService"):
        await ref.health.set(name, health_pb2.HealthCheckResponse.SERVING)
    return ref


def tune_gc() -> None:
    """Make Python's cycle collector cheap for a referee process (called once it serves).

    With CPython's defaults a collection runs every 700 net allocations: at 250 matches in
    flight that is every ~100 moves, and it walks the in-flight futures, frames and gRPC
    call objects each time and promotes them to older generations although they die a few
    ms later (measured: 19% of the referee's CPU, 1,000 sessions). With a young generation of
    GC_YOUNG_THRESHOLD, the objects of a move are freed by reference counting before any
    collection sees them. ``gc.freeze`` moves what exists at startup (modules, descriptors)
    out of the collector's sight, so that full collections, which stop every match while
    they run, walk only the live state.
    """
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, older, oldest)


class ServerThread:
    """A referee in a background thread with its own event loop (tests, benchmarks)::

        with ServerThread(StaticAuth({"alice": "alice.secret"})) as srv:
            control.list_bots(srv.address)
    """

    def __init__(self, auth: Authenticator, host: str = "127.0.0.1", *, port: int = 0,
                 limits: Limits | None = None, seed_key: bytes | None = None,
                 house_bots: Sequence[str] = ()) -> None:
        self.auth, self.host, self.want_port = auth, host, port
        self.limits, self.seed_key = limits, seed_key
        self.house_bots = tuple(house_bots)
        self.loop = asyncio.new_event_loop()
        self.referee: Referee | None = None
        self._thread = threading.Thread(target=self._main, name="referee", daemon=True)
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._stopped: asyncio.Event | None = None

    @property
    def address(self) -> str:
        assert self.referee is not None
        return f"{self.host}:{self.referee.port}"

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        self._stopped = asyncio.Event()
        try:
            self.referee = await start(self.auth, self.host, port=self.want_port,
                                       limits=self.limits, seed_key=self.seed_key,
                                       house_bots=self.house_bots)
        except BaseException as err:
            self._error = err
            self._ready.set()
            return
        self._ready.set()
        await self._stopped.wait()

    def start(self) -> ServerThread:
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error
        return self

    def call(self, fn: Callable[[], Coroutine[Any, Any, _T]], timeout: float = 60) -> _T:
        """Run a coroutine function in the referee's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(fn(), self.loop).result(timeout)

    def stop(self, drain_seconds: float = 0.0) -> None:
        referee, stopped = self.referee, self._stopped  # both set once the referee started
        if referee is not None and stopped is not None and self._thread.is_alive():
            self.call(lambda: referee.shutdown(drain_seconds, grace=0.5))
            self.loop.call_soon_threadsafe(stopped.set)
        self._thread.join(10)

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["Referee", "Authenticator", "StaticAuth", "ServerThread", "start", "tune_gc",
           "MAX_RECEIVE_BYTES"]
