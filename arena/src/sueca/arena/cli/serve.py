"""sueca-arena serve: a persistent arena on one machine, until Ctrl-C.

serve starts, as separate processes: a private Redis keeping the arena in the data folder (--data
DIR: an append-only file, and a unix socket, DIR/redis.sock, the same at every start), a
referee for bots (--host, --port), a Celery worker, the ladder scheduler, the ratings exporter
(--metrics-port) and the web pages (--web-port); with --example-bots also the bundled bots, so
a fresh arena has games to show. Every league command reaches this arena with --data DIR;
--redis URL (or SUECA_REDIS_URL) makes serve use that Redis instead of a private one.
--tls-cert and --tls-key (or SUECA_TLS_CERT and SUECA_TLS_KEY) serve TLS to bots, as
sueca-arena referee does; a plaintext connection is then refused.

The ladder starts at most --pace matches a minute (default 12, one every 5 seconds, which
leaves the machine usable; 0 for as many as --target keeps in flight), and every hour records
older than --retain-days (default 1) are archived into DIR/archive, whose files are removed
after --archive-days (default 7): the arena stays bounded by itself.

A process that exits (worker, scheduler, exporter, web, referee, an example bot, Redis) is
started again after a wait that doubles while it keeps dying at start; one that dies within
10 seconds of its start 5 times in a row stops the arena with its error.

Metrics (Prometheus /metrics): the referee on --metrics-port, the worker on the next port,
the ratings exporter on the one after and the scheduler after that (the deploys' ports); the
referee's listen on --host, the other three on --metrics-host (default 127.0.0.1). Every port
is checked before anything starts: one in use stops serve with the port and what holds it.

Ctrl-C or SIGTERM stops everything in order: the scheduler and the web first, then the worker
(it finishes the match in hand; an unfinished one is re-queued), the bots, the referee, and
Redis last, which writes its file out. Logs are in DIR/logs (the previous run's in
DIR/logs.prev). One serve per data folder: a second one on a folder in use is refused.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shlex
import shutil
import signal
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING

from sueca.arena.cli.common import Bounded, UserError, add_port
from sueca.arena.cli.common import console as make_console
from sueca.arena.cli.referee import is_loopback, security
from sueca.arena.local_arena import DATA_DIR, EXAMPLE_BOTS, LocalArena, arena_socket
from sueca.arena.processes import (
    BACKOFF_FIRST,
    BACKOFF_MAX,
    QUICK_DEATHS,
    Child,
    ChildExited,
    Supervisor,
    port_holder,
    wait_until,
)
from sueca.arena.redisproc import SOCKET_PATH_MAX, RedisServer
from sueca.arena.redisurl import masked
from sueca.arena.settings import current, replace, use
from sueca.arena.store import StoreUnavailable, connect
from sueca.sdk.channels import drop_tls_settings

if TYPE_CHECKING:
    from rich.console import Console

    from sueca.arena.retention import Schedule

#: the ladder's default pace (matches a minute) and retention (days), documented in
#: docs/operating.md with what they cost
PACE = 12.0
RETAIN_DAYS = 1.0
ARCHIVE_DAYS = 7.0
RETENTION_EVERY = 3600.0  # seconds between scheduled retention runs


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run a persistent arena on this machine (Redis, referee, "
                                     "worker, ladder, web pages) until Ctrl-C",
                       description=(__doc__ or "").split("\n\n", 1)[-1])
    p.add_argument("--data", metavar="DIR", default=DATA_DIR,
                   help=f"the folder the private Redis keeps the arena in, and its socket "
                        f"(default {DATA_DIR}); league commands reach it with --data DIR, and "
                        f"find ./{DATA_DIR} when given no Redis")
    p.add_argument("--redis", metavar="URL", default=None,
                   help="use this Redis instead of a private one (default $SUECA_REDIS_URL)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address the referee listens on for bots (default 127.0.0.1; 0.0.0.0 "
                        "for every interface)")
    add_port(p, "--port", default=50051, help="the referee's port for bots (default 50051)")
    add_port(p, "--metrics-port", default=9464,
             help="Prometheus metrics of the referee on this port, the worker's on the next, "
                  "the ratings exporter's on the one after, the scheduler's after that "
                  "(default 9464: 9464-9467, as in the deploys)")
    p.add_argument("--metrics-host", metavar="ADDR", default="127.0.0.1",
                   help="address the worker's, ratings exporter's and scheduler's metrics listen "
                        "on (default 127.0.0.1; the referee's listen on --host)")
    p.add_argument("--tls-cert", default=current().tls_cert, metavar="FILE",
                   help="serve TLS to bots with this PEM certificate (chain), with --tls-key "
                        "(default $SUECA_TLS_CERT; without it the bots' port is plaintext)")
    p.add_argument("--tls-key", default=current().tls_key, metavar="FILE",
                   help="PEM private key of --tls-cert (default $SUECA_TLS_KEY)")
    p.add_argument("--web-host", default="127.0.0.1",
                   help="address the web pages listen on (default 127.0.0.1)")
    add_port(p, "--web-port", default=8080, help="the web pages' port (default 8080)")
    p.add_argument("--example-bots", action="store_true",
                   help=f"also run the bundled bots ({', '.join(EXAMPLE_BOTS)}; example-NAME "
                        "with --redis) as sueca-bot processes, so the ladder has games to play")
    p.add_argument("--bot-host", action="store_true",
                   help="also run a bot host (its folder DIR/bot-host), so that submitted bots "
                        "play: `sueca-arena bots submit` (docs/hosted-bots.md)")
    p.add_argument("--target", action=Bounded, kind=int, low=1, default=2,
                   help="ladder matches to keep in flight at most (default 2)")
    p.add_argument("--pace", metavar="N", action=Bounded, kind=float, low=0, default=PACE,
                   help=f"ladder matches to start a minute at most (default {PACE:g}; 0: as "
                        "many as --target keeps in flight, which keeps the machine busy)")
    p.add_argument("--retain-days", metavar="DAYS", action=Bounded, kind=float, low=0,
                   default=RETAIN_DAYS,
                   help=f"every hour, archive records older than this into DIR/archive "
                        f"(default {RETAIN_DAYS:g}; 0 keeps everything in Redis)")
    p.add_argument("--archive-days", metavar="DAYS", action=Bounded, kind=float, low=0,
                   above=True, default=ARCHIVE_DAYS,
                   help=f"remove archive files older than this (default {ARCHIVE_DAYS:g})")
    p.add_argument("--concurrency", action=Bounded, kind=int, low=1, default=2,
                   help="worker pool processes (default 2)")
    p.set_defaults(func=cmd_serve)


# what serves Prometheus metrics, from --metrics-port up, one port each: the deploys' order
# (referee 9464, worker 9465, ratings exporter 9466, scheduler 9467)
METRICS = ("referee", "worker", "ratings", "scheduler")


def _metrics_ports(args: argparse.Namespace) -> dict[str, int]:
    """Each of :data:`METRICS`'s port, from ``--metrics-port`` up; a UserError when the last
    one would be past 65535."""
    if args.metrics_port + len(METRICS) - 1 > 65535:
        raise UserError(f"bad --metrics-port {str(args.metrics_port)!r}: the next "
                        f"{len(METRICS) - 1} ports are taken too ({', '.join(METRICS[1:])}); "
                        f"at most {65536 - len(METRICS)}")
    return {name: args.metrics_port + i for i, name in enumerate(METRICS)}


def _check_socket_path(data: Path) -> None:
    """A UserError if the socket of serve's Redis in ``data`` would have too long a path."""
    sock = os.fsencode(arena_socket(data))
    if len(sock) > SOCKET_PATH_MAX:
        raise UserError(f"data directory {str(data)!r} has too long a path for the socket "
                        f"of its Redis ({len(sock)} bytes, at most {SOCKET_PATH_MAX}): "
                        "use a folder with a shorter path")


