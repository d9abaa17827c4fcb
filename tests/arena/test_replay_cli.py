"""``sueca-arena replay verify|show``: good files pass, tampered lines are named, matches render."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from arena.cli import main
from arena.render import render_match


@pytest.fixture(scope="module")
def replay_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("replays") / "r.jsonl"
    assert main(["selfplay", "--bots", "heuristic,reckless", "--matches", "6", "--seed", "8",
                 "--replays", str(path), "--json"]) == 0
    return path


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_verify_good_file(replay_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["replay", "verify", str(replay_file)]) == 0
    assert "6 records" in capsys.readouterr().out
    assert main(["replay", "verify", str(replay_file), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {"file": str(replay_file), "records": 6, "bad": [], "ok": True}


def test_verify_names_tampered_line(replay_file: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    recs = lines_of(replay_file)
    recs[2]["deals"][0]["points"] = [recs[2]["deals"][0]["points"][0] + 1, 0]  # line 3
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in recs) + "\n{not json\n")
    capsys.readouterr()
    assert main(["replay", "verify", str(bad), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [b["line"] for b in report["bad"]] == [3, 7]
    assert report["bad"][0]["match_id"] == recs[2]["match_id"]
    assert "points" in report["bad"][0]["problems"][0]
    assert "not JSON" in report["bad"][1]["problems"][0]
    assert main(["replay", "verify", str(bad)]) == 1
    out = capsys.readouterr().out
    assert recs[2]["match_id"] in out and "2 of 7 records" in out


def test_verify_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "nope.jsonl")
    assert main(["replay", "verify", missing]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "nope.jsonl" in err


def test_show_match(replay_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rec = lines_of(replay_file)[1]
    capsys.readouterr()
    assert main(["replay", "show", str(replay_file), "--match", rec["match_id"]]) == 0
    out = capsys.readouterr().out
    assert rec["match_id"] in out and "heuristic" in out and "reckless" in out
    assert "deal 1" in out and "cross" in out and "wins the match" in out
    assert main(["replay", "show", str(replay_file), "--match", "no-such-match"]) == 2
    assert "'no-such-match'" in capsys.readouterr().err


def test_render_match_shows_a_renuncia(replay_file: Path) -> None:
    rec = next(r for r in lines_of(replay_file) if any(d["end"] == "renuncia" for d in r["deals"]))
    console = Console(width=100, record=True, color_system=None)
    console.print(render_match(rec))
    text = console.export_text()
    assert "renuncia" in text
    for deal in rec["deals"]:
        assert f"card points {deal['points'][0]}-{deal['points'][1]}" in text
