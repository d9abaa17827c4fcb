"""``sueca-arena selfplay``: in-process through arena.cli.main, and as the installed command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sueca.arena.cli import main
from sueca.arena.cli.selfplay import wilson
from sueca.engine import replay as replays
from sueca.sdk import selfplay as sdk_selfplay

SUECA_ARENA = str(Path(sys.executable).parent / "sueca-arena")


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["selfplay", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selfplay", "--bots", "heuristic,random", "--matches", "12", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    for word in ("heuristic", "random", "win rate", "95% interval", "points/deal", "faults",
                 "12 matches"):
        assert word in out


def test_json_summary_and_replays(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    s = run_json(capsys, "--bots", "heuristic,reckless", "--matches", "10", "--seed", "5",
                 "--variant", "tie=double", "target=8", "--replays", str(path))
    assert s["matches"] == 10 and s["variant"]["tie"] == "double" and s["variant"]["target"] == 8
    heur, reck = s["bots"]
    assert (heur["name"], reck["name"]) == ("heuristic", "reckless")
    assert heur["wins"] + reck["wins"] == 10
    assert 0 <= heur["ci95"][0] <= heur["win_rate"] <= heur["ci95"][1] <= 1
    assert reck["faults"] > 0 and heur["faults"] == 0
    lines = path.read_text().splitlines()
    assert len(lines) == 10
    recs = [json.loads(line) for line in lines]
    assert all(replays.verify(r) == [] for r in recs)
    # bot A sits in seats 0 and 2 in even matches, 1 and 3 in odd ones
    assert recs[0]["seats"] == ["heuristic", "reckless"] * 2
    assert recs[1]["seats"] == ["reckless", "heuristic"] * 2
    renuncias = sum(d["end"] == "renuncia" for r in recs for d in r["deals"])
    assert renuncias == reck["faults"]


def test_same_seed_same_result(capsys: pytest.CaptureFixture[str]) -> None:
    runs = [run_json(capsys, "--bots", "random,random", "--matches", "6", "--seed", "x1")
            for _ in range(2)]
    for r in runs:
        r.pop("seconds")
    assert runs[0] == runs[1]
    assert [b["name"] for b in runs[0]["bots"]] == ["random#1", "random#2"]


def test_duplicate_pairs_share_cards(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    s = run_json(capsys, "--bots", "heuristic,random", "--matches", "4", "--duplicate",
                 "--replays", str(path))
    assert s["duplicate"] is True
    a, b, c, _ = (json.loads(line) for line in path.read_text().splitlines())
    assert a["seed"] == b["seed"] != c["seed"]
    assert a["deals"][0]["deck"] == b["deals"][0]["deck"]
    assert a["deals"][0]["dealer"] == b["deals"][0]["dealer"]
    assert b["seats"] == [a["seats"][1], a["seats"][0], a["seats"][3], a["seats"][2]]


@pytest.mark.parametrize("argv, quoted", [
    (["--bots", "random,random", "--variant", "tie=sometimes"], "'sometimes'"),
    (["--bots", "random,random", "--variant", "colour=blue"], "'colour'"),
    (["--bots", "random,genius"], "'genius'"),
    (["--bots", "random"], "'random'"),
    (["--bots", "random,random", "--matches", "3", "--duplicate"], "3"),
    (["--bots", "random,random", "--matches", "0"], "0"),
])
def test_user_errors(capsys: pytest.CaptureFixture[str], argv: list[str], quoted: str) -> None:
    assert main(["selfplay", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and quoted in err


def test_wilson_interval() -> None:
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(10, 10)[1] == 1.0


def test_installed_command_table_and_json() -> None:
    table = subprocess.run([SUECA_ARENA, "selfplay", "--bots", "heuristic,random", "--matches",
                            "8", "--seed", "1"], capture_output=True, text=True, timeout=60)
    assert table.returncode == 0, table.stderr
    assert "heuristic" in table.stdout and "win rate" in table.stdout
    assert table.stderr == ""  # no progress bar when stderr is not a terminal
    js = subprocess.run([SUECA_ARENA, "selfplay", "--bots", "heuristic,random", "--matches",
                         "8", "--seed", "1", "--json"], capture_output=True, text=True, timeout=60)
    assert js.returncode == 0, js.stderr
    assert json.loads(js.stdout)["matches"] == 8


def test_installed_command_bad_variant_is_a_clean_error() -> None:
    p = subprocess.run([SUECA_ARENA, "selfplay", "--bots", "random,random", "--variant",
                        "target=5"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "error: " in p.stderr and "5" in p.stderr and "'target'" in p.stderr
    assert "Traceback" not in p.stderr
    p = subprocess.run([SUECA_ARENA, "selfplay", "--bots", "random,nobody"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and "'nobody'" in p.stderr and "Traceback" not in p.stderr



def test_python_m_arena_cli_user_error_is_clean() -> None:
    # run as __main__, the command modules' arena.cli.UserError must still be caught
    p = subprocess.run([sys.executable, "-m", "sueca.arena.cli", "selfplay", "--bots", "nope,random"],
                       capture_output=True, text=True, timeout=60,
                       cwd=Path(__file__).resolve().parents[3])
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("error: ") and "'nope'" in p.stderr
    assert "Traceback" not in p.stderr

def test_weak_hand_redeals_are_recorded_and_verify(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    s = run_json(capsys, "--bots", "heuristic,random", "--matches", "30", "--variant",
                 "weak_hand_redeal=on", "trump_card=first", "--replays", str(path))
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    redeals = sum(d["end"] == "redeal" for r in recs for d in r["deals"])
    assert redeals > 0
    assert all(replays.verify(r) == [] for r in recs)
    assert s["deals"] == sum(len(r["deals"]) for r in recs) - redeals  # redeals are no deals


def test_one_implementation_shared_with_the_sdk() -> None:
    """sueca-arena selfplay is the SDK's: the same functions, not a copy."""
    from sueca.arena.cli import selfplay as arena_selfplay
    from sueca.sdk.cli import selfplay as sdk_command
    assert arena_selfplay.wilson is sdk_selfplay.wilson
    assert arena_selfplay.run is sdk_command.run


