"""One match on the referee: asks seats for cards, with clocks and faults.

A clocked match is the only writer of its :class:`~sueca.engine.Match`. It is driven by callbacks,
not by a task per turn: asking a seat queues a TurnRequest (encoded straight from engine state)
on the seat's bot session and arms a timer; the session's reader checks an incoming action
against the seat (request id, card in hand, lenient renúncia) and only a valid answer reaches
:meth:`ClockedMatch.answer`, which plays it and asks the next seat in the same call. A protocol
fault therefore never touches the game, and a card costs no task switch: when a bot's batch of
twenty answers arrives, twenty matches move on and their next turns leave in the next batch.
:meth:`ClockedMatch.run` is the coroutine a caller awaits for the result.

Clocks: a turn may take ``move_ms``; beyond that it spends the seat's bank for the match. When
both are gone the match ends as ``timeout``. A bot that resigns a game (its code raised: the SDK
sends ``Resign`` with the exception's first line) ends the match at once as ``bot_error``,
charged to its seat, the reason kept printable and capped in the result's ``fault_detail``. A
seat whose connection is lost has ``grace_ms`` to
come back on a new stream of the same bot, or the match ends as ``disconnect``. The clock never
stops: a seat still away when its time runs out also ends the match as ``disconnect``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from sueca import codec as conv
from sueca.engine import CARDS, Deal, Match, replay
from sueca.engine.cards import cards_of
from sueca.engine.game import ABORTED, BOT_ERROR, DISCONNECT, RENUNCIA, TIMEOUT, End
from sueca.referee import metrics
from sueca.referee.faults import Fault
from sueca.sdk.bot import bot_seeds
from sueca.v1 import sueca_pb2 as pb


class Session(Protocol):
    """What a seat needs of the bot connection it is played over
    (:class:`sueca.referee.sessions.Session`): the runner never imports the sessions."""

    games: dict[str, Seat]

    def push(self, message: Any) -> None: ...

    def push_lazy(self, message: Any) -> None: ...


class SessionHub(Protocol):
    """What a match needs of the sessions' registry (:class:`sueca.referee.sessions.SessionHub`)."""

    def new_game_ids(self, n: int) -> list[str]: ...

    def bind(self, seat: Seat, session: Session) -> None: ...

    def unbind(self, seat: Seat) -> None: ...

log = logging.getLogger("sueca.referee.match")

_CLOCK_SLACK = 1e-6  # the loop may run a timer this early (its clock resolution)
MAX_TURN_TIMES = 2000  # turn times kept per seat for the RunMatch caller (sueca-turn-times-us)
TURN_TIMES_KEY = "sueca-turn-times-us"
_observe_rtt = metrics.MOVE_RTT.observe
_MOVES = metrics.MOVES
_GameEvent = pb.GameEvent
_MatchEvent = pb.MatchEvent



