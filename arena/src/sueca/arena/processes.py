"""Child processes: start one with its log, wait until it is ready, stop them in order, leave
nothing behind. The demo, ``serve``, the load tester's private arena, the benches and the test
kits all start their children here.

* A :class:`Child` runs in its **own session**, so a terminal's Ctrl-C (SIGINT to the whole
  foreground process group) reaches only us, and we stop the children in our own order; its
  output (stdout and stderr) goes to a log file, its stdin is ``/dev/null``.
* On Linux, started from the main thread, it also gets ``PR_SET_PDEATHSIG`` (through
  util-linux's ``setpriv --pdeathsig``, which sets it and execs; it survives exec): SIGTERM
  when the thread that started it ends, so even a SIGKILL of ours stops it. Only from the main
  thread, since a short-lived thread that starts a server would otherwise take it down with it.
  Not from a ``preexec_fn``: that forces a real fork(), whose pthread_atfork handlers then run
  gRPC's child hook in the child (grpcio >= 1.81 restarts its poller there, which can abort the
  child before exec when the parent has channels open: grpc/grpc#43055); without one, Python
  starts the child with vfork() and no handler runs.
* Its stop is SIGTERM (a worker finishes its task, a referee drains, a bot closes its stream),
  a grace period, then SIGKILL to its **whole process group** (stragglers such as a Celery
  worker's pool processes), and the reaping of the child.
* A :class:`Supervisor` holds the children of one command: :meth:`Supervisor.check` names one
  that died while we wait for the others, :meth:`Supervisor.stop` stops them wave by wave
  (every child of a wave gets SIGTERM at once, then the wave shares one grace period).
  :meth:`Supervisor.revive` starts again, after a backoff, a child that died once the command
  was up (a long-running arena: ``serve``), and gives up on one that dies at start
  :data:`QUICK_DEATHS` times in a row (a broken install must not loop for ever).
* A :class:`Janitor` -- a tiny stdlib-only Python process reading a pipe from us -- sees the pipe
  close when we die however we die (the kernel closes it), terminates the processes and removes
  the directories it was told about. This also covers systems without prctl, and folders that
  the children themselves could never remove. A normal stop tells it to stand down.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple

from sueca.sdk.logs import printable

__all__ = ["Child", "ChildExited", "Janitor", "Listener", "Supervisor", "child_argv",
           "listeners", "port_answers", "port_holder", "wait_until"]

#: How many log lines a :class:`ChildExited` quotes when the child said no ``error:`` line.
TAIL_LINES = 25
#: A child that exits within this many seconds of its start "died at start".
QUICK_SECONDS = 10.0
#: :meth:`Supervisor.revive` gives up on a child that died at start this many times in a row.
QUICK_DEATHS = 5
#: The first restart waits this long; each death at start doubles it, up to BACKOFF_MAX.
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 30.0


class ChildExited(RuntimeError):
    """A child that should be running has exited. The message names it and its exit code, and
    quotes its own ``error: ...`` line when it gave one (the reason, rather than a symptom such
    as bots that never connect), else the end of its log."""

    def __init__(self, child: Child) -> None:
        self.name, self.code, self.log = child.name, child.returncode, child.log
        line = child.error_line()
        if line is not None:
            message = f"{child.name} exited with code {self.code}: {line} (log: {child.log})"
        else:
            message = f"{child.name} exited with code {self.code}:\n{child.tail(TAIL_LINES)}"
        super().__init__(message)


_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None


def child_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` to start a child in its own session: from the main thread, through ``setpriv
    --pdeathsig TERM`` where it exists, so that the child gets SIGTERM when we die; from another
    thread as it is (the death signal would follow that thread, not the process); the
    :class:`Janitor` covers the rest."""
    if _SETPRIV is not None and threading.current_thread() is threading.main_thread():
        return [_SETPRIV, "--pdeathsig", "TERM", "--", *argv]
    return list(argv)


