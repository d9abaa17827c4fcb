"""The first hour of a newcomer: a Redis without installing one, port clashes that
name the right port, help on every flag, and a scheduler that does not flood its log.

Everything real: ``sueca-arena`` as a subprocess, real Redis, real sockets, a real worker."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from kits.arena import ROOT, SUECA_ARENA, children, cli

from sueca.arena.processes import Child
from sueca.arena.redisproc import free_port


def _clean_env(**extra: str) -> dict[str, str]:
    """No SUECA_* settings, and a PATH without the virtual environment: no redis-server on it,
    as on a newcomer's machine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUECA_")}
    env["PATH"] = "/usr/bin:/bin"
    env.update(extra)
    return env


@contextmanager
def _listening(host: str = "127.0.0.1") -> Iterator[int]:
    """A port something else is already listening on."""
    with socket.socket() as s:
        s.bind((host, 0))
        s.listen()
        yield int(s.getsockname()[1])


def _one_line_error(out: subprocess.CompletedProcess[str], start: str) -> None:
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    assert out.stderr.startswith(start), out.stderr[-2000:]
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr[-2000:]


# -- Redis for the newcomer ---------------------------------------------------------------------

class _RedisCommand:
    """``sueca-arena redis`` in its own session, its two output streams on pipes: the test
    reads the ``export`` line while it runs and what it says when it stops."""

    def __init__(self, *args: str, tmp: Path | None = None) -> None:
        env = _clean_env(**({"TMPDIR": str(tmp)} if tmp else {}))
        self.child = Child("sueca-arena redis", [SUECA_ARENA, "redis", *args], env, cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.proc = self.child.popen
        assert self.proc.stdout is not None and self.proc.stderr is not None
        line = self.proc.stdout.readline().decode()
        found = re.fullmatch(r"export SUECA_REDIS_URL=(redis://127\.0\.0\.1:\d+/0)\n", line)
        assert found, (line, self.proc.stderr.read() if self.proc.poll() is not None else "")
        self.url = found.group(1)

    def ctrl_c(self) -> tuple[int, str]:
        """SIGINT to the whole process group, as a terminal sends it."""
        tree = children(self.proc.pid)
        assert tree  # redis-server (and the janitor)
        os.killpg(self.proc.pid, signal.SIGINT)
        _, err = self.proc.communicate(timeout=30)
        deadline = time.monotonic() + 10
        while any(Path(f"/proc/{p}").exists() for p in tree) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(Path(f"/proc/{p}").exists() for p in tree)
        return self.proc.returncode, err.decode(errors="replace")

    def kill(self) -> None:
        self.child.kill()


def test_sueca_arena_redis_runs_the_installed_redis_for_the_whole_loop(tmp_path: Path) -> None:
    port = free_port()
    data = tmp_path / "data"
    first = _RedisCommand("--port", str(port), "--dir", str(data))
    try:
        assert first.url == f"redis://127.0.0.1:{port}/0"
        env = _clean_env(SUECA_REDIS_URL=first.url)
        cli("bots", "add", "newbie", env=env)
        # a second one on the same port says so (the first one must not pass for it)
        clash = cli("redis", "--port", str(port), env=_clean_env(), check=None, timeout=30)
        _one_line_error(clash, f"error: cannot start Redis on 127.0.0.1:{port}: port {port} "
                               "is in use")
        code, err = first.ctrl_c()
        assert code == 0 and "Redis stopped" in err and "Traceback" not in err, err
    finally:
        first.kill()
    again = _RedisCommand("--port", str(port), "--dir", str(data))   # --dir: the data survives
    try:
        listed = cli("bots", "list", env=_clean_env(SUECA_REDIS_URL=again.url))
        assert "newbie" in listed.stdout
        assert again.ctrl_c()[0] == 0
    finally:
        again.kill()


def test_without_dir_nothing_is_kept(tmp_path: Path) -> None:
    server = _RedisCommand("--port", str(free_port()), tmp=tmp_path)
    try:
        assert [p.name[:12] for p in tmp_path.iterdir()] == ["sueca-redis-"]  # its private folder
        assert server.ctrl_c()[0] == 0
        assert not any(tmp_path.iterdir())
    finally:
        server.kill()


@pytest.mark.parametrize("redis", [None, "unreachable"])
def test_no_redis_errors_say_how_to_get_one(redis: str | None) -> None:
    argv = ["leaderboard"] if redis is None else [
        "leaderboard", "--redis", f"redis://127.0.0.1:{free_port()}/0"]
    out = cli(*argv, env=_clean_env(), check=2, timeout=30)
    assert "`sueca-arena redis` runs one" in out.stderr and "sueca-arena demo" in out.stderr


# -- ports ----------------------------------------------------------------------------------------

def test_a_metrics_port_clash_of_the_referee_names_the_metrics_port(redis_url: str) -> None:
    """A second referee with the default --metrics-port 9464 (here: another taken port)."""
    grpc_port = free_port()
    with _listening() as taken:
        out = cli("referee", "--redis", redis_url, "--port", str(grpc_port), "--metrics-port",
                  str(taken), env=_clean_env(), check=None, timeout=60)
    _one_line_error(out, f"error: cannot serve the referee's metrics on 127.0.0.1:{taken}: "
                         "Address already in use")
    assert "--metrics-port" in out.stderr and str(grpc_port) not in out.stderr


def test_a_port_clash_of_the_ratings_exporter_is_one_line(redis_url: str) -> None:
    with _listening() as taken:
        out = cli("ratings", "exporter", "--redis", redis_url, "--addr", "127.0.0.1",
                  "--metrics-port", str(taken), env=_clean_env(), check=None, timeout=60)
    _one_line_error(out, f"error: cannot serve ratings on 127.0.0.1:{taken}: "
                         "Address already in use")


def test_a_second_worker_on_the_same_metrics_port_refuses_to_start(redis_url: str) -> None:
    """Not a worker that runs without metrics, saying nothing (Celery only logs an error
    raised in the signal handler that serves them): one line naming the taken port."""
    with _listening("0.0.0.0") as taken:
        out = cli("worker", "--redis", redis_url, "--metrics-port", str(taken),
                  env=_clean_env(), check=None, timeout=60)
    _one_line_error(out, f"error: cannot serve worker metrics on 0.0.0.0:{taken}: "
                         "Address already in use (another worker?")


# -- help -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["ratings", "exporter"], ["ratings", "rebuild"],
                                     ["redis"], ["demo"]])