class Seat:
    """One seat of a running match: what its bot calls a *game* (``game_id``).

    The game id is opaque (see :meth:`SessionHub.new_game_ids`): the bot is never told which
    match a game belongs to, so two seats of one match held by the same program are not linked
    by anything the referee says. Only the referee maps a game id to its match and seat.
    """

    __slots__ = ("runner", "seat", "game_id", "gid", "bot", "session", "request_id", "open",
                 "redeal", "request", "deadline_ms", "asked_at", "expires", "bank", "grace_timer",
                 "start_event", "turn_times")

    def __init__(self, runner: ClockedMatch, seat: int, bot: str, session: Session,
                 game_id: str) -> None:
        self.runner = runner
        self.seat = seat
        self.game_id = game_id
        self.gid = conv.game_id_field(self.game_id)
        self.bot = bot
        self.session: Session | None = session
        self.request_id = 0
        self.open = False           # a turn request is waiting for this seat's answer
        self.redeal = False
        self.request = b""          # the open request, encoded (re-sent after a reconnect)
        self.deadline_ms = 0
        self.asked_at = 0.0
        self.expires = 0.0          # loop time at which the open turn runs out of clock
        self.bank = runner.bank_s
        self.grace_timer: asyncio.TimerHandle | None = None
        self.start_event = b""
        self.turn_times: list[float] = []  # seconds per answered turn (sent on request)

    # -- the runner's side ----------------------------------------------------------------------
    def ask(self, redeal: bool, now: float) -> None:
        """Open a turn at loop time ``now`` (the caller's clock reading: one per move)."""
        runner = self.runner
        self.redeal = redeal
        self.open = True
        self.asked_at = now
        allowed = runner.move_s + self.bank
        self.expires = expires = now + allowed
        runner.arm(expires)
        self.deadline_ms = int((now + allowed + runner.wall) * 1000)
        self._send_turn()

    def _send_turn(self) -> None:
        runner = self.runner
        self.request_id += 1
        self.request = req = conv.turn_request_bytes(
            self.gid, self.request_id, self.redeal,
            conv.observation_bytes(runner.match, self.seat, runner.tricks),
            self.deadline_ms, runner.move_ms, int(self.bank * 1000))
        if self.session is not None:
            self.session.push(req)
        # else: away; the request is re-sent when the bot comes back (reattach)

    def settle(self, now: float) -> float:
        """The turn is answered at loop time ``now`` (the match's clock now ignores it): charge
        the time beyond the move limit to the bank. Returns the seconds the turn took."""
        self.open = False
        used = now - self.asked_at
        over = used - self.runner.move_s
        if over > 0:
            self.bank = max(0.0, self.bank - over)
        return used

    def _expire(self) -> None:
        if self.open:
            self.runner.stop(DISCONNECT if self.session is None else TIMEOUT, self.seat)

    # -- the session reader's side ---------------------------------------------------------------
    def offer(self, action: pb.Action) -> tuple[Fault, str] | None:
        """Check an action against this seat: play it if valid, else (fault, message)."""
        rid = action.request_id
        which = action.WhichOneof("choice")
        if which == "resign":  # whenever the game runs, whatever the request: the bot gives up
            self.runner.stop(BOT_ERROR, self.seat, conv.fault_detail(action.resign.reason))
            return None
        if not self.open:
            if rid and rid <= self.request_id:
                return Fault.STALE_REQUEST, (f"request {rid} of game {self.game_id!r} is no longer "
                                       "open: it was answered or the game moved on")
            turn = self.runner.match.turn
            return Fault.OUT_OF_TURN, (f"it is not your turn in game {self.game_id!r}: you are seat "
                                 f"{self.seat}, seat {turn} is to act")
        if rid != self.request_id:
            return Fault.STALE_REQUEST, (f"request {rid} of game {self.game_id!r} is not the open one; "
                                   f"answer request {self.request_id}")
        if self.redeal:
            if which != "redeal":
                return Fault.MALFORMED, (f"request {rid} of game {self.game_id!r} asks whether to call "
                                   f"a redeal: answer with redeal true or false, not "
                                   f"{which or 'nothing'}")
            self.runner.answer(self, action.redeal)
            return None
        if which != "card":
            return Fault.MALFORMED, (f"request {rid} of game {self.game_id!r} asks for a card: answer "
                               f"with card, not {which or 'nothing'}")
        c = action.card
        if c >= 40:
            return Fault.MALFORMED, f"card {c} is not a card number: cards are 0..39"
        deal = self.runner.match.deal
        hand = deal.hands[self.seat]
        if not hand >> c & 1:
            return Fault.NOT_IN_HAND, (f"card {CARDS[c]} ({c}) is not in your hand in game "
                                 f"{self.game_id!r}: you hold "
                                 f"{' '.join(map(str, cards_of(hand)))}")
        if self.runner.lenient and not deal.legal_mask(self.seat) >> c & 1:  # a renúncia
            self._send_turn()  # asked again, with the same deadline: the same clock
            return Fault.RENUNCIA_REFUSED, (
                f"card {CARDS[c]} does not follow the led suit {'CDHS'[deal.led]} although you "
                f"hold {' '.join(map(str, deal.legal_cards(self.seat)))}; play again "
                f"(request {self.request_id})")
        self.runner.answer(self, c)
        return None

    # -- connection loss ------------------------------------------------------------------------
    def detach(self) -> None:
        """The seat's session is gone: wait ``grace_ms`` for the bot to come back."""
        self.session = None
        runner = self.runner
        if runner.match.end is None and self.grace_timer is None:
            self.grace_timer = runner.loop.call_later(runner.grace_s, self._grace_over)

    def _grace_over(self) -> None:
        self.grace_timer = None
        if self.session is None:
            self.runner.stop(DISCONNECT, self.seat)

    def reattach(self, session: Session) -> None:
        """The bot is back on ``session``: tell it the match again and re-send an open turn."""
        if self.grace_timer is not None:
            self.grace_timer.cancel()
            self.grace_timer = None
        self.session = session
        session.games[self.game_id] = self
        session.push(self.start_event)
        if self.open:
            session.push(self.request)

    def close(self) -> None:
        self.open = False
        if self.grace_timer is not None:
            self.grace_timer.cancel()
            self.grace_timer = None


