"""A C program built inside the sandbox (its build step, the code folder writable) and a Python
program importing the SDK both run inside it, as the sandbox's own user in /bot with a cleared
environment; the sandbox leaves nothing behind (kits.sandbox checks on leaving)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

from kits.sandbox import PROGRAMS, alive, code, run, sandbox, small

from sueca.arena.hosted.sandbox import sweep


def test_a_c_bot_built_inside_and_a_python_bot_run_inside(tmp_path):
    with sandbox(tmp_path, "run", "hello_sdk.py") as box:
        shutil.copy(PROGRAMS / "hello.c", box.code_dir / "hello.c")
        built = box.build(["cc", "-O2", "-o", "hello", "hello.c"])
        assert built.ok, built
        assert (box.code_dir / "hello").exists()
        broken = box.build(["cc", "-o", "nothing", "missing.c"], timeout=30)
        assert not broken.ok and broken.reason == "exited with status 1", broken
        assert b"missing.c" in broken.output

        c = run(box, ["./hello"])
        assert c.returncode == 0, c
        assert c.stdout == b"c uid=1000 cwd=/bot\n"
        assert c.stderr == b"[sandbox] exited with status 0\n"

        py = run(box, ["python", "-m", "hello_sdk"])
        assert py.returncode == 0, py
        assert py.stdout.startswith(b"py (3, "), py
        assert b"uid 1000 cwd /bot" in py.stdout
        env = py.stdout.split(b"env ")[1].strip().split(b",")
        assert set(env) <= {b"HOME", b"LANG", b"PATH", b"PWD", b"TMPDIR",
                            b"PYTHONDONTWRITEBYTECODE", b"PYTHONUNBUFFERED"}, env


def test_a_build_is_held_to_its_own_limits(tmp_path):  # off: timeout_s (its kill), output_mb
    build = small("build", timeout_s=3, output_mb=2)
    with sandbox(tmp_path, "build", "fork_bomb.c", build_limits=build) as box:
        slow = box.build(["sh", "-c", "sleep 30 & sleep 30"])
        assert not slow.ok and slow.reason == "the build ran past its 3 s", slow
        assert slow.seconds < 10, slow
        big = box.build(["sh", "-c", "head -c 3000000 /dev/zero > blob"])
        assert not big.ok and big.reason.startswith("the build left 3 MiB"), big
        (box.code_dir / "blob").unlink()
        bomb = box.build(["./fork_bomb"])
        assert bomb.ok, bomb
        forked = int(re.search(rb"forked (\d+)", bomb.output)[1])
        assert forked < 32, bomb.output  # the build's pids limit (kits.sandbox.SMALL)


def test_sweep_removes_what_a_killed_bot_host_left(tmp_path):
    folder = code(tmp_path / "code", "hello.c")
    host = subprocess.run([sys.executable, "-c", f"""
import os, subprocess
from sueca.arena.hosted.sandbox import Sandbox
box = Sandbox("swept", {str(folder)!r})
subprocess.Popen(box.argv(["sleep", "60"]), start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
import time; time.sleep(1.5)
print(box.cgroup_name, *box.cgroup.procs(), flush=True)
os._exit(0)  # as a killed bot host: no cleanup
"""], capture_output=True, text=True, timeout=30, check=True)
    name, *pids = host.stdout.split()
    assert pids, host
    assert name in sweep()
    assert not any(alive(int(pid)) for pid in pids)
    assert name not in sweep()
