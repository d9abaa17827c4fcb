"""``sueca-arena wait``: a script's way to let a background server come up (the whole loop of
docs/bot-authors.md uses it), as the installed command."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from sueca.arena.redisproc import free_port

SUECA_ARENA = str(Path(sys.executable).parent / "sueca-arena")


def _wait(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SUECA_ARENA, "wait", *args], capture_output=True, text=True,
                          timeout=60)


def test_waits_for_a_server_that_comes_up_late_and_names_one_that_never_does() -> None:
    port = free_port()
    server = socket.socket()

    def listen_later() -> None:
        time.sleep(1.0)  # on purpose: the server comes up late, which is under test
        server.bind(("127.0.0.1", port))
        server.listen()

    late = threading.Thread(target=listen_later)
    late.start()
    try:
        started = time.monotonic()
        out = _wait(f"redis://127.0.0.1:{port}/0", "--timeout", "20")
        assert out.returncode == 0 and out.stderr == "", out.stderr
        assert time.monotonic() - started >= 0.9  # it really waited for the listener
    finally:
        late.join()
        server.close()
    gone = free_port()
    out = _wait(f"127.0.0.1:{gone}", "--timeout", "0.5")
    assert out.returncode == 1
    assert out.stderr.startswith(f"127.0.0.1:{gone} did not accept a connection within 0.5s")


def test_a_bad_address_is_a_one_line_error() -> None:
    out = _wait("no-port-here")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert out.stderr.startswith("error: bad address 'no-port-here': give host:port")