class Child:
    """One child process, started at once: ``argv`` with ``env`` (default: ours) in ``cwd``,
    its output appended to ``log`` (``append=False``: the file is started afresh).

    Without a ``log`` the output goes to ``stdout``/``stderr`` as :class:`subprocess.Popen`
    takes them (a server with a log of its own). The :class:`subprocess.Popen` is
    :attr:`popen`.
    """

    def __init__(self, name: str, argv: Sequence[str], env: Mapping[str, str] | None = None,
                 log: Path | None = None, *, cwd: str | os.PathLike[str] | None = None,
                 append: bool = True, stdout: int | IO[Any] | None = None,
                 stderr: int | IO[Any] | None = None) -> None:
        self.name = name
        self.log = log
        self.started = time.monotonic()
        self.out: IO[bytes] | None = None
        self.finished = False  # stopped, reaped, its log closed
        if log is not None:
            self.out = open(log, "ab" if append else "wb")
            stdout, stderr = self.out, subprocess.STDOUT
        try:
            self.popen: subprocess.Popen[bytes] = subprocess.Popen(
                child_argv(argv), env=None if env is None else dict(env), cwd=cwd,
                stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, start_new_session=True)
        except BaseException:
            if self.out is not None:
                self.out.close()
            raise

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    def alive(self) -> bool:
        return self.popen.poll() is None

    def check(self) -> None:
        """:class:`ChildExited` if the child has exited."""
        if not self.alive():
            raise ChildExited(self)

    # -- its log ---------------------------------------------------------------------------
    def text(self) -> str:
        """The whole log ("" without one, or when it cannot be read)."""
        if self.log is None:
            return ""
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def tail(self, n: int = TAIL_LINES) -> str:
        """The last ``n`` lines of the log."""
        return "\n".join(self.text().splitlines()[-n:])

    def error_line(self) -> str | None:
        """The last ``error: ...`` line of the log -- what one of our commands says when it
        refuses to run (a port in use, a bad file) -- without the prefix, escaped and capped
        (a log may hold anything, terminal escapes included); None if there is none."""
        found = [line for line in self.text().splitlines() if line.startswith("error: ")]
        return printable(found[-1].removeprefix("error: "), 300) if found else None

    # -- stopping --------------------------------------------------------------------------
    def send(self, sig: int, group: bool = False) -> None:
        """Send ``sig`` to the child (``group``: to its whole process group), if it runs."""
        if not self.alive():
            return
        try:
            if group:
                os.killpg(self.popen.pid, sig)
            else:
                self.popen.send_signal(sig)
        except (ProcessLookupError, PermissionError):
            pass

    def terminate(self, group: bool = False) -> None:
        """SIGTERM: a worker finishes its task, a referee drains, a bot closes its stream."""
        self.send(signal.SIGTERM, group)

    def finish(self, deadline: float) -> None:
        """Wait for the child until ``deadline`` (a monotonic time), then SIGKILL its whole
        group (stragglers such as a worker's pool processes), reap it and close its log. Once
        only: a child already finished is not signalled again (its pid may be reused)."""
        if self.finished:
            return
        self.finished = True
        try:
            self.popen.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        self._kill_group()
        for stream in (self.out, self.popen.stderr):
            if stream is not None:
                stream.close()

    def stop(self, grace: float = 10.0, group: bool = False) -> None:
        """SIGTERM (``group``: to the whole group), SIGKILL after ``grace`` seconds, reap."""
        self.terminate(group)
        self.finish(time.monotonic() + grace)

    def kill(self) -> None:
        """SIGKILL the whole group at once (a crash) and reap the child; the log stays open."""
        if not self.finished:
            self._kill_group()

    def _kill_group(self) -> None:
        """SIGKILL the whole process group, then reap the child."""
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.popen.wait()

    def wait_ready(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        """Until ``ready()``; :class:`ChildExited` if the child dies first, TimeoutError naming
        ``what`` with the end of the log after ``timeout`` seconds."""
        if not wait_until(ready, time.monotonic() + timeout, self.check):
            raise TimeoutError(f"{what} not ready in {timeout:g}s:\n{self.tail()}")

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Supervisor:
    """The children of one command, by name, their logs in ``logs`` (``NAME.log``, spaces
    made dashes). ``env`` is added to our environment for every child started without an
    environment of its own. A :class:`Janitor`, if given, is told about every child."""

    def __init__(self, logs: Path, janitor: Janitor | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.logs = logs
        self.janitor = janitor
        self.env = dict(env or {})
        self.children: dict[str, Child] = {}
        # what started each child (argv, environment, log), to start it again
        self.specs: dict[str, tuple[list[str], dict[str, str], Path]] = {}
        self.quick_deaths: dict[str, int] = {}  # name -> deaths at start in a row
        self.due: dict[str, float] = {}  # name -> when (monotonic) to start it again

    def start(self, name: str, argv: Sequence[str], env: Mapping[str, str] | None = None, *,
              log: Path | None = None, append: bool = True,
              extra: Mapping[str, str] | None = None) -> Child:
        """Start child ``name``: its environment ``env`` (default: ours as it is now, plus
        the supervisor's ``env``) plus ``extra``, its log ``log`` (default ``logs/NAME.log``)."""
        environment = dict(env) if env is not None else {**os.environ, **self.env}
        environment.update(extra or {})
        if log is None:
            log = self.logs / (name.replace(" ", "-") + ".log")
        self.specs[name] = (list(argv), environment, log)
        return self.add(Child(name, argv, environment, log, append=append))

    def revive(self, say: Callable[[str], None]) -> None:
        """Start again each child that has exited, after its backoff, telling ``say`` what
        happened (its exit code, its last error line, the wait, its log).

        The wait starts at :data:`BACKOFF_FIRST` seconds and doubles with each death at start
        (within :data:`QUICK_SECONDS`), up to :data:`BACKOFF_MAX`; a child that ran longer
        starts over. After :data:`QUICK_DEATHS` deaths at start in a row it is not started
        again: :class:`ChildExited` says so, with its reason."""
        now = time.monotonic()
        for child in self:
            if child.alive() or child.name not in self.specs:
                continue
            name = child.name
            if name not in self.due:  # just found dead
                quick = now - child.started < QUICK_SECONDS
                deaths = self.quick_deaths.get(name, 0) + 1 if quick else 0
                self.quick_deaths[name] = deaths
                if deaths >= QUICK_DEATHS:
                    child.finish(now)
                    err = ChildExited(child)
                    err.args = (f"{err} -- it died within {QUICK_SECONDS:g}s of its start "
                                f"{deaths} times in a row: not restarting it",)
                    raise err
                wait = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** max(0, deaths - 1))
                self.due[name] = now + wait
                why = child.error_line()
                say(f"{name} exited with code {child.returncode}"
                    f"{': ' + why if why else ''}; restarting it in {wait:g}s (log: {child.log})")
            elif now >= self.due[name]:
                del self.due[name]
                child.finish(now)  # reaped, its log closed
                argv, env, log = self.specs[name]
                self.add(Child(name, argv, env, log))
                say(f"{name} restarted")

    def add(self, child: Child) -> Child:
        self.children[child.name] = child
        if self.janitor is not None:
            self.janitor.watch(pid=child.pid)
        return child

    def __getitem__(self, name: str) -> Child:
        return self.children[name]

    def __iter__(self) -> Iterator[Child]:
        return iter(list(self.children.values()))

    def __len__(self) -> int:
        return len(self.children)

    def check(self) -> None:
        """:class:`ChildExited` naming the first child that has exited."""
        for child in self:
            child.check()

    def stop(self, *waves: Iterable[str], grace: float = 10.0, group: bool = False) -> None:
        """Stop the children wave by wave (names; without any, one wave of all; names not
        held are passed over): every child of a wave gets SIGTERM at once (``group``: its
        whole process group), then the wave shares ``grace`` seconds before SIGKILL. Stopped
        children leave the supervisor; their logs stay."""
        for wave in waves or (list(self.children),):
            chosen = [self.children[n] for n in wave if n in self.children]
            for child in chosen:
                child.terminate(group)
            deadline = time.monotonic() + grace
            for child in chosen:
                child.finish(deadline)
                del self.children[child.name]
                self.specs.pop(child.name, None)
                self.due.pop(child.name, None)

    def __enter__(self) -> Supervisor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def wait_until(ready: Callable[[], bool], deadline: float,
               check: Callable[[], None] | None = None, interval: float = 0.1) -> bool:
    """Call ``check()`` (which raises if waiting is pointless, e.g. :meth:`Supervisor.check`)
    and ``ready()`` every ``interval`` seconds until ``ready()`` or the ``deadline`` (a
    monotonic time): whether it became ready."""
    while True:
        if check is not None:
            check()
        if ready():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def port_answers(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    """Does something accept TCP connections on ``host:port``?"""
    try:
        socket.create_connection((host, port), timeout=timeout).close()
        return True
    except OSError:
        return False


class Listener(NamedTuple):
    """A TCP socket listening on this machine, as ``/proc/net/tcp{,6}`` shows it."""

    host: str
    port: int
    inode: int


def _hex_address(text: str) -> str:
    """``0100007F`` (IPv4) or 32 hex digits (IPv6), as the kernel writes them, as an address."""
    raw = bytes.fromhex(text)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


def listeners() -> list[Listener]:
    """Every listening TCP socket of this machine's network namespace (none where there is no
    ``/proc``)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 9 and fields[3] == "0A":  # TCP_LISTEN
                host, _, port = fields[1].partition(":")
                found.append(Listener(_hex_address(host), int(port, 16), int(fields[9])))
    return found


def socket_owner(inode: int) -> int | None:
    """The process holding socket ``inode`` (one of ours, or any when we may read every
    process's descriptors), else None."""
    target = f"socket:[{inode}]"
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if any(os.readlink(fd) == target for fd in (proc / "fd").iterdir()):
                return int(proc.name)
        except OSError:
            continue
    return None


def port_holder(host: str, port: int) -> str | None:
    """None if ``host:port`` can be listened on now (a socket in TIME_WAIT does not count, as
    for a server), else why not: ``"in use (by pid 123: sueca-arena referee ...)"``, or the
    system's reason (``"Permission denied"``)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
            return None
        except OSError as err:
            if err.errno != errno.EADDRINUSE:
                return err.strerror or str(err)
    return f"in use (by {_who(port)})"


def _who(port: int) -> str:
    """The process listening on ``port``, as ``pid N: its command line`` (escaped, capped)."""
    for listener in listeners():
        if listener.port != port:
            continue
        pid = socket_owner(listener.inode)
        if pid is None:
            break
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return f"pid {pid}"
        words = " ".join(w.decode(errors="replace") for w in argv if w)
        return f"pid {pid}: {printable(words, 120)}"
    return "another program"


# The janitor's program: stdlib only, so it starts in a few tens of milliseconds. Lines on
# stdin: "pid N" (a process -- the leader of its own group -- to stop), "path P" (a directory to
# remove), "done" (we stopped everything ourselves: stand down). EOF without "done" means
# the process that started us is gone.
_JANITOR = r"""
import os, shutil, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
pids, paths, done = [], [], False
for line in sys.stdin:
    kind, _, value = line.rstrip("\n").partition(" ")
    if kind == "pid":
        pids.append(int(value))
    elif kind == "path":
        paths.append(value)
    elif kind == "done":
        done = True
if done:
    sys.exit(0)
def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
def signal_all(sig):
    for pid in pids:
        for send in (os.killpg, os.kill):
            try:
                send(pid, sig)
                break
            except OSError:
                pass
signal_all(signal.SIGTERM)
deadline = time.monotonic() + 5
while any(alive(p) for p in pids) and time.monotonic() < deadline:
    time.sleep(0.05)
signal_all(signal.SIGKILL)
for path in paths:
    shutil.rmtree(path, ignore_errors=True)
    try:
        os.unlink(path)  # a file
    except OSError:
        pass
"""


class Janitor:
    """A watchdog process that cleans up after us if we die without doing it ourselves.

    :meth:`watch` a process (stopped with SIGTERM, then SIGKILL, to its group) or a directory
    or file (removed); :meth:`stand_down` once everything is stopped. Thread-safe.
    """

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-I", "-c", _JANITOR],
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     start_new_session=True, text=True)
        assert self.proc.stdin is not None
        self._pipe: IO[str] | None = self.proc.stdin
        self._lock = threading.Lock()

    def _say(self, line: str) -> None:
        with self._lock:
            if self._pipe is not None:
                self._pipe.write(line + "\n")
                self._pipe.flush()

    def watch(self, pid: int | None = None, path: str | os.PathLike[str] | None = None) -> None:
        if pid is not None:
            self._say(f"pid {pid}")
        if path is not None:
            self._say(f"path {os.fspath(path)}")

    def stand_down(self) -> None:
        """Everything is stopped: the janitor exits without touching anything."""
        with self._lock:
            if self._pipe is None:
                return
            try:
                self._pipe.write("done\n")
                self._pipe.close()
            except OSError:
                pass
            self._pipe = None
        self.proc.wait()
