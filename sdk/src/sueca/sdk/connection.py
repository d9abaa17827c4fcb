"""The stream to one referee address (:class:`Connection`): the hello, the read loop that turns
referee messages into work for the client, the write loop that batches answers, reconnection
with capped exponential back-off and jitter, and the drain.

A lost connection is retried for as long as the client runs; games that were running resume if
the referee still holds them (it re-sends their start and the open turn, and an answer computed
for the old stream is dropped: an answer belongs to the stream its turn came on).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, Protocol

import grpc

from sueca.codec import variant_from_pb
from sueca.sdk.bot import MatchInfo
from sueca.sdk.channels import ClientTLS, open_aio_channel
from sueca.sdk.game import Game
from sueca.sdk.summary import Summary
from sueca.v1 import sueca_pb2 as pb

__all__ = ["Connection", "Host", "AuthenticationError", "SessionStalled", "sdk_version",
           "WELCOME_SECONDS"]

log = logging.getLogger("sueca.bot")

CHANNEL_OPTIONS = [
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.max_receive_message_length", 16 * 1024 * 1024),
    # No bandwidth-delay probing: the referee's turns are small, and each probe is a PING the
    # referee must answer; with one game per connection that is ~1.8 extra writes per move
    # at the referee (strace, bench referee --sessions)
    ("grpc.http2.bdp_probe", 0),
]
FIRST_BACKOFF = 0.5
WELCOME_SECONDS = 10.0  # a hello unanswered this long: drop the stream and connect again
MAX_ACTIONS_PER_MESSAGE = 500   # well under the referee's 64 KiB message limit
_CONNECT = "/sueca.v1.BotService/Connect"
_DRAIN = pb.BotMessage(drain=True).SerializeToString()

# Refusals after which the referee keeps the turn open: the bot was asked once and has
# answered, so nothing more comes from it and the game runs out of time.
_TURN_KEPT = frozenset({"not_in_hand", "malformed"})
_STILL_OPEN = (" -- the turn stays open and this bot has answered it: the game will be lost on "
               "time (check what play() returns against obs.hand and obs.legal)")


def _identity(data: bytes) -> bytes:
    return data  # BotMessages are encoded here (answers by sueca.codec.action_bytes)


class SessionStalled(Exception):
    """The referee did not answer the hello in time (a hung referee, a port that only accepts);
    the connection loop drops the stream and connects again, as after any lost connection."""


class AuthenticationError(Exception):
    """A referee refused this bot's hello (wrong token, bad name or capacity)."""


def sdk_version() -> str:
    """The installed SDK's version (told to the referee in the hello): the ``sueca-sdk``
    distribution, or the whole ``sueca-arena`` that contains it; "0" when neither is installed
    (run from a source tree)."""
    # deferred: importlib.metadata adds a measured ~38 ms to start-up, needed only at the hello
    from importlib.metadata import PackageNotFoundError, version
    for dist in ("sueca-sdk", "sueca-arena"):
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    return "0"


class Host(Protocol):
    """What a :class:`Connection` needs of the client that owns it (:class:`sueca.sdk.client.
    Client`): who the bot is, how to reconnect, where its games' work goes."""

    factory: Callable[[], Any]
    name: str
    token: str
    version: str
    capacity: int
    tls: ClientTLS
    names: dict[str, str]
    max_backoff: float
    draining: bool
    drain_event: asyncio.Event
    summary: Summary

    # Any: a work item is a TurnRequest or an (event kind, message) pair (see Game.apply)
    def dispatch(self, conn: Connection, work: dict[str, list[Any]]) -> None: ...


