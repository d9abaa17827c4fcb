"""Sandboxes for the hosted-bot tests: small limits (the hostile set stays fast), a code folder
holding programs from tests/arena/hosted/programs (C ones compiled on the host), the owner's
stderr log, a run with its output, and the check that a sandbox leaves nothing behind: no
process, no cgroup, no mount.

``SUECA_TEST_SANDBOX_OFF`` (a comma list) switches protections off in every sandbox these tests
make, to watch a hostile test fail without the one it relies on: a limit's name
(``memory_mb``, ``pids``, ...) sets it to None, a guard's name (sandbox.GUARDS: ``net``,
``seccomp``, ...) adds it to ``off``, ``root`` runs the sandbox as the host's root.
``SUECA_TEST_SANDBOX_OFF=pids pytest tests/arena/hosted/test_sandbox_limits.py -k fork`` must
fail."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from sueca.arena.hosted.sandbox import GUARDS, Limits, Sandbox

PROGRAMS = Path(__file__).resolve().parent.parent / "arena" / "hosted" / "programs"
SMALL: dict[str, object] = dict(memory_mb=64, pids=32, data_mb=8, tmp_mb=8, file_mb=4,
                                cpus=0.25, open_files=64, stderr_mb=1, stderr_keep=1)


def switched_off() -> dict[str, object]:
    """The overrides ``SUECA_TEST_SANDBOX_OFF`` asks for (see the module's docstring)."""
    names = [n for n in os.environ.get("SUECA_TEST_SANDBOX_OFF", "").split(",") if n]
    found: dict[str, object] = {n: None for n in names if n not in GUARDS and n != "root"}
    if "root" in names:
        found.update(uid=0, gid=0)
    guards = frozenset(n for n in names if n in GUARDS)
    return {**found, "off": guards} if guards else found


def small(section: str = "run", **overrides: object) -> Limits:
    return Limits.load(section, **{**SMALL, **overrides, **switched_off()})


def code(folder: Path, *programs: str) -> Path:
    """``folder`` holding ``programs`` (names in :data:`PROGRAMS`, or paths), in order; a
    ``.c`` one is compiled there to the name without its suffix."""
    folder.mkdir(parents=True, exist_ok=True)
    for program in programs:
        name = Path(program).name
        shutil.copy(PROGRAMS / program, folder / name)
        if name.endswith(".c"):
            subprocess.run(["cc", "-O1", "-pthread", "-o", str(folder / name[:-2]),
                            str(folder / name)], check=True)
    return folder


def _mounts_of(paths: Sequence[Path]) -> list[str]:
    with open("/proc/self/mountinfo") as f:
        return [line for line in f if any(str(p) in line for p in paths)]


def alive(pid: int) -> bool:
    """``pid`` runs (a zombie, killed and not yet reaped by whoever inherited it, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@contextmanager
def sandbox(folder: Path, label: str, *programs: str, limits: Limits | None = None,
            **options: object) -> Iterator[Sandbox]:
    """A :class:`Sandbox` of ``programs`` under ``folder``; on leaving, it is cleaned up and
    nothing of it may be left: its processes, its cgroup, a mount of its folders."""
    src = code(folder / "code", *programs)
    options.setdefault("stderr_log", folder / "owner.log")
    box = Sandbox(f"t{os.getpid()}-{label}", src, limits or small(), **options)  # type: ignore[arg-type]
    seen: set[int] = set()
    try:
        yield box
    finally:
        seen |= box.cgroup.procs()
        box.cleanup()
    assert not [d for d in box.cgroup.dirs if d.exists()], box.cgroup.dirs
    assert not [p for p in seen if alive(p)], seen
    assert not _mounts_of([folder, Path("/data"), Path("/bot")])


def owner_log(box: Sandbox) -> str:
    """What the owner's stderr log of ``box`` holds (every rotated file, oldest first)."""
    assert box.stderr_log is not None
    files = sorted(box.stderr_log.parent.glob(box.stderr_log.name + "*"), reverse=True)
    return b"".join(p.read_bytes() for p in files).decode(errors="replace")


def run(box: Sandbox, program: Sequence[str], *, stdin: bytes = b"", timeout: float = 30,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``program`` run in ``box`` to its end; its group is killed if it outlives ``timeout``.
    ``env``: the environment the sandbox is started from (the caller's by default)."""
    proc = subprocess.Popen(box.argv(program), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, env=env)
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
