"""The referee's gRPC service: BotService (bot streams), MatchService (run, watch, list), health
and reflection, on one grpc.aio server.

Start it with :func:`start` inside an event loop, or :class:`ServerThread` from synchronous code
(tests, benchmarks); ``sueca-arena referee`` (:mod:`sueca.arena.cli.referee`) wraps both with signals,
metrics and Redis. Every error a caller can cause comes back as a gRPC status whose message
names the problem; nothing a bot sends can crash the referee or touch a game it does not hold.
"""

from __future__ import annotations

import asyncio
import gc
import hmac
import logging
import secrets
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TypeVar

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from sueca import codec as conv
from sueca.engine.game import End
from sueca.referee import metrics
from sueca.referee.clocked_match import ClockedMatch, Listener
from sueca.referee.house import HouseBots, is_house_name, quote
from sueca.referee.limits import (
    SHOWN_CHARS,
    AccessLog,
    AddressBudget,
    AddressGate,
    Limits,
    PeerLabels,
    Summary,
    check_hello,
    peer_address,
    shown,
)
from sueca.referee.security import AUTHORIZATION, BEARER
from sueca.referee.sessions import MAX_CAPACITY, PlacementError, Session, SessionHub
from sueca.sdk.logs import bind
from sueca.v1 import sueca_pb2 as pb

if TYPE_CHECKING:
    from typing import TypeAlias

    #: A bot stream as the referee serves it: it reads decoded BotMessages (or what did not
    #: decode) and writes RefereeMessages the sessions encoded (grpc.aio's contexts are generic
    #: in the type stubs only)
    BotStream: TypeAlias = grpc.aio.ServicerContext["pb.BotMessage | _Malformed", bytes]

log = logging.getLogger("sueca.referee")

MAX_RECEIVE_BYTES = 64 * 1024  # bots and callers never need more; bigger messages are refused
WATCH_QUEUE_LIMIT = 10_000     # a spectator this far behind is cut off, never the match slowed
REFUSED_LOG_SECONDS = 10.0     # refused calls and hellos: one log line per window (scanners)
# HTTP/2 streams at once on one connection, any service (bot streams have their own, smaller
# limit: Limits.streams_per_connection). A scheduler multiplexes its RunMatch calls on a few
# connections, so this stays far above any concurrency it uses.
MAX_CONCURRENT_STREAMS = 1024
STREAM_REFUSAL_PAUSE = 4.0  # x hello_seconds: see Referee._pause
# Refusals of one address waiting at once (each a sleeping handler and its call, some KB).
# Beyond, refused at once: a client with more streams pending than this gets faster refusals
# (measured: at 256, a client keeping 480 refused streams open got 6x the refusals per second).
MAX_PAUSED_PER_ADDRESS = 1024
SESSION_LOG_RATE, SESSION_LOG_BURST = 5.0, 100  # bot connected/disconnected lines per second
_READ_THROTTLE = metrics.LIMIT_HITS.labels("read_throttle")
# Allocations between two young-generation collections (CPython's default: 700), see tune_gc
GC_YOUNG_THRESHOLD = 20_000

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
    # gRPC sets SO_REUSEPORT by default: a second referee on the same port would then start
    # silently and take half the connections. One port, one referee; a clash is an error.
    ("grpc.so_reuseport", 0),
]


# -- authentication ------------------------------------------------------------------------------

class Authenticator(Protocol):
    async def verify(self, bot: str, token: str) -> bool: ...

    async def known(self, bot: str) -> bool | None:
        """Is the bot registered? None when this authenticator cannot tell."""


class StaticAuth:
    """Tokens from a dict (tests, embedded use); ``None`` accepts any token (``--insecure``)."""

    def __init__(self, tokens: dict[str, str] | None) -> None:
        self.tokens = tokens

    async def verify(self, bot: str, token: str) -> bool:
        if self.tokens is None:
            return True
        expected = self.tokens.get(bot)
        return expected is not None and expected == token

    async def known(self, bot: str) -> bool | None:
        return None if self.tokens is None else bot in self.tokens


