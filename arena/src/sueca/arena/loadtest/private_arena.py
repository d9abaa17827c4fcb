"""The private arena of ``sueca-arena loadtest TARGET``: a Redis, a referee with house bots, and
the target's ``sueca-bot run`` processes, all on loopback, run by one
:class:`sueca.arena.local_arena.ArenaProcesses` (a private folder, a janitor)."""

from __future__ import annotations

import itertools
import os
import re
import sys
import sysconfig
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import sueca.codec
import sueca.engine
import sueca.sdk
from sueca.arena.local_arena import BOT, ArenaProcesses, register
from sueca.arena.processes import port_answers, wait_until
from sueca.arena.redisproc import free_port
from sueca.referee import control
from sueca.sdk.logs import printable

#: a traceback's frame line, as Python writes it (and as a JSON log line escapes it)
_FRAME = re.compile(r'File \\?"(?P<path>[^"\\]+)\\?", line (?P<line>\d+)')
#: folders whose frames are not the bot's own code: Python's library, and ours
_NOT_THE_BOTS = tuple(str(Path(p).resolve()) + os.sep for p in (
    sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"],
    Path(sueca.sdk.__file__ or "").parent, Path(sueca.codec.__file__ or "").parent,
    Path(sueca.engine.__file__ or "").parent))
#: what opens a traceback
_TRACEBACK = "Traceback (most recent call last):"


class PrivateArena:
    """A private Redis, a referee with house bots, and ``processes`` ``sueca-bot run SPEC``
    processes registered as ``target``; with ``net_rtt_ms`` the target's processes reach the
    referee through a delaying proxy (:mod:`sueca.arena.delayproxy`). Each child runs in its own
    session and is stopped if this process dies (:mod:`sueca.arena.processes`); all are
    stopped by :meth:`stop`, the referee last. A child that dies is a ``RuntimeError``
    (:class:`sueca.arena.processes.ChildExited`) quoting its log."""

    NAME = "target"

    def __init__(self, spec: str, processes: int, capacity: int, house: Sequence[str], *,
                 net_rtt_ms: float = 0.0, net_jitter_ms: float = 0.0) -> None:
        self.spec, self.processes, self.capacity = spec, processes, capacity
        self.house = list(house)
        self.net_rtt_ms, self.net_jitter_ms = net_rtt_ms, net_jitter_ms
        self.address = ""
        self.metrics_url = ""
        self.children: ArenaProcesses | None = None

    @property
    def logs(self) -> Path | None:
        return None if self.children is None else self.children.log_dir

    @property
    def redis_url(self) -> str:
        """Its own Redis's URL; "" before it is started or after it is stopped."""
        server = None if self.children is None else self.children.redis_server
        return "" if server is None else server.url

    def start(self, timeout: float = 40.0) -> PrivateArena:
        self.children = children = ArenaProcesses(prefix="sueca-loadtest-",
                                                  env={"PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + timeout
        try:
            redis = children.start_redis()
            token = register(redis.url, [self.NAME])[self.NAME]
            self.address, mport = children.start_referee(args=[
                "--redis", redis.url, "--drain-seconds", "2",
                "--house-bots", ",".join(self.house), "--log-level", "warning"],
                timeout=max(1.0, deadline - time.monotonic()))
            self.metrics_url = f"http://127.0.0.1:{mport}/metrics"
            bots_dial = self.address
            if self.net_rtt_ms > 0:  # the target's processes reach the referee through it
                bots_dial = self._start_proxy(deadline)
            for k in range(self.processes):
                # the token in the environment, never in argv (ps shows argv to everyone)
                children.spawn(f"target-{k}", [*BOT, "run", self.spec, "--server", bots_dial,
                                               "--capacity", str(self.capacity),
                                               "--max-backoff", "1", "--log-level", "warning"],
                               {"SUECA_TOKEN": token}, operator=False)
            self._wait(lambda n: n >= self.processes, deadline,
                       f"{self.processes} target session(s)")
        except BaseException:
            self.stop(keep_logs=True)
            raise
        return self

    def _start_proxy(self, deadline: float) -> str:
        """The delaying proxy in front of the referee: the address the target dials."""
        assert self.children is not None
        pport = free_port()
        self.children.spawn("delayproxy", [sys.executable, "-m", "sueca.arena.delayproxy",
                                           "--port", str(pport), "--to", self.address,
                                           "--rtt-ms", f"{self.net_rtt_ms:g}",
                                           "--jitter-ms", f"{self.net_jitter_ms:g}"])
        if not wait_until(lambda: port_answers(pport), deadline, self.check, 0.05):
            raise RuntimeError(f"the delaying proxy did not listen on {pport}; logs in "
                               f"{self.logs}")
        return f"127.0.0.1:{pport}"

    def _wait(self, enough: Callable[[int], bool], deadline: float, what: str) -> None:
        """Until ListBots answers with ``enough(target sessions)``, or raise RuntimeError."""
        def ready() -> bool:
            try:
                return enough(sum(b["sessions"] for b in control.list_bots(self.address,
                                                                           timeout=1.0)
                                  if b["bot"] == self.NAME))
            except control.RefereeError:
                return False

        if not wait_until(ready, deadline, self.check):
            raise RuntimeError(f"timed out waiting for {what}; logs in {self.logs}")

    def check(self) -> None:
        """:class:`sueca.arena.processes.ChildExited` (a RuntimeError) naming a child that
        exited, with the end of its log."""
        if self.children is not None:
            self.children.check()

    def first_raise(self) -> str | None:
        """Where the target's code raised first, as ``FILE:LINE`` (escaped, capped): the
        innermost frame outside Python's library and ours of the first traceback in a target
        process's log (the SDK logs one for every game it resigns), else its innermost frame;
        None when no log holds one."""
        if self.children is None:
            return None
        for child in self.children.procs:
            if not child.name.startswith("target-"):
                continue
            frames = _first_traceback(child.text())
            if not frames:
                continue
            own = [f for f in frames if not str(Path(f[0]).resolve()).startswith(_NOT_THE_BOTS)]
            path, line = (own or frames)[-1]
            return printable(f"{_shown(path)}:{line}", 300)
        return None

    def stop(self, keep_logs: bool = False, grace: float = 5.0) -> str | None:
        """SIGTERM the bots (and the proxy), then the referee, each wave given ``grace``
        seconds before SIGKILL; stop Redis. Returns the log folder when it is kept."""
        if self.children is None:
            return None
        others = [c.name for c in self.children.procs if c.name != "referee"]
        self.children.stop(others, ["referee"], grace=grace)
        kept = self.children.close(keep_logs=keep_logs)
        return None if kept is None else str(kept)


def _first_traceback(text: str) -> list[tuple[str, str]]:
    """The (file, line) frames of the first traceback in a log, outermost first: the indented
    lines under its first line, or (a JSON log line) the rest of that line."""
    start = text.find(_TRACEBACK)
    if start < 0:
        return []
    head, _, after = text[start:].partition("\n")
    block = head
    if head.strip() == _TRACEBACK:
        block = "\n".join(itertools.takewhile(lambda line: line.startswith(" "),
                                               after.splitlines()))
    return [(m["path"], m["line"]) for m in _FRAME.finditer(block)]


def _shown(path: str) -> str:
    """``path`` relative to the current folder when it is under it."""
    rel = os.path.relpath(os.path.abspath(path))
    return path if rel.startswith("..") else rel
