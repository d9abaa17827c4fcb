"""Fair play's pure rules: which outcomes count, X of the last Y, the hourly challenge cap, and
bad rules and requests quoted."""

from __future__ import annotations

import pytest

from sueca.arena import settings
from sueca.arena.fairplay import (
    CHALLENGE_WINDOW,
    FairPlayError,
    Rule,
    challenge_matches,
    counted,
    next_challenge,
    outcome_of,
    parse_rule,
    reason,
    rule_of,
    tripped,
)


def outs(faults: str, version: int = 1, first: int = 1) -> list:
    """Outcomes newest first from a string, oldest on the left: ``x`` a fault, ``.`` none."""
    got = [{"entry": f"{first + i}-0", "match": f"m{first + i}", "fault": "bot_error" if c == "x"
            else "", "version": version} for i, c in enumerate(faults)]
    return got[::-1]


@pytest.mark.parametrize("history, rule, expect", [
    ("xxxxx", Rule(5, 10), 5),           # faulted in its first five: suspended at once
    ("xxxx", Rule(5, 10), None),         # four is not five
    ("xxxxx.....", Rule(5, 10), 5),      # the five still in the last ten
    ("xxxxx......", Rule(5, 10), None),  # the oldest fault slid out of the window
    ("x.x.x.x.x.", Rule(5, 10), 5),
    (".........x", Rule(1, 1), 1),       # 1/1: any fault in the last match
    ("x.........", Rule(1, 1), None),
    ("x" * 100, Rule(100, 100), 100),
])
def test_x_of_the_last_y(history, rule, expect):
    got = tripped(outs(history), rule)
    assert (None if got is None else len(got)) == expect
    if got:
        assert all(o["fault"] for o in got)


def test_only_this_version_after_the_lift_counts():
    old = outs("xxxxx", version=1, first=1)
    new = outs("..", version=2, first=6)
    both = new + old
    assert len(counted(both, version=1)) == 5
    assert counted(both, version=2) == new
    assert tripped(counted(both, version=2), Rule(5, 10)) is None
    # a lift after entry 3-0: only the two faults after it count
    assert [o["match"] for o in counted(old, version=1, after="3-0")] == ["m5", "m4"]
    assert counted(old, version=1, after="9-0") == []
    # entry ids compare as Redis orders them, not as text ("10-0" after "9-0")
    assert [o["match"] for o in counted(outs("x" * 10), version=1, after="9-0")] == ["m10"]


def test_what_counts_as_a_fault():
    base = {"match_id": "m", "seats": ["a", "b", "a", "b"], "winner": 1}
    for end in ("bot_error", "timeout", "disconnect"):
        assert outcome_of({**base, "end": end, "fault_bot": "a"}, "a") == (end, 1)
        assert outcome_of({**base, "end": end, "fault_bot": "a"}, "b") == ("", 1)  # its foe's
    assert outcome_of({**base, "end": "renuncia", "fault_bot": "a"}, "a") == ("", 1)
    assert outcome_of({**base, "end": "normal", "fault_bot": None}, "a") == ("", 1)
    assert outcome_of({**base, "end": "timeout", "fault_bot": "a",
                       "versions": {"a": 3, "b": 1}}, "a") == ("timeout", 3)


@pytest.mark.parametrize("raw, expect", [("5/10", Rule(5, 10)), (" 3 / 3 ", Rule(3, 3)),
                                         ("off", None), ("OFF", None), ("0", None)])
def test_rules_parse(raw, expect):
    assert parse_rule(raw) == expect


@pytest.mark.parametrize("raw", ["5", "5-10", "11/10", "0/10", "5/101", "a/b", "", "-1/5"])
def test_bad_rules_are_quoted(raw):
    with pytest.raises(FairPlayError) as err:
        parse_rule(raw)
    assert "X/Y" in str(err.value)
    assert (repr(raw) in str(err.value)) or ("/" in raw and raw.split("/")[0].strip() in str(err.value))


def test_the_setting_quotes_a_bad_value(monkeypatch):
    monkeypatch.setenv("SUECA_SUSPEND_AFTER", "7/5")
    with pytest.raises(settings.SettingsError) as err:
        settings.current()
    assert "SUECA_SUSPEND_AFTER='7/5'" in str(err.value) and "X/Y" in str(err.value)
    monkeypatch.setenv("SUECA_SUSPEND_AFTER", "off")
    assert settings.current().suspend_after is None
    monkeypatch.delenv("SUECA_SUSPEND_AFTER")
    assert settings.current().suspend_after == Rule(5, 10)


def test_a_competition_rule():
    assert rule_of({"faults": 3, "of_last": 6, "challenges_per_hour": 2}) == Rule(3, 6)
    assert rule_of({"faults": 0, "of_last": 6}) is None
    assert rule_of(None) is None
    with pytest.raises(FairPlayError, match="9/6"):
        rule_of({"faults": 9, "of_last": 6})


def test_the_reason_names_faults_and_matches():
    s = {"bot": "a", "competition": "ladder", "rule": "2/4", "version": 1, "entry": "9-0",
         "at": None, "recorded": False,
         "faults": [{"match": "m9", "end": "timeout", "entry": "9-0"},
                    {"match": "m7", "end": "bot_error", "entry": "7-0"}]}
    assert reason(s) == ("faulted in 2 of its last 4 matches (suspended at 2): "
                         "bot_error ×1, timeout ×1 in m9, m7")


def test_the_challenge_cap():
    now = 10_000.0
    assert next_challenge([], per_hour=2, now=now) is None
    assert next_challenge([now - 10], per_hour=2, now=now) is None
    # two in the last hour: the next when the older leaves the window
    assert next_challenge([now - 100, now - 10], per_hour=2, now=now) == now - 100 + CHALLENGE_WINDOW
    # one just outside the hour does not count
    assert next_challenge([now - CHALLENGE_WINDOW, now - 10], per_hour=2, now=now) is None
    assert next_challenge([now - 30, now - 20, now - 10], per_hour=2, now=now) == now - 20 + 3600
    assert next_challenge([], per_hour=0, now=now) == float("inf")


@pytest.mark.parametrize("n", [0, 1, 3, 22, -2])
def test_bad_challenge_sizes_are_quoted(n):
    with pytest.raises(FairPlayError, match=f"matches {n}:"):
        challenge_matches(n)
    assert challenge_matches(2) == 2 and challenge_matches(20) == 20
