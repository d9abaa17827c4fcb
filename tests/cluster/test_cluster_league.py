"""The league across hosts, as an operator runs it: one Redis host, two referee hosts, a worker
host (Celery worker and ladder scheduler), and a bot host whose bots dial both referees by
address. Each host is a network namespace of the cluster kit (tests/kits/cluster.py), reached
only over its bridge.

A referee host lost mid-ladder (its link cut, then every process on it SIGKILLed: no goodbye
reaches anyone) must cost nothing: the bots play on with the other replica, the matches that
were in flight on the lost one are played again there and recorded once, and the league
records again within a stated time. Each fault test prints its figures and asserts them:
matches recorded, lost, recorded twice, stuck, seconds until the league records again.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from kits.cluster import Cluster, Host, require
from kits.wait import wait_for

from sueca.arena.keys import Keys
from sueca.arena.local_arena import register_in
from sueca.arena.redisproc import redis_binary
from sueca.arena.store import Store, connect

ARENA = [sys.executable, "-m", "sueca.arena.cli"]
BOT = [sys.executable, "-c", "import sys; from sueca.sdk.cli import main; sys.exit(main())"]
BOTS = {"alice": "random", "bob": "heuristic", "carol": "reckless", "dave": "random"}
PREFIX = "sueca:"
OPERATOR_TOKEN = "cluster-operator-token-0123456789"
SEED_KEY = "cluster-seed-key-0123456789abcdef"
#: how soon after a referee host is lost the league must record a result again
RECORDS_AGAIN_S = 30.0


class League:
    """The hosts and the test's own view of the records (Redis's unix socket)."""

    def __init__(self, cluster: Cluster, tmp: Path) -> None:
        self.cluster = cluster
        self.redis_host, self.ref_a, self.ref_b, self.worker, self.bots = (
            cluster.host(n) for n in ("redis", "ref-a", "ref-b", "worker", "bots"))
        sock = tmp / "redis.sock"
        self.redis_host.run("redis", [redis_binary(), "--port", "6379", "--bind",
                                      self.redis_host.addr, "--protected-mode", "no",
                                      "--save", "", "--appendonly", "no",
                                      "--unixsocket", str(sock), "--unixsocketperm", "700"])
        wait_for(sock.exists, 10, "redis's socket")
        self.store = Store(wait_for(lambda: connect(f"unix://{sock}"), 10, "redis"), Keys(PREFIX))
        self.url = f"redis://{self.redis_host.addr}:6379/0"
        self.env = {"PATH": os.environ["PATH"], "SUECA_REDIS_URL": self.url,
                    "SUECA_KEY_PREFIX": PREFIX, "SUECA_SEED_KEY": SEED_KEY,
                    "SUECA_OPERATOR_TOKEN": OPERATOR_TOKEN, "HOME": str(tmp)}
        self.tokens = register_in(self.store, BOTS)
        for ref in (self.ref_a, self.ref_b):
            self.start_referee(ref)
        self.worker.run("worker", [*ARENA, "worker", "-c", "4", "--pool", "threads",
                                   "--loglevel", "WARNING"], self.env)
        self.worker.run("scheduler", [*ARENA, "scheduler", "--target", "4", "--interval",
                                      "0.5"], self.env)
        servers = ",".join(f"{r.addr}:50051" for r in (self.ref_a, self.ref_b))
        bot_env = {k: v for k, v in self.env.items() if k != "SUECA_OPERATOR_TOKEN"}
        for name, spec in BOTS.items():  # a bot holds its own token, nothing of the operator's
            self.bots.run(name, [*BOT, "run", spec, "--server", servers, "--name", name,
                                 "--capacity", "4", "--max-backoff", "1",
                                 "--log-level", "warning"],
                          {**bot_env, "SUECA_TOKEN": self.tokens[name]})

    def start_referee(self, host: Host) -> None:
        host.run("referee", [*ARENA, "referee", "--host", host.addr, "--port", "50051",
                             "--operator-port", "50052", "--operator-host", host.addr,
                             "--advertise", f"{host.addr}:50052", "--metrics-port", "0",
                             "--drain-seconds", "1", "--log-level", "warning"], self.env)

    def results(self) -> list[dict]:
        return [r for _, r in self.store.results()]

    def recorded(self, at_least: int, timeout: float) -> list[dict]:
        return wait_for(lambda: (got := self.results()) and len(got) >= at_least and got,
                        timeout, f"{at_least} results", interval=0.2,
                        detail=lambda: self.cluster.tail_logs())


@pytest.fixture
def league(tmp_path: Path) -> Iterator[League]:
    require()
    cluster = Cluster(tmp_path / "logs")
    try:
        yield League(cluster, tmp_path)
    finally:
        left = cluster.close()
        assert not left, f"the cluster left {left} behind"


def test_a_referee_host_lost_mid_ladder_costs_nothing(league: League) -> None:
    before = league.recorded(8, 90)
    lost = f"{league.ref_a.addr}:50052"
    wait_for(lambda: any((league.store.match(m) or {}).get("status") == "running"
                         for m in league.store.ladder_running()), 20, "a match in flight")
    league.ref_a.cut()  # the cable first: no reset, no goodbye reaches anyone
    league.ref_a.kill()
    killed_at, n_before = time.time(), len(league.results())
    after = league.recorded(n_before + 8, 90)
    first_after = min(r["time"] for r in after[n_before:])
    again_s = max(0.0, first_after - killed_at)
    # stop scheduling, let what is in flight finish, then count
    for child in league.worker.children:
        if child.name.endswith("scheduler"):
            child.stop()
    wait_for(lambda: not [m for m in league.store.ladder_running()
                          if (league.store.match(m) or {}).get("status") in ("queued", "running")],
             90, "the ladder's matches in flight to finish", interval=0.5)
    results = league.results()
    ids = Counter(r["match_id"] for r in results)
    twice = [m for m, n in ids.items() if n > 1]
    created = league.store.r.zrange(league.store.keys.matches(), 0, -1)
    statuses = Counter(str((league.store.match(m.decode()) or {}).get("status")) for m in created)
    lost_matches = len(created) - statuses["done"] - statuses["failed"]
    on_lost = sum(r["referee"] == lost for r in results)
    late_on_lost = [r["match_id"] for r in results[n_before:] if r["referee"] == lost
                    and r["time"] > killed_at + 1]
    print(f"\nreferee host lost: {len(results)} matches recorded ({len(before)} before, "
          f"{on_lost} on the lost replica), lost {lost_matches}, recorded twice {len(twice)}, "
          f"stuck {statuses['queued'] + statuses['running']}, failed {statuses['failed']}, "
          f"the league recorded again {again_s:.1f} s after the loss")
    assert not twice
    assert lost_matches == 0 and statuses["failed"] == 0
    assert not late_on_lost
    assert again_s <= RECORDS_AGAIN_S
