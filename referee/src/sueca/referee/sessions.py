"""Bot sessions: one per bot stream, multiplexing every game that bot plays on this referee.

A :class:`Session` batches what it owes its bot: turn requests, game events and action errors
are appended to lists, and one writer coroutine per stream sends everything gathered so far as
one ``RefereeMessage``. Appending wakes the writer, but it runs only after the tasks already
ready in this event-loop tick, so when a bot's batch of answers wakes twenty match runners, their
twenty next turns leave in one message. Per-message cost dominates Python gRPC; this is what
keeps the referee off the critical path.

The :class:`SessionHub` knows every session and every live game (seat): it places new matches
on sessions with free capacity, routes incoming actions to their seat, and holds the seats of a
lost connection until the same bot comes back or their grace period ends.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from sueca import codec as conv
from sueca.referee import metrics
from sueca.referee.faults import Fault
from sueca.referee.house import HouseBots, is_house_name
from sueca.referee.limits import Bucket, Limits, Summary, shown
from sueca.v1 import sueca_pb2 as pb

if TYPE_CHECKING:
    from sueca.referee.clocked_match import Seat
    from sueca.referee.clocked_match import Session as SeatSession

MALFORMED, NOT_YOUR_SEAT, UNKNOWN_GAME, LATE = (
    Fault.MALFORMED.value, Fault.NOT_YOUR_SEAT.value, Fault.UNKNOWN_GAME.value, Fault.LATE.value)

log = logging.getLogger("sueca.referee.sessions")

MAX_CAPACITY = 10_000
# Items per RefereeMessage: keeps a message far below the bot's 4 MiB receive limit (a turn
# request is 100-300 bytes) while a batch still carries hundreds of turns.
MAX_BATCH = 512
# Batching for busy sessions, see Session.write_loop. On 2 cores (4 bot processes,
# 32-128 matches at once) it gives 1.3-1.5x the moves/s of writing whenever anything is ready;
# 5 ms rather than 2 ms (128 matches, 2 bot processes): ~46 answers per message, referee CPU
# per move 40-45 us instead of ~48 (noisy), the median move round trip no worse.
WRITE_GAP = 0.005
BUSY_GAMES = 8
# Actions one message may hold beyond two per game of its stream (an answer, and a late one to
# a turn that timed out): an honest bot never needs more, and the rest are not looked at.
ANSWER_SLACK = 16
GAME_ID_BYTES = 8  # 64 random bits per game id: unguessable, and never derived from the match
# Ended games remembered (id -> its bot and how it ended), so that an answer arriving after its
# game ended is refused as ``late`` rather than ``unknown_game``: a few seconds of games at the
# busiest, ~150 bytes each.
ENDED_GAMES = 20_000
_ids = itertools.count(1)


class PlacementError(Exception):
    """A match cannot be placed: ``code`` is a grpc.StatusCode name, the message quotes the bot."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


_OUT_QUEUE = metrics.LIMIT_HITS.labels("out_queue")
_overflow_log = Summary(log, 1.0, 10)  # a bot cut off, back, cut off... costs a few lines
_ERRORS = metrics.LIMIT_HITS.labels("errors")


