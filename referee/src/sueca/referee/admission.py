"""Who may open a bot stream, and whose hello is accepted: the limits per connection and
address counted before anything is read, the hello checked by syntax before the token is
(within the address's budgets, so a flood never reaches Redis), and every refusal counted,
logged within a budget and answered with a status that names the problem.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, NoReturn

import grpc

from sueca.referee import metrics
from sueca.referee.auth import Authenticator
from sueca.referee.bot_wire import END_OF_STREAM, Malformed, abort
from sueca.referee.house import is_house_name, quote
from sueca.referee.limits import (
    AccessLog,
    AddressBudget,
    AddressGate,
    Limits,
    PeerLabels,
    check_hello,
    shown,
)
from sueca.referee.sessions import MAX_CAPACITY
from sueca.v1 import sueca_pb2 as pb

if TYPE_CHECKING:
    from sueca.referee.bot_wire import BotStream

__all__ = ["Admission", "STREAM_REFUSAL_PAUSE", "MAX_PAUSED_PER_ADDRESS"]

STREAM_REFUSAL_PAUSE = 4.0  # x hello_seconds: see Admission.pause
# Refusals of one address waiting at once (each a sleeping handler and its call, some KB).
# Beyond, refused at once: a client with more streams pending than this gets faster refusals
# (measured: at 256, a client keeping 480 refused streams open got 6x the refusals per second).
MAX_PAUSED_PER_ADDRESS = 1024


class Admission:
    """The bot streams of one referee before they become sessions: counted per connection and
    address, their hellos checked, their refusals paced."""

    def __init__(self, auth: Authenticator, limits: Limits, access: AccessLog) -> None:
        self.auth = auth
        self.limits = limits
        self.access = access
        self.streams: dict[str, int] = {}      # peer (one connection) -> live bot streams
        self.connections: dict[str, int] = {}  # peer address -> connections with bot streams
        self.paused: dict[str, int] = {}       # peer address -> refusals waiting (pause)
        rate = limits.refusals_per_second
        self.refusals = AddressBudget(rate, 4 * rate)  # refused hellos per address
        rate = limits.hellos_per_second
        self.checking = AddressGate()              # token checks at once, per address
        self.hellos = AddressBudget(rate, 5 * rate)    # hellos that reach Redis, per address
        self.peer_labels = PeerLabels()

    # -- streams per connection and address -----------------------------------------------------
    def enter(self, peer: str, address: str) -> tuple[str, str] | None:
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

    def leave(self, peer: str, address: str) -> None:
        n = self.streams.pop(peer, 1) - 1
        if n > 0:
            self.streams[peer] = n
            return
        c = self.connections.pop(address, 1) - 1
        if c > 0:
            self.connections[address] = c

    async def pause(self, address: str, factor: float = 1.0) -> None:
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

    # -- the hello ------------------------------------------------------------------------------
    async def hello(self, context: BotStream, address: str) -> pb.Hello | None:
        """The stream's first message, a hello whose syntax and token were checked (refused:
        aborts); None if the bot hung up before sending anything."""
        limits = self.limits
        try:
            first = await asyncio.wait_for(context.read(), limits.hello_seconds or None)
        except TimeoutError:
            metrics.LIMIT_HITS.labels("hello_deadline").inc()
            await self.refuse(context, address, "no_hello", grpc.StatusCode.DEADLINE_EXCEEDED,
                              f"no hello within {limits.hello_seconds:g}s: the first "
                              "BotMessage must carry hello (bot, token, capacity)")
        if first is END_OF_STREAM:
            return None
        if isinstance(first, Malformed):
            await self.refuse(context, address, "bad_hello", grpc.StatusCode.INVALID_ARGUMENT,
                              first.error[:200])
        if not first.HasField("hello"):
            await self.refuse(context, address, "bad_hello", grpc.StatusCode.INVALID_ARGUMENT,
                              "the first BotMessage must carry hello (bot, token, capacity)")
        hello = first.hello
        if is_house_name(hello.bot):  # whatever the token, even with --insecure
            metrics.FAULTS.labels("unauthenticated").inc()
            await self.refuse(context, address, "bad_name", grpc.StatusCode.PERMISSION_DENIED,
                              f"bot name {quote(hello.bot)} is reserved for the referee's own "
                              "house bots: no network bot may connect as one", bot=hello.bot)
        problem = check_hello(hello.bot, hello.token)
        if problem is not None:
            metrics.FAULTS.labels("unauthenticated").inc()
            reason, message = problem
            await self.refuse(context, address, reason, grpc.StatusCode.INVALID_ARGUMENT
                              if reason == "bad_name" else grpc.StatusCode.UNAUTHENTICATED,
                              message, bot=hello.bot)
        if not 1 <= hello.capacity <= MAX_CAPACITY:
            await self.refuse(context, address, "bad_capacity",
                              grpc.StatusCode.INVALID_ARGUMENT,
                              f"bad capacity {hello.capacity}: a bot process plays 1.."
                              f"{MAX_CAPACITY} games at once", bot=hello.bot)
        async with self.checking(address):  # no more than a few token checks at once
            over = await self._check_token(context, address, hello)
        if over is not None:
            await self.pause(address)
            await abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"too many {'refused ' if over == 'refusals' else ''}"
                        f"hellos from {address}: wait a few seconds")
        return hello

    async def refuse(self, context: BotStream, address: str, reason: str,
                     code: grpc.StatusCode, message: str, *, bot: str | None = None,
                     log_reason: str | None = None, spent: bool = False) -> NoReturn:
        """Refuse a hello: count it (per address, bounded labels), log it in the access log
        (at most once per window and reason; ``log_reason`` there if it says more than the
        metric's ``reason``), spend the address's refusal budget, abort with ``message``
        (which quotes bot-sent text only through :func:`shown`)."""
        metrics.BAD_HELLOS.labels(self.peer_labels(address), reason).inc()
        if not spent:
            self.refusals.spend(address)
        self.access.refused("a bot hello", log_reason or reason, context.peer(),
                            message.split(":")[0], bot=bot)
        await abort(context, code, message)

    async def _check_token(self, context: BotStream, address: str,
                           hello: pb.Hello) -> str | None:
        """The hello's token, checked within the address's budgets (refused: aborts). Over a
        budget, returns its name instead, nothing asked: the caller pauses and refuses after
        leaving the token-check gate (a refusal waiting in it would hold a slot for its whole
        pause, so honest hellos from the same address would queue behind a misconfigured
        bot)."""
        for budget, limit in ((self.refusals, "refusals"), (self.hellos, "hellos")):
            if not budget.allowed(address):  # a flood of hellos: Redis is not asked
                metrics.LIMIT_HITS.labels(limit).inc()
                metrics.BAD_HELLOS.labels(self.peer_labels(address), "rate_limited").inc()
                self.access.refused("a bot hello", f"{limit}_per_second", context.peer(),
                                    f"too many {limit} from {address}", bot=hello.bot)
                return limit
        self.hellos.spend(address, debt=True)
        try:
            ok = await self.auth.verify(hello.bot, hello.token)
        except Exception as err:
            self.access.refused("a bot hello", "auth_unavailable", context.peer(),
                                f"cannot check the token of bot {hello.bot!r}: "
                                f"{shown(str(err), 200)}", bot=hello.bot)
            await abort(context, grpc.StatusCode.UNAVAILABLE,
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
            await self.refuse(context, address, "wrong_token", grpc.StatusCode.UNAUTHENTICATED,
                              f"wrong token for bot {hello.bot!r}: "
                              + ("this token was issued to another bot (a token starts with "
                                 "its bot's name); a token plays only as the bot it was issued "
                                 "to" if other else
                                 "not the token `sueca-arena bots add` printed for it, or no "
                                 "bot of that name is registered"), bot=hello.bot,
                              log_reason="unknown_bot" if unknown else None, spent=True)
        return None
