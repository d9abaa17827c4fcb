"""Connect a bot to one or more referees and play every game they give it.

>>> from sueca.sdk.client import run
>>> run(MyBot, "127.0.0.1:50051", token="mybot.Xy...", capacity=8)   # blocks; Ctrl-C drains

One bidirectional stream per referee address; each referee multiplexes every game it seats this
bot in over that stream, and this module keeps one :class:`~sueca.sdk.bot.Bot` instance per game.
Synchronous bots run in a thread pool (a batch of turns per pool job, so a fast bot does not pay
a thread hop per card); bots whose ``play`` is ``async def`` are awaited in the event loop.
Answers leave in batches: everything ready in one event-loop tick goes in one message.

A bot whose ``play`` or ``redeal`` raises (or returns something that is not a card, or a card it
does not hold) resigns that game: its traceback (or the bad answer) is logged here, and the
referee is sent ``Resign`` with the exception's first line (or the answer quoted), so the match
ends at once as ``bot_error`` instead of waiting out the seat's clock.

A lost connection is retried with capped exponential back-off and jitter; games that were
running resume if the referee still holds them (it re-sends their start and the open turn).
SIGINT/SIGTERM drain: the referees are told to give no new games, running games finish, then
the process exits; a second signal exits at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import logging
import math
import os
import random
import signal
import socket
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from sueca.codec import (
    action_bytes,
    deal_result_from_pb,
    end_from_pb,
    game_id_field,
    resign_bytes,
    trick_from_pb,
    variant_from_pb,
)
from sueca.engine import Card, CardError, End, card
from sueca.sdk.bot import Bot, Clock, MatchInfo
from sueca.sdk.channels import PLAINTEXT, ClientTLS, open_aio_channel
from sueca.sdk.logs import bind
from sueca.sdk.net_observation import Observation
from sueca.sdk.summary import Summary
from sueca.v1 import sueca_pb2 as pb

__all__ = ["run", "serve", "resolve", "AuthenticationError", "sdk_version"]

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
BATCH_BUDGET = 0.002            # seconds of bot work per pool job before a batch is split
INLINE_BELOW = 0.0001           # a bot this fast (CPU seconds per call) runs in the event loop
BLOCKING = 0.002                # ...unless its calls also take this long (sleeps, I/O) 3 times
PROBE_EVERY = 5.0               # seconds between inline re-measurements of a pooled bot
RESOLVE_EVERY = 30.0            # seconds between DNS look-ups of a multi-address name
IDLE_GAME_SECONDS = 1800.0      # a game silent this long (its referee is gone) is forgotten
_PLAY, _REDEAL = pb.TurnRequest.PLAY, pb.TurnRequest.REDEAL
_CONNECT = "/sueca.v1.BotService/Connect"
_DRAIN = pb.BotMessage(drain=True).SerializeToString()


# A match's end by this seat's fault, as the bot's log explains it
_OWN_FAULT = {
    "timeout": "no answer within the move limit plus the seat's time bank (see Bot.clock)",
    "disconnect": "its connection was gone for longer than the referee's grace period",
    "bot_error": "its code raised (or returned no card it holds) and this SDK resigned the game",
}
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
    from importlib.metadata import PackageNotFoundError, version
    for dist in ("sueca-sdk", "sueca-arena"):
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    return "0"


def resolve(server: str) -> list[str]:
    """``host:port[,host:port...]`` to the addresses to keep a session with. A name that
    resolves to several addresses (a headless service, round-robin DNS) gives one per address,
    so every replica behind it gets a session; literals and ``localhost`` are kept as given.
    gRPC's ``dns:///host:port`` spelling is read as ``host:port`` (it means the same)."""
    out: list[str] = []
    for item in map(_plain, server.split(",")):
        if not item:
            continue
        if item.startswith("//"):
            raise ValueError(f"bad server address 'dns:{item}': a DNS authority is not "
                             "supported, give dns:///host:port or host:port")
        host, sep, port = item.rpartition(":")
        if not sep or not port.isdigit():
            raise ValueError(f"bad server address {item!r}: expected host:port")
        host = host.strip("[]")
        if host in ("localhost", "") or _is_ip(host):
            out.append(item)
            continue
        try:
            infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
        except OSError:
            out.append(item)  # not resolvable now: gRPC will retry and report it
            continue
        v4 = sorted({i[4][0] for i in infos if i[0] == socket.AF_INET})
        v6 = sorted({i[4][0] for i in infos if i[0] == socket.AF_INET6})
        addrs = v4 or v6
        if len(addrs) <= 1:
            out.append(item)
        else:
            out.extend(f"[{a}]:{port}" if ":" in str(a) else f"{a}:{port}" for a in addrs)
    seen: set[str] = set()
    return [a for a in out if not (a in seen or seen.add(a))]  # type: ignore[func-returns-value]


