"""``sueca-arena loadtest``: real runs on a private arena (Redis, a referee with house bots,
``sueca-bot run`` processes), a few seconds each; SLO exit codes; a running bot on a referee
without house bots; usage errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

BIN = Path(sys.executable).parent
THINKER = """
import time
from sueca.sdk.bots import RandomBot

class Thinker(RandomBot):
    def play(self, observation):
        time.sleep({think})  # on purpose: a bot that thinks
        return super().play(observation)
"""


def loadtest(*args: str, cwd: Path | None = None,
             timeout: float = 120) -> tuple[int, dict[str, Any] | None, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUECA_")}
    proc = subprocess.run([str(BIN / "sueca-arena"), "loadtest", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, env=env)
    lines = proc.stdout.strip().splitlines()
    result = None
    if lines and lines[-1].startswith("{"):
        result = json.loads(lines[-1])
    return proc.returncode, result, proc.stderr


def thinker(tmp_path: Path, think: float) -> str:
    (tmp_path / "thinker.py").write_text(textwrap.dedent(THINKER.format(think=think)))
    return "./thinker.py:Thinker"


def test_random_target_on_a_private_arena(tmp_path: Path) -> None:
    report = tmp_path / "load.html"
    code, r, err = loadtest("random", "--games", "8", "--duration", "4", "--house",
                            "random,heuristic", "--slo-p99-ms", "10000", "--max-timeouts", "0",
                            "--max-faults", "0", "--json", "--report", str(report))
    assert code == 0, err
    assert r is not None
    for key in ("moves_per_s", "p50_ms", "p95_ms", "p99_ms", "max_ms", "timeouts", "faults"):
        assert key in r, key
    assert r["matches_finished"] == r["matches_started"] > 8  # matches end and new ones start
    assert r["ends"] == {"normal": r["matches_finished"]}
    # the target holds one seat of four in every match: a quarter of the cards are its
    assert r["target_moves"] * 4 == r["moves"] > 0
    assert r["samples"] == r["target_moves"]
    assert 0 < r["p50_ms"] <= r["p95_ms"] <= r["p99_ms"] <= r["max_ms"]
    assert r["moves_per_s"] > 100
    assert r["timeouts"] == r["faults"] == r["protocol_faults"] == r["failed"] == 0
    assert r["reconnects"] == 0 and r["slo_broken"] == []
    # every figure is the referee's own turn time, not a guess from the event stream
    assert r["latency_source"] == f"referee ({r['matches_finished']} matches)"
    # the report: written whole, self-contained (nothing fetched), with its charts and figures
    page = report.read_text()
    assert not list(tmp_path.glob("*.partial"))
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    for external in ("http://", "https://", "src=", "<link", "<script", "url(", "@import"):
        assert external not in page, external
    assert page.count("<svg") == 5  # latency over time, histogram, throughput, in flight, faults
    assert page.count("<polyline") >= 4 + 2 + 1  # p50/p95/p99/max, moves/s x2, in flight
    assert page.count("<rect") > 20  # histogram bars
    for text in ("Target latency over time", "Target latency histogram", "Throughput over time",
                 "Faults", "Settings", "Machine",
                 "passed: p99 at most 10000 ms, no timeouts, no faults",
                 f"{r['samples']} moves", str(r["p99_ms"]), "heuristic", "cpus"):
        assert text in page, text
    assert_no_python_values(page)


def assert_no_python_values(page: str) -> None:
    """A report speaks to people: no None, no list or dict syntax in its cells."""
    import re
    cells = " ".join(re.findall(r"<td>(.*?)</td>", page))
    for python in ("None", "[", "{", "&#x27;", "True", "False"):
        assert python not in cells, (python, cells)


def test_latency_is_the_targets_thinking_and_a_slow_target_breaks_the_p99_slo(
        tmp_path: Path) -> None:
    spec = thinker(tmp_path, 0.03)
    code, r, err = loadtest(spec, "--games", "4", "--duration", "3", "--slo-p99-ms", "10",
                            "--json", cwd=tmp_path)
    assert code == 1, err
    assert r is not None and r["samples"] > 20
    # every move of the target sleeps 30 ms: no percentile can be below that, and the house
    # bots' moves (in the referee) add next to nothing
    assert 30 <= r["p50_ms"] < 200, r
    assert "failed: p99 latency" in err and "--slo-p99-ms 10" in err
    assert r["slo_broken"] and r["timeouts"] == 0


def test_timeouts_fail_the_run_by_default_and_late_answers_are_not_protocol_faults(
        tmp_path: Path) -> None:
    spec = thinker(tmp_path, 0.3)
    code, r, err = loadtest(spec, "--games", "2", "--duration", "2", "--move-ms", "50",
                            "--bank-ms", "100", "--json", cwd=tmp_path)
    assert code == 1, err
    assert r is not None and r["timeouts"] >= 1
    assert r["ends"].get("timeout", 0) == r["timeouts"]
    assert "failed: " in err and "--max-timeouts 0" in err and "--allow-faults" in err
    # each answer after its timeout is a late answer, and no protocol fault
    assert r["late_answers"] >= 1 and r["protocol_faults"] == 0, r
    assert "late answers" in err


def test_a_raising_bot_is_a_bot_error_and_allow_faults_accepts_it(tmp_path: Path) -> None:
    (tmp_path / "shaky.py").write_text(textwrap.dedent("""
        from sueca.sdk.bots import RandomBot

        class Shaky(RandomBot):
            def play(self, observation):  # now and then a bug
                if self.rng.random() < 0.05:
                    raise RuntimeError("no such trick\\nsecond line")
                return super().play(observation)
    """))
    report = tmp_path / "shaky.html"
    code, r, err = loadtest("./shaky.py:Shaky", "--games", "4", "--duration", "2",
                            "--allow-faults", "--json", "--report", str(report), cwd=tmp_path)
    assert code == 0, err
    assert r is not None and r["bot_errors"] >= 1 and r["timeouts"] == 0, r
    assert r["ends"]["bot_error"] == r["bot_errors"] and r["faults"] >= r["bot_errors"]
    assert r["first_bot_error"] == "RuntimeError: no such trick"  # the first line only
    assert r["first_bot_error_at"] == "shaky.py:7"  # the raise in the bot's own file
    assert "bot errors" in err
    assert "first bot error: RuntimeError: no such trick (raised at shaky.py:7)" in err
    assert "logs kept in" not in err  # a run that passed leaves nothing behind
    page = report.read_text()
    assert "no limits were set" in page and "bot errors" in page
    assert_no_python_values(page)


def test_a_failed_run_keeps_its_logs_and_says_where(tmp_path: Path) -> None:
    """Bot errors fail the run (no --allow-faults): the private arena's logs are kept without
    --keep-logs, named on stderr, and hold the bot's traceback."""
    import re
    import shutil
    (tmp_path / "broken.py").write_text(textwrap.dedent("""
        from sueca.sdk.bots import RandomBot

        class Broken(RandomBot):
            def play(self, observation):
                raise KeyError("\x1b[31mred")
    """))
    code, r, err = loadtest("./broken.py:Broken", "--games", "2", "--duration", "1", "--json",
                            cwd=tmp_path)
    assert code == 1, err
    kept = re.search(r"logs kept in (\S+)", err)
    assert kept is not None, err
    logs = Path(kept[1])
    try:
        assert "Traceback" in (logs / "target-0.log").read_text()
    finally:
        shutil.rmtree(logs)
    assert r is not None and r["bot_errors"] >= 1 and r["first_bot_error_at"] == "broken.py:6"
    assert "\x1b" not in err  # the bot's words escaped


