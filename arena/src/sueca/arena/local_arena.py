"""An arena on this machine, as separate processes exactly as a deployment runs them.

:class:`ArenaProcesses` is how every command runs an arena's processes: the supervised
children of one command (:class:`sueca.arena.processes.Supervisor`) in one folder (their logs,
and their temporary files as ``TMPDIR``), a :class:`sueca.arena.processes.Janitor` that stops
them and removes a private folder if we die however we die, a private Redis
(:mod:`sueca.arena.redisproc`), referees on free loopback ports, bots registered with their
tokens. :class:`LocalArena` (``demo``, ``serve``, ``bench tournament``, the tests that need a
whole league: a referee, Celery workers and ``sueca-bot run`` bots), the load tester's private
arena (:mod:`sueca.arena.loadtest.private_arena`) and the benches'
(:mod:`sueca.arena.bench.fleet`) are built on it.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sueca.arena.processes import Child, ChildExited, Janitor, Supervisor, wait_until
from sueca.arena.redisproc import RedisServer, free_port
from sueca.arena.redisurl import DATA_DIR as DATA_DIR
from sueca.arena.redisurl import arena_socket as arena_socket
from sueca.arena.redisurl import arena_url as arena_url
from sueca.arena.redisurl import not_running as not_running
from sueca.arena.store import Store, StoreUnavailable
from sueca.arena.store.bots import BotRegistryError
from sueca.referee import control
from sueca.sdk.channels import drop_tls_settings
from sueca.sdk.cli import UserError
from sueca.sdk.logs import current_format

EXAMPLE_BOTS = ("random", "heuristic", "reckless")

#: ``sueca-arena`` and ``sueca-bot`` as this interpreter runs them (children with no console
#: script of their own: a source tree, a virtual environment not on PATH)
ARENA = [sys.executable, "-m", "sueca.arena.cli"]
BOT = [sys.executable, "-c", "import sys; from sueca.sdk.cli import main; sys.exit(main())"]


def _bin(name: str) -> str:
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else name


def register(redis_url: str, names: Iterable[str], *, reissue: bool = False) -> dict[str, str]:
    """Register bots ``names`` on the Redis at ``redis_url``: their tokens by name. A name
    already registered is a UserError, unless ``reissue`` (its token is then re-issued; its
    ratings stay, they are by name)."""
    try:
        store = Store.from_url(redis_url)
    except StoreUnavailable as err:
        raise UserError(str(err)) from None
    try:
        return register_in(store, names, reissue=reissue)
    finally:
        store.close()


def register_in(store: Store, names: Iterable[str], *, reissue: bool = False) -> dict[str, str]:
    """:func:`register` on an open ``store``."""
    tokens = {}
    for name in names:
        if reissue and store.bots.exists(name):
            store.bots.remove(name)
        try:
            tokens[name] = store.bots.add(name)
        except BotRegistryError as err:
            raise UserError(str(err)) from None
    return tokens


def wait_serving(address: str, check: Supervisor, timeout: float = 30.0) -> None:
    """Until the referee at ``address`` answers its gRPC health check SERVING; a
    :class:`ChildExited` if one of ``check``'s children dies first, RuntimeError after
    ``timeout`` seconds."""
    with grpc.insecure_channel(address) as channel:
        health: Any = health_pb2_grpc.HealthStub(channel)  # its stubs carry no types

        def serving() -> bool:
            try:
                reply = health.Check(health_pb2.HealthCheckRequest(), timeout=0.5,
                                     wait_for_ready=True)
            except grpc.RpcError:
                return False
            return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

        if not wait_until(serving, time.monotonic() + timeout, check.check):
            raise RuntimeError(f"the referee did not serve on {address} within "
                               f"{timeout:.0f}s")


def start_referee(procs: Supervisor, name: str = "referee", *, args: Sequence[str] = (),
                  env: Mapping[str, str] | None = None, timeout: float = 30.0) -> tuple[str, int]:
    """Start referee ``name`` among ``procs`` on free loopback ports, one for bots and operators
    alike (``--operator-port 0``), with ``args`` added: (its address, its metrics port) once it
    serves (:func:`wait_serving`)."""
    port = free_port()
    metrics_port = free_port()
    while metrics_port == port:
        metrics_port = free_port()
    address = f"127.0.0.1:{port}"
    procs.start(name, [*ARENA, "referee", "--port", str(port), "--operator-port", "0",
                       "--metrics-port", str(metrics_port), *args], env)
    wait_serving(address, procs, timeout)
    return address, metrics_port


class ArenaProcesses:
    """The supervised children of one command in one folder, and the janitor behind them.

    ``log_dir`` None: a private folder (``prefix``...) that :meth:`close` removes unless asked
    to keep it, and the janitor removes if we die; the children's temporary files (a prefork
    pool's ``pymp-*`` folders) then go in its ``tmp/`` (``TMPDIR``), so that nothing of theirs
    outlives it. A given folder (serve's ``DIR/logs``) is left as it is. ``env`` is added to
    every child's environment, after ours. The janitor starts with :meth:`open` (at once
    unless ``open=False``), and watches every child started before it too.
    """

    def __init__(self, log_dir: str | os.PathLike[str] | None = None, *,
                 prefix: str = "sueca-arena-", env: Mapping[str, str] | None = None,
                 open: bool = True) -> None:
        self.own_logs = log_dir is None
        self.log_dir = Path(tempfile.mkdtemp(prefix=prefix) if log_dir is None else log_dir)
        self.extra_env = dict(env or {})
        self.procs = Supervisor(self.log_dir)
        self.janitor: Janitor | None = None
        self.redis_server: RedisServer | None = None
        if open:
            self.open()

    def open(self) -> None:
        """Start the janitor (once): if we are killed, even by SIGKILL, it stops our children
        and removes our private folder; a private Redis has its own."""
        if self.janitor is not None:
            return
        self.janitor = self.procs.janitor = Janitor()
        for child in self.procs:
            self.janitor.watch(pid=child.pid)
        if self.own_logs:
            self.janitor.watch(path=self.log_dir)

    def own_env(self) -> dict[str, str]:
        """What every child gets on top of our environment: logging as this command does,
        ``TMPDIR`` in a private folder, then ``env``."""
        env = {"SUECA_LOG_FORMAT": current_format()}
        if self.own_logs:
            tmp = self.log_dir / "tmp"
            tmp.mkdir(exist_ok=True)
            env["TMPDIR"] = str(tmp)
        env.update(self.extra_env)
        return env

    def env(self, **extra: str) -> dict[str, str]:
        """A child's environment: ours as it is now, without a metrics folder of ours, plus
        :meth:`own_env` and ``extra``."""
        env = dict(os.environ)
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        return {**env, **self.own_env(), **extra}

    def spawn(self, name: str, argv: Sequence[str], extra: Mapping[str, str] | None = None, *,
              operator: bool = True) -> Child:
        """Start child ``name`` with :meth:`env` plus ``extra``; ``operator=False`` (bots)
        leaves out the Redis URL and the operator token, which only the arena's own processes
        may hold."""
        env = self.env(**(extra or {}))
        if not operator:
            for secret in ("SUECA_REDIS_URL", "SUECA_OPERATOR_TOKEN"):
                env.pop(secret, None)
        return self.procs.start(name, argv, env)

    def start_redis(self) -> RedisServer:
        """A private Redis on a free loopback port, stopped by :meth:`close`."""
        self.redis_server = RedisServer().start()
        return self.redis_server

    def start_referee(self, name: str = "referee", *, args: Sequence[str] = (),
                      timeout: float = 30.0) -> tuple[str, int]:
        """:func:`start_referee` among these children. Its own referee is plaintext: this
        process's TLS settings for other referees are dropped."""
        drop_tls_settings()
        return start_referee(self.procs, name, args=args, env=self.env(), timeout=timeout)

    def check(self) -> None:
        """:class:`ChildExited` (a RuntimeError) naming a child that exited, with its error
        line or the end of its log."""
        self.procs.check()

    def stop(self, *waves: Iterable[str], grace: float = 10.0, group: bool = False) -> None:
        """Stop children wave by wave (:meth:`Supervisor.stop`)."""
        self.procs.stop(*waves, grace=grace, group=group)

    def close(self, *, keep_logs: bool = False) -> Path | None:
        """Stop whatever is left (one wave, 5 s), then the private Redis; the janitor stands
        down; a private folder is removed unless ``keep_logs``. Returns the folder when it is
        kept (always a given one)."""
        self.procs.stop(grace=5.0, group=True)
        if self.redis_server is not None:
            self.redis_server.stop()
            self.redis_server = None
        if self.janitor is not None:
            self.janitor.stand_down()
            self.janitor = None
        if self.own_logs and not keep_logs:
            shutil.rmtree(self.log_dir, ignore_errors=True)
            return None
        return self.log_dir