def _is_ip(host: str) -> bool:
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
            return True
        except OSError:
            pass
    return False


def _plain(item: str) -> str:
    """One ``--server`` item without gRPC's ``dns:///`` (or ``dns:``) prefix: same meaning."""
    return item.strip().removeprefix("dns:///").removeprefix("dns:")


def _dns_name(item: str) -> str | None:
    """The host of one ``host:port`` item when it is a name DNS may expand (not an IP literal,
    not ``localhost``), else None."""
    host = _plain(item).rpartition(":")[0].strip("[]")
    return host if host and host != "localhost" and not _is_ip(host) else None


def _is_default(fn: Any) -> bool:
    return fn is None or getattr(fn, "default_hook", False)


class Game:
    """One seat of one match, as this process plays it: one Bot instance."""

    __slots__ = ("game_id", "gid", "bot", "variant", "seat", "is_async", "busy", "backlog",
                 "ended", "last_seen", "failed", "on_trick", "on_deal", "on_end", "moves",
                 "move_seconds", "resigned", "summarised")

    def __init__(self, game_id: str, bot: Any, variant: Any, seat: int = 0) -> None:
        self.game_id = game_id
        self.seat = seat
        # turns answered, and their time from arrival to answer (as the bot's clock counts
        # it), not yet added to the client's summary (see Client._done)
        self.moves = 0
        self.move_seconds = 0.0
        self.resigned = False    # this process resigned the game (the bot raised or misplayed)
        self.summarised = False  # its end is in the client's summary
        self.gid = game_id_field(game_id)
        self.bot = bot
        self.variant = variant
        self.is_async = inspect.iscoroutinefunction(getattr(bot, "play", None))
        self.busy = False
        self.backlog: list[Any] = []
        self.ended = False
        self.last_seen = time.monotonic()
        self.failed = False
        hook = getattr(bot, "on_trick_end", None)
        self.on_trick = None if _is_default(hook) else hook
        hook = getattr(bot, "on_deal_end", None)
        self.on_deal = None if _is_default(hook) else hook
        hook = getattr(bot, "on_match_end", None)
        self.on_end = None if _is_default(hook) else hook

    # Items: ("start", MatchInfo) | ("trick", pb.Trick) | ("deal", pb.DealEnd)
    #        | ("end", pb.MatchEnd) | pb.TurnRequest
    # apply (synchronous bots, in a pool thread or the event loop) and apply_async (bots whose
    # play, redeal or hooks are coroutines) differ only in awaiting: both ask the bot through
    # _ask and encode its answer with _answer.
    def apply(self, item: Any) -> bytes | None:
        """Run one item against the bot (synchronous bots)."""
        if item.__class__ is tuple:
            kind, value = item
            try:
                self._hook(kind, value)
            except Exception:
                self._hook_failed(kind)
            return None
        if self.ended:
            return None
        try:
            obs = Observation(item.observation, self.variant)
            return self._answer(item, obs, self._ask(item, obs))
        except Exception as err:
            return self._failed(item, err)
        finally:
            self.moves += 1
            self.move_seconds += time.monotonic() - self.last_seen

    async def apply_async(self, item: Any) -> bytes | None:
        """The same for a bot whose ``play`` (and maybe hooks) are coroutines."""
        if item.__class__ is tuple:
            kind, value = item
            try:
                result = self._hook(kind, value)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                self._hook_failed(kind)
            return None
        if self.ended:
            return None
        try:
            obs = Observation(item.observation, self.variant)
            answer = self._ask(item, obs)
            if inspect.isawaitable(answer):
                answer = await answer
            return self._answer(item, obs, answer)
        except Exception as err:
            return self._failed(item, err)
        finally:
            self.moves += 1
            self.move_seconds += time.monotonic() - self.last_seen

    def _ask(self, turn: pb.TurnRequest, obs: Observation) -> Any:
        """The bot's answer to a turn (a coroutine for an async bot)."""
        bot = self.bot  # last_seen: when the message carrying this turn arrived (dispatch)
        bot.clock = Clock(turn.move_ms / 1000, turn.bank_ms / 1000, self.last_seen)
        return bot.redeal(obs) if turn.kind == _REDEAL else bot.play(obs)

    def _answer(self, turn: pb.TurnRequest, obs: Observation, value: Any) -> bytes | None:
        """The bot's answer as an encoded Action. Not a card, or a card not in the bot's hand:
        logged, and the game resigned. The referee would refuse such a card and keep the turn
        open, and the bot, having answered, would lose the game on time; resigning ends it
        within a round trip, with the card quoted as the reason. A held card that breaks suit
        goes out: it is a renúncia by the rules (or asked again in a lenient match), exactly as
        in self-play."""
        if turn.kind == _REDEAL:
            return action_bytes(self.gid, turn.request_id, redeal=bool(value))
        if value.__class__ is Card:
            c = value
        else:
            try:
                c = card(value)
            except CardError as err:
                return self._resign(turn, f"play returned {value!r:.80}, which is not a card "
                                          f"({err})")
        if c not in obs.legal and c not in obs.hand:
            return self._resign(turn, f"play returned {c}, which is not in its hand")
        return action_bytes(self.gid, turn.request_id, c)

    def _resign(self, turn: pb.TurnRequest, why: str) -> bytes:
        """Log why the bot's answer cannot go out, and resign the game with that reason."""
        log.error("bot %s: %s; resigning game %s", type(self.bot).__name__, why,
                  self.game_id, extra={"game_id": self.game_id})
        self.ended = self.resigned = True
        return resign_bytes(self.gid, turn.request_id, why)

    def _hook(self, kind: str, value: Any) -> Any:
        """Call the bot's hook for one event item; returns what it returned (a coroutine for
        an async hook, which :meth:`apply_async` awaits)."""
        if kind == "start":
            return self.bot.start(value)
        if kind == "trick":
            return None if self.on_trick is None else self.on_trick(trick_from_pb(value))
        if kind == "deal":
            return None if self.on_deal is None else self.on_deal(deal_result_from_pb(value))
        if kind == "end":
            self.ended = True
            self._lost_by_fault(value)
            return None if self.on_end is None else self.on_end(*_end_args(value))
        return None

    def _lost_by_fault(self, end: pb.MatchEnd) -> None:
        """Say so when the match ended by this seat's fault (timeout, disconnect, bot error): the
        referee's last word on it (a late answer, if any, is refused as 'late')."""
        why = _OWN_FAULT.get(end.end)
        info = getattr(self.bot, "info", None)
        if why is None or info is None or end.fault_seat != info.seat:
            return
        log.warning("game %s ended by %s of this bot (seat %d): %s", self.game_id, end.end,
                    info.seat, why, extra={"game_id": self.game_id})

    def _hook_failed(self, kind: str) -> None:
        log.exception("bot %s raised in its %s hook (game %s)", type(self.bot).__name__,
                      kind, self.game_id, extra={"game_id": self.game_id})

    def _failed(self, turn: pb.TurnRequest, err: Exception) -> bytes:
        """The bot raised answering ``turn`` (called in the ``except`` block): log the traceback
        here, and resign the game with the exception's first line, so the referee ends the
        match at once as a bot error instead of waiting out the seat's clock."""
        log.exception("bot %s raised in %s (game %s); resigning the game",
                      type(self.bot).__name__, "redeal" if turn.kind == _REDEAL else "play",
                      self.game_id, extra={"game_id": self.game_id})
        self.ended = self.resigned = True
        return resign_bytes(self.gid, turn.request_id, first_line(err))


