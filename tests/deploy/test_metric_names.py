"""Metric names in the deployment files: alert rules, their tests and the dashboard may only use
the metric names and labels the code exports (collected in conftest.py), the dashboard shows
what an operator needs and agrees with its datasource, and the alerts cover faults, results and
referees."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from kits.deploy import (
    DEPLOY,
    load_yaml,
    needs_yaml,
    yaml,
)

TARGET_LABELS = {"job", "instance", "namespace"}  # added by the scrape configs to every series
METRIC_WORD = re.compile(r"\bsueca_[a-z0-9_]+\b")
SELECTOR = re.compile(r"\b(sueca_[a-z0-9_]+)\{([^}]*)\}")



def dashboard() -> dict[str, Any]:
    return json.loads((DEPLOY / "grafana" / "dashboard.json").read_text())


def dashboard_exprs() -> list[str]:
    def panels(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for p in items:
            yield p
            yield from panels(p.get("panels", []))

    exprs = [t["expr"] for p in panels(dashboard()["panels"]) for t in p.get("targets", [])]
    for var in dashboard().get("templating", {}).get("list", []):
        query = var.get("query")
        exprs.append(query["query"] if isinstance(query, dict) else str(query or ""))
    return exprs


@pytest.mark.parametrize("name", ["prometheus/alerts.yml", "prometheus/alerts.test.yml",
                                  "grafana/dashboard.json"])
def test_only_exported_metrics_are_used(name: str, exported_metrics: dict[str, set[str]]) -> None:
    """Every series a rule, a rule test or a panel names is one the code serves (conftest.py
    collects them from the referee's, the workers' and the exporter's own metric objects), with
    only the labels it has: a renamed metric or label breaks here, not silently in production."""
    text = (DEPLOY / name).read_text()
    used = set(METRIC_WORD.findall(text))
    assert used, f"deploy/{name} uses no sueca_ metric"
    unknown = sorted(n for n in used if n not in exported_metrics)
    assert not unknown, f"deploy/{name} uses metrics the code does not export: {unknown}"
    for metric, body in SELECTOR.findall(text):
        labels = {m.group(1) for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)",
                                                  body)}
        allowed = exported_metrics[metric] | TARGET_LABELS | (
            {"le"} if metric.endswith("_bucket") else set())
        assert labels <= allowed, (f"deploy/{name}: {metric} has no label(s) "
                                   f"{sorted(labels - allowed)}; it has "
                                   f"{sorted(exported_metrics[metric])}")


def test_dashboard_shows_what_operators_need() -> None:
    exprs = "\n".join(dashboard_exprs())
    assert "sueca_referee_moves_total" in exprs  # throughput
    assert "histogram_quantile(0.5," in exprs and "histogram_quantile(0.99," in exprs
    assert "sueca_referee_move_rtt_seconds_bucket" in exprs
    assert re.search(r"by \(class, kind\) \(rate\(sueca_referee_faults_total", exprs)
    assert "sueca_worker_matches_failed_total" in exprs
    assert re.search(r"by \(end\) \(rate\(sueca_referee_matches_total", exprs)
    assert re.search(r"by \(end\) \(rate\(sueca_worker_matches_recorded_total", exprs)
    assert "sueca_rating" in exprs
    for p in dashboard()["panels"]:
        for t in p.get("targets", []):
            assert t.get("refId") and t.get("expr"), f"panel {p['title']!r}: target without expr"


def test_dashboard_and_datasource_agree() -> None:
    uids = {t["datasource"]["uid"] for p in dashboard()["panels"] for t in p.get("targets", [])}
    if yaml is None:
        text = (DEPLOY / "grafana/provisioning/datasources/prometheus.yml").read_text()
        assert all(f"uid: {u}" in text for u in uids)
        return
    ds = load_yaml(DEPLOY / "grafana/provisioning/datasources/prometheus.yml")[0]
    assert uids <= {d["uid"] for d in ds["datasources"]}


@needs_yaml
def test_alerts_cover_faults_results_and_referees() -> None:
    rules = [r for g in load_yaml(DEPLOY / "prometheus" / "alerts.yml")[0]["groups"]
             for r in g["rules"]]
    by_name = {r["alert"]: r for r in rules}
    assert len(by_name) == len(rules), "two alerts share a name"
    for rule in rules:
        assert rule["expr"].strip() and rule["labels"]["severity"] in {"warning", "critical"}
        assert rule["annotations"]["summary"]
    exprs = {name: r["expr"] for name, r in by_name.items()}
    assert any("sueca_referee_faults_total" in e for e in exprs.values()), "no fault-rate alert"
    assert any("sueca_worker_matches_recorded_total" in e for e in exprs.values()), \
        "no 'no matches recorded' alert"
    assert any('up{job="referee"}' in e for e in exprs.values()), "no referee-down alert"
