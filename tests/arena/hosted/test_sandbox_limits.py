"""Hostile programs against the sandbox's limits (kits.sandbox's small ones: 64 MiB of memory,
32 processes, 8 MiB disks, 4 MiB files, a 1 MiB stderr log): each is stopped or refused, the
owner's log says why, and nothing is left behind (kits.sandbox checks it on leaving).
``SUECA_TEST_SANDBOX_OFF=LIMIT`` (the limit each test names) turns each one red."""

from __future__ import annotations

import re
import subprocess
import time

from kits.sandbox import owner_log, run, sandbox, small
from kits.wait import wait_for


def test_a_fork_bomb_stops_at_its_pids_limit(tmp_path):  # off: pids
    with sandbox(tmp_path, "fork", "fork_bomb.c") as box, \
            sandbox(tmp_path / "neighbour", "neighbour", "hello.c") as neighbour:
        bomb = subprocess.Popen(box.argv(["./fork_bomb"]), stderr=subprocess.DEVNULL)
        wait_for(lambda: "forked" in owner_log(box), 20, "the fork bomb's forks")
        beside = run(neighbour, ["./hello"])  # while the bomb holds every pid it could get
        done = subprocess.CompletedProcess(bomb.args, bomb.wait(20))
        log = owner_log(box)
    assert beside.returncode == 0 and beside.stdout.startswith(b"c uid="), beside
    forked, refused = map(int, re.search(r"forked (\d+) refused (\d+)", log).groups())
    assert forked < 32 and refused > 150, log
    assert "[sandbox] exited with status 0 (forks refused: its limit is 32 processes)" in log
    assert done.returncode == 0


def test_a_memory_hog_is_killed_at_its_memory_limit(tmp_path):  # off: memory_mb
    with sandbox(tmp_path, "memory", "memory_hog.c") as box:
        done = run(box, ["./memory_hog"])
        log = owner_log(box)
    most = max(int(n) for n in re.findall(r"allocated (\d+) MiB", log))
    assert most <= 64, log
    assert "[sandbox] killed: out of memory (its limit is 64 MiB)" in log, log
    assert done.returncode == 128 + 9


def test_filling_its_disks_and_a_big_file_are_refused(tmp_path):  # off: data_mb, tmp_mb, file_mb
    with sandbox(tmp_path, "disk", "disk_fill.c") as box:
        done = run(box, ["./disk_fill"])
        log = owner_log(box)
    filled = dict(re.findall(r"(/data|/tmp): (\d+ MiB then .*)", log))
    assert filled == {"/data": "8 MiB then No space left on device",
                      "/tmp": "8 MiB then No space left on device"}, log
    assert "big file: 6 MiB written" not in log, log
    assert "[sandbox] killed: a file over its 4 MiB file size limit" in log, log
    assert done.returncode == 128 + 25  # SIGXFSZ


def test_a_gigabyte_on_stderr_keeps_a_bounded_log_and_does_not_stall(tmp_path):  # off: stderr_mb
    # the shim that keeps the log is in the bot's cgroup: its CPU limit paces the flood
    with sandbox(tmp_path, "stderr", "stderr_flood.c", limits=small(cpus=1.0)) as box:
        start = time.monotonic()
        done = run(box, ["./stderr_flood"], timeout=60)
        took = time.monotonic() - start
        files = [p for p in tmp_path.glob("owner.log*")]
        kept = sum(p.stat().st_size for p in files)
        log = owner_log(box)
    assert done.stdout == b"done\n", done
    assert kept <= 2 * (1 << 20) + 100, (kept, files)  # 1 MiB per file, one kept besides
    assert log.endswith("[sandbox] exited with status 0\n"), log[-200:]
    assert done.stderr == b"[sandbox] exited with status 0\n"  # none of it reaches the host
    assert took < 40, took
