"""The bot host: claims hosted bots from Redis and runs each as ``sueca-bot run``.

Each bot host heartbeats (``hosted:hosts``) and holds the bots it runs by claims with a TTL
(``hosted:owner:{bot}``, :data:`~sueca.arena.store.hosted.OWNER_TTL` seconds) renewed every
:data:`INTERVAL` seconds. It takes unclaimed bots up to an even share of the hosted bots among
the live hosts, and lets go of any beyond it, so hosts that join share the load and a host that
dies (no renewal) loses its bots to the others within ``OWNER_TTL + INTERVAL`` seconds plus the
bot's start.

For a bot it holds, the host fetches the submission (cached on disk by hash, checked again as
on arrival), builds it once in the sandbox if the manifest has a ``build``, and starts
``sueca-bot run exec:...``: the runner, outside the sandbox, holds the bot's token (a fresh one
from :meth:`~sueca.arena.store.bots.BotRegistry.issue_host_token`, in its environment only)
and dials the referee; the bot's own code runs inside the sandbox and speaks only over standard
input and output.
A runner that exits is started again after a back-off (:data:`BACKOFF_FIRST` seconds doubling
to :data:`BACKOFF_MAX`, reset after :data:`STEADY` seconds of running); a bot no longer held, or
whose version changed, is stopped (and its new version started). The runner's lines and the
bot's standard error (kept capped and rotated by the sandbox) are shipped to the owner's log in
Redis every heartbeat.

Every :data:`SWEEP_EVERY` seconds the host also sweeps the sandboxes that bot hosts of this
machine killed before their cleanup left (their cgroups, and whatever still runs in them:
:func:`sueca.arena.hosted.sandbox.sweep`), in a thread beside the heartbeat, so a dead host's
leftovers last that long while another host runs, not until the next one starts.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shlex
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from sueca.arena.hosted.archive import unpack
from sueca.arena.hosted.manifest import MANIFEST, Manifest, parse_manifest
from sueca.arena.hosted.sandbox import sweep as sweep_sandboxes
from sueca.arena.metrics import BuildInfoCollector, serve_health
from sueca.arena.processes import Child
from sueca.arena.store import TRANSIENT_REDIS_ERRORS, Store
from sueca.arena.store.hosted import HostedBot, fair_share

__all__ = ["BotHost", "Sandboxed", "SandboxFactory", "INTERVAL", "BACKOFF_FIRST", "BACKOFF_MAX",
           "STEADY", "BUILD_TIMEOUT", "SWEEP_EVERY"]

log = logging.getLogger("sueca.bothost")

INTERVAL = 2.0        # seconds between heartbeats (claims renewed, runners checked, logs shipped)
BACKOFF_FIRST = 1.0   # seconds before a crashed runner starts again; doubles per crash
BACKOFF_MAX = 60.0
STEADY = 30.0         # a runner up this long has its back-off reset
BUILD_TIMEOUT = 300.0  # seconds a submission's build may take
STOP_GRACE = 10.0     # seconds a stopped runner has to finish its games
#: seconds between sweeps of dead hosts' sandboxes: one listing of the sandboxes' cgroup folder
#: and a signal-0 per bot host pid named there
SWEEP_EVERY = 10.0
SHIP_BYTES = 256 * 1024  # bytes of a log file shipped per heartbeat
LOG_FILE_CAP = 8 * 1024 * 1024  # a shipped log file past this is started afresh


class Built(Protocol):
    """How a build ended (:class:`sueca.arena.hosted.sandbox.BuildResult`)."""

    @property
    def ok(self) -> bool: ...
    @property
    def returncode(self) -> int: ...
    @property
    def reason(self) -> str: ...
    @property
    def output(self) -> bytes: ...


class Sandboxed(Protocol):
    """The sandbox of one bot (:class:`sueca.arena.hosted.sandbox.Sandbox`)."""

    def argv(self, program: list[str]) -> list[str]: ...
    def build(self, command: list[str], timeout: float | None = None) -> Built: ...
    def cleanup(self) -> None: ...


#: (bot name, code folder, the file its standard error goes to) -> its sandbox
SandboxFactory = Callable[[str, Path, Path], Sandboxed]


@dataclass
class _Bot:
    """A bot this host holds: what runs, and how its runner fares."""

    name: str
    want: HostedBot
    folder: Path
    ready: Future[tuple[Manifest, Sandboxed]]
    child: Child | None = None
    crashes: int = 0
    due: float = 0.0  # monotonic time its runner may start (again)
    failed: str | None = None  # why this version cannot run (no retry until a new version)
    logs: list[_Tail] = field(default_factory=list)

    def sandbox(self) -> Sandboxed | None:
        if not self.ready.done() or self.ready.exception() is not None:
            return None
        return self.ready.result()[1]


class _Tail:
    """New whole lines of a log file another process appends to: the runner's log (started
    afresh once shipped past :data:`LOG_FILE_CAP`) or the sandbox's stderr log (rotated by the
    sandbox to ``NAME.1``: the rest of the old file is read there, and a line cut by the
    rotation is joined again). Lines the sandbox rotated away twice between two reads are lost:
    the log is capped, and a bot that prints that fast loses its oldest lines."""

    def __init__(self, path: Path, *, truncate: bool) -> None:
        self.path = path
        self.truncate = truncate
        self.offset = 0
        self.inode: int | None = None
        self.carry = b""  # the start of a line whose end is not written yet

    def lines(self) -> list[str]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return []
        data = b""
        if self.inode is not None and st.st_ino != self.inode:  # rotated
            data += self._read(self.path.with_name(self.path.name + ".1"))
            self.offset = 0
        self.inode = st.st_ino
        if st.st_size < self.offset:
            self.offset = 0
        data = self.carry + data + self._read(self.path)
        cut = data.rfind(b"\n") + 1
        if len(data) - cut > SHIP_BYTES:  # a "line" without end: ship it as it is
            cut = len(data)
        self.carry = data[cut:]
        if self.truncate and self.offset >= LOG_FILE_CAP and self.offset >= st.st_size:
            os.truncate(self.path, 0)
            self.offset = 0
        return data[:cut].decode("utf-8", "replace").splitlines()

    def _read(self, path: Path) -> bytes:
        try:
            with open(path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read(SHIP_BYTES)
        except FileNotFoundError:
            return b""
        self.offset += len(chunk)
        return chunk


class BotHost:
    """One bot host (see the module's docstring); :meth:`run` until :meth:`stop`."""

    def __init__(self, store: Store, *, name: str, server: str, work: Path,
                 sandbox: SandboxFactory, capacity: int = 4, python: str = sys.executable,
                 sweep: Callable[[], list[str]] = sweep_sandboxes) -> None:
        self.store = store
        self.name = name
        self.server = server
        self.work = work
        self.sandbox = sandbox
        self.capacity = capacity
        self.python = python
        self.bots: dict[str, _Bot] = {}
        self.restarts = 0
        self.last_loop = time.monotonic()
        self.live_hosts = 1
        self._stopping = threading.Event()
        self._prepare = ThreadPoolExecutor(2, thread_name_prefix="bothost-prepare")
        self._stopping_threads: list[threading.Thread] = []
        self._serial = 0  # starts so far: each has a folder of its own
        self._sweep = sweep
        self._sweeping: Future[list[str]] | None = None
        self._next_sweep = time.monotonic() + SWEEP_EVERY  # `bot-host` swept as it started
        (work / "cache").mkdir(parents=True, exist_ok=True)
        (work / "bots").mkdir(parents=True, exist_ok=True)

    # -- the loop ------------------------------------------------------------------------
    def run(self) -> None:
        """Heartbeat every :data:`INTERVAL` seconds until :meth:`stop`; then stop every runner
        and let go of every claim (another host takes them at once)."""
        try:
            while not self._stopping.is_set():
                try:
                    self.tick()
                except Exception as err:  # Redis away: keep the runners, try again
                    log.warning("bot host %s: heartbeat failed: %s", self.name, err)
                self._sweep_due()
                self.last_loop = time.monotonic()
                self._stopping.wait(INTERVAL)
        finally:
            self.shutdown()

    def stop(self) -> None:
        self._stopping.set()

    def tick(self) -> None:
        hosted = self.store.hosted
        live = hosted.heartbeat(self.name)
        self.live_hosts = len(live)
        # a hosted bot whose current version is not its submission's (a connected version
        # started since) is not run
        listed = hosted.hosted()
        currents = self.store.versions.currents(sorted(listed))
        wanted = {b: w for b, w in listed.items() if currents[b] == w["version"]}
        owners = hosted.owners(sorted(set(listed) | set(self.bots)))
        mine = [b for b, o in owners.items() if o == self.name]
        for bot in mine:
            if bot not in wanted:  # unregistered, or a connected version started since
                hosted.release(bot, self.name)
        held = set(hosted.renew([b for b in mine if b in wanted], self.name))
        share = fair_share(len(wanted), len(live))
        for bot in sorted(held, key=self._rank, reverse=True)[:max(0, len(held) - share)]:
            hosted.release(bot, self.name)  # over its share: another host takes it
            held.discard(bot)
        free = sorted((b for b in wanted if owners.get(b) is None), key=self._rank)
        for bot in free:
            if len(held) >= share:
                break
            if hosted.claim(bot, self.name):
                held.add(bot)
        for bot in list(self.bots):
            if bot not in held:
                self._stop(bot, "no longer assigned to this host")
        for bot in sorted(held):
            self._keep(bot, wanted[bot])
        for running in self.bots.values():
            self._ship(running)

    def _sweep_due(self) -> None:
        """Start a sweep of dead hosts' sandboxes every :data:`SWEEP_EVERY` seconds, in the
        prepare pool (removing a cgroup waits for its processes to die: the heartbeat must not),
        and log what the last one removed; one sweep at a time."""
        done = self._sweeping
        if done is not None:
            if not done.done():
                return
            self._sweeping = None
            try:
                removed = done.result()
            except Exception as err:  # a cgroup still busy: the next sweep tries again
                log.warning("bot host %s: sweeping dead hosts' sandboxes failed: %s",
                            self.name, err)
            else:
                if removed:
                    log.info("bot host %s removed %d sandbox(es) a stopped bot host left: %s",
                             self.name, len(removed), ", ".join(removed))
        now = time.monotonic()
        if now >= self._next_sweep:
            self._next_sweep = now + SWEEP_EVERY
            self._sweeping = self._prepare.submit(self._sweep)

    def _rank(self, bot: str) -> str:
        """Each host's own order of the bots (rendezvous hashing): hosts starting together
        reach for different bots first."""
        return hashlib.sha256(f"{self.name}/{bot}".encode()).hexdigest()

    # -- one bot ---------------------------------------------------------------------------
    def _keep(self, bot: str, want: HostedBot) -> None:
        """Make ``bot`` run ``want``: prepare it, start its runner, restart a crashed one."""
        running = self.bots.get(bot)
        if running is not None and running.want["version"] != want["version"]:
            self._stop(bot, f"version {want['version']} replaces version "
                            f"{running.want['version']}")
            running = None
        if running is None:
            # a folder per start: its logs go to that version's owner's log only, and one
            # still being stopped never shares them with its successor
            self._serial += 1
            folder = self.work / "bots" / bot / f"v{want['version']}.{self._serial}"
            shutil.rmtree(folder, ignore_errors=True)  # a run of this host before ours
            folder.mkdir(parents=True)
            running = self.bots[bot] = _Bot(bot, want, folder, self._prepare.submit(
                self._prepared, bot, want, folder / "stderr"))
            running.logs = [_Tail(folder / "runner.log", truncate=True),
                            _Tail(folder / "stderr", truncate=False)]
            self._say(running, f"bot host {self.name} runs version {want['version']} "
                               f"(submission {want['submission'][:12]})")
        if running.failed is not None or not running.ready.done():
            return
        if running.child is None or not running.child.alive():
            self._start(running)

    def _start(self, running: _Bot) -> None:
        now = time.monotonic()
        if running.child is not None:  # it exited: back off, then start it again
            if running.due == 0.0:
                steady = now - running.child.started >= STEADY
                running.crashes = 1 if steady else running.crashes + 1
                wait = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (running.crashes - 1))
                running.due = now + wait
                self._say(running, f"runner exited with code {running.child.returncode}; "
                                   f"starting it again in {wait:g}s")
                running.child.finish(now)
            if now < running.due:
                return
            self.restarts += 1
        try:
            manifest, sandbox = running.ready.result()
        except TRANSIENT_REDIS_ERRORS as err:  # Redis away while fetching: try again
            log.warning("bot %s: fetching its submission failed (%s); trying again",
                        running.name, err)
            running.ready = self._prepare.submit(self._prepared, running.name, running.want,
                                                 running.folder / "stderr")
            return
        except Exception as err:
            running.failed = str(err)[:300]
            self._say(running, f"cannot run this version: {running.failed}")
            log.warning("bot %s version %s cannot run: %s", running.name,
                        running.want["version"], running.failed)
            return
        program = sandbox.argv(manifest.program(self.python))
        token = self.store.bots.issue_host_token(running.name)
        running.child = Child(f"bot {running.name}", [
            self.python, "-m", "sueca.sdk.cli", "run", "exec:" + shlex.join(program),
            "--server", self.server, "--capacity", str(self.capacity), "--threads", "0",
            "--max-backoff", "5", "--drain-timeout", str(STOP_GRACE - 2),
            "--log-level", "warning"],
            env={**_runner_env(), "SUECA_TOKEN": token}, log=running.folder / "runner.log",
            cwd=running.folder)
        running.due = 0.0
        log.info("bot %s version %s started (runner pid %d)", running.name,
                 running.want["version"], running.child.pid)

    def _stop(self, bot: str, why: str) -> None:
        """Tell the bot's runner to stop (its games finish within :data:`STOP_GRACE` seconds)
        and finish it in a thread of its own: the loop must go on renewing the other claims."""
        running = self.bots.pop(bot)
        if running.child is not None:
            running.child.terminate(group=True)
        self._say(running, f"stopping: {why}")
        log.info("bot %s version %s stopping: %s", bot, running.want["version"], why)
        thread = threading.Thread(target=self._finish, args=(running,), daemon=True,
                                  name=f"bothost-stop-{bot}")
        thread.start()
        self._stopping_threads = [t for t in self._stopping_threads if t.is_alive()] + [thread]

    def _finish(self, running: _Bot) -> None:
        if running.child is not None:
            running.child.finish(time.monotonic() + STOP_GRACE)
        sandbox = running.sandbox()
        if sandbox is not None:
            sandbox.cleanup()
        try:
            self._ship(running)
            self._say(running, "stopped")
        except Exception as err:  # Redis away: the last lines are lost, the bot is stopped
            log.warning("bot %s: its last log lines were not shipped: %s", running.name, err)
        shutil.rmtree(running.folder, ignore_errors=True)

    def _prepared(self, bot: str, want: HostedBot, stderr: Path) -> tuple[Manifest, Sandboxed]:
        """The submission unpacked (and built) in the cache, once per hash on this host, and
        the bot's sandbox around it."""
        sha = want["submission"]
        done = self.work / "cache" / sha
        code = done / "code"
        built = (done / "ready").exists()
        if not built:
            archive = self.store.hosted.submission(sha)
            if archive is None or hashlib.sha256(archive).hexdigest() != sha:
                raise RuntimeError(f"submission {sha[:12]} is missing or damaged in Redis")
            shutil.rmtree(done, ignore_errors=True)
            unpack(archive, code)
        manifest = parse_manifest((code / MANIFEST).read_text())
        sandbox = self.sandbox(bot, code, stderr)  # a cgroup of its own, whatever the name
        if not built:
            if manifest.build:
                self._build(bot, want["version"], manifest, sandbox)
            (done / "ready").touch()
        return manifest, sandbox

    def _build(self, bot: str, version: int, manifest: Manifest, sandbox: Sandboxed) -> None:
        """Run the manifest's build in the sandbox; its output goes to the owner's log."""
        self.store.hosted.append_log(bot, version, [
            f"[bot host] building: {shlex.join(manifest.build)}"])
        try:
            result = sandbox.build(list(manifest.build), BUILD_TIMEOUT)
        except BaseException:
            sandbox.cleanup()
            raise
        lines = result.output.decode("utf-8", "replace").splitlines()[-200:]
        self.store.hosted.append_log(bot, version, [f"[build] {line}" for line in lines] + [
            f"[bot host] build {'done' if result.ok else 'failed: ' + result.reason}"])
        if not result.ok:
            sandbox.cleanup()
            raise RuntimeError(f"the build failed: {result.reason}")

    # -- the owner's log ------------------------------------------------------------------
    def _say(self, running: _Bot, line: str) -> None:
        try:
            self.store.hosted.append_log(running.name, running.want["version"],
                                         [f"[bot host] {line}"])
        except Exception:  # Redis away: the host's own log has it
            log.warning("bot %s: %s", running.name, line)

    def _ship(self, running: _Bot) -> None:
        """New lines of the runner's log and the bot's stderr to its owner's log in Redis."""
        for tail in running.logs:
            self.store.hosted.append_log(running.name, running.want["version"], tail.lines())

    def shutdown(self) -> None:
        """Stop every runner (all told at once, so they drain side by side), give every claim
        back, leave the hosts' list."""
        for bot in list(self.bots):
            self._stop(bot, f"bot host {self.name} is stopping")
            try:
                self.store.hosted.release(bot, self.name)
            except Exception:
                pass
        for thread in self._stopping_threads:
            thread.join(STOP_GRACE + 5)
        try:
            self.store.hosted.leave(self.name)
        except Exception:
            pass
        self._prepare.shutdown(wait=False, cancel_futures=True)

    # -- what it reports ---------------------------------------------------------------------
    def healthy(self) -> bool:
        return time.monotonic() - self.last_loop <= 5 * INTERVAL

    def registry(self) -> CollectorRegistry:
        registry = CollectorRegistry()
        registry.register(_HostCollector(self))
        registry.register(BuildInfoCollector("bot-host"))
        ProcessCollector(registry=registry)
        return registry

    def serve(self, port: int, addr: str | None = None) -> None:
        """``/healthz`` and the metrics on ``port``, from a daemon thread."""
        serve_health(self.registry(), port, addr=addr, healthy=self.healthy,
                     sick=b"the bot host's loop has stalled\n", name="bot-host-metrics")


