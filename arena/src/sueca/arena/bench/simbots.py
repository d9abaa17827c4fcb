"""Simulated bots for ``bench referee --sessions``: many bot sessions from one light process.

``python -m sueca.arena.bench.simbots --server ADDR --tokens FILE --first K --count M`` opens M
bot sessions (bots K..K+M-1 of the JSON ``[[name, token], ...]`` in FILE), each on its own TCP
connection, and answers every turn with a uniformly random legal card (and "no" to every redeal
question), straight from the wire message.

Why not ``sueca-bot run`` per session: a full SDK process costs ~40 MB and its own event loop;
a thousand of them would measure this machine's memory, not the referee. Why not ``grpc.aio``
either: a gRPC client stream costs ~120-160 us of CPU per move here (two completions, each
handed from gRPC's threads to the event loop, a task wake-up each, the Python call layers),
as much as the referee itself, and on a 2-core machine that CPU is taken from the referee. A
session here speaks HTTP/2 and gRPC's message framing itself (:class:`H2Session`): one
protocol object per connection whose callbacks parse frames, decode the turns and write the
answers synchronously, ~55 us per move. What the referee sees is the same protocol as from
any gRPC client (HTTP/2 preface, settings, a Connect stream with its headers, length-prefixed
BotMessages, PING and SETTINGS acknowledged), except that this client opens its receive window
to 2^31-1 at once and so never sends a WINDOW_UPDATE, and sends no pings of its own.

On SIGTERM or SIGINT it closes every stream and prints one JSON line: sessions welcomed, turns
answered, messages, ActionErrors received (a correct simulator gets none), and streams that
ended with an error before the stop (a referee refusal or a lost connection).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import signal
import sys
import time
from typing import Any

from sueca.codec import action_bytes, game_id_field
from sueca.v1 import sueca_pb2 as pb

CONNECT = "/sueca.v1.BotService/Connect"
# connections per process opened at once (their hellos wait on the referee's Redis
# look-up; a thousand at once only lengthens every one of them)
CONNECTING = 64


class Stats:
    """What this process did (one event loop: no locks)."""

    def __init__(self) -> None:
        self.welcomed = 0
        self.turns = 0
        self.messages_in = 0
        self.messages_out = 0
        self.errors = 0
        self.broken = 0
        self.first_error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"welcomed": self.welcomed, "turns": self.turns, "messages_in": self.messages_in,
                "messages_out": self.messages_out, "errors": self.errors, "broken": self.broken,
                "first_error": self.first_error}


# --- a bot session over raw HTTP/2 -------------------------------------------------------------

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 4, 6, 7, 8
END_STREAM, ACK, END_HEADERS, PADDED = 0x1, 0x1, 0x4, 0x8
STREAM = 1  # the one stream of the connection: Connect
MAX_WINDOW = (1 << 31) - 1


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return (len(payload).to_bytes(3, "big") + bytes((kind, flags))
            + stream.to_bytes(4, "big") + payload)


def _literal(name: bytes, value: bytes) -> bytes:
    """HPACK literal header field without indexing, new name, no Huffman (RFC 7541 6.2.2)."""
    assert len(name) < 127 and len(value) < 127
    return b"\x00" + bytes((len(name),)) + name + bytes((len(value),)) + value


def request_headers(authority: str) -> bytes:
    return (b"\x83\x86"  # :method POST, :scheme http (HPACK static table 3 and 6)
            + _literal(b":path", CONNECT.encode()) + _literal(b":authority", authority.encode())
            + _literal(b"content-type", b"application/grpc") + _literal(b"te", b"trailers")
            + _literal(b"user-agent", b"sueca-simbots"))


class H2Session(asyncio.Protocol):
    """One bot session on its own TCP connection, speaking HTTP/2 and gRPC's message framing
    itself: every callback is synchronous (no task, future or queue per message).

    It opens the window for what it receives to 2^31-1 at once (as a bandwidth-probing client
    would grow it), so it never owes a WINDOW_UPDATE; it honours the referee's windows for what
    it sends, answers PINGs and SETTINGS, and treats the stream's end, a reset or a GOAWAY
    as the end of the session."""

    def __init__(self, name: str, hello: bytes, authority: str, stats: Stats,
                 rng: random.Random, welcome: asyncio.Future[None]) -> None:
        self.name, self.hello, self.authority = name, hello, authority
        self.stats, self.rng, self.welcome = stats, rng, welcome
        self.parse = pb.RefereeMessage.FromString
        self.play, self.redeal = pb.TurnRequest.PLAY, pb.TurnRequest.REDEAL
        self.transport: asyncio.Transport | None = None
        self.buf = b""
        self.msg = b""  # gRPC length-prefixed messages, as DATA frames deliver them
        self.send_window = self.stream_window = 65_535  # the referee's, per RFC 7540 6.9.2
        self.last_gid, self.gid = "", b""
        self.ended: asyncio.Future[str] = welcome.get_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = t = transport
        settings = (2).to_bytes(2, "big") + (0).to_bytes(4, "big")  # ENABLE_PUSH 0
        settings += (4).to_bytes(2, "big") + MAX_WINDOW.to_bytes(4, "big")  # INITIAL_WINDOW_SIZE
        t.write(PREFACE + frame(SETTINGS, 0, 0, settings)
                + frame(WINDOW_UPDATE, 0, 0, (MAX_WINDOW - 65_535).to_bytes(4, "big"))
                + frame(HEADERS, END_HEADERS, STREAM, request_headers(self.authority)))
        self.send(self.hello)

    def send(self, message: bytes) -> None:
        data = b"\x00" + len(message).to_bytes(4, "big") + message
        n = len(data)
        if n > self.send_window or n > self.stream_window:
            # a bench bot sends ~50 bytes a move and the referee reads them all: a closed
            # window means the referee stopped reading, which ends this session
            self.end(f"the referee's flow-control window is closed ({n} bytes to send)")
            return
        self.send_window -= n
        self.stream_window -= n
        self.transport.write(frame(DATA, 0, STREAM, data))  # type: ignore[union-attr]

    def end(self, why: str) -> None:
        if not self.ended.done():
            self.ended.set_result(why)
        if not self.welcome.done():
            self.welcome.set_exception(RuntimeError(why))
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.end(f"connection lost: {exc}" if exc else "connection closed")

    def data_received(self, data: bytes) -> None:
        buf = self.buf + data if self.buf else data
        pos, size = 0, len(buf)
        while size - pos >= 9:
            length = int.from_bytes(buf[pos:pos + 3], "big")
            if size - pos < 9 + length:
                break
            kind, flags = buf[pos + 3], buf[pos + 4]
            payload = buf[pos + 9:pos + 9 + length]
            pos += 9 + length
            if kind == DATA:
                if flags & PADDED:
                    payload = payload[1:len(payload) - payload[0]]
                self.messages(payload)
                if flags & END_STREAM:
                    self.end("the referee ended the stream")
            elif kind == HEADERS:
                if flags & END_STREAM:  # trailers (or trailers only): the call is over
                    self.end("the referee ended the stream (trailers)")
            elif kind == SETTINGS:
                if not flags & ACK:
                    for i in range(0, len(payload) - 5, 6):
                        if int.from_bytes(payload[i:i + 2], "big") == 4:  # INITIAL_WINDOW_SIZE
                            value = int.from_bytes(payload[i + 2:i + 6], "big")
                            self.stream_window += value - 65_535
                    self.transport.write(frame(SETTINGS, ACK, 0))  # type: ignore[union-attr]
            elif kind == PING:
                if not flags & ACK:
                    self.transport.write(frame(PING, ACK, 0, payload))  # type: ignore[union-attr]
            elif kind == WINDOW_UPDATE:
                inc = int.from_bytes(payload, "big") & MAX_WINDOW
                if int.from_bytes(buf[pos - length - 4:pos - length], "big") & MAX_WINDOW:
                    self.stream_window += inc
                else:
                    self.send_window += inc
            elif kind in (RST_STREAM, GOAWAY):
                self.end(f"the referee sent {'RST_STREAM' if kind == RST_STREAM else 'GOAWAY'}")
        self.buf = buf[pos:]

    def messages(self, payload: bytes) -> None:
        msg = self.msg + payload if self.msg else payload
        pos, size = 0, len(msg)
        while size - pos >= 5:
            n = int.from_bytes(msg[pos + 1:pos + 5], "big")
            if size - pos < 5 + n:
                break
            self.answer(msg[pos + 5:pos + 5 + n])
            pos += 5 + n
        self.msg = msg[pos:]

    def answer(self, data: bytes) -> None:
        stats = self.stats
        msg = self.parse(data)
        if not self.welcome.done():
            if msg.HasField("welcome"):
                self.welcome.set_result(None)
                return
            self.end("the first referee message is no welcome")
            return
        stats.messages_in += 1
        if msg.errors:
            stats.errors += len(msg.errors)
            if stats.first_error is None:
                e = msg.errors[0]
                stats.first_error = f"{self.name}: {e.code}: {e.message}"[:300]
        if not msg.turns:
            return
        # answers encoded by hand (sueca.codec.action_bytes, as the SDK sends them); the game
        # id field is encoded once per game (a session here plays one game at a time)
        actions = []
        rng = self.rng
        for turn in msg.turns:
            if turn.game_id != self.last_gid:
                self.last_gid = turn.game_id
                self.gid = game_id_field(self.last_gid)
            kind = turn.kind
            if kind == self.play:
                legal = turn.observation.legal
                actions.append(action_bytes(self.gid, turn.request_id,
                                            legal[rng.randrange(len(legal))]))
            elif kind == self.redeal:
                actions.append(action_bytes(self.gid, turn.request_id, redeal=False))
        stats.turns += len(actions)
        stats.messages_out += 1
        self.send(b"".join(actions))


async def h2_session(address: str, name: str, *, token: str, capacity: int, stats: Stats,
                     stop: asyncio.Event, gate: asyncio.Semaphore, rng: random.Random) -> None:
    hello = pb.BotMessage(hello=pb.Hello(bot=name, token=token, sdk_version="bench-sim",
                                         capacity=capacity)).SerializeToString()
    host, _, port = address.rpartition(":")
    loop = asyncio.get_running_loop()
    welcomed = False
    proto: H2Session | None = None
    try:
        async with gate:
            welcome: asyncio.Future[None] = loop.create_future()
            _, proto = await loop.create_connection(
                lambda: H2Session(name, hello, address, stats, rng, welcome),
                host.strip("[]"), int(port))
            await welcome
            welcomed = True
            stats.welcomed += 1
        why = await proto.ended
        if not stop.is_set():
            raise RuntimeError(f"{name}: {why}")
    except asyncio.CancelledError:
        raise
    except Exception as err:
        if not stop.is_set():
            stats.broken += 1
            if stats.first_error is None:
                stats.first_error = (f"{name} ({'after' if welcomed else 'before'} the welcome):"
                                     f" {type(err).__name__}: {err}")[:300]
    finally:
        if proto is not None and proto.transport is not None:
            proto.transport.close()


async def main_async(address: str, bots: list[tuple[str, str]], capacity: int) -> Stats:
    stats = Stats()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    gate = asyncio.Semaphore(CONNECTING)
    rng = random.Random()
    tasks = [asyncio.create_task(h2_session(address, name, token=token, capacity=capacity,
                                              stats=stats, stop=stop, gate=gate, rng=rng))
             for name, token in bots]
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return stats


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sueca.arena.bench.simbots", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", required=True, metavar="HOST:PORT")
    p.add_argument("--tokens", required=True, metavar="FILE",
                   help='JSON [["name", "token"], ...]')
    p.add_argument("--first", type=int, default=0, help="index of this process's first bot")
    p.add_argument("--count", type=int, required=True, help="sessions of this process")
    p.add_argument("--capacity", type=int, default=4, help="games per session (hello)")
    args = p.parse_args(argv)
    with open(args.tokens, encoding="utf-8") as f:
        every = [(str(n), str(t)) for n, t in json.load(f)]
    bots = every[args.first:args.first + args.count]
    if len(bots) != args.count or args.count < 1 or not 1 <= args.capacity <= 10_000:
        p.error(f"--first {args.first} --count {args.count} --capacity {args.capacity}: "
                f"{len(every)} bots in {args.tokens!r}, capacity 1..10000")
    # young collections every 20,000 allocations, not 700: a move's objects die by reference
    # counting first (the referee does the same, sueca.referee.server.tune_gc)
    gc.freeze()
    gc.set_threshold(20_000, *gc.get_threshold()[1:])
    start = time.monotonic()
    stats = asyncio.run(main_async(args.server, bots, args.capacity))
    print(json.dumps({"simbots": stats.as_dict(), "sessions": len(bots),
                      "seconds": round(time.monotonic() - start, 3)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