def _in_use_error(data: Path) -> UserError:
    return UserError(f"data directory {str(data)!r} is in use by another `sueca-arena serve`; "
                     "stop it first or pass another --data")


def _refuse_folder_in_use(data: Path) -> None:
    """A UserError if another serve holds ``data``'s lock; creates nothing."""
    try:
        with open(data / "serve.lock") as f:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except FileNotFoundError:
        return
    except OSError:
        raise _in_use_error(data) from None


def _check_ports_free(args: argparse.Namespace, metrics: dict[str, int]) -> None:
    """A UserError naming the first port serve would listen on that it cannot, and what
    holds it (``port 50051 in use (by pid 123: ...)``), before anything starts: a referee
    would otherwise share a port held with SO_REUSEPORT by another one, whose tokens differ."""
    wanted = [(args.host, args.port, "the referee's port for bots", "--port"),
              (args.host, metrics["referee"], "the referee's metrics", "--metrics-port"),
              *((args.metrics_host, metrics[name], f"the {name}'s metrics", "--metrics-port")
                for name in METRICS[1:]),
              (args.web_host, args.web_port, "the web pages", "--web-port")]
    for host, port, what, flag in wanted:
        why = port_holder(host, port)
        if why is None:
            continue
        if why.startswith("in use"):
            raise UserError(f"port {port} {why}: serve needs it for {what}; stop that program "
                            f"or pass another {flag}")
        raise UserError(f"cannot listen on {host}:{port} for {what}: {why} (pass another "
                        f"{flag})")