def first_line(err: BaseException) -> str:
    """``ValueError: bad card`` for an exception: its type and the first line of its message
    (what a resigning bot tells the referee; cut by :func:`sueca.codec.resign_bytes`)."""
    text = str(err).strip().partition("\n")[0]
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _end_args(m: pb.MatchEnd) -> tuple[tuple[int, int], int | None, End]:
    gp = (m.game_points[0], m.game_points[1]) if len(m.game_points) == 2 else (0, 0)
    return gp, None if m.winner < 0 else m.winner, end_from_pb(m.end)


class Connection:
    """The session with one referee address, reconnected for as long as the client runs."""

    def __init__(self, client: Client, address: str) -> None:
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
                games[gid] = Game(gid, bot, variant, s.seat)
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
                        self.client.summary.match_end(games[gid].seat, ev.match_end)
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


class Client:
    """Sessions to every referee address, a pool for synchronous bots, and the drain."""

    def __init__(self, factory: Callable[[], Any], server: str, token: str, capacity: int,
                 name: str | None, threads: int | None, max_backoff: float,
                 tls: ClientTLS = PLAINTEXT) -> None:
        if not token:
            raise AuthenticationError("no token: pass --token or set SUECA_TOKEN "
                                      "(`sueca-arena bots add NAME` prints one)")
        self.factory = factory
        self.server = server
        self.token = token
        self.name = name or token.rpartition(".")[0] or token  # bot names may hold dots
        if capacity < 1:
            raise ValueError(f"bad capacity {capacity}: at least 1")
        self.capacity = capacity
        # threads None: a pool, but a bot that answers in microseconds runs in the event loop
        # (a thread hop costs more than its move); 0: always in the loop; N: always the pool.
        self.adaptive = threads is None
        self.threads = min(capacity, 8) if threads is None else threads
        self.pool = (concurrent.futures.ThreadPoolExecutor(self.threads, "bot")
                     if self.threads > 0 else None)
        self.max_backoff = max_backoff
        self.tls = tls
        # address -> the host name it was resolved from: under TLS the referee's certificate is
        # checked against that name, not against the IP the SDK dialled
        self.names: dict[str, str] = {}
        self.version = sdk_version()
        self.connections: dict[str, Connection] = {}
        self.draining = False
        self.drain_event = asyncio.Event()
        # CPU seconds per bot call, measured when run in the event loop (a pool thread's clock
        # also counts its waits for the GIL); with ``strikes`` (calls that block: sleeps, I/O)
        # it decides inline or pool, and sizes pool jobs.
        self.avg_turn = 0.0
        self.strikes = 0
        self.pooled = False
        self.probe_at = 0.0
        self.summary = Summary()  # logged every summary_every seconds, and at the end
        from sueca.sdk.settings import current
        self.summary_every = current().bot_summary_seconds

    # -- running work -------------------------------------------------------------------------
    def dispatch(self, conn: Connection, work: dict[str, list[Any]]) -> None:
        """Run ``work`` (items by game id, all of the connection's current stream)."""
        games = conn.games
        stream = conn.stream
        sync_jobs: list[tuple[Game, list[Any]]] = []
        for gid, items in work.items():
            game = games[gid]
            game.last_seen = time.monotonic()
            if game.busy:
                game.backlog.extend(items)
                continue
            game.busy = True
            if game.is_async:
                asyncio.get_running_loop().create_task(self._run_async(conn, stream, game,
                                                                       items))
            else:
                sync_jobs.append((game, items))
        if not sync_jobs:
            return
        if self.pool is None or (self.adaptive and self._inline()):
            self._done(conn, stream, sync_jobs, self._run_group(sync_jobs, measure=True))
            return
        n_turns = sum(len(items) for _, items in sync_jobs)
        groups = max(1, min(self.threads, len(sync_jobs),
                            math.ceil(n_turns * self.avg_turn / BATCH_BUDGET)))
        loop = asyncio.get_running_loop()
        for k in range(groups):
            part = sync_jobs[k::groups]
            fut = loop.run_in_executor(self.pool, self._run_group, part)
            fut.add_done_callback(functools.partial(self._group_done, conn, stream, part))

    def _group_done(self, conn: Connection, stream: int, jobs: list[tuple[Game, list[Any]]],
                    fut: asyncio.Future[list[bytes]]) -> None:
        self._done(conn, stream, jobs, fut.result())

    def _inline(self) -> bool:
        """Run this batch in the event loop? Yes while the bot is fast; a pooled bot is
        re-measured inline now and then, so a slow start does not banish it for good."""
        if not self.pooled:
            return True
        if time.monotonic() >= self.probe_at:
            self.pooled = False  # judged afresh from this batch on
            self.avg_turn = 0.0
            self.strikes = 0
            return True
        return False

    def _run_group(self, jobs: list[tuple[Game, list[Any]]], measure: bool = False) -> list[bytes]:
        t0 = time.perf_counter()
        c0 = time.thread_time()
        out = []
        n = 0
        for game, items in jobs:
            for item in items:
                n += 1
                action = game.apply(item)
                if action is not None:
                    out.append(action)
        if measure and n:
            # CPU time, not wall time: on a busy machine the OS preempts this process, and that
            # says nothing about the bot; a bot that sleeps or waits on I/O shows as strikes.
            per = (time.thread_time() - c0) / n
            self.avg_turn += min(1.0, 0.05 * n) * (per - self.avg_turn)
            self.strikes = self.strikes + 1 if (time.perf_counter() - t0) / n > BLOCKING else 0
            if (self.avg_turn >= INLINE_BELOW or self.strikes >= 3) and not self.pooled:
                self.pooled = True
                self.probe_at = time.monotonic() + PROBE_EVERY
                log.debug("bot calls take %.0f us of CPU (%d blocking): thread pool",
                          self.avg_turn * 1e6, self.strikes)
        return out

    def _done(self, conn: Connection, stream: int, jobs: list[tuple[Game, list[Any]]],
              actions: list[bytes]) -> None:
        conn.send(actions, stream)
        again: dict[str, list[Any]] = {}
        for game, _ in jobs:
            if game.moves:  # in the event loop, the game idle: no thread adds to it meanwhile
                self.summary.answered(game.moves, game.move_seconds)
                game.moves, game.move_seconds = 0, 0.0
            if game.resigned and not game.summarised:
                # counted now: the game is forgotten below, before the referee's match end
                # (a bot error of this seat, lost) comes back for it
                game.summarised = True
                self.summary.resigned()
            game.busy = False
            if game.backlog:
                again[game.game_id] = game.backlog
                game.backlog = []
            elif game.ended:
                conn.games.pop(game.game_id, None)
        if again:
            self.dispatch(conn, again)

    async def _run_async(self, conn: Connection, stream: int, game: Game,
                         items: list[Any]) -> None:
        out = []
        for item in items:
            action = await game.apply_async(item)
            if action is not None:
                out.append(action)
        self._done(conn, stream, [(game, items)], out)

    # -- lifecycle ----------------------------------------------------------------------------
    async def run(self) -> None:
        addresses = self._resolve()
        if not addresses:
            raise ValueError(f"no server address in {self.server!r}")
        for address in addresses:
            self._open(address)
        expanding = any(_dns_name(item) for item in self.server.split(","))
        sweeper = asyncio.create_task(self._housekeeping(expanding))
        reporter = asyncio.create_task(self._report())
        drain_wait = asyncio.ensure_future(self.drain_event.wait())
        try:
            while not self.draining:
                tasks = {c.task for c in self.connections.values() if c.task is not None}
                done, _ = await asyncio.wait(tasks | {drain_wait},
                                             return_when=asyncio.FIRST_COMPLETED)
                for t in done:
                    if t is not drain_wait and not t.cancelled() and t.exception() is not None:
                        raise t.exception()  # type: ignore[misc]
        finally:
            sweeper.cancel()
            reporter.cancel()
            drain_wait.cancel()
            if not self.draining:
                for c in self.connections.values():
                    if c.task is not None:
                        c.task.cancel()

    def _resolve(self) -> list[str]:
        """:func:`resolve` of ``server``, noting the name each resolved address came from."""
        found: list[str] = []
        for item in self.server.split(","):
            if not item.strip():
                continue
            host = _dns_name(item)
            for address in resolve(item):
                if host and address != _plain(item):
                    self.names[address] = host
                if address not in found:
                    found.append(address)
        return found

    def _open(self, address: str) -> None:
        conn = Connection(self, address)
        conn.task = asyncio.get_running_loop().create_task(conn.run(), name=f"session {address}")
        self.connections[address] = conn

    async def _report(self) -> None:
        """Log the summary line every ``summary_every`` seconds (``SUECA_BOT_SUMMARY_SECONDS``)."""
        while True:
            await asyncio.sleep(self.summary_every)
            log.info("%s", self.summary.line())

    async def _housekeeping(self, expanding: bool) -> None:
        last_resolve = time.monotonic()
        while True:
            await asyncio.sleep(5.0)
            now = time.monotonic()
            for conn in self.connections.values():
                for gid, game in list(conn.games.items()):
                    if not game.busy and now - game.last_seen > IDLE_GAME_SECONDS:
                        del conn.games[gid]
            if expanding and now - last_resolve > RESOLVE_EVERY:
                last_resolve = now
                try:
                    found = await asyncio.to_thread(self._resolve)
                except Exception:
                    continue
                for address in found:
                    if address not in self.connections:
                        log.info("new referee address %s", address)
                        self._open(address)

    async def drain(self, timeout: float) -> None:
        if self.draining:
            return
        self.draining = True
        self.drain_event.set()
        running = sum(len(c.games) for c in self.connections.values())
        log.info("draining: no new games; waiting for %d running game(s) (up to %.0fs)",
                 running, timeout)
        try:
            await asyncio.wait_for(asyncio.gather(*(c.drain() for c in
                                                    self.connections.values())), timeout)
        except TimeoutError:
            log.warning("drain timed out; closing with games still running")
        for c in self.connections.values():
            if c.task is not None:
                c.task.cancel()
        await asyncio.gather(*(c.task for c in self.connections.values() if c.task),
                             return_exceptions=True)
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)


