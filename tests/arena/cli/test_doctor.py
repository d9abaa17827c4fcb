"""``sueca-arena doctor``'s clock check, on readings given to it (which skew fails, how the
line reads) and on one real Redis. The checks against a real league are in tests/cluster (a
referee's clock ten minutes off in test_cluster_clocks.py, a healthy league in
test_cluster_sentinel.py)."""

from __future__ import annotations

import pytest

from sueca.arena.cli.doctor import (
    MAX_SKEW_S,
    Offset,
    clock_check,
    clock_here_check,
    redis_offset,
)
from sueca.arena.store import Store

ADDR = "10.0.0.2:50052"


@pytest.mark.parametrize(("referee_s", "redis_s", "fails"), [
    (0.2, 0.0, False),           # within the bound
    (600.0, 0.0, True),          # ten minutes ahead of Redis and of this host
    (-600.0, 0.0, True),         # ten minutes behind
    (600.0, 600.0, False),       # this host is the one off: the referee agrees with Redis
    (MAX_SKEW_S + 0.5, 0.0, True),
])
def test_a_referee_fails_when_its_clock_is_off_from_redis(referee_s: float, redis_s: float,
                                                          fails: bool) -> None:
    check = clock_check(ADDR, 1, Offset(referee_s, 0.001), Offset(redis_s, 0.001))
    assert (check.check, check.ok) == (f"clock {ADDR}", not fails), check
    assert ("more than 1 s" in check.detail) == fails


def test_a_slow_reading_gives_the_benefit_of_the_doubt() -> None:
    # 1.4 s off, but the reading took 1 s: it may be 0.9 s, within the bound
    assert clock_check(ADDR, 1, Offset(1.4, 0.5), Offset(0.0, 0.0)).ok


def test_the_line_says_which_way_and_against_what() -> None:
    check = clock_check(ADDR, 1, Offset(-600.25, 0.0), Offset(0.25, 0.0))
    assert check.detail.startswith("600.500 s behind Redis's, 600.250 s behind this host's")


def test_a_referee_that_sends_no_clock_fails_saying_so() -> None:
    check = clock_check(ADDR, 0, Offset(0.0, 0.0), Offset(0.0, 0.0))
    assert not check.ok and "sends no clock" in check.detail


def test_this_hosts_own_clock_is_checked_against_redis() -> None:
    assert clock_here_check(Offset(0.01, 0.0)).ok
    off = clock_here_check(Offset(-5.0, 0.0))
    assert not off.ok and off.detail.startswith("this host is 5.000 s ahead of Redis's")


def test_redis_s_clock_is_read_to_the_microsecond(store: Store) -> None:
    # A real Redis on this host shares its clock: the offset is the reading's delay, no more,
    # which a clock read without its microseconds would miss by up to a second.
    offsets = [redis_offset(store) for _ in range(5)]
    assert all(abs(off.s) <= off.within + 0.005 for off in offsets), offsets
