"""Helpers for the network tests: a real referee process, real SDK bot processes, and a raw
gRPC bot that sees (and may send) exact wire bytes. Used by tests/referee and tests/sdk."""

from __future__ import annotations

import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import grpc

from kits.wait import wait_for  # noqa: F401  (the network tests import it from here)
from sueca.arena.processes import Child
from sueca.arena.redisproc import free_port
from sueca.referee import control
from sueca.v1 import sueca_pb2 as pb

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
BOTLIB = str(Path(__file__).resolve().parent / "bots" / "network.py")
# Every process of these tests agrees on the Redis key prefix, whatever another test package
# left in this process's environment.
KEY_PREFIX = "sueca:"
# The referees of these tests key their bots' seeds with this (SUECA_SEED_KEY), so a test can
# replay a network match in-process (play_local(..., seed_key=SEED_KEY)).
SEED_KEY = "netkit-test-seed-key-0123456789"
ENV = {"SUECA_KEY_PREFIX": KEY_PREFIX, "SUECA_SEED_KEY": SEED_KEY}


class _Proc:
    """A process of these tests, started and stopped by :class:`sueca.arena.processes.Child`
    (its own session; a stop ends with SIGKILL to its whole group), its output in
    ``log_path`` (or discarded). :attr:`proc` is its :class:`subprocess.Popen`, for tests that
    signal or wait for it themselves."""

    label = "process"  # names the process in a ChildExited or TimeoutError

    def _spawn(self, args: list[str], log_path: Path | None, env: dict[str, str]) -> None:
        self.log_path = log_path
        discard = subprocess.DEVNULL if log_path is None else None
        self.child = Child(self.label, args, {**os.environ, **ENV, **env}, log_path, cwd=ROOT,
                           append=False, stdout=discard, stderr=discard)
        self.proc = self.child.popen

    def logs(self) -> str:
        return self.child.text()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        """Send ``sig`` (if it still runs), SIGKILL its group after ``timeout`` seconds, reap
        it: its exit code."""
        self.child.send(sig)
        self.child.finish(time.monotonic() + timeout)
        return self.proc.wait()


class RefereeProc(_Proc):
    """``sueca-arena referee`` as a subprocess on free ports."""

    def __init__(self, redis_url: str | None, drain_seconds: float = 5.0,
                 log_path: Path | None = None, port: int | None = None,
                 extra: Sequence[str] = (), env: dict[str, str] | None = None) -> None:
        self.port = port or free_port()
        self.metrics_port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.label = f"referee on {self.address}"
        args = [str(BIN / "sueca-arena"), "referee", "--port", str(self.port),
                "--metrics-port", str(self.metrics_port), "--drain-seconds", str(drain_seconds)]
        args += ["--redis", redis_url] if redis_url else ["--insecure"]
        self._spawn(args + list(extra), log_path, env or {})
        self.child.wait_ready(self._serving, 30, self.label)

    def _serving(self) -> bool:
        try:
            return self._healthy()
        except Exception:  # not listening yet (the child's own exit is Child.check's)
            return False

    def _healthy(self) -> bool:
        from grpc_health.v1 import health_pb2, health_pb2_grpc
        with grpc.insecure_channel(self.address) as ch:
            resp = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(),
                                                        timeout=1)
        return resp.status == health_pb2.HealthCheckResponse.SERVING


