"""The product's conventions for numbers and words a person reads (sueca.arena.format): one
em dash for a missing value, LOW..HIGH intervals, times per move to three significant
figures, and a fault's win said as such."""

from __future__ import annotations

import math

import pytest

from sueca.arena.format import MISSING, clean, end_word, fmt, interval, ms, outcome_words, pm


@pytest.mark.parametrize("value", [None, math.nan, math.inf, -math.inf])
def test_a_missing_value_is_one_em_dash(value) -> None:
    assert fmt(value) == MISSING == "—"
    assert pm(1500.0, value) == "1500 ± —"
    assert clean({"x": [value, 1.5]}) == {"x": [None, 1.5]}


def test_an_interval_reads_unambiguously_with_negative_bounds() -> None:
    assert interval(57.123, 70.3, unit="%") == "57.1%..70.3%"
    assert interval(-12.0, -3.5) == "-12.0..-3.5"
    assert interval(None, 3.0) == MISSING


@pytest.mark.parametrize(("value", "shown"), [(0.0252, "25.2 µs"), (0.000798, "0.798 µs"),
                                             (0.1, "0.100 ms"), (12.345, "12.3 ms"),
                                             (250.0, "250 ms"), (0.0, "0 ms")])
def test_times_per_move_keep_three_significant_figures(value, shown) -> None:
    assert ms(value) == shown


def test_a_fault_win_says_so_rather_than_show_a_score_never_played_for() -> None:
    assert outcome_words(1, [0, 0], "timeout", "slowbot") == "team 1 wins on a timeout by slowbot"
    assert outcome_words(0, [4, 0], "renuncia", "reckless") == (
        "team 0 wins 4–0 on a renúncia by reckless")
    assert outcome_words(0, [4, 1], "normal") == "team 0 wins 4–1"
    assert end_word("bot_error") == "bot error" and end_word("renuncia") == "renúncia"
