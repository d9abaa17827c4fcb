"""Clocks across hosts (tests/kits/cluster.py): one referee host's wall clock ten minutes
behind, the other's ten minutes ahead. The protocol's clocks are durations (a move's time, a
bank, a grace), measured on each referee's own monotonic clock, so a skewed wall clock must
change nothing: every match normal, both replicas placing matches, and a replica whose host is
lost leaves the placement list in the stated time whichever way its clock was off."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from kits.cluster import RULES_ENDS, League, league_fixture
from kits.wait import wait_for

#: a lost replica leaves the placement list within this (its heartbeat's max age, and one beat)
LEAVES_S = 40.0


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[League]:
    yield from league_fixture(tmp_path_factory, clocks={"ref-a": "-600s", "ref-b": "+600s"})


def test_referee_clocks_ten_minutes_off_change_nothing(league: League) -> None:
    since = len(league.results())
    played = league.recorded(since + 16, 120)[since:]
    by_referee = {r["referee"] for r in played}
    ends = {r["end"] for r in played}
    print(f"\nclocks -10 min and +10 min: {len(played)} matches, by referee "
          f"{sorted(by_referee)}, ends {sorted(ends)}")
    assert ends <= set(RULES_ENDS)
    assert by_referee == {f"{h.addr}:50052" for h in (league.ref_a, league.ref_b)}
    assert set(league.store.referees()) == by_referee


def test_doctor_names_each_referee_whose_clock_is_off(league: League) -> None:
    code, checks = league.doctor()
    failed = {str(c["check"]): str(c["detail"]) for c in checks if not c["ok"]}
    a, b = (f"clock {h.addr}:50052" for h in (league.ref_a, league.ref_b))
    assert code == 1 and set(failed) == {a, b}, checks
    for name, way in ((a, "behind"), (b, "ahead of")):
        off = float(failed[name].split(" s ")[0])
        assert failed[name].split(" s ")[1].startswith(way) and abs(off - 600) < 5, failed


@pytest.mark.parametrize("behind", [True, False], ids=["behind", "ahead"])
def test_a_lost_replica_leaves_the_placement_list_whichever_way_its_clock_is_off(
        league: League, behind: bool) -> None:
    host = league.ref_a if behind else league.ref_b
    gone = f"{host.addr}:50052"
    host.cut()
    host.kill()
    at = time.monotonic()
    wait_for(lambda: gone not in league.store.referees(), LEAVES_S + 30,
             f"{gone} to leave the placement list", interval=0.5)
    left_s = time.monotonic() - at
    print(f"\nreplica with its clock {'behind' if behind else 'ahead'} lost: left the "
          f"placement list {left_s:.1f} s after")
    assert left_s <= LEAVES_S
    host.heal()
    league.start_referee(host)
    league.healthy()
