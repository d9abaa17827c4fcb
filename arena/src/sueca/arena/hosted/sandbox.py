"""The sandbox a hosted bot's code runs in: bubblewrap namespaces, a cgroup per bot, rlimits and a
seccomp filter, every limit read from one profile (``sandbox-profile.toml`` beside this module).

:class:`Sandbox` gives the command that runs a program inside (:meth:`Sandbox.argv`, for
``sueca-bot run 'exec:...'``: the token stays with ``sueca-bot`` outside, the program speaks only
on its standard input and output), runs a build step in the same kind of sandbox
(:meth:`Sandbox.build`) and removes what is left (:meth:`Sandbox.cleanup`). The command starts
:mod:`sueca.arena.hosted.enter`, a small shim outside the sandbox that joins the bot's cgroup,
sets the rlimits, drops to the profile's user and starts ``bwrap``; it keeps the program's
standard error in a capped, rotated :class:`StderrLog` and writes there why the program ended.

Inside: the submission read-only at ``/bot`` (the working directory), a ``/data`` and a ``/tmp``
of their own (tmpfs with a size cap: nothing of the host's disk, and gone with the process), the
read-only system and Python paths the program needs, a network namespace of its own (no
interface but its own loopback), new pid, ipc, uts and user namespaces, no capabilities, no
further user namespaces, a cleared environment. Nothing else of the host is visible.

Cgroups v1 (a directory per controller) and v2 (one unified directory) are found at run time
and take the same :class:`Limits`.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Limits", "Sandbox", "BuildResult", "StderrLog", "SandboxError", "PROFILE", "GUARDS",
           "CODE", "DATA", "MiB", "Cgroup", "exit_reason", "sweep"]

PROFILE = Path(__file__).with_name("sandbox-profile.toml")
CODE = "/bot"    # the submission, read-only (read-write during its build)
DATA = "/data"   # the bot's data folder
MiB = 1 << 20
# The protections a test may switch off (Limits(off=...)) to watch its hostile program win:
# net (no network namespace of its own), seccomp (no syscall filter), userns (nested user
# namespaces allowed), env (the caller's environment kept), mounts (the host's whole / bound
# read-only instead of the chosen paths), readonly (the code folder bound read-write, / left
# writable). Never read from the profile.
GUARDS = frozenset({"net", "seccomp", "userns", "env", "mounts", "readonly"})
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
          "/etc/ld.so.cache", "/etc/alternatives")  # read-only, when the host has them
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_KILL_WAIT = 5.0  # seconds cleanup() waits for the killed processes to leave the cgroup
_SERIAL = itertools.count(1)
_OWNED = re.compile(r".+\.(\d+)\.\d+(\.build)?")  # NAME.PID.N: the bot host's pid


class SandboxError(RuntimeError):
    """The sandbox cannot be set up (no bwrap, no writable cgroup, a bad name or limit): the
    message quotes what is wrong."""


@dataclass(frozen=True)
class Limits:
    """The limits of one sandbox. ``None`` switches a limit off (tests do, one at a time)."""

    memory_mb: int | None = 256
    cpus: float | None = 1.0
    cpu_weight: int | None = 100
    pids: int | None = 64
    open_files: int | None = 256
    file_mb: int | None = 64
    data_mb: int | None = 64
    tmp_mb: int | None = 32
    stderr_mb: float | None = 4
    stderr_keep: int = 2
    output_mb: int | None = None  # builds: the code folder after the build
    timeout_s: float | None = 300.0  # builds: wall clock
    uid: int = 65534
    gid: int = 65534
    cgroup: str = "sueca-sandbox"
    bots_cpu_weight: int = 1000
    off: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in ("cgroup", "off") or (value is None and "None" in str(f.type)):
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (
                    value == 0 and f.name not in ("stderr_keep", "uid", "gid")):
                raise SandboxError(f"bad sandbox limit {f.name} = {value!r}: a positive number")
        if not _NAME.fullmatch(self.cgroup):
            raise SandboxError(f"bad sandbox cgroup name {self.cgroup!r}")
        unknown = set(self.off) - GUARDS
        if unknown:
            raise SandboxError(f"unknown guard {sorted(unknown)[0]!r} in off= (known: "
                               f"{', '.join(sorted(GUARDS))})")

    @classmethod
    def load(cls, section: str = "run", profile: Path = PROFILE, **overrides: object) -> Limits:
        """The ``[section]`` (``run`` or ``build``) and ``[host]`` limits of ``profile``, with
        ``overrides`` by keyword on top (``Limits.load(memory_mb=None)``)."""
        try:
            with open(profile, "rb") as f:
                data = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError) as err:
            raise SandboxError(f"sandbox profile {str(profile)!r}: {err}") from None
        if section not in data or section == "host":
            raise SandboxError(f"sandbox profile {str(profile)!r} has no [{section}] section")
        values: dict[str, Any] = {**data.get("host", {}), **data[section], **overrides}
        names = {f.name for f in dataclasses.fields(cls)}
        for key in values:
            if key not in names or (key == "off" and key not in overrides):
                raise SandboxError(f"sandbox profile {str(profile)!r}: unknown limit {key!r}")
        if "off" in values:
            values["off"] = frozenset(values["off"])
        return cls(**values)


@dataclass(frozen=True)
class BuildResult:
    """How a build step ended: ``ok``, its exit status, why it failed (empty when ok) and the
    tail of what it printed (bytes as printed: escape them before showing them)."""

    ok: bool
    returncode: int
    reason: str
    output: bytes
    seconds: float


class StderrLog:
    """A capped, rotated log of a program's standard error: ``path`` holds the newest bytes,
    ``path.1`` .. ``path.KEEP`` the older files, each at most ``cap_bytes``; older ones are
    deleted. The disk it takes is bounded (``cap_bytes * (keep + 1)``) whatever the program
    prints. Files are the owner's only (mode 0600). Bytes are kept as printed: whoever shows
    them escapes them (:func:`sueca.sdk.logs.shown`)."""

    def __init__(self, path: Path | str, cap_bytes: int | None, keep: int) -> None:
        self.path = Path(path)
        self.cap = sys.maxsize if cap_bytes is None else max(1, int(cap_bytes))
        self.keep = max(0, keep)
        self._fd = self._open()
        self._size = os.fstat(self._fd).st_size

    def _open(self) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def write(self, data: bytes) -> None:
        while data:
            room = self.cap - self._size
            if room <= 0:
                self.rotate()
                continue
            os.write(self._fd, data[:room])
            self._size += min(room, len(data))
            data = data[room:]

    def rotate(self) -> None:
        os.close(self._fd)
        for n in range(self.keep, 0, -1):
            older = self.files_named(n - 1)
            if older.exists():
                os.replace(older, self.files_named(n))
        if self.keep == 0:
            self.path.unlink(missing_ok=True)
        self._fd = self._open()
        self._size = 0

    def files_named(self, n: int) -> Path:
        return self.path if n == 0 else self.path.with_name(f"{self.path.name}.{n}")

    def files(self) -> list[Path]:
        """The log's files that exist, oldest first."""
        named = (self.files_named(n) for n in range(self.keep, -1, -1))
        return [p for p in named if p.exists()]

    def read(self) -> bytes:
        """Everything kept, oldest first."""
        return b"".join(p.read_bytes() for p in self.files())

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


