"""The pods as a cluster admits and runs them, read from what ``kubectl kustomize`` builds.

Pod Security "restricted" (the profile's checks, as the API server applies them), read-only root
file systems, disruption budgets for referees and workers, an autoscaler for workers, and probes
for every long-running role.
"""

from __future__ import annotations

from typing import Any

import pytest
from kits.deploy import DEPLOY, argv_of, flag, kustomize, needs_yaml

BUILDS = {name: DEPLOY / "k8s" / name for name in ("base", "overlays/tls", "overlays/ingress", "overlays/sentinel")}
POD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job")
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                      "persistentVolumeClaim", "projected", "secret"}
# sueca-bot serves nothing a probe could ask yet: a dead bot is restarted by the kubelet all the
# same. (A health endpoint in sueca-bot would let it be probed.)
UNPROBED = {"bot"}


def pods(build: str) -> list[tuple[str, dict[str, Any]]]:
    return [(d["metadata"]["name"], d["spec"]["template"]) for d in kustomize(BUILDS[build])
            if d["kind"] in POD_KINDS]


def role(name: str, template: dict[str, Any]) -> str:
    return template["metadata"]["labels"].get("app.kubernetes.io/component", name)


@needs_yaml
@pytest.mark.parametrize("build", list(BUILDS))
def test_pods_pass_pod_security_restricted(build: str) -> None:
    for name, template in pods(build):
        spec = template["spec"]
        pod_sc = spec.get("securityContext", {})
        where = f"{build} {name}"
        for host in ("hostNetwork", "hostPID", "hostIPC"):
            assert not spec.get(host), f"{where}: {host}"
        for volume in spec.get("volumes", []):
            kinds = set(volume) - {"name"}
            assert kinds <= RESTRICTED_VOLUMES, f"{where}: volume {volume['name']} is {kinds}"
        for c in spec.get("initContainers", []) + spec["containers"]:
            sc = c.get("securityContext", {})
            cwhere = f"{where}/{c['name']}"
            assert not sc.get("privileged"), f"{cwhere}: privileged"
            assert sc.get("allowPrivilegeEscalation") is False, \
                f"{cwhere}: allowPrivilegeEscalation must be false"
            caps = sc.get("capabilities", {})
            assert "ALL" in caps.get("drop", []), f"{cwhere}: capabilities not dropped (drop: [ALL])"
            assert set(caps.get("add", [])) <= {"NET_BIND_SERVICE"}, f"{cwhere}: adds {caps['add']}"
            non_root = sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot"))
            assert non_root is True, f"{cwhere}: runAsNonRoot is not set"
            uid = sc.get("runAsUser", pod_sc.get("runAsUser"))
            assert uid is not None and uid != 0, f"{cwhere}: runs as uid {uid}"
            seccomp = sc.get("seccompProfile", pod_sc.get("seccompProfile", {}))
            assert seccomp.get("type") in ("RuntimeDefault", "Localhost"), \
                f"{cwhere}: no seccomp profile (seccompProfile: {{type: RuntimeDefault}})"
            assert not any("hostPort" in p for p in c.get("ports", [])), f"{cwhere}: hostPort"


@needs_yaml
def test_root_file_systems_are_read_only_with_a_writable_tmp() -> None:
    for name, template in pods("base"):
        spec = template["spec"]
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        for c in spec["containers"]:
            where = f"{name}/{c['name']}"
            assert c.get("securityContext", {}).get("readOnlyRootFilesystem") is True, \
                f"{where}: the root file system is writable"
            if c["image"].startswith("sueca-arena"):
                tmp = [m for m in c.get("volumeMounts", []) if m["mountPath"] == "/tmp"]
                assert tmp and "emptyDir" in volumes[tmp[0]["name"]], \
                    f"{where}: no writable /tmp (tempfile, Celery and the metrics files use it)"


def budgets(built: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Deployment name -> the PodDisruptionBudget that selects its pods."""
    out = {}
    templates = {d["metadata"]["name"]: d for d in built if d["kind"] == "Deployment"}
    for pdb in (d for d in built if d["kind"] == "PodDisruptionBudget"):
        match = pdb["spec"]["selector"]["matchLabels"]
        for name, d in templates.items():
            if match.items() <= d["spec"]["template"]["metadata"]["labels"].items():
                assert name not in out, f"two budgets select {name}"
                out[name] = pdb
    return out


@needs_yaml
def test_referees_and_workers_have_disruption_budgets() -> None:
    built = kustomize(BUILDS["base"])
    found = budgets(built)
    deployments = {d["metadata"]["name"]: d for d in built if d["kind"] == "Deployment"}
    hpa = {d["spec"]["scaleTargetRef"]["name"]: d for d in built
           if d["kind"] == "HorizontalPodAutoscaler"}
    for name in ("referee", "worker"):
        assert name in found, f"no PodDisruptionBudget selects the {name} pods"
        spec = found[name]["spec"]
        replicas = deployments[name]["spec"].get("replicas") or hpa[name]["spec"]["minReplicas"]
        if "minAvailable" in spec:
            assert 1 <= spec["minAvailable"] < replicas, \
                f"{name}: minAvailable {spec['minAvailable']} of {replicas} blocks every drain"
        else:
            assert spec["maxUnavailable"] >= 1 and spec["maxUnavailable"] < replicas
    assert "scheduler" not in found or found["scheduler"]["spec"].get("maxUnavailable", 1) >= 1


@needs_yaml
def test_workers_autoscale_on_cpu() -> None:
    built = kustomize(BUILDS["base"])
    hpas = [d for d in built if d["kind"] == "HorizontalPodAutoscaler"]
    assert [h["spec"]["scaleTargetRef"]["name"] for h in hpas] == ["worker"]
    spec = hpas[0]["spec"]
    assert spec["scaleTargetRef"]["kind"] == "Deployment"
    assert 1 <= spec["minReplicas"] < spec["maxReplicas"]
    worker = next(d for d in built if d["kind"] == "Deployment" and d["metadata"]["name"] == "worker")
    assert "replicas" not in worker["spec"], \
        "the worker Deployment sets replicas: every `kubectl apply` would undo the autoscaler"
    resources = {m["resource"]["name"] for m in spec["metrics"] if m["type"] == "Resource"}
    assert "cpu" in resources
    for c in worker["spec"]["template"]["spec"]["containers"]:
        assert c["resources"]["requests"]["cpu"], "CPU utilization needs a CPU request"


@needs_yaml
@pytest.mark.parametrize("build", list(BUILDS))
def test_every_long_running_role_is_probed(build: str) -> None:
    probed = set()
    for name, template in pods(build):
        r = role(name, template)
        for c in template["spec"]["containers"]:
            where = f"{build} {name}/{c['name']}"
            if r in UNPROBED:
                continue
            assert "readinessProbe" in c and "livenessProbe" in c, \
                f"{where}: a long-running role without readiness and liveness probes"
            probed.add(r)
            argv = argv_of(c.get("args", []))
            if "--metrics-port" in argv:
                port = flag(argv, "--metrics-port")
                names = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
                for probe in ("readinessProbe", "livenessProbe"):
                    http = c[probe].get("httpGet")
                    if http:
                        assert names.get(http["port"], http["port"]) == port, \
                            f"{where} {probe} asks port {http['port']}, not {port}"
    assert {"referee", "worker", "exporter", "scheduler", "store"} <= probed, sorted(probed)
