"""The leaderboard's terminal table on an 80-column console (real Redis, matches played and
recorded locally): every number of every row is shown whole, none cut to ``…``."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from sueca.arena.bots import BotRegistry
from sueca.arena.cli.leaderboard import print_leaderboard
from sueca.arena.leaderboard import leaderboard
from sueca.arena.runner import play_and_record

BOTS = ("heuristic", "random", "reckless")


def _numbers(row: dict[str, Any]) -> list[str]:
    """What the table must show of a row, written out here rather than taken from the code."""
    f = row["faults"]
    pm = "—" if row["rating_pm"] is None else f"{row['rating_pm']:.0f}"
    return [f"{row['rating']:.0f} ± {pm}", str(row["matches"]), f"{row['elo']:.0f}",
            f"{row['mu']:.1f} ± {row['mu_pm']:.1f}",
            f"{f['renuncia']}/{f['timeout']}/{f['disconnect']}"]


@pytest.fixture
def played(store):
    for b in BOTS:
        BotRegistry(store.r, store.keys).add(b)
    seats = [("heuristic", "random"), ("reckless", "heuristic"), ("random", "reckless")]
    for i, (a, b) in enumerate(seats * 2):
        store.create_match(f"lb{i}", {"bots": [a, b, a, b], "seed": str(i)})
        assert play_and_record(store, f"lb{i}", mode="local")["status"] == "recorded"
    return store


@pytest.mark.parametrize("width", [80, 120])
def test_every_number_is_whole_on_a_narrow_terminal(played, width: int) -> None:
    rows = leaderboard(played)
    assert [r["bot"] for r in rows] and all(r["matches"] for r in rows)
    buf = io.StringIO()
    print_leaderboard(rows, Console(file=buf, width=width))
    text = buf.getvalue()
    assert "…" not in text, text
    assert max(len(line) for line in text.splitlines()) <= width
    for row in rows:
        line = next((x for x in text.splitlines() if f" {row['bot']}" in x), None)
        assert line is not None, text
        assert line.split("│")[1].strip() == str(row["rank"]), line
        for number in _numbers(row):
            assert number in line, (number, line)


def test_a_terminal_too_narrow_for_every_column_leaves_some_out_and_says_so(played) -> None:
    rows = leaderboard(played)
    buf = io.StringIO()
    print_leaderboard(rows, Console(file=buf, width=50))
    text = buf.getvalue()
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 50
    for row in rows:
        line = next(x for x in text.splitlines() if f" {row['bot']}" in x)
        assert line.split("│")[1].strip() == str(row["rank"])
        assert f"{row['rating']:.0f} ± " in line, line
    flat = " ".join(text.split())
    assert "too narrow to show: p50 ms" in flat and "--json has every column" in flat
