"""A small synchronous client of the referee's MatchService, for Celery workers and the CLI.

>>> result = run_match("127.0.0.1:50051", {"bots": ["alice", "bob", "alice", "bob"], "seed": 7})
>>> result["winner"], result["game_points"], result["replay"]["deals"][0]["trump"]

Errors are :class:`RefereeError` subclasses whose message is the referee's own (it names the
bot, field or value at fault); like ``grpc.RpcError`` they answer ``code()`` (a
``grpc.StatusCode``) and ``details()``. A match the referee had to
abort (shutdown, caller gone) raises :class:`MatchAborted`: an aborted match is never a result,
the caller runs it again.

Transport security comes from the settings (:mod:`sueca.sdk.channels`): ``SUECA_TLS_CA`` or
``SUECA_TLS=1`` for a TLS referee, ``SUECA_OPERATOR_TOKEN`` sent with every call to a referee
that requires it. League workers and the CLI therefore reach a secured referee without any
flag; a bad CA file raises :class:`sueca.sdk.channels.CredentialsError` (a ``ValueError``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import nullcontext
from typing import Any, Protocol, TypedDict

import grpc

from sueca import codec as conv
from sueca.codec import ResultDict, SpecDict
from sueca.engine import End
from sueca.referee.security import operator_metadata
from sueca.sdk.channels import client_tls_from_env, open_aio_channel, open_channel
from sueca.v1 import sueca_pb2 as pb
from sueca.v1 import sueca_pb2_grpc as pb_grpc

__all__ = ["RefereeError", "BadSpec", "BotUnavailable", "RefereeUnavailable", "MatchAborted",
           "BotStatus", "ResultDict", "channel", "aio_channel", "run_match", "run_match_async",
           "list_bots", "RefereeStatus", "status", "watch", "watch_async", "CHANNEL_OPTIONS"]

#: The options of every channel to a referee, for a caller that opens its own channel
#: (interceptors, extra metadata room) and should keep them: a replay can be megabytes, and
#: a RunMatch is quiet until its result, so the channel pings every 10 s: a referee whose host
#: is lost without a word (a cable pulled, a machine frozen) is noticed within ~15 s and the
#: call fails (UNAVAILABLE), instead of holding a worker until the match's timeout.
CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0))


class RefereeError(Exception):
    """The referee refused or failed a call; ``code()`` is the gRPC status."""

    def __init__(self, message: str, code: grpc.StatusCode = grpc.StatusCode.UNKNOWN) -> None:
        super().__init__(message)
        self.status = code

    def code(self) -> grpc.StatusCode:
        return self.status

    def details(self) -> str:
        return str(self)


class BadSpec(RefereeError):
    """INVALID_ARGUMENT: the spec is wrong (bad variant, deck, seat count...). Do not retry."""


class BotUnavailable(RefereeError):
    """A bot is unknown (NOT_FOUND), not connected here (FAILED_PRECONDITION) or has no free
    capacity (RESOURCE_EXHAUSTED): try later or on another replica."""


class RefereeUnavailable(RefereeError):
    """The referee is unreachable, shutting down, or the call timed out: retry elsewhere."""


class MatchAborted(RefereeError):
    """The match started but was aborted; ``result`` holds the partial record. Run it again."""

    def __init__(self, message: str, result: ResultDict) -> None:
        super().__init__(message, grpc.StatusCode.ABORTED)
        self.result = result


_BY_CODE = {
    grpc.StatusCode.INVALID_ARGUMENT: BadSpec,
    grpc.StatusCode.ALREADY_EXISTS: BadSpec,
    grpc.StatusCode.NOT_FOUND: BotUnavailable,
    grpc.StatusCode.FAILED_PRECONDITION: BotUnavailable,
    grpc.StatusCode.RESOURCE_EXHAUSTED: BotUnavailable,
    grpc.StatusCode.UNAVAILABLE: RefereeUnavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: RefereeUnavailable,
    grpc.StatusCode.CANCELLED: RefereeUnavailable,
}
# UNAUTHENTICATED (no or wrong operator token) stays a plain RefereeError: control does not
# retry it; the league's match job treats it as the worker's configuration (Transient, named).


class BotStatus(TypedDict):
    """One bot as :func:`list_bots` reports it: its sessions on the referee and their games."""

    bot: str
    sessions: int  # connected sessions (bot processes)
    capacity: int  # games those sessions can play at once
    free: int      # of which not in use
    referee: str   # the referee's id (its ListBots answer)


class _MatchService(Protocol):
    """The generated ``sueca_pb2_grpc.MatchServiceStub`` on a synchronous channel: its calls,
    typed (grpcio-tools generates the class without annotations)."""

    RunMatch: grpc.UnaryStreamMultiCallable[pb.MatchSpec, pb.MatchEvent]
    Watch: grpc.UnaryStreamMultiCallable[pb.WatchRequest, pb.MatchEvent]
    ListBots: grpc.UnaryUnaryMultiCallable[pb.ListBotsRequest, pb.ListBotsResponse]


def _stub(channel: grpc.Channel) -> _MatchService:
    # the generated class is unannotated: _MatchService says what its instances hold
    stub: _MatchService = pb_grpc.MatchServiceStub(channel)  # type: ignore[no-untyped-call]
    return stub


def _error(err: grpc.RpcError, address: str) -> RefereeError:
    code = err.code()
    details = err.details() or str(code)
    if code is grpc.StatusCode.UNAVAILABLE:
        details = f"referee {address} unavailable: {details}"
    cls = _BY_CODE.get(code, RefereeError)
    return cls(details, code if code is not None else grpc.StatusCode.UNKNOWN)


def channel(address: str) -> grpc.Channel:
    """A channel to the referee at ``address`` that several :func:`run_match` calls (from any
    threads) may share: one connection instead of one per match. Close it when done. TLS when
    the environment asks for it (see the module's notes)."""
    return _open(address)


def _open(address: str) -> grpc.Channel:
    # run_match's ``channel`` parameter hides the public name there
    return open_channel(address, client_tls_from_env(), CHANNEL_OPTIONS)


def aio_channel(address: str) -> grpc.aio.Channel:
    """:func:`channel` for ``grpc.aio`` (:func:`run_match_async`); open it in the event loop
    that will use it."""
    return open_aio_channel(address, client_tls_from_env(), CHANNEL_OPTIONS)


def run_match(address: str, spec: SpecDict, timeout: float | None = 600.0, *,
              on_event: Callable[[dict[str, Any]], None] | None = None,  # Any: event JSON
              channel: grpc.Channel | None = None) -> ResultDict:
    """Run one match on the referee at ``address`` and return its result::

        {"match_id", "end", "winner" (team or None), "game_points", "fault_seat", "fault_bot",
         "replay" (the sueca-replay/1 record)}

    ``spec`` is a dict (see :func:`sueca.codec.spec_to_pb`); unless ``on_event`` is
    given the referee is asked for a quiet stream (no per-card events). ``on_event`` receives
    every public event as a dict. ``channel`` (see :func:`channel`) reuses a connection to
    ``address``; by default the call opens and closes its own. Raises a :class:`RefereeError`
    subclass.
    """
    try:
        request = conv.spec_to_pb(spec)
    except conv.SpecError as err:
        raise BadSpec(str(err), grpc.StatusCode.INVALID_ARGUMENT) from None
    if on_event is None and "quiet" not in spec:
        request.quiet = True
    if channel is None:
        with _open(address) as own:
            result = _run_match(own, address, request, timeout, on_event)
    else:
        result = _run_match(channel, address, request, timeout, on_event)
    return _checked(result, address)


def _run_match(channel: grpc.Channel, address: str, request: pb.MatchSpec,
               timeout: float | None,
               on_event: Callable[[dict[str, Any]], None] | None) -> ResultDict | None:
    stub = _stub(channel)
    result: ResultDict | None = None
    try:
        for event in stub.RunMatch(request, timeout=timeout, wait_for_ready=False,
                                   metadata=operator_metadata()):
            if on_event is not None:
                on_event(conv.event_to_dict(event))
            if event.HasField("result"):
                result = conv.result_to_dict(event.result)
    except grpc.RpcError as err:
        raise _error(err, address) from None
    return result


async def run_match_async(channel: grpc.aio.Channel, address: str, spec: SpecDict,
                          timeout: float | None = 600.0) -> ResultDict:
    """:func:`run_match` on a ``grpc.aio`` channel to ``address`` (a quiet stream): for a
    scheduler that runs many matches at once from one event loop instead of a thread each."""
    try:
        request = conv.spec_to_pb(spec)
    except conv.SpecError as err:
        raise BadSpec(str(err), grpc.StatusCode.INVALID_ARGUMENT) from None
    if "quiet" not in spec:
        request.quiet = True
    call = channel.unary_stream(
        "/sueca.v1.MatchService/RunMatch", request_serializer=pb.MatchSpec.SerializeToString,
        response_deserializer=pb.MatchEvent.FromString)(request, timeout=timeout,
                                                        metadata=operator_metadata())
    result: ResultDict | None = None
    try:
        async for event in call:
            if event.HasField("result"):
                result = conv.result_to_dict(event.result)
    except grpc.RpcError as err:
        raise _error(err, address) from None
    return _checked(result, address)


def _checked(result: ResultDict | None, address: str) -> ResultDict:
    if result is None:
        raise RefereeError(f"referee {address} ended match stream without a result")
    if result["end"] is End.ABORTED:
        raise MatchAborted(f"match {result['match_id']!r} was aborted by referee {address}",
                           result)
    return result


def list_bots(address: str, timeout: float = 5.0) -> list[BotStatus]:
    """Bots connected to the referee: ``[{"bot", "sessions", "capacity", "free", "referee"}]``."""
    return status(address, timeout)["bots"]


class RefereeStatus(TypedDict):
    """A referee's ``ListBots`` answer: its bots, and its wall clock as it answered."""

    referee: str
    bots: list[BotStatus]
    unix_ms: int  # 0 from a referee that does not send it


def status(address: str, timeout: float = 5.0, *,
           channel: grpc.Channel | None = None) -> RefereeStatus:
    """:func:`list_bots` with the referee's clock; on ``channel`` when given (already
    connected, so a caller timing the call times the call, not a TLS handshake)."""
    with _open(address) if channel is None else nullcontext(channel) as own:
        stub = _stub(own)
        try:
            resp = stub.ListBots(pb.ListBotsRequest(), timeout=timeout,
                                 metadata=operator_metadata())
        except grpc.RpcError as err:
            raise _error(err, address) from None
    bots: list[BotStatus] = [{"bot": b.bot, "sessions": b.sessions, "capacity": b.capacity,
                              "free": b.free, "referee": resp.referee_id} for b in resp.bots]
    return {"referee": resp.referee_id, "bots": bots, "unix_ms": resp.unix_ms}


def watch_async(channel: grpc.aio.Channel, match_id: str,
                ) -> grpc.aio.UnaryStreamCall[pb.WatchRequest, pb.MatchEvent]:
    """A ``Watch`` call on a ``grpc.aio`` channel (see :func:`aio_channel`): the running
    match's public events as MatchEvent messages; :func:`watch` as a ``grpc.aio`` call, for a
    server that relays them from its event loop. Its errors are ``grpc.aio.AioRpcError``."""
    call: grpc.aio.UnaryStreamMultiCallable[pb.WatchRequest, pb.MatchEvent] = channel.unary_stream(
        "/sueca.v1.MatchService/Watch", request_serializer=pb.WatchRequest.SerializeToString,
        response_deserializer=pb.MatchEvent.FromString)
    return call(pb.WatchRequest(match_id=match_id), metadata=operator_metadata())


def watch(address: str, match_id: str,
          timeout: float | None = None) -> Iterator[dict[str, Any]]:  # Any: event JSON
    """Public events of a running match as dicts (``type``: started, deal_start, card,
    trick_end, deal_end, result), live, until it ends. The result carries no replay."""
    with _open(address) as own:
        stub = _stub(own)
        try:
            for event in stub.Watch(pb.WatchRequest(match_id=match_id), timeout=timeout,
                                    metadata=operator_metadata()):
                yield conv.event_to_dict(event)
        except grpc.RpcError as err:
            raise _error(err, address) from None