def test_every_flag_has_help(command: list[str]) -> None:
    import argparse

    from sueca.arena.cli import build_parser
    parser = build_parser()
    for word in command:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    missing = [a.option_strings for a in parser._actions if a.option_strings and not a.help]
    assert not missing, f"{' '.join(command)}: no help for {missing}"


# -- the scheduler's log ------------------------------------------------------------------------

def _queued(port: int) -> float:
    """The scheduler's count of queued ladder matches (0 while it does not answer yet)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            text = reply.read().decode()
    except OSError:
        return 0
    found = re.search(r"^sueca_scheduler_matches_queued_total (\S+)$", text, re.M)
    return float(found.group(1)) if found else 0


@pytest.mark.slow
def test_a_busy_scheduler_writes_a_summary_not_a_line_per_tick(league, module_worker,
                                                                tmp_path: Path) -> None:
    """Matches of the local-runner worker end in milliseconds, so the ladder queues new ones
    at almost every tick; the log gets the first ones by name and a total at the end."""
    port = free_port()
    with Child("scheduler", [SUECA_ARENA, "scheduler", "--bots", "random,heuristic",
                             "--target", "2", "--interval", "0.05", "--metrics-port", str(port)],
               league.env(), tmp_path / "scheduler.log", cwd=ROOT) as scheduler:
        # busy: many ticks have queued something
        scheduler.wait_ready(lambda: _queued(port) >= 6, 60, "six ladder matches queued")
        scheduler.send(signal.SIGINT)  # stops it like SIGTERM: with the total
        scheduler.finish(time.monotonic() + 30)
    err = scheduler.text()
    assert scheduler.returncode == 0, err[-2000:]
    total = re.search(r"ladder stopped: (\d+) match\(es\) queued since start", err)
    assert total, err[-2000:]
    assert int(total.group(1)) >= 6, err[-2000:]   # it was busy: many ticks queued something
    assert err.count("queued") <= 3, err[-3000:]    # the first batch, a summary, the total
