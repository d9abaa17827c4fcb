"""The benchmarks behind ``sueca-arena bench KIND`` (one module per kind)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
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
