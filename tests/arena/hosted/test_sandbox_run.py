"""A C program built inside the sandbox (its build step, the code folder writable) and a Python
program importing the SDK both run inside it, as the sandbox's own user in /bot with a cleared
environment; the sandbox leaves nothing behind (kits.sandbox checks on leaving)."""

from __future__ import annotations

import shutil

from kits.sandbox import PROGRAMS, run, sandbox


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
