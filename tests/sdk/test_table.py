"""The SDK's plain output: a text table, and a progress bar on stderr only when it is a terminal
(the SDK has no rich; sueca-arena prints self-play and replay verify through the same code)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from sueca.sdk.table import progress, table


def test_table_pads_columns_and_aligns_numbers_right() -> None:
    text = table("title", ["bot", "won", "note"], [["heuristic", 18, "a\nsecond line"],
                                                  ["random", 2, "b"]], right=["won"])
    assert text.splitlines() == [
        "title",
        "bot        won  note",
        "---------  ---  -----------",
        "heuristic   18  a",
        "                second line",
        "random       2  b",
    ]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_on_a_terminal_and_erases_itself() -> None:
    out = Terminal()
    with progress(4, "selfplay", stream=out, every=0) as advance:
        for _ in range(4):
            advance(1)
    text = out.getvalue()
    assert "selfplay [" in text and "4/4" in text and "2/4" in text
    assert text.endswith("\r\x1b[K")


def test_progress_is_silent_when_not_a_terminal() -> None:
    out = io.StringIO()
    with progress(4, "selfplay", stream=out) as advance:
        advance(4)
    assert out.getvalue() == ""


def test_selfplay_shows_a_bar_on_a_real_terminal(tmp_path: Path) -> None:
    """stderr on a pseudo-terminal: the bar is drawn there, and stdout keeps only the table."""
    master, slave = os.openpty()
    try:
        p = subprocess.run([str(Path(sys.executable).parent / "sueca-bot"), "selfplay", "--bots",
                            "heuristic,random", "--matches", "30"], stdout=subprocess.PIPE,
                           stderr=slave, text=True, timeout=60, cwd=tmp_path)
        os.close(slave)
        slave = -1
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    assert p.returncode == 0
    assert b"selfplay [" in seen and b"30/30" in seen
    assert "selfplay [" not in p.stdout and "95% interval" in p.stdout