async def serve(bot_factory: Callable[[], Bot], server: str, token: str, capacity: int = 1, *,
                name: str | None = None, threads: int | None = None, max_backoff: float = 30.0,
                drain_timeout: float = 60.0, stop: asyncio.Event | None = None,
                tls: ClientTLS = PLAINTEXT) -> None:
    """The coroutine behind :func:`run`: serve until ``stop`` is set (then drain) or a
    referee refuses the token (:class:`AuthenticationError`)."""
    client = Client(bot_factory, server, token, capacity, name, threads, max_backoff, tls)
    bind(bot=client.name)  # one bot per process: every line of this task and its tasks names it
    main = asyncio.create_task(client.run())
    waits: list[asyncio.Task[Any]] = [main]
    if stop is not None:
        waits.append(asyncio.create_task(stop.wait()))
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if main.done():
            main.result()  # raises AuthenticationError and the like
        await client.drain(drain_timeout)
        log.info("%s", client.summary.line())
    finally:
        for t in waits:
            t.cancel()
        if client.pool is not None:
            client.pool.shutdown(wait=False, cancel_futures=True)


def run(bot_factory: Callable[[], Bot], server: str, token: str, capacity: int = 1, *,
        name: str | None = None, threads: int | None = None, max_backoff: float = 30.0,
        drain_timeout: float = 60.0, tls: ClientTLS = PLAINTEXT) -> int:
    """Serve games until SIGINT/SIGTERM, then drain. Returns an exit code: 0 after a clean
    drain, 2 when a referee refused the token.

    ``bot_factory`` makes one bot per game (a :class:`~sueca.sdk.bot.Bot` subclass works);
    ``server`` is ``host:port`` or a comma list; ``capacity`` is how many games this process
    plays at once (per referee); ``threads`` sizes the pool for synchronous bots (0 runs them in
    the event loop: fastest for bots that take microseconds); the bot's name is the part of the
    token before its last '.' (names may hold dots), unless ``name`` is given; ``tls``
    (:func:`sueca.sdk.channels.client_tls`) connects with TLS instead of plaintext.
    """

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        signals = (signal.SIGINT, signal.SIGTERM)
        count = 0

        def on_signal() -> None:
            nonlocal count
            count += 1
            if count > 1:
                # at once, as promised: no drain, and no asyncio cancellation traceback (raising
                # SystemExit here unwinds every task of the loop, each printing its own)
                log.warning("second signal: exiting now")
                logging.shutdown()
                os._exit(130)
            stop.set()

        for sig in signals:
            try:
                loop.add_signal_handler(sig, on_signal)
            except (NotImplementedError, RuntimeError):
                pass
        try:
            await serve(bot_factory, server, token, capacity, name=name, threads=threads,
                        max_backoff=max_backoff, drain_timeout=drain_timeout, stop=stop,
                        tls=tls)
        except AuthenticationError as err:
            log.error("%s", err)
            return 2
        log.info("stopped")
        return 0

    return asyncio.run(main())
