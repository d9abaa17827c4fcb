"""The scripted referee's gRPC side: a real ``BotService.Connect`` server on a real socket
whose streams are handed, one by one, to a script that reads and writes them itself.

Nothing here decides anything: :class:`Stream` reads what the bot sends (decoded, or the
reason it did not decode), writes what the script says, and ends the stream when told to,
with the status the script chose. Everything the bot may send is bounded: 64 KiB a message
(gRPC refuses more), a short queue of unread messages (HTTP/2 flow control holds the bot back
beyond it), and the script's own time limits.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from sueca.v1 import sueca_pb2 as pb

__all__ = ["Malformed", "Stream", "Listener", "TIMEOUT", "MAX_MESSAGE_BYTES"]

MAX_MESSAGE_BYTES = 64 * 1024  # what the real referee accepts, and so what a bot may send
INBOX = 64                     # messages read ahead of the script, at most
TIMEOUT = object()             # what Stream.next returns when nothing came in time
_CONNECT = "Connect"


class Malformed:
    """A message that did not decode as a BotMessage: why, and how long it was."""

    def __init__(self, error: str, size: int) -> None:
        self.error, self.size = error, size


class Stream:
    """One bot stream as the script sees it."""

    def __init__(self, context: Any, peer: str) -> None:
        self.context = context
        self.peer = peer
        self.inbox: asyncio.Queue[pb.BotMessage | Malformed | None] = asyncio.Queue(INBOX)
        self.done = asyncio.Event()  # set by the script: the handler returns
        self.ended = False           # the bot's side is over (EOF, or the call broke)
        self.status: tuple[grpc.StatusCode, str] | None = None

    async def read_loop(self) -> None:
        try:
            while True:
                data = await self.context.read()
                if data is grpc.aio.EOF:
                    break
                try:
                    msg: pb.BotMessage | Malformed = pb.BotMessage.FromString(data)
                except (DecodeError, Exception) as err:
                    msg = Malformed(str(err)[:200], len(data))
                await self.inbox.put(msg)
        except asyncio.CancelledError:
            raise
        except Exception:  # the call broke: the same as an end for the script
            pass
        self.ended = True
        await self.inbox.put(None)

    async def next(self, seconds: float) -> pb.BotMessage | Malformed | None | object:
        """The next message, None once the bot's side ended, or TIMEOUT."""
        if self.ended and self.inbox.empty():
            return None
        try:
            return await asyncio.wait_for(self.inbox.get(), max(seconds, 0.001))
        except TimeoutError:
            return TIMEOUT

    async def send(self, msg: pb.RefereeMessage) -> bool:
        """Write one message; False when the stream is gone."""
        if self.done.is_set():
            return False
        try:
            await self.context.write(msg.SerializeToString())
            return True
        except Exception:
            return False

    def close(self, code: grpc.StatusCode | None = None, message: str = "") -> None:
        """End the stream: with ``code`` a status the bot sees as an error (a dropped
        stream), else a normal end."""
        if code is not None:
            self.status = (code, message)
        self.done.set()


class Listener:
    """The server: every Connect stream is queued for the script, which takes them in turn."""

    def __init__(self) -> None:
        self.streams: asyncio.Queue[Stream] = asyncio.Queue()
        self.server: grpc.aio.Server | None = None
        self.port = 0

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (0: a free port); the port bound, or OSError."""
        server = grpc.aio.server(options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.so_reuseport", 0)])
        handler = grpc.method_handlers_generic_handler("sueca.v1.BotService", {
            _CONNECT: grpc.stream_stream_rpc_method_handler(
                self._connect, request_deserializer=None, response_serializer=None)})
        server.add_generic_rpc_handlers((handler,))
        address = f"[{host}]:{port}" if ":" in host and not host.startswith("[") \
            else f"{host}:{port}"
        try:
            self.port = server.add_insecure_port(address)
        except RuntimeError as err:
            raise OSError(f"cannot listen on {address}: {err}") from None
        if not self.port:
            raise OSError(f"cannot listen on {address}")
        await server.start()
        self.server = server
        return self.port

    async def _connect(self, request_iterator: Any, context: Any) -> None:
        stream = Stream(context, context.peer() or "")
        reader = asyncio.create_task(stream.read_loop())
        await self.streams.put(stream)
        try:
            await stream.done.wait()
        finally:
            reader.cancel()
        if stream.status is not None:
            await context.abort(*stream.status)

    async def accept(self, seconds: float) -> Stream | None:
        """The next stream a bot opened, or None within ``seconds``."""
        try:
            return await asyncio.wait_for(self.streams.get(), seconds)
        except TimeoutError:
            return None

    async def stop(self) -> None:
        while not self.streams.empty():
            self.streams.get_nowait().close()
        if self.server is not None:
            await self.server.stop(0.2)
