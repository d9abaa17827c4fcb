"""``sueca-arena demo`` end to end on a machine with nothing running: it starts and stops its own
Redis, referee, worker and bots, and leaves nothing behind — also when interrupted by a
terminal's Ctrl-C (SIGINT to the whole process group), during start-up, or killed outright."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from kits.arena import ROOT, SUECA_ARENA, children
from kits.wait import wait_for

from sueca.arena.processes import port_answers

pytestmark = pytest.mark.slow

# what a referee or worker logs when Redis goes away under it
LOST_REDIS = re.compile(r"(?i)cannot (publish to|reach) redis|connection refused|error 111")


def _closed(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    return not port_answers(int(port), host)


def _env(tmp: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SUECA_") and k != "PROMETHEUS_MULTIPROC_DIR"}
    if tmp is not None:  # every temporary folder of the demo and its children goes here
        env["TMPDIR"] = str(tmp)
    return env


def _demo(tmp: Path, *args: str) -> subprocess.Popen[str]:
    """The demo in its own session, as a shell runs a foreground job: a SIGINT to its process
    group is what a terminal's Ctrl-C sends."""
    return subprocess.Popen([SUECA_ARENA, "demo", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env(tmp), cwd=ROOT,
                            start_new_session=True)


def _wait_line(proc: subprocess.Popen[str], text: str, timeout: float = 60) -> str:
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if text in line or not line:
            return line
    raise AssertionError(f"no {text!r} from the demo in {timeout}s")


def _start_time(pid: int) -> str | None:
    """The process's start time (to tell it from a later process with the same pid); None when
    it is gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return None if fields[0] == "Z" else fields[19]


def _descendants(pid: int) -> dict[int, str]:
    """Every live descendant of ``pid`` (a child of this test), with its start time."""
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        for child in children(todo.pop()):
            start = _start_time(child)
            if start is not None:
                found[child] = start
                todo.append(child)
    return found


def _wait_gone(procs: dict[int, str], tmp: Path, timeout: float = 20.0) -> None:
    def alive() -> list[int]:
        return [p for p, start in procs.items() if _start_time(p) == start]

    def left() -> str:
        names = {p: Path(f"/proc/{p}/cmdline").read_bytes()[:80] for p in alive()
                 if Path(f"/proc/{p}").exists()}
        return f"left behind: processes {names}, files {list(tmp.rglob('*'))}"

    wait_for(lambda: not alive() and not any(tmp.iterdir()), timeout,
             "the demo's processes and folders to be gone", interval=0.1, detail=left)


def _wait_under_way(arena_up: str) -> None:
    """Wait until the demo's tournament has recorded a match, in the Redis that its
    "arena up" line names."""
    from sueca.arena.keys import Keys
    from sueca.arena.store import Store, connect
    found = re.search(r"Redis (redis://\S+/0)", arena_up)
    assert found, arena_up
    r = connect(found.group(1))
    try:
        wait_for(lambda: Store(r, Keys("sueca:")).results_count() >= 1, 60,
                 "the demo's first recorded match", interval=0.1)
    finally:
        r.close()


def test_demo_runs_end_to_end_and_heuristic_beats_random():
    # No timing assertion: nothing promises how long the demo takes on a shared 2-core machine;
    # the subprocess timeout only catches a demo that hangs.
    # TLS settings meant for a real cluster must not reach the demo's own loopback referee
    env = {**_env(), "SUECA_TLS": "1", "SUECA_TLS_CA": "/nonexistent/ca.pem",
           "SUECA_TLS_CERT": "/nonexistent/cert.pem", "SUECA_TLS_KEY": "/nonexistent/key.pem"}
    out = subprocess.run([SUECA_ARENA, "demo", "--json"], capture_output=True, text=True,
                         timeout=240, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert report["matches"] == 18 and report["failed"] == []
    ranks = {r["bot"]: r["rank"] for r in report["leaderboard"]}
    assert set(ranks) == {"random", "heuristic", "reckless"}
    assert ranks["heuristic"] < ranks["random"]
    for r in report["leaderboard"]:
        assert r["elo_pm"] > 0 and r["games"] > 0
    redis_addr = report["redis"].split("//")[1].split("/")[0]
    assert _closed(redis_addr) and _closed(report["referee"])   # everything was stopped


def test_the_demo_table_explains_games_and_names_no_folder_it_deletes(tmp_path):
    """Each half of a duplicate pair is a rated game: 4 matches per bot show as "games 4", and
    the note under the table says so. A demo that succeeds deletes its logs, so it prints no
    folder; there is no `demo --id`, so it suggests none."""
    out = subprocess.run([SUECA_ARENA, "demo", "-k", "2"], capture_output=True, text=True,
                         timeout=240, env=_env(tmp_path), cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in out.stdout.splitlines()
            if line.count("│") > 4]
    games = {r[1].rstrip(" ?"): r[3] for r in rows if r[0].isdigit()}
    assert games == {"random": "4", "heuristic": "4", "reckless": "4"}, out.stdout
    table = " ".join(out.stdout.split())
    assert "each half of a duplicate pair" in table and "each bot has 4 rated matches" in table
    assert "score" not in table
    assert "--id" not in out.stderr
    assert str(tmp_path) not in out.stderr + out.stdout and not any(tmp_path.iterdir())


def test_an_odd_matches_per_pair_is_refused_before_anything_starts(tmp_path):
    """The demo always plays duplicate pairs: an odd -k is the user's --matches-per-pair that is
    wrong (not a --duplicate they never gave), said before any process or folder exists."""
    for flag in ("--matches-per-pair", "-k"):
        out = subprocess.run([SUECA_ARENA, "demo", flag, "3"], capture_output=True, text=True,
                             timeout=60, env=_env(tmp_path), cwd=ROOT)
        assert out.returncode == 2, out.stderr[-3000:]
        assert out.stderr.startswith("error: bad --matches-per-pair '3'"), out.stderr
        assert "even" in out.stderr and "--duplicate" not in out.stderr
        assert "arena up" not in out.stderr and "Traceback" not in out.stderr
        assert not any(tmp_path.iterdir())  # no log folder, no Redis


def test_ctrl_c_in_a_terminal_stops_in_order_and_says_where_the_logs_are(tmp_path):
    proc = _demo(tmp_path, "-k", "40")
    try:
        line = _wait_line(proc, "arena up")
        found = re.search(r"Redis redis://([\d.]+:\d+)/0, referee ([\d.]+:\d+)", line)
        assert found, line
        _wait_under_way(line)                             # the tournament is under way
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err
    assert _closed(found.group(1)) and _closed(found.group(2))
    logs = re.search(r"logs kept in (\S+)", err)
    assert logs and Path(logs.group(1)).parent == tmp_path, err[-2000:]
    # Redis was stopped last: neither the referee nor the worker saw it go
    for log in [*Path(logs.group(1)).glob("worker*.log"), Path(logs.group(1), "referee.log")]:
        lost = LOST_REDIS.search(log.read_text(errors="replace"))
        assert not lost, f"{log.name}: {lost.group(0)}"
    # nothing else is left: the private Redis and its folder are gone
    assert [p.name for p in tmp_path.iterdir()] == [Path(logs.group(1)).name]


def test_ctrl_c_during_start_up_stops_at_once(tmp_path):
    proc = _demo(tmp_path)
    try:
        wait_for(lambda: list(tmp_path.glob("sueca-demo-*/bot-*.log")), 60,  # bots are starting
                 "the demo's first bot log", interval=0.02)
        tree = _descendants(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)
        # generous: a couple of seconds is expected; 15 s means the stop is stuck
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err
    logs = re.search(r"logs kept in (\S+)", err)
    assert logs, err[-2000:]
    for p in tmp_path.glob("sueca-demo-*"):
        subprocess.run(["rm", "-rf", str(p)], check=True)
    _wait_gone(tree, tmp_path, timeout=10)


def test_a_killed_demo_leaves_no_process_and_no_folder(tmp_path):
    """SIGKILL gives the demo no chance to clean up: its children die with it (their own
    death signal, and a janitor process that also removes the temporary folders)."""
    proc = _demo(tmp_path, "-k", "40")
    try:
        _wait_under_way(_wait_line(proc, "arena up"))       # every process of it up
        tree = _descendants(proc.pid)
        assert any(b"redis-server" in Path(f"/proc/{p}/cmdline").read_bytes() for p in tree)
        proc.kill()
        proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    _wait_gone(tree, tmp_path)
