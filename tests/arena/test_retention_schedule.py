"""Retention on a schedule (what ``serve`` runs every hour): a run records its policy and counts
where the web's health reads them, and archive files past their age are removed."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sueca.arena.retention import DAY, Schedule, prune_archive, schedule_status


def test_a_scheduled_run_says_what_it_did_where_the_health_page_reads_it(
        store: Any, tmp_path: Path) -> None:
    assert schedule_status(store) is None  # no schedule on this arena
    schedule = Schedule(store, 1.0, tmp_path / "archive", 7.0, every=3600.0, first=0.0)
    status = schedule_status(store)
    assert status is not None and status["retain_days"] == 1.0 and status["last_run"] is None
    assert schedule.due()
    summary = schedule.run_once()
    assert "error" not in summary and summary["matches_archived"] == 0, summary
    assert not schedule.due()  # the next one in an hour
    status = schedule_status(store)
    assert status is not None and status["last_run"] == summary
    assert status["archive"] == str(tmp_path / "archive") and status["every_seconds"] == 3600.0


def test_old_archive_files_are_removed_and_recent_ones_kept(tmp_path: Path) -> None:
    today = datetime.fromtimestamp(time.time(), UTC).strftime("%Y-%m-%d")
    old = datetime.fromtimestamp(time.time() - 9 * DAY, UTC).strftime("%Y-%m-%d")
    files = [tmp_path / kind / f"{day}.jsonl.gz" for kind in ("matches", "results")
             for day in (today, old)]
    other = tmp_path / "matches" / "notes.jsonl.gz"
    for f in [*files, other]:
        f.parent.mkdir(exist_ok=True)
        f.write_bytes(b"")
    gone = prune_archive(tmp_path, 7.0)
    assert sorted(gone) == sorted(str(f) for f in files if old in f.name)
    assert all(f.exists() == (today in f.name) for f in files) and other.exists()