def test_a_bot_answering_instantly_from_100ms_away_never_times_out_under_default_clocks(
        ) -> None:
    # the target's processes reach the referee through a delaying proxy: 100 ms added round
    # trip, +-10 ms jitter each way; no --move-ms/--bank-ms: the referee's default clocks. The
    # whole round trip is charged to the bot (no lag compensation, see docs/protocol.md), and the
    # default move limit leaves room for it.
    code, r, err = loadtest("random", "--games", "4", "--duration", "3", "--net-rtt-ms", "100",
                            "--net-jitter-ms", "20", "--max-timeouts", "0", "--max-faults", "0",
                            "--json")
    assert code == 0, err
    assert r is not None and r["move_ms"] is None and r["net_rtt_ms"] == 100
    assert r["matches_finished"] >= 4 and r["cut"] == 0
    assert r["ends"] == {"normal": r["matches_finished"]} and r["timeouts"] == 0
    assert r["samples"] >= 100
    assert r["p50_ms"] >= 90  # the delay is real, and charged to the bot's turn
    assert r["max_ms"] < 2000  # the default per-move limit: the bank was never touched


def test_renuncias_are_counted_and_are_not_faults() -> None:
    code, r, err = loadtest("reckless", "--games", "4", "--duration", "2", "--max-faults", "0",
                            "--json")
    assert code == 0, err
    assert r is not None and r["renuncias"] >= 1
    assert r["ends"].get("renuncia", 0) == r["renuncias"]  # a renúncia ends the match
    assert r["faults"] == 0


