"""One running ``exec:`` program: a child process in its own process group, fed and read by
threads, so that whoever waits for its answers (an event loop of the network client, the event
loop of one self-play match) never blocks on a pipe.

Three threads per process: a writer (lines queued by :meth:`Program.send`, written in order; a
program that stops reading blocks only this thread), a reader of standard output (one line at a
time, at most :data:`~.protocol.LINE_LIMIT` bytes, each answer handed to the waiter of its
turn), and a reader of standard error (only its last :data:`STDERR_TAIL` bytes are kept, for the
log line that explains a fault). Whatever the program prints is read into bounded buffers and
reaches a log only through :func:`sueca.sdk.logs.shown`.

A program that breaks the stream (exits, prints a line that is not an answer to an open turn, a
line over the limit) is *broken*: every turn still waiting fails with the reason, and the whole
process group is killed and reaped. :meth:`Program.close` ends a healthy one: its standard input
is closed (a program exits when it reads end of file), and after :data:`EXIT_GRACE` seconds its
group is killed whatever it does.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import IO, Any

from ..logs import shown
from . import protocol

__all__ = ["Program", "ProgramBroken", "STDERR_TAIL", "EXIT_GRACE"]

log = logging.getLogger("sueca.exec")

STDERR_TAIL = 4096   # bytes of the program's standard error kept (the last ones)
STDERR_SHOWN = 600   # characters of that tail quoted in a log line
EXIT_GRACE = 1.0     # seconds a closed program has to exit before its group is killed
_READ = 65536


class ProgramBroken(Exception):
    """The program can no longer play: the message says why, quoting what it printed (escaped
    and cut). ``program``: the one that broke, when the raiser knows it."""

    program: Program | None = None


class _Waiter:
    """A turn waiting for its answer, on the event loop of whoever asked."""

    __slots__ = ("loop", "future")

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.future: asyncio.Future[dict[str, Any]] = self.loop.create_future()

    def settle(self, answer: dict[str, Any] | None, error: str | None) -> None:
        """Called from the reader thread (or any thread): resolve the future in its loop."""
        def apply() -> None:
            if self.future.done():
                return
            if error is not None:
                self.future.set_exception(ProgramBroken(error))
            else:
                self.future.set_result(answer)  # type: ignore[arg-type]
        try:
            self.loop.call_soon_threadsafe(apply)
        except RuntimeError:  # that loop is closed: nobody waits any more
            pass


class Program:
    """One child process speaking ``sueca-exec/1``, started at once.

    ``games`` (how many games it takes at once, from its hello) is known once :meth:`ready`
    has returned. ``label`` names it in log lines (the bot spec, escaped by the caller).
    """

    def __init__(self, argv: Sequence[str], label: str) -> None:
        self.argv = list(argv)
        self.label = label
        self.games = 1
        self.open_games: set[str] = set()  # the games placed on this process and not ended
        self.broken: str | None = None  # why it can no longer play
        self._lock = threading.Lock()
        self._waiters: dict[tuple[str, int], _Waiter] = {}
        self._hello: _Waiter | None = None
        self._hello_line: bytes | None = None
        self._said_hello = False
        self._stderr: collections.deque[bytes] = collections.deque()
        self._stderr_size = 0
        # its standard input: written at once by send() when nothing is pending, else the
        # writer thread flushes the backlog, in order, as the pipe makes room
        self._wake = threading.Condition(threading.Lock())
        self._backlog: list[bytes] = []
        self._closing = False
        self._stdin = -1
        self.returncode: int | None = None
        self.proc = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, bufsize=0, close_fds=True)
        self.pid = self.proc.pid
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self._stdin = self.proc.stdin.fileno()
        os.set_blocking(self._stdin, False)
        threads = []
        for target, name, arg in ((self._write, "writer", self.proc.stdin),
                                  (self._read, "reader", self.proc.stdout),
                                  (self._drain_stderr, "stderr", self.proc.stderr)):
            threads.append(threading.Thread(target=target, args=(arg,), daemon=True,
                                            name=f"exec-{name}-{self.pid}"))
        self._stderr_thread = threads[2]
        for t in threads:
            t.start()
        self.send(protocol.hello())

    # -- the caller's side ------------------------------------------------------------------
    async def ready(self, timeout: float) -> int:
        """Wait for the program's hello (at most ``timeout`` seconds): the games it takes."""
        with self._lock:
            if self.broken is None and not self._said_hello:
                self._hello = _Waiter()
                waiter: _Waiter | None = self._hello
            else:
                waiter = None
        if waiter is not None:
            try:
                await asyncio.wait_for(waiter.future, timeout)
            except TimeoutError:
                self.fail(f"no hello within {round(timeout * 1000)} ms of starting")
                raise ProgramBroken(self.broken or "no hello") from None
        if self.broken is not None:
            raise ProgramBroken(self.broken)
        return self.games

    def send(self, line: bytes) -> None:
        """Write one line to the program's standard input, or queue what the pipe has no room
        for (never blocks)."""
        with self._wake:
            if self.broken is not None or self._closing:
                return
            if not self._backlog:
                try:
                    written = os.write(self._stdin, line)
                except BlockingIOError:
                    written = 0
                except OSError:
                    return  # it closed its input or exited: the reader says why
                if written == len(line):
                    return
                line = line[written:]
            self._backlog.append(line)
            self._wake.notify()

    def expect(self, game: str, turn_id: int) -> asyncio.Future[dict[str, Any]]:
        """A future for the answer to turn ``turn_id`` of ``game`` (register before sending the
        turn); it fails with :class:`ProgramBroken` when the program breaks."""
        waiter = _Waiter()
        with self._lock:
            if self.broken is not None:
                waiter.future.set_exception(ProgramBroken(self.broken))
            else:
                self._waiters[(game, turn_id)] = waiter
        return waiter.future

    def forget(self, game: str, turn_id: int) -> None:
        """The turn is no longer awaited (answered, or given up)."""
        with self._lock:
            self._waiters.pop((game, turn_id), None)

    def stderr_tail(self) -> str:
        """The last bytes of the program's standard error, escaped and cut for a log line."""
        with self._lock:
            tail = b"".join(self._stderr)
        text = tail.decode("utf-8", "replace").strip()
        if not text:
            return "(nothing on stderr)"
        return shown(text[-STDERR_SHOWN:], STDERR_SHOWN)

    def wait_stderr(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until its standard error is read to the end: a
        program that just died may still have its last words in the pipe."""
        self._stderr_thread.join(timeout)

    def kill(self) -> None:
        """Kill its process group now, whatever its state (this process is exiting)."""
        if self.returncode is None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def fail(self, reason: str) -> None:
        """Mark the program broken (first reason wins), fail every waiting turn, kill its
        group and reap it."""
        with self._lock:
            if self.broken is not None:
                return
            self.broken = reason
            waiters = list(self._waiters.values())
            self._waiters.clear()
            if self._hello is not None:
                waiters.append(self._hello)
        for w in waiters:
            w.settle(None, reason)
        self._close_input(flush=False)
        self._kill()

    def close(self) -> None:
        """End a program that has no game left: close its input, give it :data:`EXIT_GRACE`
        seconds, then kill its group (in a thread of its own: never blocks the caller)."""
        with self._lock:
            if self.broken is not None:
                return
            self.broken = "closed"
        self._close_input(flush=True)
        threading.Thread(target=self._retire, name=f"exec-close-{self.pid}",
                         daemon=True).start()

    # -- threads ------------------------------------------------------------------------------
    def _close_input(self, flush: bool) -> None:
        """Close its standard input: now, or once the backlog is written (``flush``)."""
        with self._wake:
            self._closing = True
            if not flush:
                self._backlog.clear()
            self._wake.notify()

    def _write(self, pipe: IO[bytes]) -> None:
        """Flush the backlog as the pipe makes room; close the pipe when asked to."""
        fd, wake = self._stdin, self._wake
        try:
            while True:
                with wake:
                    while not self._backlog and not self._closing:
                        wake.wait()
                    if not self._backlog:
                        return  # closing, nothing left to write
                select.select([], [fd], [], 1.0)  # room in the pipe (or a second passed)
                with wake:
                    if not self._backlog:
                        continue
                    data = b"".join(self._backlog)
                    try:
                        written = os.write(fd, data)
                    except BlockingIOError:
                        written = 0
                    self._backlog[:] = [data[written:]] if written < len(data) else []
        except OSError:
            pass  # it closed its input or exited: the reader sees the end and says why
        finally:
            try:
                pipe.close()
            except OSError:
                pass

    def _read(self, pipe: IO[bytes]) -> None:
        reader = _LineReader(pipe)
        while True:
            try:
                line = reader.line()
            except ProtocolError as err:
                self.fail(str(err))
                break
            if line is None:
                self._ended()
                break
            try:
                self._handle(line)
            except ProtocolError as err:
                self.fail(str(err))
                break
        try:
            pipe.close()
        except OSError:
            pass

    def _drain_stderr(self, pipe: IO[bytes]) -> None:
        try:
            while True:
                chunk = pipe.read(_READ)
                if not chunk:
                    break
                with self._lock:
                    self._stderr.append(chunk)
                    self._stderr_size += len(chunk)
                    while self._stderr_size - len(self._stderr[0]) >= STDERR_TAIL:
                        self._stderr_size -= len(self._stderr.popleft())
        except (OSError, ValueError):
            pass
        finally:
            try:
                pipe.close()
            except OSError:
                pass

    def _handle(self, line: bytes) -> None:
        if not self._said_hello:
            games = protocol.read_hello(line)
            with self._lock:
                self.games, self._said_hello = games, True
                hello = self._hello
            if hello is not None:
                hello.settle({}, None)
            return
        game, turn_id, obj = protocol.read_answer(line)
        with self._lock:
            waiter = self._waiters.pop((game, turn_id), None)
        if waiter is None:
            raise ProtocolError(f"answered game {shown(game)} turn {turn_id}, which is not a "
                                "turn it was asked (an unknown, old or repeated id)")
        waiter.settle(obj, None)

    def _ended(self) -> None:
        """Its standard output closed: it exited (or closed it), so it can play no more."""
        code = self._reap(EXIT_GRACE)
        if self.broken is None:
            self.fail(_exit_words(code))

    # -- ending ------------------------------------------------------------------------------
    def _kill(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)  # its group: whatever it started dies with it
        except (ProcessLookupError, PermissionError):
            pass
        threading.Thread(target=self._reap, args=(5.0,), name=f"exec-reap-{self.pid}",
                         daemon=True).start()

    def _retire(self) -> None:
        deadline = time.monotonic() + EXIT_GRACE
        while time.monotonic() < deadline and not self._exited():
            time.sleep(0.01)
        try:
            os.killpg(self.pid, signal.SIGKILL)  # its leader not yet reaped: the group is ours
        except (ProcessLookupError, PermissionError):
            pass
        self._reap(5.0)

    def _exited(self) -> bool:
        """Whether the process has exited, leaving it unreaped (so its group id stays ours)."""
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None

    def _reap(self, timeout: float) -> int | None:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            code = self.proc.wait()
        self.returncode = code
        return code


def _exit_words(code: int | None) -> str:
    if code is None:
        return "closed its output"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"exited (killed by {name})"
    return f"exited with code {code}"


ProtocolError = protocol.ProtocolError


class _LineReader:
    """Lines of at most :data:`~.protocol.LINE_LIMIT` bytes from a raw pipe: a longer one is a
    :class:`ProtocolError` as soon as the limit is passed (never read whole)."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self.pipe = pipe
        self.buf = b""
        self.at = 0  # where the next line starts in buf

    def line(self) -> bytes | None:
        """The next line without its newline; None at end of file (a last unterminated line
        is returned first)."""
        limit = protocol.LINE_LIMIT
        while True:
            cut = self.buf.find(b"\n", self.at)
            if cut >= 0:
                line, self.at = self.buf[self.at:cut], cut + 1
                if len(line) > limit:
                    raise ProtocolError(f"printed a line over {limit} bytes")
                return line
            rest = self.buf[self.at:]
            if len(rest) > limit:
                raise ProtocolError(f"printed a line over {limit} bytes")
            try:
                chunk = self.pipe.read(_READ)
            except (OSError, ValueError):
                chunk = b""
            if not chunk:
                self.buf, self.at = b"", 0
                return rest if rest.strip() else None
            self.buf, self.at = rest + chunk, 0
