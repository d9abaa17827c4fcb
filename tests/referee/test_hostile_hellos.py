"""Bots that never say hello, or say a bad one, against a referee that also plays honest
matches (:mod:`kits.hostile`): hello-less streams meet the per-connection and per-address
bounds and the hello deadline, oversized names and wrong tokens are refused (the 60 KB name and
a forged log line never reach the log); the honest matches keep at least 0.8x their speed."""

from __future__ import annotations

import pytest
from kits.hostile import contained

pytestmark = pytest.mark.slow


def test_hello_less_streams_and_bad_hellos_meet_their_limits() -> None:
    hits = contained(["hello_less", "bad_hello"])
    assert hits["hello_less"].get("streams_per_connection", 0) + \
        hits["hello_less"].get("connections_per_address", 0) >= 1, hits
    assert hits["hello_less"].get("hello_deadline", 0) >= 1, hits
    assert hits["bad_hello"].get("refusals", 0) >= 1, hits
