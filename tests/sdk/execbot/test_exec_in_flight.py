"""Self-play with matches in flight on an exec: program that takes many games
(sueca.sdk.selfplay.play_many): the same matches as one at a time, bit for bit, and a program
that breaks mid-batch loses only what it was playing, leaving nothing running. Real child
processes throughout."""

from __future__ import annotations

import gc
import json
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from kits.bots import DIR as BOTS

from sueca.engine import End, Variant
from sueca.engine import replay as replays
from sueca.sdk.bots import load_bot
from sueca.sdk.execbot import command_of, protocol
from sueca.sdk.selfplay import in_flight, selfplay
from sueca.sdk.settings import current, replace, use

PROGRAMS = BOTS / "exec_programs.py"


def none_left(timeout: float = 5.0) -> None:
    """No child of ours still runs (or lies unreaped) a program of these tests."""
    def ours() -> list[psutil.Process]:
        found = []
        for p in psutil.Process().children(recursive=True):
            try:
                line = " ".join(p.cmdline())
                if "exec_programs.py" in line or "breaks.py" in line or (
                        p.status() == psutil.STATUS_ZOMBIE):
                    found.append(p)
            except psutil.NoSuchProcess:
                pass
        return found
    gc.collect()  # a match a program broke is dropped with its other seats' bots (cycles)
    deadline = time.monotonic() + timeout
    while ours() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not ours(), [p.cmdline() for p in ours()]

# a program taking 8 games at once that answers fair (first legal card) until its 25th turn,
# then misbehaves as argv[1] says, once (argv[2] marks that it has)
BREAKS = '''
import json, os, sys, time
print('{"type":"hello","protocol":"sueca-exec/1","games":8}', flush=True)
turns = 0
for msg in map(json.loads, sys.stdin):
    turns += msg["type"] == "turn"
    if msg["type"] != "turn":
        continue
    if turns == 25 and not os.path.exists(sys.argv[2]):
        open(sys.argv[2], "a").close()
        sys.stderr.write(sys.argv[1] + ": misbehaving now\\n")
        sys.stderr.flush()
        if sys.argv[1] == "crash":
            raise SystemExit(3)
        if sys.argv[1] == "garbage":
            print("this is not json", flush=True)
        time.sleep(3600)
    key = "redeal" if msg["kind"] == "redeal" else "card"
    value = False if key == "redeal" else msg["legal"][0]
    print(json.dumps({"game": msg["game"], "id": msg["id"], key: value}), flush=True)
'''


@pytest.fixture
def quick() -> Iterator[None]:
    use(replace(current(), exec_timeout=1.0))
    yield
    use(None)


def run(factories: list, at_once: int, **kw: object) -> tuple[dict, list]:
    records: list[replays.ReplayRecord] = []
    summary = selfplay(factories, ["a", "b"], on_match=lambda m, r: records.append(r),
                       want_records=True, at_once=at_once, **kw)  # type: ignore[arg-type]
    return summary, records


def end_all(*factories: object) -> None:
    for f in factories:
        command = command_of(f)
        for p in command.programs if command else ():
            p.fail("test over")  # a many-games process stays for the next game otherwise
    none_left()


@pytest.mark.parametrize("duplicate", [False, True])
def test_in_flight_plays_the_very_matches_of_one_at_a_time(duplicate: bool,
                                                            tmp_path: Path) -> None:
    log = tmp_path / "lines.jsonl"  # every line both ways
    multi = load_bot(f"exec:{sys.executable} {PROGRAMS} record {log} {sys.executable} "
                     f"{PROGRAMS} multi")  # "games": 64
    variant = Variant(weak_hand_redeal=True, trump_card="first")  # redeal turns too
    for other in (load_bot("random"), multi):  # against Python, and against itself
        factories = [multi, other]
        assert in_flight(factories) == (32 if other is not multi else 16)
        serial = run(factories, 1, variant=variant, matches=12, seed=7, duplicate=duplicate)
        batched = run(factories, 32, variant=variant, matches=12, seed=7, duplicate=duplicate)
        assert batched == serial
        assert serial[0]["deals"] > 12
    assert '\\"kind\\":\\"redeal\\"' in log.read_text()  # redeal turns in flight too
    end_all(multi)


def test_a_one_game_program_plays_one_match_at_a_time() -> None:
    plain = load_bot(f"exec:{sys.executable} {PROGRAMS} plain")
    assert in_flight([plain, load_bot("random")]) == 1
    assert in_flight([load_bot("random"), load_bot("heuristic")]) == 1
    none_left()


@pytest.mark.parametrize("kind, says", [
    ("crash", "exited with code 3"),
    ("garbage", "printed a line that is not JSON: b'this is not json'"),
    ("hang", "late: no answer to turn"),
])
def test_a_program_breaking_mid_batch_loses_its_open_games_and_the_run_goes_on(
        kind: str, says: str, tmp_path: Path, quick: None,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, "sueca.exec")
    program = tmp_path / "breaks.py"
    program.write_text(BREAKS)
    bot = load_bot(f"exec:{sys.executable} {program} {kind} {tmp_path / 'broke'}")
    factories = [bot, load_bot("random")]
    assert in_flight(factories) == 4
    summary, records = run(factories, 32, matches=8, seed=3)
    assert summary["matches"] == len(records) == 8
    lost = [r for r in records if r["end"] == End.BOT_ERROR]
    # every game open on the process when it broke: its two seats in each of up to 4 matches
    assert 1 <= len(lost) <= 4 and summary["bots"][0]["faults"] == len(lost)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == len(lost)  # one line for each game lost
    assert says in lines[0] and f"{kind}: misbehaving now" in lines[0]
    assert all(r["end"] == End.NORMAL for r in records if r not in lost)
    end_all(bot)


@pytest.mark.parametrize("line", [
    b'{"game":"selfplay-0-1/2","id":12,"card":"AS"}', b'{"game":"g","id":0,"redeal":false}',
    b'{"game":"g","id":7,"redeal":true}', b'{"game":"","id":3,"card":true}',
    b'{"game":"g","id":3,"card":"a b~[]"}', b'{"game":"g\\u00e9","id":1,"card":"AS"}',
    b'{"game":"g","id":1,"card":"A\\"S"}', b'{"game": "g","id":1,"card":"AS"}',
    b'{"game":"g","id":1,"card":"AS","x":1}', b'{"game":"g","id":1.0,"card":"AS"}',
    "{\"game\":\"g\u00e9\",\"id\":1,\"card\":\"AS\"}".encode(),
])
def test_an_answer_is_read_as_the_json_decoder_reads_it(line: bytes) -> None:
    """Answers in the examples' form skip the JSON decoder: the same game, id and object."""
    obj = json.loads(line)
    try:
        got = protocol.read_answer(line)
    except protocol.ProtocolError:
        assert not isinstance(obj.get("id"), int)
        return
    assert got == (obj["game"], obj["id"], obj) and list(got[2]) == list(obj)
    assert [type(v) for v in got[2].values()] == [type(v) for v in obj.values()]


@pytest.mark.parametrize("line", [b'{"game":"g","id":03,"card":"AS"}',
                                  b'{"game":"g","id":1,"card":"AS"} x', b'{"game":"g","id":1'])
def test_a_broken_answer_is_still_a_protocol_error(line: bytes) -> None:
    with pytest.raises(protocol.ProtocolError, match="not JSON"):
        protocol.read_answer(line)
