"""An arena on this machine, as separate processes exactly as a deployment runs them: a private
Redis (:mod:`sueca.arena.redisproc`) unless one is given, a referee (``sueca-arena referee``)
unless one is given, Celery workers (``sueca-arena worker``) and bots (``sueca-bot run``, with
tokens from the bot registry), started and stopped in order by a
:class:`sueca.arena.processes.Supervisor`.

``demo`` and ``serve`` run on it, and so do ``bench tournament`` and the tests that need a
whole league.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sueca.arena.processes import Child, ChildExited, Janitor, Supervisor, wait_until
from sueca.sdk.channels import drop_tls_settings
from sueca.sdk.cli import UserError

EXAMPLE_BOTS = ("random", "heuristic", "reckless")

#: the socket of the Redis that ``serve --data DIR`` keeps in DIR
SOCKET_NAME = "redis.sock"
#: serve's data folder when none is given, where the league commands look when given no Redis
DATA_DIR = "sueca-data"


def arena_socket(data: str | os.PathLike[str]) -> Path:
    """Where ``serve --data DIR`` has its Redis listen: a unix socket in DIR (the same at
    every start; only this user can reach it)."""
    return Path(os.path.abspath(data)) / SOCKET_NAME


def arena_url(data: str | os.PathLike[str]) -> str:
    """The Redis URL of the arena ``serve --data DIR`` runs from DIR; a UserError saying to
    start it when DIR holds none."""
    sock = arena_socket(data)
    if not sock.is_socket():
        raise not_running(data)
    return f"unix://{sock}?db=0"


def not_running(data: str | os.PathLike[str]) -> UserError:
    """The error for a folder whose arena is not running."""
    from sueca.sdk.logs import printable
    shown = printable(os.fspath(data), 200)
    return UserError(f"no arena is running in {shown!r} (no Redis answers on "
                     f"{printable(str(arena_socket(data)), 300)}): start it with "
                     f"`sueca-arena serve --data {shown}`")


def _bin(name: str) -> str:
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else name


class LocalArena:
    """Redis, a referee, workers and bots as child processes; :meth:`stop` ends them all.

    ``bots`` maps a registered name to what ``sueca-bot run`` loads (an example name or
    ``module:Class``); None runs the example bots, ``{}`` none at all. A name already
    registered is refused unless the Redis is the arena's own or ``reissue`` is set (for names
    the caller owns, such as serve's ``example-*``): its token is then re-issued, its ratings
    stay (they are by name).
    """

    def __init__(self, redis_url: str | None = None, referee: str | None = None,
                 bots: dict[str, str] | None = None, capacity: int = 4, workers: int = 1,
                 concurrency: int = 2, log_dir: str | Path | None = None,
                 worker_env: dict[str, str] | None = None, metrics: bool = False,
                 extra_env: dict[str, str] | None = None, pool: str = "prefork",
                 reissue: bool = False) -> None:
        self.redis_url = redis_url or ""  # "": our own Redis, its URL once started
        self.reissue = reissue
        self.pool = pool
        self.referee = referee or ""  # "": our own referee, its address once started
        self.bot_specs = dict({b: b for b in EXAMPLE_BOTS} if bots is None else bots)
        self.capacity = capacity
        self.workers = workers
        self.concurrency = concurrency
        self.own_logs = log_dir is None  # a folder of ours: removed if we are killed
        self.log_dir = Path(log_dir or tempfile.mkdtemp(prefix="sueca-demo-"))
        self.worker_env = dict(worker_env or {})
        self.metrics = metrics
        self.extra_env = dict(extra_env or {})
        self.redis_server: Any = None
        self.procs = Supervisor(self.log_dir)
        self.store: Any = None
        self.tokens: dict[str, str] = {}
        self.ports: dict[str, int] = {}
        self.janitor: Janitor | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env["SUECA_REDIS_URL"] = self.redis_url
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        if self.own_logs:  # children's temporary files (a prefork pool's pymp-* folders) live
            tmp = self.log_dir / "tmp"  # in our folder, which the janitor removes if we are killed
            tmp.mkdir(exist_ok=True)
            env["TMPDIR"] = str(tmp)
        from sueca.sdk.logs import current_format
        env["SUECA_LOG_FORMAT"] = current_format()  # children log as this command does
        env.update(self.extra_env)
        env.update(extra)
        return env

    def start(self, timeout: float = 40.0) -> LocalArena:
        """Start everything; on any failure or interruption meanwhile, stop what was started
        at once (nothing is running yet that deserves a graceful stop) and re-raise."""
        try:
            return self._start(timeout)
        except BaseException:
            self.stop(grace=2.0)
            raise

    def _start(self, timeout: float) -> LocalArena:
        from sueca.arena.redisproc import RedisServer, free_port
        from sueca.arena.store import Store, StoreUnavailable
        deadline = time.monotonic() + timeout
        # if we are killed (even by SIGKILL) the janitor stops our children and removes our
        # log folder; the private Redis has its own
        self.janitor = self.procs.janitor = Janitor()
        for child in self.procs:  # started by the caller before us (serve's referee)
            self.janitor.watch(pid=child.pid)
        if self.own_logs:
            self.janitor.watch(path=self.log_dir)
        if not self.redis_url:
            self.redis_server = RedisServer().start()
            self.redis_url = self.redis_server.url
        try:
            self.store = Store.from_url(self.redis_url)
        except StoreUnavailable as err:
            raise UserError(str(err)) from None
        self._register()
        if not self.referee:
            drop_tls_settings()  # its own referee is plaintext on loopback
            port, mport = free_port(), free_port()
            self.ports.update(referee=port, referee_metrics=mport)
            self.referee = f"127.0.0.1:{port}"
            # one port (--operator-port 0): its workers and bots dial the same address
            self._spawn("referee", [_bin("sueca-arena"), "referee", "--port", str(port),
                                    "--operator-port", "0", "--metrics-port", str(mport),
                                    "--drain-seconds", "2", "--log-level", "warning"])
        for n in range(self.workers):
            # the Redis URL (perhaps with a password) travels in SUECA_REDIS_URL, never in argv
            args = [_bin("sueca-arena"), "worker", "--referee",
                    self.referee, "-c", str(self.concurrency), "--pool", self.pool,
                    "--loglevel", "INFO",
                    "-n", f"demo{n}-{os.getpid()}@%h"]
            if self.metrics:
                self.ports[f"worker{n}_metrics"] = mp = free_port()
                args += ["--metrics-port", str(mp)]
            self._spawn(f"worker{n}", args, self.worker_env)
        for name, spec in self.bot_specs.items():
            # a bot's token in its environment (argv is public), and nothing of the operators'
            self._spawn(f"bot {name}", [_bin("sueca-bot"), "run", spec, "--server", self.referee,
                                        "--name", name, "--capacity", str(self.capacity),
                                        "--threads", "0", "--max-backoff", "1",
                                        "--log-level", "warning"],
                        {"SUECA_TOKEN": self.tokens[name]}, operator=False)
        self._wait_bots(deadline)
        self._wait_workers(deadline)
        return self

    def stop(self, grace: float | None = None) -> None:
        """Workers first (no new matches), then bots, then the referee, then Redis, each given
        10 s to stop cleanly; with ``grace``, everything is sent SIGTERM at once and whatever
        is left after ``grace`` seconds is killed (an interrupted start-up)."""
        order = sorted((c.name for c in self.procs),
                       key=lambda name: (not name.startswith("worker"),
                                         not name.startswith("bot"), name))
        if grace is not None:
            self.procs.stop(order, grace=grace)
        else:
            self.procs.stop(*([name] for name in order), grace=10.0)
        if self.redis_server is not None:
            self.redis_server.stop()
            self.redis_server = None
        if self.janitor is not None:
            self.janitor.stand_down()
            self.janitor = None

    def __enter__(self) -> LocalArena:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers -----------------------------------------------------------------------------
    def _spawn(self, name: str, argv: list[str], extra: Mapping[str, str] | None = None,
               operator: bool = True) -> Child:
        """Start a child with :meth:`env` plus ``extra``; ``operator=False`` (bots) leaves out
        the Redis URL and the operator token, which only the arena's own processes may hold."""
        env = self.env(**(extra or {}))
        if not operator:
            for secret in ("SUECA_REDIS_URL", "SUECA_OPERATOR_TOKEN"):
                env.pop(secret, None)
        return self.procs.start(name, argv, env)

    def _register(self) -> None:
        from sueca.arena.store.bots import BotRegistryError
        registry = self.store.bots
        for name in self.bot_specs:
            if registry.exists(name) and (self.reissue or self.redis_server is not None):
                registry.remove(name)
            try:
                self.tokens[name] = registry.add(name)
            except BotRegistryError as err:
                raise UserError(str(err)) from None

    def check(self) -> None:
        """A UserError if a child has exited: its own error line when it gave one, else the
        end of its log."""
        try:
            self.procs.check()
        except ChildExited as err:
            raise UserError(str(err)) from None

    def _wait_bots(self, deadline: float) -> None:
        from sueca.referee import control
        referee = self.referee
        want = set(self.bot_specs)
        seen: set[str] = set()
        answered = False  # with no bots to wait for, still wait for the referee to answer

        def connected() -> bool:
            nonlocal seen, answered
            try:
                seen = {b["bot"] for b in control.list_bots(referee, timeout=1.0)
                        if b["sessions"] > 0}
                answered = True
            except Exception:
                seen = set()
            return answered and want <= seen

        if wait_until(connected, deadline, self.check):
            return
        if not answered:
            raise UserError(f"the referee {self.referee} did not answer in time; logs in "
                            f"{self.log_dir}")
        raise UserError(f"bots {', '.join(sorted(want - seen))} did not connect to the referee "
                        f"{self.referee} in time; logs in {self.log_dir}")

    def _wait_workers(self, deadline: float) -> None:
        workers = [p for p in self.procs if p.name.startswith("worker")]
        if not wait_until(lambda: all(" ready." in p.text() for p in workers), deadline,
                          self.check):
            raise UserError(f"the Celery worker did not start in time; logs in {self.log_dir}")