class Session:
    """One authenticated bot stream, with what it may cost the referee (:class:`Limits`)."""

    def __init__(self, bot: str, capacity: int, *, peer: str = "", sdk_version: str = "",
                 limits: Limits | None = None) -> None:
        limits = limits or Limits()
        self.id = next(_ids)
        self.bot = bot
        self.capacity = capacity
        self.peer = peer
        self.sdk_version = sdk_version
        self.games: dict[str, Seat] = {}
        self.out: list[bytes] = []  # encoded RefereeMessage fields: turns, events, errors
        # what ``out`` holds; over a limit the session is cut off (see overflow)
        self.out_bytes = 0
        self.max_bytes = limits.out_bytes or 1 << 62
        self.max_items = limits.out_items or 1 << 62
        self.overflowed = False
        self.kill: Callable[[], object] | None = None  # cancels a write stuck on a full stream
        # ActionErrors answered: per incoming message, and a bucket per second
        self.errors_per_message = limits.errors_per_message or 1 << 62
        self.errors_in_message = 0
        self.faults_in_message = 0  # answered or not: the read budget charges such messages
        self.error_bucket = Bucket(limits.errors_per_second)
        self.errors_unanswered = 0
        # The writer's wake-up: ``ready`` says a push asked for a send; ``_waiter`` is the
        # future the idle writer awaits. A bare future, not an asyncio.Event: an Event's wait
        # costs a future, a deque and a running-loop look-up (a getpid() call on 3.11) per
        # wake-up, and with one game per session there is one wake-up per move.
        self.ready = False
        self._waiter: asyncio.Future[None] | None = None
        self.draining = False
        self.closed = False
        # batching at a glance (logged when the session ends)
        self.sent = self.items_sent = self.received = self.actions_received = 0

    def __repr__(self) -> str:
        return f"<session {self.id} bot={self.bot!r} peer={self.peer} games={len(self.games)}>"

    @property
    def free(self) -> int:
        if self.draining or self.closed:
            return 0
        return max(0, self.capacity - len(self.games))

    # -- what the bot is owed (called by match runners and the reader) ---------------------------
    def push(self, field: bytes) -> None:
        """Queue one encoded RefereeMessage field (a turn, an event or an error) and have it
        sent in this tick's batch."""
        self.out.append(field)
        self.out_bytes += len(field)
        if self.out_bytes > self.max_bytes or len(self.out) > self.max_items:
            self.overflow()
        self.wake()

    def wake(self) -> None:
        """Have the writer send what is queued (now if it is idle, else after its write)."""
        self.ready = True
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def push_lazy(self, field: bytes) -> None:
        """Queue an event that may wait for the next batch this session sends anyway (a trick
        or deal end is needed before the seat's next turn, not sooner): one match costs its
        bots one message per turn, not one per event."""
        self.out.append(field)
        self.out_bytes += len(field)
        if self.out_bytes > self.max_bytes or len(self.out) > self.max_items:
            self.overflow()

    def overflow(self) -> None:
        """The bot does not read what it is sent: drop the queue and end the stream
        (RESOURCE_EXHAUSTED). Its games wait for it to come back like any lost connection."""
        if self.overflowed:
            return
        self.overflowed = True
        _OUT_QUEUE.inc()
        _overflow_log.warning("bot %r (%s) did not read: %d bytes, %d items queued; closing "
                              "its stream", self.bot, self.peer, self.out_bytes, len(self.out),
                              extra={"bot": self.bot, "peer": self.peer})
        self.out = []
        self.out_bytes = 0
        self.close()
        if self.kill is not None:
            self.kill()

    def may_answer(self) -> bool:
        """May this session be answered one more ActionError? Not beyond ``errors_per_message``
        for the message being handled, nor ``errors_per_second``: the rest are counted only."""
        self.faults_in_message += 1
        if (self.errors_in_message < self.errors_per_message and not self.overflowed
                and self.error_bucket.take()):
            self.errors_in_message += 1
            return True
        self.errors_unanswered += 1
        _ERRORS.inc()
        return False

    def push_error(self, game_id: str, request_id: int, code: str, message: str) -> None:
        """Answer a fault (the caller asked :meth:`may_answer` first)."""
        self.push(conv.error_bytes(game_id, request_id, code, message))
        metrics.FAULTS.labels(code).inc()

    def close(self) -> None:
        self.closed = True
        self.wake()

    def take(self) -> bytes | None:
        """Everything queued (up to MAX_BATCH items) as one encoded RefereeMessage, or None."""
        out = self.out
        if not out:
            return None
        self.sent += 1
        if len(out) <= MAX_BATCH:
            self.items_sent += len(out)
            self.out = []
            self.out_bytes = 0
            return b"".join(out)
        self.items_sent += MAX_BATCH
        msg = b"".join(out[:MAX_BATCH])
        del out[:MAX_BATCH]
        self.out_bytes -= len(msg)
        self.ready = True  # the rest may hold turns: the writer goes on at once
        return msg

    async def write_loop(self, write: object) -> None:
        """Send batches until the session closes. ``write`` is the stream's async write.

        A busy session (BUSY_GAMES or more games) writes at most once per WRITE_GAP: turns that
        become ready meanwhile, as other bots' answers arrive, join the same message, and this
        bot's answers then come back in one message too. A session with few games is written
        to at once, so a lone match pays no latency for it.

        Only a wake-up sends: what :meth:`push_lazy` queued while a write was under way (a
        trick end: the answer to the turn being written may arrive before the write returns)
        waits for the next turn or match end instead of leaving alone. With one game per
        session this keeps the referee at one message per move.
        """
        loop = asyncio.get_running_loop()
        last = 0.0
        while True:
            if not self.ready:
                self._waiter = waiter = loop.create_future()
                await waiter
            if len(self.games) >= BUSY_GAMES and not self.closed:
                gap = last + WRITE_GAP - loop.time()
                if gap > 0:
                    await asyncio.sleep(gap)
            self.ready = False
            while (msg := self.take()) is not None:
                await write(msg)  # type: ignore[operator]
                if not (self.ready or self.closed):
                    break  # only lazy events came meanwhile (or nothing)
                self.ready = False
            if len(self.games) >= BUSY_GAMES:  # a clock call only where the gap is kept
                last = loop.time()
            if self.closed:
                return


