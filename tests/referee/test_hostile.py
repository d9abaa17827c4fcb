"""Hostile bots against a referee that also plays honest matches: every attack is contained and
the honest matches keep at least 0.8x their speed without it.

The run is ``sueca-arena bench hostile`` itself (small rounds): a private Redis, a referee, two
honest random bots and, per attack, an attacker process (unread fault floods, a one-action
message flood, hello-less streams, oversized names and wrong tokens, connection churn). Speeds
are compared round by round with the baselines just before and after each attack, and the
median over rounds is kept, so a noisy shared machine hits both sides alike.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
from pathlib import Path

import pytest

from sueca.arena.bench import hostile

pytestmark = pytest.mark.slow


def _measure(attacks: list[str]) -> dict:
    args = argparse.Namespace(attacks=",".join(attacks), rounds=3, matches=24, concurrency=16,
                              keep_logs=True,
                              # small enough that the unread flood is cut off (and comes back)
                              # within a round, as it would be after minutes at the default
                              referee_args="--out-bytes 100000 --errors-per-second 1000 "
                                           "--hello-seconds 2")
    return hostile.measure(args)


def test_hostile_bots_are_contained_and_honest_matches_keep_their_speed():
    result = _measure(list(hostile.ATTACKS))
    logs = Path(result["logs"])
    try:
        hits = result["limit_hits"]
        assert result["abnormal"] == 0, result
        # each attack met the limit meant for it
        assert hits["unread"].get("out_queue", 0) >= 1, hits
        assert hits["rate"].get("read_throttle", 0) >= 1, hits
        assert hits["hello_less"].get("streams_per_connection", 0) + \
            hits["hello_less"].get("connections_per_address", 0) >= 1, hits
        assert hits["hello_less"].get("hello_deadline", 0) >= 1, hits
        assert hits["bad_hello"].get("refusals", 0) >= 1, hits
        assert hits["churn"].get("hellos", 0) >= 1, hits
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
        again = _measure(slow)
        shutil.rmtree(again["logs"], ignore_errors=True)
        for a in slow:
            per_round[a] = per_round[a] + again["round_ratios"][a]
    medians = {a: statistics.median(r) for a, r in per_round.items()}
    assert all(m >= 0.8 for m in medians.values()), (medians, per_round)
