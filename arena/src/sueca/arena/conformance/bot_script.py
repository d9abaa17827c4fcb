"""The bot checks: a script the scripted referee follows with one bot, phase by phase.

Phases, in order (each bounded in time; a later one runs even when an earlier one failed):

1. the hello (checked), then as many games at once as the capacity says (up to 8), their
   first turns batched in one message, each played to its end;
2. a re-ask: a turn, its answer refused, the turn asked again under a new request id;
3. a weak-hand redeal question (variant ``weak_hand_redeal``);
4. a stream dropped right after a turn was sent (the bot may be computing its answer): the bot
   must come back and answer the re-sent turn exactly once (an answer computed for the dropped
   stream must not follow on the new one);
5. a drain: the bot is stopped (SIGTERM when the kit started it; its author stops it with
   ``--listen``), must say ``drain``, keep playing its running game to the end, then close.

Three checks watch every answer of every phase: ``request-ids``, ``legal-cards`` and
``stale-answers``. A wrong request id is counted against ``request-ids`` and the answer is
then taken for the open turn anyway, so that one wrong field fails one check, not every later
phase; an illegal card is refused and asked again, as a lenient referee does.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable

import grpc

from sueca.arena.conformance.games import Game, weak_hand_seed
from sueca.arena.conformance.report import Checks, shown
from sueca.arena.conformance.wire import TIMEOUT, Listener, Malformed, Stream
from sueca.engine import CARDS, End, Variant
from sueca.v1 import sueca_pb2 as pb

__all__ = ["CHECKS", "BotScript", "Timing"]

CHECKS = (
    ("hello", "the first message is a hello: the bot's name, the token it was given, "
              "capacity 1 or more"),
    ("full-match", "a match is played to its end, every turn answered in time"),
    ("batched-turns", "turns of several games sent in one message are all answered"),
    ("many-games", "as many games at once as the capacity says (up to 8), each to its end"),
    ("request-ids", "every answer carries the game id and request id of the turn it answers"),
    ("legal-cards", "a card is one of the turn's legal cards; a play is answered with a card, "
                    "a redeal question with redeal"),
    ("stale-answers", "no request is answered twice, nor after a newer request replaced it or "
                      "its game ended"),
    ("redeal", "a weak-hand redeal question (weak_hand_redeal) is answered with redeal"),
    ("reconnect", "after the stream drops with an answer in flight, the bot connects again, "
                  "says hello and answers the turn sent again, once"),
    ("drain", "a stopped bot says drain, plays its running game to the end, then closes"),
)
MAX_GAMES = 8           # games at once in the many-games phase
MAX_ACTIONS = 64        # actions of one message looked at (a bot needs one per open turn)
MAX_REFUSALS = 3        # illegal answers to one game before the script ends it
QUIET_SECONDS = 0.3     # how long the script waits for an answer that must not come


class Timing:
    """How long the bot gets: per answer, to connect, to come back, to drain."""

    def __init__(self, *, turn: float = 10.0, connect: float = 30.0, reconnect: float = 15.0,
                 drain: float = 15.0) -> None:
        self.turn, self.connect, self.reconnect, self.drain = turn, connect, reconnect, drain


class _Gone(Exception):
    """The bot's stream ended (or stalled) in the middle of a phase; the message says how."""


