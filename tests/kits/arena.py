"""Helpers for the league tests (imported by conftest.py and the tests): worker processes and
running ``sueca-arena`` as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sueca.arena.processes import Child

#: the folder holding the ``kits`` package: on the ``PYTHONPATH`` of the processes this kit starts,
#: so that they load the test bots by module name (``kits.bots.slow:SlowBot``)
TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
VENV_BIN = Path(sys.executable).parent
SUECA_ARENA = str(VENV_BIN / "sueca-arena")


def _parents() -> dict[int, int]:
    """Parent pid of every live (not zombie) process in /proc. The kernel here has no
    /proc/PID/task/TID/children, so the tree is built from each process's stat line."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # ended meanwhile
            continue
        state, ppid = stat[stat.rindex(b")") + 2:].split()[:2]  # the name may hold spaces, ')'
        if state != b"Z":
            found[int(entry.name)] = int(ppid)
    return found


def children(pid: int) -> list[int]:
    """The live child processes of ``pid``, which must be this test process or one of its
    descendants: on a shared machine a test must never find (let alone kill) processes of
    another test run, which a system-wide ``pgrep`` could."""
    parents = _parents()
    me, up = os.getpid(), pid
    while up != me:
        if up not in parents or up <= 1:
            raise AssertionError(f"process {pid} is not a descendant of this test process ({me})")
        up = parents[up]
    return sorted(child for child, parent in parents.items() if parent == pid)


def arena_env(redis_url: str, prefix: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"SUECA_REDIS_URL": redis_url, "SUECA_KEY_PREFIX": prefix,
                "PYTHONPATH": os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")]),
                "SUECA_LOCAL_BOTS": "slow=kits.bots.slow:SlowBot,slow2=kits.bots.slow:SlowBot"})
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    env.update(extra)
    return env


class Worker:
    """A ``sueca-arena worker`` subprocess (its own process group, so a stop takes the pool)."""

    def __init__(self, redis_url: str, prefix: str, *args: str, log: Path, **env: str) -> None:
        self.log = log
        self.child = Child("worker", [SUECA_ARENA, "worker", "--redis", redis_url, *args],
                           arena_env(redis_url, prefix, **env), log, cwd=ROOT)
        self.proc = self.child.popen

    def wait_ready(self, timeout: float = 30.0) -> Worker:
        self.child.wait_ready(lambda: " ready." in self.child.text(), timeout, "worker")
        return self

    def text(self) -> str:
        return self.child.text()[-6000:]

    def children(self) -> list[int]:
        """The worker's pool processes."""
        return children(self.proc.pid)

    def kill(self) -> None:
        """SIGKILL the whole worker: main process and pool children."""
        self.child.kill()

    def stop(self) -> None:
        """SIGTERM to the whole group (main process and pool), SIGKILL after 15 s."""
        self.child.stop(grace=15.0, group=True)


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120,
        check: int | None = 0) -> subprocess.CompletedProcess[str]:
    """Run ``sueca-arena ARGS``; asserts the exit code when ``check`` is not None."""
    out = subprocess.run([SUECA_ARENA, *args], capture_output=True, text=True, timeout=timeout,
                         env=env, cwd=ROOT)
    if check is not None:
        assert out.returncode == check, (out.returncode, out.stdout[-3000:], out.stderr[-3000:])
    return out


def competition_final(action: str, name: str, env: dict[str, str]) -> dict[str, object]:
    """``sueca.arena.final.ACTION(store, NAME)`` (``start``, ``wait``, ``progress``)
    in a process of its own on the arena of ``env`` (it queues the final's Celery tasks there);
    its FinalProgress."""
    import json
    code = ("import json; from sueca.arena import final; "
            "from sueca.arena.store import Store; from sueca.arena.redisproc import default_url; "
            "store = Store.from_url(default_url()); "
            f"kw = dict(timeout=120, quiet=True) if {action!r} == 'wait' else {{}}; "
            f"print(json.dumps(getattr(final, {action!r})(store, {name!r}, **kw)))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=180, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    got: dict[str, object] = json.loads(out.stdout)
    return got
