"""The suite's one way to wait: poll a condition until it holds, instead of sleeping a fixed time.

A fixed ``time.sleep`` is either too short on a loaded 2-core machine (a flaky test) or too long
everywhere else (a slow suite); polling ends as soon as the thing happened and fails with what
was awaited, plus whatever ``detail`` adds (a log tail), when it never does.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

__all__ = ["WaitTimedOut", "wait_for"]


class WaitTimedOut(AssertionError):
    """The awaited condition did not hold in time; the message names it."""


def wait_for(cond: Callable[[], T], timeout: float = 20.0, what: str = "condition",
             interval: float = 0.05, detail: Callable[[], str] | None = None) -> T:
    """Call ``cond`` every ``interval`` seconds until it returns something true, and return that.

    An exception from ``cond`` counts as "not yet" (a server still starting, Redis away for a
    moment). After ``timeout`` seconds raise :class:`WaitTimedOut` naming ``what`` and what the
    last call gave: its exception (an assertion inside ``cond`` says what did not hold) or its
    false value."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = cond()
            last = f"its last value: {value!r}"
        except Exception as err:
            value = None  # type: ignore[assignment]
            last = f"its last call raised {type(err).__name__}: {err}"
        if value:
            return value
        if time.monotonic() > deadline:
            extra = f"\n{detail()}" if detail is not None else ""
            raise WaitTimedOut(f"timed out after {timeout:g} s waiting for {what}; "
                               f"{last[:2000]}{extra}")
        time.sleep(interval)
