"""Fixtures for the web tests: one league seeded with real recorded matches per module, and the
real app over it (Starlette's TestClient speaks HTTP to the ASGI app in-process)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kits.seed import seed_league


@pytest.fixture(scope="module")
def seeded(redis_url: str) -> dict[str, Any]:
    from sueca.arena.keys import Keys
    from sueca.arena.store import Store, connect
    store = Store(connect(redis_url), Keys(f"w{uuid.uuid4().hex[:8]}:"))
    return {"store": store, **seed_league(store)}


@pytest.fixture(scope="module")
def client(seeded: dict[str, Any]) -> Iterator[Any]:
    from starlette.testclient import TestClient

    from sueca.arena.web.app import create_app
    with TestClient(create_app(seeded["store"]), raise_server_exceptions=False) as c:
        yield c
