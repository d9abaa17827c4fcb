"""Who reaches Redis. Referees publish their addresses in Redis, and workers and the scheduler
send the operator token to every referee listed there: a bot that could write to Redis could
list a fake referee and collect the token. So bots must never reach Redis, in compose (its
networks) or in Kubernetes (its network policy)."""

from __future__ import annotations

from typing import Any

import pytest
from kits.deploy import (
    argv_of,
    compose,
    compose_arena_services,
    compose_merged,
    compose_networks,
    compose_role,
    env_of,
    k8s_docs,
    k8s_tls_patches,
    needs_yaml,
)


def needs_redis(argv: list[str], env: dict[str, Any]) -> bool:
    return "--redis" in argv or "SUECA_REDIS_URL" in env


@needs_yaml
@pytest.mark.parametrize("services", [compose, compose_merged], ids=["compose", "compose+tls"])
def test_compose_keeps_bots_off_the_redis_network(services: Any) -> None:
    services = services() if services is compose_merged else services()["services"]
    declared = set(compose().get("networks") or {}) | {"default"}
    for name, s in services.items():
        assert compose_networks(s) <= declared, f"compose service {name}: undeclared network"
    redis, referee = compose_networks(services["redis"]), compose_networks(services["referee"])
    bots = [n for n in services if n in compose_arena_services() and compose_role(n) == "bot"]
    assert bots
    bot_nets: set[str] = set()
    for name in bots:
        nets = compose_networks(services[name])
        bot_nets |= nets
        assert not nets & redis, f"compose bot {name} shares {nets & redis} with redis"
        assert nets & referee, f"compose bot {name} cannot reach the referees"
        env = services[name].get("environment") or {}
        assert not needs_redis(argv_of(services[name]["command"]), env), \
            f"compose bot {name} is given a Redis URL"
    # referees are on both sides; nothing else joins the bots on theirs
    assert referee & redis, "the referees cannot reach redis"
    for name, s in services.items():
        if compose_networks(s) & bot_nets:
            assert name in bots or name == "referee", \
                f"compose service {name} shares a network with the bots"
    # whatever talks to Redis (or scrapes the roles) is on its network
    for name in compose_arena_services():
        s = services[name]
        if needs_redis(argv_of(s["command"]), s.get("environment") or {}):
            assert compose_networks(s) & redis, f"compose service {name} cannot reach redis"
    prometheus = compose_networks(services["prometheus"])
    for name in ("referee", "worker", "exporter"):
        assert prometheus & compose_networks(services[name]), f"prometheus cannot scrape {name}"
    assert compose_networks(services["grafana"]) & prometheus


def k8s_pods() -> dict[str, tuple[dict[str, str], list[dict[str, Any]]]]:
    """Every pod template in deploy/k8s/base: name -> (labels, containers)."""
    return {d["metadata"]["name"]: (d["spec"]["template"]["metadata"]["labels"],
                                    d["spec"]["template"]["spec"]["containers"])
            for _, d in k8s_docs() if d["kind"] in ("Deployment", "StatefulSet", "Job")}


def k8s_argv(container: dict[str, Any]) -> list[str]:
    return argv_of(container.get("command", []) + container.get("args", []))


@needs_yaml
def test_k8s_network_policy_lets_only_redis_clients_reach_redis() -> None:
    pods = k8s_pods()
    redis_labels = pods["redis"][0]
    policies = [d for _, d in k8s_docs() if d["kind"] == "NetworkPolicy"
                and d["spec"]["podSelector"].get("matchLabels", {}).items()
                <= redis_labels.items()]
    assert len(policies) == 1, "no NetworkPolicy (or several) selects the redis pods"
    spec = policies[0]["spec"]
    assert not spec["podSelector"].get("matchExpressions")
    assert "Ingress" in spec["policyTypes"]
    service = next(d for _, d in k8s_docs() if d["kind"] == "Service"
                   and d["metadata"]["name"] == "redis")
    assert spec["podSelector"]["matchLabels"].items() <= service["spec"]["selector"].items() \
        or service["spec"]["selector"].items() <= redis_labels.items()
    selectors = []
    assert spec["ingress"], "an ingress list is needed (empty means nothing gets in)"
    redis_ports = {p["name"] for c in pods["redis"][1] if c["name"] == "redis"
                   for p in c["ports"]} | {6379}
    for rule in spec["ingress"]:
        ports = {p.get("port") for p in rule.get("ports", [])}
        assert ports, "an ingress rule without `ports` opens Redis' port too"
        if not ports & redis_ports:  # e.g. the exporter's metrics port, for Prometheus
            assert "metrics" in ports and ports <= {"metrics", 9121}, ports
            continue
        assert rule.get("from"), "an ingress rule without `from` lets every pod in"
        for peer in rule["from"]:
            assert set(peer) == {"podSelector"}, f"only pod selectors may reach redis: {peer}"
            match = peer["podSelector"].get("matchLabels")
            assert match and not peer["podSelector"].get("matchExpressions"), \
                "an empty pod selector lets every pod in"
            selectors.append(match)
    allowed = {name for name, (labels, _) in pods.items()
               if any(m.items() <= labels.items() for m in selectors)}
    clients = {name for name, (_, cs) in pods.items() if name != "redis"
               and any(needs_redis(k8s_argv(c), env_of(c)) for c in cs)}
    bots = {name for name, (_, cs) in pods.items()
            if any(k8s_argv(c)[:1] == ["sueca-bot"] for c in cs)}
    assert bots and clients >= {"referee", "worker", "scheduler", "exporter"}
    assert not allowed & bots, f"bots may reach redis: {sorted(allowed & bots)}"
    assert allowed == clients, (f"the redis-client label is on {sorted(allowed)}, "
                                f"but {sorted(clients)} need Redis")
    # the TLS overlay does not relabel pods
    for patch in k8s_tls_patches():
        assert "metadata" not in patch["spec"]["template"], \
            f"k8s/overlays/tls patch of {patch['metadata']['name']} changes pod labels"
