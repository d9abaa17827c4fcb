"""``sueca-arena conformance``: our SDK passes (an example bot in its own process), a broken
raw client (tests/kits/bots/broken_client.py) fails exactly the checks it breaks, each named with what was wrong,
and the referee direction passes against our real referee (a real Redis, a registered token).

Every run is the command itself in a subprocess; the broken client's runs go in parallel
(one kit and one client process each), so the file stays well under a minute.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from kits.bots import DIR as BOTS

from sueca.arena.redisproc import free_port

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
TOKEN = "conformance.brokenbot-secret"
# the check each misbehaviour breaks, and words its reason must hold
BROKEN = {
    "ok": (set(), ""),
    "wrong-request-id": ({"request-ids"}, "the open request is"),
    "duplicate": ({"stale-answers"}, "twice"),
    "illegal-card": ({"legal-cards"}, "legal:"),
    "no-reconnect": ({"reconnect"}, "did not connect again"),
    "ignores-drain": ({"drain"}, "no drain message"),
    "ignores-stop": (set(), ""),
    "old-answer-after-reconnect": ({"reconnect"}, "answered twice after coming back"),
}
# the checks a misbehaviour makes unjudgeable, and words of the reason each is skipped with:
# a bot that never comes back cannot be asked to drain; a --listen bot that stays connected
# when told to stop is skipped for what it did (its author may not have stopped it)
SKIPPED = {
    "no-reconnect": {"drain": "not reached: the bot was gone"},
    "ignores-stop": {"drain": "the bot did not drain within 5s of being stopped"},
}


def kit(*args: str, timeout: float = 120) -> tuple[int, dict, str]:
    proc = subprocess.run([str(BIN / "sueca-arena"), "conformance", *args, "--json"],
                          capture_output=True, text=True, timeout=timeout)
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "{}"
    return proc.returncode, json.loads(last), proc.stderr


def statuses(report: dict) -> dict[str, str]:
    return {c["name"]: c["status"] for c in report["checks"]}


def test_the_sdk_example_bot_passes_every_check():
    code, report, err = kit("heuristic")
    assert code == 0, (report, err)
    assert set(statuses(report).values()) == {"pass"}, report
    assert report["bot_exit_code"] == 0  # it drained and exited by itself
    assert "Traceback" not in err


def test_an_answer_in_flight_when_the_stream_drops_is_not_sent_on_the_next():
    """The reconnect check drops the stream right after a turn; this SDK bot is still thinking
    (1 s on a deal's first card) when its SDK has reconnected and been sent the turn again.
    The SDK drops the answer computed for the old stream and answers the re-sent turn once
    (an SDK that kept it answers twice: the broken client's old-answer-after-reconnect mode)."""
    code, report, err = kit(f"{BOTS / 'faulty.py'}:SlowFirstCard")
    assert code == 0, (report, err)
    assert statuses(report)["reconnect"] == "pass", report
    assert "once" in next(c["reason"] for c in report["checks"] if c["name"] == "reconnect")


def test_a_bot_that_resigns_every_game_fails_full_match_with_its_reason():
    """The SDK resigns a game whose bot raised: protocol-wise fine, but no match was played to
    its end, and the author is told why (the exception's first line, escaped)."""
    code, report, err = kit(f"{BOTS / 'faulty.py'}:RaisesOnThirdCard")
    assert code == 1, (report, err)
    reason = next(c["reason"] for c in report["checks"] if c["name"] == "full-match")
    assert "the bot resigned" in reason and "RuntimeError: third card" in reason, reason
    # escaped, its first line only (shown() writes the escape as text)
    assert "\\x1b" in reason and "\x1b" not in reason and "secret second line" not in reason
    assert report["failed"] == ["full-match"], report


def _broken_run(mode: str) -> tuple[int, dict, str]:
    """The kit listening, broken_client.py in MODE pointed at it, stopped when the kit asks."""
    port = free_port()
    kit_proc = subprocess.Popen(
        [str(BIN / "sueca-arena"), "conformance", "--listen", f"127.0.0.1:{port}",
         "--token", TOKEN, "--turn-seconds", "2", "--timeout", "30", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bot: subprocess.Popen[bytes] | None = None
    lines: list[str] = []
    assert kit_proc.stderr is not None and kit_proc.stdout is not None
    try:
        for line in kit_proc.stderr:
            lines.append(line)
            if "listening on" in line and bot is None:
                bot = subprocess.Popen(
                    [sys.executable, str(BOTS / "broken_client.py"), f"127.0.0.1:{port}", mode],
                    env={**os.environ, "SUECA_TOKEN": TOKEN},
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if "stop your bot now" in line and bot is not None and bot.poll() is None:
                bot.send_signal(signal.SIGTERM)
        out = kit_proc.stdout.read()
        code = kit_proc.wait(60)
    finally:
        for p in (kit_proc, bot):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    return code, json.loads(out.strip().splitlines()[-1]), "".join(lines)


@pytest.fixture(scope="module")
def broken_runs() -> dict[str, tuple[int, dict, str]]:
    with ThreadPoolExecutor(len(BROKEN)) as pool:
        return dict(zip(BROKEN, pool.map(_broken_run, BROKEN), strict=True))


@pytest.mark.parametrize("mode", list(BROKEN))
def test_a_broken_client_fails_exactly_the_checks_it_breaks(broken_runs, mode):
    code, report, err = broken_runs[mode]
    broken, words = BROKEN[mode]
    failed = {c["name"] for c in report["checks"] if c["status"] == "fail"}
    assert failed == broken, (report, err)
    assert code == (1 if broken else 0), report
    assert report["failed"] == sorted(broken, key=list(statuses(report)).index)
    for c in report["checks"]:
        if c["status"] == "fail":
            assert words in c["reason"], c
            assert "\n" not in c["reason"] and len(c["reason"]) <= 300
    # what the broken client did not break still passes; what it made unjudgeable is skipped
    # with its own reason
    skipped = {c["name"]: c["reason"] for c in report["checks"] if c["status"] == "skip"}
    assert set(skipped) == set(SKIPPED.get(mode, {})), report
    for name, words in SKIPPED.get(mode, {}).items():
        assert words in skipped[name], report


def test_a_bot_of_capacity_1_is_skipped_for_batches_saying_so():
    """At capacity 1 the batch checks cannot be judged: they are skipped with that reason, not
    the end-of-run "not reached", and every other check passes."""
    code, report, err = kit("heuristic", "--capacity", "1")
    assert code == 0, (report, err)
    reasons = {c["name"]: c["reason"] for c in report["checks"] if c["status"] == "skip"}
    assert reasons == {"batched-turns": "capacity 1: one game at a time",
                       "many-games": "capacity 1: one game at a time"}, report
    assert {s for n, s in statuses(report).items() if n not in reasons} == {"pass"}, report


def test_usage_errors_exit_2_quoting_the_bad_value():
    cases = ((["no-such-bot-x"], "'no-such-bot-x'"),
             ([], "give a BOT"),
             (["heuristic", "--operator-token-file", "f"], "goes with --referee"),
             (["--referee", "127.0.0.1:1", "--token", "a.b",
               "--operator-token-file", "/no/such/file"], "'/no/such/file'"),
             (["--listen", "nowhere"], "'nowhere'"),
             (["heuristic", "--referee", "127.0.0.1:1"], "not both"))
    with ThreadPoolExecutor(len(cases)) as pool:  # one process each, at once
        procs = list(pool.map(lambda case: subprocess.run(
            [str(BIN / "sueca-arena"), "conformance", *case[0]], capture_output=True,
            text=True, timeout=60), cases))
    for (args, words), proc in zip(cases, procs, strict=True):
        assert proc.returncode == 2, (args, proc.stderr)
        assert words in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)


def test_the_referee_direction_passes_against_our_referee(redis_url, tmp_path):
    """Our referee, wanting an operator token: every check passes with the token from
    SUECA_OPERATOR_TOKEN (timeout, late, resign included); a wrong token from
    --operator-token-file fails the first match's check naming UNAUTHENTICATED, and neither
    token nor bot secret is ever shown."""
    from kits.net import KEY_PREFIX, RefereeProc

    from sueca.arena.keys import Keys
    from sueca.arena.store import Store
    bots = Store.from_url(redis_url, Keys(KEY_PREFIX)).bots
    token, other = bots.add("conformance"), bots.add("conformance-b")  # one bot per kit run
    operator = "op-" + os.urandom(8).hex()
    (tmp_path / "operator").write_text(operator + "\n")
    (tmp_path / "wrong").write_text("not-the-operator-token\n")
    ref = RefereeProc(redis_url, log_path=tmp_path / "referee.log",
                      extra=["--operator-token-file", str(tmp_path / "operator")])
    env = dict(os.environ)
    env.pop("SUECA_OPERATOR_TOKEN", None)
    try:
        with ThreadPoolExecutor(2) as pool:
            good, wrong = pool.map(lambda extra: subprocess.run(
                [str(BIN / "sueca-arena"), "conformance", "--referee", ref.address,
                 "--turn-seconds", "5", "--json", *extra[0]],
                capture_output=True, text=True, timeout=120, env={**env, **extra[1]}), [
                ((), {"SUECA_TOKEN": token, "SUECA_OPERATOR_TOKEN": operator}),
                (("--operator-token-file", str(tmp_path / "wrong")), {"SUECA_TOKEN": other})])
    finally:
        ref.stop()
    report = json.loads(good.stdout.strip().splitlines()[-1])
    assert good.returncode == 0, (report, good.stderr)
    assert set(statuses(report).values()) == {"pass"}, report
    reasons = {c["name"]: c["reason"] for c in report["checks"]}
    assert reasons["timeout"].startswith("timeout by seat "), reasons
    assert reasons["late"] == "refused late" and reasons["resign"].startswith("bot_error by seat")
    refused = json.loads(wrong.stdout.strip().splitlines()[-1])
    assert wrong.returncode == 1, (refused, wrong.stderr)
    reason = next(c["reason"] for c in refused["checks"] if c["name"] == "match-start")
    assert "UNAUTHENTICATED" in reason, refused
    for proc in (good, wrong):  # never shows a secret
        shown = proc.stdout + proc.stderr
        assert token.rpartition(".")[2] not in shown and operator not in shown
        assert other.rpartition(".")[2] not in shown
        assert "not-the-operator-token" not in shown and "Traceback" not in shown


EXAMPLES = Path(__file__).resolve().parents[3] / "sdk" / "examples"


@pytest.mark.parametrize("language", ["js", "c", "java"])
def test_the_exec_examples_pass_every_check(language, tmp_path):
    import shutil
    if language == "js":
        tool, spec = "node", f"exec:node {EXAMPLES / 'js' / 'bot.js'}"
    elif language == "c":
        tool, spec = "cc", f"exec:{tmp_path / 'bot'}"
    else:
        tool, spec = "java", f"exec:java {EXAMPLES / 'java' / 'Bot.java'}"
    if shutil.which(tool) is None:
        pytest.skip(f"no {tool} on this machine")
    if language == "c":
        subprocess.run(["cc", "-O2", "-o", str(tmp_path / "bot"), str(EXAMPLES / "c" / "bot.c")],
                       check=True, timeout=120)
    code, report, err = kit(spec)
    assert code == 0, (report, err)
    assert set(statuses(report).values()) == {"pass"}, report
