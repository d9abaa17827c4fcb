"""Redis in the deployment: bounded, never evicting league data, and watched (Prometheus scrapes
its exporter)."""

from __future__ import annotations

import re

from kits.deploy import (
    DEPLOY,
    K8S,
    compose,
    compose_networks,
    flag_value,
    kustomize,
    load_yaml,
    needs_yaml,
)


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
