"""Check results and how they are shown: one :class:`Check` per check, a table that fits 80
columns, and one JSON object.

Everything a bot (or a referee under test) sent reaches a reason only through :func:`shown`:
``repr``-escaped and cut, so a hostile peer can neither forge a line of the report nor make it
huge.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Literal

__all__ = ["Check", "Status", "Checks", "shown", "exit_code", "to_json", "table_rows"]

SHOWN_CHARS = 64     # characters of peer-sent text quoted in a reason
REASON_CHARS = 300   # a reason is one line of at most this many characters

Status = Literal["pass", "fail", "skip"]


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``value`` quoted for a report line: escaped by ``repr`` (no newline or control
    character survives) and cut to ``limit`` characters, saying how long it was."""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        return f"{text[:limit]!r}... ({len(text)} chars)"
    return repr(text)


@dataclasses.dataclass
class Check:
    """One check: its name, what it verifies, its status and, unless it passed, why."""

    name: str
    what: str
    status: Status = "skip"
    reason: str = "not run"
    judged: bool = False  # a verdict or a skip was given: the end-of-run catch-all keeps it

    def passed(self, reason: str = "") -> None:
        if self.status != "fail":
            self.status, self.reason, self.judged = "pass", reason[:REASON_CHARS], True

    def failed(self, reason: str) -> None:
        """The first failure is kept: it is the one that explains the rest."""
        if self.status != "fail":
            self.status, self.reason, self.judged = "fail", reason[:REASON_CHARS], True

    def skipped(self, reason: str) -> None:
        """The first skip's reason is kept: it says why the check could not be judged, which
        a later catch-all ("not reached") would only blur. A later pass or failure wins."""
        if not self.judged:
            self.status, self.reason, self.judged = "skip", reason[:REASON_CHARS], True


class Checks:
    """The checks of one run, in the order they are reported."""

    def __init__(self, checks: Iterable[tuple[str, str]]) -> None:
        self.by_name = {name: Check(name, what) for name, what in checks}

    def __getitem__(self, name: str) -> Check:
        return self.by_name[name]

    def __iter__(self) -> Iterator[Check]:
        return iter(self.by_name.values())

    def all(self) -> list[Check]:
        return list(self.by_name.values())


def exit_code(checks: Iterable[Check]) -> int:
    """0 when no check failed (skipped ones do not count), else 1."""
    return 1 if any(c.status == "fail" for c in checks) else 0


def to_json(checks: Iterable[Check], **extra: object) -> dict[str, object]:
    items = [{"name": c.name, "status": c.status, "reason": c.reason, "what": c.what}
             for c in checks]
    failed = [i["name"] for i in items if i["status"] == "fail"]
    return {**extra, "ok": not failed, "failed": failed, "checks": items}


def table_rows(checks: Iterable[Check]) -> list[tuple[str, str, str]]:
    return [(c.name, c.status.upper() if c.status == "fail" else c.status, c.reason or "")
            for c in checks]
