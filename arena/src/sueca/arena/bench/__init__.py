"""The benchmarks behind ``sueca-arena bench KIND`` (one module per kind)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def measured(kind: str, measure: Callable[[argparse.Namespace], dict[str, Any]],
             args: argparse.Namespace) -> dict[str, Any] | None:
    """``measure(args)``, or None after reporting its failure: one line on stderr and, so that
    the last line of output stays one JSON object even on failure, ``{"error": ...}``."""
    try:
        return measure(args)
    except Exception as err:
        print(f"bench {kind} failed: {type(err).__name__}: {err}", file=sys.stderr, flush=True)
        print(json.dumps({"error": f"{type(err).__name__}: {err}"}), flush=True)
        return None


def cpu_seconds(*pids: int) -> float:
    """CPU seconds (user + system, every thread) used so far by the processes ``pids``, from
    Linux's /proc (OSError where there is none).

    On a shared machine the wall-clock rate of a benchmark swings with the other load, while
    the CPU one operation costs barely moves: the benches report both (``bench referee``
    compares its CPU per move with ping-pong's CPU per round trip)."""
    ticks = 0
    for pid in pids:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()  # after the command, which may hold spaces
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")
