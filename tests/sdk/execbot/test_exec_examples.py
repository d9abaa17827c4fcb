"""The example bots in other languages (sdk/examples: C, JavaScript, Java), through exec:: each
plays self-play matches against ``random`` with no fault and wins most, and each connects to a
real referee with ``sueca-bot run exec:...`` (a separate process) and plays matches there.

Self-play runs 200 matches of C and JavaScript and 100 of Java (each of its moves costs the
most; 200 pass too, in about 20 s on a loaded machine), each in one process, its hello saying
it takes many games. A missing compiler or runtime fails with the
command that installs it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kits.net import BotProc, sessions_of, wait_for

from sueca.engine import Variant
from sueca.referee import control
from sueca.sdk.bots import load_bot
from sueca.sdk.selfplay import selfplay

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[3] / "sdk" / "examples"
TOOLS = {"cc": "gcc", "node": "nodejs", "java": "default-jdk-headless"}


def need(tool: str) -> str:
    found = shutil.which(tool)
    assert found, f"{tool} is not installed: apt-get install -y {TOOLS[tool]} (.ci/provision)"
    return found


@pytest.fixture(scope="module")
def c_bot(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("cbot") / "bot"
    subprocess.run([need("cc"), "-O2", "-Wall", "-Werror", "-o", str(out),
                    str(EXAMPLES / "c" / "bot.c")], check=True, timeout=120)
    return f"exec:{out}"


@pytest.fixture(scope="module")
def specs(c_bot: str) -> dict[str, str]:
    return {"c": c_bot,
            "js": f"exec:{need('node')} {EXAMPLES / 'js' / 'bot.js'}",
            "java": f"exec:{need('java')} {EXAMPLES / 'java' / 'Bot.java'}"}


@pytest.mark.parametrize("lang, matches", [("c", 200), ("js", 200), ("java", 100)])
def test_an_example_beats_random_in_self_play_with_no_fault(
        specs: dict[str, str], lang: str, matches: int) -> None:
    factory = load_bot(specs[lang])
    variant = Variant(weak_hand_redeal=True)  # redeal turns too
    summary = selfplay([factory, load_bot("random")], [lang, "random"], variant=variant,
                       matches=matches, seed=lang)
    ours, theirs = summary["bots"]
    assert ours["faults"] == 0 and theirs["faults"] == 0
    assert ours["wins"] > 0.7 * matches, summary
    programs = factory.args[0].programs  # type: ignore[attr-defined]
    # each one's hello says many games: one process played them all
    assert len({p.pid for p in programs}) == 1
    programs[0].fail("test over")


@pytest.fixture(scope="module")
def exec_tokens(redis_url: str) -> dict[str, str]:
    import redis
    from kits.net import KEY_PREFIX

    from sueca.arena.keys import Keys
    from sueca.arena.store.bots import BotRegistry
    registry = BotRegistry(redis.Redis.from_url(redis_url), Keys(KEY_PREFIX))
    return {lang: registry.add(f"exec-{lang}") for lang in ("c", "js", "java")}


@pytest.fixture(scope="module")
def connected(referee, exec_tokens: dict[str, str], specs: dict[str, str],
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, BotProc]]:
    logs = tmp_path_factory.mktemp("execbots")
    procs = {lang: BotProc(specs[lang], referee.address, token, capacity=4,
                           log_path=logs / f"{lang}.log")
             for lang, token in exec_tokens.items()}
    for p in procs.values():
        wait_for(lambda p=p: sessions_of(referee.address, p.name) >= 1, 30, f"bot {p.name}")
    yield procs
    for p in procs.values():
        assert p.stop() == 0, p.logs()[-2000:]


@pytest.mark.parametrize("lang", ["c", "js", "java"])
def test_an_example_plays_a_real_referee_through_sueca_bot_run(
        referee, random_bots, connected: dict[str, BotProc], lang: str) -> None:
    name = f"exec-{lang}"
    for seed in (1, 2):
        seats = [name, "alice", name, "bob"] if seed == 1 else ["alice", name, "bob", name]
        result = control.run_match(referee.address, {
            "bots": seats, "seed": seed, "variant": {"weak_hand_redeal": True},
            "move_ms": 5000, "bank_ms": 20000})  # a JVM's start-up is in its first move
        assert result["end"] == "normal", (result, connected[lang].logs()[-2000:])
    assert "Traceback" not in connected[lang].logs()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_bench_exec_measures_the_c_bot_beside_its_python_twin() -> None:
    need("cc")
    cli = Path(sys.executable).with_name("sueca-arena")
    done = subprocess.run([str(cli), "bench", "exec", "--matches", "4", "--no-network"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    sp = result["selfplay"]
    assert sp["same_play"] is True  # the Python baseline plays the C bot's very cards
    assert sp["exec"]["moves_per_s"] > 0 and sp["python"]["moves_per_s"] > 0
    # the floor beside it, in the same run: bare round trips of the same turn lines
    assert sp["bare_round_trips"] > 0 and sp["bare_round_trip_us"] > 0 and sp["exec_move_us"] > 0
    assert result["ratio_to_bare"] == round(sp["exec_move_us"] / sp["bare_round_trip_us"], 2)
    assert result["selfplay_ratio"] == sp["ratio"] and result["network_ratio"] is None
    assert sp["bare_round_trip_cpu_us"] > 0 and "exec_move_cpu_us" in sp