class BotProc(_Proc):
    """``sueca-bot run SPEC`` as a subprocess."""

    def __init__(self, spec: str, server: str, token: str, capacity: int = 4,
                 extra: tuple[str, ...] = (), log_path: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.name = token.split(".", 1)[0]
        self.label = f"bot {self.name}"
        args = [str(BIN / "sueca-bot"), "run", spec, "--server", server,
                "--capacity", str(capacity), "--max-backoff", "1", *extra]
        self._spawn(args, log_path, {"SUECA_TOKEN": token, **(env or {})})  # never in argv (ps)


def _bot_count(address: str, bot: str, field: str) -> int:
    for b in control.list_bots(address):
        if b["bot"] == bot:
            return int(b[field])
    return 0


def sessions_of(address: str, bot: str) -> int:
    return _bot_count(address, bot, "sessions")


def free_of(address: str, bot: str) -> int:
    return _bot_count(address, bot, "free")


class RawBot:
    """A bot speaking raw gRPC: every RefereeMessage is kept as the exact bytes received.

    ``send`` takes a BotMessage or raw bytes; ``next_message`` decodes the next one.
    """

    def __init__(self, address: str, bot: str, token: str, capacity: int = 1,
                 hello: bool = True) -> None:
        self.channel = grpc.insecure_channel(address)
        self.outq: queue.Queue[bytes | None] = queue.Queue()
        self.inq: queue.Queue[Any] = queue.Queue()
        self.raw: list[bytes] = []
        self.bot = bot
        connect = self.channel.stream_stream(
            "/sueca.v1.BotService/Connect", request_serializer=lambda b: b,
            response_deserializer=lambda b: b)
        if hello:
            self.send(pb.BotMessage(hello=pb.Hello(bot=bot, token=token, capacity=capacity,
                                                   sdk_version="raw-test")))
        self.call = connect(self._requests())
        self.status: grpc.RpcError | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _requests(self) -> Iterator[bytes]:
        while True:
            item = self.outq.get()
            if item is None:
                return
            yield item

    def _read(self) -> None:
        try:
            for data in self.call:
                self.raw.append(data)
                self.inq.put(pb.RefereeMessage.FromString(data))
        except grpc.RpcError as err:
            self.status = err
        self.inq.put(None)

    def send(self, msg: pb.BotMessage | bytes) -> None:
        self.outq.put(msg if isinstance(msg, bytes) else msg.SerializeToString())

    def next_message(self, timeout: float = 10.0) -> pb.RefereeMessage | None:
        """The next message, or None when the stream has ended."""
        return self.inq.get(timeout=timeout)

    def expect(self, pred: Callable[[pb.RefereeMessage], Any], timeout: float = 10.0,
               what: str = "message") -> pb.RefereeMessage:
        """Skip messages until one matches ``pred``; fail if the stream ends first."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {what} within {timeout}s")
            try:
                msg = self.inq.get(timeout=left)
            except queue.Empty:
                raise TimeoutError(f"no {what} within {timeout}s") from None
            if msg is None:
                raise AssertionError(f"stream ended before {what}: {self.status}")
            if pred(msg):
                return msg

    def next_turn(self, timeout: float = 10.0) -> pb.TurnRequest:
        msg = self.expect(lambda m: m.turns, timeout, "turn request")
        assert len(msg.turns) == 1, msg
        return msg.turns[0]

    def play(self, turn: pb.TurnRequest, card: int | None = None) -> None:
        c = turn.observation.legal[0] if card is None else card
        self.send(pb.BotMessage(actions=[pb.Action(game_id=turn.game_id,
                                                   request_id=turn.request_id, card=c)]))

    def close(self) -> None:
        self.outq.put(None)

    def cancel(self) -> None:
        self.call.cancel()
        self.channel.close()

    def wait_end(self, timeout: float = 10.0) -> grpc.RpcError | None:
        self._reader.join(timeout)
        return self.status


def play_until_done(bots: Sequence[RawBot], futures: Sequence[Future],
                    rng: random.Random | None = None, timeout: float = 120.0) -> None:
    """Answer every turn the raw bots are sent until every match (``futures``) is over: a
    random legal card with ``rng``, else the first; no redeal. Each bot still keeps every
    message it received in ``raw``."""
    deadline = time.monotonic() + timeout
    while not all(f.done() for f in futures):
        if time.monotonic() > deadline:
            raise TimeoutError(f"matches not over within {timeout}s")
        for bot in bots:
            try:
                msg = bot.next_message(timeout=0.05)
            except queue.Empty:
                continue
            assert msg is not None, f"the stream of {bot.bot!r} ended: {bot.status}"
            if msg.turns:
                bot.send(pb.BotMessage(actions=[_answer(t, rng) for t in msg.turns]))


def _answer(turn: pb.TurnRequest, rng: random.Random | None) -> pb.Action:
    if turn.kind == pb.TurnRequest.REDEAL:
        return pb.Action(game_id=turn.game_id, request_id=turn.request_id, redeal=False)
    legal = turn.observation.legal
    card = rng.choice(legal) if rng is not None else legal[0]
    return pb.Action(game_id=turn.game_id, request_id=turn.request_id, card=card)


def rpc_error(fn: Callable[[], Any]) -> grpc.RpcError:
    try:
        fn()
    except grpc.RpcError as err:
        return err
    raise AssertionError("expected a gRPC error")
