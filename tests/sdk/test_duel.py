"""``sueca-bot duel``: duplicate pairs on a process pool, the table, --json, the SPRT's verdict
and exit status (real ``sueca-bot`` subprocesses), and the pair bookkeeping of sueca.sdk.duel."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from kits.bots import DIR as BOTS

from sueca.engine import Variant
from sueca.sdk.duel import DuelTally, MoveClock, duel, play_pair

SUECA_BOT = shutil.which("sueca-bot") or str(Path(sys.executable).parent / "sueca-bot")


def _duel(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SUECA_BOT, "duel", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_heuristic_against_random_accepts_h1_quickly():
    out = _duel("heuristic", "random", "--sprt", "0,50", "--matches", "400", "--workers", "2",
                "--json")
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout.splitlines()[-1])
    assert s["verdict"] == "H1" and s["llr"] >= s["bounds"][1]
    assert s["matches"] < 400  # stopped by the test, not the limit
    assert s["deal_win_rate"] > 0.55 and s["elo"] > 0
    lo, hi = s["deal_win_ci"]
    assert lo < s["deal_win_rate"] < hi
    assert s["elo_ci"][0] < s["elo"] < s["elo_ci"][1]
    assert 0 <= s["match_win_rate"] <= 1 and set(s["ms_per_move"]) == {"heuristic", "random"}
    assert all(v > 0 for v in s["ms_per_move"].values())
    assert s["deals"] == s["deal_wins"] + s["deal_losses"] + s["deal_ties"] + s["fault_deals"]
    assert "LLR" in out.stderr and "[-2.94, 2.94]" in out.stderr


def test_a_bot_against_itself_does_not_accept_h1():
    out = _duel("heuristic", "heuristic", "--sprt", "0,40", "--matches", "300")
    assert out.returncode in (1, 3), out.stdout + out.stderr
    assert "H1 accepted" not in out.stdout
    assert "heuristic#1" in out.stdout and "heuristic#2" in out.stdout


def test_the_table_without_a_test():
    out = _duel("heuristic", "random", "--matches", "20", "--workers", "1")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for words in ("20 matches (10 duplicate pairs)", "deals won by heuristic",
                  "matches won by heuristic", "Elo of heuristic - random", "time/move"):
        assert words in text
    # the product's conventions: a time per move in three figures and its unit (µs below
    # 0.1 ms), the same way in both rows; intervals LOW..HIGH
    for name in ("heuristic", "random"):
        [row] = [line for line in text.splitlines() if line.startswith(name + " ")]
        times = re.findall(r"(\d+(?:\.\d+)?) (ms|µs)", row)
        assert len(times) == 2, row
        for number, unit in times:
            digits = number.replace(".", "").lstrip("0")
            assert len(digits) == 3 or float(number) >= 100, row
            assert unit == "ms" or float(number) < 100, row
    assert re.search(r"\d%\.\.\d", text) and " .. " not in text, text
    assert "SPRT" not in text and max(len(line) for line in text.splitlines()) <= 80


def test_reckless_faults_are_counted_against_it():
    out = _duel("reckless", "heuristic", "--matches", "20", "--json")
    s = json.loads(out.stdout.splitlines()[-1])
    assert s["faults"]["reckless"] > 0 and s["faults"]["heuristic"] == 0
    assert s["fault_deals"] == s["faults"]["reckless"]


@pytest.mark.parametrize("args, says", [
    (["nosuchbot", "random"], "unknown bot 'nosuchbot'"),
    (["random", "heuristic", "--sprt", "20,10"], "bad --sprt '20,10': ELO0 must be below"),
    (["random", "heuristic", "--sprt", "x" * 500], "expected two Elo numbers"),
    (["random", "heuristic", "--matches", "7"], "bad --matches 7"),
    (["random", "heuristic", "--alpha", "0.5"], "bad --alpha '0.5'"),
    (["random", "heuristic", "--workers", "0"], "bad --workers '0'"),
    (["random", "heuristic", "--variant", "tie=sideways"], "sideways"),
])
def test_usage_errors_exit_2_with_one_quoting_line(args, says):
    out = _duel(*args)
    assert out.returncode == 2
    assert says in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr) < 400 and out.stdout == ""


def test_a_bot_that_raises_in_a_worker_is_named(tmp_path):
    (tmp_path / "bad.py").write_text(
        "from sueca.sdk import Bot\n"
        "class Bad(Bot):\n"
        "    def play(self, obs):\n"
        "        raise RuntimeError('boom ' * 100)\n")
    out = _duel("./bad.py:Bad", "random", "--matches", "4", "--workers", "2", cwd=tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "a bot raised RuntimeError: 'boom boom" in out.stderr and "bad.py" in out.stderr
    assert len(out.stderr) < 800  # the message is capped (the path is tmp_path's)


def _core(s: dict) -> dict:
    return {k: v for k, v in s.items()
            if k not in ("seconds", "workers", "ms_per_move", "ms_per_move_median")}


def test_the_outcome_does_not_depend_on_the_number_of_workers():
    from sueca.sdk.sprt import Sprt
    one = duel(["heuristic", "random"], Variant(), seed=7, pairs=30, workers=1, sprt=Sprt(0, 60))
    two = duel(["heuristic", "random"], Variant(), seed=7, pairs=30, workers=2, sprt=Sprt(0, 60))
    assert _core(one) == _core(two) and one["verdict"] == "H1"


def test_a_pair_is_the_same_cards_twice_with_the_teams_swapped():
    pair = play_pair(["random", "random"], Variant(), 3, 0)
    assert len(pair.match_wins) == 2
    assert len(pair.deal_scores) == len(pair.points) == len(pair.deal_faults)
    assert 0 < len(pair.classes) <= len(pair.deal_scores) // 2
    # the same bot on both sides of the same cards: deal k is won by the same hands twice,
    # hence once by each side, whenever both deals end normally
    again = play_pair(["random", "random"], Variant(), 3, 0)
    assert again.deal_scores == pair.deal_scores  # reproducible from the seed
    tally = DuelTally(["a", "b"])
    tally.add(pair)
    assert tally.pairs == 1 and tally.matches == 2 and sum(tally.counts) == len(pair.classes)


def test_move_clock_median_and_mean():
    clock = MoveClock()
    for ms in (1, 2, 3, 100, 2):
        clock.add(ms / 1000)
    assert clock.mean_ms() == pytest.approx(21.6)
    assert clock.median_ms() == pytest.approx(2, rel=0.03)
    assert MoveClock().median_ms() is None and MoveClock().mean_ms() is None


def test_an_exec_bot_plays_in_the_workers_and_its_crash_is_its_fault():
    program = BOTS / "exec_programs.py"
    crash = f"exec:{sys.executable} {program} crash"  # a program that dies at its first card
    out = _duel(crash, "random", "--matches", "4", "--workers", "2", "--json")
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout.splitlines()[-1])
    assert s["workers"] == 2 and s["matches"] == 4
    name = f"exec:{Path(sys.executable).name} exec_programs.py crash"  # its folders left out
    assert s["bots"][0] == name and s["specs"][0] == crash
    assert s["faults"][name] == 4 and s["match_wins"] == 0  # each match forfeited
    assert s["fault_deals"] == 4 and s["deal_wins"] + s["deal_losses"] == s["deals"] - 4 - \
        s["deal_ties"]


def test_the_limit_reached_undecided_exits_3():
    out = _duel("heuristic", "random", "--sprt", "0,5", "--matches", "2", "--json")
    assert out.returncode == 3, out.stderr
    s = json.loads(out.stdout.splitlines()[-1])
    assert s["verdict"] is None and s["bounds"][0] < s["llr"] < s["bounds"][1]
    assert s["matches"] == 2


@pytest.mark.parametrize("body", [
    "time.sleep(3600)",
    "while True:\n            try:\n                sum(range(1000))\n            "
    "except Exception:\n                pass",
], ids=["sleeps", "spins"])
def test_a_python_bot_that_never_answers_forfeits_by_the_move_limit(tmp_path, body):
    # without the limit this duel never ends (the subprocess times out after 120 s and fails)
    (tmp_path / "stuck.py").write_text(
        "import time\n"
        "from sueca.sdk import Bot\n"
        "class Stuck(Bot):\n"
        "    def play(self, obs):\n"
        f"        {body}\n")
    out = _duel("./stuck.py:Stuck", "heuristic", "--matches", "2", "--workers", "1",
                "--move-limit", "0.5", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout.splitlines()[-1])
    name = s["bots"][0]
    assert s["faults"][name] == 2 and s["faults"]["heuristic"] == 0  # one forfeit per match
    assert s["match_wins"] == 0 and s["seconds"] < 10


def test_the_move_limit_leaves_a_prompt_bot_alone():
    # the same duel with and without the limit: a bot well within it plays the same cards
    limited = duel(["heuristic", "random"], Variant(), seed=3, pairs=2, workers=1, move_limit=5)
    free = duel(["heuristic", "random"], Variant(), seed=3, pairs=2, workers=1, move_limit=0)
    assert _core(limited) == _core(free) and limited["fault_deals"] == 0
