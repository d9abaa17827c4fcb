"""The referee checks: hostile-bot scripts run as a client against a referee, checking what it
promises a bot (docs/protocol.md, tests/referee/test_faults.py), so that a referee written
in another language can be held to this one.

The kit connects as one registered bot (its token: ``SUECA_TOKEN``) with capacity 4, asks the
referee's MatchService for matches seating that bot in all four seats (with the operator token
when the referee wants one: ``--operator-token-file`` or ``SUECA_OPERATOR_TOKEN``), and plays
them over raw gRPC, misbehaving on purpose where a check says so.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc

from sueca import codec
from sueca.arena.conformance.report import Check, Checks, shown
from sueca.engine import End
from sueca.referee.security import operator_metadata
from sueca.v1 import sueca_pb2 as pb

__all__ = ["CHECKS", "check_referee"]

CHECKS = (
    ("bad-token", "a wrong token is refused UNAUTHENTICATED, its secret never repeated"),
    ("no-hello", "a first message without hello is refused INVALID_ARGUMENT"),
    ("bad-capacity", "capacity 0 is refused INVALID_ARGUMENT"),
    ("welcome", "a good hello is welcomed with the capacity asked and a referee id"),
    ("match-start", "a match seating the bot four times starts four games with distinct "
                    "opaque ids, seats 0..3"),
    ("faults", "unknown game, card not in hand, wrong request id, card 77 and garbage bytes "
               "each get their ActionError, and the turn stays open"),
    ("stale-answer", "a second answer to a request is refused stale_request, not applied"),
    ("renuncia", "a card that does not follow suit ends the deal as renuncia by that seat"),
    ("timeout", "a turn left unanswered past its move time and bank ends the match as "
                "timeout, charged to that seat"),
    ("late", "an answer to a game that has ended is refused with code late"),
    ("resign", "an Action that resigns ends the match at once as bot_error by that seat, "
               "the reason kept in fault_detail"),
    ("oversized", "a message over 64 KiB ends the stream RESOURCE_EXHAUSTED; back within the "
                  "grace time, the game and its open turn are sent again"),
    ("drain", "drain is acknowledged with a welcome of capacity 0; running games go on"),
)
TURN = pb.TurnRequest.PLAY
CONNECT = "/sueca.v1.BotService/Connect"
RUN_MATCH = "/sueca.v1.MatchService/RunMatch"
OVERSIZED = 70 * 1024
SHORT_MOVE_MS = 300  # the timeout match's clock: this per move and no bank
RESIGN_REASON = "conformance: resigning on purpose \x1b[1m(an escape to be escaped)"


class _Bot:
    """One raw bot stream: send BotMessages or bytes, read RefereeMessages with a timeout."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.out: asyncio.Queue[bytes | None] = asyncio.Queue()
        connect = channel.stream_stream(CONNECT, request_serializer=lambda b: b,
                                        response_deserializer=pb.RefereeMessage.FromString)
        self.call: Any = connect(self._requests())
        self.status: tuple[grpc.StatusCode, str] | None = None

    async def _requests(self) -> AsyncIterator[bytes]:
        while (item := await self.out.get()) is not None:
            yield item

    def send(self, msg: pb.BotMessage | bytes) -> None:
        self.out.put_nowait(msg if isinstance(msg, bytes) else msg.SerializeToString())

    async def next(self, seconds: float) -> pb.RefereeMessage | None:
        """The next message; None once the stream ended (``status`` says how)."""
        try:
            msg = await asyncio.wait_for(self.call.read(), seconds)
        except grpc.aio.AioRpcError as err:
            self.status = (err.code(), err.details() or "")
            return None
        if msg is grpc.aio.EOF:
            self.status = (grpc.StatusCode.OK, "")
            return None
        assert isinstance(msg, pb.RefereeMessage)
        return msg

    async def expect(self, what: str, seconds: float,
                     want: Callable[[pb.RefereeMessage], bool]) -> pb.RefereeMessage:
        """Skip messages until one ``want``s; _Fail naming ``what`` if none comes."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while True:
            try:
                msg = await self.next(max(0.001, deadline - loop.time()))
            except TimeoutError:
                raise _Fail(f"no {what} within {seconds:g}s") from None
            if msg is None:
                raise _Fail(f"the stream ended before {what}: {self._said()}")
            if want(msg):
                return msg

    def _said(self) -> str:
        if self.status is None:
            return "still open"
        return f"{self.status[0].name}: {shown(self.status[1], 120)}"

    def close(self) -> None:
        self.out.put_nowait(None)
        self.call.cancel()


class _Fail(Exception):
    """A check failed; the message says what was wrong."""


def _hello(name: str, token: str, capacity: int = 4) -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(bot=name, token=token, capacity=capacity,
                                        sdk_version="sueca-conformance"))


def _action(turn: pb.TurnRequest, **choice: Any) -> pb.BotMessage:
    return pb.BotMessage(actions=[pb.Action(game_id=turn.game_id, request_id=turn.request_id,
                                            **choice)])


def _answer(turn: pb.TurnRequest) -> pb.Action:
    if turn.kind != TURN:
        return pb.Action(game_id=turn.game_id, request_id=turn.request_id, redeal=False)
    return pb.Action(game_id=turn.game_id, request_id=turn.request_id,
                     card=turn.observation.legal[0])


class _Run:
    def __init__(self, address: str, token: str, *, seconds: float,
                 progress: Callable[[str], None], operator_token: str | None = None) -> None:
        self.address, self.token, self.seconds = address, token, seconds
        self.operator = operator_metadata(operator_token)
        self.name = token.rpartition(".")[0]
        self.progress = progress
        self.checks = Checks(CHECKS)
        self.channel = grpc.aio.insecure_channel(address)

    async def refused(self, check: Check, first: pb.BotMessage,
                      code: grpc.StatusCode, secret: str = "") -> None:
        bot = _Bot(self.channel)
        bot.send(first)
        try:
            msg = await bot.next(self.seconds)
        except TimeoutError:
            check.failed(f"no answer within {self.seconds:g}s; expected {code.name}")
            bot.close()
            return
        bot.close()
        if msg is not None:
            check.failed(f"answered with a message ({'welcome' if msg.HasField('welcome') else 'other'}), "
                         f"expected {code.name}")
        elif bot.status is None or bot.status[0] != code:
            check.failed(f"ended {bot._said()}, expected {code.name}")
        elif secret and secret in bot.status[1]:
            check.failed("the refusal repeats the secret that was sent")
        else:
            check.passed(f"{code.name}: {shown(bot.status[1], 80)}")

    async def connect(self) -> _Bot:
        bot = _Bot(self.channel)
        bot.send(_hello(self.name, self.token))
        msg = await bot.expect("a welcome", self.seconds, lambda m: True)
        if not msg.HasField("welcome"):
            raise _Fail("the first message after a good hello is not a welcome")
        if msg.welcome.capacity != 4 or not msg.welcome.referee_id:
            raise _Fail(f"welcome with capacity {msg.welcome.capacity} (asked 4) and referee "
                        f"id {shown(msg.welcome.referee_id)}")
        return bot

    def start_match(self, tag: str, **spec: int) -> asyncio.Future[codec.ResultDict]:
        """RunMatch for a match seating the kit's bot four times; resolves to its result (a
        dict, :func:`sueca.codec.result_to_dict`), or _Fail saying how RunMatch failed."""
        match_id = f"conformance-{tag}-{secrets.token_hex(4)}"
        request = codec.spec_to_pb({
            "bots": [self.name] * 4, "match_id": match_id, "seed": secrets.randbits(32),
            "move_ms": int(self.seconds * 1000), "grace_ms": int(self.seconds * 1000), **spec})
        request.quiet = True
        call = self.channel.unary_stream(
            RUN_MATCH, request_serializer=pb.MatchSpec.SerializeToString,
            response_deserializer=pb.MatchEvent.FromString)(
                request, timeout=max(60.0, 10 * self.seconds), metadata=self.operator)

        async def result() -> codec.ResultDict:
            try:
                async for event in call:
                    if event.HasField("result"):
                        return codec.result_to_dict(event.result)
            except grpc.aio.AioRpcError as err:
                raise _Fail(f"RunMatch failed: {err.code().name}: "
                            f"{shown(err.details() or '', 120)}") from None
            raise _Fail("RunMatch ended without a result")
        return asyncio.ensure_future(result())

    async def run(self) -> Checks:
        c = self.checks
        wrong = secrets.token_hex(8)
        self.progress("refusals: a wrong token, no hello, capacity 0")
        await self.refused(c["bad-token"], _hello(self.name, f"{self.name}.{wrong}"),
                           grpc.StatusCode.UNAUTHENTICATED, wrong)
        await self.refused(c["no-hello"], pb.BotMessage(actions=[pb.Action(game_id="x")]),
                           grpc.StatusCode.INVALID_ARGUMENT)
        await self.refused(c["bad-capacity"], _hello(self.name, self.token, 0),
                           grpc.StatusCode.INVALID_ARGUMENT)
        try:
            bot = await self.connect()
        except _Fail as err:
            c["welcome"].failed(str(err))
            return c
        c["welcome"].passed("capacity 4")
        try:
            await self._games(bot)
        except _Fail as err:
            for check in c.all():
                check.skipped(f"not reached: {err}")
        finally:
            bot.close()
            await self.channel.close()
        return c

    async def _games(self, bot: _Bot) -> None:
        c = self.checks
        self.progress("a match seating the bot four times: faults, stale answers, renúncia")
        match = self.start_match("faults")
        try:
            msg = await bot.expect("the match start", self.seconds, lambda m: bool(m.turns))
        except _Fail as err:
            c["match-start"].failed(f"{err} ({await _match_error(match)})")
            raise
        starts = [e for e in msg.events if e.HasField("match_start")]
        ids = {e.game_id for e in starts}
        seats = sorted(e.match_start.seat for e in starts)
        if len(starts) != 4 or len(ids) != 4 or seats != [0, 1, 2, 3]:
            c["match-start"].failed(f"{len(starts)} match starts, {len(ids)} distinct ids, "
                                    f"seats {seats} with the first turn")
        elif any("conformance" in gid for gid in ids):
            c["match-start"].failed("a game id names the match")
        else:
            c["match-start"].passed("4 games, distinct opaque ids")
        turn = msg.turns[0]
        await self._faults(bot, turn)
        turn = await self._stale(bot, turn)
        await self._renuncia(bot, turn, match)
        self.progress("a match on a short clock: timeout, then a late answer")
        await self._timeout(bot)
        self.progress("a match the bot resigns")
        await self._resign(bot)
        self.progress("a second match: an oversized message, reconnection, drain")
        match = self.start_match("oversized")
        msg = await bot.expect("the second match's first turn", self.seconds,
                               lambda m: bool(m.turns))
        bot = await self._oversized(bot, msg.turns[0])
        await self._drain(bot, match)

    async def _error(self, bot: _Bot, sent: pb.BotMessage | bytes, code: str,
                     turns: list[pb.TurnRequest]) -> str | None:
        """Send ``sent``; None if the next error has ``code``, else what was wrong."""
        bot.send(sent)
        try:
            msg = await bot.expect(f"an ActionError {code}", self.seconds,
                                   lambda m: bool(m.errors or m.turns))
        except _Fail as err:
            return str(err)
        turns += msg.turns
        if not msg.errors:
            return f"a new turn instead of the ActionError {code}: the fault was applied"
        got = msg.errors[0].code
        return None if got == code else f"ActionError {shown(got)}, expected {code}"

    async def _faults(self, bot: _Bot, turn: pb.TurnRequest) -> None:
        check = self.checks["faults"]
        hand = list(turn.observation.hand)
        not_held = next(x for x in range(40) if x not in hand)
        turns: list[pb.TurnRequest] = []
        cases = (
            ("unknown game", pb.BotMessage(actions=[pb.Action(
                game_id="no-such-game", request_id=turn.request_id, card=hand[0])]),
             "unknown_game"),
            ("a card not in hand", _action(turn, card=not_held), "not_in_hand"),
            ("a wrong request id", pb.BotMessage(actions=[pb.Action(
                game_id=turn.game_id, request_id=turn.request_id + 7,
                card=turn.observation.legal[0])]), "stale_request"),
            ("card 77", _action(turn, card=77), "malformed"),
            ("garbage bytes", b"\xff\xff\xff\xff garbage", "malformed"),
        )
        for what, sent, code in cases:
            problem = await self._error(bot, sent, code, turns)
            if problem is not None:
                check.failed(f"{what}: {problem}")
                if turns:
                    raise _Fail(f"the game moved on after {what}")
        if turns:
            return
        check.passed("five faults, five ActionErrors, the turn still open")

    async def _stale(self, bot: _Bot, turn: pb.TurnRequest) -> pb.TurnRequest:
        """Answer ``turn``, answer it again; the next turn of the match."""
        check = self.checks["stale-answer"]
        bot.send(pb.BotMessage(actions=[_answer(turn)]))
        msg = await bot.expect("the next turn", self.seconds, lambda m: bool(m.turns))
        nxt = msg.turns[0]
        if nxt.request_id == turn.request_id and nxt.game_id == turn.game_id:
            check.failed("the answered request was asked again")
        turns: list[pb.TurnRequest] = []
        problem = await self._error(bot, pb.BotMessage(actions=[_answer(turn)]),
                                    "stale_request", turns)
        if problem is not None and "out_of_turn" not in problem:
            check.failed(f"a second answer to request {turn.request_id}: {problem}")
        else:
            check.passed("refused, not applied")
        return turns[0] if turns else nxt

    async def _renuncia(self, bot: _Bot, turn: pb.TurnRequest,
                        match: asyncio.Future[codec.ResultDict]) -> None:
        """Play legal cards until one seat can break suit; break it; the deal must end as a
        renúncia by that seat, and the match (to 4) with it."""
        check = self.checks["renuncia"]
        for _ in range(200):
            obs = turn.observation
            off = [x for x in obs.hand if x not in obs.legal]
            if turn.kind == TURN and obs.trick and off:
                bot.send(_action(turn, card=off[0]))
                msg = await bot.expect("the deal end", self.seconds, lambda m: any(
                    e.HasField("deal_end") for e in m.events))
                end = next(e.deal_end for e in msg.events if e.HasField("deal_end"))
                if end.end != End.RENUNCIA or end.fault_seat != obs.seat:
                    check.failed(f"the deal ended {shown(end.end)} with fault seat "
                                 f"{end.fault_seat}, expected renuncia by seat {obs.seat}")
                else:
                    check.passed(f"renúncia by seat {obs.seat}")
                break
            bot.send(pb.BotMessage(actions=[_answer(turn)]))
            turn = (await bot.expect("a turn", self.seconds, lambda m: bool(m.turns))).turns[0]
        else:
            check.skipped("no seat could break suit in 200 turns")
        try:
            result = await asyncio.wait_for(match, self.seconds)
            if check.status == "pass" and result["end"] != End.RENUNCIA:
                check.failed(f"the match ended {shown(result['end'])}, expected renuncia")
        except Exception as err:
            check.failed(f"the match did not end: {shown(str(err), 120)}")

    async def _timeout(self, bot: _Bot) -> None:
        """Leave the first turn of a match on a short clock unanswered: the match must end as
        ``timeout`` charged to that seat; then answer it anyway: refused ``late``."""
        check, late = self.checks["timeout"], self.checks["late"]
        match = self.start_match("timeout", move_ms=SHORT_MOVE_MS, bank_ms=0)
        msg = await bot.expect("the timeout match's first turn", self.seconds,
                               lambda m: bool(m.turns))
        turn = msg.turns[0]
        seat = next((e.match_start.seat for e in msg.events if e.game_id == turn.game_id
                     and e.HasField("match_start")), None)
        wait = SHORT_MOVE_MS / 1000 + self.seconds
        ids = _started(msg)
        try:
            end = await bot.expect(f"the match end ({SHORT_MOVE_MS} ms to move, no bank)",
                                   wait, lambda m: _ended(m, ids))
        except _Fail as err:
            check.failed(str(err))
            late.skipped("not reached: the match did not end on time")
            return
        ends = {e.match_end.end for e in end.events if e.HasField("match_end")
                and e.game_id in ids}
        faults = {e.match_end.fault_seat for e in end.events if e.HasField("match_end")
                  and e.game_id in ids}
        result = await self._result(match, check)
        if result is None:
            pass
        elif ends != {End.TIMEOUT} or faults != {seat} or result["end"] != End.TIMEOUT \
                or result["fault_seat"] != seat:
            check.failed(f"the match ended {shown(result['end'])} (games: "
                         f"{shown(sorted(ends))}) with fault seat {result['fault_seat']}, "
                         f"expected timeout by seat {seat}, which never answered")
        else:
            check.passed(f"timeout by seat {seat} after {SHORT_MOVE_MS} ms, no bank")
        problem = await self._error(bot, pb.BotMessage(actions=[_answer(turn)]), "late", [])
        if problem is not None:
            late.failed(f"an answer after the game ended: {problem}")
        else:
            late.passed("refused late")

    async def _resign(self, bot: _Bot) -> None:
        """Resign the first turn of a match: it must end at once as ``bot_error`` by that
        seat, the reason in the result's ``fault_detail``, escaped."""
        check = self.checks["resign"]
        match = self.start_match("resign")
        msg = await bot.expect("the resign match's first turn", self.seconds,
                               lambda m: bool(m.turns))
        turn = msg.turns[0]
        seat = next((e.match_start.seat for e in msg.events if e.game_id == turn.game_id
                     and e.HasField("match_start")), None)
        bot.send(_action(turn, resign=pb.Resign(reason=RESIGN_REASON)))
        ids = _started(msg)
        try:
            await bot.expect("the match end after resigning", self.seconds,
                             lambda m: _ended(m, ids))
        except _Fail as err:
            check.failed(str(err))
            return
        result = await self._result(match, check)
        want = codec.fault_detail(RESIGN_REASON)
        if result is None:
            pass
        elif result["end"] != End.BOT_ERROR or result["fault_seat"] != seat:
            check.failed(f"the match ended {shown(result['end'])} with fault seat "
                         f"{result['fault_seat']}, expected bot_error by seat {seat}")
        elif result["fault_detail"] != want:
            check.failed(f"fault_detail {shown(result['fault_detail'])}, expected {want!r}")
        else:
            check.passed(f"bot_error by seat {seat}, the reason escaped in fault_detail")

    async def _result(self, match: asyncio.Future[codec.ResultDict],
                      check: Check) -> codec.ResultDict | None:
        """The match's result, or None (the check failed, saying why)."""
        try:
            return await asyncio.wait_for(match, self.seconds)
        except _Fail as err:
            check.failed(str(err))
        except TimeoutError:
            check.failed(f"RunMatch gave no result within {self.seconds:g}s of the match end")
        return None

    async def _oversized(self, bot: _Bot, turn: pb.TurnRequest) -> _Bot:
        check = self.checks["oversized"]
        bot.send(pb.BotMessage(actions=[pb.Action(game_id="x" * OVERSIZED, card=1)]))
        try:
            await bot.expect("the end of the stream", self.seconds, lambda m: False)
        except _Fail:
            pass
        if bot.status is None or bot.status[0] != grpc.StatusCode.RESOURCE_EXHAUSTED:
            check.failed(f"a {OVERSIZED}-byte message: the stream {bot._said()}, expected "
                         "RESOURCE_EXHAUSTED")
        bot.close()
        again = await self.connect()
        msg = await again.expect("the open turn again", self.seconds, lambda m: bool(m.turns))
        starts = {e.game_id for e in msg.events if e.HasField("match_start")}
        back = msg.turns[0]
        if turn.game_id not in starts or (back.game_id, back.request_id) != (
                turn.game_id, turn.request_id):
            check.failed("after coming back, the game's start and its open turn (same game "
                         "and request id) were not sent again")
        else:
            check.passed("refused; the open turn sent again on the new stream")
        self._turn = back
        return again

    async def _drain(self, bot: _Bot, match: asyncio.Future[codec.ResultDict]) -> None:
        check = self.checks["drain"]
        bot.send(pb.BotMessage(drain=True, actions=[_answer(self._turn)]))
        acked = False
        while not match.done():
            try:
                msg = await bot.next(self.seconds)
            except TimeoutError:
                break
            if msg is None:
                break
            if msg.HasField("welcome") and msg.welcome.capacity == 0:
                acked = True
            if msg.turns:
                bot.send(pb.BotMessage(actions=[_answer(t) for t in msg.turns]))
            if any(e.HasField("match_end") for e in msg.events):
                break
        try:
            result = await asyncio.wait_for(match, self.seconds)
        except Exception as err:
            check.failed(f"the running match did not finish after the drain: "
                         f"{shown(str(err), 120)}")
            return
        if not acked:
            check.failed("no welcome of capacity 0 acknowledged the drain")
        else:
            check.passed(f"acknowledged; the running match ended {result['end']}")


def _started(msg: pb.RefereeMessage) -> set[str]:
    """The games a message starts."""
    return {e.game_id for e in msg.events if e.HasField("match_start")}


def _ended(msg: pb.RefereeMessage, games: set[str]) -> bool:
    """Does the message end one of ``games`` (not a game of an earlier match)?"""
    return any(e.HasField("match_end") and e.game_id in games for e in msg.events)


async def _match_error(match: asyncio.Future[codec.ResultDict]) -> str:
    if not match.done():
        return "the match call is still waiting"
    err = match.exception()
    return "the match ended" if err is None else f"RunMatch failed: {shown(str(err), 160)}"


async def check_referee(address: str, token: str, *, seconds: float,
                        progress: Callable[[str], None] = lambda line: None,
                        operator_token: str | None = None) -> Checks:
    """Run every referee check against the referee at ``address`` as the bot of ``token``;
    matches are asked for with ``operator_token`` (default ``SUECA_OPERATOR_TOKEN``, if set)."""
    return await _Run(address, token, seconds=seconds, progress=progress,
                      operator_token=operator_token).run()
