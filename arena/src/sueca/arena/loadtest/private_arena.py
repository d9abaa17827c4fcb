"""The private arena of ``sueca-arena loadtest TARGET``: a Redis, a referee with house bots, and
the target's ``sueca-bot run`` processes, all on loopback, started and stopped by one
:class:`sueca.arena.processes.Supervisor`."""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from sueca.arena.processes import Supervisor, port_answers, wait_until
from sueca.arena.redisproc import RedisServer, free_port

_BOT = [sys.executable, "-c", "import sys; from sueca.sdk.cli import main; sys.exit(main())"]


class PrivateArena:
    """A private Redis, a referee with house bots, and ``processes`` ``sueca-bot run SPEC``
    processes registered as ``target``; with ``net_rtt_ms`` the target's processes reach the
    referee through a delaying proxy (:mod:`sueca.arena.delayproxy`). Each child runs in its own
    session and gets SIGTERM if this process dies (:mod:`sueca.arena.processes`); all are
    stopped by :meth:`stop`, the referee last. A child that dies is a ``RuntimeError``
    (:class:`sueca.arena.processes.ChildExited`) quoting its log."""

    NAME = "target"

    def __init__(self, spec: str, processes: int, capacity: int, house: Sequence[str],
                 net_rtt_ms: float = 0.0, net_jitter_ms: float = 0.0) -> None:
        self.spec, self.processes, self.capacity = spec, processes, capacity
        self.house = list(house)
        self.net_rtt_ms, self.net_jitter_ms = net_rtt_ms, net_jitter_ms
        self.address = ""
        self.metrics_url = ""
        self.logs: Path | None = None
        self.children: Supervisor | None = None
        self.redis: RedisServer | None = None

    def start(self, timeout: float = 40.0) -> PrivateArena:
        from sueca.arena.store import Store
        from sueca.sdk.channels import drop_tls_settings

        drop_tls_settings()  # its own referee is plaintext on loopback
        self.logs = Path(tempfile.mkdtemp(prefix="sueca-loadtest-"))
        self.children = Supervisor(self.logs, env={"PYTHONUNBUFFERED": "1"})
        self.redis = RedisServer()
        deadline = time.monotonic() + timeout
        try:
            self.redis.start()
            store = Store.from_url(self.redis.url)
            try:
                token = store.bots.add(self.NAME)
            finally:
                store.close()
            port, mport = free_port(), free_port()
            while mport == port:
                mport = free_port()
            self.address = f"127.0.0.1:{port}"
            self.metrics_url = f"http://127.0.0.1:{mport}/metrics"
            self._spawn("referee", [sys.executable, "-m", "sueca.arena.cli", "referee",
                                    "--port", str(port), "--operator-port", "0",
                                    "--metrics-port", str(mport),
                                    "--redis", self.redis.url, "--drain-seconds", "2",
                                    "--house-bots", ",".join(self.house),
                                    "--log-level", "warning"])
            self._wait(lambda n: True, deadline, "the referee to serve")
            bots_dial = self.address
            if self.net_rtt_ms > 0:  # the target's processes reach the referee through it
                pport = free_port()
                self._spawn("delayproxy", [sys.executable, "-m", "sueca.arena.delayproxy",
                                           "--port", str(pport), "--to", self.address,
                                           "--rtt-ms", f"{self.net_rtt_ms:g}",
                                           "--jitter-ms", f"{self.net_jitter_ms:g}"])
                bots_dial = f"127.0.0.1:{pport}"
                if not wait_until(lambda: port_answers(pport), deadline, self.check, 0.05):
                    raise RuntimeError(f"the delaying proxy did not listen on {pport}; logs in "
                                       f"{self.logs}")
            for k in range(self.processes):
                # the token in the environment, never in argv (ps shows argv to everyone)
                self._spawn(f"target-{k}", [*_BOT, "run", self.spec, "--server", bots_dial,
                                            "--capacity", str(self.capacity),
                                            "--max-backoff", "1", "--log-level", "warning"],
                            SUECA_TOKEN=token)
            self._wait(lambda n: n >= self.processes, deadline,
                       f"{self.processes} target session(s)")
        except BaseException:
            self.stop(keep_logs=True)
            raise
        return self

    def _spawn(self, name: str, argv: list[str], **env: str) -> None:
        assert self.children is not None
        self.children.start(name, argv, append=False, extra=env)

    def _wait(self, enough: Callable[[int], bool], deadline: float, what: str) -> None:
        """Until ListBots answers with ``enough(target sessions)``, or raise RuntimeError."""
        from sueca.referee import control

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

    def stop(self, keep_logs: bool = False, grace: float = 5.0) -> str | None:
        """SIGTERM the bots (and the proxy), then the referee, each wave given ``grace``
        seconds before SIGKILL; stop Redis. Returns the log folder when it is kept."""
        if self.children is not None:
            others = [c.name for c in self.children if c.name != "referee"]
            self.children.stop(others, ["referee"], grace=grace)
        if self.redis is not None:
            self.redis.stop()
            self.redis = None
        if self.logs is None:
            return None
        if keep_logs:
            return str(self.logs)
        shutil.rmtree(self.logs, ignore_errors=True)
        return None
