"""``MatchService``, the operator API: run a match on the connected bots and stream its
events (RunMatch), watch a running one (Watch), list the bots (ListBots), each call behind the
operator token when the referee has one.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import time
import uuid
from collections.abc import AsyncIterator
from functools import partial
from typing import TypeVar

import grpc

from sueca import codec as conv
from sueca.engine.game import End
from sueca.referee import metrics
from sueca.referee.auth import Authenticator
from sueca.referee.clocked_match import ClockedMatch, Listener
from sueca.referee.house import is_house_name
from sueca.referee.limits import AccessLog, AddressBudget, peer_address, shown
from sueca.referee.security import AUTHORIZATION, BEARER
from sueca.referee.sessions import PlacementError, SessionHub
from sueca.sdk.logs import bind
from sueca.v1 import sueca_pb2 as pb
from sueca.v1 import sueca_pb2_grpc as pb_grpc

__all__ = ["MatchService", "WATCH_QUEUE_LIMIT"]

log = logging.getLogger("sueca.referee")

WATCH_QUEUE_LIMIT = 10_000     # a spectator this far behind is cut off, never the match slowed
_Request = TypeVar("_Request")
_Response = TypeVar("_Response")


async def _events(listener: Listener) -> AsyncIterator[pb.MatchEvent]:
    """A listener's events as they come, up to and including the result."""
    queue = listener.queue
    while True:
        event = await queue.get()
        yield event
        if event.HasField("result"):
            return


class MatchService(pb_grpc.MatchServiceServicer):
    """The matches of one referee, run on the sessions of ``hub``.

    ``operator_token`` (None: anyone may call, as on a private network) is checked on every
    call; wrong ones spend the caller's address's ``refusals`` budget. ``accepting`` false
    (shutting down): RunMatch is refused UNAVAILABLE."""

    def __init__(self, hub: SessionHub, auth: Authenticator, *, referee_id: str,
                 seed_key: bytes, operator_token: str | None, refusals: AddressBudget,
                 access: AccessLog) -> None:
        self.hub = hub
        self.auth = auth
        self.referee_id = referee_id  # operators see this one (ListBots)
        self.seed_key = seed_key
        self.operator_token = operator_token.encode() if operator_token else None
        self.operator_refusals = refusals  # wrong operator tokens, per address: guesses
        self.access = access
        self.matches: dict[str, ClockedMatch] = {}
        self.accepting = True
        self._tasks: set[asyncio.Task[pb.MatchResult]] = set()

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

    def _match_done(self, task: asyncio.Task[pb.MatchResult], match_id: str) -> None:
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
        return pb.ListBotsResponse(referee_id=self.referee_id, bots=self.hub.status(),
                                   unix_ms=int(time.time() * 1000))

    async def drain(self, seconds: float) -> None:
        """Let the running matches finish for ``seconds``; end the rest as ``aborted`` (never
        a result) and wait until they have."""
        running = [r for r in self.matches.values() if not r.done.is_set()]
        if not running:
            return
        log.info("shutting down: waiting up to %.0fs for %d running match(es)",
                 seconds, len(running))
        deadline = time.monotonic() + seconds
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