def _prepare_data(data: Path) -> IO[str]:
    """Make ``data``, take its lock (held for as long as we run: two Redis on one file would
    ruin it) and start this run's logs in ``logs/``, the previous run's moved to
    ``logs.prev/``."""
    try:
        data.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"cannot use data directory {str(data)!r}: {err.strerror}") from None
    f = open(data / "serve.lock", "a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise _in_use_error(data) from None
    f.truncate(0)
    f.write(f"{os.getpid()}\n")
    f.flush()
    if (data / "logs").exists():
        shutil.rmtree(data / "logs.prev", ignore_errors=True)
        (data / "logs").rename(data / "logs.prev")
    (data / "logs").mkdir()
    return f


def _tls(args: argparse.Namespace) -> tuple[str, dict[str, str]]:
    """Check the TLS files before anything starts, and set up how this process and its
    children (worker, scheduler, web, example bots) dial the referee: plaintext without a
    certificate, whatever TLS settings the caller's shell holds for other referees dropped;
    with one, the caller's ``SUECA_TLS``/``SUECA_TLS_CA``/``SUECA_TLS_SERVER_NAME`` if set, else
    the certificate itself as the CA (a self-signed one, made for 127.0.0.1). Returns the
    ``sueca-bot`` flag a bot needs ("" for plaintext) and the children's extra environment."""
    args.tls_cert, args.tls_key = args.tls_cert or None, args.tls_key or None
    security(argparse.Namespace(tls_cert=args.tls_cert, tls_key=args.tls_key,
                                operator_token_file=None))  # a UserError quoting a bad file
    if not args.tls_cert:
        drop_tls_settings()
        return "", {}
    args.tls_cert, args.tls_key = os.path.abspath(args.tls_cert), os.path.abspath(args.tls_key)
    settings = current()
    if settings.tls_ca:
        return f"--tls-ca {settings.tls_ca}", {}
    if settings.tls:
        return "--tls", {}
    use(replace(settings, tls_ca=args.tls_cert))  # this process: it checks the bots connected
    return f"--tls-ca {args.tls_cert}", {"SUECA_TLS_CA": args.tls_cert}


def _bin(name: str) -> str:
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else name


def _shown_path(path: str | Path) -> str:
    """``path`` as a shell word for commands printed to run from the current folder: relative
    when under it, else absolute; quoted when it needs it."""
    full = os.path.abspath(path)
    rel = os.path.relpath(full)
    return shlex.quote(full if rel == ".." or rel.startswith("../") else rel)


def shown_bin(name: str) -> str:
    """How to run our command ``name`` as printed from the current folder: the bare name when
    the shell finds this very program on PATH, else its path (``.venv/bin/sueca-arena`` after
    ``make demo``, whose virtual environment is not activated)."""
    here = Path(sys.executable).parent / name
    if not here.exists():
        return name
    found = shutil.which(name)
    if found and Path(found).resolve() == here.resolve():
        return name
    shown = _shown_path(here)
    return shown if "/" in shown else "./" + shown


def _wait_web(url: str, proc: Child, timeout: float = 30.0) -> None:
    def healthy() -> bool:
        try:
            with urllib.request.urlopen(url + "/api/health", timeout=1) as r:
                return bool(r.status == 200)
        except OSError:
            return False

    try:
        if wait_until(healthy, time.monotonic() + timeout, proc.check):
            return
    except ChildExited as err:
        raise UserError(str(err)) from None
    raise UserError(f"the web front end did not answer at {url} within {timeout:.0f}s; "
                    f"see {proc.log}")


def _shown_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "[::]") else host