# -- wire helpers --------------------------------------------------------------------------------

class _Malformed:
    __slots__ = ("error",)

    def __init__(self, error: str) -> None:
        self.error = error


def _decode_bot_message(data: bytes) -> pb.BotMessage | _Malformed:
    """Decode without failing the stream: a message that does not parse is a protocol fault
    the bot is told about, not a reason to drop every game it plays."""
    try:
        return pb.BotMessage.FromString(data)
    except DecodeError as err:
        return _Malformed(f"could not decode BotMessage ({len(data)} bytes): {err}")
    except Exception as err:  # any parser complaint
        return _Malformed(f"could not decode BotMessage ({len(data)} bytes): {err}")


#: What ``context.read()`` returns once the peer closed its side (grpc.aio.EOF), which the type
#: stubs leave out of read()'s type: compared as a plain object
_END_OF_STREAM: object = grpc.aio.EOF
_Request = TypeVar("_Request")
_Response = TypeVar("_Response")
_T = TypeVar("_T")


async def _events(listener: Listener) -> AsyncIterator[pb.MatchEvent]:
    """A listener's events as they come, up to and including the result."""
    queue = listener.queue
    while True:
        event = await queue.get()
        yield event
        if event.HasField("result"):
            return


class _Gone(Exception):
    """The bot hung up before it could be told why its stream ends."""


async def _abort(context: BotStream, code: grpc.StatusCode, message: str) -> NoReturn:
    """``context.abort``, but a peer already gone (gRPC then fails to send the status) is a
    quiet :class:`_Gone` rather than an ExecuteBatchError traceback in the referee's log."""
    try:
        await context.abort(code, message)
    except grpc.aio.AbortError:
        raise
    except Exception as err:
        log.debug("could not tell a bot stream %s (%s): it is gone (%s)", code.name,
                  message.split(":")[0], shown(str(err), 100))
        raise _Gone from None


def _SERIALIZE(msg: bytes) -> bytes:
    """RefereeMessages are encoded by the sessions (see proto_convert's hot-path encoders)."""
    return msg


# -- the service ---------------------------------------------------------------------------------

