"""The operator token and TLS in the deployment: compose and Kubernetes give the token (from a
secret) to the operator roles only, the compose TLS override fits its base, the health check is
a real command, and the Kubernetes TLS overlay patches real commands and mounts."""

from __future__ import annotations

from kits.deploy import (
    K8S,
    K8S_TLS,
    argv_of,
    check_argv,
    compose,
    compose_arena_services,
    compose_mounts,
    compose_role,
    compose_tls,
    containers,
    env_of,
    files_named,
    flag_value,
    k8s_docs,
    k8s_tls_patches,
    load_yaml,
    needs_yaml,
    under,
)

OPERATORS = {"referee", "worker", "scheduler"}  # the roles that need the operator token


@needs_yaml
def test_compose_gives_the_operator_token_to_operators_only() -> None:
    services = compose()["services"]
    for name in compose_arena_services():
        env = services[name].get("environment") or {}
        if compose_role(name) in OPERATORS:
            assert str(env.get("SUECA_OPERATOR_TOKEN", "")).startswith(
                "${SUECA_OPERATOR_TOKEN:?"), f"compose service {name} gets no operator token " \
                "(or a default one: it must be required)"
        else:
            assert "SUECA_OPERATOR_TOKEN" not in env, f"compose service {name} must not hold " \
                "the operator token"


@needs_yaml
def test_compose_tls_override_fits_the_base() -> None:
    base, tls = compose()["services"], compose_tls()["services"]
    assert set(tls) <= set(base), f"compose.tls.yaml names unknown services {set(tls) - set(base)}"
    for role in ("referee", "worker", "scheduler", "bot"):
        assert any(compose_role(n) == role for n in tls), f"compose.tls.yaml leaves out {role}"
    for name, over in tls.items():
        argv = argv_of(over.get("command", base[name]["command"]))
        check_argv(argv, f"compose.tls.yaml service {name}")
        env = {**(base[name].get("environment") or {}), **(over.get("environment") or {})}
        mounts = compose_mounts(base[name].get("volumes", []) + over.get("volumes", []))
        named = files_named(argv, env)
        assert named, f"compose.tls.yaml service {name} sets no certificate or CA"
        for path in named:
            assert under(path, mounts), f"compose.tls.yaml service {name}: {path} is not mounted"
        health = over.get("healthcheck", {}).get("test")
        if health:
            assert health[0] == "CMD"
            check_argv(argv_of(health[1:]), f"compose.tls.yaml service {name} healthcheck")
            assert all(under(p, mounts) for p in files_named(argv_of(health[1:]), {}))
    referee = argv_of(tls["referee"]["command"])
    assert referee[:len(argv_of(base["referee"]["command"]))] == \
        argv_of(base["referee"]["command"]), "the TLS referee must run the base command plus TLS"
    assert flag_value(referee, "--tls-cert") and flag_value(referee, "--tls-key")


@needs_yaml
def test_compose_healthcheck_is_a_real_command() -> None:
    test = compose()["services"]["referee"]["healthcheck"]["test"]
    assert test[0] == "CMD"
    check_argv(argv_of(test[1:]), "compose referee healthcheck")


@needs_yaml
def test_k8s_gives_the_operator_token_from_a_secret_to_operators_only() -> None:
    refs = set()
    for where, c in containers():
        argv = argv_of(c.get("command", []) + c.get("args", []))
        role = argv[1] if argv[0] == "sueca-arena" else "bot" if argv[0] == "sueca-bot" else ""
        token = env_of(c).get("SUECA_OPERATOR_TOKEN")
        if role in OPERATORS:
            assert token and "secretKeyRef" in token, f"k8s {where}: no operator token secret"
            refs.add((token["secretKeyRef"]["name"], token["secretKeyRef"]["key"]))
        else:
            assert token is None, f"k8s {where} must not hold the operator token"
    assert len(refs) == 1, f"operators read different secrets: {refs}"
    name = next(iter(refs))[0]
    assert name in (K8S / "kustomization.yaml").read_text(), \
        "kustomization.yaml must say how to create the operator token secret"


@needs_yaml
def test_k8s_tls_overlay_patches_real_commands_and_mounts() -> None:
    base = {d["metadata"]["name"]: d for _, d in k8s_docs() if d["kind"] == "Deployment"}
    listed = {p.name for p in K8S_TLS.glob("*.yaml")} - {"kustomization.yaml"}
    kust = load_yaml(K8S_TLS / "kustomization.yaml")[0]
    assert {p["path"] for p in kust["patches"]} == listed, "a patch file is not applied"
    roles = set()
    for patch in k8s_tls_patches():
        name = patch["metadata"]["name"]
        assert patch["kind"] == "Deployment" and name in base, f"TLS patch of unknown {name}"
        spec = patch["spec"]["template"]["spec"]
        base_spec = base[name]["spec"]["template"]["spec"]
        volumes = {v["name"] for v in spec.get("volumes", []) + base_spec.get("volumes", [])}
        for c in spec["containers"]:
            where = f"k8s/overlays/tls {name}/{c['name']}"
            original = next(b for b in base_spec["containers"] if b["name"] == c["name"])
            argv = argv_of(c.get("args", original["args"]))
            check_argv(argv, where)
            roles.add(argv[1] if argv[0] == "sueca-arena" else "bot")
            mounts = [m["mountPath"] for m in c.get("volumeMounts", [])]
            assert {m["name"] for m in c.get("volumeMounts", [])} <= volumes, where
            env = {**env_of(original), **env_of(c)}
            named = files_named(argv, env)
            assert named, f"{where} sets no certificate or CA"
            assert all(under(p, mounts) for p in named), f"{where}: {named} not all mounted"
            if "args" in c:  # the base command plus TLS, nothing dropped
                assert argv[:len(argv_of(original["args"]))] == argv_of(original["args"]), where
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                if probe in c:
                    assert "grpc" in c[probe] and c[probe]["grpc"] is None, \
                        f"{where} {probe}: the kubelet's gRPC probe cannot speak TLS; drop it"
                    command = argv_of(c[probe]["exec"]["command"])
                    check_argv(command, f"{where} {probe}")
                    assert all(under(p, mounts) for p in files_named(command, {})), where
    assert {"referee", "worker", "scheduler", "bot"} <= roles