class SessionHub:
    """Every session and every live game on this referee."""

    def __init__(self) -> None:
        self.sessions: dict[str, list[Session]] = {}
        self.games: dict[str, Seat] = {}          # game id -> seat, for every running match
        self.away: dict[str, dict[str, Seat]] = {}  # bot -> seats whose connection was lost
        self.house = HouseBots()  # seats the referee plays itself (sueca.referee.house)
        self.budgets: dict[str, tuple[Bucket, Bucket]] = {}  # bot -> its streams' read budgets
        self.ended: dict[str, tuple[str, str]] = {}  # game id -> (bot, end), oldest first

    # -- sessions -------------------------------------------------------------------------------
    def add(self, session: Session, limit: int = 0) -> bool:
        """Register an authenticated stream; False (nothing changed) when its bot already has
        ``limit`` sessions here (0: no limit)."""
        same = self.sessions.setdefault(session.bot, [])
        if limit and len(same) >= limit:
            return False
        same.append(session)
        metrics.SESSIONS.inc()
        away = self.away.pop(session.bot, None)
        if away:
            log.info("bot %r is back (%s): resuming %d game(s)", session.bot, session.peer,
                     len(away), extra={"bot": session.bot, "peer": session.peer})
            for seat in away.values():
                seat.reattach(session)
        return True

    def read_budget(self, bot: str, limits: Limits) -> tuple[Bucket, Bucket]:
        """The messages and actions per second a bot's streams may spend on nothing (empty,
        faulty, malformed), shared by all of them: a bot may hold ``sessions_per_bot``
        streams, and a budget each would multiply what one bot can cost the loop by as many."""
        got = self.budgets.get(bot)
        if got is None:
            got = self.budgets[bot] = (Bucket(limits.messages_per_second),
                                       Bucket(limits.actions_per_second))
        return got

    def remove(self, session: Session) -> None:
        """The stream ended: its games wait for the bot to come back (grace period)."""
        session.close()
        same = self.sessions.get(session.bot, [])
        if session in same:
            same.remove(session)
            metrics.SESSIONS.dec()
            if not same:
                del self.sessions[session.bot]
                self.budgets.pop(session.bot, None)
        if session.games:
            log.warning("lost connection of bot %r (%s) with %d game(s) running",
                        session.bot, session.peer, len(session.games),
                        extra={"bot": session.bot, "peer": session.peer})
            away = self.away.setdefault(session.bot, {})
            for game_id, seat in list(session.games.items()):
                away[game_id] = seat
                seat.detach()
            session.games.clear()

    def close_all(self) -> None:
        for sessions in list(self.sessions.values()):
            for s in sessions:
                s.close()

    # -- placing matches ------------------------------------------------------------------------
    def new_game_ids(self, count: int) -> list[str]:
        """``count`` fresh game ids, distinct from each other and from every live game.

        Random, not derived from the match id or the seat: the seats of one match get unrelated
        ids, so no identifier links two seats of a bot program seated twice in a match
        (round-robin seats a program as both partners). Its seats still see the same public
        play, which is why :meth:`reserve` also splits partners across sessions when it can.
        """
        ids: list[str] = []
        while len(ids) < count:
            gid = secrets.token_hex(GAME_ID_BYTES)
            if gid not in self.games and gid not in ids:
                ids.append(gid)
        return ids

    def reserve(self, bots: Sequence[str]) -> list[Session]:
        """A session with free capacity for each seat (the same bot may sit twice), or
        PlacementError naming the first bot that cannot play. Takes nothing: the runner binds.

        The two seats of a team go to different sessions of their bot when it has another
        session with room (two processes of one program then share nothing through the
        referee); with a single session, or no room elsewhere, both seats share one session.
        Otherwise the session with the most room wins, which spreads the load.
        """
        taken: dict[int, int] = {}
        chosen: list[Session] = []

        def room(s: Session) -> int:
            return s.free - taken.get(s.id, 0)

        for seat, name in enumerate(bots):
            if is_house_name(name):
                house = self.house.session(name)
                if house is None:
                    raise PlacementError("PERMISSION_DENIED", self.house.refusal(name))
                chosen.append(house)  # type: ignore[arg-type]  # a Session to the runner
                continue
            sessions = self.sessions.get(name)
            if not sessions:
                raise PlacementError("FAILED_PRECONDITION",
                                     f"bot {shown(name)} is not connected to this referee")
            partner = chosen[seat - 2] if seat >= 2 else None
            best = max(sessions, key=lambda s: (room(s) > 0, s is not partner, room(s)))
            if room(best) <= 0:
                cap = sum(s.capacity for s in sessions)
                raise PlacementError(
                    "RESOURCE_EXHAUSTED",
                    f"bot {shown(name)} has no free capacity on this referee: {len(sessions)} "
                    f"session(s), {cap} game(s) of capacity, all in use or draining")
            taken[best.id] = taken.get(best.id, 0) + 1
            chosen.append(best)
        return chosen

    def bind(self, seat: Seat, session: SeatSession) -> None:
        session.games[seat.game_id] = seat
        self.games[seat.game_id] = seat

    def unbind(self, seat: Seat) -> None:
        if self.games.pop(seat.game_id, None) is not None:
            ended = self.ended
            ended[seat.game_id] = (seat.bot, str(seat.runner.match.end or "aborted"))
            if len(ended) > ENDED_GAMES:
                del ended[next(iter(ended))]
        if seat.session is not None:
            seat.session.games.pop(seat.game_id, None)
        away = self.away.get(seat.bot)
        if away is not None:
            away.pop(seat.game_id, None)
            if not away:
                del self.away[seat.bot]

    # -- incoming actions -----------------------------------------------------------------------
    def dispatch(self, session: Session, actions: Sequence[pb.Action]) -> None:
        """Route a batch of answers to their seats; every fault is answered, none is applied."""
        games = self.games
        bot = session.bot
        session.received += 1
        n = len(actions)
        session.actions_received += n
        room = 2 * len(session.games) + ANSWER_SLACK
        if n > room:  # each action costs the loop ~2 us: a 64 KB message of empty ones, 60 ms
            if session.may_answer():
                session.push_error("", 0, MALFORMED,
                                   f"{n} actions in one message, more than the "
                                   f"{len(session.games)} game(s) of this stream can answer: "
                                   f"only the first {room} were read")
            actions = actions[:room]
        for action in actions:
            gid = action.game_id
            seat = games.get(gid)
            if seat is None:
                gone = self.ended.get(gid)
                if gone is not None and gone[0] == bot:
                    if session.may_answer():
                        session.push_error(gid, action.request_id, LATE,
                                           f"game {gid!r} is over (it ended as {gone[1]}): "
                                           "this answer came after its end")
                    continue
                if session.may_answer():  # the id is the bot's own text: quoted cut, escaped
                    session.push_error(gid[:64], action.request_id, UNKNOWN_GAME,
                                       f"unknown game {shown(gid)}: no such game is running "
                                       "on this referee (it may have ended)")
                continue
            if seat.bot != bot:  # says nothing of the game's match, seat or bot
                if session.may_answer():
                    session.push_error(gid, action.request_id, NOT_YOUR_SEAT,
                                       f"game {gid!r} is not held by bot {bot!r}: answer only "
                                       "the games this stream was given")
                continue
            fault = seat.offer(action)
            if fault is not None and session.may_answer():
                session.push_error(gid, action.request_id, fault[0], fault[1])

    def malformed(self, session: Session, message: str) -> None:
        if session.may_answer():
            session.push_error("", 0, MALFORMED, message)

    # -- status ---------------------------------------------------------------------------------
    def status(self) -> list[pb.BotStatus]:
        out = []
        for name in sorted(self.sessions):
            sessions = self.sessions[name]
            out.append(pb.BotStatus(bot=name, sessions=len(sessions),
                                    capacity=sum(s.capacity for s in sessions),
                                    free=sum(s.free for s in sessions)))
        return out

    def free_by_bot(self) -> dict[str, int]:
        """Free games per connected bot (the heartbeat publishes it every few seconds: with
        thousands of sessions, no BotStatus messages are built for it)."""
        return {name: sum(s.free for s in sessions) for name, sessions in self.sessions.items()}
