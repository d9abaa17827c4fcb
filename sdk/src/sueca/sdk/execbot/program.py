"""One running ``exec:`` program: a child process in its own process group, its three pipes
non-blocking and read by whoever waits for its answers, with no thread of its own.

Two ways to wait, fixed when the process starts:

- *blocking* (``loop=None``: self-play, ``duel``, local play): the thread that asks a turn
  writes it and then reads the program's pipes itself with ``poll`` until its answer or its
  deadline; one thread at a time reads (a lock), and an answer it reads for another thread's
  turn is left in that turn's slot. A move is one write, one poll and one read: a bare pipe
  round trip plus the lines' encoding. Or the turns of many games are posted (:meth:`Program.post`),
  written in one write (:meth:`Program.flush_posted`), and :func:`pump` reads every answer there
  is at each wake-up until those turns are answered: self-play with many matches in flight.
- *on an event loop* (``loop``: the network client, where many games share one loop and none
  may block it): the loop's own reader callbacks read standard output and standard error as
  they become readable and resolve the waiting turn's future directly, in the loop's thread;
  the lines its games send in one pass of the loop go out in one write.

Either way standard output is split into lines of at most :data:`~.protocol.LINE_LIMIT` bytes
(a longer one is a fault as soon as the limit is passed, never read whole), each answer handed
to the waiter of its turn, and only the last :data:`STDERR_TAIL` bytes of standard error are
kept, for the log line that explains a fault; whatever the program prints reaches a log only
through :func:`sueca.sdk.logs.shown`. Writes go out at once when the pipe has room; what it has
no room for waits in a backlog, flushed when the pipe is writable (a program that stops reading
delays only itself).

A program that breaks the stream (exits, prints a line that is not an answer to an open turn, a
line over the limit) is *broken*: every turn still waiting fails with the reason, and the whole
process group is killed and reaped (in a short-lived thread: reaping may wait). :meth:`Program.close`
ends a healthy one: its standard input is closed once its backlog is written (a program exits
when it reads end of file), and after :data:`EXIT_GRACE` seconds its group is killed whatever it
does.
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
from collections.abc import Callable, Sequence
from typing import Any

from ..logs import shown
from . import protocol

__all__ = ["Program", "ProgramBroken", "STDERR_TAIL", "EXIT_GRACE", "pump"]

log = logging.getLogger("sueca.exec")

STDERR_TAIL = 4096   # bytes of the program's standard error kept (the last ones)
STDERR_SHOWN = 600   # characters of that tail quoted in a log line
EXIT_GRACE = 1.0     # seconds a closed program has to exit before its group is killed
_READ = 65536
_IN = select.POLLIN | select.POLLHUP | select.POLLERR


class ProgramBroken(Exception):
    """The program can no longer play: the message says why, quoting what it printed (escaped
    and cut). ``program``: the one that broke, when the raiser knows it."""

    program: Program | None = None


class _Waiter:
    """A turn (or the hello) waiting for its answer: a future of the program's event loop, or,
    for a blocking program, a slot the reading thread fills. A posted turn (:meth:`Program.post`)
    also has its deadline, and is put on its ``ready`` list, as ``tag``, once settled."""

    __slots__ = ("future", "answer", "error", "done", "deadline", "tag", "ready")

    def __init__(self, future: asyncio.Future[dict[str, Any]] | None) -> None:
        self.future = future
        self.answer: dict[str, Any] | None = None
        self.error: str | None = None
        self.done = False
        self.deadline = 0.0
        self.tag: object = None
        self.ready: list[object] | None = None


def _resolve(future: asyncio.Future[dict[str, Any]], answer: dict[str, Any] | None,
             error: str | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(ProgramBroken(error))
    else:
        future.set_result(answer)  # type: ignore[arg-type]


class Program:
    """One child process speaking ``sueca-exec/1``, started at once.

    ``loop``: the event loop that reads its pipes (its turns are awaited there), or None for
    a program its askers read themselves, blocking (:meth:`ask`). ``games`` (how many games it
    takes at once, from its hello) is known once :meth:`ready` or :meth:`ready_now` has
    returned. ``label`` names it in log lines (the bot spec, escaped by the caller).
    """

    def __init__(self, argv: Sequence[str], label: str,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.argv = list(argv)
        self.label = label
        self.loop = loop
        self.games = 1
        self.open_games: set[str] = set()  # the games placed on this process and not ended
        self.broken: str | None = None  # why it can no longer play
        self.returncode: int | None = None
        self._lock = threading.Lock()  # waiters, hello, stderr tail
        self._waiters: dict[tuple[str, int], _Waiter] = {}
        self._posted: list[bytes] = []  # posted turns not yet written (flush_posted)
        self._hello: _Waiter | None = None
        self._said_hello = False
        self._lines = _LineSplitter()
        self._stderr: collections.deque[bytes] = collections.deque()
        self._stderr_size = 0
        self._stderr_done = threading.Event()  # its standard error read to its end
        # its standard input: written at once by send() when nothing is pending, else kept in
        # the backlog and flushed, in order, when the pipe is writable
        self._wlock = threading.Lock()
        self._backlog = bytearray()
        self._closing = False   # close its input once the backlog is written
        self._writing = False   # the loop watches its input for room (event-loop programs)
        # the one thread reading a blocking program's pipes (re-entered when reading finds it
        # exited: reaping it closes them)
        self._io = threading.RLock()
        self.proc = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, bufsize=0, close_fds=True)
        self.pid = self.proc.pid
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        self._err = self.proc.stderr.fileno()
        for fd in (self._in, self._out, self._err):
            os.set_blocking(fd, False)
        self._out_open = self._err_open = True
        if loop is None:
            self._thread = 0
            self._poll = select.poll()
            self._poll.register(self._out, _IN)
            self._poll.register(self._err, _IN)
        else:
            self._thread = threading.get_ident()  # the loop's thread: it made this program
            loop.add_reader(self._out, self._on_output)
            loop.add_reader(self._err, self._on_stderr)
        self.send(protocol.hello())

    # -- the caller's side ------------------------------------------------------------------
    async def ready(self, timeout: float) -> int:
        """Wait for the program's hello (at most ``timeout`` seconds): the games it takes."""
        waiter = self._hello_waiter()
        if waiter is not None and waiter.future is not None:
            try:
                await asyncio.wait_for(waiter.future, timeout)
            except TimeoutError:
                self._no_hello(timeout)
            except ProgramBroken:
                pass
        return self._games()

    def ready_now(self, timeout: float) -> int:
        """:meth:`ready` for a blocking program: reads its pipes in this thread."""
        waiter = self._hello_waiter()
        if waiter is not None:
            self._pump(waiter, time.monotonic() + timeout)
            if not waiter.done:
                self._no_hello(timeout)
        return self._games()

    def _hello_waiter(self) -> _Waiter | None:
        with self._lock:
            if self.broken is None and not self._said_hello:
                if self._hello is None:
                    self._hello = self._new_waiter()
                return self._hello
        return None

    def _no_hello(self, timeout: float) -> None:
        self.fail(f"no hello within {round(timeout * 1000)} ms of starting")
        raise ProgramBroken(self.broken or "no hello")

    def _games(self) -> int:
        if self.broken is not None:
            raise ProgramBroken(self.broken)
        return self.games

    def _new_waiter(self) -> _Waiter:
        return _Waiter(None if self.loop is None else self.loop.create_future())

    def send(self, data: bytes) -> None:
        """Write lines to the program's standard input, or keep what the pipe has no room for
        (never blocks)."""
        with self._wlock:
            if self.broken is not None or self._closing:
                return
            if self._thread and threading.get_ident() == self._thread:
                # on its event loop: what the games send in one pass of the loop goes out in
                # one write at its end (one wake-up of the program for them all)
                if not self._backlog and not self._writing:
                    self.loop.call_soon(self._write_batch)  # type: ignore[union-attr]
                self._backlog += data
                return
            if not self._backlog:
                try:
                    written = os.write(self._in, data)
                except BlockingIOError:
                    written = 0
                except OSError:
                    return  # it closed its input or exited: reading its output says why
                if written == len(data):
                    return
                data = data[written:]
            self._backlog += data
        if self.loop is not None:
            self._in_loop(self._watch_input)

    def expect(self, game: str, turn_id: int) -> asyncio.Future[dict[str, Any]]:
        """A future for the answer to turn ``turn_id`` of ``game`` (register before sending the
        turn; event-loop programs); it fails with :class:`ProgramBroken` when the program
        breaks."""
        waiter = self._new_waiter()
        assert waiter.future is not None, "expect() is for a program read by an event loop"
        with self._lock:
            if self.broken is not None:
                waiter.future.set_exception(ProgramBroken(self.broken))
            else:
                self._waiters[(game, turn_id)] = waiter
        return waiter.future

    def ask(self, game: str, turn_id: int, data: bytes, deadline: float) -> dict[str, Any] | None:
        """Send ``data`` (ending with turn ``turn_id`` of ``game``) and read the program's pipes
        in this thread until its answer (returned) or ``deadline`` (``time.monotonic()``; None:
        late). Blocking programs only; :class:`ProgramBroken` when it breaks."""
        waiter = self._register(game, turn_id, _Waiter(None))
        self.send(data)
        self._pump(waiter, deadline)
        return self.take(game, turn_id, waiter)

    def _register(self, game: str, turn_id: int, waiter: _Waiter) -> _Waiter:
        with self._lock:
            if self.broken is not None:
                raise ProgramBroken(self.broken)
            self._waiters[(game, turn_id)] = waiter
        return waiter

    def post(self, game: str, turn_id: int, data: bytes, *, deadline: float, tag: object,
             ready: list[object]) -> _Waiter:
        """Register turn ``turn_id`` of ``game`` and keep ``data`` (ending with it) for the next
        :meth:`flush_posted`: the turns of many games go out in one write, and their answers
        are read by :func:`pump` (blocking programs only). Once its answer, or the program's
        failure, is read, ``tag`` is appended to ``ready``; :meth:`take` gives the answer."""
        waiter = _Waiter(None)
        waiter.deadline, waiter.tag, waiter.ready = deadline, tag, ready
        self._register(game, turn_id, waiter)
        self._posted.append(data)
        return waiter

    def flush_posted(self) -> None:
        """Write every turn posted since the last flush, in one write."""
        if self._posted:
            data = b"".join(self._posted)
            self._posted.clear()
            self.send(data)

    def take(self, game: str, turn_id: int, waiter: _Waiter) -> dict[str, Any] | None:
        """The answer of a posted turn (None: none came by its deadline, and it is given up);
        :class:`ProgramBroken` when the program broke before answering it."""
        if not waiter.done:
            self.forget(game, turn_id)
            if not waiter.done:
                return None
        if waiter.error is not None:
            raise ProgramBroken(waiter.error)
        return waiter.answer

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
        if self.loop is not None:
            self._stderr_done.wait(timeout)
            return
        deadline = time.monotonic() + timeout
        if not self._io.acquire(timeout=timeout):
            return
        try:
            while self._err_open and not self._stderr_done.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                select.select([self._err], [], [], left)
                self._read_stderr()
        finally:
            self._io.release()

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
            self._settle(w, None, reason)
        self._close_input(flush=False)
        self._kill()

    def close(self) -> None:
        """End a program that has no game left: close its input once its backlog is written,
        give it :data:`EXIT_GRACE` seconds, then kill its group (in a thread of its own: never
        blocks the caller)."""
        with self._lock:
            if self.broken is not None:
                return
            self.broken = "closed"
        self._close_input(flush=True)
        threading.Thread(target=self._retire, name=f"exec-close-{self.pid}",
                         daemon=True).start()

    # -- reading ------------------------------------------------------------------------------
    def _pump(self, waiter: _Waiter, deadline: float) -> None:
        """Read a blocking program's pipes in this thread until ``waiter`` is settled or the
        deadline passes (whichever thread reads, each answer goes to its own turn's slot)."""
        self._pump_until(lambda: waiter.done, deadline)

    def _pump_until(self, settled: Callable[[], object], deadline: float) -> None:
        """:meth:`_pump` until ``settled()`` is true (every answer waiting is read at each
        wake-up)."""
        if not self._io.acquire(timeout=max(0.0, deadline - time.monotonic())):
            return
        try:
            # the program often answers while the turn is being written (woken, it takes the
            # writer's CPU): read first, and poll only if nothing is there yet
            if self._out_open:
                self._read_output()
            poll = self._poll.poll
            while not settled() and self._out_open:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                if self._backlog:
                    self._poll.register(self._in, select.POLLOUT)
                for fd, _ in poll(left * 1000 + 1):
                    self._on_event(fd)
        finally:
            self._io.release()

    def _read_now(self) -> None:
        """(The reading thread.) Read what its pipes hold now, without waiting."""
        with self._io:
            if self._out_open:
                self._read_output()
            if self._err_open:
                self._read_stderr()

    def _watched(self) -> tuple[list[int], list[int]]:
        """Its pipes to wait on: to read (while open), and its input while its backlog waits."""
        if not self._out_open:
            return [], []
        reads = [self._out, self._err] if self._err_open else [self._out]
        return reads, [self._in] if self._backlog else []

    def _on_event(self, fd: int) -> None:
        """(The reading thread.) ``fd``, one of its pipes, is ready."""
        # each is read only while open: reading one may end the others (reaping an exited
        # program reads its stderr to the end and closes both)
        if fd == self._out and self._out_open:
            self._read_output()
        elif fd == self._err and self._err_open:
            self._read_stderr()
        elif fd == self._in:
            self._poll.unregister(self._in)
            self._flush()

    def _read_output(self) -> None:
        """Read what standard output holds and hand on each whole line."""
        chunk = _read(self._out)
        if chunk is None:
            return
        if self.broken is not None and chunk:
            return  # it can play no more: what it still prints is read and dropped
        try:
            if not chunk:
                last = self._lines.rest()
                if last is not None:
                    self._handle(last)
                self._output_ended()
                return
            for line in self._lines.feed(chunk):
                self._handle(line)
        except ProtocolError as err:
            self.fail(str(err))

    def _on_output(self) -> None:
        """The loop's reader callback: standard output is readable."""
        self._read_output()
        if not self._out_open:
            self._drop_reader(self._out)
            self._close_pipe(self.proc.stdout)

    def _on_stderr(self) -> None:
        self._read_stderr()
        if not self._err_open:
            self._drop_reader(self._err)
            self._close_pipe(self.proc.stderr)

    def _drop_reader(self, fd: int) -> None:
        if self.loop is not None and not self.loop.is_closed():
            self.loop.remove_reader(fd)

    def _read_stderr(self) -> None:
        if not self._err_open:
            return
        chunk = _read(self._err)
        if chunk is None:
            return
        if not chunk:
            self._err_open = False
            self._stderr_done.set()
            if self.loop is None:
                self._poll.unregister(self._err)
            return
        with self._lock:
            self._stderr.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size - len(self._stderr[0]) >= STDERR_TAIL:
                self._stderr_size -= len(self._stderr.popleft())

    def _handle(self, line: bytes) -> None:
        if not self._said_hello:
            games = protocol.read_hello(line)
            with self._lock:
                self.games, self._said_hello = games, True
                hello = self._hello
            if hello is not None:
                self._settle(hello, {}, None)
            return
        game, turn_id, obj = protocol.read_answer(line)
        with self._lock:
            waiter = self._waiters.pop((game, turn_id), None)
        if waiter is None:
            raise ProtocolError(f"answered game {shown(game)} turn {turn_id}, which is not a "
                                "turn it was asked (an unknown, old or repeated id)")
        self._settle(waiter, obj, None)

    def _settle(self, waiter: _Waiter, answer: dict[str, Any] | None, error: str | None) -> None:
        """Give ``waiter`` its answer or error: at once in the reading thread (or the loop's),
        through the loop from any other thread."""
        future = waiter.future
        if future is None:
            waiter.answer, waiter.error, waiter.done = answer, error, True
            if waiter.ready is not None:
                waiter.ready.append(waiter.tag)
        elif threading.get_ident() == self._thread:
            _resolve(future, answer, error)
        else:
            try:
                future.get_loop().call_soon_threadsafe(_resolve, future, answer, error)
            except RuntimeError:  # that loop is closed: nobody waits any more
                pass

    def _output_ended(self) -> None:
        """Its standard output closed: it exited (or closed it), so it can play no more. Its
        exit status tells why; waiting for it may take up to :data:`EXIT_GRACE`, so an event
        loop's program is reaped in a thread."""
        self._out_open = False
        if self.loop is None:
            self._poll.unregister(self._out)
            self._reap_then_fail()
        else:
            threading.Thread(target=self._reap_then_fail, name=f"exec-reap-{self.pid}",
                             daemon=True).start()

    def _reap_then_fail(self) -> None:
        code = self._reap(EXIT_GRACE)
        if self.broken is None:
            self.fail(_exit_words(code))

    # -- writing ------------------------------------------------------------------------------
    def _flush(self) -> None:
        """Write what the backlog holds and the pipe has room for; close the pipe when asked
        to and nothing is left."""
        with self._wlock:
            if self._backlog:
                try:
                    written = os.write(self._in, self._backlog)
                except BlockingIOError:
                    written = 0
                except OSError:  # it closed its input or exited: its output says why
                    self._backlog.clear()
                    written = 0
                del self._backlog[:written]
            done = self._closing and not self._backlog
        if done:
            self._close_stdin()

    def _write_batch(self) -> None:
        """(The loop's thread.) Write what this pass of the loop sent; watch for room if the
        pipe took only part of it."""
        self._flush()
        if self._backlog:
            self._watch_input()

    def _watch_input(self) -> None:
        """(The loop's thread.) Watch its input for room while the backlog is not empty."""
        loop = self.loop
        if loop is None or loop.is_closed() or self.proc.stdin is None or self.proc.stdin.closed:
            return
        if self._backlog and not self._writing:
            self._writing = True
            loop.add_writer(self._in, self._on_room)

    def _on_room(self) -> None:
        self._flush()
        if not self._backlog and self._writing and self.loop is not None:
            self._writing = False
            if not self.loop.is_closed() and not self.proc.stdin.closed:  # type: ignore[union-attr]
                self.loop.remove_writer(self._in)

    def _close_input(self, flush: bool) -> None:
        """Close its standard input: now, or once the backlog is written (``flush``)."""
        with self._wlock:
            self._closing = True
            if not flush:
                self._backlog.clear()
            now = not self._backlog
        if now:
            self._close_stdin()

    def _close_stdin(self) -> None:
        if self.loop is not None and self._writing:
            self._in_loop(self._stop_writing)
            return
        self._close_pipe(self.proc.stdin)

    def _stop_writing(self) -> None:
        """(The loop's thread.) Stop watching its input, and close it."""
        if self._writing and self.loop is not None and not self.loop.is_closed():
            self._writing = False
            self.loop.remove_writer(self._in)
        self._close_pipe(self.proc.stdin)

    def _in_loop(self, fn: Any) -> None:  # Any: a callable of no argument
        """Run ``fn`` in the loop's thread: now if this is it."""
        assert self.loop is not None
        if threading.get_ident() == self._thread:
            fn()
        else:
            try:
                self.loop.call_soon_threadsafe(fn)
            except RuntimeError:  # the loop is closed
                pass

    @staticmethod
    def _close_pipe(pipe: Any) -> None:  # Any: one of the process's pipes, or None
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass

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
        if self.loop is None:  # its backlog is written here (an event loop flushes its own)
            while self._backlog and time.monotonic() < deadline:
                select.select([], [self._in], [], max(0.0, deadline - time.monotonic()))
                self._flush()
            self._close_input(flush=False)
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
        if self.loop is None:
            self._release_pipes()
        return code

    def _release_pipes(self) -> None:
        """A blocking program is reaped: read its standard error to the end (its last words,
        for the log line) and close its output pipes, once no thread reads them."""
        with self._io:
            deadline = time.monotonic() + 0.5
            while self._err_open and time.monotonic() < deadline:
                select.select([self._err], [], [], max(0.0, deadline - time.monotonic()))
                self._read_stderr()
            self._stderr_done.set()
            self._out_open = False
            self._close_pipe(self.proc.stdout)
            self._close_pipe(self.proc.stderr)