#: what serve says about its processes while it runs (a line, with the time)
Note = Callable[[str], None]


class _Arena:
    """serve's processes: its Redis (unless ``external``), the :class:`LocalArena` (referee,
    worker, example bots), the scheduler, the ratings exporter and the web; started by
    :meth:`start`, kept running by :meth:`watch`, stopped in order by :meth:`stop`."""

    def __init__(self, args: argparse.Namespace, data: Path, *, external: str | None,
                 metrics: dict[str, int], tls_env: dict[str, str]) -> None:
        self.args, self.data, self.external = args, data, external
        self.metrics, self.tls_env = metrics, tls_env
        self.url = external or ""
        self.redis_server: RedisServer | None = None
        self.arena: LocalArena | None = None
        self.extra: Supervisor | None = None
        self.retention: Schedule | None = None
        self.web_url = f"http://{_shown_host(args.web_host)}:{args.web_port}"

    @property
    def logs(self) -> Path:
        return self.data / "logs"

    def start(self) -> None:
        self._start_redis()
        arena = self._start_arena()
        self.extra = Supervisor(arena.log_dir)
        self._start_ladder(arena)
        self._start_web(arena)
        if self.args.retain_days and not self.external:
            from sueca.arena.retention import Schedule  # deferred: ~5 ms, serve's run only
            self.retention = Schedule(arena.store, self.args.retain_days,
                                      (self.data / "archive").resolve(), self.args.archive_days,
                                      every=RETENTION_EVERY)

    def _start_redis(self) -> None:
        if self.external:
            try:
                connect(self.external).close()
            except StoreUnavailable as err:
                raise UserError(str(err)) from None
            return
        self.redis_server = RedisServer(data_dir=self.data, unix_socket=True,
                                        log_file=self.logs / "redis.log")
        try:  # a long append-only file takes a while to load
            self.redis_server.start(timeout=60)
        except RuntimeError as err:
            raise UserError(f"{err}; see {self.logs / 'redis.log'}") from None
        self.url = self.redis_server.url

    def _start_arena(self) -> LocalArena:
        """The referee, the worker and the example bots. On a Redis of our own the example
        bots are "random" etc.; on a shared one "example-random" etc., so that no real bot's
        token is ever re-issued; a resumed arena re-issues theirs (ratings stay: by name)."""
        args = self.args
        bots = ({(f"example-{b}" if self.external else b): b for b in EXAMPLE_BOTS}
                if args.example_bots else {})
        worker_env = {"SUECA_METRICS_PORT": str(self.metrics["worker"]),
                      "SUECA_METRICS_ADDR": args.metrics_host}
        self.arena = arena = LocalArena(self.url, f"127.0.0.1:{args.port}", bots, capacity=4,
                                        concurrency=args.concurrency, log_dir=self.logs,
                                        worker_env=worker_env, extra_env=self.tls_env,
                                        reissue=True)
        tls = ["--tls-cert", args.tls_cert, "--tls-key", args.tls_key] if args.tls_cert else []
        # the arena's own: its start-up checks the referee is alive while it waits for it
        # (the referee's own error at once, not bots that never connect), and its stop ends
        # the referee after the workers and bots
        arena.procs.start("referee", [
            _bin("sueca-arena"), "referee", "--host", args.host, "--port", str(args.port),
            "--operator-port", "0", "--metrics-port", str(self.metrics["referee"]),
            "--drain-seconds", "5", "--log-level", "warning", *tls], arena.env())
        arena.start(timeout=60)
        return arena

    def _spawn(self, arena: LocalArena, name: str, argv: list[str], **env: str) -> Child:
        assert self.extra is not None
        return self.extra.start(name, argv, arena.env(**env))

    def _start_ladder(self, arena: LocalArena) -> None:
        """The scheduler and the ratings exporter, their metrics on ``--metrics-host``."""
        args = self.args
        self._spawn(arena, "scheduler", [
            _bin("sueca-arena"), "scheduler", "--referee", arena.referee,
            "--target", str(args.target), "--pace", str(args.pace),
            "--metrics-port", str(self.metrics["scheduler"])],
            SUECA_METRICS_ADDR=args.metrics_host)
        self._spawn(arena, "exporter", [
            _bin("sueca-arena"), "ratings", "exporter",
            "--metrics-port", str(self.metrics["ratings"]), "--addr", args.metrics_host])
        if args.bot_host:
            self._spawn(arena, "bot-host", [
                _bin("sueca-arena"), "bot-host", "--server", arena.referee, "--name", "serve",
                "--work", str((self.data / "bot-host").resolve())])

    def _start_web(self, arena: LocalArena) -> None:
        web = self._spawn(arena, "web", [
            sys.executable, "-m", "uvicorn", "--factory", "sueca.arena.web.app:from_env",
            "--host", self.args.web_host, "--port", str(self.args.web_port),
            "--log-level", "warning", "--no-access-log"],
            SUECA_REFEREES=arena.referee)  # spectators: where matches run
        _wait_web(self.web_url, web)

    def watch(self, note: Note) -> None:
        """Until interrupted: start again whatever exits (Redis first), and run the hourly
        retention when it is due."""
        assert self.arena is not None and self.extra is not None
        redis_down = 0
        while True:
            time.sleep(1.0)
            if self.redis_server is not None and not self.redis_server.alive():
                redis_down = _revive_redis(self.redis_server, redis_down, note)
                continue
            redis_down = 0
            try:
                self.extra.revive(note)
                self.arena.procs.revive(note)
            except ChildExited as err:
                raise UserError(str(err)) from None
            if self.retention is not None and self.retention.due():
                _run_retention(self.retention, note)

    def stop(self) -> None:
        """The scheduler and the web first, one by one (each given 10 s), then the arena
        (workers, bots, referee), then Redis."""
        if self.extra is not None:
            self.extra.stop(*([child.name] for child in self.extra), grace=10.0)
        if self.arena is not None:
            self.arena.stop()
        if self.redis_server is not None:
            self.redis_server.stop()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def cmd_serve(args: argparse.Namespace) -> int:
    """Check everything that can be checked (options, TLS files, the folder, every port)
    before anything starts or is written; then start the arena, print where it is, and keep
    it running until Ctrl-C or SIGTERM."""
    from rich.markup import escape  # deferred: rich (~25 ms), for this run only
    console = make_console(stderr=True)
    metrics = _metrics_ports(args)
    tls_client, tls_env = _tls(args)
    data = Path(args.data)
    external = args.redis or current().redis_url
    if not external:
        _check_socket_path(data)
    _refuse_folder_in_use(data)
    _check_ports_free(args, metrics)
    lock = _prepare_data(data)
    run = _Arena(args, data, external=external, metrics=metrics, tls_env=tls_env)

    def note(message: str) -> None:
        console.print(f"[yellow]{time.strftime('%H:%M:%S')} {escape(message)}[/]",
                      soft_wrap=True)

    old = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with console.status("starting Redis, the referee, a worker, the ladder and the web..."):
            run.start()
        _warn_open_referee(args, console)
        console.print(escape(_banner(args, run, tls_client)),
                      soft_wrap=True)  # commands to copy: never broken across lines
        run.watch(note)
    except KeyboardInterrupt:
        console.print("stopping...")
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the stop short
        try:
            run.stop()
        finally:
            use(None)
            signal.signal(signal.SIGTERM, old)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            lock.close()
    return 0


