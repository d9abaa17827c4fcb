"""``sueca-arena serve`` as a subprocess for the tests: start it, read its web API, stop it the way
a terminal does (SIGINT to its whole process group) or a service manager does (SIGTERM)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from kits.arena import ROOT, SUECA_ARENA, children
from kits.wait import wait_for
from sueca.arena.processes import Child

#: the ladder's pace in the tests (matches a minute): games within seconds, without the
#: flat-out pace of --pace 0 on a machine the tests share
TEST_PACE = 120


class Serve:
    def __init__(self, data: Path, log: Path, *extra: str, cwd: Path | None = None,
                 **env_extra: str) -> None:
        from sueca.arena.redisproc import free_port, free_ports
        self.port, self.web_port = free_port(), free_port()
        self.metrics = free_ports(4, avoid=(self.port, self.web_port))  # referee..scheduler
        self.web = f"http://127.0.0.1:{self.web_port}"
        self.log = log
        env = dict(os.environ)
        for name in ("SUECA_REDIS_URL", "SUECA_KEY_PREFIX", "PROMETHEUS_MULTIPROC_DIR"):
            env.pop(name, None)
        env.update(env_extra)
        self.data = data
        pace = [] if "--pace" in extra else ["--pace", str(TEST_PACE)]
        self.child = Child("serve", [
            SUECA_ARENA, "serve", "--data", str(data), "--port", str(self.port),
            "--metrics-port", str(self.metrics), "--web-port", str(self.web_port), *pace,
            *extra], env, log, cwd=cwd or ROOT)
        self.proc = self.child.popen

    def text(self) -> str:
        return self.child.text()

    def url(self) -> str:
        """The Redis URL of the arena it keeps in its data folder."""
        from sueca.arena.local_arena import arena_url
        return arena_url(self.data)

    def printed_commands(self) -> list[str]:
        """The command lines serve printed to copy (indented four spaces), in order."""
        return [line[4:] for line in self.text().splitlines()
                if line.startswith("    ") and not line.startswith("     ")]

    def wait_up(self, timeout: float = 90.0) -> Serve:
        self.child.wait_ready(lambda: "Sueca Arena is up" in self.text(), timeout, "serve")
        return self

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.web + path, timeout=5) as r:
            return json.loads(r.read())

    def status(self, path: str) -> int:
        try:
            with urllib.request.urlopen(self.web + path, timeout=5) as r:
                return int(r.status)
        except urllib.error.HTTPError as err:
            return int(err.code)

    def wait_games(self, bots: int, games: int, timeout: float = 90.0) -> list[dict[str, Any]]:
        """Wait until ``bots`` bots on the leaderboard have ``games`` rated games each."""
        def enough() -> list[dict[str, Any]] | None:
            rows: list[dict[str, Any]] = self.get("/api/leaderboard")
            return rows if len([r for r in rows if r["games"] >= games]) >= bots else None

        def board() -> str:
            try:
                return f"leaderboard: {self.get('/api/leaderboard')}\n{self.text()}"
            except OSError as err:
                return f"leaderboard: {err}\n{self.text()}"

        found: list[dict[str, Any]] = wait_for(
            enough, timeout, f"{bots} bots with {games} rated games each", interval=0.25,
            detail=board)
        return found

    def metrics_text(self, offset: int, timeout: float = 30.0) -> str:
        """``/metrics`` on ``--metrics-port`` + ``offset`` (0 referee, 1 worker, 2 ratings,
        3 scheduler), once it answers."""
        url = f"http://127.0.0.1:{self.metrics + offset}/metrics"

        def read() -> str:
            with urllib.request.urlopen(url, timeout=5) as r:
                return str(r.read().decode())

        text: str = wait_for(read, timeout, f"{url} to answer", interval=0.2)
        return text

    def descendants(self) -> list[int]:
        found, todo = [], [self.proc.pid]
        while todo:
            kids = children(todo.pop())
            found += kids
            todo += kids
        return found

    def stop(self, sig: int = signal.SIGINT, group: bool = True, timeout: float = 60.0) -> float:
        """Send ``sig`` (to the whole process group, as a terminal's Ctrl-C does); returns the
        seconds until serve exited."""
        t0 = time.monotonic()
        self.child.send(sig, group)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.child.stop(grace=0)
            raise AssertionError(f"serve did not stop in {timeout}s:\n{self.text()}") from None
        seconds = time.monotonic() - t0
        self.child.finish(time.monotonic())  # reaped; its log closed
        return seconds


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2:].split()[0] != b"Z"