def test_protocol_faults_are_counted_from_the_referee(tmp_path: Path) -> None:
    # This SDK resigns a game rather than send a card its bot does not hold, so the cheat also
    # switches that check off: it stands for a client not built on this SDK, which sends anything.
    (tmp_path / "cheat.py").write_text(textwrap.dedent("""
        from sueca.codec import action_bytes
        from sueca.engine import CARDS
        from sueca.sdk import client
        from sueca.sdk.bots import RandomBot

        checked = client.Game._answer

        def unchecked(self, turn, obs, value):
            if value in obs.hand or turn.kind != 0:
                return checked(self, turn, obs, value)
            return action_bytes(self.gid, turn.request_id, value)

        client.Game._answer = unchecked

        class Cheat(RandomBot):
            def play(self, observation):  # now and then a card it does not hold
                if self.rng.random() < 0.05:
                    mine = set(observation.hand)
                    return next(c for c in CARDS if c not in mine)
                return super().play(observation)
    """))
    code, r, err = loadtest("./cheat.py:Cheat", "--games", "4", "--duration", "2",
                            "--move-ms", "100", "--bank-ms", "100", "--max-faults", "0",
                            "--json", cwd=tmp_path)
    assert code == 1, err
    assert r is not None and r["protocol_faults"] >= 1 and r["faults"] >= r["protocol_faults"]
    # the card was refused, the turn stayed open, the clock ended the match
    assert r["timeouts"] >= 1
    assert "failed: " in err and "--max-faults 0" in err


def test_a_target_that_dies_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "dying.py").write_text(textwrap.dedent("""
        import os
        from sueca.sdk.bots import RandomBot
        PLAYED = [0]

        class Dying(RandomBot):
            def play(self, observation):
                PLAYED[0] += 1
                if PLAYED[0] > 150:
                    os._exit(3)
                return super().play(observation)
    """))
    code, r, err = loadtest("./dying.py:Dying", "--games", "4", "--duration", "3",
                            "--grace-ms", "300", "--json", cwd=tmp_path)
    assert code == 1, err
    assert r is not None and r["target_exited"] and "exited with code 3" in r["target_exited"]
    assert r["disconnects"] >= 1 and r["faults"] >= r["disconnects"]
    # once no match can be placed any more, the run stops starting them
    assert r["failed"] >= 1 and r["stopped_early"] and "failed in a row" in r["stopped_early"]
    assert "failed: a target process exited" in err
    assert "Traceback" not in err.split("exited with code 3")[0]


def test_a_running_bot_on_a_referee_with_and_without_house_bots(tmp_path: Path) -> None:
    from sueca.arena.loadtest.private_arena import PrivateArena
    arena = PrivateArena("random", 1, capacity=16, house=["random"]).start()
    try:
        code, r, err = loadtest("--bot", PrivateArena.NAME, "--server", arena.address,
                                "--metrics-url", arena.metrics_url, "--games", "4",
                                "--duration", "2", "--json")
        assert code == 0, err
        assert r is not None and r["mode"] == "running bot" and r["samples"] > 0
        assert r["protocol_faults"] == 0
        code, r, err = loadtest("--bot", "nobody", "--server", arena.address, "--duration", "1")
        assert code == 2
        assert "bot 'nobody' is not connected to referee" in err
        code, r, err = loadtest("--bot", PrivateArena.NAME, "--server", arena.address,
                                "--house", "heuristic", "--duration", "1")
        assert code == 2, err
        assert "PERMISSION_DENIED" in err and "'house:heuristic' is a house bot" in err
        assert "Traceback" not in err
    finally:
        arena.stop()


