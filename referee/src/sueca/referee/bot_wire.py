"""A bot stream as the referee reads and writes it: what ``BotService.Connect`` decodes
(a BotMessage, or why it did not decode), how it ends a stream whose peer may be gone, and the
hand-built handler that binds the service.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, NoReturn

import grpc
from google.protobuf.message import DecodeError

from sueca.referee.limits import shown
from sueca.v1 import sueca_pb2 as pb

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from typing import TypeAlias

    #: A bot stream as the referee serves it: it reads decoded BotMessages (or what did not
    #: decode) and writes RefereeMessages the sessions encoded (grpc.aio's contexts are generic
    #: in the type stubs only)
    BotStream: TypeAlias = grpc.aio.ServicerContext["pb.BotMessage | Malformed", bytes]

__all__ = ["Malformed", "END_OF_STREAM", "Gone", "abort", "bot_service_handler",
           "decode_bot_message"]

log = logging.getLogger("sueca.referee")

#: What ``context.read()`` returns once the peer closed its side (grpc.aio.EOF), which the type
#: stubs leave out of read()'s type: compared as a plain object
END_OF_STREAM: object = grpc.aio.EOF


class Malformed:
    """A message that did not decode as a BotMessage, and why."""

    __slots__ = ("error",)

    def __init__(self, error: str) -> None:
        self.error = error


def decode_bot_message(data: bytes) -> pb.BotMessage | Malformed:
    """Decode without failing the stream: a message that does not parse is a protocol fault
    the bot is told about, not a reason to drop every game it plays."""
    try:
        return pb.BotMessage.FromString(data)
    except DecodeError as err:
        return Malformed(f"could not decode BotMessage ({len(data)} bytes): {err}")
    except Exception as err:  # any parser complaint
        return Malformed(f"could not decode BotMessage ({len(data)} bytes): {err}")


def _encoded(msg: bytes) -> bytes:
    """RefereeMessages are encoded by the sessions (sueca.codec's hot-path encoders)."""
    return msg


class Gone(Exception):
    """The bot hung up before it could be told why its stream ends."""


async def abort(context: BotStream, code: grpc.StatusCode, message: str) -> NoReturn:
    """``context.abort``, but a peer already gone (gRPC then fails to send the status) is a
    quiet :class:`Gone` rather than an ExecuteBatchError traceback in the referee's log."""
    try:
        await context.abort(code, message)
    except grpc.aio.AbortError:
        raise
    except Exception as err:
        log.debug("could not tell a bot stream %s (%s): it is gone (%s)", code.name,
                  message.split(":")[0], shown(str(err), 100))
        raise Gone from None


def bot_service_handler(
        connect: Callable[[AsyncIterator[pb.BotMessage | Malformed], BotStream], Awaitable[None]],
) -> grpc.GenericRpcHandler:
    """``sueca.v1.BotService`` served by ``connect``.

    Built by hand rather than with the generated ``add_BotServiceServicer_to_server``, for the
    hot path: a RefereeMessage leaves as the bytes the session already encoded (no protobuf
    object is built or serialised per move), and a BotMessage that does not decode reaches the
    session as :class:`Malformed` instead of failing the stream and every game on it."""
    return grpc.method_handlers_generic_handler("sueca.v1.BotService", {
        "Connect": grpc.stream_stream_rpc_method_handler(
            connect, request_deserializer=decode_bot_message, response_serializer=_encoded),
    })
