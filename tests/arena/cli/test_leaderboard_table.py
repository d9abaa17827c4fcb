"""The leaderboard's terminal table on an 80-column console (real Redis, matches played and
recorded locally): every number of every row is shown whole, none cut to ``…``."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from sueca.arena.cli.leaderboard import print_leaderboard
from sueca.arena.leaderboard import leaderboard
from sueca.arena.match_job import play_and_record

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
        store.bots.add(b)
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
    assert "p50" in flat.split("too narrow to show:")[1] and "--json has every column" in flat


def test_the_tournament_table_is_fitted_the_same_way() -> None:
    """The standings of `tournament run/show`: ten columns, every number whole at 80."""
    from sueca.arena.cli.tournament import print_table
    standings = [{"bot": name, "units": 120, "won": 61, "drawn": 3, "lost": 56,
                  "points": 62.5, "win_pct": 52.1, "gp_for": 410, "gp_against": 398,
                  "rating": 1512.4, "rating_pm": 87.2, "elo": 1544.9, "faults": 12}
                 for name in ("a-rather-long-bot-name", "heuristic")]
    report = {"tournament": "t20261201-070000-abcd", "recorded": 240, "matches": 240,
              "format": "round-robin", "spec": {"duplicate": True}, "standings": standings,
              "failed": [], "cross": []}
    for width in (80, 120):
        buf = io.StringIO()
        print_table(report, Console(file=buf, width=width))
        text = buf.getvalue()
        assert "…" not in text and max(len(x) for x in text.splitlines()) <= width, text
        for number in ("61-3-56", "62.5", "1512 ± 87", "12"):
            assert number in text, (width, number, text)
        flat = " ".join(text.split())
        for number, header in (("52.1", "win %"), ("410–398", "game pts"), ("1545", "live Elo")):
            assert number in text or ("too narrow to show" in flat and header in flat), \
                (width, number, text)
        assert width < 120 or "too narrow" not in flat, text  # 120 shows every column
