"""The alert rules tested like code, with Prometheus' own tools.

``promtool check rules`` and ``promtool test rules`` (the unit tests in
deploy/prometheus/alerts.test.yml: every alert fires when it must and stays silent when it must);
``promtool check config`` on the compose scrape config; ``amtool check-config`` on the
Alertmanager example. The Kubernetes scrape config is checked by running its relabelling rules,
the way Prometheus does, on the pods ``kubectl kustomize`` builds: the jobs they get must be the
jobs the alerts select. (Debian's promtool is built without Kubernetes service discovery, so it
cannot parse that file itself.) The metric names the rules use are checked against the code in
test_metric_names.py.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from kits.deploy import DEPLOY, K8S, argv_of, flag, kustomize, load_yaml, needs_yaml

PROMETHEUS = DEPLOY / "prometheus"
ALERTS = PROMETHEUS / "alerts.yml"
ALERT_TESTS = PROMETHEUS / "alerts.test.yml"
RUNBOOK = DEPLOY / "RUNBOOK.md"


def run(argv: list[str], cwd: Path = PROMETHEUS) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120)


def rules() -> list[dict[str, Any]]:
    return [r for g in load_yaml(ALERTS)[0]["groups"] for r in g["rules"]]


def alert_jobs() -> set[str]:
    """The jobs the alerts select by name (up{job="..."})."""
    return set(re.findall(r'up\{job="([a-z-]+)"\}', ALERTS.read_text()))


# --- promtool ----------------------------------------------------------------------------------

def test_promtool_checks_the_rules(promtool: str) -> None:
    out = run([promtool, "check", "rules", ALERTS.name])
    assert out.returncode == 0, out.stdout + out.stderr


def test_promtool_unit_tests_of_every_alert_pass(promtool: str) -> None:
    out = run([promtool, "test", "rules", ALERT_TESTS.name])
    assert out.returncode == 0, f"promtool test rules:\n{out.stdout}{out.stderr}"


def test_promtool_checks_the_compose_scrape_config(promtool: str) -> None:
    out = run([promtool, "check", "config", "prometheus.yml"])
    assert out.returncode == 0, out.stdout + out.stderr


@needs_yaml
def test_every_alert_is_tested_firing_and_silent() -> None:
    names = [r["alert"] for r in rules()]
    assert len(names) == len(set(names)), "two alerts share a name"
    config = load_yaml(ALERT_TESTS)[0]
    assert config["rule_files"] == [ALERTS.name]
    fires, silent = set(), set()
    for test in config["tests"]:
        for case in test.get("alert_rule_test", []):
            (fires if case.get("exp_alerts") else silent).add(case["alertname"])
    assert fires | silent <= set(names), f"tests of unknown alerts {sorted((fires | silent) - set(names))}"
    assert not set(names) - fires, f"no test where {sorted(set(names) - fires)} fires"
    assert not set(names) - silent, f"no test where {sorted(set(names) - silent)} stays silent"


# --- runbook -----------------------------------------------------------------------------------

def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@needs_yaml
def test_every_alert_links_its_runbook_section() -> None:
    headings = re.findall(r"^## (.+)$", RUNBOOK.read_text(), re.M)
    anchors = {github_anchor(h): h for h in headings}
    names = {r["alert"] for r in rules()}
    for rule in rules():
        link = rule["annotations"].get("runbook", "")
        path, _, anchor = link.partition("#")
        assert path == "deploy/RUNBOOK.md", f"{rule['alert']}: runbook {link!r}"
        assert anchor in anchors, f"{rule['alert']}: deploy/RUNBOOK.md has no section #{anchor}"
        assert anchors[anchor] == rule["alert"], f"{rule['alert']} links {anchors[anchor]!r}"
    assert set(headings) == names, \
        f"runbook sections without an alert: {sorted(set(headings) - names)}"


# --- Alertmanager ------------------------------------------------------------------------------

@needs_yaml
def test_alertmanager_example_routes_every_severity(amtool: str) -> None:
    out = run([amtool, "check-config", "alertmanager.yml"])
    assert out.returncode == 0, out.stdout + out.stderr
    config = load_yaml(PROMETHEUS / "alertmanager.yml")[0]
    receivers = {r["name"] for r in config["receivers"]}
    routes = config["route"].get("routes", [])
    assert config["route"]["receiver"] in receivers
    routed = set()
    for route in routes:
        assert route["receiver"] in receivers, f"route to unknown receiver {route['receiver']}"
        routed |= {m for matcher in route.get("matchers", [])
                   for m in re.findall(r'^severity="(\w+)"$', matcher)}
    severities = {r["labels"]["severity"] for r in rules()}
    assert severities <= routed, f"severities with no route: {sorted(severities - routed)}"
    names = {r["alert"] for r in rules()}
    for rule in config.get("inhibit_rules", []):
        for matcher in rule.get("source_matchers", []) + rule.get("target_matchers", []):
            for alt in re.findall(r'^alertname=~?"([^"]+)"$', matcher):
                unknown = set(alt.split("|")) - names
                assert not unknown, f"inhibit rule names unknown alerts {sorted(unknown)}"


# --- Kubernetes scrape config, run on the built pods ------------------------------------------

def sanitize(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


def pod_targets(pod: str, template: dict[str, Any], ip: str) -> list[dict[str, str]]:
    """The targets Prometheus' `role: pod` discovery makes of one running pod: one per declared
    container port, or one without a port for a container that declares none."""
    meta = template["metadata"]
    common = {"__meta_kubernetes_namespace": "sueca", "__meta_kubernetes_pod_name": pod,
              "__meta_kubernetes_pod_phase": "Running", "__meta_kubernetes_pod_ip": ip}
    for k, v in meta.get("labels", {}).items():
        common[f"__meta_kubernetes_pod_label_{sanitize(k)}"] = str(v)
        common[f"__meta_kubernetes_pod_labelpresent_{sanitize(k)}"] = "true"
    for k, v in meta.get("annotations", {}).items():
        common[f"__meta_kubernetes_pod_annotation_{sanitize(k)}"] = str(v)
        common[f"__meta_kubernetes_pod_annotationpresent_{sanitize(k)}"] = "true"
    out = []
    for c in template["spec"]["containers"]:
        base = {**common, "__meta_kubernetes_pod_container_name": c["name"]}
        ports = c.get("ports", [])
        if not ports:
            out.append({**base, "__address__": ip})
        for p in ports:
            out.append({**base, "__address__": f"{ip}:{p['containerPort']}",
                        "__meta_kubernetes_pod_container_port_name": p.get("name", ""),
                        "__meta_kubernetes_pod_container_port_number": str(p["containerPort"])})
    return out


def relabel(labels: dict[str, str], configs: list[dict[str, Any]]) -> dict[str, str] | None:
    """Prometheus' relabelling (replace, keep, drop, labelmap); None when the target is
    dropped. Regexes are anchored at both ends, as Prometheus anchors them."""
    labels = dict(labels)
    for rc in configs:
        action = rc.get("action", "replace")
        regex = re.compile(f"^(?:{rc.get('regex', '(.*)')})$")
        value = rc.get("separator", ";").join(labels.get(s, "") for s in rc.get("source_labels", []))
        match = regex.match(value)
        if action == "keep" and not match:
            return None
        if action == "drop" and match:
            return None
        if action == "replace" and match:
            target = match.expand(re.sub(r"\$\{?(\d+)\}?", r"\\g<\1>",
                                         rc.get("replacement", "$1")))
            if target:
                labels[rc["target_label"]] = target
            else:
                labels.pop(rc["target_label"], None)
        if action == "labelmap":
            for k, v in list(labels.items()):
                if regex.match(k):
                    labels[regex.sub(rc.get("replacement", "$1").replace("$1", r"\1"), k)] = v
        assert action in ("replace", "keep", "drop", "labelmap"), f"unmodelled action {action}"
    return labels


def scrape_targets(job: dict[str, Any], built: list[dict[str, Any]]) -> list[dict[str, str]]:
    """(labels after relabelling) of every target `job` scrapes in the built manifests."""
    out = []
    pods = [d for d in built if d["kind"] in ("Deployment", "StatefulSet", "DaemonSet")]
    for n, d in enumerate(pods):
        for target in pod_targets(f"{d['metadata']['name']}-0", d["spec"]["template"],
                                  f"10.0.0.{n + 1}"):
            labels = relabel({**target, "job": job["job_name"]}, job.get("relabel_configs", []))
            if labels is None:
                continue
            labels.setdefault("instance", labels["__address__"])
            labels["__deployment__"] = d["metadata"]["name"]
            out.append(labels)
    return out


def metrics_port(template: dict[str, Any]) -> int:
    """The pod's container port named "metrics"; for the arena's roles, also the port their
    command line serves metrics on."""
    ports = [(c, p["containerPort"]) for c in template["spec"]["containers"]
             for p in c.get("ports", []) if p.get("name") == "metrics"]
    assert len(ports) == 1, f"{template['metadata']['labels']}: {len(ports)} metrics ports"
    container, port = ports[0]
    if container["image"].split(":")[0] == "sueca-arena":
        assert port == flag(argv_of(container["args"]), "--metrics-port")
    return port


@needs_yaml
def test_k8s_scrape_config_gives_each_pod_the_job_its_alerts_select() -> None:
    built = kustomize(K8S)
    config = load_yaml(PROMETHEUS / "prometheus-k8s.yml")[0]
    assert config["rule_files"] == [ALERTS.name]
    jobs = config["scrape_configs"]
    templates = {d["metadata"]["name"]: d["spec"]["template"] for d in built
                 if d["kind"] == "Deployment"}
    seen: dict[str, str] = {}
    for job in jobs:
        for t in scrape_targets(job, built):
            name = t["__deployment__"]
            job_label = t.get("job", "(no job label)")
            assert name not in seen, f"{name} is scraped twice (jobs {seen[name]}, {job_label})"
            seen[name] = job_label
            assert t["__address__"].endswith(f":{metrics_port(templates[name])}"), \
                f"{name} is scraped at {t['__address__']}, not its --metrics-port"
            assert t["instance"] == f"{name}-0", f"{name}: instance {t['instance']}"
    assert set(seen.values()) >= alert_jobs(), \
        f"alerts select jobs {sorted(alert_jobs())}; pods get {seen}"
    assert seen == {"referee": "referee", "worker": "worker", "exporter": "exporter",
                    "scheduler": "scheduler", "redis": "redis"}, seen


@needs_yaml
def test_k8s_scrape_config_rejects_the_stock_kubernetes_pods_job() -> None:
    """The check above can fail: the stock example job labels every pod "kubernetes-pods"."""
    built = kustomize(K8S)
    stock = {"job_name": "kubernetes-pods", "relabel_configs": [
        {"source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_scrape"],
         "action": "keep", "regex": "true"}]}
    assert {t["job"] for t in scrape_targets(stock, built)} == {"kubernetes-pods"}


@needs_yaml
def test_podmonitors_give_the_jobs_the_alerts_select() -> None:
    built = kustomize(K8S)
    jobs: dict[str, str] = {}
    for monitor in load_yaml(DEPLOY / "k8s" / "monitoring" / "podmonitor.yaml"):
        assert monitor["kind"] == "PodMonitor"
        spec = monitor["spec"]
        selector = spec["selector"]["matchLabels"]
        for endpoint in spec["podMetricsEndpoints"]:
            fixed = [r["replacement"] for r in endpoint.get("relabelings", [])
                     if r.get("targetLabel") == "job" and "sourceLabels" not in r]
            for d in built:
                if d["kind"] != "Deployment":
                    continue
                template = d["spec"]["template"]
                if not selector.items() <= template["metadata"]["labels"].items():
                    continue
                named = {p.get("name"): p["containerPort"] for c in template["spec"]["containers"]
                         for p in c.get("ports", [])}
                if endpoint["port"] not in named:
                    continue
                assert named[endpoint["port"]] == metrics_port(template)
                name = d["metadata"]["name"]
                assert name not in jobs, f"{name} is scraped by two PodMonitors"
                jobs[name] = fixed[-1] if fixed else template["metadata"]["labels"][spec["jobLabel"]]
    assert jobs == {"referee": "referee", "worker": "worker", "exporter": "exporter",
                    "scheduler": "scheduler", "redis": "redis"}, jobs
    assert set(jobs.values()) >= alert_jobs()
