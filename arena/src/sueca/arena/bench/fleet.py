"""The benches' private arena: a Redis, referees and bot processes on loopback, started by one
:class:`sueca.arena.processes.Supervisor` and all stopped on the way out, failure or not.

Used by ``bench referee``, ``bench wan`` and ``bench hostile``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sueca.arena.processes import Supervisor, wait_until
from sueca.arena.promscrape import Samples, metrics_url, scrape
from sueca.arena.redisproc import RedisServer, free_port

#: ``sueca-arena`` and ``sueca-bot`` as this interpreter runs them.
ARENA = [sys.executable, "-m", "sueca.arena.cli"]
BOT = [sys.executable, "-c", "import sys; from sueca.sdk.cli import main; sys.exit(main())"]


@contextmanager
def private_arena(keep_logs: bool = False) -> Iterator[tuple[Supervisor, RedisServer]]:
    """A started private Redis and a supervisor with no child yet (its children's output
    unbuffered); on the way out, failure or not, every child is stopped (a failure first prints
    their logs' last lines): bots first, then referees, each whole process group given SIGTERM
    at once and 5 s; then Redis; the logs are removed unless ``keep_logs``."""
    fleet = Supervisor(Path(tempfile.mkdtemp(prefix="sueca-bench-")),
                       env={"PYTHONUNBUFFERED": "1"})
    redis = RedisServer()
    try:
        redis.start()
        yield fleet, redis
    except BaseException:
        for child in fleet:
            tail = child.tail(10)
            if tail:
                print(f"--- {child.name} (last lines) ---\n{tail}", file=sys.stderr)
        raise
    finally:
        stop_all(fleet)
        redis.stop()
        if not keep_logs:
            shutil.rmtree(fleet.logs, ignore_errors=True)
        else:
            print(f"logs kept in {fleet.logs}", file=sys.stderr)


def stop_all(fleet: Supervisor, names: Sequence[str] | None = None, grace: float = 5.0) -> None:
    """Stop every child (or those in ``names``, which then leave the fleet: their logs stay):
    one wave, bots first (they drain), referees last, each whole process group."""
    chosen = [c.name for c in fleet] if names is None else list(names)
    fleet.stop(sorted(chosen, key=lambda name: name.startswith("referee")), grace=grace,
               group=True)


def register(redis_url: str, names: Sequence[str]) -> dict[str, str]:
    """Register bots ``names`` on the Redis at ``redis_url``: their tokens by name."""
    from sueca.arena.store import Store

    store = Store.from_url(redis_url)
    try:
        return {name: store.bots.add(name) for name in names}
    finally:
        store.close()


def start_referee(fleet: Supervisor, name: str, redis_url: str,
                  extra: Sequence[str] = ()) -> tuple[str, int]:
    """Start a referee on free ports; (its address, its metrics port) once it serves."""
    port = free_port()
    metrics_port = free_port()
    while metrics_port == port:
        metrics_port = free_port()
    address = f"127.0.0.1:{port}"
    fleet.start(name, [*ARENA, "referee", "--port", str(port), "--operator-port", "0",
                       "--metrics-port", str(metrics_port), "--redis", redis_url, *extra])
    wait_for_referee(address, fleet)
    return address, metrics_port


def wait_for_referee(address: str, fleet: Supervisor, timeout: float = 30.0) -> None:
    """Until the referee's gRPC health service answers SERVING (or a child dies)."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        health: Any = health_pb2_grpc.HealthStub(channel)  # its stubs carry no types

        def serving() -> bool:
            try:
                reply = health.Check(health_pb2.HealthCheckRequest(), timeout=0.5,
                                     wait_for_ready=True)
            except grpc.RpcError:
                return False
            return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

        if not wait_until(serving, time.monotonic() + timeout, fleet.check):
            raise RuntimeError(f"the referee did not serve on {address} within "
                               f"{timeout:.0f}s")


def wait_for_sessions(address: str, names: Sequence[str], sessions: int, fleet: Supervisor,
                      timeout: float = 30.0, at_most: bool = False) -> None:
    """Until ``names`` hold at least ``sessions`` sessions on the referee (``at_most``: at most,
    e.g. 0 once their processes have stopped)."""
    from sueca.referee.control import list_bots

    wanted = set(names)
    seen = 0

    def enough() -> bool:
        nonlocal seen
        seen = sum(b["sessions"] for b in list_bots(address) if b["bot"] in wanted)
        return (seen <= sessions) if at_most else (seen >= sessions)

    if not wait_until(enough, time.monotonic() + timeout, fleet.check):
        raise RuntimeError(f"{seen} bot sessions connected after {timeout:.0f}s, waiting for "
                           f"{'at most' if at_most else 'at least'} {sessions}")


def scrape_port(port: int) -> Samples:
    """The samples of the metrics page on loopback ``port``."""
    return scrape(metrics_url(port))


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    """A process's resident memory (or its peak, ``VmHWM``) in KiB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/{pid}/status")
