"""deploy/compose.sentinel.yaml: every role that reaches Redis on top of compose.yaml is given
the one Sentinel URL, which names the sentinels the file runs and the service they monitor."""

from __future__ import annotations

from pathlib import Path

import yaml

from sueca.arena.redisurl import sentinel_parts

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_every_redis_client_of_compose_is_given_the_sentinel_url() -> None:
    base = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    over = yaml.safe_load((DEPLOY / "compose.sentinel.yaml").read_text())["services"]
    clients = [name for name, svc in base.items()
               if "--redis" in (svc.get("command") or ())]
    assert clients and set(clients) <= set(over), clients
    urls = set()
    for name in clients:
        cmd = over[name]["command"]
        urls.add(cmd[cmd.index("--redis") + 1])
        assert over[name]["environment"]["SUECA_REDIS_URL"] == cmd[cmd.index("--redis") + 1]
    (url,) = urls
    parts = sentinel_parts(url)
    sentinels = {name for name, svc in over.items() if "--sentinel" in str(svc.get("entrypoint"))}
    assert {host for host, _ in parts.hosts} == sentinels and len(sentinels) == 3
    for name in sentinels:
        assert f"sentinel monitor {parts.service} redis 6379 2" in over[name]["entrypoint"][-1]
    replicas = [n for n, svc in over.items() if "--replicaof" in (svc.get("command") or ())]
    assert len(replicas) == 2  # a failover leaves a replica, which WAIT needs