def test_arena_and_sdk_print_the_same_summary(capsys: pytest.CaptureFixture[str]) -> None:
    from sueca.sdk.cli import main as sueca_bot
    argv = ["selfplay", "--bots", "heuristic,random", "--matches", "6", "--seed", "4", "--json"]
    assert main(argv) == 0
    arena = json.loads(capsys.readouterr().out)
    assert sueca_bot(argv) == 0
    sdk = json.loads(capsys.readouterr().out)
    arena.pop("seconds"), sdk.pop("seconds")
    assert arena == sdk


def test_the_local_runner_loads_a_bot_file_like_selfplay(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """sueca.arena.match_job.run_local uses the SDK's one loader: ./file.py:Class works there too."""
    from sueca.arena.match_job import Permanent, run_local
    (tmp_path / "lastcard.py").write_text(
        "from sueca.sdk import Bot\n\n\nclass Last(Bot):\n"
        "    def play(self, observation):\n        return observation.legal[-1]\n")
    monkeypatch.chdir(tmp_path)
    bots = ["./lastcard.py:Last", "random", "./lastcard.py:Last", "random"]
    out = run_local({"bots": bots, "seed": 3, "match_id": "m-1"})
    assert out["end"] == "normal" and replays.verify(out["replay"]) == []
    with pytest.raises(Permanent, match="no file './gone.py'"):
        run_local({"bots": ["./gone.py:Last", "random", "random", "random"], "seed": 3})



def test_a_bot_that_raises_is_named_with_the_match_and_where_it_raised(tmp_path: Path) -> None:
    """A bot author's bug ends the run with one line: the match, its seed, the exception and
    the line of the bot that raised it (not the runner's traceback, which names no match)."""
    (tmp_path / "buggy.py").write_text(
        "from sueca.sdk import Bot\n\n\nclass Buggy(Bot):\n"
        "    def play(self, obs):\n        if len(obs.hand) < 6:\n"
        "            return {}['no ' + 'x' * 500]\n        return obs.legal[0]\n")
    out = subprocess.run([SUECA_ARENA, "selfplay", "--bots", "buggy.py:Buggy,random",
                          "--matches", "3"], capture_output=True, text=True, cwd=tmp_path,
                         timeout=60)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("error: match selfplay-0-0 (seats buggy:Buggy, random, "
                                 "buggy:Buggy, random, match seed "), out.stderr
    assert "a bot raised KeyError: " in out.stderr and "Traceback" not in out.stderr
    assert "(505 long)" in out.stderr                      # the message is capped
    assert out.stderr.rstrip().endswith(f"at {tmp_path / 'buggy.py'}:7 in play"), out.stderr


GREEDY = ("from sueca.sdk import Bot\n\n\nclass Greedy(Bot):\n"
          "    def play(self, observation):\n        return observation.legal[0]\n")


@pytest.mark.parametrize("command", ["sueca-arena", "sueca-bot"])
def test_a_path_named_bot_gets_a_short_name_and_name_sets_it(command: str,
                                                              tmp_path: Path) -> None:
    """A bot given by a long path is named file:Class in the table and the replays (the table
    stays within 80 columns); --name, once per bot, names them instead."""
    deep = tmp_path.joinpath(*(["a-rather-long-folder-name"] * 4))
    deep.mkdir(parents=True)
    (deep / "greedy.py").write_text(GREEDY)
    spec = f"{deep / 'greedy.py'}:Greedy"
    assert len(spec) > 100
    binary = str(Path(sys.executable).parent / command)
    replays_path = tmp_path / "r.jsonl"
    out = subprocess.run([binary, "selfplay", "--bots", f"{spec},random", "--matches", "2",
                          "--replays", str(replays_path)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("greedy:Greedy ")]
    assert rows and str(deep) not in out.stdout, out.stdout
    table = out.stdout.split("\nreplays appended")[0].splitlines()
    assert max(len(line) for line in table) <= 80, out.stdout
    assert "greedy:Greedy" in json.loads(replays_path.read_text().splitlines()[0])["seats"]
    named = subprocess.run([binary, "selfplay", "--bots", f"{spec},random", "--matches", "2",
                            "--name", "mine", "--name", "theirs", "--json"],
                           capture_output=True, text=True, timeout=60)
    assert named.returncode == 0, named.stderr
    summary = json.loads(named.stdout)
    assert [b["name"] for b in summary["bots"]] == ["mine", "theirs"]
    assert summary["bots"][0]["spec"] == spec  # the spec itself stays in the JSON


@pytest.mark.parametrize("names, quoted", [
    (["a", "b", "c"], "'c'"),
    (["  "], "'  '"),
    (["x" * 41], "'" + "x" * 40),
    (["bad\x1bname"], "bad\\x1bname"),
])
def test_a_bad_name_is_one_line_quoting_it(capsys: pytest.CaptureFixture[str],
                                           names: list[str], quoted: str) -> None:
    argv = ["selfplay", "--bots", "random,random"]
    for name in names:
        argv += ["--name", name]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: bad --name ") and quoted in err and err.count("\n") == 1, err