def pump(programs: Sequence[Program], ready: list[object], deadline: float,
         want: int = 1) -> None:
    """Read the pipes of blocking ``programs`` in this thread until ``want`` posted turns are
    settled (on ``ready``) or ``deadline`` (``time.monotonic()``) passes; every answer each
    holds is read at every wake-up."""
    if len(programs) == 1:
        programs[0]._pump_until(lambda: len(ready) >= want, deadline)
        return
    while True:
        for p in programs:
            p._read_now()
        left = deadline - time.monotonic()
        if len(ready) >= want or left <= 0:
            return
        owners: dict[int, Program] = {}
        reads, writes = [], []
        for p in programs:
            r, w = p._watched()
            reads += r
            writes += w
            owners.update(dict.fromkeys(r + w, p))
        if not owners:
            return
        for fd in select.select(reads, writes, [], left)[1]:
            owners[fd]._flush()


def _read(fd: int) -> bytes | None:
    """What the pipe holds (b"" at its end, or when it failed), None if nothing yet."""
    try:
        return os.read(fd, _READ)
    except BlockingIOError:
        return None
    except OSError:
        return b""


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


class _LineSplitter:
    """Standard output, fed in chunks, cut into lines of at most :data:`~.protocol.LINE_LIMIT`
    bytes: a longer one is a :class:`ProtocolError` as soon as the limit is passed (never kept
    whole)."""

    def __init__(self) -> None:
        self.buf = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        """The whole lines ``chunk`` completes, without their newlines."""
        limit = protocol.LINE_LIMIT
        data = self.buf + chunk if self.buf else chunk
        lines = data.split(b"\n")
        self.buf = lines.pop()
        for line in lines:
            if len(line) > limit:
                raise ProtocolError(f"printed a line over {limit} bytes")
        if len(self.buf) > limit:
            raise ProtocolError(f"printed a line over {limit} bytes")
        return lines

    def rest(self) -> bytes | None:
        """At end of file: a last unterminated line, if it holds anything."""
        rest, self.buf = self.buf, b""
        return rest if rest.strip() else None
