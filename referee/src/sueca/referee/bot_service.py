"""``BotService.Connect``: one bot stream, from its admission (:mod:`.admission`) to the end
of its session: the welcome, the write loop the session feeds, and the read loop that hands
every answer to the session hub, within the bot's read budgets.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import grpc

from sueca import codec as conv
from sueca.referee import metrics
from sueca.referee.admission import STREAM_REFUSAL_PAUSE, Admission
from sueca.referee.bot_wire import END_OF_STREAM, Gone, Malformed, abort, bot_service_handler
from sueca.referee.limits import SHOWN_CHARS, AccessLog, Limits, Summary, peer_address, shown
from sueca.referee.sessions import Session, SessionHub
from sueca.v1 import sueca_pb2 as pb

if TYPE_CHECKING:
    from sueca.referee.bot_wire import BotStream

__all__ = ["BotService"]

log = logging.getLogger("sueca.referee")

SESSION_LOG_RATE, SESSION_LOG_BURST = 5.0, 100  # bot connected/disconnected lines per second
_READ_THROTTLE = metrics.LIMIT_HITS.labels("read_throttle")


class BotService:
    """The bot streams of one referee: each admitted, then a session of ``hub`` until either
    side ends it. ``accepting`` false (shutting down): hellos are refused UNAVAILABLE."""

    def __init__(self, hub: SessionHub, admission: Admission, *, limits: Limits,
                 access: AccessLog, public_id: str) -> None:
        self.hub = hub
        self.admission = admission
        self.limits = limits
        self.access = access
        self.public_id = public_id  # what bots are told in their welcome: names no host
        self.accepting = True
        # a bot reconnecting in a loop must not flood the log: a few lines a second
        self._sessions_log = Summary(log, SESSION_LOG_RATE, SESSION_LOG_BURST)

    def handler(self) -> grpc.GenericRpcHandler:
        return bot_service_handler(self.Connect)

    async def Connect(self, request_iterator: AsyncIterator[pb.BotMessage | Malformed],
                      context: BotStream) -> None:
        """One bot stream: hello (within ``hello_seconds``, checked by syntax before Redis is
        asked), then the session until either side ends it. Refusals before the hello is
        accepted cost one metric and, at most once per window, one log line."""
        peer = context.peer() or ""
        address = peer_address(peer)
        admission = self.admission
        refused = admission.enter(peer, address)
        if refused is not None:
            limit, message = refused
            metrics.LIMIT_HITS.labels(limit).inc()
            self.access.refused("a bot stream", limit, peer, message)
            # no SDK client opens more than one stream per connection: this one waits longer
            await admission.pause(address, STREAM_REFUSAL_PAUSE)
            try:
                await abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, message)
            except Gone:
                return
        # counted until gRPC is done with the stream, not when this handler returns: a stream
        # cut off while its bot does not read lingers in the transport until the bot reads
        # or hangs up, and must keep counting against the limits meanwhile
        # (the stubs declare the callback a class, not a Protocol: no function matches it)
        context.add_done_callback(lambda _: admission.leave(peer, address))  # type: ignore[arg-type]
        try:
            hello = await admission.hello(context, address)
            if hello is not None:
                await self._session(context, hello, peer)
        except Gone:
            pass

    async def _session(self, context: BotStream, hello: pb.Hello, peer: str) -> None:
        """The admitted bot's session: welcomed, written to and read from until it ends."""
        limits = self.limits
        if not self.accepting:
            self.access.refused("a bot hello", "shutting_down", context.peer(),
                                "the referee is shutting down", bot=hello.bot)
            await abort(context, grpc.StatusCode.UNAVAILABLE, "the referee is shutting down")
        session = Session(hello.bot, hello.capacity, peer=peer,
                          sdk_version=hello.sdk_version[:SHOWN_CHARS], limits=limits)
        if not self.hub.add(session, limits.sessions_per_bot):
            metrics.LIMIT_HITS.labels("sessions_per_bot").inc()
            self.access.refused("a session", "sessions_per_bot", peer,
                                f"bot {session.bot!r} has {limits.sessions_per_bot} already",
                                bot=session.bot)
            await abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
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
            await abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
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
                if msg is END_OF_STREAM:
                    break
                session.errors_in_message = session.faults_in_message = 0
                if isinstance(msg, Malformed):
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
