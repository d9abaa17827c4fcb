"""A delaying TCP proxy on loopback: bots "across the internet" on one machine.

``python -m sueca.arena.delayproxy --port P --to HOST:PORT --rtt-ms 50 --jitter-ms 10`` accepts
connections on 127.0.0.1:P and forwards each to ``--to``, holding every chunk of bytes for half
the added round trip in each direction, plus a uniform jitter of ±``jitter-ms``/2 — never
reordering a stream (a chunk leaves no earlier than the one before it), as TCP would not.
``sueca-arena loadtest --net-rtt-ms`` puts one between the target's processes and the referee.

Bounded: at most ``MAX_CONNECTIONS`` connections, and at most ``MAX_QUEUED`` chunks held per
direction (a sender beyond that waits: TCP back-pressure, not memory). It listens on loopback
only; it is a test instrument, not a network tool.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal

MAX_CONNECTIONS = 256
MAX_QUEUED = 1024
CHUNK = 65536


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float,
                jitter: float, rng: random.Random) -> None:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue(MAX_QUEUED)

    async def feed() -> None:
        last = 0.0
        try:
            while data := await reader.read(CHUNK):
                due = max(loop.time() + delay + rng.uniform(-jitter / 2, jitter / 2), last)
                last = due
                await queue.put((due, data))
        except (ConnectionError, OSError):
            pass
        await queue.put((0.0, b""))  # the end of the stream, after what is queued

    async def drain() -> None:
        try:
            while True:
                due, data = await queue.get()
                if not data:
                    break
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    await asyncio.gather(feed(), drain())


async def serve(port: int, to: str, *, rtt_ms: float, jitter_ms: float,
                ready: asyncio.Event | None = None) -> None:
    host, _, target_port = to.rpartition(":")
    delay, jitter = rtt_ms / 2000, jitter_ms / 1000
    rng = random.Random()
    open_now = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal open_now
        if open_now >= MAX_CONNECTIONS:
            writer.close()
            return
        open_now += 1
        try:
            up_r, up_w = await asyncio.open_connection(host.strip("[]"), int(target_port))
        except OSError:
            open_now -= 1
            writer.close()
            return
        try:
            await asyncio.gather(_pipe(reader, up_w, delay, jitter, rng),
                                 _pipe(up_r, writer, delay, jitter, rng))
        finally:
            open_now -= 1

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    if ready is not None:
        ready.set()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sueca.arena.delayproxy", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, required=True, help="port to listen on (127.0.0.1)")
    p.add_argument("--to", required=True, metavar="HOST:PORT", help="where to forward")
    p.add_argument("--rtt-ms", type=float, default=50.0, help="added round trip (default 50)")
    p.add_argument("--jitter-ms", type=float, default=0.0,
                   help="uniform jitter per direction, ± half of this (default 0)")
    args = p.parse_args(argv)
    if args.rtt_ms < 0 or args.jitter_ms < 0 or args.jitter_ms > args.rtt_ms:
        p.error(f"need 0 <= --jitter-ms <= --rtt-ms, got {args.jitter_ms:g} and {args.rtt_ms:g}")
    asyncio.run(serve(args.port, args.to, rtt_ms=args.rtt_ms, jitter_ms=args.jitter_ms))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
