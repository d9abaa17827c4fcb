"""``sueca-arena replay verify|show``: good files pass, tampered lines are named, matches render
(from a replay file or recorded in Redis)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kits.arena import arena_env, cli
from rich.console import Console

from sueca.arena.cli import main
from sueca.arena.render import render_match


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
    assert report == {"file": str(replay_file), "records": 6, "bad": [], "ok": True, "skipped": 0}


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


@pytest.mark.parametrize("content", ["", "\n\n"])
def test_verify_a_file_with_no_record_is_an_error(tmp_path: Path, content: str) -> None:
    """Nothing verified is not "all verified": ``sueca-bot replay verify /dev/null`` exited 0."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text(content)
    bot = str(Path(sys.executable).parent / "sueca-bot")
    for path in (str(empty), "/dev/null"):
        for extra in ([], ["--json"]):
            out = subprocess.run([bot, "replay", "verify", path, *extra], capture_output=True,
                                 text=True, timeout=60)
            assert out.returncode == 2 and out.stdout == "", out
            assert out.stderr == (f"error: no records found in {path!r}: a replay file holds "
                                  "one sueca-replay/1 JSON object per line\n")


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
    assert main(["replay", "show", str(replay_file), "--match", rec["match_id"], "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == rec
    assert main(["replay", "show", str(replay_file), "--match", "no-such-match"]) == 2
    assert "'no-such-match'" in capsys.readouterr().err


def test_render_match_shows_a_renuncia(replay_file: Path) -> None:
    rec = next(r for r in lines_of(replay_file) if any(d["end"] == "renuncia" for d in r["deals"]))
    console = Console(width=100, record=True, color_system=None)
    console.print(render_match(rec))
    text = console.export_text()
    assert "renúncia" in text
    for deal in rec["deals"]:
        assert f"card points {deal['points'][0]}–{deal['points'][1]}" in text


# -- a match recorded by the arena in Redis -----------------------------------------------------
@pytest.fixture
def recorded(store, redis_url: str, prefix: str, monkeypatch: pytest.MonkeyPatch) -> dict:
    """A match played and recorded as a worker does it (runner.play_and_record, local runner)."""
    from sueca.arena.match_job import play_and_record
    from sueca.arena.schedule import match_spec

    monkeypatch.setenv("SUECA_KEY_PREFIX", prefix)     # the CLI's Store sees this test's keys
    monkeypatch.delenv("SUECA_REDIS_URL", raising=False)
    mid = "rs-heur-rand"
    assert store.create_match(mid, match_spec(mid, ["heuristic", "random"] * 2, seed="7", first_dealer=0, variant={}))
    assert play_and_record(store, mid, mode="local")["status"] == "recorded"
    return {"id": mid, "url": redis_url, "prefix": prefix, "replay": store.replay(mid)}


def test_show_a_match_recorded_in_redis(recorded: dict,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["replay", "show", recorded["id"], "--redis", recorded["url"]]) == 0
    out = capsys.readouterr().out
    assert recorded["id"] in out and "heuristic" in out and "random" in out
    assert "deal 1" in out and "taken by" in out and "cross" in out and "wins the match" in out
    rec = recorded["replay"]
    for deal in rec["deals"]:
        assert f"card points {deal['points'][0]}–{deal['points'][1]}" in out
    # --json is the replay record itself, and `matches show ID` shows the same match
    assert main(["replay", "show", recorded["id"], "--redis", recorded["url"], "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == rec
    assert main(["matches", "show", recorded["id"], "--redis", recorded["url"]]) == 0
    assert capsys.readouterr().out == out
    assert main(["matches", "show", recorded["id"], "--redis", recorded["url"], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["replay"] == rec


def test_show_unknown_match_id_is_a_user_error(recorded: dict) -> None:
    env = arena_env(recorded["url"], recorded["prefix"])
    out = cli("replay", "show", "no-such-match", "--redis", recorded["url"], check=2, env=env)
    assert out.stderr.startswith("error: unknown match 'no-such-match'")
    assert "Traceback" not in out.stderr
    # the recorded one is found by the same command line
    shown = cli("replay", "show", recorded["id"], env=env)  # the URL from SUECA_REDIS_URL
    assert "deal 1" in shown.stdout


def test_show_needs_redis_or_a_file(capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from sueca.arena.redisproc import free_port

    monkeypatch.delenv("SUECA_REDIS_URL", raising=False)
    assert main(["replay", "show", "nope.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "'nope.jsonl'" in err and "--redis URL" in err
    url = f"redis://127.0.0.1:{free_port()}/0"
    out = cli("replay", "show", "some-match", "--redis", url, check=2, timeout=30)
    assert out.stderr.startswith(f"error: cannot reach Redis at {url}")
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("line", [
    '{"format":"sueca-replay/1","match_id":"m","variant":"x","deals":"x"}',
    '{"format":"sueca-replay/1","match_id":"m","variant":{},"deals":[{"dealer":9}]}',
])
def test_show_malformed_record_is_a_user_error(line: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    assert main(["replay", "show", str(path)]) == 2
    err = capsys.readouterr().err
    assert "'m'" in err and "not a valid replay" in err
