"""What each deployment exposes, read from the rendered objects.

Bots outside the deployment must reach the referees' gRPC port, and nothing else may be
reachable from outside by default: Redis (whoever writes to it can collect the operator token),
the metrics ports, Prometheus (no authentication; its lifecycle API can stop it) and Grafana
(no anonymous admin, no default password). Compose is read as the YAML the user runs (with and
without the TLS override); Kubernetes as ``kubectl kustomize`` builds every overlay. The operator API (MatchService) has
its own port on the referees (``--operator-port``), which nothing publishes.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from kits.deploy import (
    DEPLOY,
    argv_of,
    compose,
    compose_merged,
    flag,
    kustomize,
    needs_yaml,
)

K8S_BUILDS = {name: DEPLOY / "k8s" / name for name in ("base", "overlays/tls", "overlays/ingress", "overlays/sentinel")}
LOOPBACK = {"127.0.0.1", "::1", "localhost"}
# Published on the host's loopback at most: reachable by whoever is on the host, not by bots
LOOPBACK_ONLY = {"prometheus", "grafana"}
PUBLIC_GRPC_PATHS = {"/sueca.v1.BotService/Connect"}  # what a bot needs, and nothing more


def published(service: dict[str, Any]) -> list[tuple[str, str, int]]:
    """(host ip, host port or range, container port) for every port a compose service
    publishes, in the short ("[IP:]HOST[-HOST2]:CONTAINER[/PROTO]") or long syntax."""
    out = []
    for entry in service.get("ports", []):
        if isinstance(entry, dict):
            out.append((str(entry.get("host_ip", "")), str(entry.get("published", "")),
                        int(entry["target"])))
            continue
        text = str(entry).split("/")[0]
        match = re.fullmatch(r"(?:(\[[^\]]+\]|[^:]+):)?(?:([\d-]+):)?(\d+)", text)
        assert match, f"unreadable port mapping {entry!r}"
        ip, host, container = match.groups()
        if ip is not None and host is None:  # "HOST:CONTAINER": the first part is the port
            ip, host = None, ip
        out.append(((ip or "").strip("[]"), host or "", int(container)))
    return out


def host_port_count(host: str) -> int:
    if "-" in host:
        low, high = host.split("-")
        return int(high) - int(low) + 1
    return 1


@needs_yaml
@pytest.mark.parametrize("services", [lambda: compose()["services"], compose_merged],
                         ids=["compose", "compose+tls"])
def test_compose_publishes_the_referees_grpc_port_and_nothing_else(services: Any) -> None:
    services = services()
    referee = services["referee"]
    grpc_port = flag(argv_of(referee["command"]), "--port")
    ports = published(referee)
    assert ports, "the referee publishes no port: bots outside the host cannot connect"
    for ip, host, container in ports:
        assert container == grpc_port, \
            f"the referee publishes container port {container}, not only its gRPC port {grpc_port}"
        assert ip in ("", "0.0.0.0", "::"), f"the referee's gRPC port is bound to {ip} only"
        replicas = referee.get("deploy", {}).get("replicas", 1)
        assert host and host_port_count(host) >= replicas, \
            f"{replicas} replicas cannot share host port(s) {host!r}: one per replica"
    for name, s in services.items():
        assert s.get("network_mode") != "host", f"compose service {name} uses the host network"
        if name == "referee":
            continue
        for ip, _host, container in published(s):
            assert name in LOOPBACK_ONLY, \
                f"compose service {name} publishes port {container} on {ip or 'every interface'}"
            assert ip in LOOPBACK, \
                f"compose service {name} publishes {container} on {ip or 'every interface'}, " \
                "not on the host's loopback only"


@needs_yaml
@pytest.mark.parametrize("services", [lambda: compose()["services"], compose_merged],
                         ids=["compose", "compose+tls"])
def test_compose_operator_port_is_published_nowhere(services: Any) -> None:
    services = services()
    argv = argv_of(services["referee"]["command"])
    operator_port, grpc_port = flag(argv, "--operator-port"), flag(argv, "--port")
    assert operator_port not in (0, grpc_port), \
        "the referee's operator API shares the bots' port: it must have its own"
    assert "--advertise" not in argv, "workers must find the operator address in Redis " \
        "(the default --advertise with --operator-port), not a public one"
    for name, s in services.items():
        for _ip, _host, container in published(s):
            assert container != operator_port, \
                f"compose service {name} publishes the operator port {operator_port}"
        for var in ("SUECA_REFEREES",):  # operators dial heartbeats: no public port pinned
            assert str(grpc_port) not in str((s.get("environment") or {}).get(var, "")), name


@needs_yaml
def test_compose_prometheus_has_no_lifecycle_or_admin_api() -> None:
    command = compose()["services"]["prometheus"].get("command", [])
    for flag_ in ("--web.enable-lifecycle", "--web.enable-admin-api"):
        assert flag_ not in command, f"prometheus runs with {flag_}: anyone reaching it can " \
            "shut it down or delete its data"


@needs_yaml
def test_compose_grafana_has_no_anonymous_access_or_default_password() -> None:
    env = compose()["services"]["grafana"].get("environment") or {}
    assert str(env.get("GF_AUTH_ANONYMOUS_ENABLED", "false")).lower() == "false", \
        "grafana lets anonymous users in"
    assert str(env.get("GF_USERS_ALLOW_SIGN_UP", "false")).lower() == "false"
    password = str(env.get("GF_SECURITY_ADMIN_PASSWORD", ""))
    # Grafana's own default is admin/admin: the password must be required from the operator
    assert re.fullmatch(r"\$\{[A-Z_]+:\?[^}]+\}", password), \
        f"the grafana admin password is {password!r}, not a required ${{VAR:?...}}"
    assert "GF_SECURITY_ADMIN_PASSWORD__FILE" not in env or not password


# --- Kubernetes ------------------------------------------------------------------------------

def pods_of(built: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d["spec"]["template"] for d in built
            if d["kind"] in ("Deployment", "StatefulSet", "DaemonSet")}


def selected(selector: dict[str, str], pods: dict[str, dict[str, Any]]) -> set[str]:
    return {name for name, t in pods.items() if selector.items() <= t["metadata"]["labels"].items()}


def referee_grpc_port(pods: dict[str, dict[str, Any]]) -> tuple[int, str]:
    container = pods["referee"]["spec"]["containers"][0]
    port = flag(argv_of(container["args"]), "--port")
    names = [p["name"] for p in container["ports"] if p["containerPort"] == port]
    assert names, "the referee container does not declare its gRPC port"
    return port, names[0]


@needs_yaml
@pytest.mark.parametrize("build", list(K8S_BUILDS))
def test_k8s_exposes_only_the_referees_grpc_port(build: str) -> None:
    built = kustomize(K8S_BUILDS[build])
    label = f"`kubectl kustomize deploy/k8s/{build}`"
    pods = pods_of(built)
    grpc_port, grpc_name = referee_grpc_port(pods)
    ways_in = 0
    for d in built:
        kind, name = d["kind"], d["metadata"]["name"]
        if kind in ("Deployment", "StatefulSet", "DaemonSet"):
            spec = d["spec"]["template"]["spec"]
            assert not spec.get("hostNetwork"), f"{label} {name}: hostNetwork"
            for c in spec["containers"]:
                assert not any("hostPort" in p for p in c.get("ports", [])), \
                    f"{label} {name}/{c['name']}: a hostPort bypasses the Services"
        if kind == "Service":
            spec = d["spec"]
            assert not spec.get("externalIPs"), f"{label} Service {name}: externalIPs"
            if spec.get("type", "ClusterIP") not in ("LoadBalancer", "NodePort"):
                continue
            ways_in += 1
            assert selected(spec["selector"], pods) == {"referee"}, \
                f"{label} Service {name} is public and selects {sorted(selected(spec['selector'], pods))}"
            for port in spec["ports"]:
                assert port.get("targetPort") in (grpc_port, grpc_name), \
                    f"{label} Service {name} publishes {port}: only the referee's gRPC port may be"
        if kind == "Ingress":
            ways_in += 1
            ingress_is_grpc_with_tls(d, built, grpc_port, grpc_name, f"{label} Ingress {name}")
        assert kind not in ("Gateway", "HTTPRoute", "TCPRoute"), \
            f"{label}: {kind} {name} is not checked here; extend this test"
    assert ways_in, f"{label}: no LoadBalancer/NodePort Service or Ingress: bots outside the " \
        "cluster cannot reach a referee"


def ingress_is_grpc_with_tls(ingress: dict[str, Any], built: list[dict[str, Any]],
                             grpc_port: int, grpc_name: str, where: str) -> None:
    services = {d["metadata"]["name"]: d for d in built if d["kind"] == "Service"}
    pods = pods_of(built)
    annotations = ingress["metadata"].get("annotations", {})
    assert annotations.get("nginx.ingress.kubernetes.io/backend-protocol") == "GRPC", \
        f"{where}: not proxied as gRPC (HTTP/2)"
    hosts = {h for rule in ingress["spec"]["rules"] for h in [rule.get("host")]}
    assert None not in hosts, f"{where}: a rule without a host"
    tls_hosts = {h for t in ingress["spec"].get("tls", []) for h in t["hosts"]
                 if t.get("secretName")}
    assert hosts <= tls_hosts, f"{where}: {sorted(hosts - tls_hosts)} served without TLS"
    for rule in ingress["spec"]["rules"]:
        for path in rule["http"]["paths"]:
            assert path["path"] in PUBLIC_GRPC_PATHS and path["pathType"] == "Exact", \
                f"{where}: path {path['path']} ({path['pathType']}) opens more than the bots' stream"
            backend = path["backend"]["service"]
            service = services[backend["name"]]
            assert selected(service["spec"]["selector"], pods) == {"referee"}, where
            port = next(p for p in service["spec"]["ports"]
                        if backend["port"].get("name") == p["name"]
                        or backend["port"].get("number") == p["port"])
            assert port["targetPort"] in (grpc_port, grpc_name), \
                f"{where}: routes to {port}, not the referee's gRPC port"


@needs_yaml
@pytest.mark.parametrize("build", list(K8S_BUILDS))
def test_k8s_operator_port_is_never_published_and_only_the_league_reaches_it(build: str) -> None:
    built = kustomize(K8S_BUILDS[build])
    label = f"`kubectl kustomize deploy/k8s/{build}`"
    pods = pods_of(built)
    container = pods["referee"]["spec"]["containers"][0]
    raw = [str(a) for a in container["args"]]
    argv = argv_of(container["args"])
    operator_port, grpc_port = flag(argv, "--operator-port"), flag(argv, "--port")
    assert operator_port not in (0, grpc_port), f"{label}: the operator API shares the bots' port"
    advertise = raw[raw.index("--advertise") + 1]
    assert advertise.endswith(f":{operator_port}"), \
        f"{label}: the referee publishes {advertise} in Redis, not its operator port"
    names = {p["name"] for p in container["ports"] if p["containerPort"] == operator_port}
    operator_refs = names | {operator_port}
    services = {d["metadata"]["name"]: d["spec"] for d in built if d["kind"] == "Service"}
    for name, spec in services.items():
        public = spec.get("type", "ClusterIP") in ("LoadBalancer", "NodePort")
        for port in spec["ports"]:
            if port.get("targetPort") in operator_refs or port.get("port") == operator_port:
                assert not public, f"{label}: public Service {name} publishes the operator port"
    for ingress in (d for d in built if d["kind"] == "Ingress"):
        for rule in ingress["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                backend = path["backend"]["service"]
                target = next(p for p in services[backend["name"]]["ports"]
                              if backend["port"].get("name") == p.get("name")
                              or backend["port"].get("number") == p["port"])
                assert target["targetPort"] not in operator_refs, \
                    f"{label}: Ingress {ingress['metadata']['name']} routes to the operator port"
    # inside the cluster: a NetworkPolicy lets only labelled pods (never the bots) reach it
    policies = [d["spec"] for d in built if d["kind"] == "NetworkPolicy"
                and d["spec"]["podSelector"].get("matchLabels", {}).items()
                <= pods["referee"]["metadata"]["labels"].items()]
    allowed: set[str] = set()
    for policy in policies:
        for rule in policy.get("ingress", []):
            ports = {p.get("port") for p in rule.get("ports", [])}
            if not ports or ports & operator_refs:
                froms = rule.get("from")
                assert froms, f"{label}: a NetworkPolicy lets anyone reach the operator port"
                for f in froms:
                    assert set(f) == {"podSelector"}, f"{label}: operator port opened to {f}"
                    allowed |= selected(f["podSelector"].get("matchLabels", {}), pods)
    assert policies and allowed, f"{label}: no NetworkPolicy guards the operator port"
    assert {"worker", "scheduler"} <= allowed, f"{label}: {sorted(allowed)} reach it"
    bots = {name for name in pods if name.startswith("bot")}
    assert bots and not bots & allowed, f"{label}: bots {sorted(bots & allowed)} reach it"


@needs_yaml
def test_k8s_metrics_and_redis_stay_cluster_internal() -> None:
    built = kustomize(K8S_BUILDS["base"])
    services = {d["metadata"]["name"]: d["spec"] for d in built if d["kind"] == "Service"}
    assert services["redis"].get("type", "ClusterIP") == "ClusterIP"
    public = [s for s in services.values() if s.get("type") in ("LoadBalancer", "NodePort")]
    assert public, "no public Service"
    for spec in public:
        assert not any(str(p.get("name", "")).startswith("metrics") for p in spec["ports"])
