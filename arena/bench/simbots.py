"""Simulated bots for ``bench referee --sessions``: many bot sessions from one light process.

``python -m sueca.arena.bench.simbots --server ADDR --tokens FILE --first K --count M`` opens M
bot sessions (bots K..K+M-1 of the JSON ``[[name, token], ...]`` in FILE), each on its own gRPC
channel and so its own TCP connection (a local subchannel pool: gRPC would otherwise share one
connection between channels to the same address), and answers every turn with a uniformly
random legal card (and "no" to every redeal question), straight from the wire message.

Why not ``sueca-bot run`` per session: a full SDK process costs ~40 MB and its own event loop;
a thousand of them would measure this machine's memory, not the referee. A simulated session is
a raw ``grpc.aio`` stream with (de)serialisation by hand: what the referee sees is the same
protocol (hello, batched turns, batched answers), while the simulator's own cost per move stays
small (no ``Bot`` instance, no observation decoding beyond the legal cards).

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

CONNECT = "/sueca.v1.BotService/Connect"
# channels per process open at once while connecting (their hellos wait on the referee's Redis
# look-up; a thousand at once only lengthens every one of them)
CONNECTING = 64
CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1),
                   ("grpc.keepalive_permit_without_calls", 1),
                   # a stream is never retried here, and the retry layer would hold a copy of
                   # every message sent until the call commits
                   ("grpc.enable_retries", 0),
                   ("grpc.http2.bdp_probe", 0)]


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


async def session(address: str, name: str, token: str, capacity: int, stats: Stats,
                  stop: asyncio.Event, gate: asyncio.Semaphore, rng: random.Random) -> None:
    """One bot session until ``stop``: hello, then a batch of answers per batch of turns."""
    import grpc

    from sueca.v1 import sueca_pb2 as pb
    from sueca.wire import action_bytes, game_id_field

    hello = pb.BotMessage(hello=pb.Hello(bot=name, token=token, sdk_version="bench-sim",
                                         capacity=capacity)).SerializeToString()
    redeal, play = pb.TurnRequest.REDEAL, pb.TurnRequest.PLAY
    RefereeMessage = pb.RefereeMessage

    channel = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
    welcomed = False
    try:
        async with gate:
            # no request iterator: gRPC would run it as a task of its own and every answer
            # would hop through a queue and a generator; writing from the reading loop sends
            # each batch of answers straight away (one write at a time, as grpc.aio requires)
            call = channel.stream_stream(CONNECT)()  # bytes in, bytes out
            await call.write(hello)
            reader = call.__aiter__()
            first = RefereeMessage.FromString(await reader.__anext__())
            if not first.HasField("welcome"):
                raise RuntimeError("the first referee message is no welcome")
            welcomed = True
            stats.welcomed += 1
        write = call.write
        last_gid, gid = "", b""
        async for data in reader:
            msg = RefereeMessage.FromString(data)
            stats.messages_in += 1
            if msg.errors:
                stats.errors += len(msg.errors)
                if stats.first_error is None:
                    e = msg.errors[0]
                    stats.first_error = f"{name}: {e.code}: {e.message}"[:300]
            if not msg.turns:
                continue
            # answers encoded by hand (sueca.wire.action_bytes, as the SDK sends them): no
            # Action or BotMessage objects per move; the game id field is encoded once per
            # game (a session here plays one game at a time)
            actions = []
            for turn in msg.turns:
                if turn.game_id != last_gid:
                    last_gid = turn.game_id
                    gid = game_id_field(last_gid)
                kind = turn.kind
                if kind == play:
                    legal = turn.observation.legal
                    actions.append(action_bytes(gid, turn.request_id,
                                                legal[rng.randrange(len(legal))]))
                elif kind == redeal:
                    actions.append(action_bytes(gid, turn.request_id, redeal=False))
            stats.turns += len(actions)
            stats.messages_out += 1
            await write(b"".join(actions))
        if not stop.is_set():
            raise RuntimeError(f"{name}: the referee ended the stream")
    except asyncio.CancelledError:
        raise
    except Exception as err:
        if not stop.is_set():
            stats.broken += 1
            if stats.first_error is None:
                what = err.details() if isinstance(err, grpc.RpcError) else str(err)  # type: ignore[attr-defined]
                stats.first_error = (f"{name} ({'after' if welcomed else 'before'} the welcome):"
                                     f" {type(err).__name__}: {what}")[:300]
    finally:
        await channel.close(grace=None)


async def main_async(address: str, bots: list[tuple[str, str]], capacity: int) -> Stats:
    stats = Stats()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    gate = asyncio.Semaphore(CONNECTING)
    rng = random.Random()
    tasks = [asyncio.create_task(session(address, name, token, capacity, stats, stop, gate, rng))
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
