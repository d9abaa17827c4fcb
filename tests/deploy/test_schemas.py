"""The deployment files against the schemas their tools validate them with.

Compose files against the Compose Specification (the schema ``docker compose`` uses, vendored by
check-jsonschema); every object ``kubectl kustomize`` builds against the Kubernetes OpenAPI
schema of an older supported and the newest release (kubernetes-validate, strict: an unknown or
misspelled field is an error, as ``kubectl apply --validate=strict`` makes it). Both libraries
are in the ``test`` extra; without them these tests are skipped with that reason. The
PodMonitor (a CRD of the Prometheus operator) has no schema here; test_alert_rules.py checks
what it selects.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from kits.deploy import DEPLOY, kustomize, needs_yaml

BUILDS = ("base", "overlays/tls", "overlays/ingress", "overlays/sentinel")
OLDEST = "1.29.0"  # PodDisruptionBudget policy/v1, HPA autoscaling/v2, gRPC probes: all GA


def check_jsonschema(*args: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("check_jsonschema", reason="check-jsonschema is not installed: it is in "
                        "the test extra (pip install -e '.[test]')")
    return subprocess.run([sys.executable, "-m", "check_jsonschema", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("name", ["compose.yaml", "compose.tls.yaml"])
def test_compose_file_matches_the_compose_spec(name: str) -> None:
    out = check_jsonschema("--builtin-schema", "vendor.compose-spec", str(DEPLOY / name))
    assert out.returncode == 0, out.stdout + out.stderr


def test_compose_schema_check_can_fail(tmp_path: Path) -> None:
    bad = tmp_path / "compose.yaml"
    bad.write_text((DEPLOY / "compose.yaml").read_text().replace(
        "stop_grace_period: 60s", "stop_grace_periods: 60s"))
    out = check_jsonschema("--builtin-schema", "vendor.compose-spec", str(bad))
    assert out.returncode != 0 and "stop_grace_periods" in out.stdout


@needs_yaml
@pytest.mark.parametrize("build", BUILDS)
def test_k8s_objects_match_the_kubernetes_schema(build: str) -> None:
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is not installed: "
                             "it is in the test extra (pip install -e '.[test]')")
    built = kustomize(DEPLOY / "k8s" / build)
    errors = []
    for version in (OLDEST, kv.latest_version()):
        for obj in built:
            try:
                kv.validate(obj, version, strict=True)
            except kv.ValidationError as err:
                errors.append(f"{obj['kind']} {obj['metadata']['name']} (Kubernetes {version}): "
                              f"{str(err).splitlines()[0]}")
    assert not errors, "\n".join(errors)


def test_k8s_schema_check_can_fail() -> None:
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is not installed")
    bad = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "x"},
           "spec": {"minAvailabe": 1, "selector": {"matchLabels": {"a": "b"}}}}
    with pytest.raises(kv.ValidationError, match="minAvailabe"):
        kv.validate(bad, OLDEST, strict=True)
