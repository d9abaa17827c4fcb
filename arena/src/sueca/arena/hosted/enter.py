"""``python -m sueca.arena.hosted.enter PLAN``: the shim between whoever starts a sandboxed
program (``sueca-bot run`` through ``exec:``, or :meth:`.Sandbox.build`) and ``bwrap``.

``PLAN`` is the JSON :meth:`.Sandbox.argv` writes. The shim joins the bot's cgroup (so every
process it starts is counted and limited from its first instruction), then forks: the child
sets the rlimits, drops to the profile's user when the shim runs as root, loads the seccomp
filter into a file bwrap reads, and execs bwrap; the shim stays outside the sandbox, keeps the
program's standard error in the owner's :class:`.StderrLog` (when the plan names one: then none
of it reaches the shim's own standard error, which the bot host's logs get), and when the
program ends writes one ``[sandbox]`` line saying why (out of memory, a limit, a signal, its
exit status) and exits with its status. It stays in the bot's cgroup, so the CPU it spends on a
program's flood of standard error is the bot's own.

Python paths the sandbox user cannot reach on the host (a Python installed under a private
home) are made reachable for this sandbox only: in a mount namespace of the shim's child, a
tmpfs hides the unreachable folder and holds only the paths the sandbox binds. It vanishes with
the child: nothing is mounted on the host.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import resource
import signal
import struct
import sys
from collections.abc import Sequence
from typing import Any

from .sandbox import Cgroup, StderrLog, exit_reason

__all__ = ["main", "seccomp_filter", "REFUSED"]

# syscalls refused with EPERM inside the sandbox (x86_64 numbers, aarch64 numbers): debugging
# others, mounting, namespaces, the kernel's keyrings, modules, eBPF and io_uring (whose
# operations no seccomp filter sees)
REFUSED: dict[str, tuple[int, int]] = {
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "unshare": (272, 97), "setns": (308, 268), "open_tree": (428, 428), "move_mount": (429, 429),
    "fsopen": (430, 430), "fsconfig": (431, 431), "fsmount": (432, 432),
    "mount_setattr": (442, 442), "open_by_handle_at": (304, 265), "keyctl": (250, 219),
    "add_key": (248, 217), "request_key": (249, 218), "bpf": (321, 280),
    "perf_event_open": (298, 241), "userfaultfd": (323, 282), "kexec_load": (246, 104),
    "kexec_file_load": (320, 294), "init_module": (175, 105), "finit_module": (313, 273),
    "delete_module": (176, 106), "swapon": (167, 224), "swapoff": (168, 225),
    "reboot": (169, 142), "io_uring_setup": (425, 425), "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
}
_ARCH = {"x86_64": (0xC000003E, 0), "aarch64": (0xC00000B7, 1)}
_EPERM_RET, _ALLOW, _KILL = 0x00050000 | 1, 0x7FFF0000, 0x80000000
_LD_ABS_W, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_CLONE_NEWNS, _MS_BIND, _MS_REC, _MS_PRIVATE, _MS_NOSUID, _MS_NODEV = (
    0x20000, 4096, 16384, 1 << 18, 2, 4)


def seccomp_filter(machine: str | None = None) -> bytes | None:
    """The classic BPF program bwrap loads (``--seccomp``): :data:`REFUSED` get EPERM, the
    x32 ABI too, a foreign architecture kills. None on an architecture it has no numbers for."""
    arch = _ARCH.get(machine or platform.machine())
    if arch is None:
        return None
    audit, column = arch
    numbers = sorted({pair[column] for pair in REFUSED.values()})

    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
        return struct.pack("=HBBI", code, jt, jf, k)

    prog = [op(_LD_ABS_W, 4), op(_JEQ, audit, 1, 0), op(_RET, _KILL), op(_LD_ABS_W, 0)]
    n = len(numbers)
    if column == 0:  # x86_64: the x32 ABI's numbers have bit 30 set
        prog.append(op(_JGE, 0x40000000, n + 1, 0))
    prog += [op(_JEQ, nr, n - i, 0) for i, nr in enumerate(numbers)]
    prog += [op(_RET, _ALLOW), op(_RET, _EPERM_RET)]
    return b"".join(prog)


def _searchable(path: str, uid: int, gid: int) -> bool:
    st = os.stat(path)
    if st.st_uid == uid:
        return bool(st.st_mode & 0o100)
    if st.st_gid == gid:
        return bool(st.st_mode & 0o010)
    return bool(st.st_mode & 0o001)


def _blocked(path: str, uid: int, gid: int) -> str | None:
    """The first folder on the way to ``path`` that ``uid`` cannot search, if any."""
    parts = os.path.realpath(path).split("/")[1:]
    for i in range(len(parts)):
        folder = "/" + "/".join(parts[:i])
        if not _searchable(folder, uid, gid):
            return folder
    return None


def _make_reachable(sources: Sequence[str], uid: int, gid: int) -> None:
    """Root only, in the child: hide each unreachable folder behind a tmpfs holding only the
    sources under it, in a private mount namespace (see the module's docstring)."""
    hidden: dict[str, list[str]] = {}
    for source in sources:
        if os.path.exists(source) and (folder := _blocked(source, uid, gid)) is not None:
            hidden.setdefault(folder, []).append(os.path.realpath(source))
    if not hidden:
        return
    libc = ctypes.CDLL(None, use_errno=True)

    def check(result: int, what: str) -> None:
        if result != 0:
            raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")

    check(libc.unshare(_CLONE_NEWNS), "unshare")
    check(libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "mount --make-rprivate /")
    for folder, paths in hidden.items():
        fds = {p: os.open(p, os.O_PATH | os.O_CLOEXEC) for p in paths}
        check(libc.mount(b"tmpfs", folder.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV,
                         b"mode=755,size=1m"), f"mount tmpfs on {folder}")
        for path, fd in fds.items():
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.makedirs(path, 0o755, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), 0o755, exist_ok=True)
                open(path, "a").close()
            check(libc.mount(f"/proc/self/fd/{fd}".encode(), path.encode(), None,
                             _MS_BIND | _MS_REC, None), f"bind {path}")
            os.close(fd)


