"""The commands the deployment runs: every role has its compose service, one image built from the
Dockerfile, every command a real ``sueca-arena`` / ``sueca-bot`` command line that the CLI's own
parser accepts, Prometheus scraping the ports those commands open, and the Dockerfile installing
the package in one slim image."""

from __future__ import annotations

import re

import pytest
from kits.deploy import (
    DEPLOY,
    argv_of,
    check_argv,
    compose,
    compose_arena_services,
    flag,
    load_yaml,
    needs_yaml,
)


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
