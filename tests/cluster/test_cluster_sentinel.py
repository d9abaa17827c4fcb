"""The league with Redis behind Sentinel (tests/kits/cluster.py ``League(sentinel=True)``):
the primary on redis-a, a replica on redis-b and one on redis-c, a sentinel on each; every
process of the arena is given ``redis+sentinel://a:26379,b:26379,c:26379/league/0``.

The primary's host is lost mid-ladder the worst way: first its links to the other two Redis
hosts go (what it writes from then on reaches no replica, while the workers still reach it),
then the host itself (cut and killed). The sentinels promote a replica; the league records
again on it, every result a worker acknowledged is in the promoted primary's log with the
entry id it was acknowledged with, none twice, and the ratings rebuilt from that log (on a
host, through the sentinels) equal the live ones. A result is acknowledged only once a replica
has it (``WAIT``, :meth:`sueca.arena.store.client.StoreBase.durable`): without that, what
the isolated primary recorded is acknowledged and then lost with it.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator

import pytest
from kits.cluster import ARENA, RECORDS_AGAIN_S, League, league_fixture
from kits.wait import wait_for


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[League]:
    yield from league_fixture(tmp_path_factory, sentinel=True)


def test_the_primarys_host_lost_mid_ladder_loses_no_acknowledged_result(league: League) -> None:
    a, b, c = league.redis_hosts
    assert league.primary() is a
    on_a = len(league.results())  # league.store reads redis-a's own socket
    cut_off = time.time()
    a.drop(b, c)  # its replicas and their sentinels hear nothing from it from now on
    wait_for(lambda: len(league.results()) > on_a + 1 or None, 30,
             "results recorded on the cut-off primary", interval=0.2,
             detail=lambda: league.cluster.tail_logs())
    a.cut()
    a.kill()
    at = time.time()
    time.sleep(0.5)  # a worker's answer in flight when the host went
    acked_before = league.acknowledged()
    league.store = league.store_on(league.primary([b, c]))
    promoted = next(h for h in (b, c) if league.store_on(h).r.info("replication")["role"]
                    == "master")
    since = sum(r["time"] <= at for r in league.results())
    f = league.figures("redis primary's host lost", since, at)
    log = dict(league.store.results())
    in_log = {(r["match_id"], eid) for eid, r in log.items()}
    acked = league.acknowledged()
    missing = sorted(set(acked_before.items()) - in_log)
    missing_all = sorted(set(acked.items()) - in_log)
    twice = [m for m, n in Counter(r["match_id"] for r in log.values()).items() if n > 1]
    rebuilt = league.sched.call([*ARENA, "ratings", "rebuild", "--check", "--json"],
                                league.env, timeout=90)
    assert rebuilt.returncode in (0, 1), rebuilt.stderr
    report = json.loads(rebuilt.stdout)
    # when the promoted primary appended it (an entry id is its clock's ms; one kernel's clock)
    first_again = min(ms for eid in log if (ms := int(eid.split("-")[0]) / 1000) > at)
    print(f"promoted {promoted.name}; results acknowledged before the loss "
          f"{len(acked_before)}, found after it {len(set(acked_before.items()) & in_log)}, "
          f"missing {len(missing)}; acknowledged in all {len(acked)}, missing {len(missing_all)}; "
          f"recorded twice {len(twice)}; recorded again {first_again - at:.1f} s after the "
          f"host's loss ({first_again - cut_off:.1f} s after its links to the replicas went); "
          f"ratings rebuilt from {report['results']} results: max difference "
          f"{report['max_diff']} (identical: {report['identical']})")
    assert not missing and not missing_all, missing_all
    assert not twice and f.twice == 0
    assert (f.lost, f.stuck, f.failed) == (0, 0, 0)
    assert first_again - at <= RECORDS_AGAIN_S
    assert report["identical"] and report["results"] >= len(log)


def test_doctor_finds_a_healthy_league_and_a_referee_it_cannot_reach(league: League) -> None:
    code, checks = league.doctor()
    assert code == 0, checks
    names = [c["check"] for c in checks]
    assert names[:3] == ["redis", "replicas", "sentinels"] and names[-1] == "workers"
    assert {f"{what} {r.addr}:50052" for r in (league.ref_a, league.ref_b)
            for what in ("referee", "clock")} <= set(names)
    assert "2 answer a ping" in str(checks[-1]["detail"])
    league.ref_b.cut()  # still advertised (its heartbeat is fresh), unreachable from here
    try:
        code, checks = league.doctor()
    finally:
        league.ref_b.heal()
    failed = {c["check"]: c["detail"] for c in checks if not c["ok"]}
    print(failed)
    assert code == 1 and list(failed) == [f"referee {league.ref_b.addr}:50052"], checks
    league.healthy()