class BotScript:
    """Runs every phase against the bots that connect to ``listener``.

    ``stop_bot`` is called at the drain phase: it signals the bot process the kit started, or
    tells a ``--listen`` user to stop theirs. ``progress`` gets one line per phase.
    """

    def __init__(self, listener: Listener, token: str, *, timing: Timing,
                 stop_bot: Callable[[], Awaitable[None]],
                 progress: Callable[[str], None] = lambda line: None,
                 signalled: bool = True,
                 exited: Callable[[], Awaitable[str]] | None = None) -> None:
        self.listener = listener
        self.token = token
        self.name = token.rpartition(".")[0]
        self.timing = timing
        self.stop_bot = stop_bot
        self.progress = progress
        self.signalled = signalled  # stop_bot signals the bot: not draining is a failure
        self.exited = exited        # resolves (saying how) when the bot's process exits
        self.checks = Checks(CHECKS)
        self.stream: Stream | None = None
        self.referee_id = secrets.token_hex(8)
        self.capacity = 0
        self.games: dict[str, Game] = {}
        self.ended: set[str] = set()
        self.drained = False
        self.hold: set[str] = set()  # games whose next turn waits (the drain phase)
        self.refuse_at: str | None = None  # the re-ask game: its next answer is refused
        # the reconnect phase's re-sent turn (game, request): answered twice, it is counted
        # against ``reconnect`` (an answer kept from the dropped stream), not ``stale-answers``
        self.watch: tuple[str, int] | None = None
        self.watched_twice = False
        self._errors: list[pb.ActionError] = []

    # -- the run ------------------------------------------------------------------------------
    async def run(self) -> Checks:
        phases = (self._games, self._reask, self._redeal, self._reconnect, self._drain)
        if await self._first_stream():
            for phase in phases:
                try:
                    await phase()
                except _Gone as err:
                    self._lost(str(err))
        for check in self.checks.all():
            check.skipped("not reached: " + ("the bot never connected" if not self.capacity
                                             else "the bot was gone"))
        if self.stream is not None:
            self.stream.close()
        return self.checks

    def _lost(self, why: str) -> None:
        """The stream is gone mid-phase: its games end (the bot is told nothing more)."""
        for gid in list(self.games):
            self.ended.add(gid)
        self.games.clear()
        self.hold.clear()
        if self.stream is not None:
            self.stream.close()
        self.stream = None
        self.progress(f"lost the bot: {why}")

    # -- hello ----------------------------------------------------------------------------------
    async def _first_stream(self) -> bool:
        self.progress("waiting for the bot to connect")
        accept = asyncio.ensure_future(self.listener.accept(self.timing.connect))
        waits: set[asyncio.Future[object]] = {accept}  # type: ignore[arg-type]
        if self.exited is not None:
            waits.add(asyncio.ensure_future(self.exited()))
        done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        stream = accept.result() if accept in done else None
        if stream is None:
            exited = [str(t.result()) for t in done if t is not accept]
            self.checks["hello"].failed(exited[0] if exited else
                                        f"no bot connected within {self.timing.connect:g}s")
            return False
        return await self._hello(stream, self.checks["hello"].failed)

    async def _hello(self, stream: Stream, fail: Callable[[str], None]) -> bool:
        """Read and check a stream's hello; welcome it (True) or end it (False)."""
        first = await stream.next(self.timing.turn)
        problem = None
        if first is TIMEOUT:
            problem = f"no first message within {self.timing.turn:g}s of connecting"
        elif first is None:
            problem = "the stream ended before any message"
        elif isinstance(first, Malformed):
            problem = f"the first message ({first.size} bytes) is not a BotMessage: " \
                      f"{shown(first.error)}"
        elif not isinstance(first, pb.BotMessage) or not first.HasField("hello"):
            problem = "the first message carries no hello"
        if problem is not None:
            fail(problem)
            stream.close(grpc.StatusCode.INVALID_ARGUMENT, "the first BotMessage must carry "
                         "hello (bot, token, capacity)")
            return False
        assert isinstance(first, pb.BotMessage)
        hello = first.hello
        wrong = []
        if hello.bot != self.name:
            wrong.append(f"bot name {shown(hello.bot)}, expected {self.name!r}")
        if hello.token != self.token:
            wrong.append(f"token {shown(hello.token[:len(self.name) + 1] + '...')} is not "
                         "the one given")
        if not 1 <= hello.capacity <= 10_000:
            wrong.append(f"capacity {hello.capacity}, expected 1..10000")
        if first.actions or first.drain:
            wrong.append("the hello message also carries actions or drain")
        if wrong:
            fail("; ".join(wrong))
        if not 1 <= hello.capacity <= 10_000:
            stream.close(grpc.StatusCode.INVALID_ARGUMENT, f"bad capacity {hello.capacity}")
            return False
        self.capacity = self.capacity or hello.capacity
        if not await stream.send(pb.RefereeMessage(welcome=pb.Welcome(
                referee_id=self.referee_id, capacity=hello.capacity))):
            fail("the stream ended before the welcome could be sent")
            return False
        self.stream = stream
        if not wrong:
            self.checks["hello"].passed(f"bot {hello.bot!r}, capacity {hello.capacity}, "
                                        f"sdk {shown(hello.sdk_version, 24)}")
        return True

    async def _stream(self) -> Stream:
        """The current stream, or a new one within the reconnect time (its hello checked)."""
        if self.stream is not None:
            return self.stream
        stream = await self.listener.accept(self.timing.reconnect)
        if stream is None or not await self._hello(stream, self.checks["hello"].failed):
            raise _Gone("no connection: the bot is not connected")
        return stream

    # -- reading and answering ------------------------------------------------------------------
    def _new_game(self, variant: Variant | None = None, seed: str | None = None) -> Game:
        game = Game(self.name, variant or Variant(), seed=seed or secrets.token_hex(8),
                    move_ms=int(self.timing.turn * 1000))
        self.games[game.game_id] = game
        return game

    async def _send(self, events: list[pb.GameEvent], turns: list[pb.TurnRequest]) -> None:
        stream = await self._stream()
        if (events or turns) and not await stream.send(
                pb.RefereeMessage(events=events, turns=turns)):
            raise _Gone("the stream ended while the script was writing to it")

    async def _pump(self, done: Callable[[], bool], phase: str) -> None:
        """Read and answer the bot until ``done()``; _Gone if the stream ends or no answer
        comes within the turn time."""
        while not done():
            stream = await self._stream()
            msg = await stream.next(self.timing.turn)
            if msg is TIMEOUT:
                raise _Gone(f"{phase}: no answer within {self.timing.turn:g}s"
                            f"{self._open_turns()}")
            if msg is None:
                raise _Gone(f"{phase}: the bot's stream ended{self._open_turns()}")
            if isinstance(msg, Malformed):
                self.checks["request-ids"].failed(
                    f"a message of {msg.size} bytes is not a BotMessage: {shown(msg.error)}")
                continue
            assert isinstance(msg, pb.BotMessage)
            await self._absorb(msg)

    def _open_turns(self) -> str:
        opened = [f"request {g.open.request_id} of game {gid!r}"
                  for gid, g in self.games.items() if g.open is not None]
        return f" ({', '.join(opened[:3])} open)" if opened else ""

    async def _absorb(self, msg: pb.BotMessage) -> None:
        """Check and apply every answer of one message; send what follows in one message."""
        checks = self.checks
        if msg.HasField("hello"):
            checks["hello"].failed("a second hello on a stream that was already welcomed")
        if msg.drain and not self.drained:
            self.drained = True
            await (await self._stream()).send(pb.RefereeMessage(welcome=pb.Welcome(
                referee_id=self.referee_id, capacity=0)))
        events: list[pb.GameEvent] = []
        turns: list[pb.TurnRequest] = []
        for action in msg.actions[:MAX_ACTIONS]:
            game = self._game_of(action)
            if game is None or game.open is None:
                continue
            turn = game.open
            which = action.WhichOneof("choice")
            value: bool | int
            if which == "resign":  # a bot may give a game up (the match ends as its fault)
                game.resigned = action.resign.reason
                events += game.stop()
                self._end(game)
                continue
            if turn.redeal:
                if not action.HasField("redeal"):  # the oneof "choice" holds no redeal answer
                    checks["legal-cards"].failed(
                        f"request {turn.request_id} of game {game.game_id!r} asks whether to "
                        f"redeal; answered with {which or 'nothing'}")
                    self.checks["redeal"].failed(f"answered the redeal question with "
                                                 f"{which or 'nothing'}, not redeal")
                    events, turns = self._refuse(game, "malformed", events, turns)
                    continue
                value = bool(action.redeal)
            else:
                if which != "card" or action.card not in turn.legal:
                    said = (f"card {CARDS[action.card]} ({action.card})" if which == "card"
                            and action.card < 40 else f"card {action.card}" if which == "card"
                            else which or "nothing")
                    checks["legal-cards"].failed(
                        f"answered request {turn.request_id} of game {game.game_id!r} with "
                        f"{said}; legal: {' '.join(str(CARDS[c]) for c in sorted(turn.legal))}")
                    events, turns = self._refuse(game, "renuncia_refused", events, turns)
                    continue
                value = int(action.card)
            if self.refuse_at == game.game_id:
                self.refuse_at = None
                events, turns = self._refuse(game, "renuncia_refused", events, turns)
                continue
            events += game.answer(value)
            if game.over:
                self._end(game)
            elif game.game_id not in self.hold:
                turns.append(game.ask())
        errors = self._errors
        self._errors = []
        if events or turns or errors:
            stream = await self._stream()
            if not await stream.send(pb.RefereeMessage(events=events, turns=turns,
                                                       errors=errors)):
                raise _Gone("the stream ended while the script was writing to it")

    def _refuse(self, game: Game, code: str, events: list[pb.GameEvent],
                turns: list[pb.TurnRequest]) -> tuple[list[pb.GameEvent],
                                                      list[pb.TurnRequest]]:
        """Refuse an answer and ask again (new request id), or end the game after
        MAX_REFUSALS."""
        assert game.open is not None
        rid = game.open.request_id
        game.answered.add(rid)
        game.refusals += 1
        self._errors = [*self._errors, pb.ActionError(
            game_id=game.game_id, request_id=rid, code=code,
            message=f"request {rid} refused by the conformance kit: answer the next request")]
        if game.refusals >= MAX_REFUSALS:
            events = events + game.stop()
            self._end(game)
        else:
            turns = turns + [game.ask()]
        return events, turns

    def _game_of(self, action: pb.Action) -> Game | None:
        """The game an action answers, with its open turn; None (counted against a check)
        when it answers nothing open."""
        checks = self.checks
        gid, rid = action.game_id, action.request_id
        game = self.games.get(gid)
        if (self.watch == (gid, rid) and (game is None or rid in game.answered)
                and checks["stale-answers"].status != "fail"):  # one fault, one failed check
            self.watched_twice = True
            return None
        if game is None:
            if gid in self.ended:
                checks["stale-answers"].failed(
                    f"answered request {rid} of game {gid!r} after the game ended")
            else:
                checks["request-ids"].failed(
                    f"answered game {shown(gid)}, which the bot was never given")
            return None
        if game.open is not None and rid == game.open.request_id:
            return game
        if rid in game.answered:
            checks["stale-answers"].failed(f"answered request {rid} of game {gid!r} twice")
            return None
        if rid in game.issued:
            checks["stale-answers"].failed(
                f"answered request {rid} of game {gid!r}, which a newer request replaced")
            return None
        if game.open is None:
            checks["request-ids"].failed(f"answered game {gid!r} with request id {rid}, "
                                         "which was never sent, while no turn was open")
            return None
        checks["request-ids"].failed(f"answered game {gid!r} with request id {rid}; the open "
                                     f"request is {game.open.request_id}")
        return game

    async def _settle(self, game: Game, phase: str) -> None:
        """Read until ``game`` has no turn open, before the script stops it or asks it again.
        A refused answer opens a new request at once: stopping or re-asking the game while
        that request is in flight would make the bot's honest answer to it look stale."""
        await self._pump(lambda: game.open is None, phase)

    def _end(self, game: Game) -> None:
        self.games.pop(game.game_id, None)
        self.hold.discard(game.game_id)
        self.ended.add(game.game_id)

    async def _quiet(self, seconds: float = QUIET_SECONDS) -> None:
        """Wait a moment for answers that must not come (stale ones), checking any that do."""
        deadline = time.monotonic() + seconds
        stream = await self._stream()
        while (left := deadline - time.monotonic()) > 0:
            msg = await stream.next(left)
            if msg is TIMEOUT:
                return
            if msg is None:
                raise _Gone("the bot's stream ended")
            if isinstance(msg, pb.BotMessage):
                await self._absorb(msg)

    # -- phases ---------------------------------------------------------------------------------
    async def _games(self) -> None:
        n = max(1, min(self.capacity, MAX_GAMES))
        self.progress(f"playing {n} game(s) at once")
        games = [self._new_game() for _ in range(n)]
        events = [g.start_event() for g in games]
        turns = [g.ask() for g in games]
        await self._send(events, turns)
        firsts = {g.game_id: g.open.request_id for g in games if g.open is not None}
        first_done = lambda: all(g.over or firsts[g.game_id] in g.answered
                                 for g in games)
        checks = self.checks
        try:
            await self._pump(first_done, "the first turns")
            if n > 1:
                checks["batched-turns"].passed(f"{n} turns in one message, all answered")
            await self._pump(lambda: not any(g in self.games for g in firsts), "the games")
        except _Gone as err:
            for name in ("batched-turns", "many-games", "full-match"):
                checks[name].failed(str(err))
            raise
        refused = [g for g in games if g.match.end is not End.NORMAL and g.refusals >= MAX_REFUSALS]
        resigned = [g for g in games if g.resigned is not None]
        if refused:
            checks["full-match"].failed(f"game {refused[0].game_id!r} ended after "
                                        f"{MAX_REFUSALS} refused answers")
        elif resigned:  # in the protocol, but no match was played to its end (the SDK resigns
            g = resigned[0]  # a game whose bot raised: the reason is the exception's line)
            checks["full-match"].failed(f"the bot resigned {len(resigned)} of {n} game(s), "
                                        f"game {g.game_id!r} after {len(g.answered)} answer(s): "
                                        f"{shown(g.resigned)}")
        else:
            checks["full-match"].passed(f"{sum(len(g.answered) for g in games)} turns in "
                                        f"{n} game(s)")
        if n > 1:
            checks["many-games"].passed(f"{n} games at once, each to its end")
        else:
            for name in ("batched-turns", "many-games"):
                checks[name].skipped("capacity 1: one game at a time")

    async def _reask(self) -> None:
        self.progress("a turn asked again under a new request id")
        game = self._new_game()
        first = game.ask()
        self.refuse_at = game.game_id
        self.hold.add(game.game_id)  # after the answer asked again, the script ends the game
        await self._send([game.start_event()], [first])
        await self._pump(lambda: first.request_id in game.answered, "a turn to ask again")
        await self._settle(game, "the turn asked again")
        await self._quiet()
        await self._send(game.stop(), [])
        self._end(game)
        await self._quiet()
        self.checks["stale-answers"].passed("no request answered twice or after it was "
                                            "replaced")
        for name in ("request-ids", "legal-cards"):
            self.checks[name].passed("every answer")

    async def _redeal(self) -> None:
        self.progress("a weak-hand redeal question")
        game = self._new_game(Variant(weak_hand_redeal=True), weak_hand_seed())
        self.hold.add(game.game_id)
        turn = game.ask()
        await self._send([game.start_event()], [turn])
        await self._pump(lambda: turn.request_id in game.answered, "the redeal question")
        await self._settle(game, "the turn after the redeal question")
        if game.match.results and game.match.results[-1].end is End.REDEAL:
            said = "answered: redeal"
        else:
            said = "answered: play the hand"
        await self._send(game.stop(), [])
        self._end(game)
        self.checks["redeal"].passed(said)

    async def _reconnect(self) -> None:
        """The stream is dropped right after a turn is sent, so the bot is likely still
        computing its answer; after it comes back, the turn is sent again (same game, same
        request id) and must be answered exactly once. The script then waits about as long as
        the bot has had the turn for an answer that must not come: one computed for the
        dropped stream and sent on the new one (counted here, not as a stale answer)."""
        self.progress("dropping the stream with an answer in flight")
        game = self._new_game()
        self.hold.add(game.game_id)
        turn = game.ask()
        await self._send([game.start_event()], [turn])
        asked = time.monotonic()
        check = self.checks["reconnect"]
        assert self.stream is not None
        self.stream.close(grpc.StatusCode.UNAVAILABLE, "the conformance kit drops this stream "
                          "on purpose: connect again")
        self.stream = None
        stream = await self.listener.accept(self.timing.reconnect)
        if stream is None:
            check.failed(f"the bot did not connect again within {self.timing.reconnect:g}s")
            raise _Gone("the bot did not come back")
        if not await self._hello(stream, lambda why: check.failed(f"hello again: {why}")):
            raise _Gone("its second hello was refused")
        rid = turn.request_id
        self.watch, self.watched_twice = (game.game_id, rid), False
        await self._send([game.start_event()], [turn])
        try:
            await self._pump(lambda: rid in game.answered, "the turn sent again")
            await self._settle(game, "the turn after the one sent again")
            # an answer kept from the dropped stream may come first or after the real one:
            # wait half as long again as the bot has had the turn so far
            await self._quiet(min(self.timing.turn, 1.5 * (time.monotonic() - asked))
                              + QUIET_SECONDS)
        except _Gone as err:
            check.failed(f"after coming back: {err}")
            raise
        finally:
            self.watch = None
        if self.watched_twice:
            check.failed(f"request {rid} of game {game.game_id!r} answered twice after coming "
                         "back: an answer computed for the dropped stream was sent on the new "
                         "one")
        await self._send(game.stop(), [])
        self._end(game)
        check.passed(f"back and answered request {rid} once")

    async def _drain(self) -> None:
        check = self.checks["drain"]
        game = self._new_game()
        turn = game.ask()
        self.hold.add(game.game_id)  # its next turn waits for the drain: the game is running
        await self._send([game.start_event()], [turn])
        await self._pump(lambda: turn.request_id in game.answered, "the turn before the drain")
        self.progress("stopping the bot: it must drain")
        await self.stop_bot()
        deadline = time.monotonic() + self.timing.drain
        stream = await self._stream()
        while not self.drained:
            msg = await stream.next(deadline - time.monotonic())
            if msg is TIMEOUT:
                why = f"the bot did not drain within {self.timing.drain:g}s of being stopped"
                if self.signalled:
                    check.failed(f"{why} (SIGTERM)")
                else:
                    check.skipped(why)
                return
            if msg is None:
                check.failed(f"the stream ended with game {game.game_id!r} running and no "
                             "drain message")
                raise _Gone("the bot left without draining")
            if isinstance(msg, pb.BotMessage):
                await self._absorb(msg)
        self.hold.discard(game.game_id)
        if game.over:
            self._end(game)
            await self._send([], [])
        elif game.open is None:  # a refused answer's request may still be open: it goes on
            await self._send([], [game.ask()])
        try:
            await self._pump(lambda: game.game_id not in self.games, "the game after the drain")
        except _Gone as err:
            check.failed(f"after its drain: {err}")
            raise
        msg = await stream.next(self.timing.drain)
        while isinstance(msg, pb.BotMessage) and not msg.actions:
            msg = await stream.next(self.timing.drain)
        if msg is TIMEOUT:
            check.failed(f"its last game ended but the bot did not close its stream within "
                         f"{self.timing.drain:g}s")
        elif msg is not None:
            check.failed("it sent more after its last game ended, instead of closing")
        else:
            check.passed(f"drained: game {game.game_id!r} played to its end, then closed")
        self.stream = None
        stream.close()