# -- cgroups ------------------------------------------------------------------------------------

def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, fs type, super options) of every cgroup mount."""
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fstype, _source, opts = (right.split() + ["", ""])[:3]
            if fstype in ("cgroup", "cgroup2"):
                found.append((left.split()[4], fstype, set(opts.split(","))))
    return found


def _own() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and ``""`` for v2."""
    own = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            _n, controllers, path = line.rstrip("\n").split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                own[c] = path
    return own


class Cgroup:
    """One sandbox's cgroup, under the bot host's own: v1 (one directory per controller:
    memory, cpu, cpuacct, pids) or v2 (one directory), whichever the host has its memory
    controller on."""

    V1 = ("memory", "cpu", "cpuacct", "pids")

    def __init__(self, version: int, at: Mapping[str, Path | str]) -> None:
        self.version = version
        self.at = {c: Path(p) for c, p in at.items()}
        self.dirs = list(dict.fromkeys(self.at.values()))

    @classmethod
    def find(cls, relative: str) -> Cgroup:
        """The cgroup ``relative`` to the bot host's own, on the cgroup version the host has
        its memory controller on (its directories are made by :meth:`create`)."""
        mounts, own = _mounts(), _own()
        v1 = {c: m for m, t, o in mounts if t == "cgroup" for c in cls.V1 if c in o}
        if "memory" in v1:
            missing = [c for c in cls.V1 if c not in v1]
            if missing:
                raise SandboxError(f"cgroup v1 controller {missing[0]!r} is not mounted")
            return cls(1, {c: Path(v1[c]) / own.get(c, "/").lstrip("/") / relative
                           for c in cls.V1})
        unified = [m for m, t, _o in mounts if t == "cgroup2"]
        if not unified:
            raise SandboxError("no cgroup v1 memory controller nor cgroup v2 mounted")
        root = Path(unified[0])
        leaf = root / own.get("", "/").lstrip("/") / relative
        cls._enable(root, leaf)
        return cls(2, {c: leaf for c in cls.V1})

    @staticmethod
    def _enable(root: Path, leaf: Path) -> None:
        """v2: let every ancestor of ``leaf`` below ``root`` hand memory, cpu and pids down."""
        for parent in [p for p in reversed(leaf.parents) if p.is_relative_to(root)]:
            parent.mkdir(exist_ok=True)
            try:
                (parent / "cgroup.subtree_control").write_text("+memory +cpu +pids")
            except OSError as err:
                raise SandboxError(f"cgroup v2 {str(parent)!r} does not delegate memory, cpu "
                                   f"and pids ({err.strerror}): run the bot host in a "
                                   "delegated cgroup") from None

    def create(self, limits: Limits) -> None:
        try:
            for d in self.dirs:
                d.mkdir(parents=True, exist_ok=True)
            self._limit(limits)
        except OSError as err:
            raise SandboxError(f"cannot set up cgroup {str(err.filename)!r}: "
                               f"{err.strerror}") from None

    def _limit(self, limits: Limits) -> None:
        mem = -1 if limits.memory_mb is None else limits.memory_mb * MiB
        if self.version == 1:
            m = self.at["memory"]
            swap = m / "memory.memsw.limit_in_bytes"
            if swap.exists():
                swap.write_text("-1")
            (m / "memory.limit_in_bytes").write_text(str(mem))
            if swap.exists():
                swap.write_text(str(mem))
            c = self.at["cpu"]
            (c.parent / "cpu.shares").write_text(str(limits.bots_cpu_weight * 1024 // 100))
            (c / "cpu.cfs_period_us").write_text("100000")
            quota = -1 if limits.cpus is None else max(1000, int(limits.cpus * 100000))
            (c / "cpu.cfs_quota_us").write_text(str(quota))
            weight = 100 if limits.cpu_weight is None else limits.cpu_weight
            (c / "cpu.shares").write_text(str(max(2, weight * 1024 // 100)))
            (self.at["pids"] / "pids.max").write_text(
                "max" if limits.pids is None else str(limits.pids))
        else:
            d = self.dirs[0]
            (d / "memory.max").write_text("max" if mem < 0 else str(mem))
            if (d / "memory.swap.max").exists():
                (d / "memory.swap.max").write_text("0" if mem >= 0 else "max")
            most = "max" if limits.cpus is None else str(max(1000, int(limits.cpus * 100000)))
            (d / "cpu.max").write_text(f"{most} 100000")
            (d / "cpu.weight").write_text(str(limits.cpu_weight or 100))
            (d.parent / "cpu.weight").write_text(str(limits.bots_cpu_weight))
            (d / "pids.max").write_text("max" if limits.pids is None else str(limits.pids))

    def procs(self) -> set[int]:
        found: set[int] = set()
        for d in self.dirs:
            try:
                found.update(int(p) for p in (d / "cgroup.procs").read_text().split())
            except OSError:
                pass
        return found

    def counters(self) -> dict[str, int]:
        """``oom_kills`` (processes the memory limit killed), ``pids_refused`` (forks the pids
        limit refused), ``cpu_ns`` (CPU time used), ``throttled`` (periods its CPU limit held
        it back): all since the cgroup was made."""
        def field(path: Path, key: str) -> int:
            try:
                for line in path.read_text().splitlines():
                    name, _, value = line.partition(" ")
                    if name == key:
                        return int(value)
            except (OSError, ValueError):
                pass
            return 0
        if self.version == 1:
            try:
                cpu = int((self.at["cpuacct"] / "cpuacct.usage").read_text())
            except (OSError, ValueError):
                cpu = 0
            return {"oom_kills": field(self.at["memory"] / "memory.oom_control", "oom_kill"),
                    "pids_refused": field(self.at["pids"] / "pids.events", "max"),
                    "cpu_ns": cpu,
                    "throttled": field(self.at["cpu"] / "cpu.stat", "nr_throttled")}
        d = self.dirs[0]
        return {"oom_kills": field(d / "memory.events", "oom_kill"),
                "pids_refused": field(d / "pids.events", "max"),
                "cpu_ns": field(d / "cpu.stat", "usage_usec") * 1000,
                "throttled": field(d / "cpu.stat", "nr_throttled")}

    def kill(self) -> None:
        """SIGKILL every process in it, until none is left (or :data:`_KILL_WAIT` passes)."""
        if self.version == 2 and (self.dirs[0] / "cgroup.kill").exists():
            try:
                (self.dirs[0] / "cgroup.kill").write_text("1")
            except OSError:
                pass
        deadline = time.monotonic() + _KILL_WAIT
        while (pids := self.procs()) and time.monotonic() < deadline:
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.02)

    def remove(self) -> None:
        """Kill what is left and remove the directories (and the parent, once empty)."""
        self.kill()
        deadline = time.monotonic() + _KILL_WAIT
        for d in self.dirs:
            while d.exists():
                try:
                    d.rmdir()
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SandboxError(f"cgroup {str(d)!r} still busy after kill") from None
                    time.sleep(0.02)
            try:
                d.parent.rmdir()  # the sandboxes' parent: only once no other bot is in it
            except OSError:
                pass


# -- the sandbox --------------------------------------------------------------------------------

def _bwrap() -> str:
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxError("no bwrap on PATH: install bubblewrap (make provision)")
    return found


SDK_PACKAGES = ("sueca.sdk", "sueca.engine", "sueca.codec", "sueca.v1")


def _python_paths() -> list[str]:
    """What this Python needs read-only to run an SDK bot (``python -m ...``): its install, the
    venv, and the folders of the SDK distribution's packages (an editable install keeps them in
    the source tree; the arena's own packages are not among them)."""
    paths = [sys.base_prefix, sys.prefix, sys.exec_prefix]
    for name in SDK_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            paths += list(spec.submodule_search_locations)
    return [p for p in dict.fromkeys(os.path.realpath(p) for p in paths) if os.path.exists(p)]


class Sandbox:
    """The sandbox of bot ``name``: its submission ``code_dir`` (read-only at :data:`CODE`), its
    ``limits`` (:meth:`Limits.load` by default), the owner's stderr log at ``stderr_log`` (none:
    the program's stderr goes to whoever started it, as any ``exec:`` program's does).

    Making one makes its cgroup; :meth:`cleanup` (or leaving a ``with`` block) kills anything
    left in it and removes it."""

    def __init__(self, name: str, code_dir: Path | str, limits: Limits | None = None, *,
                 build_limits: Limits | None = None, stderr_log: Path | str | None = None,
                 ) -> None:
        if not _NAME.fullmatch(name):
            raise SandboxError(f"bad sandbox name {name!r}: letters, digits, '_', '.', '-', "
                               "at most 64, not starting with a sign")
        self.name = name
        self.code_dir = Path(code_dir).resolve()
        if not self.code_dir.is_dir():
            raise SandboxError(f"no code folder {str(code_dir)!r}")
        self.limits = limits or Limits.load()
        self.build_limits = build_limits or Limits.load("build")
        self.stderr_log = None if stderr_log is None else Path(stderr_log).resolve()
        self.bwrap = _bwrap()
        # its own cgroup, named after the bot and this process: two sandboxes of one bot (a
        # version building while the last one plays) never share one, and sweep() knows the
        # sandboxes of a bot host that is gone
        self.cgroup_name = f"{name}.{os.getpid()}.{next(_SERIAL)}"
        self.cgroup = Cgroup.find(f"{self.limits.cgroup}/{self.cgroup_name}")
        self.cgroup.create(self.limits)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()

    def argv(self, program: Sequence[str]) -> list[str]:
        """The command that runs ``program`` (its argv, as run from :data:`CODE`; ``python``
        is this Python) inside the sandbox: give it to ``exec:`` (``shlex.join``)."""
        return self._command(program, self.limits, self.cgroup, build=False)

    def build(self, command: Sequence[str], timeout: float | None = None) -> BuildResult:
        """Run the build step ``command`` in a sandbox of its own (the ``[build]`` limits, its own
        cgroup) with the code folder writable; ``timeout`` (default the profile's) bounds its
        wall clock. The code folder is the only place a build writes that outlives it (hence a
        per-version copy of the submission): its size after the build is checked against
        ``output_mb``."""
        limits = self.build_limits
        root = os.geteuid() == 0
        cgroup = Cgroup.find(f"{limits.cgroup}/{self.cgroup_name}.build")
        cgroup.create(limits)
        argv = self._command(command, limits, cgroup, build=True)
        limit = limits.timeout_s if timeout is None else timeout
        start = time.monotonic()
        try:
            if root:
                _hand_over(self.code_dir, limits.uid, limits.gid)
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            try:
                out, _ = proc.communicate(timeout=limit)
                reason = ""
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, _ = proc.communicate()
                reason = f"the build ran past its {limit:g} s"
        finally:
            grew = cgroup.counters()  # a new cgroup: all it counted is this build's
            cgroup.remove()  # every process of the build is gone before the folder is taken
            if root:
                _hand_over(self.code_dir, os.geteuid(), os.getegid(), take_back=True)
        seconds = time.monotonic() - start
        code = proc.returncode
        if not reason and code != 0:
            reason = exit_reason(code, grew, limits)
        if not reason and limits.output_mb is not None:
            size = _tree_size(self.code_dir)
            if size > limits.output_mb * MiB:
                reason = (f"the build left {size / MiB:.0f} MiB in the code folder, over its "
                          f"{limits.output_mb} MiB")
        return BuildResult(ok=not reason, returncode=code, reason=reason,
                           output=out[-16384:], seconds=seconds)

    def cleanup(self) -> None:
        """Kill every process left in the bot's cgroup and remove it."""
        self.cgroup.remove()

    # -- the command ------------------------------------------------------------------------
    def _command(self, program: Sequence[str], limits: Limits, cgroup: Cgroup, *,
                 build: bool) -> list[str]:
        if not program:
            raise SandboxError("no program to run in the sandbox")
        plan = {
            "cgroup": {"version": cgroup.version,
                       "at": {k: str(v) for k, v in cgroup.at.items()}},
            "rlimits": _rlimits(limits),
            "uid": limits.uid, "gid": limits.gid,
            "bwrap": [self.bwrap, *self._bwrap_args(limits, build=build)],
            "program": list(program),
            "seccomp": "seccomp" not in limits.off,
            "keep_env": "env" in limits.off,
            "reachable": self._sources(),
            "stderr": None if self.stderr_log is None or build else {
                "path": str(self.stderr_log),
                "cap": None if limits.stderr_mb is None else int(limits.stderr_mb * MiB),
                "keep": limits.stderr_keep},
            "limits": {k: v for k, v in dataclasses.asdict(limits).items() if k != "off"},
        }
        return [sys.executable, "-m", "sueca.arena.hosted.enter", json.dumps(plan)]

    def _sources(self) -> list[str]:
        return [str(self.code_dir), *_python_paths()]

    def _bwrap_args(self, limits: Limits, *, build: bool) -> list[str]:
        args = ["--die-with-parent", "--new-session", "--unshare-user", "--unshare-pid",
                "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--hostname", "sandbox", "--uid", "1000", "--gid", "1000"]
        if "net" not in limits.off:
            args.append("--unshare-net")
        if "userns" not in limits.off:
            args.append("--disable-userns")
        mounts = "mounts" not in limits.off
        shown = [*SYSTEM, *_python_paths()] if mounts else [
            f"/{entry}" for entry in sorted(os.listdir("/"))
            if entry not in ("proc", "dev", CODE[1:], DATA[1:])]  # the whole host, read-only
        for path in shown:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.exists(path):
                args += ["--ro-bind", path, path]
        args += ["--proc", "/proc", "--dev", "/dev"]
        if mounts:
            args += _tmpfs("/tmp", limits.tmp_mb)
            # a Python installed under /tmp (a venv in a temporary checkout) is hidden by that
            # tmpfs: bind it again inside it, read-only
            args += [a for p in _python_paths() if p.startswith("/tmp/")
                     for a in ("--ro-bind", p, p)]
        writable = build or "readonly" in limits.off
        args += ["--bind" if writable else "--ro-bind", str(self.code_dir), CODE]
        if not build:
            args += _tmpfs(DATA, limits.data_mb)
        if "env" not in limits.off:
            args.append("--clearenv")
            for key, value in _environment(build).items():
                args += ["--setenv", key, value]
        args += ["--chdir", CODE]
        if "mounts" not in limits.off and "readonly" not in limits.off:
            args += ["--remount-ro", "/dev", "--remount-ro", "/"]  # its devices still work
        return args


def _tmpfs(path: str, size_mb: int | None) -> list[str]:
    """A tmpfs at ``path`` of ``size_mb`` (None: the kernel's default, half the RAM; its pages
    still count against the memory limit)."""
    return (["--size", str(size_mb * MiB)] if size_mb is not None else []) + ["--tmpfs", path]


def sweep(limits: Limits | None = None) -> list[str]:
    """Kill and remove the sandboxes left by bot hosts that are gone (killed before their
    cleanup): every cgroup under the profile's whose bot host's pid no longer runs. A bot host
    calls it when it starts and every :data:`~sueca.arena.hosted.host.SWEEP_EVERY` seconds
    while it runs. The cgroups it removed, by name."""
    parent = Cgroup.find((limits or Limits.load()).cgroup)
    removed = []
    try:
        names = sorted(p.name for p in parent.dirs[0].iterdir() if p.is_dir())
    except FileNotFoundError:
        return []
    for name in names:
        owned = _OWNED.fullmatch(name)
        if owned is None or _running(int(owned[1])):
            continue
        Cgroup(parent.version, {c: d / name for c, d in parent.at.items()}).remove()
        removed.append(name)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _environment(build: bool) -> Mapping[str, str]:
    return {"PATH": f"{os.path.join(sys.prefix, 'bin')}:/usr/local/bin:/usr/bin:/bin",
            "HOME": "/tmp" if build else DATA, "LANG": "C.UTF-8", "TMPDIR": "/tmp",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}


def _rlimits(limits: Limits) -> dict[str, int]:
    found = {"CORE": 0}
    if limits.open_files is not None:
        found["NOFILE"] = limits.open_files
    if limits.file_mb is not None:
        found["FSIZE"] = limits.file_mb * MiB
    return found


def _hand_over(root: Path, uid: int, gid: int, *, take_back: bool = False) -> None:
    """Give the code folder to the sandbox's user for a build; ``take_back``: back to the bot
    host's, with no set-id bits and readable by all (the run reads it as the sandbox's user,
    read-only), so nothing a build made stays owned by or runs as anyone else."""
    for folder, dirs, files in os.walk(root):
        for name in [None, *dirs, *files]:
            path = folder if name is None else os.path.join(folder, name)
            os.lchown(path, uid, gid)
            st = os.lstat(path)
            if take_back and not stat.S_ISLNK(st.st_mode):
                mode = stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX)
                mode |= stat.S_IRUSR | stat.S_IROTH | stat.S_IRGRP
                if stat.S_ISDIR(st.st_mode) or mode & stat.S_IXUSR:
                    mode |= stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
                os.chmod(path, mode)


def _tree_size(root: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except OSError:
                pass
    return total


def exit_reason(code: int, grew: Mapping[str, int], limits: Mapping[str, object] | Limits,
                ) -> str:
    """Why a sandboxed program ended with status ``code`` (negative: killed by that signal;
    over 128: bwrap's 128 + N for signal N), given how much its cgroup's
    :meth:`Cgroup.counters` grew meanwhile and its limits."""
    lim = dataclasses.asdict(limits) if isinstance(limits, Limits) else dict(limits)
    sig = -code if code < 0 else code - 128 if code > 128 else 0
    if grew.get("oom_kills", 0) > 0:
        return f"killed: out of memory (its limit is {lim.get('memory_mb')} MiB)"
    if sig == signal.SIGXFSZ:
        return f"killed: a file over its {lim.get('file_mb')} MiB file size limit"
    more = ""
    if grew.get("pids_refused", 0) > 0:
        more = f" (forks refused: its limit is {lim.get('pids')} processes)"
    if sig:
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"killed by {name}{more}"
    return f"exited with status {code}{more}"
