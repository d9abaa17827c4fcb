"""Stopping ``sueca-bot run``: Ctrl-C when no referee answers is quick and quiet."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kits.wait import wait_for

SUECA_BOT = str(Path(sys.executable).parent / "sueca-bot")


def _silent_listener() -> socket.socket:
    """A TCP port that accepts connections and never speaks: a referee that hangs, so the
    bot's stream exists but no referee ever welcomes it."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    return s


def _start_bot(port: int, stderr: Any = subprocess.PIPE) -> subprocess.Popen[str]:
    return subprocess.Popen([SUECA_BOT, "run", "random", "--server", f"127.0.0.1:{port}"],
                            stderr=stderr, stdout=subprocess.DEVNULL, text=True,
                            env={**os.environ, "SUECA_TOKEN": "alice.secret"})


def _await_stream(listener: socket.socket) -> socket.socket:
    """Accept the bot's connection and wait for its first bytes (HTTP/2's preface): the bot is
    up and its stream is waiting for a welcome. The connection is returned to be kept open and
    silent (accepting it changes nothing the bot can see)."""
    listener.settimeout(30)
    conn, _ = listener.accept()
    conn.settimeout(1)
    wait_for(lambda: conn.recv(64), 30, "the bot's first bytes on its connection")
    return conn


def test_ctrl_c_with_no_referee_exits_at_once_and_cleanly() -> None:
    """No waiting out the whole drain timeout (60 s) for games that do not exist: a drain
    message queued on a stream no referee has welcomed would never be sent."""
    with _silent_listener() as listener:
        bot = _start_bot(listener.getsockname()[1])
        try:
            conn = _await_stream(listener)  # waiting for a welcome that never comes
            t0 = time.monotonic()
            bot.send_signal(signal.SIGINT)
            err = bot.communicate(timeout=20)[1]
            took = time.monotonic() - t0
        finally:
            bot.kill()
    conn.close()
    assert bot.returncode == 0, err
    assert took < 2.0, f"took {took:.1f}s to stop"
    assert "Traceback" not in err and "CancelledError" not in err, err


def test_a_second_ctrl_c_exits_without_a_traceback() -> None:
    with _silent_listener() as listener:
        bot = _start_bot(listener.getsockname()[1])
        try:
            conn = _await_stream(listener)
            bot.send_signal(signal.SIGINT)
            bot.send_signal(signal.SIGINT)
            err = bot.communicate(timeout=20)[1]
        finally:
            bot.kill()
        conn.close()
    assert bot.returncode in (0, 130), err  # the drain may finish before the second signal
    assert "Traceback" not in err and "CancelledError" not in err, err


def test_a_referee_that_never_answers_the_hello_is_dropped_and_retried(tmp_path: Path) -> None:
    """A port that accepts and never answers (a hung referee) must not hold the bot for ever:
    the hello has WELCOME_SECONDS to be answered, then the stream is dropped and the bot connects
    again with its usual back-off."""
    from sueca.sdk.client import WELCOME_SECONDS
    said = tmp_path / "bot.err"
    with _silent_listener() as listener, open(said, "w") as sink:
        bot = _start_bot(listener.getsockname()[1], stderr=sink)
        try:
            wait_for(lambda: "retrying in" in said.read_text(), WELCOME_SECONDS + 30,
                     "the stream dropped and a retry announced", detail=said.read_text)
            assert bot.poll() is None  # still serving: it retries
            bot.send_signal(signal.SIGINT)
            bot.wait(20)
        finally:
            bot.kill()
    err = said.read_text()
    assert f"no answer to the hello within {WELCOME_SECONDS:.0f}s" in err, err
    assert "Traceback" not in err, err