class Connection:
    """The session with one referee address, reconnected for as long as the client runs."""

    def __init__(self, client: Host, address: str) -> None:
        self.client = client
        self.address = address
        self.games: dict[str, Game] = {}
        self.outbox: list[bytes] = []  # encoded BotMessage.actions fields
        self.wake = asyncio.Event()
        self.call: Any = None
        self.stream = 0  # which stream this is (counts streams opened): answers belong to one
        self.referee_id = ""
        self.task: asyncio.Task[None] | None = None
        self.drain_acked = asyncio.Event()  # the referee will place no new game here
        self.live = False  # a referee welcomed the current stream: there is someone to drain

    # -- the connection loop ------------------------------------------------------------------
    async def run(self) -> None:
        client = self.client
        backoff = FIRST_BACKOFF
        while not client.draining:
            welcomed = False
            try:
                welcomed = await self._session()
                reason = "the referee closed the stream"
            except AuthenticationError:
                raise
            except grpc.aio.AioRpcError as err:
                reason = f"{err.code().name}: {err.details()}"
            except SessionStalled as err:
                reason = str(err)
            except asyncio.CancelledError:
                raise
            except Exception as err:  # keep serving: log it and reconnect
                log.exception("session with %s failed", self.address)
                reason = f"{type(err).__name__}: {err}"
            if client.draining:
                break
            if welcomed:
                backoff = FIRST_BACKOFF
            delay = backoff / 2 + random.uniform(0, backoff / 2)
            if welcomed:
                log.warning("connection to %s lost (%s); reconnecting in %.1fs", self.address,
                            reason, delay)
            else:
                log.warning("cannot connect to %s (%s); retrying in %.1fs", self.address,
                            reason, delay)
            backoff = min(backoff * 2, client.max_backoff)
            try:
                await asyncio.wait_for(client.drain_event.wait(), delay)
            except TimeoutError:
                pass

    async def _hello(self, call: Any) -> Any:
        """Say hello and read the referee's first answer (a welcome, or a refusal)."""
        client = self.client
        await call.write(pb.BotMessage(hello=pb.Hello(
            bot=client.name, token=client.token, sdk_version=client.version,
            capacity=client.capacity)).SerializeToString())
        try:
            return await call.read()
        except grpc.aio.AioRpcError as err:
            if err.code() in (grpc.StatusCode.UNAUTHENTICATED,
                              grpc.StatusCode.INVALID_ARGUMENT):
                raise AuthenticationError(
                    f"referee {self.address} refused bot {client.name!r}: "
                    f"{err.details()}") from None
            raise

    async def _session(self) -> bool:
        client = self.client
        async with open_aio_channel(self.address, client.tls, CHANNEL_OPTIONS,
                                    client.names.get(self.address)) as channel:
            call: grpc.aio.StreamStreamCall[bytes, pb.RefereeMessage] = channel.stream_stream(
                _CONNECT, request_serializer=_identity,
                response_deserializer=pb.RefereeMessage.FromString)()
            self.call = call
            self._new_stream()
            self.drain_acked.clear()
            try:  # a referee (or a port) that never answers must not hold the bot for ever
                first = await asyncio.wait_for(self._hello(call), WELCOME_SECONDS)
            except TimeoutError:
                call.cancel()
                self.call = None
                raise SessionStalled(f"no answer to the hello within {WELCOME_SECONDS:.0f}s") \
                    from None
            if not isinstance(first, pb.RefereeMessage):  # grpc.aio.EOF: closed at once
                return False
            if first.HasField("welcome"):
                self.live = True
                if self.referee_id and first.welcome.referee_id != self.referee_id:
                    self.games.clear()  # another referee process: the old games are gone
                self.referee_id = first.welcome.referee_id
                log.info("connected to %s (referee %s) as %r, capacity %d", self.address,
                         self.referee_id, client.name, client.capacity)
            else:
                self._handle(first)
            writer = asyncio.create_task(self._write_loop(call))
            try:
                if client.draining:
                    self._queue_drain()
                while True:
                    msg = await call.read()
                    if not isinstance(msg, pb.RefereeMessage):  # grpc.aio.EOF
                        break
                    self._handle(msg)
            finally:
                writer.cancel()
                self.call = None
                self.live = False
            return True

    async def _write_loop(self, call: Any) -> None:
        wake = self.wake
        try:
            while True:
                await wake.wait()
                wake.clear()
                while self.outbox:
                    actions = self.outbox[:MAX_ACTIONS_PER_MESSAGE]
                    del self.outbox[:MAX_ACTIONS_PER_MESSAGE]
                    await call.write(b"".join(actions))
        except asyncio.CancelledError:
            raise
        except Exception as err:  # the stream broke; the reader sees it too and reconnects
            log.debug("write to %s failed: %s", self.address, err)

    def _new_stream(self) -> None:
        """Forget every answer of the streams before: an answer belongs to the stream its turn
        came on. The referee re-sends each open turn on the new stream (same request id), so an
        old answer sent there as well would answer that turn twice, or answer one that is no
        longer open. Jobs still running for an old stream are dropped when they finish
        (:meth:`send` compares stream numbers); turns of an old stream waiting in a game's
        backlog are dropped now, its events (hooks) kept."""
        self.stream += 1
        self.outbox.clear()
        for game in self.games.values():
            if game.backlog:
                game.backlog = [item for item in game.backlog if item.__class__ is tuple]

    def send(self, actions: Sequence[bytes], stream: int) -> None:
        """Queue answers computed for turns of ``stream``: dropped if that stream is gone."""
        if actions and self.call is not None and stream == self.stream:
            self.outbox.extend(actions)
            self.wake.set()

    def _queue_drain(self) -> None:
        """Send the drain request through the write loop: grpc.aio allows one write at a time
        on a call, and the loop may be writing answers right now. A serialized BotMessage
        concatenated with others merges into one, so it may share a message with answers."""
        self.outbox.append(_DRAIN)
        self.wake.set()

    async def drain(self) -> None:
        """Tell the referee to give no new games, wait for ours to end, close the stream. A
        stream no referee has welcomed yet (still connecting) has nothing to drain: a message
        queued on it would never be sent, and the wait for it would last the whole timeout."""
        call = self.call
        if call is None or not self.live:
            return
        if call is not None:
            self._queue_drain()
            try:  # the acknowledgement follows the start of every game placed before it
                await asyncio.wait_for(self.drain_acked.wait(), 5.0)
            except TimeoutError:
                pass
        while self.games and self.call is not None:
            await asyncio.sleep(0.05)
        call = self.call
        if call is not None:
            while self.outbox:
                await asyncio.sleep(0.01)
            try:
                await call.done_writing()
            except Exception:
                pass

    # -- incoming messages --------------------------------------------------------------------
    def _handle(self, msg: pb.RefereeMessage) -> None:
        if msg.HasField("welcome") and msg.welcome.capacity == 0:
            self.drain_acked.set()
        for err in msg.errors:
            log.warning("referee %s refused an answer in game %r (request %d): %s: %s%s",
                        self.address, err.game_id, err.request_id, err.code, err.message,
                        _STILL_OPEN if err.code in _TURN_KEPT and err.game_id in self.games
                        else "", extra={"game_id": err.game_id})
        games = self.games
        work: dict[str, list[Any]] = {}
        for ev in msg.events:
            kind = ev.WhichOneof("event")
            gid = ev.game_id
            if kind == "match_start":
                if gid in games:
                    continue  # a resumed game after a reconnect: this process already plays it
                s = ev.match_start
                variant = variant_from_pb(s.variant)
                # the referee names no match (that would link the seats of one match): the
                # bot's match id is this seat's opaque game id
                info = MatchInfo(gid, s.seat, tuple(s.seats), variant, s.bot_seed)
                try:
                    bot = self.client.factory()
                except Exception:
                    log.exception("cannot create a bot for game %s", gid, extra={"game_id": gid})
                    continue
                # this game's share of its match: the arena counts a match once for a bot,
                # however many of its seats the bot holds (Summary)
                held = info.seats.count(info.seats[s.seat]) if s.seat < len(info.seats) else 1
                share = Fraction(1, held)
                games[gid] = Game(gid, bot, variant, seat=s.seat, share=share)
                work.setdefault(gid, []).append(("start", info))
            elif gid in games:
                if kind == "trick_end":
                    if games[gid].on_trick is not None:
                        work.setdefault(gid, []).append(("trick", ev.trick_end))
                elif kind == "deal_end":
                    self.client.summary.deal_end(games[gid].seat, ev.deal_end)
                    if games[gid].on_deal is not None:
                        work.setdefault(gid, []).append(("deal", ev.deal_end))
                elif kind == "match_end":
                    if not games[gid].summarised:
                        games[gid].summarised = True
                        self.client.summary.match_end(games[gid].seat, ev.match_end,
                                                      games[gid].share)
                    work.setdefault(gid, []).append(("end", ev.match_end))
        for turn in msg.turns:
            gid = turn.game_id
            if gid in games:
                work.setdefault(gid, []).append(turn)
            else:
                log.warning("turn request for unknown game %r (no match start seen); ignored", gid,
                            extra={"game_id": gid})
        if work:
            self.client.dispatch(self, work)
