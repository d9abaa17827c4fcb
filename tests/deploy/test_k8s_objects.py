"""The Kubernetes manifests as files: well-formed objects, a kustomization that lists every
manifest, a headless referee probed by gRPC health, and a real command in every container."""

from __future__ import annotations

from typing import Any

import pytest
from kits.deploy import (
    IMAGE,
    K8S,
    argv_of,
    check_argv,
    containers,
    flag,
    k8s_docs,
    load_yaml,
    needs_yaml,
    other_image,
    rel,
)


@needs_yaml
def test_k8s_objects_are_well_formed() -> None:
    docs = k8s_docs()
    kinds = {(d["kind"], d["metadata"]["name"]) for _, d in docs}
    for kind, name in [("Deployment", n) for n in ("redis", "referee", "worker", "scheduler",
                                                   "exporter")] + [("Service", "redis"),
                                                                   ("Service", "referee")]:
        assert (kind, name) in kinds, f"no {kind} {name}"
    assert any(k == "Deployment" and n.startswith("bot") for k, n in kinds), "no bot Deployment"
    pods = []
    for path, d in docs:
        assert d.get("apiVersion") and d.get("kind") and d["metadata"].get("name"), rel(path)
        if d["kind"] == "Deployment":
            labels = d["spec"]["template"]["metadata"]["labels"]
            selector = d["spec"]["selector"]["matchLabels"]
            assert selector.items() <= labels.items(), f"{d['metadata']['name']}: selector"
            pods.append(labels)
    for _, d in docs:
        if d["kind"] == "Service":
            sel = d["spec"]["selector"]
            assert any(sel.items() <= p.items() for p in pods), \
                f"Service {d['metadata']['name']} selects no pod"
    scheduler = next(d for _, d in docs if d["metadata"]["name"] == "scheduler"
                     and d["kind"] == "Deployment")
    assert scheduler["spec"]["replicas"] == 1


@needs_yaml
def test_kustomization_lists_every_manifest() -> None:
    kust = load_yaml(K8S / "kustomization.yaml")[0]
    files = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kust["resources"]) == files


@needs_yaml
def test_referee_is_headless_and_probed_by_grpc_health() -> None:
    docs = {(d["kind"], d["metadata"]["name"]): d for _, d in k8s_docs()}
    service = docs[("Service", "referee")]
    assert service["spec"]["clusterIP"] == "None", "the SDK's dns:/// name needs a headless Service"
    ports = {p["name"]: p["port"] for p in service["spec"]["ports"]}
    container = docs[("Deployment", "referee")]["spec"]["template"]["spec"]["containers"][0]
    argv = argv_of(container["args"])
    assert ports["grpc"] == flag(argv, "--port")
    assert ports["metrics"] == flag(argv, "--metrics-port")
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["grpc"]["port"] == flag(argv, "--port"), probe
    bot_args = [argv_of(c["args"]) for _, c in containers() if argv_of(c["args"])[0] == "sueca-bot"]
    # a name the SDK resolves itself: one session per replica the headless Service returns
    assert bot_args and all(a[a.index("--server") + 1] == f"referee:{ports['grpc']}"
                            for a in bot_args)


@needs_yaml
@pytest.mark.parametrize("where,container", containers(), ids=[w for w, _ in containers()])
def test_k8s_container_runs_a_real_command(where: str, container: dict[str, Any]) -> None:
    if other_image(container["image"]):
        return
    assert container["image"].split(":")[0] == IMAGE, f"{where}: image {container['image']}"
    check_argv(argv_of(container.get("command", []) + container["args"]), f"k8s {where}")
