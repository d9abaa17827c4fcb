"""``sueca-arena serve`` as a club leaves it running: the commands it prints run as printed from
the folder it was started in, also after serve is killed and started again on the same data
folder; and the arena plays on when its Redis and its worker die under it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kits.serve import Serve, alive
from kits.wait import wait_for

pytestmark = pytest.mark.slow


def _shell(line: str, cwd: Path, env: dict[str, str], timeout: float = 60
           ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _connected(serve: Serve) -> set[str]:
    from sueca.referee import control
    try:
        return {b["bot"] for b in control.list_bots(f"127.0.0.1:{serve.port}", timeout=2)
                if b["sessions"] > 0}
    except Exception:
        return set()


def _clean_env() -> dict[str, str]:
    """A user's shell: no SUECA_* settings, and PATH without the venv (as after `make demo`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUECA_")}
    venv = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p and Path(p) != Path(venv))
    return env


def _bot(line: str, club: Path, env: dict[str, str], token: str) -> subprocess.Popen[str]:
    return subprocess.Popen(["bash", "-c", f"exec {line}"], cwd=club,
                            env={**env, "SUECA_TOKEN": token}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)


def _stop(bot: subprocess.Popen[str] | None) -> None:
    if bot is not None:
        os.killpg(bot.pid, signal.SIGTERM)
        bot.wait(30)


def test_printed_commands_run_as_printed_before_and_after_serve_is_killed(
        tmp_path: Path) -> None:
    club = tmp_path / "club"
    club.mkdir()
    env = _clean_env()
    serve = Serve(Path("sueca-data"), tmp_path / "serve1.log", cwd=club, PATH=env["PATH"])
    serve.data = club / "sueca-data"
    serve.wait_up()
    bot = None
    try:
        lines = serve.printed_commands()
        register, run_bot, league = lines[:3]
        assert register.startswith("export SUECA_TOKEN=$(") and "--data sueca-data" in register
        assert " run heuristic " in run_bot and "--data sueca-data" in league
        # each line as printed, run by a shell in the folder serve was started in
        got = _shell(f'{register} && printf %s "$SUECA_TOKEN"', club, env)
        token = got.stdout
        assert got.returncode == 0 and token.startswith("MYBOT."), got
        bot = _bot(run_bot, club, env, token)
        wait_for(lambda: "MYBOT" in _connected(serve), 60, "MYBOT to connect",
                 detail=lambda: f"{bot.poll() if bot else ''} {serve.text()}")
        board = _shell(league, club, env)
        assert board.returncode == 0 and "Leaderboard" in board.stdout, board
        again = _shell(register, club, env)  # a name is registered once: a clear refusal
        assert "MYBOT" in again.stderr and "Traceback" not in again.stderr, again
    finally:
        _stop(bot)
    kids = serve.descendants()
    serve.child.kill()  # SIGKILL serve itself: its children go with it
    wait_for(lambda: not [p for p in kids if alive(p)], 30, "serve's children to stop")

    second = Serve(Path("sueca-data"), tmp_path / "serve2.log", "--port", str(serve.port),
                   cwd=club, PATH=env["PATH"])
    second.data, second.port = club / "sueca-data", serve.port
    second.wait_up()
    bot = None
    try:
        assert second.printed_commands() == lines  # the same commands, word for word
        bot = _bot(run_bot, club, env, token)  # the bot as before, with the token it got
        wait_for(lambda: "MYBOT" in _connected(second), 60, "MYBOT to connect again",
                 detail=second.text)
        board = _shell(league, club, env)
        assert board.returncode == 0 and "Leaderboard" in board.stdout, board
    finally:
        _stop(bot)
        second.stop(signal.SIGTERM, group=False)
    assert second.proc.returncode == 0, second.text()


def _pid_of(serve: Serve, word: str) -> list[int]:
    """serve's descendants whose command line holds ``word``."""
    found = []
    for pid in serve.descendants():
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if word in cmd and "setpriv" not in cmd.split()[0]:
            found.append(pid)
    return found


def test_the_arena_plays_on_when_its_redis_and_its_worker_die(tmp_path: Path) -> None:
    from sueca.arena.keys import Keys
    from sueca.arena.store import Store, connect
    serve = Serve(tmp_path / "data", tmp_path / "serve.log", "--example-bots").wait_up()
    try:
        serve.wait_games(bots=3, games=2)
        store = Store(connect(serve.url()), Keys())
        [redis] = _pid_of(serve, "redis-server")
        workers = _pid_of(serve, "sueca-arena worker")
        assert workers
        os.kill(redis, signal.SIGKILL)
        for pid in workers:  # the worker's main process and its pool, mid-match
            os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()

        def recorded_since() -> int | None:
            try:
                n = store.results_count()
            except Exception:
                return None
            return n if n > before else None

        time.sleep(0.5)  # a sleep on purpose: Redis is down; its restart is serve's to do
        before = wait_for(lambda: _count(store), 30, "Redis to be back", detail=serve.text)
        wait_for(recorded_since, 30 - (time.monotonic() - killed) + 5,
                 "a match recorded after the kill", detail=serve.text)
        assert time.monotonic() - killed < 35
        assert serve.proc.poll() is None  # serve still up
        out = serve.text()
        assert "worker0 exited" in out and "worker0 restarted" in out and "redis restarted" in out
        ids = [e["match_id"] for _, e in store.results()]
        assert len(ids) == len(set(ids)), "a match recorded twice"
        assert "Unrecoverable" not in (tmp_path / "data" / "logs" / "worker0.log").read_text()
    finally:
        serve.stop(signal.SIGTERM, group=False)
    assert serve.proc.returncode == 0, serve.text()


def _count(store: object) -> int | None:
    try:
        return int(store.results_count())  # type: ignore[attr-defined]
    except Exception:
        return None
