"""The deployment files parse: the expected files are there, every YAML and JSON file under
deploy/ loads. YAML needs PyYAML (the ``test`` extra): without it the YAML tests are *skipped
with a reason* that names the missing dependency."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kits.deploy import (
    DEPLOY,
    K8S,
    K8S_TLS,
    load_yaml,
    needs_yaml,
    rel,
)


def yaml_files() -> list[Path]:
    return sorted([*DEPLOY.rglob("*.yaml"), *DEPLOY.rglob("*.yml")])


def json_files() -> list[Path]:
    return sorted(DEPLOY.rglob("*.json"))



def test_deploy_has_the_expected_files() -> None:
    for name in ("Dockerfile", "compose.yaml", "prometheus/prometheus.yml",
                 "prometheus/alerts.yml", "grafana/dashboard.json"):
        assert (DEPLOY / name).is_file(), f"deploy/{name} is missing"
    assert sorted(K8S.glob("*.yaml")), "deploy/k8s/base has no manifests"
    assert (K8S_TLS / "kustomization.yaml").is_file(), "deploy/k8s/overlays/tls is missing"


@needs_yaml
@pytest.mark.parametrize("path", yaml_files(), ids=rel)
def test_yaml_file_parses(path: Path) -> None:
    docs = load_yaml(path)
    assert docs, f"{rel(path)} holds no YAML document"


@pytest.mark.parametrize("path", json_files(), ids=rel)
def test_json_file_parses(path: Path) -> None:
    json.loads(path.read_text())
