"""Connection churn against a referee that also plays honest matches (:mod:`kits.hostile`):
an authenticated bot that connects, is welcomed and hangs up, on a new connection each time,
meets the hello limit, and the honest matches keep at least 0.8x their speed."""

from __future__ import annotations

import pytest
from kits.hostile import contained

pytestmark = pytest.mark.slow


def test_connection_churn_meets_its_limit() -> None:
    hits = contained(["churn"])
    assert hits["churn"].get("hellos", 0) >= 1, hits