@pytest.mark.parametrize("args, message", [
    ((), "give either TARGET"),
    (("random", "--bot", "x"), "give either TARGET"),
    (("--bot", "x"), "--bot 'x' needs --server"),
    (("nosuchbot",), "unknown bot 'nosuchbot'"),
    (("random", "--house", "evil:Bot"), "bad house bot 'evil:Bot'"),
    (("random", "--variant", "tie=nonsense"), "nonsense"),
    (("random", "--games", "0"), "--games"),
    (("random", "--report", "/no/such/dir/r.html"), "cannot write --report"),
    (("random", "--net-rtt-ms", "10", "--net-jitter-ms", "30"), "--net-jitter-ms 30 is more"),
    (("--bot", "x", "--server", "127.0.0.1:1", "--net-rtt-ms", "50"), "go with TARGET"),
])
def test_usage_errors(args: Sequence[str], message: str) -> None:
    code, _, err = loadtest(*args, timeout=60)
    assert code == 2, err
    assert message in err
    assert "Traceback" not in err


def test_the_load_shape_ramps_up_holds_and_ramps_down() -> None:
    from sueca.arena.loadtest.generator import Shape
    shape = Shape(games=100, duration=20, ramp=4)
    caps = [shape.cap(t / 10) for t in range(0, 200)]
    assert caps[0] == 1 and caps[10] == 25 and caps[20] == 50  # 0 s, 1 s, 2 s: linear
    assert set(caps[40:160]) == {100}                          # steady from 4 s to 16 s
    assert caps[180] == 50 and caps[-1] == 3                   # 18 s, 19.9 s: down again
    assert caps == sorted(caps[:100]) + caps[100:]             # never down while going up
    assert shape.cap(20) == shape.cap(25) == 0                 # nothing after the duration
    assert Shape(games=7, duration=1, ramp=0).cap(0) == 7
    assert Shape(games=8, duration=40).ramp_s == 5 and Shape(duration=8).ramp_s == 2


def test_rate_caps_new_matches_per_second() -> None:
    code, r, err = loadtest("random", "--games", "8", "--duration", "2", "--rate", "2",
                            "--json")
    assert code == 0, err
    assert r is not None and 2 <= r["matches_started"] <= 1 + 2 * 2
    assert r["matches_finished"] == r["matches_started"]


def test_a_killed_loadtest_leaves_no_process_and_no_folder(tmp_path: Path) -> None:
    """SIGKILL gives loadtest no chance to clean up: its private arena's janitor stops the
    referee, Redis and the target's processes and removes their folder (and the children's
    temporary files, which live in it)."""
    import contextlib
    import signal
    import time

    from kits.arena import children
    from kits.wait import wait_for
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUECA_")}
    env["TMPDIR"] = str(tmp)
    proc = subprocess.Popen([str(BIN / "sueca-arena"), "loadtest", "random", "--games", "2",
                             "--duration", "60"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, start_new_session=True)

    def tree() -> set[int]:
        found, todo = set(), [proc.pid]
        while todo:
            kids = children(todo.pop())
            found |= set(kids)
            todo += kids
        return found

    try:
        def running() -> set[int] | None:
            kids = tree()
            logs = list(tmp.glob("sueca-loadtest-*/target-0.log"))
            return kids if logs and len(kids) >= 4 else None  # janitor, redis, referee, bot
        kids = wait_for(running, 60, "the private arena to start", interval=0.2)
        time.sleep(1.0)
        with contextlib.suppress(AssertionError):  # a process that ended meanwhile
            kids |= tree()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()

    def alive() -> list[int]:
        return [p for p in kids if Path(f"/proc/{p}").exists()
                and b"zombie" not in Path(f"/proc/{p}/status").read_bytes().lower()]

    wait_for(lambda: not alive() and not any(tmp.iterdir()), 20,
             "the private arena's processes and folders to be gone", interval=0.1,
             detail=lambda: f"left: {alive()}, {list(tmp.rglob('*'))[:20]}")