class Listener:
    """A consumer of a match's public events: the RunMatch caller or a spectator (Watch)."""

    __slots__ = ("queue", "cards", "replay", "limit", "overflowed")

    def __init__(self, cards: bool, replay: bool, limit: int = 0) -> None:
        self.queue: asyncio.Queue[pb.MatchEvent] = asyncio.Queue()
        self.cards = cards      # every card and trick, not only deals and the result
        self.replay = replay    # the result carries the replay (RunMatch only)
        self.limit = limit      # spectators are cut off rather than let the queue grow
        self.overflowed = False

    def put(self, event: pb.MatchEvent) -> None:
        if self.limit and self.queue.qsize() >= self.limit:
            self.overflowed = True
            return
        self.queue.put_nowait(event)


class ClockedMatch:
    """Runs one match; seats are bound to the sessions :meth:`SessionHub.reserve` chose."""

    def __init__(self, plan: conv.MatchPlan, sessions: Sequence[Session], hub: SessionHub,
                 seed_key: bytes) -> None:
        self.plan = plan
        self.seed_key = seed_key  # keys the bots' seeds: see sueca.sdk.bot.bot_seed
        self.match_id = plan.match_id
        self.hub = hub
        self.loop = asyncio.get_running_loop()
        self.match = Match(plan.variant, seed=plan.seed, decks=plan.decks,
                           first_dealer=plan.first_dealer)
        self.move_ms = plan.move_ms
        self.move_s = plan.move_ms / 1000
        self.bank_s = plan.bank_ms / 1000
        self.grace_s = plan.grace_ms / 1000
        # unix time minus loop time: a deadline in epoch ms without a clock call per move
        # (refreshed every deal, so a wall-clock step is followed within a deal)
        self.wall = time.time() - self.loop.time()
        self.lenient = plan.lenient
        self.seats = [Seat(self, s, plan.bots[s], sessions[s], gid)
                      for s, gid in enumerate(hub.new_game_ids(4))]
        self.tricks = b""  # this deal's finished tricks, encoded as Observation field 10
        self.listeners: list[Listener] = []
        self._want_cards = False
        self.started = False
        self._finishing = False
        self.result: pb.MatchResult | None = None
        self.fault_detail = ""  # a bot_error's reason (codec.fault_detail: printable, capped)
        self.done = asyncio.Event()
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at = 0.0
        for seat in self.seats:
            hub.bind(seat, seat.session)  # type: ignore[arg-type]

    # -- the clock -----------------------------------------------------------------------------
    # One timer per match, not one per turn: arming and cancelling a TimerHandle per card cost
    # more than the rest of the turn's bookkeeping. The timer is moved only to an earlier
    # deadline; when it fires early (the turn it was armed for was answered), it re-arms for the
    # open turn's deadline.
    def arm(self, when: float) -> None:
        timer = self.timer
        if timer is None or when < self.timer_at:
            if timer is not None:
                timer.cancel()
            self.timer_at = when
            self.timer = self.loop.call_at(when, self._clock)

    def _clock(self) -> None:
        self.timer = None
        for seat in self.seats:
            if seat.open:
                if self.loop.time() >= seat.expires - _CLOCK_SLACK:
                    seat._expire()
                else:
                    self.arm(seat.expires)
                return

    def _stop_clock(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    # -- listeners -------------------------------------------------------------------------------
    def listen(self, cards: bool, replay: bool, limit: int = 0) -> Listener:
        """A new consumer of the match's events. One that joins a running match first gets what
        it missed, as the very events a consumer from the start received (every deal so far
        with its result and, with ``cards``, every card and trick: all public once played),
        then the live ones; nothing runs in between, so nothing is lost or sent twice."""
        listener = Listener(cards, replay, limit)
        self.listeners.append(listener)
        self._want_cards = any(x.cards for x in self.listeners)
        listener.put(self._started_event())
        if self.started:
            for event in self._history(cards):
                listener.put(event)
        return listener

    def _history(self, cards: bool) -> Iterator[pb.MatchEvent]:
        """The public events of the match so far, in the order they were published."""
        mid = self.match_id
        results = self.match.results  # one per finished deal, in deal order
        for n, deal in enumerate(self.match.deals):
            if cards:
                yield self._deal_start_event(deal)
                for trick in deal.tricks:
                    yield from self._card_events(trick.leader, trick.cards)
                    yield _MatchEvent(match_id=mid, trick_end=conv.trick_to_pb(trick))
                yield from self._card_events(deal.leader, deal.trick)  # cards on the table
            if n < len(results):
                yield _MatchEvent(match_id=mid, deal_end=conv.deal_end_to_pb(results[n]))

    def _card_events(self, leader: int, cards: Sequence[int]) -> Iterator[pb.MatchEvent]:
        for k, c in enumerate(cards):
            yield _MatchEvent(match_id=self.match_id,
                              card=pb.PlayedCard(seat=(leader + k) & 3, card=c))

    def unlisten(self, listener: Listener) -> None:
        if listener in self.listeners:
            self.listeners.remove(listener)
            self._want_cards = any(x.cards for x in self.listeners)

    def _publish(self, event: pb.MatchEvent, cards: bool = False) -> None:
        for listener in self.listeners:
            if listener.cards or not cards:
                listener.put(event)

    def _started_event(self) -> pb.MatchEvent:
        p = self.plan
        return _MatchEvent(match_id=self.match_id, started=pb.MatchStart(
            seats=p.bots, variant=conv.variant_to_pb(p.variant)))

    def _deal_start_event(self, deal: Deal | None = None) -> pb.MatchEvent:
        deal = deal or self.match.deal
        return _MatchEvent(match_id=self.match_id, deal_start=pb.DealStart(
            number=deal.number, dealer=deal.dealer, trump=deal.trump))

    def _tell(self, field: str, value: Any, now: bool = False) -> None:
        """Send a GameEvent built from ``field=value`` to every seat still connected: with
        the seat's next batch, or ``now``. The event is serialized once; each seat's copy
        differs only in its game id (field 1, first, as protobuf writes it)."""
        body = _GameEvent(**{field: value}).SerializeToString()
        for s in self.seats:
            if s.session is not None:
                event = conv.field_bytes(0x1A, s.gid + body)
                if now:
                    s.session.push(event)
                else:
                    s.session.push_lazy(event)

    def turn_times_metadata(self) -> tuple[str, str]:
        """Each seat's answered turns (queued request to valid answer, as the referee saw them,
        in microseconds, at most MAX_TURN_TIMES a seat), for a RunMatch caller that asks with
        the request metadata ``sueca-turn-times: 1`` (``sueca-arena loadtest``): sent as
        trailing metadata ``sueca-turn-times-us: 0=812,977;1=...;2=...;3=...``."""
        return TURN_TIMES_KEY, ";".join(
            f"{s.seat}=" + ",".join(str(round(t * 1e6)) for t in s.turn_times)
            for s in self.seats)

    # -- the game -------------------------------------------------------------------------------
    async def run(self) -> pb.MatchResult:
        """Start the match and wait for its end; the result carries the replay."""
        self.start()
        await self.done.wait()
        return self.result  # type: ignore[return-value]

    def start(self) -> None:
        plan = self.plan
        metrics.ACTIVE_MATCHES.inc()
        seeds = bot_seeds(plan.seed, self.seed_key)
        for seat in self.seats:
            seat.start_event = conv.event_bytes(_GameEvent(
                game_id=seat.game_id, match_start=conv.match_start(
                    seat.seat, plan.bots, plan.variant, seeds[seat.seat])))
            # rides with the seat's first message: its first turn request, or the match end
            # (both are pushed at once); three of the four seats are not asked first, and a
            # message of its own each cost them and the referee as much as a move
            seat.session.push_lazy(seat.start_event)  # type: ignore[union-attr]
        self.started = True
        if self._want_cards:  # a quiet stream has only started, deal ends and the result
            self._publish(self._deal_start_event(), cards=True)
        self._guard(self._ask)

    def _ask(self, now: float | None = None) -> None:
        match = self.match
        self.seats[match.deal.turn].ask(match.awaiting_redeal,
                                        self.loop.time() if now is None else now)

    def _guard(self, fn: Any, *args: Any) -> None:
        """A bug must end this match as aborted, never the session or the referee."""
        try:
            fn(*args)
        except Exception:
            self._failed()

    def _failed(self) -> None:
        """Called in an ``except`` block: log the bug, end the match as aborted."""
        log.exception("match %s failed; ending it as aborted", self.match_id,
                      extra={"match_id": self.match_id})
        if self.match.end is None:
            self.match.stop(ABORTED)
        try:
            self._finish()
        except Exception:  # even the record failed: still release everything
            log.exception("match %s could not be finished cleanly", self.match_id,
                          extra={"match_id": self.match_id})
            self._finished_anyway()

    def _finished_anyway(self) -> None:
        self._stop_clock()
        for seat in self.seats:
            seat.close()
            self.hub.unbind(seat)
        result = pb.MatchResult(match_id=self.match_id, end=ABORTED, winner=-1, fault_seat=-1)
        self.result = result
        for listener in self.listeners:
            listener.queue.put_nowait(_MatchEvent(match_id=self.match_id, result=result))
        self.done.set()
        self._release()

    def answer(self, seat: Seat, value: Any) -> None:
        """A valid answer from the seat to act: apply it and ask the next seat."""
        try:  # _guard, inlined: one call less per move
            self._answer(seat, value)
        except Exception:
            self._failed()

    def _answer(self, seat: Seat, value: Any) -> None:
        match = self.match
        now = self.loop.time()
        used = seat.settle(now)
        _observe_rtt(used)
        if len(seat.turn_times) < MAX_TURN_TIMES:
            seat.turn_times.append(used)
        _MOVES.value += 1
        if seat.redeal:
            result = match.redeal(value, seat.seat)
            if result is not None:
                self._deal_over(result)
            self._ask(now)
            return
        play = match.play(CARDS[value])
        if self._want_cards:
            self._publish(_MatchEvent(match_id=self.match_id, card=pb.PlayedCard(
                seat=play.seat, card=play.card)), cards=True)
        trick = play.trick
        if trick is not None:
            tb = conv.trick_bytes(trick)
            self.tricks += conv.field_bytes(0x52, tb)
            inner = conv.field_bytes(0x1A, tb)  # GameEvent.trick_end, the same for every seat
            for s in self.seats:
                if s.session is not None:
                    s.session.push_lazy(conv.field_bytes(0x1A, s.gid + inner))
            if self._want_cards:
                self._publish(_MatchEvent(match_id=self.match_id,
                                          trick_end=conv.trick_to_pb(trick)), cards=True)
        if play.deal is not None:
            self._deal_over(play.deal)
        if match.end is None:
            self._ask(now)
        else:
            self._finish()

    def _deal_over(self, result: Any) -> None:
        self.wall = time.time() - self.loop.time()
        dpb = conv.deal_end_to_pb(result)
        self.tricks = b""
        self._tell("deal_end", dpb)
        self._publish(_MatchEvent(match_id=self.match_id, deal_end=dpb))
        if result.end == RENUNCIA:
            metrics.FAULTS.labels(RENUNCIA).inc()
        if self.match.end is None:
            if self._want_cards:
                self._publish(self._deal_start_event(), cards=True)

    def stop(self, end: End, seat: int | None = None, detail: str = "") -> None:
        """End the match from outside the game (timeout, disconnect, bot error, aborted); the
        first reason wins; a match that is over stays as it ended. ``detail``: a bot error's
        reason, already printable and capped."""
        if self.match.end is not None or self.done.is_set():
            return
        self.match.stop(end, seat)
        self.fault_detail = detail
        self._finish()

    def _finish(self) -> None:
        if self.done.is_set() or self._finishing:
            return
        self._finishing = True
        match = self.match
        if match.end is None:  # defensive: never leave a match without an end
            match.stop(ABORTED)
        bots = self.plan.bots
        self._stop_clock()
        for seat in self.seats:
            seat.close()
        last = match.results[-1] if match.results else None
        if last is not None and last.end in (TIMEOUT, DISCONNECT, BOT_ERROR, ABORTED):
            dpb = conv.deal_end_to_pb(last)
            self._tell("deal_end", dpb)
            self._publish(_MatchEvent(match_id=self.match_id, deal_end=dpb))
        end_pb = conv.match_end(match, bots)
        self._tell("match_end", end_pb, now=True)
        for seat in self.seats:
            self.hub.unbind(seat)
        if match.end in (TIMEOUT, DISCONNECT, BOT_ERROR):
            metrics.FAULTS.labels(match.end).inc()
            seat_no = match.fault_seat
            log.info("match %s ended by %s of seat %s (bot %r)%s", self.match_id, match.end,
                     seat_no, bots[seat_no],  # type: ignore[index]
                     f": {self.fault_detail}" if self.fault_detail else "",
                     extra={"match_id": self.match_id, "seat": seat_no,
                            "bot": bots[seat_no]})  # type: ignore[index]
        metrics.MATCHES.labels(match.end).inc()
        if self.started:
            metrics.ACTIVE_MATCHES.dec()
        rec = replay.record(match, self.match_id, bots)
        detail = self.fault_detail
        self.result = conv.result_to_pb(self.match_id, match, bots, rec, detail)
        # a spectator's result has no replay and no detail: a bot's reason may name its cards
        public = conv.result_to_pb(self.match_id, match, bots, None)
        full_event = _MatchEvent(match_id=self.match_id, result=self.result)
        public_event = _MatchEvent(match_id=self.match_id, result=public)
        for listener in self.listeners:
            listener.queue.put_nowait(full_event if listener.replay else public_event)
        self.done.set()
        self._release()

    def _release(self) -> None:
        """Cut the seats' link back to this runner once the match is over (nothing calls a
        closed seat's runner: its timers are cancelled and the hub no longer routes to it).
        Runner and seats then free by reference counting when the RunMatch call lets go,
        instead of piling up for the cyclic garbage collector, whose full passes over a
        referee's heap cost milliseconds of CPU each, all in the event loop."""
        for seat in self.seats:
            seat.runner = None  # type: ignore[assignment]