def _warn_open_referee(args: argparse.Namespace, console: Console) -> None:
    if not is_loopback(args.host) and current().operator_token is None:
        console.print(f"[yellow]the referee listens on {args.host} without an operator "
                      "token: anyone who reaches its port can run matches and list bots; "
                      "set SUECA_OPERATOR_TOKEN[/]")


def _banner(args: argparse.Namespace, run: _Arena, tls_client: str) -> str:
    """What serve prints once it is up: where everything is, and commands that run as printed
    from the folder serve was started in."""
    url, external, data, logs = run.url, run.external, run.data, run.logs
    web_url, port_of = run.web_url, run.metrics
    arena_cmd, bot_cmd = shown_bin("sueca-arena"), shown_bin("sueca-bot")
    where = (f"--redis {masked(url)}" if external else f"--data {_shown_path(data)}")
    bot_addr = f"{_shown_host(args.host)}:{args.port}"
    security = " over TLS" if tls_client else " (plaintext)"
    ladder = (f"at most {args.pace:g} matches a minute (--pace)" if args.pace
              else "as fast as it can (--pace 0)")
    days = "day" if args.retain_days == 1 else "days"
    kept = (f"records older than {args.retain_days:g} {days} archived hourly into "
            f"{_shown_path(data / 'archive')}/ (--retain-days)" if args.retain_days and not external
            else "every record kept (no scheduled retention)")
    return (
        f"Sueca Arena is up. Redis {masked(url)}"
        + ("" if external else f" (data in {_shown_path(data)}/)")
        + f"; logs in {_shown_path(logs)}/\n"
        f"  web pages     {web_url}/  (JSON under {web_url}/api/)\n"
        f"  bots connect  {bot_addr}{security}\n"
        f"  metrics       {', '.join(f'{k} :{v}' for k, v in port_of.items())}"
        f"  (Prometheus, /metrics)\n"
        f"  ladder        {ladder}, {args.target} in flight at most; {kept}\n"
        f"  register a bot once and connect it (its token, shown once, is kept in $SUECA_TOKEN:\n"
        f"  after a restart only the run line; for a bot of your own put FILE.py:CLASS in\n"
        f"  place of heuristic):\n"
        f"    export SUECA_TOKEN=$({arena_cmd} bots add MYBOT {where})\n"
        f"    {bot_cmd} run heuristic --server {bot_addr} --name MYBOT"
        f"{' ' + tls_client if tls_client else ''}\n"
        f"  the league from this folder:\n"
        f"    {arena_cmd} leaderboard {where}\n"
        f"  Ctrl-C stops everything; `{arena_cmd} {resume_args(args, data)}` resumes.")


