"""``kits.wait.wait_for``: a wait that times out says what its condition gave last, so an
assertion inside the condition is not lost behind a bare timeout."""

from __future__ import annotations

import pytest
from kits.wait import WaitTimedOut, wait_for


def test_a_timeout_quotes_the_last_failed_assertion() -> None:
    seen = {"calls": 0}

    def cond() -> bool:
        seen["calls"] += 1
        assert seen["calls"] < 0, f"call {seen['calls']}: still not there"
        return True

    with pytest.raises(WaitTimedOut) as caught:
        wait_for(cond, 0.2, "the thing", interval=0.01)
    message = str(caught.value)
    assert message.startswith("timed out after 0.2 s waiting for the thing; "), message
    assert f"AssertionError: call {seen['calls']}: still not there" in message, message


def test_a_timeout_quotes_the_last_false_value() -> None:
    with pytest.raises(WaitTimedOut, match=r"waiting for a list; its last value: \[\]$"):
        wait_for(list, 0.1, "a list", interval=0.01)


def test_a_true_value_is_returned() -> None:
    assert wait_for(lambda: [1], 1, "a list") == [1]
