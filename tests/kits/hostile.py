"""The hostile-bot tests' run: ``sueca-arena bench hostile`` itself (small rounds) on a private
Redis, a referee, two honest random bots and, per attack, an attacker process. Speeds are
compared round by round with the baselines just before and after each attack, and the median
over rounds is kept, so a noisy shared machine hits both sides alike.

:func:`contained` runs some attacks and checks what holds for every one of them (no abnormal
match, a clean and bounded referee log, the honest matches at 0.8x their speed or better); the
tests (tests/referee/test_hostile_*.py) check the limit each attack must meet.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
from pathlib import Path
from typing import Any

from sueca.arena.bench import hostile


def measure(attacks: list[str]) -> dict[str, Any]:
    args = argparse.Namespace(attacks=",".join(attacks), rounds=3, matches=24, concurrency=16,
                              keep_logs=True,
                              # small enough that the unread flood is cut off (and comes back)
                              # within a round, as it would be after minutes at the default
                              referee_args="--out-bytes 100000 --errors-per-second 1000 "
                                           "--hello-seconds 2")
    return hostile.measure(args)


def contained(attacks: list[str]) -> dict[str, dict[str, int]]:
    """Run ``attacks``; return each one's limit hits (limit -> count) once the checks common to
    all have passed."""
    result = measure(attacks)
    logs = Path(result["logs"])
    try:
        assert result["abnormal"] == 0, result
        assert result["referee_rss_mb"] is not None and result["referee_rss_mb"] < 250, result
        log = (logs / "referee.log").read_text(errors="replace")
        assert "Traceback" not in log and "ExecuteBatchError" not in log
        assert "xxxxxxxxxx" * 10 not in log          # the 60 KB name never reaches the log
        assert not any(line.startswith("2026-01-01") for line in log.splitlines())  # forged
        assert len(log) < 200_000, len(log)          # summaries, not a line per attempt
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    # and each cost the honest matches at most a fifth of their speed: the median over rounds
    # of (attack round / the baselines around it). The machine may be shared, and one step of a
    # few seconds can lose 40% to a neighbour's burst; an attack below 0.8 is measured for 3
    # more rounds and judged on the median of all 6, so a real regression still fails.
    per_round = result["round_ratios"]
    slow = [a for a, r in result["ratios"].items() if r < 0.8]
    if slow:
        again = measure(slow)
        shutil.rmtree(again["logs"], ignore_errors=True)
        for a in slow:
            per_round[a] = per_round[a] + again["round_ratios"][a]
    medians = {a: statistics.median(r) for a, r in per_round.items()}
    assert all(m >= 0.8 for m in medians.values()), (medians, per_round)
    hits: dict[str, dict[str, int]] = result["limit_hits"]
    assert set(hits) == set(attacks), hits
    return hits