class LocalArena:
    """Redis, a referee, workers and bots as child processes; :meth:`stop` ends them all.

    ``bots`` maps a registered name to what ``sueca-bot run`` loads (an example name or
    ``module:Class``); None runs the example bots, ``{}`` none at all. A name already
    registered is refused unless the Redis is the arena's own or ``reissue`` is set (for names
    the caller owns, such as serve's ``example-*``): its token is then re-issued, its ratings
    stay (they are by name).
    """

    def __init__(self, redis_url: str | None = None, referee: str | None = None,
                 bots: dict[str, str] | None = None, *, capacity: int = 4, workers: int = 1,
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
        self.worker_env = dict(worker_env or {})
        self.metrics = metrics
        self.children = ArenaProcesses(log_dir, prefix="sueca-demo-", env=extra_env, open=False)
        self.log_dir = self.children.log_dir
        self.procs = self.children.procs
        self._store: Store | None = None
        self.tokens: dict[str, str] = {}
        self.ports: dict[str, int] = {}

    @property
    def redis_server(self) -> RedisServer | None:
        return self.children.redis_server

    @property
    def store(self) -> Store:
        """The arena's store, once :meth:`start` has opened it."""
        if self._store is None:
            raise RuntimeError("the arena is not started: no store yet")
        return self._store

    # -- lifecycle ---------------------------------------------------------------------------
    def env(self, **extra: str) -> dict[str, str]:
        """A child's environment (:meth:`ArenaProcesses.env`) with the arena's Redis URL."""
        return self.children.env(SUECA_REDIS_URL=self.redis_url, **extra)

    def start(self, timeout: float = 40.0) -> LocalArena:
        """Start everything; on any failure or interruption meanwhile, stop what was started
        at once (nothing is running yet that deserves a graceful stop) and re-raise."""
        try:
            return self._start(timeout)
        except BaseException:
            self.stop(grace=2.0)
            raise

    def _start(self, timeout: float) -> LocalArena:
        deadline = time.monotonic() + timeout
        self.children.open()  # also watches what the caller started before us (serve's referee)
        own_redis = not self.redis_url
        if own_redis:
            self.redis_url = self.children.start_redis().url
        try:
            self._store = Store.from_url(self.redis_url)
        except StoreUnavailable as err:
            raise UserError(str(err)) from None
        self.tokens = register_in(self._store, self.bot_specs, reissue=self.reissue or own_redis)
        if not self.referee:  # one port: its workers and bots dial the same address
            drop_tls_settings()  # its own referee is plaintext on loopback
            try:
                self.referee, mport = start_referee(
                    self.procs, args=["--drain-seconds", "2", "--log-level", "warning"],
                    env=self.env(), timeout=max(1.0, deadline - time.monotonic()))
            except RuntimeError as err:  # ChildExited too
                raise UserError(f"{err}; logs in {self.log_dir}") from None
            self.ports.update(referee=int(self.referee.rpartition(":")[2]),
                              referee_metrics=mport)
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
        is left after ``grace`` seconds is killed (an interrupted start-up). The log folder
        stays (the caller's, or ``demo``'s to remove)."""
        order = sorted((c.name for c in self.procs),
                       key=lambda name: (not name.startswith("worker"),
                                         not name.startswith("bot"), name))
        if grace is not None:
            self.procs.stop(order, grace=grace)
        else:
            self.procs.stop(*([name] for name in order), grace=10.0)
        self.children.close(keep_logs=True)

    def __enter__(self) -> LocalArena:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers -----------------------------------------------------------------------------
    def _spawn(self, name: str, argv: list[str], extra: Mapping[str, str] | None = None,
               operator: bool = True) -> Child:
        return self.children.spawn(name, argv, {"SUECA_REDIS_URL": self.redis_url,
                                                **(extra or {})}, operator=operator)

    def check(self) -> None:
        """A UserError if a child has exited: its own error line when it gave one, else the
        end of its log."""
        try:
            self.procs.check()
        except ChildExited as err:
            raise UserError(str(err)) from None

    def _wait_bots(self, deadline: float) -> None:
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
