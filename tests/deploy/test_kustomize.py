"""The Kubernetes layout really builds: ``kubectl kustomize`` (no cluster needed) builds
deploy/k8s/base and its overlays the way ``kubectl apply -k`` does, so a layout kustomize
refuses (an overlay inside its own base: "cycle detected"), a patch it merges differently than
the files suggest, or a probe left with two handlers fails here. kubectl is a provisioned tool
(``make provision``): missing, it is a failure that says how to install it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from kits.deploy import (
    IMAGE,
    K8S,
    K8S_SENTINEL,
    K8S_TLS,
    argv_of,
    assert_no_token,
    check_argv,
    env_of,
    files_named,
    flag,
    flag_value,
    k8s_docs,
    kustomize,
    needs_yaml,
    other_image,
    under,
)

from sueca.arena.redisurl import sentinel_parts

KUSTOMIZATIONS = {"base": K8S, "overlays/tls": K8S_TLS, "overlays/sentinel": K8S_SENTINEL}
#: the base's objects an overlay replaces (removed, added): the Sentinel overlay's Redis
REPLACED = {"overlays/sentinel": (
    {("Deployment", "redis"), ("PersistentVolumeClaim", "redis-data"), ("Service", "redis"),
     ("NetworkPolicy", "redis-clients-only")},
    {("StatefulSet", "redis"), ("Service", "redis-headless"), ("Service", "redis-sentinel"),
     ("PodDisruptionBudget", "redis"), ("NetworkPolicy", "redis-clients-only")})}
POD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job")
PROBES = ("startupProbe", "readinessProbe", "livenessProbe")
PROBE_HANDLERS = {"exec", "grpc", "httpGet", "tcpSocket"}


def built_containers(built: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any],
                                                                    dict[str, Any]]]:
    """(name/container, container, pod spec) for every container of a built pod template."""
    for d in built:
        if d["kind"] in POD_KINDS:
            spec = d["spec"]["template"]["spec"]
            claims = [{"name": t["metadata"]["name"], "persistentVolumeClaim": {}}
                      for t in d["spec"].get("volumeClaimTemplates", [])]  # a StatefulSet's
            spec = {**spec, "volumes": spec.get("volumes", []) + claims}
            for c in spec["containers"]:
                yield f"{d['metadata']['name']}/{c['name']}", c, spec


@needs_yaml
@pytest.mark.parametrize("name", list(KUSTOMIZATIONS))
def test_kustomize_builds_real_commands_and_the_network_policy(name: str) -> None:
    built = kustomize(KUSTOMIZATIONS[name])
    label = f"`kubectl kustomize deploy/k8s/{name}`"
    removed, added = REPLACED.get(name, (set(), set()))
    source = {(d["kind"], d["metadata"]["name"]): d for _, d in k8s_docs()
              if (d["kind"], d["metadata"]["name"]) not in removed}
    objects = {(d["kind"], d["metadata"]["name"]): d for d in built
               if (d["kind"], d["metadata"]["name"]) not in added}
    assert objects.keys() == source.keys(), \
        f"{label} builds {sorted(objects.keys() ^ source.keys())} differently from the base files"
    assert added <= {(d["kind"], d["metadata"]["name"]) for d in built}, f"{label}: {added}"

    # the NetworkPolicy that keeps bots out of Redis survives the build unchanged
    policies = [k for k in objects if k[0] == "NetworkPolicy"]
    assert policies or added, f"{label} has no NetworkPolicy"
    for key in policies:
        assert objects[key]["spec"] == source[key]["spec"], f"{label}: {key[1]} changed"

    roles: dict[str, dict[str, Any]] = {}
    for where, c, spec in built_containers(built):
        where = f"{label} {where}"
        volumes = {v["name"] for v in spec.get("volumes", [])}
        mounts = [m["mountPath"] for m in c.get("volumeMounts", [])]
        assert {m["name"] for m in c.get("volumeMounts", [])} <= volumes, \
            f"{where} mounts a volume its pod does not declare"
        if other_image(c["image"]):
            continue
        assert c["image"].split(":")[0] == IMAGE, f"{where}: image {c['image']}"
        command = c.get("command", []) + c.get("args", [])
        env = env_of(c)
        assert_no_token(where, command, {k for k, v in env.items()
                                         if isinstance(v, dict) and "secretKeyRef" in v})
        argv = argv_of(command)
        check_argv(argv, where)
        roles[argv[1] if argv[0] == "sueca-arena" else "bot"] = c
        assert all(under(p, mounts) for p in files_named(argv, env)), \
            f"{where}: {files_named(argv, env)} not all mounted at {mounts}"
        for probe in PROBES:
            if probe not in c:
                continue
            handlers = set(c[probe]) & PROBE_HANDLERS
            assert len(handlers) == 1, f"{where} {probe}: one handler, not {sorted(handlers)}"
            if "exec" in c[probe]:
                probe_argv = argv_of(c[probe]["exec"]["command"])
                check_argv(probe_argv, f"{where} {probe}")
                assert all(under(p, mounts) for p in files_named(probe_argv, {})), \
                    f"{where} {probe}: {files_named(probe_argv, {})} not all mounted"
    assert {"referee", "worker", "scheduler", "ratings", "bot"} <= roles.keys(), sorted(roles)

    referee = roles["referee"]
    argv = argv_of(referee["args"])
    if name != "overlays/tls":
        assert not files_named(argv, env_of(referee)), f"{label}: the base referee is plaintext"
        for probe in ("readinessProbe", "livenessProbe"):
            assert referee[probe]["grpc"]["port"] == flag(argv, "--port"), f"{label} {probe}"
        return
    # TLS: the referee serves the Secret's certificate and key, mounted from it ...
    spec = objects[("Deployment", "referee")]["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounted = {m["mountPath"]: m["name"] for m in referee["volumeMounts"]}
    for tls_flag in ("--tls-cert", "--tls-key"):
        path = flag_value(argv, tls_flag)
        assert path, f"{label}: the referee has no {tls_flag}"
        volume = next((v for at, v in mounted.items() if under(path, [at])), None)
        assert volume and "secret" in volumes[volume], f"{label}: {path} is not from a Secret"
    # ... and its probes check health over TLS with `sueca-arena health` (no gRPC probe left)
    for probe in PROBES:
        assert "grpc" not in referee[probe], f"{label}: the referee's {probe} is still gRPC"
        command = argv_of(referee[probe]["exec"]["command"])
        assert command[:2] == ["sueca-arena", "health"] and files_named(command, {}), \
            f"{label}: the referee's {probe} is not a TLS health check: {command}"
    for role in ("worker", "scheduler", "bot"):
        c = roles[role]
        assert files_named(argv_of(c.get("command", []) + c["args"]), env_of(c)), \
            f"{label}: the {role} trusts no CA"


SENTINEL_URL_USERS = {"referee", "worker", "scheduler", "exporter", "retention"}


@needs_yaml
def test_the_sentinel_overlay_gives_every_redis_client_the_url_of_its_sentinels() -> None:
    built = kustomize(K8S_SENTINEL)
    label = "`kubectl kustomize deploy/k8s/overlays/sentinel`"
    base_clients = {d["metadata"]["name"] for d in kustomize(K8S)
                    for _, c, _ in built_containers([d] if d["kind"] in POD_KINDS else [])
                    if "--redis" in argv_of(c.get("command", []) + c.get("args", []))}
    cron = [d for d in built if d["kind"] == "CronJob"]
    pods = built + [{"kind": "Job", "metadata": d["metadata"],
                     "spec": d["spec"]["jobTemplate"]["spec"]} for d in cron]
    urls = {}
    for where, c, _ in built_containers(pods):
        if other_image(c["image"]):
            continue
        argv = argv_of(c.get("command", []) + c.get("args", []))
        if "--redis" in argv:
            urls[where.split("/")[0]] = flag_value(argv, "--redis")
            assert env_of(c).get("SUECA_REDIS_URL") == flag_value(argv, "--redis"), \
                f"{label} {where}: SUECA_REDIS_URL is not its --redis"
    assert set(urls) == SENTINEL_URL_USERS | base_clients, f"{label}: {sorted(urls)}"
    (url,) = set(urls.values())
    parts = sentinel_parts(str(url))
    assert "redis://redis:" not in yaml.safe_dump_all(built), f"{label}: the base's Redis URL left"

    # the URL names the StatefulSet's pods by their stable names, on the sentinels' port
    (redis,) = [d for d in built if d["kind"] == "StatefulSet" and d["metadata"]["name"] == "redis"]
    headless = redis["spec"]["serviceName"]
    pods_named = {f"redis-{i}.{headless}" for i in range(redis["spec"]["replicas"])}
    assert set(parts.hosts) == {(p, 26379) for p in pods_named} and len(pods_named) == 3
    (service,) = [d for d in built if d["kind"] == "Service" and d["metadata"]["name"] == headless]
    labels = redis["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["clusterIP"] == "None" and \
        service["spec"]["selector"].items() <= labels.items()
    containers = {c["name"]: c for c in redis["spec"]["template"]["spec"]["containers"]}
    script = containers["sentinel"]["command"][-1]
    assert f"sentinel monitor {parts.service} %s 6379 2" in script, script  # quorum 2 of 3
    assert "get-master-addr-by-name " + parts.service in containers["redis"]["command"][-1]

    # the NetworkPolicy lets Redis clients and the Redis pods themselves in, on both ports,
    # and no one else (bots carry neither label)
    (policy,) = [d for d in built if d["kind"] == "NetworkPolicy"
                 and d["metadata"]["name"] == "redis-clients-only"]
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= labels.items()
    ports = {p["name"] for c in containers.values() for p in c.get("ports", [])}
    for rule in policy["spec"]["ingress"]:
        allowed = {p["port"] for p in rule["ports"]}
        assert allowed <= ports, f"{label}: the policy names ports {allowed - ports}"
        if allowed & {"redis", "sentinel"}:
            assert allowed == {"redis", "sentinel"}
            assert [f["podSelector"]["matchLabels"] for f in rule["from"]] == [
                {"sueca.arena/redis-client": "true"}, {"app.kubernetes.io/name": "redis"}]