def _runner_env() -> dict[str, str]:
    """The runner's environment: ours without the arena's secrets (it needs only the bot's
    token and the referee's address)."""
    env = dict(os.environ)
    for secret in ("SUECA_REDIS_URL", "SUECA_OPERATOR_TOKEN", "SUECA_TOKEN"):
        env.pop(secret, None)
    return env


class _HostCollector(Collector):
    def __init__(self, host: BotHost) -> None:
        self.host = host

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        bots = dict(self.host.bots)
        up = GaugeMetricFamily("sueca_bothost_bot_up", "1 while a hosted bot's runner runs on "
                               "this host, else 0 (building, backing off, failed)",
                               labels=["bot", "version"])
        for name, running in sorted(bots.items()):
            alive = running.child is not None and running.child.alive()
            up.add_metric([name, str(running.want["version"])], 1.0 if alive else 0.0)
        yield up
        yield GaugeMetricFamily("sueca_bothost_bots", "Hosted bots this host holds",
                                value=len(bots))
        yield GaugeMetricFamily("sueca_bothost_live_hosts", "Bot hosts alive, as this one "
                                "last saw them", value=self.host.live_hosts)
        yield CounterMetricFamily("sueca_bothost_restarts", "Runners started again after "
                                  "they exited", value=self.host.restarts)
