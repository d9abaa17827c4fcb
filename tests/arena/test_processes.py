""":meth:`sueca.arena.processes.Supervisor.revive`: a child that exits is started again after a
backoff and each restart is said; one that keeps dying at start is given up on, with its error."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from sueca.arena import processes
from sueca.arena.processes import ChildExited, Supervisor


def _revive_until(sup: Supervisor, said: list[str], stop: object, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sup.revive(said.append)
        if callable(stop) and stop():
            return
        time.sleep(0.02)
    raise AssertionError(f"not done in {seconds}s: {said}")


def test_a_child_that_dies_is_started_again_and_one_that_keeps_dying_is_given_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "BACKOFF_FIRST", 0.05)
    said: list[str] = []
    sup = Supervisor(tmp_path)
    try:
        # dies at once, every time, saying why: restarted 4 times, then given up
        sup.start("broken", [sys.executable, "-c",
                             "import sys; print('error: no such module: \\x1b[31mx'); "
                             "sys.exit(3)"])
        with pytest.raises(ChildExited) as got:
            _revive_until(sup, said, stop=None)
        message = str(got.value)
        assert "broken exited with code 3" in message and "5 times in a row" in message
        assert "\\x1b[31m" in message and "\x1b" not in message  # its line, escaped
        assert sum("broken restarted" in line for line in said) == processes.QUICK_DEATHS - 1
        waits = [line.split("restarting it in ")[1].split("s ")[0] for line in said
                 if "restarting it in" in line]
        assert waits == ["0.05", "0.1", "0.2", "0.4"]  # doubling
    finally:
        sup.stop(grace=2)


def test_a_child_that_ran_a_while_starts_over_with_the_first_wait(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "BACKOFF_FIRST", 0.05)
    monkeypatch.setattr(processes, "QUICK_SECONDS", 0.3)
    said: list[str] = []
    sup = Supervisor(tmp_path)
    try:
        sup.start("steady", [sys.executable, "-c", "import time; time.sleep(0.6)"])
        _revive_until(sup, said, stop=lambda: sum("restarted" in s for s in said) >= 3)
        assert all("in 0.05s" in s for s in said if "restarting" in s), said  # never doubled
        assert sup["steady"].alive() or "steady" in sup.due
    finally:
        sup.stop(grace=2)
