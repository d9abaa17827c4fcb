"""Which processes one run of a command started: a mark in its environment, which every child
inherits. Other jobs on this machine, and other tests of this suite running beside it, start
referees, bots and proxies too; the mark tells them apart without guessing from command lines."""

from __future__ import annotations

import uuid
from pathlib import Path

MARK = "SUECA_TEST_RUN"


def new_mark() -> dict[str, str]:
    """An environment entry to give one run."""
    return {MARK: uuid.uuid4().hex}


def marked(mark: dict[str, str]) -> set[int]:
    """Live processes whose environment carries ``mark`` (from :func:`new_mark`)."""
    needle = f"{MARK}={mark[MARK]}".encode()
    found = set()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if needle in (proc / "environ").read_bytes().split(b"\0"):
                found.add(int(proc.name))
        except OSError:
            continue
    return found
