"""gRPC ping-pong: the bare grpc.aio bidirectional round-trip rate, the referee's ceiling.

A server process echoes a 40-byte message on K concurrent bidi streams; a client process sends
one message per stream and waits for the echo, over and over. Both sides use a generic handler
with identity (de)serializers, so no protobuf work is timed: what is left is the per-message cost
of Python gRPC itself, which bounds every referee design that sends one message per move.

The two sides run in separate *spawned* processes (never forked: gRPC does not survive a fork),
so the parent can itself use gRPC before and after (``bench referee`` does).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import queue
import time
from typing import Any

import grpc

from sueca.arena.bench import cpu_seconds
from sueca.sdk.cli import Bounded

METHOD = "/sueca.bench.PingPong/Echo"
MESSAGE_BYTES = 40
_START_TIMEOUT = 20.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", action=Bounded, kind=float, low=0, above=True, default=3.0,
                        help="measured time after the warm-up (default 3)")
    parser.add_argument("--streams", action=Bounded, kind=int, low=1, default=64,
                        help="concurrent bidi streams (default 64)")
    parser.add_argument("--warmup", action=Bounded, kind=float, low=0, default=1.0,
                        help="seconds of traffic before measuring (default 1)")


def run(args: argparse.Namespace) -> int:
    result = measure(seconds=args.seconds, streams=args.streams, warmup=args.warmup)
    print(f"grpc ping-pong: {result['round_trips']} round trips in {result['seconds']:.2f}s "
          f"on {result['streams']} streams = {result['round_trips_per_s']:.0f}/s, "
          f"{result['cpu_us_per_round_trip']} us of CPU each", flush=True)
    print(json.dumps(result), flush=True)
    return 0


def measure(seconds: float = 3.0, streams: int = 64, warmup: float = 1.0) -> dict[str, Any]:
    """Run the server and client processes; return the JSON-able result of the client."""
    if seconds <= 0 or streams < 1 or warmup < 0:
        raise ValueError(f"bad ping-pong arguments: seconds={seconds!r} (> 0), "
                         f"streams={streams!r} (>= 1), warmup={warmup!r} (>= 0)")
    ctx = multiprocessing.get_context("spawn")
    ports: Any = ctx.Queue()
    results: Any = ctx.Queue()
    stop = ctx.Event()
    server = ctx.Process(target=_server_main, args=(ports, stop), name="pingpong-server",
                         daemon=True)
    client = None
    try:
        server.start()
        try:
            port = ports.get(timeout=_START_TIMEOUT)
        except queue.Empty:
            raise RuntimeError("the ping-pong server did not start within "
                               f"{_START_TIMEOUT:.0f}s") from None
        if isinstance(port, str):
            raise RuntimeError(f"the ping-pong server failed: {port}")
        client = ctx.Process(target=_client_main,
                             args=(f"127.0.0.1:{port}", streams, warmup, seconds, results,
                                   server.pid),
                             name="pingpong-client", daemon=True)
        client.start()
        try:
            result: dict[str, Any] = results.get(timeout=_START_TIMEOUT + warmup + seconds + 10)
        except queue.Empty:
            raise RuntimeError("the ping-pong client gave no result in time") from None
        if "error" in result:
            raise RuntimeError(f"the ping-pong client failed: {result['error']}")
        return result
    finally:
        stop.set()
        for proc in (client, server):
            if proc is None:
                continue
            proc.join(5)
            if proc.is_alive():
                proc.terminate()
                proc.join(5)
            if proc.is_alive():
                proc.kill()
                proc.join()


# --- server process --------------------------------------------------------------------------

def _server_main(ports: Any, stop: Any) -> None:
    try:
        asyncio.run(_serve(ports, stop))
    except Exception as err:  # report instead of leaving the parent waiting
        ports.put(f"{type(err).__name__}: {err}")


async def _serve(ports: Any, stop: Any) -> None:
    async def echo(requests: Any, context: Any) -> Any:
        async for message in requests:
            yield message

    handler = grpc.method_handlers_generic_handler(
        "sueca.bench.PingPong",
        # None (de)serializers: the handler sees and returns the raw bytes
        {"Echo": grpc.stream_stream_rpc_method_handler(echo)})
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    ports.put(port)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, stop.wait)
    await server.stop(grace=None)


# --- client process --------------------------------------------------------------------------

def _client_main(address: str, streams: int, warmup: float, seconds: float,
                 results: Any, server_pid: int) -> None:
    try:
        results.put(asyncio.run(_client(address, streams, warmup, seconds, server_pid)))
    except Exception as err:
        results.put({"error": f"{type(err).__name__}: {err}"})


async def _client(address: str, streams: int, warmup: float, seconds: float,
                  server_pid: int | None = None) -> dict[str, Any]:
    payload = bytes(range(MESSAGE_BYTES))
    count = [0]
    running = [True]

    async with grpc.aio.insecure_channel(address) as channel:
        await asyncio.wait_for(channel.channel_ready(), _START_TIMEOUT)
        echo: Any = channel.stream_stream(METHOD)  # no serializers: bytes in, bytes out

        async def one_stream() -> None:
            # call.write() then call.read(), as the SDK does: measured on 2 cores at 200
            # streams, 19-20k round trips/s at 95-103 us of CPU each, where a request iterator
            # waiting on an Event for each echo gave 15-16k/s at 116-122 us (an extra task
            # switch per message). The baseline is the cheapest bare form, not a slower one.
            call = echo()
            while running[0]:
                await call.write(payload)
                reply = await call.read()
                if reply is grpc.aio.EOF or len(reply) != MESSAGE_BYTES:
                    raise RuntimeError(f"bad echo {reply!r}")
                count[0] += 1
            await call.done_writing()

        tasks = [asyncio.create_task(one_stream()) for _ in range(streams)]
        try:
            await asyncio.sleep(warmup)
            pids = [os.getpid()] + ([server_pid] if server_pid else [])
            try:
                cpu_start: float | None = cpu_seconds(*pids)
            except OSError:  # no /proc: no CPU figure
                cpu_start = None
            start_count, start = count[0], time.perf_counter()
            await asyncio.sleep(seconds)
            end_count, end = count[0], time.perf_counter()
            cpu_end = None if cpu_start is None else cpu_seconds(*pids)
            running[0] = False
            await asyncio.wait_for(asyncio.gather(*tasks), 10)
        finally:
            for task in tasks:
                task.cancel()
    trips = end_count - start_count
    elapsed = end - start
    cpu = None if cpu_start is None or cpu_end is None else cpu_end - cpu_start
    return {"round_trips": trips, "seconds": round(elapsed, 3),
            "round_trips_per_s": round(trips / elapsed, 1), "streams": streams,
            "cpu_us_per_round_trip": round(cpu / trips * 1e6, 2) if cpu and trips else None}