#: serve options a resume command leaves out: secrets and paths that come from the environment,
#: and how logs are written (not what runs)
_NOT_RESUMED = {"help", "data", "redis", "tls_cert", "tls_key", "log_format"}


def resume_args(args: argparse.Namespace, data: Path) -> str:
    """``serve --data DIR`` and every option this serve was given another value than its
    default (``--example-bots``, ports, pace...): the arena as it runs now, started again."""
    sub = argparse.ArgumentParser().add_subparsers()
    add_parser(sub)
    words = ["serve", "--data", _shown_path(data)]
    for action in sub.choices["serve"]._actions:
        value = getattr(args, action.dest, action.default)
        if action.dest in _NOT_RESUMED or not action.option_strings or value == action.default:
            continue
        flag = action.option_strings[-1]
        if isinstance(action, argparse._StoreTrueAction):
            words.append(flag)
        else:
            words += [flag, shlex.quote(f"{value:g}" if isinstance(value, float) else str(value))]
    return " ".join(words)


def _revive_redis(server: RedisServer, failures: int, note: Note) -> int:
    """Start serve's Redis again (same socket, its data reloaded); returns the failures in a
    row, and stops the arena after :data:`QUICK_DEATHS` of them."""
    code = server.proc.returncode if server.proc is not None else None
    wait = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** failures)
    note(f"redis exited with code {code}; restarting it in {wait:g}s")
    time.sleep(wait)
    try:
        server.restart(timeout=60)
    except RuntimeError as err:
        failures += 1
        if failures >= QUICK_DEATHS:
            raise UserError(f"Redis would not start again ({failures} tries): {err}") from None
        note(f"redis did not start: {err}")
        return failures
    note("redis restarted")
    return 0


def _run_retention(schedule: Schedule, note: Note) -> None:
    summary = schedule.run_once()
    if "error" in summary:
        note(f"retention: {summary['error']}; again in {RETENTION_EVERY / 60:g} minutes")
    elif summary.get("matches_archived") or summary.get("archive_files_removed"):
        note(f"retention: {summary['matches_archived']} matches archived, "
             f"{summary['archive_files_removed']} old archive files removed")
