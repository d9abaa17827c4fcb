"""The Kubernetes layout really builds: ``kubectl kustomize`` (no cluster needed) builds
deploy/k8s/base and its overlays the way ``kubectl apply -k`` does, so a layout kustomize
refuses (an overlay inside its own base: "cycle detected"), a patch it merges differently than
the files suggest, or a probe left with two handlers fails here. kubectl is a provisioned tool
(``make provision``): missing, it is a failure that says how to install it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kits.deploy import (
    IMAGE,
    K8S,
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

KUSTOMIZATIONS = {"base": K8S, "overlays/tls": K8S_TLS}
POD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job")
PROBES = ("startupProbe", "readinessProbe", "livenessProbe")
PROBE_HANDLERS = {"exec", "grpc", "httpGet", "tcpSocket"}


def built_containers(built: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any],
                                                                    dict[str, Any]]]:
    """(name/container, container, pod spec) for every container of a built pod template."""
    for d in built:
        if d["kind"] in POD_KINDS:
            spec = d["spec"]["template"]["spec"]
            for c in spec["containers"]:
                yield f"{d['metadata']['name']}/{c['name']}", c, spec


@needs_yaml
@pytest.mark.parametrize("name", list(KUSTOMIZATIONS))
def test_kustomize_builds_real_commands_and_the_network_policy(name: str) -> None:
    built = kustomize(KUSTOMIZATIONS[name])
    label = f"`kubectl kustomize deploy/k8s/{name}`"
    source = {(d["kind"], d["metadata"]["name"]): d for _, d in k8s_docs()}
    objects = {(d["kind"], d["metadata"]["name"]): d for d in built}
    assert objects.keys() == source.keys(), \
        f"{label} builds {sorted(objects.keys() ^ source.keys())} differently from the base files"

    # the NetworkPolicy that keeps bots out of Redis survives the build unchanged
    policies = [k for k in objects if k[0] == "NetworkPolicy"]
    assert policies, f"{label} has no NetworkPolicy"
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
    if name == "base":
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
