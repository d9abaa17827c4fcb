"""One real ``sueca-arena bot-host`` process on a real Redis: it runs a submitted bot (its
runner alive, reported by its metrics and /healthz), restarts the runner when it is killed,
after a back-off that doubles while it keeps dying, moves to a new version when one is
submitted (stopping the old one), and stops the bot when it is unregistered. No referee is
needed: a runner keeps trying to connect."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
from kits.arena import SUECA_ARENA, arena_env, children, cli
from kits.sandbox import alive, code
from kits.wait import wait_for

from sueca.arena.hosted.host import INTERVAL, SWEEP_EVERY
from sueca.arena.hosted.sandbox import Cgroup, Limits
from sueca.arena.keys import Keys
from sueca.arena.processes import Child
from sueca.arena.redisproc import free_port
from sueca.arena.store import Store, connect

pytestmark = pytest.mark.slow


def metrics(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.read().decode()


def test_a_bot_host_restarts_replaces_and_stops_its_bot(redis_url: str, tmp_path: Path) -> None:
    prefix = f"hh{uuid.uuid4().hex[:8]}:"
    store = Store(connect(redis_url), Keys(prefix))
    env = arena_env(redis_url, prefix)
    token = store.bots.add("solo")
    folder = tmp_path / "solo"
    folder.mkdir()
    (folder / "sueca-bot.toml").write_text('python = "solo:Solo"\n')
    (folder / "solo.py").write_text("from sueca.sdk.bots.random_bot import RandomBot as Solo\n")
    cli("bots", "submit", "solo", str(folder), "--token", token, env=env)
    port = free_port()
    host = Child("host", [SUECA_ARENA, "bot-host", "--server", "127.0.0.1:1", "--name", "h",
                          "--work", str(tmp_path / "work"), "--metrics-port", str(port)],
                 env, tmp_path / "host.log")
    try:
        up = 'sueca_bothost_bot_up{bot="solo",version="%d"} 1.0'
        wait_for(lambda: up % 2 in metrics(port), 60, "version 2 running", interval=0.3,
                 detail=host.tail)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
            assert r.status == 200

        def log(version: int) -> str:  # the owner's log as `bots logs` reads it
            return "\n".join(entry["line"] for entry in store.hosted.log("solo", version))

        for wait in (1, 2):  # killed twice within 30 s of its start: the wait doubles
            runner = wait_for(lambda: children(host.pid), 30, "the runner")[0]
            os.kill(runner, signal.SIGKILL)
            said = f"code -9; starting it again in {wait}s"
            wait_for(lambda said=said: said in log(2), 30, f"the restart after {wait} s")
            wait_for(lambda killed=runner: up % 2 in metrics(port)
                     and children(host.pid) not in ([], [killed]), 30, "the runner back")
        assert "sueca_bothost_restarts_total 2.0" in metrics(port)

        (folder / "solo.py").write_text("from sueca.sdk.bots.heuristic import HeuristicBot as "
                                        "Solo\n")
        cli("bots", "submit", "solo", str(folder), "--token", token, env=env)
        wait_for(lambda: up % 3 in metrics(port), 60, "version 3 running", interval=0.3)
        wait_for(lambda: "stopping: version 3 replaces version 2" in log(2)
                 and "[bot host] stopped" in log(2), 20, "version 2 stopped")
        assert "runs version 3" in log(3)

        cli("bots", "remove", "solo", env=env)
        wait_for(lambda: "sueca_bothost_bots 0.0" in metrics(port), 30, "the bot dropped")
        wait_for(lambda: children(host.pid) == [], 20, "its runner stopped")
        started = time.monotonic()
        host.terminate()
        host.popen.wait(20)
        assert host.returncode == 0 and time.monotonic() - started < 20
        assert store.hosted.owners(["solo"]) == {"solo": None}
        assert "solo." not in host.text()  # no token in the host's own log
    finally:
        host.stop(grace=10.0, group=True)


#: a bot host's sandbox made in a process of its own: it prints its cgroup's name and the pids
#: in it, then dies without its cleanup (``dead``) or waits on its stdin and cleans up
HOST_WITH_A_SANDBOX = """
import os, subprocess, sys, time
from sueca.arena.hosted.sandbox import Sandbox
box = Sandbox(sys.argv[1], sys.argv[2])
subprocess.Popen(box.argv(["sleep", "60"]), start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(1.5)
print(box.cgroup_name, *box.cgroup.procs(), flush=True)
if sys.argv[3] == "dead":
    os._exit(0)  # as a killed bot host: no cleanup
sys.stdin.read()
box.cleanup()
"""


def test_a_running_bot_host_sweeps_what_a_dead_one_left(redis_url: str, tmp_path: Path) -> None:
    """A bot host killed before its cleanup leaves its sandbox's cgroup (and what runs in it);
    a bot host already running removes it within SWEEP_EVERY (plus a heartbeat), and leaves
    alone the sandbox of a host that still runs."""
    prefix = f"hw{uuid.uuid4().hex[:8]}:"
    env = arena_env(redis_url, prefix)
    folder = code(tmp_path / "code", "hello.c")
    host = Child("host", [SUECA_ARENA, "bot-host", "--server", "127.0.0.1:1", "--name", "w",
                          "--work", str(tmp_path / "work")], env, tmp_path / "host.log")
    live = subprocess.Popen([sys.executable, "-c", HOST_WITH_A_SANDBOX, "alive", str(folder),
                             "live"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        host.wait_ready(lambda: " ready: " in host.text(), 30, "the bot host")
        assert live.stdout is not None
        kept = live.stdout.readline().split()[0]
        dead = subprocess.run([sys.executable, "-c", HOST_WITH_A_SANDBOX, "left", str(folder),
                               "dead"], capture_output=True, text=True, timeout=30, check=True)
        left = dead.stdout.split()[0]
        pids = [int(p) for p in dead.stdout.split()[1:]]
        assert pids, dead
        parent = Limits.load().cgroup
        leftover = Cgroup.find(f"{parent}/{left}").dirs
        assert all(d.is_dir() for d in leftover)  # nothing swept it yet
        wait_for(lambda: not any(d.exists() for d in leftover), SWEEP_EVERY + 2 * INTERVAL + 3,
                 "the dead host's cgroup swept", interval=0.2, detail=host.tail)
        assert not any(alive(pid) for pid in pids)
        assert all(d.is_dir() for d in Cgroup.find(f"{parent}/{kept}").dirs)
        assert host.alive()
    finally:
        live.communicate("", timeout=30)
        host.stop(grace=10.0, group=True)
    assert live.returncode == 0
