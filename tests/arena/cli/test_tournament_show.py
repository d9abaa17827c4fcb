"""``sueca-arena tournament show``: the format and the cross table (who beat whom), in text at
80 columns and in ``--json``, from real results recorded in a real Redis."""

from __future__ import annotations

import argparse
import json

import pytest
from kits.arena import arena_env, cli
from rich.console import Console

from sueca.arena.cli import tournament as command
from sueca.arena.match_job import outcome_to_result
from sueca.arena.schedule import round_robin, tournament_spec
from sueca.engine import End

BOTS = ["alpha-long-bot-name", "bravo", "charlie"]
TID = "show-cup"


@pytest.fixture
def cup(store):
    """A round robin of three bots, two matches a pair, every one won by the bot whose name
    sorts first: alpha beats both, bravo beats charlie."""
    for b in BOTS:
        store.bots.add(b)
    store.create_tournament(TID, tournament_spec(BOTS, 2, False, {}), round_robin)
    for mid in store.tournament_matches(TID):
        seats = store.match(mid)["spec"]["bots"]
        winner = 0 if seats[0] < seats[1] else 1
        store.record_result(mid, outcome_to_result(store.match(mid), {
            "match_id": mid, "end": End.NORMAL, "winner": winner,
            "game_points": [4, 0] if winner == 0 else [0, 4], "fault_seat": None,
            "fault_bot": None, "fault_detail": None, "replay": None, "referee": "local"}))
    return store


def test_show_prints_the_format_and_the_cross_table_within_80_columns(cup, monkeypatch):
    screen = Console(width=80, force_terminal=True, record=True, color_system=None)
    monkeypatch.setattr(command, "console", lambda: screen)
    monkeypatch.setattr(command, "open_store", lambda args: cup)
    assert command.cmd_tournament_show(argparse.Namespace(json=False, redis=None, tid=TID)) == 0
    text = screen.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80, text
    assert "round-robin, 2 per pair" in text, text
    assert "Cross table" in text, text
    cross = text[text.index("Cross table"):]
    rows = {line.split("│")[2].strip(): [c.strip() for c in line.split("│")[3:6]]
            for line in cross.splitlines()
            if line.count("│") >= 6 and line.split("│")[1].strip().isdigit()}
    # rows in the standings' order (alpha first), columns numbered the same way
    assert rows == {"alpha-long-bot-name": ["·", "2-0-0", "2-0-0"],
                    "bravo": ["0-0-2", "·", "2-0-0"],
                    "charlie": ["0-0-2", "0-0-2", "·"]}, cross


def test_show_json_has_the_format_and_the_cross_table(cup, redis_url, prefix):
    out = cli("tournament", "show", TID, "--redis", redis_url, "--json",
              env=arena_env(redis_url, prefix))
    report = json.loads(out.stdout)
    assert report["format"] == "round-robin" and report["spec"]["matches_per_pair"] == 2
    cells = {(r["bot"], c["opponent"]): (c["won"], c["drawn"], c["lost"])
             for r in report["cross"] for c in r["cells"]}
    assert [r["bot"] for r in report["cross"]] == ["alpha-long-bot-name", "bravo", "charlie"]
    assert cells == {("alpha-long-bot-name", "bravo"): (2, 0, 0),
                     ("alpha-long-bot-name", "charlie"): (2, 0, 0),
                     ("bravo", "alpha-long-bot-name"): (0, 0, 2),
                     ("bravo", "charlie"): (2, 0, 0),
                     ("charlie", "alpha-long-bot-name"): (0, 0, 2),
                     ("charlie", "bravo"): (0, 0, 2)}


def test_a_cross_table_too_wide_for_80_columns_becomes_one_line_per_pair():
    bots = [f"a-rather-long-bot-name-{n:02d}" for n in range(12)]
    cross = [{"bot": a, "cells": [{"opponent": b, "won": 1, "drawn": 0, "lost": 1}
                                  for b in bots if b != a]} for a in bots]
    report = {"cross": cross, "spec": {"duplicate": False}}
    screen = Console(width=80, force_terminal=True, record=True, color_system=None)
    command.print_cross(report, screen)  # type: ignore[arg-type]
    lines = screen.export_text().splitlines()
    assert max(len(line) for line in lines) <= 80, lines
    pairs = [line for line in lines if " 1-0-1 " in line]
    assert len(pairs) == 12 * 11 // 2  # each pair once, names whole
    assert f"  {bots[0]} 1-0-1 {bots[11]}" in pairs
