"""exec: bots (sueca.sdk.execbot): the line protocol checked against its JSON Schema both ways,
and hostile programs that each lose their game with one clear log line and leave no process
behind. Real child processes throughout (Python scripts in exec_programs.py)."""

from __future__ import annotations

import gc
import json
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import psutil
import pytest
from kits.bots import DIR as BOTS
from kits.wait import wait_for

from sueca.engine import CARDS, Trick, Variant
from sueca.sdk.bots import BotLoadError, RandomBot, load_bot
from sueca.sdk.execbot import protocol
from sueca.sdk.local import play_local
from sueca.sdk.selfplay import selfplay
from sueca.sdk.settings import current, replace, use

ROOT = Path(__file__).resolve().parents[3]
PROGRAMS = BOTS / "exec_programs.py"
SCHEMA = json.loads((ROOT / "proto/exec/sueca-exec-1.schema.json").read_text())


def spec(kind: str) -> str:
    return f"exec:{sys.executable} {PROGRAMS} {kind}"


def validator(part: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({**SCHEMA, "$ref": f"#/$defs/{part}"})


def ours() -> list[psutil.Process]:
    """Our children running exec_programs.py (zombies count: they were not reaped)."""
    found = []
    for p in psutil.Process().children(recursive=True):
        try:
            if str(PROGRAMS) in " ".join(p.cmdline()) or p.status() == psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.NoSuchProcess:
            pass
    return found


def none_left(timeout: float = 5.0) -> None:
    gc.collect()  # a match a program broke is dropped with its other seats' bots (cycles)
    deadline = time.monotonic() + timeout
    while ours() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not ours(), [p.cmdline() for p in ours()]


@pytest.fixture
def quick() -> Iterator[None]:
    """Self-play answers within 1 s (a hung program costs the test one second)."""
    use(replace(current(), exec_timeout=1.0))
    yield
    use(None)


def test_every_line_both_ways_matches_the_schema(tmp_path: Path) -> None:
    log = tmp_path / "lines.jsonl"
    rec = f"exec:{sys.executable} {PROGRAMS} record {log} {sys.executable} {PROGRAMS}"
    variant = Variant(weak_hand_redeal=True, trump_card="first")
    # one recorder and one program serve every game ("games": 64): two processes in all
    factories = [load_bot(f"{rec} multi"), load_bot("random")]
    summary = selfplay(factories, ["multi", "random"], variant=variant, matches=6, seed=3)
    assert sum(b["faults"] for b in summary["bots"]) == 0
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    into, out = validator("to_program"), validator("from_program")
    kinds = set()
    for direction, line in lines:
        msg = json.loads(line)
        (into if direction == "in" else out).validate(msg)
        kinds.add((direction, msg.get("type") or ("redeal" if "redeal" in msg else "card")))
    assert {("in", k) for k in ("hello", "start", "turn", "trick", "deal", "end")} <= kinds
    assert {("out", "hello"), ("out", "card"), ("out", "redeal")} <= kinds
    for p in factories[0].args[0].programs:  # type: ignore[attr-defined]
        p.fail("test over")  # the many-games one stays for the next game otherwise
    none_left()
    # the schema can fail: a card out of the notation, a turn without its id
    with pytest.raises(jsonschema.ValidationError):
        out.validate({"game": "g", "id": 1, "card": "10H"})
    with pytest.raises(jsonschema.ValidationError):
        into.validate({"type": "turn", "game": "g", "kind": "play"})


def test_the_fast_lines_are_the_protocol_lines_on_whole_matches() -> None:
    """GameLines writes the turn and trick lines by hand: byte for byte what protocol.turn and
    protocol.trick (the JSON encoder) write, on every turn and trick of whole matches."""
    checked = []

    class Check(RandomBot):
        def on_match_start(self, info):  # type: ignore[no-untyped-def]
            self.game = f"{info.match_id}/{info.seat}"
            self.text, self.turns = protocol.GameLines(self.game), 0

        def play(self, obs):  # type: ignore[no-untyped-def]
            self.turns += 1
            fast = self.text.turn(self.turns, "play", obs, 987)
            assert fast == protocol.turn(self.game, self.turns, kind="play", obs=obs, ms=987)
            checked.append(fast)
            return super().play(obs)

        def on_trick_end(self, trick):  # type: ignore[no-untyped-def]
            assert self.text.trick(trick) == protocol.trick(self.game, trick)

    for variant in (Variant(), Variant(weak_hand_redeal=True, trump_card="first")):
        for seed in range(8):
            play_local([Check] * 4, variant, seed, f'm-"\u00e9\\{seed}')
    assert len(checked) > 2000 and any(b'"tricks":[{' in line for line in checked)
    cut = Trick(1, (CARDS[3], CARDS[27]), None, 0)  # cut short by a renúncia: no winner
    assert protocol.GameLines("g").trick(cut) == protocol.trick("g", cut)


@pytest.mark.parametrize("kind, says", [
    ("crash", "exited with code 3"),
    ("exit", "exited with code 0"),
    ("hang", "late: no answer to turn 3 within 1000 ms"),
    ("garbage", "printed a line that is not JSON: b'this is not json'"),
    ("big", "printed a line over 65536 bytes"),
    ("endless", "printed a line over 65536 bytes"),
    ("flood", "answered game"),
    ("unknown", "turn 1003, which is not a turn it was asked"),
    ("illegal", "which is not legal here (legal:"),
    ("silent", "no hello within "),
    ("oldproto", "speaks protocol 'sueca-exec/0', not 'sueca-exec/1'"),
])
def test_a_hostile_program_loses_its_game_and_leaves_nothing_running(
        kind: str, says: str, quick: None, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, "sueca.exec")
    bots = [load_bot(spec(kind)), load_bot("random")] * 2
    match = play_local(bots, seed=1, match_id="m-1")
    assert match.end == "bot_error" and match.fault_seat in (0, 2) and match.winner == 1
    [line] = [r.getMessage() for r in caplog.records]
    game = getattr(caplog.records[0], "game_id", "")
    assert game.startswith("m-1/") and f"lost game {game}: " in line and says in line
    # its stderr tail, escaped: the terminal escape is not raw
    assert f"{kind}: misbehaving now" in line and "\x1b" not in line and "\\x1b[31mred" in line
    none_left()
    # the next match is played by a fresh process
    bots = [load_bot(spec("plain")), load_bot("random")] * 2
    assert play_local(bots, seed=2).end == "normal"
    none_left()


def test_a_flood_on_stderr_is_read_and_dropped(quick: None) -> None:
    factory = load_bot(spec("stderrflood"))
    assert play_local([factory, load_bot("random")] * 2, seed=4).end == "normal"
    none_left()


def test_self_play_counts_the_lost_game_as_a_fault_and_goes_on(quick: None) -> None:
    summary = selfplay([load_bot(spec("illegal")), load_bot("random")], ["illegal", "random"],
                       matches=4, seed=0)
    bad, good = summary["bots"]
    assert (bad["faults"], bad["wins"], good["faults"], good["wins"]) == (4, 0, 0, 4)
    none_left()


def test_a_program_that_takes_many_games_runs_once(quick: None) -> None:
    factory = load_bot(spec("multi"))
    seen = set()
    for seed in range(3):
        match = play_local([factory, load_bot("random")] * 2, seed=seed)
        assert match.end == "normal"
        seen |= {p.pid for p in factory.args[0].programs}  # type: ignore[attr-defined]
    assert len(seen) == 1  # both seats of every match on one process
    for p in factory.args[0].programs:  # type: ignore[attr-defined]
        p.fail("test over")
    none_left()


@pytest.mark.parametrize("bad, says", [
    ("exec:", "no command after 'exec:'"),
    ("exec:'unclosed", "No closing quotation"),
    ("exec:./no/such/program", "no file './no/such/program'"),
    ("exec:no-such-program-xyz --fast", "no program 'no-such-program-xyz' on PATH"),
    (f"exec:{PROGRAMS}", "is not executable"),
])
def test_a_bad_exec_spec_is_one_precise_error(bad: str, says: str) -> None:
    with pytest.raises(BotLoadError) as err:
        load_bot(bad)
    assert says in str(err.value)


def test_flags_reach_the_settings(tmp_path: Path) -> None:
    import subprocess
    bot = tmp_path / "slow.py"
    bot.write_text("import sys, time\nprint('{\"type\":\"hello\",\"protocol\":\"sueca-exec/1\"}'"
                   ", flush=True)\nsys.stdin.readline()\ntime.sleep(30)\n")
    cli = Path(sys.executable).with_name("sueca-bot")
    started = time.monotonic()
    done = subprocess.run([str(cli), "selfplay", "--bots", f"exec:{sys.executable} {bot},random",
                           "--matches", "1", "--exec-timeout", "0.3"], capture_output=True,
                          text=True, timeout=60)
    assert time.monotonic() - started < 20
    assert "late: no answer to turn 1 within 300 ms" in done.stderr, done.stderr
    bad = subprocess.run([str(cli), "selfplay", "--bots", "random,random",
                          "--exec-processes", "-1"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "bad --exec-processes '-1'" in bad.stderr


def test_over_the_network_a_bad_line_is_one_log_line_and_the_record_quotes_it(
        referee, redis_url: str, random_bots, bot_proc) -> None:
    """A program's bad line loses its game: the bot's log says so in one line (the program's
    stderr escaped in it) with no Python traceback, and the reason the match record keeps
    quotes the bad line to its end within the record's cap."""
    import redis
    from kits.net import KEY_PREFIX

    from sueca.arena.keys import Keys
    from sueca.arena.store.bots import BotRegistry
    from sueca.referee import control
    token = BotRegistry(redis.Redis.from_url(redis_url), Keys(KEY_PREFIX)).add("exec-badline")
    bot = bot_proc(spec("badline"), referee.address, token, capacity=2)
    seats = ["exec-badline", "alice", "exec-badline", "bob"]
    result = control.run_match(referee.address, {"bots": seats, "seed": 1})
    assert result["end"] == "bot_error" and result["fault_bot"] == "exec-badline", result
    detail = result.get("fault_detail") or ""
    assert "not JSON" in detail and "END-OF-BAD-LINE'" in detail, detail
    wait_for(lambda: "lost game" in bot.logs(), 10, "the lost game's log line", detail=bot.logs)
    logs = bot.logs()
    assert "Traceback" not in logs and 'File "' not in logs, logs
    lost = [line for line in logs.splitlines() if "lost game" in line or "gave up" in line]
    assert len(lost) == 1 and "END-OF-BAD-LINE" in lost[0] and "\\x1b[31mred" in lost[0], lost


def test_over_the_network_a_crash_loses_that_game_and_the_session_goes_on(
        referee, redis_url: str, random_bots, bot_proc, tmp_path: Path) -> None:
    import redis
    from kits.net import KEY_PREFIX

    from sueca.arena.keys import Keys
    from sueca.arena.store.bots import BotRegistry
    from sueca.referee import control
    registry = BotRegistry(redis.Redis.from_url(redis_url), Keys(KEY_PREFIX))
    token = registry.add("exec-crash-once")
    bot = bot_proc(f"{spec('crash-once')} {tmp_path / 'crashed'}", referee.address, token,
                   capacity=2)
    seats = ["exec-crash-once", "alice", "exec-crash-once", "bob"]
    first = control.run_match(referee.address, {"bots": seats, "seed": 1})
    assert first["end"] == "bot_error" and first["fault_bot"] == "exec-crash-once", first
    assert "exited with code 3" in first.get("fault_detail", ""), first
    second = control.run_match(referee.address, {"bots": seats, "seed": 2})
    assert second["end"] == "normal", second
    logs = bot.logs()
    assert "lost game" in logs and "exited with code 3" in logs and "crash: misbehaving" in logs

    def running() -> str:
        return " ".join(" ".join(p.cmdline()) for p in
                        psutil.Process(bot.proc.pid).children(recursive=True))
    wait_for(lambda: str(PROGRAMS) not in running(), 10, "the programs to be ended")
