"""Flooding bots against a referee that also plays honest matches (:mod:`kits.hostile`): a bot
that never reads its stream while the referee's fault messages pile up is cut off by its
outgoing queue's bound, and a one-action message flood is throttled on read; neither costs the
honest matches more than a fifth of their speed."""

from __future__ import annotations

import pytest
from kits.hostile import contained

pytestmark = pytest.mark.slow


def test_unread_and_message_floods_meet_their_limits() -> None:
    hits = contained(["unread", "rate"])
    assert hits["unread"].get("out_queue", 0) >= 1, hits
    assert hits["rate"].get("read_throttle", 0) >= 1, hits
