"""Divisions of a competition: the split, a promotion cycle, placement opponents and placing."""

from __future__ import annotations

from collections import Counter

import pytest

from sueca.arena.competitions.divisions import cycle, opponents, place, ranked, split

BOTS = [f"b{i:02d}" for i in range(10)]          # best first


def test_split_by_size_or_count_makes_even_divisions_of_two_at_least():
    assert Counter(split(BOTS, size=4).values()) == {0: 4, 1: 3, 2: 3}      # ceil(10/4) = 3
    assert Counter(split(BOTS, count=4).values()) == {0: 3, 1: 3, 2: 2, 3: 2}
    by_size = split(BOTS, size=5)
    assert [by_size[b] for b in BOTS] == [0] * 5 + [1] * 5                 # the best on top
    assert Counter(split(BOTS[:3], count=3).values()) == {0: 3}            # never a lone bot
    assert Counter(split(BOTS[:5], size=2).values()) == {0: 3, 1: 2}
    assert split([], size=3) == {}
    with pytest.raises(ValueError, match="not both"):
        split(BOTS, size=2, count=2)
    with pytest.raises(ValueError, match="at least 1, got 0"):
        split(BOTS, size=0)


def test_a_cycle_swaps_the_bottom_of_a_division_with_the_top_of_the_next():
    ratings = {b: 100.0 - i for i, b in enumerate(BOTS)}
    divisions = split(BOTS, count=3)                     # b00-b03 | b04-b06 | b07-b09
    ratings["b06"] = 200.0                               # the best of division 2 now
    ratings["b09"] = 150.0                               # and of division 3
    moves = cycle(divisions, ratings, 1)
    assert moves == [{"bot": "b03", "from_division": 0, "to": 1},
                     {"bot": "b06", "from_division": 1, "to": 0},
                     {"bot": "b05", "from_division": 1, "to": 2},
                     {"bot": "b09", "from_division": 2, "to": 1}]
    assert len({m["bot"] for m in moves}) == len(moves)  # each bot moves once a cycle
    after = dict(divisions) | {m["bot"]: m["to"] for m in moves}
    assert Counter(after.values()) == Counter(divisions.values())          # sizes kept
    # promote is capped at half the smaller division: never a whole division swapped
    two = {"a": 0, "b": 0, "c": 1, "d": 1}
    assert len(cycle(two, {}, 5)) == 2
    assert cycle({"a": 0, "b": 0}, {}, 1) == []          # one division: nothing to do


def test_placement_opponents_are_spread_over_the_ranking():
    assert opponents(BOTS, 3) == ["b01", "b05", "b08"]   # top, middle, bottom
    assert opponents(BOTS, 1) == ["b05"]
    assert opponents(BOTS[:2], 4) == ["b00", "b00", "b01", "b01"]
    assert opponents([], 3) == [] and opponents(BOTS, 0) == []


def test_a_newcomer_goes_to_the_division_its_rating_belongs_to():
    ratings = {b: 100.0 - 10 * i for i, b in enumerate(BOTS)}
    divisions = split(BOTS, count=2)                     # b00-b04 (100..60) | b05-b09 (50..10)
    assert place(1000.0, divisions, ratings) == 0
    assert place(65.0, divisions, ratings) == 0          # below b03 (70), above b04 (60)
    assert place(55.0, divisions, ratings) == 0          # just below b04: its division
    assert place(45.0, divisions, ratings) == 1
    assert place(-5.0, divisions, ratings) == 1
    assert place(None, divisions, ratings) == 1          # unrated: the bottom
    assert place(0.0, {}, {}) == 0


def test_ranked_puts_unrated_bots_last_by_name():
    assert ranked(["c", "a", "b", "z"], {"z": -5.0, "b": 3.0}) == ["b", "z", "a", "c"]
