"""Replay files (one ``sueca-replay/1`` JSON object per line) as a bot author checks them:
:func:`verify_file` re-plays every record through the engine and lists the lines whose recorded
hands, tricks or scores do not follow from their decks and cards. ``sueca-bot replay verify``
and ``sueca-arena replay verify`` both print its report.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sueca.engine import replay as replays

__all__ = ["ReplayFileError", "lines", "verify_file", "NOT_REPLAYS"]

#: formats of the lines of a competition export that are not replays (its header, and a result
#: whose replay the arena no longer keeps): skipped, so that an export verifies as a replay file
NOT_REPLAYS = ("sueca-competition/1", "sueca-result/1")


class ReplayFileError(Exception):
    """A replay file that cannot be read at all (missing, a directory, not UTF-8): the message
    quotes its path."""


def lines(path_text: str) -> Iterator[tuple[int, Any, str | None]]:
    """The file's (line, record, error) triples; a file that cannot be read is a
    :class:`ReplayFileError`."""
    path = Path(path_text)
    if not path.exists():
        raise ReplayFileError(f"no such replay file {path_text!r}")
    if path.is_dir():
        raise ReplayFileError(f"replay file {path_text!r} is a directory")
    try:
        yield from replays.read(path)
    except UnicodeDecodeError:
        raise ReplayFileError(f"replay file {path_text!r} is not UTF-8 text") from None
    except OSError as err:
        raise ReplayFileError(f"cannot read replay file {path_text!r}: {err.strerror}") from None


def verify_file(path_text: str) -> dict[str, Any]:
    """``{"file", "records", "bad": [{"line", "match_id", "problems"}], "ok", "skipped"}`` for a
    file (``skipped``: the lines of :data:`NOT_REPLAYS`)."""
    checked = skipped = 0
    bad = []
    for line, rec, error in lines(path_text):
        if isinstance(rec, dict) and rec.get("format") in NOT_REPLAYS:
            skipped += 1
            continue
        checked += 1
        match_id = rec.get("match_id") if isinstance(rec, dict) else None
        problems = [error] if error is not None else replays.verify(rec)
        if problems:
            bad.append({"line": line, "match_id": match_id, "problems": problems})
    return {"file": path_text, "records": checked, "bad": bad, "ok": not bad, "skipped": skipped}
