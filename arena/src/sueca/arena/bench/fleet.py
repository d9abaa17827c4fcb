"""The benches' private arena: a Redis, referees and bot processes on loopback, run by one
:class:`sueca.arena.local_arena.ArenaProcesses` and all stopped on the way out, failure or not.

Used by ``bench referee``, ``bench wan`` and ``bench hostile``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from sueca.arena.local_arena import ARENA, BOT, ArenaProcesses, register, wait_serving
from sueca.arena.local_arena import start_referee as start_arena_referee
from sueca.arena.processes import Supervisor, wait_until
from sueca.arena.promscrape import Samples, metrics_url, scrape
from sueca.arena.redisproc import RedisServer
from sueca.referee.control import list_bots

__all__ = ["ARENA", "BOT", "private_arena", "register", "rss_kb", "scrape_port",
           "start_referee", "stop_all", "wait_for_referee", "wait_for_sessions"]


@contextmanager
def private_arena(keep_logs: bool = False) -> Iterator[tuple[Supervisor, RedisServer]]:
    """A started private Redis and a supervisor with no child yet (its children's output
    unbuffered), from an :class:`ArenaProcesses` (a private folder, a janitor); on the way out,
    failure or not, every child is stopped (a failure first prints their logs' last lines):
    bots first, then referees, each whole process group given SIGTERM at once and 5 s; then
    Redis; the logs are removed unless ``keep_logs``."""
    children = ArenaProcesses(prefix="sueca-bench-", env={"PYTHONUNBUFFERED": "1"})
    fleet = children.procs
    fleet.env = children.own_env()  # for a child started with no environment of its own
    try:
        redis = children.start_redis()
        yield fleet, redis
    except BaseException:
        for child in fleet:
            tail = child.tail(10)
            if tail:
                print(f"--- {child.name} (last lines) ---\n{tail}", file=sys.stderr)
        raise
    finally:
        stop_all(fleet)
        if children.close(keep_logs=keep_logs) is not None:
            print(f"logs kept in {fleet.logs}", file=sys.stderr)


def stop_all(fleet: Supervisor, names: Sequence[str] | None = None, grace: float = 5.0) -> None:
    """Stop every child (or those in ``names``, which then leave the fleet: their logs stay):
    one wave, bots first (they drain), referees last, each whole process group."""
    chosen = [c.name for c in fleet] if names is None else list(names)
    fleet.stop(sorted(chosen, key=lambda name: name.startswith("referee")), grace=grace,
               group=True)


def start_referee(fleet: Supervisor, name: str, redis_url: str,
                  extra: Sequence[str] = ()) -> tuple[str, int]:
    """Start a referee on free ports; (its address, its metrics port) once it serves."""
    return start_arena_referee(fleet, name, args=["--redis", redis_url, *extra])


def wait_for_referee(address: str, fleet: Supervisor, timeout: float = 30.0) -> None:
    """Until the referee's gRPC health service answers SERVING (or a child dies)."""
    wait_serving(address, fleet, timeout)


def wait_for_sessions(address: str, names: Sequence[str], sessions: int, fleet: Supervisor,
                      timeout: float = 30.0, at_most: bool = False) -> None:
    """Until ``names`` hold at least ``sessions`` sessions on the referee (``at_most``: at most,
    e.g. 0 once their processes have stopped)."""
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