class Referee:
    """The state of one referee: sessions, running matches, and the services over them."""

    def __init__(self, auth: Authenticator, referee_id: str | None = None,
                 operator_token: str | None = None, limits: Limits | None = None,
                 seed_key: bytes | None = None, house_bots: Sequence[str] = ()) -> None:
        self.auth = auth
        # MatchService callers must send it (None: anyone may, as on a private network)
        self.operator_token = operator_token.encode() if operator_token else None
        # log budgets: one access-log line per window for each reason of refusal, a few lines
        # a second for bots coming and going (a bot reconnecting in a loop must not flood it)
        self.access = AccessLog(1 / REFUSED_LOG_SECONDS)
        self._sessions_log = Summary(log, SESSION_LOG_RATE, SESSION_LOG_BURST)
        # operators see this one (ListBots); bots get public_id, which names no host
        self.referee_id = referee_id or f"{socket.gethostname()}-{uuid.uuid4().hex[:6]}"
        self.public_id = secrets.token_hex(8)
        # bot seeds are keyed with this (sueca.sdk.bot.bot_seed): unset, a random key per
        # process, so no bot can work back from its bot_seed to the match seed and the decks
        self.seed_key = seed_key or secrets.token_bytes(32)
        self.limits = limits or Limits()
        self.streams: dict[str, int] = {}      # peer (one connection) -> live bot streams
        self.connections: dict[str, int] = {}  # peer address -> connections with bot streams
        self.paused: dict[str, int] = {}       # peer address -> refusals waiting (_pause)
        rate = self.limits.refusals_per_second
        self.refusals = AddressBudget(rate, 4 * rate)  # refused hellos per address
        rate = self.limits.hellos_per_second
        self.checking = AddressGate()              # token checks at once, per address
        self.hellos = AddressBudget(rate, 5 * rate)    # hellos that reach Redis, per address
        rate = self.limits.refusals_per_second  # wrong operator tokens, per address: guesses
        self.operator_refusals = AddressBudget(rate, 4 * rate)
        self.peer_labels = PeerLabels()
        self.hub = SessionHub()
        self.hub.house = HouseBots(house_bots)  # off unless the operator names them
        self.matches: dict[str, ClockedMatch] = {}
        self.accepting = True
        self.health = HealthServicer()
        self.server: grpc.aio.Server | None = None
        self.port = 0
        # MatchService on its own port (start(operator_port=...)); None: on the public one
        self.operator_server: grpc.aio.Server | None = None
        self.operator_port: int | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- BotService.Connect ---------------------------------------------------------------------
    async def connect(self, request_iterator: AsyncIterator[pb.BotMessage | _Malformed],
                      context: BotStream) -> None:
        """One bot stream: hello (within ``hello_seconds``, checked by syntax before Redis is
        asked), then the session until either side ends it. Refusals before the hello is
        accepted cost one metric and, at most once per window, one log line."""
        peer = context.peer() or ""
        address = peer_address(peer)
        refused = self._enter(peer, address)
        if refused is not None:
            limit, message = refused
            metrics.LIMIT_HITS.labels(limit).inc()
            self.access.refused("a bot stream", limit, peer, message)
            # no SDK client opens more than one stream per connection: this one waits longer
            await self._pause(address, STREAM_REFUSAL_PAUSE)
            try:
                await _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, message)
            except _Gone:
                return
        # counted until gRPC is done with the stream, not when this handler returns: a stream
        # cut off while its bot does not read lingers in the transport until the bot reads
        # or hangs up, and must keep counting against the limits meanwhile
        # (the stubs declare the callback a class, not a Protocol: no function matches it)
        context.add_done_callback(lambda _: self._leave(peer, address))  # type: ignore[arg-type]
        try:
            await self._connect(context, peer, address)
        except _Gone:
            pass

    async def _pause(self, address: str, factor: float = 1.0) -> None:
        """Wait ``factor`` x ``hello_seconds`` before refusing a stream for a limit (streams,
        connections, hellos per address). Waiting costs the referee a timer; answering at once
        would let a client that opens streams only to be refused get as many refusals as it
        can send, each a few hundred us of the event loop's gRPC machinery. This way a refused
        stream costs the referee no more than one that never says hello, and their rate per
        connection is bounded by MAX_CONCURRENT_STREAMS / the pause. At most
        MAX_PAUSED_PER_ADDRESS refusals of one address wait at once (memory); beyond, at once."""
        waiting = self.paused.get(address, 0)
        if waiting >= MAX_PAUSED_PER_ADDRESS:
            return
        self.paused[address] = waiting + 1
        try:
            await asyncio.sleep(factor * self.limits.hello_seconds)
        finally:
            left = self.paused.pop(address, 1) - 1
            if left > 0:
                self.paused[address] = left

    def _enter(self, peer: str, address: str) -> tuple[str, str] | None:
        """Count a new Connect stream of connection ``peer``; (limit, message) if over one."""
        limits = self.limits
        n = self.streams.get(peer, 0)
        if limits.streams_per_connection and n >= limits.streams_per_connection:
            return ("streams_per_connection",
                    f"this connection already has {n} bot streams (the limit): a bot process "
                    "needs one stream per connection")
        if n == 0:
            c = self.connections.get(address, 0)
            if limits.connections_per_address and c >= limits.connections_per_address:
                return ("connections_per_address",
                        f"{c} connections from {address} already have bot streams here (the "
                        "limit): close some first")
            self.connections[address] = c + 1
        self.streams[peer] = n + 1
        return None

    def _leave(self, peer: str, address: str) -> None:
        n = self.streams.pop(peer, 1) - 1
        if n > 0:
            self.streams[peer] = n
            return
        c = self.connections.pop(address, 1) - 1
        if c > 0:
            self.connections[address] = c

    async def _refuse(self, context: BotStream, address: str, reason: str,
                      code: grpc.StatusCode, message: str, bot: str | None = None,
                      log_reason: str | None = None, spent: bool = False) -> NoReturn:
        """Refuse a hello: count it (per address, bounded labels), log it in the access log
        (at most once per window and reason; ``log_reason`` there if it says more than the
        metric's ``reason``), spend the address's refusal budget, abort with ``message``
        (which quotes bot-sent text only through :func:`shown`)."""
        metrics.BAD_HELLOS.labels(self.peer_labels(address), reason).inc()
        if not spent:
            self.refusals.spend(address)
        self.access.refused("a bot hello", log_reason or reason, context.peer(),
                            message.split(":")[0], bot)
        await _abort(context, code, message)

    async def _check_token(self, context: BotStream, address: str,
                           hello: pb.Hello) -> str | None:
        """The hello's token, checked within the address's budgets (refused: aborts). Over a
        budget, returns its name instead, nothing asked: the caller pauses and refuses after
        leaving the token-check gate (a refusal waiting in it held a slot for its whole
        pause, so honest hellos from the same address queued behind a misconfigured bot)."""
        for budget, limit in ((self.refusals, "refusals"), (self.hellos, "hellos")):
            if not budget.allowed(address):  # a flood of hellos: Redis is not asked
                metrics.LIMIT_HITS.labels(limit).inc()
                metrics.BAD_HELLOS.labels(self.peer_labels(address), "rate_limited").inc()
                self.access.refused("a bot hello", f"{limit}_per_second", context.peer(),
                                    f"too many {limit} from {address}", hello.bot)
                return limit
        self.hellos.spend(address, debt=True)
        try:
            ok = await self.auth.verify(hello.bot, hello.token)
        except Exception as err:
            self.access.refused("a bot hello", "auth_unavailable", context.peer(),
                                f"cannot check the token of bot {hello.bot!r}: "
                                f"{shown(str(err), 200)}", hello.bot)
            await _abort(context, grpc.StatusCode.UNAVAILABLE,
                         f"the referee cannot check tokens right now: {shown(str(err), 200)}")
        if not ok:
            metrics.FAULTS.labels("unauthenticated").inc()
            # the operator's log tells an unknown name from a wrong token: one more look-up,
            # within the address's refusal budget, which is spent first so that no more
            # hellos pass it meanwhile; the bot is told the same either way
            self.refusals.spend(address, debt=True)
            unknown = await self.auth.known(hello.bot) is False
            # a token NAME.SECRET of another name: say so (the caller sent both names; whether
            # that other bot exists, or the secret is right, is not said)
            other = hello.token.rpartition(".")[0] != hello.bot
            await self._refuse(context, address, "wrong_token", grpc.StatusCode.UNAUTHENTICATED,
                               f"wrong token for bot {hello.bot!r}: "
                               + ("this token was issued to another bot (a token starts with "
                                  "its bot's name); a token plays only as the bot it was issued "
                                  "to" if other else
                                  "not the token `sueca-arena bots add` printed for it, or no "
                                  "bot of that name is registered"), hello.bot,
                               "unknown_bot" if unknown else None, spent=True)
        return None

    async def _connect(self, context: BotStream, peer: str, address: str) -> None:
        limits = self.limits
        try:
            first = await asyncio.wait_for(context.read(), limits.hello_seconds or None)
        except TimeoutError:
            metrics.LIMIT_HITS.labels("hello_deadline").inc()
            await self._refuse(context, address, "no_hello", grpc.StatusCode.DEADLINE_EXCEEDED,
                               f"no hello within {limits.hello_seconds:g}s: the first "
                               "BotMessage must carry hello (bot, token, capacity)")
        if first is _END_OF_STREAM:
            return
        if isinstance(first, _Malformed):
            await self._refuse(context, address, "bad_hello", grpc.StatusCode.INVALID_ARGUMENT,
                               first.error[:200])
        if not first.HasField("hello"):
            await self._refuse(context, address, "bad_hello", grpc.StatusCode.INVALID_ARGUMENT,
                               "the first BotMessage must carry hello (bot, token, capacity)")
        hello = first.hello
        if is_house_name(hello.bot):  # whatever the token, even with --insecure
            metrics.FAULTS.labels("unauthenticated").inc()
            await self._refuse(context, address, "bad_name", grpc.StatusCode.PERMISSION_DENIED,
                               f"bot name {quote(hello.bot)} is reserved for the referee's own "
                               "house bots: no network bot may connect as one", hello.bot)
        problem = check_hello(hello.bot, hello.token)
        if problem is not None:
            metrics.FAULTS.labels("unauthenticated").inc()
            reason, message = problem
            await self._refuse(context, address, reason, grpc.StatusCode.INVALID_ARGUMENT
                               if reason == "bad_name" else grpc.StatusCode.UNAUTHENTICATED,
                               message, hello.bot)
        if not 1 <= hello.capacity <= MAX_CAPACITY:
            await self._refuse(context, address, "bad_capacity",
                               grpc.StatusCode.INVALID_ARGUMENT,
                               f"bad capacity {hello.capacity}: a bot process plays 1.."
                               f"{MAX_CAPACITY} games at once", hello.bot)
        async with self.checking(address):  # no more than a few token checks at once
            over = await self._check_token(context, address, hello)
        if over is not None:
            await self._pause(address)
            await _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                         f"too many {'refused ' if over == 'refusals' else ''}"
                         f"hellos from {address}: wait a few seconds")
        if not self.accepting:
            self.access.refused("a bot hello", "shutting_down", context.peer(),
                                "the referee is shutting down", hello.bot)
            await _abort(context, grpc.StatusCode.UNAVAILABLE, "the referee is shutting down")
        session = Session(hello.bot, hello.capacity, peer, hello.sdk_version[:SHOWN_CHARS],
                          limits)
        if not self.hub.add(session, limits.sessions_per_bot):
            metrics.LIMIT_HITS.labels("sessions_per_bot").inc()
            self.access.refused("a session", "sessions_per_bot", peer,
                                f"bot {session.bot!r} has {limits.sessions_per_bot} already",
                                session.bot)
            await _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                         f"bot {session.bot!r} already has {limits.sessions_per_bot} "
                         "sessions on this referee (the limit): close one first")
        reader = writer = None
        try:
            await context.write(conv.welcome_bytes(self.public_id, hello.capacity))
            self._sessions_log.info("bot %r connected from %s (capacity %d, sdk %s)",
                                    session.bot, session.peer, session.capacity,
                                    shown(session.sdk_version),
                                    extra={"bot": session.bot, "peer": peer})
            reader = asyncio.create_task(self._read(session, context))
            writer = asyncio.create_task(session.write_loop(context.write))
            session.kill = writer.cancel  # an overflow cuts short a write the bot never reads
            await writer
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not session.overflowed or (task is not None and task.cancelling()):
                raise
        except Exception as err:  # the peer went away in mid-write: nothing to report
            log.debug("stream of bot %r (%s) ended while writing: %s", session.bot, peer,
                      shown(str(err), 200))
        finally:
            for task in (reader, writer):
                if task is not None:
                    task.cancel()
            self.hub.remove(session)
            self._sessions_log.info(
                "bot %r disconnected (%s): %d messages in (%.1f answers each), %d out "
                "(%.1f items each)%s", session.bot, session.peer, session.received,
                session.actions_received / max(session.received, 1), session.sent,
                session.items_sent / max(session.sent, 1),
                f", {session.errors_unanswered} faults not answered"
                if session.errors_unanswered else "", extra={"bot": session.bot, "peer": peer})
        if session.overflowed:
            await _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                         f"stream not read: more than {limits.out_bytes} bytes or "
                         f"{limits.out_items} items were waiting to be sent to bot "
                         f"{session.bot!r}; its games wait for it to reconnect")

    async def _read(self, session: Session, context: BotStream) -> None:
        """Hand each incoming message to the hub; messages that answer nothing (empty, faulty,
        malformed) at most ``messages_per_second`` and ``actions_per_second`` for the bot's
        streams together: beyond that reading pauses and flow control slows the bot."""
        hub = self.hub
        messages, actions = hub.read_budget(session.bot, self.limits)  # shared by its streams
        try:
            while True:
                msg = await context.read()
                if msg is _END_OF_STREAM:
                    break
                session.errors_in_message = session.faults_in_message = 0
                if isinstance(msg, _Malformed):
                    hub.malformed(session, msg.error)
                    pause = messages.debit(1)
                else:
                    n = len(msg.actions)
                    if n:
                        hub.dispatch(session, msg.actions)
                    if msg.drain and not session.draining:
                        session.draining = True
                        # after every game start already queued: the bot then knows all its games
                        session.push(conv.welcome_bytes(self.public_id, 0))
                        self._sessions_log.info("bot %r (%s) is draining: no new games",
                                                session.bot, session.peer,
                                                extra={"bot": session.bot, "peer": session.peer})
                    if msg.HasField("hello"):
                        hub.malformed(session, "hello was already sent on this stream; "
                                      "send it only in the first message")
                    # A message whose every action answered a turn the referee asked for costs
                    # what the referee chose to spend: it is never throttled (an honest fast bot
                    # at low concurrency sends one such message per move, far above any fixed
                    # rate). Empty or faulty messages, and their actions, spend the budgets.
                    wasted = n == 0 or session.faults_in_message > 0
                    pause = max(messages.debit(1), actions.debit(n)) if wasted else 0.0
                if pause > 0:
                    _READ_THROTTLE.inc()
                    await asyncio.sleep(pause)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # the stream broke: the write loop ends the session
            log.debug("read from bot %r ended: %s", session.bot, shown(str(err), 200))
        session.close()

    # -- MatchService ---------------------------------------------------------------------------
    async def _check_operator(self, context: grpc.aio.ServicerContext[_Request, _Response]) -> None:
        """Abort with UNAUTHENTICATED unless the call carries the operator token. The message
        says what was wrong and never repeats what was sent (it may be a real secret).

        Wrong tokens are guesses: an address that sent more than its refusal budget (the bot
        hellos' rate, ``refusals_per_second``) has its next tokens refused unread, right or
        wrong, with RESOURCE_EXHAUSTED until the budget refills; otherwise a client could try
        tokens as fast as the referee answers. Missing or malformed headers guess nothing and
        are not counted."""
        if self.operator_token is None:
            return
        sent = [v for k, v in (context.invocation_metadata() or ()) if k == AUTHORIZATION]
        problem = None
        address = peer_address(context.peer())
        if sent and not self.operator_refusals.allowed(address):
            metrics.LIMIT_HITS.labels("operator_refusals").inc()
            self.access.refused("a MatchService call", "operator_refusals", context.peer(),
                                "too many wrong operator tokens")
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"too many wrong operator tokens from {shown(address, 80)}: "
                                "no token from there is looked at for a few seconds")
        if not sent:
            problem = ("this referee runs matches only for operators: send the metadata "
                       f"'{AUTHORIZATION}: {BEARER}<operator token>' (set SUECA_OPERATOR_TOKEN)")
        elif len(sent) > 1:
            problem = f"more than one '{AUTHORIZATION}' metadata entry: send exactly one"
        else:
            value = sent[0].encode() if isinstance(sent[0], str) else bytes(sent[0])
            if value[:len(BEARER)].lower() != BEARER.lower().encode():  # RFC 7235: any case
                problem = (f"'{AUTHORIZATION}' metadata must read '{BEARER}<operator token>'")
            elif not hmac.compare_digest(value[len(BEARER):].strip(), self.operator_token):
                problem = "wrong operator token"
                self.operator_refusals.spend(address)
        if problem is not None:
            metrics.FAULTS.labels("unauthenticated").inc()
            self.access.refused("a MatchService call", "operator_token", context.peer(),
                                problem.split(":")[0])
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, problem)

    async def RunMatch(self, request: pb.MatchSpec,
                       context: grpc.aio.ServicerContext[pb.MatchSpec, pb.MatchEvent],
                       ) -> AsyncIterator[pb.MatchEvent]:
        await self._check_operator(context)
        if not self.accepting:
            await context.abort(grpc.StatusCode.UNAVAILABLE,
                                "the referee is shutting down: run the match on another one")
        try:
            plan = conv.check_spec(request)
        except conv.SpecError as err:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
        if not plan.match_id:
            plan = plan._replace(match_id=uuid.uuid4().hex)
        if plan.seed is None:  # a match is always reproducible from its replay's seed
            plan = plan._replace(seed=secrets.randbits(64))
        if plan.match_id in self.matches:
            await context.abort(grpc.StatusCode.ALREADY_EXISTS,
                                f"match {shown(plan.match_id)} is already running on this referee")
        if "/" in plan.match_id or len(plan.match_id) > 200:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"bad match_id {shown(plan.match_id)}: at most 200 characters, no '/'")
        try:
            sessions = self.hub.reserve(plan.bots)
        except PlacementError as err:
            code = getattr(grpc.StatusCode, err.code)
            message = str(err)
            if err.code == "FAILED_PRECONDITION":
                name = next(b for b in plan.bots
                            if b not in self.hub.sessions and not is_house_name(b))
                if await self.auth.known(name) is False:
                    code = grpc.StatusCode.NOT_FOUND
                    message = f"unknown bot {shown(name)}: no bot of that name is registered"
            await context.abort(code, message)
        bind(match_id=plan.match_id)  # this handler's lines (and its match task's) carry it
        runner = ClockedMatch(plan, sessions, self.hub, self.seed_key)
        self.matches[plan.match_id] = runner
        listener = runner.listen(cards=not plan.quiet, replay=True)
        task = asyncio.create_task(runner.run(), name=f"match {plan.match_id}")
        self._tasks.add(task)
        task.add_done_callback(partial(self._match_done, match_id=plan.match_id))
        # a load test asks for every seat's turn times (trailing metadata, see ClockedMatch)
        times = ("sueca-turn-times", "1") in tuple(context.invocation_metadata() or ())
        try:
            async for event in _events(listener):
                if times and event.HasField("result"):
                    context.set_trailing_metadata((runner.turn_times_metadata(),))
                yield event
        finally:
            runner.unlisten(listener)
            if runner.match.end is None:  # the caller went away: free the bots
                log.warning("caller of match %s went away; aborting it", plan.match_id)
                runner.stop(End.ABORTED)

    def _match_done(self, task: asyncio.Task[Any], match_id: str) -> None:
        self._tasks.discard(task)
        self.matches.pop(match_id, None)

    async def Watch(self, request: pb.WatchRequest,
                    context: grpc.aio.ServicerContext[pb.WatchRequest, pb.MatchEvent],
                    ) -> AsyncIterator[pb.MatchEvent]:
        await self._check_operator(context)
        runner = self.matches.get(request.match_id)
        if runner is None or runner.done.is_set():
            await context.abort(grpc.StatusCode.NOT_FOUND,
                                f"no match {shown(request.match_id)} is running on this referee")
        listener = runner.listen(cards=True, replay=False, limit=WATCH_QUEUE_LIMIT)
        try:
            async for event in _events(listener):
                if listener.overflowed:
                    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                        "spectator too slow: more than "
                                        f"{WATCH_QUEUE_LIMIT} events behind")
                yield event
        finally:
            runner.unlisten(listener)

    async def ListBots(self, request: pb.ListBotsRequest,
                       context: grpc.aio.ServicerContext[pb.ListBotsRequest, pb.ListBotsResponse],
                       ) -> pb.ListBotsResponse:
        await self._check_operator(context)
        return pb.ListBotsResponse(referee_id=self.referee_id, bots=self.hub.status())

    # -- lifecycle ------------------------------------------------------------------------------
    async def shutdown(self, drain_seconds: float = 30.0, grace: float = 2.0) -> None:
        """Stop taking matches and bots; let running matches finish for ``drain_seconds``;
        end the rest as ``aborted`` (never a result); close every stream; stop the server."""
        self.accepting = False
        await self.health.enter_graceful_shutdown()
        running = [r for r in self.matches.values() if not r.done.is_set()]
        if running:
            log.info("shutting down: waiting up to %.0fs for %d running match(es)",
                     drain_seconds, len(running))
            deadline = time.monotonic() + drain_seconds
            for r in running:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    await asyncio.wait_for(r.done.wait(), left)
                except TimeoutError:
                    break
            late = [r for r in running if not r.done.is_set()]
            if late:
                log.warning("aborting %d match(es) still running", len(late))
            for r in late:
                r.stop(End.ABORTED)
            for r in late:
                await r.done.wait()
        await asyncio.sleep(0.05)  # let RunMatch callers and bots receive the final events
        self.access.flush()  # refusals held back by the log budget are counted, not lost
        self.hub.close_all()
        if self.server is not None:
            await self.server.stop(grace)
        if self.operator_server is not None:
            await self.operator_server.stop(grace)


