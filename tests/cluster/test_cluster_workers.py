"""The league across hosts (tests/kits/cluster.py), losing a worker host and cutting one off.

A worker host lost mid-match: the match it was playing is played again by the other worker
within the lease and the reaper's confirmation, recorded once. A worker host cut off from
everything (Redis too) for longer than its lease, then back: nothing is recorded twice, nothing
lost. Each test prints its figures and asserts them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from kits.cluster import RECORDS_AGAIN_S, League, league_fixture
from kits.wait import wait_for

from sueca.arena.recovery import CONFIRM_SECONDS
from sueca.arena.store import LEASE_SECONDS


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[League]:
    """One league for the module; each test leaves it healthy (its hosts back, every bot on
    both referees), so the tests hold in any order."""
    yield from league_fixture(tmp_path_factory)


def test_a_worker_host_lost_mid_match_has_its_matches_played_elsewhere(league: League) -> None:
    def running_on_a() -> str | None:  # one of dave's: it lasts long enough to be cut short
        return next((m for m in league.in_flight() if league.played_by(m, league.work_a)
                     and "dave" in (league.store.match(m) or {}).get("spec", {}).get("bots", ())),
                    None)
    mid = wait_for(running_on_a, 30, "a match played by work-a")
    league.work_a.cut()
    league.work_a.kill()
    at, since = time.time(), len(league.results())
    wait_for(lambda: mid in {r["match_id"] for r in league.results()}, 90,
             f"match {mid} of the lost worker to be recorded", interval=0.5,
             detail=lambda: league.cluster.tail_logs())
    replayed_s = next(r["time"] for r in league.results() if r["match_id"] == mid) - at
    f = league.figures("worker host lost", since, at)
    print(f"the lost worker's match was recorded {replayed_s:.1f} s after the loss")
    assert (f.lost, f.twice, f.stuck, f.failed) == (0, 0, 0, 0)
    assert LEASE_SECONDS <= replayed_s <= LEASE_SECONDS + CONFIRM_SECONDS + 30
    league.work_a.heal()
    league.start_worker(league.work_a)


def test_a_worker_host_cut_off_and_back_records_nothing_twice(league: League) -> None:
    """A partition between a worker and everything (Redis too) that heals after its lease ran
    out: the match it was playing is re-run elsewhere, and its own late result, if any, is not
    recorded a second time."""
    wait_for(lambda: any(league.played_by(m, league.work_b) for m in league.in_flight()), 30,
             "a match played by work-b")
    league.work_b.cut()
    at, since = time.time(), len(league.results())
    time.sleep(LEASE_SECONDS + CONFIRM_SECONDS + 5)
    league.work_b.heal()
    f = league.figures("worker host cut off, then back", since, at)
    assert (f.lost, f.twice, f.stuck, f.failed) == (0, 0, 0, 0)
    assert f.again_s <= RECORDS_AGAIN_S


