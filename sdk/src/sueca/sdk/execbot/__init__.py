"""``exec:COMMAND ARGS...``: a program in any language as a bot, speaking ``sueca-exec/1``
(:mod:`.protocol`; ``docs/any-language.md`` is the author's page) on its standard input and
output.

:func:`load_exec` turns a spec into a factory of bots like any other
(:class:`~sueca.sdk.Bot`): one instance plays one seat of one match, so self-play,
``sueca-bot run``, the load tester and the league's runners take it with no change. Made where
an event loop runs (the network client), it is an :class:`ExecBot`, whose ``play`` and
``redeal`` are ``async def`` and whose program's pipes the loop reads: many games share one
loop, and a game waiting for its program must not hold up the others. Made where none runs
(self-play, ``duel``, local play), it is a :class:`BlockingExecBot`: the thread that asks writes
the turn and reads the answer itself, a pipe round trip with nothing between; or, when
self-play keeps many matches in flight on one many-games process
(:func:`sueca.sdk.selfplay.play_many`), it posts its turn (:meth:`BlockingExecBot.post`) to
go out in one write with the other games' turns, and collects the answer once it is read.

Processes: a program plays one game per process unless its hello says ``"games": N``; then
one process takes up to N games at once (every line carries a game id), and another starts only
when all are full. ``--exec-processes`` (``SUECA_EXEC_PROCESSES``) caps the processes of one
bot; a game that finds every process busy waits, within its move limit, for a free one.

Limits: in self-play each answer must come within ``--exec-timeout`` seconds
(``SUECA_EXEC_TIMEOUT``, default 10), the program's start-up and hello included in its first
one; over the network the referee's clocks apply (the turn says how many milliseconds are
left). A program that is late, exits, prints a line that is not JSON, over 64 KiB or answering
no open turn, or plays a card that is not legal loses that game: :class:`ExecBotError` is raised
from ``play`` (the runner's fault rules apply, as to any bot that raises), its process group is
killed and reaped, and one log line gives the game id, the reason and the tail of its standard
error, escaped and cut. A program taking many games loses only the game whose answer was bad
when the answer was merely a bad card; anything that breaks the stream loses every game open on
that process.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import logging
import os
import shlex
import shutil
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from sueca.engine import Card, DealResult, End, Trick
from sueca.engine.observation import Observation

from ..bot import Bot, Forfeit, MatchInfo
from ..logs import shown
from ..settings import current
from . import protocol
from .program import Program, ProgramBroken
from .protocol import ProtocolError

__all__ = ["ExecBot", "BlockingExecBot", "ExecBotError", "ExecSpecError", "ExecCommand",
           "load_exec", "command_of", "PREFIX"]

log = logging.getLogger("sueca.exec")

PREFIX = "exec:"
NET_GRACE = 0.5   # seconds past the referee's clock before a silent program is given up
PLACE_POLL = 0.01  # seconds between looks for a free process when every one is busy


class ExecSpecError(ValueError):
    """An ``exec:`` spec that names no program that can run; the message quotes it."""


class ExecBotError(Forfeit):
    """The program lost this game (late, exited, bad line, illegal card): the message is the
    reason, quoting what it printed (escaped and cut) first, as the match record keeps it
    within its 200 characters; the bot and the game are in the log line :class:`ExecBot` wrote
    (with the program's stderr). A :class:`~sueca.sdk.bot.Forfeit`: self-play counts it as that
    seat's bot error."""

    logged = True


class ExecCommand:
    """The processes of one ``exec:`` command, shared by every bot it makes. Each process is
    read one way, by one event loop or blocking by its askers, and a bot is placed only on a
    process read its way."""

    def __init__(self, spec: str, argv: list[str]) -> None:
        self.spec = spec
        self.argv = argv
        self.label = shown(spec, 80)
        self.programs: list[Program] = []
        self._lock = threading.Lock()
        self._starting: Program | None = None  # a process whose hello is awaited
        # its hello said one game a process: processes start side by side, none waits for the
        # hello of another to learn whether it could take the game
        self._one_game = False

    async def place(self, game: str, deadline: float) -> Program:
        """A process for ``game``, read by the running event loop: one with room, else a new
        one (within the cap), else wait for room until ``deadline`` (``time.monotonic()``)."""
        loop = asyncio.get_running_loop()
        while True:
            found, start = self._claim(game, loop)
            if found is not None:
                return found
            if start is not None:
                with self._starting_up(start):
                    self._one_game = await start.ready(max(0.0, deadline - time.monotonic())) == 1
                return start
            self._busy(deadline)
            await asyncio.sleep(PLACE_POLL)

    def place_now(self, game: str, deadline: float) -> Program:
        """:meth:`place` for a blocking bot: a process its asker reads itself, waiting in this
        thread."""
        while True:
            found, start = self._claim(game, None)
            if found is not None:
                return found
            if start is not None:
                with self._starting_up(start):
                    self._one_game = start.ready_now(max(0.0, deadline - time.monotonic())) == 1
                return start
            self._busy(deadline)
            time.sleep(PLACE_POLL)

    def _claim(self, game: str, loop: asyncio.AbstractEventLoop | None,
               ) -> tuple[Program | None, Program | None]:
        """``(a process with room, None)``, ``(None, a process started for it)``, or
        ``(None, None)`` when it must wait; only processes read as ``loop`` says count."""
        with self._lock:
            self.programs = [p for p in self.programs if p.broken is None]
            if self._one_game or self._starting is None or self._starting.broken is not None:
                self._starting = None
                for p in self.programs:
                    if p.loop is loop and len(p.open_games) < p.games:
                        p.open_games.add(game)
                        return p, None
                cap = current().exec_processes
                if not cap or len(self.programs) < cap:
                    self._starting = self._spawn(game, loop)
                    return None, self._starting
        return None, None

    @contextlib.contextmanager
    def _starting_up(self, start: Program) -> Iterator[None]:
        """While ``start``'s hello is awaited; a failure names it (its stderr explains)."""
        try:
            yield
        except ProgramBroken as err:
            err.program = start
            raise
        finally:
            with self._lock:
                if self._starting is start:
                    self._starting = None

    def _busy(self, deadline: float) -> None:
        if time.monotonic() >= deadline:
            cap = current().exec_processes
            raise ProgramBroken(f"every one of its {cap} processes was busy "
                                "(--exec-processes, SUECA_EXEC_PROCESSES)")

    def _spawn(self, game: str, loop: asyncio.AbstractEventLoop | None) -> Program:
        try:
            program = Program(self.argv, self.label, loop)
        except OSError as err:
            raise ProgramBroken(f"could not start: {err.strerror or err}") from None
        program.open_games.add(game)
        self.programs.append(program)
        _LIVE.add(program)
        return program

    def games_now(self) -> int:
        """How many games one of its blocking processes takes at once (its hello's
        ``"games"``): a running one's, else a process is started and its hello awaited (within
        the self-play timeout); 1 when it cannot start (the first game then says why)."""
        probe = "(how many games)"  # a slot held, never a game the program hears of
        try:
            program = self.place_now(probe, time.monotonic() + current().exec_timeout)
        except ProgramBroken:
            return 1
        games = program.games
        self.release(program, probe)
        return games

    def release(self, program: Program, game: str) -> None:
        """``game`` is over on ``program``: a one-game process is closed, a many-games one
        kept for the next game."""
        with self._lock:
            program.open_games.discard(game)
            idle = program.games == 1 and not program.open_games
        if idle:
            program.close()


class _ExecSeat(Bot):
    """What both faces of an ``exec:`` bot share: its game, its turns, the lines it owes the
    program, and how a lost game is told."""

    def __init__(self, command: ExecCommand) -> None:
        self.command = command
        self.program: Program | None = None
        self.game = ""
        self.turns = 0
        self.lost: str | None = None  # why this game is lost, once it is
        self.timeout = current().exec_timeout  # seconds a self-play answer may take
        # lines not yet written: the start, tricks and deals go with the next turn (one write,
        # one wake-up of the program per turn), the rest with the match's end
        self._pending: list[bytes] = []
        self._release: Callable[[], object] = _nothing

    def on_match_start(self, info: MatchInfo) -> None:
        # a game id unique among the games one process may hold: the match id names a match
        # (in self-play both seats of a team share it), the seat makes it one seat's
        self.game = f"{info.match_id}/{info.seat}"
        self._pending = [protocol.start(self.game, info)]
        self._text = protocol.GameLines(self.game)

    def _limit(self) -> tuple[float, int]:
        """This turn's deadline (``time.monotonic()``) and the milliseconds the program is
        told it has: the self-play timeout, or the referee's clock and a grace."""
        if self.lost is not None:
            raise ExecBotError(self.lost)
        clock = self.clock
        if clock is None:
            limit = self.timeout
            ms = int(limit * 1000)
        else:
            left = max(0.0, clock.left())
            limit, ms = left + NET_GRACE, int(left * 1000)
        return time.monotonic() + limit, ms

    def _placed(self, program: Program) -> Program:
        self.program = program
        # released at the match's end, or when this bot is dropped without one (a match
        # another seat broke): a one-game process never outlives its game
        self._release = weakref.finalize(self, self.command.release, program, self.game)
        return program

    def _lines(self, kind: str, obs: Observation, ms: int) -> bytes:
        """What goes to the program for this turn: the pending lines, then the turn."""
        self.turns += 1
        self._pending.append(self._text.turn(self.turns, kind, obs, ms))
        data = b"".join(self._pending)
        self._pending = []
        return data

    def _late(self, ms: int) -> ProgramBroken:
        return ProgramBroken(f"late: no answer to turn {self.turns} within {ms} ms")

    def _card(self, answer: dict[str, Any], obs: Observation) -> Card | ProtocolError:
        try:
            return protocol.card_of(answer, obs.legal)
        except protocol.ProtocolError as err:
            return err

    def _decision(self, answer: dict[str, Any]) -> bool | ProtocolError:
        try:
            return protocol.redeal_of(answer)
        except protocol.ProtocolError as err:
            return err

    def _lost(self, reason: str, whole: bool, program: Program | None) -> Program | None:
        """This game is lost: end the program (all of it when ``whole``, or when it plays only
        this game); returns the program whose stderr to wait for, if it was ended."""
        program = self.program or program
        self.lost = reason
        if program is not None and (whole or program.games == 1):
            program.fail(reason)
            return program
        return None

    def _told(self, reason: str, program: Program | None) -> ExecBotError:
        """Log why with the tail of its stderr, and return the error to raise. ``program``: the
        one that failed before it was this game's (no hello)."""
        program = self.program or program
        tail = "(not started)"
        if program is not None:
            self._release()
            tail = program.stderr_tail()
        log.error("exec bot %s lost game %s: %s; its stderr ends: %s", self.command.label,
                  self.game, reason, tail, extra={"game_id": self.game})
        return ExecBotError(reason)

    def on_trick_end(self, trick: Trick) -> None:
        if self.lost is None:
            self._pending.append(self._text.trick(trick))

    def on_deal_end(self, result: DealResult) -> None:
        if self.lost is None:
            self._pending.append(protocol.deal(self.game, result))

    def on_match_end(self, game_points: tuple[int, int], winner: int | None, end: End) -> None:
        program = self.program
        if program is not None and self.lost is None:
            self._pending.append(protocol.end(self.game, game_points, winner, end))
            program.send(b"".join(self._pending))
        self._pending = []
        self._release()


class ExecBot(_ExecSeat):
    """One seat of one match played by an ``exec:`` program, its turns awaited on the running
    event loop, which reads the program's pipes (the network client: see the module's
    docstring)."""

    async def play(self, observation: Observation) -> Card:
        answer = await self._ask("play", observation)
        card = self._card(answer, observation)
        if isinstance(card, ProtocolError):
            raise await self._lose(str(card), whole=False) from None
        return card

    async def redeal(self, observation: Observation) -> bool:
        answer = await self._ask("redeal", observation)
        decision = self._decision(answer)
        if isinstance(decision, ProtocolError):
            raise await self._lose(str(decision), whole=False) from None
        return decision

    async def _ask(self, kind: str, obs: Observation) -> dict[str, Any]:
        deadline, ms = self._limit()
        try:
            program = self.program or self._placed(await self.command.place(self.game,
                                                                            deadline))
            data = self._lines(kind, obs, ms)
            answer = program.expect(self.game, self.turns)
            program.send(data)
            timer = asyncio.get_running_loop().call_later(
                max(0.0, deadline - time.monotonic()), _expire, answer)
            try:
                return await answer
            except TimeoutError:
                program.forget(self.game, self.turns)
                raise self._late(ms) from None
            finally:
                timer.cancel()
        except ProgramBroken as err:
            raise await self._lose(str(err), whole=True, program=err.program) from None

    async def _lose(self, reason: str, whole: bool,
                    program: Program | None = None) -> ExecBotError:
        ended = self._lost(reason, whole, program)
        if ended is not None:
            await asyncio.to_thread(ended.wait_stderr, 0.5)
        return self._told(reason, program)


class BlockingExecBot(_ExecSeat):
    """One seat of one match played by an ``exec:`` program, asked in the caller's thread,
    which writes the turn and reads the answer itself, blocking until it comes or the turn's
    time is up: self-play, ``duel`` and local play, where nothing else waits on this thread."""

    def play(self, observation: Observation) -> Card:
        card = self._card(self._ask("play", observation), observation)
        if isinstance(card, ProtocolError):
            raise self._lose(str(card), whole=False) from None
        return card

    def redeal(self, observation: Observation) -> bool:
        decision = self._decision(self._ask("redeal", observation))
        if isinstance(decision, ProtocolError):
            raise self._lose(str(decision), whole=False) from None
        return decision

    def _ask(self, kind: str, obs: Observation) -> dict[str, Any]:
        deadline, ms = self._limit()
        try:
            program = self.program or self._placed(self.command.place_now(self.game, deadline))
            data = self._lines(kind, obs, ms)
            answer = program.ask(self.game, self.turns, data, deadline)
            if answer is None:
                raise self._late(ms)
            return answer
        except ProgramBroken as err:
            raise self._lose(str(err), whole=True, program=err.program) from None

    # -- many games in flight (sueca.sdk.selfplay): a turn posted now, its answer taken later
    def post(self, kind: str, obs: Observation, ready: list[object]) -> Program:
        """Post this turn (``kind`` "play" or "redeal") without waiting: it goes out with the
        other games' turns at the program's next :meth:`~.program.Program.flush_posted`, and
        this bot is appended to ``ready`` once its answer (or the program's failure) is read.
        Returns the program to flush and read; :class:`ExecBotError` as from :meth:`play`."""
        deadline, ms = self._limit()
        try:
            program = self.program or self._placed(self.command.place_now(self.game, deadline))
            data = self._lines(kind, obs, ms)
            self._posted = (program.post(self.game, self.turns, data, deadline=deadline,
                                         tag=self, ready=ready), ms)
            return program
        except ProgramBroken as err:
            raise self._lose(str(err), whole=True, program=err.program) from None

    def deadline(self) -> float:
        """When the posted turn's time is up (``time.monotonic()``)."""
        return self._posted[0].deadline

    def collect(self, kind: str, obs: Observation) -> Card | bool:
        """The posted turn's card (or redeal decision), checked as :meth:`play` checks it;
        late when its answer has not been read by its deadline."""
        waiter, ms = self._posted
        try:
            answer = self.program.take(self.game, self.turns, waiter)  # type: ignore[union-attr]
            if answer is None:
                raise self._late(ms)
        except ProgramBroken as err:
            raise self._lose(str(err), whole=True, program=err.program) from None
        if kind == "redeal":
            decision = self._decision(answer)
            if isinstance(decision, ProtocolError):
                raise self._lose(str(decision), whole=False) from None
            return decision
        card = self._card(answer, obs)
        if isinstance(card, ProtocolError):
            raise self._lose(str(card), whole=False) from None
        return card

    def _lose(self, reason: str, whole: bool, program: Program | None = None) -> ExecBotError:
        ended = self._lost(reason, whole, program)
        if ended is not None:
            ended.wait_stderr(0.5)
        return self._told(reason, program)


def _seat(command: ExecCommand) -> _ExecSeat:
    """A bot for one seat: blocking where no event loop runs in this thread (self-play, duel),
    else one whose turns the loop awaits."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return BlockingExecBot(command)
    return ExecBot(command)


def command_of(factory: object) -> ExecCommand | None:
    """The :class:`ExecCommand` of a factory :func:`load_exec` made, else None."""
    if isinstance(factory, functools.partial) and factory.func is _seat:
        command = factory.args[0]
        return command if isinstance(command, ExecCommand) else None
    return None


def _expire(answer: asyncio.Future[dict[str, Any]]) -> None:
    """The turn's time is up (a timer, cheaper than ``asyncio.wait_for`` on every turn)."""
    if not answer.done():
        answer.set_exception(TimeoutError())


def _nothing() -> None:
    pass


_COMMANDS: dict[tuple[str, ...], ExecCommand] = {}
_COMMANDS_LOCK = threading.Lock()
_LIVE: weakref.WeakSet[Program] = weakref.WeakSet()


def load_exec(spec: str) -> Callable[[], Bot]:
    """The factory of the ``exec:COMMAND ARGS...`` bot ``spec``: the command is split as a
    POSIX shell splits words (quotes, backslashes), never run by a shell. The program must
    exist now (a path, or a name on ``PATH``); :class:`ExecSpecError` otherwise. The same
    command always gets the same :class:`ExecCommand`, so its processes are shared."""
    command = spec.strip()[len(PREFIX):]
    try:
        argv = shlex.split(command)
    except ValueError as err:
        raise ExecSpecError(f"bad bot {shown(spec, 120)}: {err} (the command is split as a "
                            "shell would split it)") from None
    if not argv:
        raise ExecSpecError(f"bad bot {shown(spec, 120)}: no command after 'exec:', e.g. "
                            "exec:./mybot or exec:'node bot.js'")
    program = argv[0]
    if os.sep in program:
        if not os.path.isfile(program):
            raise ExecSpecError(f"bot {shown(spec, 120)}: no file {shown(program, 120)}")
        if not os.access(program, os.X_OK):
            raise ExecSpecError(f"bot {shown(spec, 120)}: {shown(program, 120)} is not "
                                f"executable (chmod +x {shlex.quote(program)})")
        argv[0] = os.path.abspath(program)  # the same file whatever the runner's directory
    elif shutil.which(program) is None:
        raise ExecSpecError(f"bot {shown(spec, 120)}: no program {shown(program, 120)} on "
                            "PATH (install it, or give its path)")
    key = tuple(argv)
    with _COMMANDS_LOCK:
        found = _COMMANDS.get(key)
        if found is None:
            found = _COMMANDS[key] = ExecCommand(spec.strip(), argv)
    return functools.partial(_seat, found)


@atexit.register
def _kill_all() -> None:
    """Leave no program running when this process ends."""
    for program in list(_LIVE):
        program.kill()

