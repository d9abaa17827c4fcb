"""The CLI's four tables at a narrow terminal: a bot's name is never cut or folded while a
lower-value column can be left out instead (:func:`sueca.arena.cli.common.fitted_table`)."""

from __future__ import annotations

import argparse

import pytest
from rich.console import Console

NAMES = ["heuristic-deluxe", "random-bot", "shaky"]
MIDS = [f"ladder-{k}" for k in range(3)]  # short: at 60 columns the two teams' names fit
TID = "t1-beef"


@pytest.fixture
def league(store, prefix, redis_url):
    """Three registered bots, three recorded matches among them (the last ended by a bot error),
    and a tournament of the three."""
    from sueca.arena.match_job import outcome_to_result
    from sueca.arena.schedule import round_robin, tournament_spec
    from sueca.arena.store.ratings import catch_up
    for name in NAMES:
        store.bots.add(name)
    for k, mid in enumerate(MIDS):
        a, b = NAMES[k % 3], NAMES[(k + 1) % 3]
        store.create_match(mid, {"bots": [a, b, a, b], "seed": str(k)})
        out = {"end": "bot_error" if k == 2 else "normal", "winner": 0, "game_points": [4, 1],
               "replay": None, "fault_seat": 1 if k == 2 else None,
               "fault_bot": b if k == 2 else None}
        store.record_result(mid, outcome_to_result(store.match(mid), out))
    catch_up(store)  # the live ratings, as a worker keeps them
    store.create_tournament(TID, tournament_spec(NAMES, 1, False, {}), round_robin)
    return store


def _screen(width: int) -> Console:
    return Console(width=width, force_terminal=True, record=True, color_system=None)


def _matches(store, screen: Console) -> None:
    from sueca.arena.cli.matches import print_matches
    from sueca.arena.league.view import LeagueView
    rows = LeagueView(store).matches(1, 20)["matches"]
    print_matches(rows, len(rows), screen)


def _leaderboard(store, screen: Console) -> None:
    from sueca.arena.cli.leaderboard import print_leaderboard
    from sueca.arena.leaderboard import leaderboard
    print_leaderboard(leaderboard(store), screen)


def _command(module: str, func: str):
    def show(store, screen: Console, monkeypatch: pytest.MonkeyPatch) -> None:
        import importlib
        mod = importlib.import_module(module)
        monkeypatch.setattr(mod, "console", lambda: screen)
        monkeypatch.setattr(mod, "open_store", lambda args: store, raising=False)
        monkeypatch.setattr(mod, "_registry", lambda args: (store, store.bots), raising=False)
        assert getattr(mod, func)(argparse.Namespace(json=False, redis=None)) == 0
    return show


TABLES = {"matches": lambda s, c, m: _matches(s, c),
          "leaderboard": lambda s, c, m: _leaderboard(s, c),
          "bots list": _command("sueca.arena.cli.bots", "cmd_list"),
          "tournament list": _command("sueca.arena.cli.tournament", "cmd_tournament_list")}


@pytest.mark.parametrize("width", [80, 60])
@pytest.mark.parametrize("table", list(TABLES))
def test_names_stay_whole_while_a_column_can_go(league, table, width, monkeypatch) -> None:
    screen = _screen(width)
    TABLES[table](league, screen, monkeypatch)
    text = screen.export_text()
    assert max(len(line) for line in text.splitlines()) <= width, text
    for name in NAMES:
        assert name in text, f"{table} at {width}: {name!r} cut or folded\n{text}"
    if table in ("matches", "tournament list"):
        for tid in (MIDS if table == "matches" else [TID]):
            assert tid in text, text
    assert "…" not in text, text


def test_names_fold_only_when_no_column_is_left_to_drop() -> None:
    """With nothing droppable a name folds (never cut at the screen's edge); into an unbounded
    console nothing is dropped or folded."""
    from sueca.arena.cli.common import fitted_table
    columns = (("id", None), ("bot", None), ("games", 0))
    rows = [["x" * 30, "a-bot-with-a-very-long-name", "12"]]
    narrow = _screen(40)
    narrow.print(fitted_table("T", "c", columns=columns, rows=rows, out=narrow, name=1, whole=(0,)))
    text = narrow.export_text()
    assert "x" * 30 in text and "a-bot-with-a-very-long-name" not in text
    assert "too narrow to show: games" in text
    wide = _screen(400)
    wide.print(fitted_table("T", "c", columns=columns, rows=rows, out=wide, name=1, whole=(0,)))
    text = wide.export_text()
    assert "a-bot-with-a-very-long-name" in text and "12" in text and "too narrow" not in text