def _handlers(ref: Referee) -> tuple[grpc.GenericRpcHandler, grpc.GenericRpcHandler]:
    """BotService (what bots call) and MatchService (what operators call)."""
    bot = grpc.method_handlers_generic_handler("sueca.v1.BotService", {
        "Connect": grpc.stream_stream_rpc_method_handler(
            ref.connect, request_deserializer=_decode_bot_message,
            response_serializer=_SERIALIZE),
    })
    match = grpc.method_handlers_generic_handler("sueca.v1.MatchService", {
        "RunMatch": grpc.unary_stream_rpc_method_handler(
            ref.RunMatch, request_deserializer=pb.MatchSpec.FromString,
            response_serializer=pb.MatchEvent.SerializeToString),
        "Watch": grpc.unary_stream_rpc_method_handler(
            ref.Watch, request_deserializer=pb.WatchRequest.FromString,
            response_serializer=pb.MatchEvent.SerializeToString),
        "ListBots": grpc.unary_unary_rpc_method_handler(
            ref.ListBots, request_deserializer=pb.ListBotsRequest.FromString,
            response_serializer=pb.ListBotsResponse.SerializeToString),
    })
    return bot, match


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


def _server(ref: Referee, handlers: Sequence[grpc.GenericRpcHandler],
            services: Sequence[str]) -> grpc.aio.Server:
    """A gRPC server with ``handlers``, the health service and reflection of ``services``."""
    server = grpc.aio.server(options=SERVER_OPTIONS)
    server.add_generic_rpc_handlers(tuple(handlers))
    health_pb2_grpc.add_HealthServicer_to_server(ref.health, server)
    health = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
    reflection.enable_server_reflection((*services, health, reflection.SERVICE_NAME), server)
    return server


async def start(auth: Authenticator, host: str = "127.0.0.1", port: int = 0,
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
    ref = Referee(auth, referee_id, operator_token, limits, seed_key, house_bots)
    bot, match = _handlers(ref)
    bot_service = pb.DESCRIPTOR.services_by_name["BotService"].full_name
    match_service = pb.DESCRIPTOR.services_by_name["MatchService"].full_name
    if operator_port is None:
        server = _server(ref, (bot, match), (bot_service, match_service))
    else:
        server = _server(ref, (bot, _operator_elsewhere(ref)), (bot_service,))
        operator = _server(ref, (match,), (match_service,))
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

    def __init__(self, auth: Authenticator, host: str = "127.0.0.1", port: int = 0,
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
            self.referee = await start(self.auth, self.host, self.want_port,
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
