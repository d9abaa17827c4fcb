"""The league across hosts, as an operator runs it (tests/kits/cluster.py: one Redis host, two
referee hosts, two worker hosts, a scheduler host, a bot host whose bots dial both referees by
address), losing a referee host and cutting the bot host off.

A referee host lost mid-ladder (its link cut, then every process on it SIGKILLed: no goodbye
reaches anyone) must cost nothing: the bots play on with the other replica, the matches in
flight on the lost one are played again there and recorded once, and the league records again
within a stated time. The bot host cut off longer than a move's clock and bank costs the seats
to move a disconnect or timeout each, nothing else, and its bots come back by themselves. Each test
prints its figures and asserts them: matches recorded, lost, recorded twice, stuck, seconds
until the league records again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from kits.cluster import RECORDS_AGAIN_S, RULES_ENDS, League, league_fixture
from kits.wait import wait_for

from sueca.codec import DEFAULT_BANK_MS, DEFAULT_MOVE_MS


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[League]:
    """One league for the module; each test leaves it healthy (its hosts back, every bot on
    both referees), so the tests hold in any order."""
    yield from league_fixture(tmp_path_factory)


def test_a_referee_host_lost_mid_ladder_costs_nothing(league: League) -> None:
    lost = f"{league.ref_a.addr}:50052"
    wait_for(lambda: league.in_flight(), 20, "a match in flight")
    league.ref_a.cut()  # the cable first: no reset, no goodbye reaches anyone
    league.ref_a.kill()
    at, since = time.time(), len(league.results())
    f = league.figures("referee host lost", since, at)
    late = [r["match_id"] for r in league.results()[since:]
            if r["referee"] == lost and r["time"] > at + 1]
    assert (f.lost, f.twice, f.stuck, f.failed) == (0, 0, 0, 0) and not late
    assert f.again_s <= RECORDS_AGAIN_S
    league.ref_a.heal()
    league.start_referee(league.ref_a)
    league.healthy()


def test_the_bot_host_cut_off_past_the_clocks_costs_its_seats_and_comes_back(
        league: League) -> None:
    wait_for(lambda: league.running_with("dave"), 30, "a match of dave's being played")
    league.bots.cut()
    at, since = time.time(), len(league.results())
    # past what a seat may take for a move (its move clock and its whole bank): a shorter
    # blip is forgiven, the answers arrive once the link is back
    time.sleep((DEFAULT_MOVE_MS + DEFAULT_BANK_MS) / 1000 + 3)
    league.bots.heal()
    f = league.figures("bot host cut off past the clocks, then back", since, at)
    during = [r for r in league.results()[since:] if r["time"] < at + 40]
    faulted = [r for r in during if r["end"] not in RULES_ENDS]
    assert faulted, "a match in flight while the bots were away ended by their fault"
    for r in faulted:
        assert r["end"] in ("disconnect", "timeout"), r
        assert r["fault_bot"] == r["seats"][r["fault_seat"]], r
    assert (f.lost, f.twice, f.stuck, f.failed) == (0, 0, 0, 0)
    league.healthy()
    back = len(league.results())
    normal = league.recorded(back + 4, 60)[back:]
    assert all(r["end"] in RULES_ENDS for r in normal), normal