def _child(plan: dict[str, Any], stderr_w: int | None) -> None:
    """In the forked child: become the sandboxed program's bwrap (never returns)."""
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them; a program must not
        signal.signal(sig, signal.SIG_DFL)         # inherit that
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("0")  # the shim protects itself from the OOM killer; the program may not
    except OSError:
        pass
    if stderr_w is not None:
        os.dup2(stderr_w, 2)
        os.close(stderr_w)
    argv = list(plan["bwrap"])
    if os.getuid() == 0 and plan["uid"] != 0:
        _make_reachable(plan["reachable"], plan["uid"], plan["gid"])
        os.setgroups([])
        os.setgid(plan["gid"])
        os.setuid(plan["uid"])
    for name, value in plan["rlimits"].items():
        resource.setrlimit(getattr(resource, f"RLIMIT_{name}"), (value, value))
    args = argv[1:]
    if plan["seccomp"]:
        program = seccomp_filter()
        if program is None:
            os.write(2, f"[sandbox] no seccomp filter for {platform.machine()}\n".encode())
        else:
            args[0:0] = ["--seccomp", str(_memfd("seccomp", program))]
    # bwrap reads its arguments from a file and starts with an empty environment: its pid 1
    # in the sandbox shows neither the host's paths nor whoever started it's variables
    # (a token among them)
    fd = _memfd("args", b"".join(a.encode() + b"\0" for a in args))
    env = dict(os.environ) if plan["keep_env"] else {}
    os.execve(argv[0], [argv[0], "--args", str(fd), "--", *plan["program"]], env)


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _pump(read_fd: int, log: StderrLog) -> None:
    while chunk := os.read(read_fd, 1 << 20):
        log.write(chunk)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m sueca.arena.hosted.enter PLAN (the JSON Sandbox.argv writes)",
              file=sys.stderr)
        return 2
    plan = json.loads(args[0])
    cgroup = Cgroup(plan["cgroup"]["version"], plan["cgroup"]["at"])
    pid = str(os.getpid())
    try:
        for d in cgroup.dirs:
            with open(d / "cgroup.procs", "w") as f:
                f.write(pid)
    except OSError as err:  # its sandbox was cleaned up: never run outside its cgroup
        os.write(2, f"[sandbox] could not start: no cgroup {err.filename} "
                    f"({err.strerror})\n".encode(errors="replace"))
        return 125
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("-900")  # needs CAP_SYS_RESOURCE: without it the OOM killer may take the
    except OSError:          # shim too, and the [sandbox] line says less
        pass
    before = cgroup.counters()
    log = None
    read_fd = write_fd = None
    if plan["stderr"] is not None:
        log = StderrLog(plan["stderr"]["path"], plan["stderr"]["cap"], plan["stderr"]["keep"])
        read_fd, write_fd = os.pipe()
    try:
        child = os.fork()
    except BlockingIOError:
        limits = plan["limits"]
        os.write(2, f"[sandbox] could not start: no process left under its limit of "
                    f"{limits.get('pids')} processes\n".encode())
        return 125
    if child == 0:
        try:
            if read_fd is not None:
                os.close(read_fd)
            _child(plan, write_fd)
        except BaseException as err:  # the forked child must never return
            os.write(2, f"[sandbox] could not start: {err}\n".encode(errors="replace"))
        os._exit(127)
    signal.signal(signal.SIGTERM, lambda *_: os.kill(child, signal.SIGKILL))
    if log is not None and read_fd is not None and write_fd is not None:
        os.close(write_fd)
        _pump(read_fd, log)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    grew = {k: v - before.get(k, 0) for k, v in cgroup.counters().items()}
    line = f"[sandbox] {exit_reason(code, grew, plan['limits'])}\n".encode()
    if log is not None:
        log.write(line)
        log.close()
    try:
        os.write(2, line)
    except OSError:
        pass
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
