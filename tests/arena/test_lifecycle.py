"""The competition rules with no Redis: names, specs, times, the order of a season."""

from __future__ import annotations

import pytest

from sueca.arena.lifecycle import (
    DEFAULT,
    CompetitionError,
    State,
    check_move,
    due,
    new_spec,
    parse_time,
)


def test_a_season_moves_one_step_forward_at_a_time() -> None:
    order = list(State)
    for a, b in zip(order, order[1:]):
        check_move("cup", a, b)
    for i, a in enumerate(order):
        for b in order:
            if order.index(b) != i + 1:
                with pytest.raises(CompetitionError, match="'cup'"):
                    check_move("cup", a, b)
    with pytest.raises(CompetitionError, match="open it before its final"):
        check_move("cup", State.DRAFT, State.FINAL)
    with pytest.raises(CompetitionError, match="does not go back to open"):
        check_move("cup", State.FROZEN, State.OPEN)
    with pytest.raises(CompetitionError, match="always open"):
        check_move(DEFAULT, State.OPEN, State.FROZEN)


def test_times_move_it_once_each_and_in_order() -> None:
    spec = new_spec("cup", opens_at=10, freezes_at=20, final_at=30, closes_at=40)
    assert due(spec, State.DRAFT, 9) is None
    assert due(spec, State.DRAFT, 10) is State.OPEN
    # every time has passed: still one step, the freeze first
    assert due(spec, State.OPEN, 100) is State.FROZEN
    assert due(spec, State.FINAL, 41) is State.CLOSED
    assert due(spec, State.CLOSED, 1e12) is None
    by_hand = new_spec("cup")
    assert all(due(by_hand, s, 1e12) is None for s in State)


@pytest.mark.parametrize("options, quoted", [
    ({"freezes_at": 5.0, "opens_at": 10.0}, "freeze time comes before the open time"),
    ({"final": {"format": "ladder-ish", "top": None, "best_of": 1}}, "'ladder-ish'"),
    ({"final": {"format": "knockout", "top": 1, "best_of": 1}}, "top) 1"),
    ({"final": {"format": "knockout", "top": 8, "best_of": 0}}, "best-of 0"),
    ({"divisions": {"size": 4, "count": 2, "promote": 1, "every_s": 60, "placement": 2}},
     "not both"),
    ({"divisions": {"size": 4, "count": None, "promote": 3, "every_s": 60, "placement": 2}},
     "promotions per cycle 3"),
    ({"fair_play": {"faults": 6, "of_last": 5, "challenges_per_hour": 1}}, "6/5"),
])
def test_a_bad_rule_is_refused_quoting_it(options: dict, quoted: str) -> None:
    with pytest.raises(CompetitionError) as err:
        new_spec("cup", **options)
    assert quoted in str(err.value)


@pytest.mark.parametrize("name", ["", "Cup", "-cup", "a" * 41, "cup cup", DEFAULT])
def test_a_bad_name_is_refused_quoting_it(name: str) -> None:
    with pytest.raises(CompetitionError) as err:
        new_spec(name)
    assert repr(name)[:20] in str(err.value)


def test_times_read_as_people_write_them() -> None:
    assert parse_time("+90s", 1000.0) == 1090.0
    assert parse_time("+2h", 0.0) == 7200.0
    assert parse_time("2026-12-24T18:00", 0.0) == parse_time("2026-12-24T18:00+00:00", 0.0)
    with pytest.raises(CompetitionError, match="'tomorrow'"):
        parse_time("tomorrow", 0.0)
