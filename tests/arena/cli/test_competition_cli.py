"""``sueca-arena competition``: each command's table (80 columns, nothing cut) and --json, the
moves recorded with who asked, the freeze stamping versions, and bad input refused in one line
quoting it with nothing written. In this process (``main``) on the session's real Redis."""

from __future__ import annotations

import json
import time

import pytest

from sueca.arena.cli import main
from sueca.arena.competitions.ladder import plays

BOTS = ("alpha-bot-with-a-long-name", "beta", "gamma")


@pytest.fixture
def arena(store, prefix, redis_url, monkeypatch):
    """A fresh arena (its own key prefix) with three registered bots: its store."""
    monkeypatch.setenv("SUECA_KEY_PREFIX", prefix)
    monkeypatch.setenv("SUECA_REDIS_URL", redis_url)
    monkeypatch.setenv("COLUMNS", "80")
    for bot in BOTS:
        store.bots.add(bot)
    return store


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    """``sueca-arena competition ARGV``: (exit code, stdout, stderr)."""
    code = main(["competition", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _json(capsys, *argv: str):
    code, out, err = _run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def _fits(text: str) -> None:
    assert text.strip()
    assert max(len(line) for line in text.splitlines()) <= 80, text


def test_a_season_through_the_commands(arena, capsys):
    store = arena
    made = _json(capsys, "create", "spring", "--variant", "tie=double", "target=8",
                 "--move-ms", "500", "--freeze-at", "+2h", "--close-at", "2030-01-02T03:04",
                 "--final", "double-elimination", "--final-top", "8", "--best-of", "2",
                 "--divisions", "2", "--promote", "1", "--every", "30m", "--placement", "2",
                 "--fair-play", "3/10", "--by", "organiser")
    assert made["name"] == "spring" and made["state"] == "draft"
    spec = made["spec"]
    assert spec["variant"]["tie"] == "double" and spec["variant"]["target"] == 8
    assert spec["limits"]["move_ms"] == 500
    assert abs(spec["freezes_at"] - (time.time() + 7200)) < 60
    assert spec["closes_at"] == 1893553440.0                        # UTC: no offset given
    assert spec["opens_at"] is None                                 # by command only
    assert spec["final"] == {"format": "double-elimination", "top": 8, "best_of": 2}
    assert spec["divisions"]["count"] == 2 and spec["divisions"]["every_s"] == 1800
    assert spec["divisions"]["placement"] == 2
    assert spec["fair_play"]["faults"] == 3 and spec["fair_play"]["of_last"] == 10
    assert made["seed_key"] is None and len(made["seed_hash"]) == 64
    for bot in BOTS:
        entry = _json(capsys, "enter", "spring", bot, "--by", "owner")
        assert entry["bot"] == bot and entry["by"] == "owner"
    assert _run(capsys, "open", "spring")[0] == 0                   # by the OS user
    store.versions.bump("beta", by="owner", note="v2")              # open: versions accepted
    for bot in BOTS:                                                # placement played: the
        store.competitions.update_entry("spring", bot, placed=2)    # ladder's upkeep splits
    plays(store, list(BOTS), present=set(BOTS), variant={}, limits={}, now=time.time())
    step = _json(capsys, "freeze", "spring", "--by", "organiser")
    assert step["from_state"] == "open" and step["to"] == "frozen" and step["by"] == "organiser"
    shown = _json(capsys, "show", "spring")
    assert {e["bot"]: e["version"] for e in shown["entries"]} == {
        "alpha-bot-with-a-long-name": 1, "beta": 2, "gamma": 1}     # stamped at the freeze
    assert [(m["from_state"], m["to"], m["by"]) for m in shown["log"]] == [
        ("", "draft", "organiser"), ("draft", "open", shown["log"][1]["by"]),
        ("open", "frozen", "organiser")]
    assert shown["log"][1]["by"] not in ("", "organiser")           # the OS user
    code, table, _ = _run(capsys, "show", "spring")
    assert code == 0
    _fits(table)
    for word in ("spring", "frozen", "tie=double", "target=8", "move_ms=500",
                 "double-elimination", *BOTS, "organiser", "draft", "open", "Divisions",
                 "split", "scheduler", "gamma→1"):
        assert word in table, word
    assert [c["kind"] for c in shown["divisions_log"]] == ["split"]
    assert [e["division"] for e in shown["entries"]] == [0, 0, 0]   # 2 bots a division at least
    # the list, with the default ladder first
    listed = _json(capsys, "list")
    assert [r["name"] for r in listed][-1] == "spring" and listed[-1]["state"] == "frozen"
    assert listed[-1]["entrants"] == 3
    assert listed[-1]["next"] is None                       # the final: by command only
    code, table, _ = _run(capsys, "list")
    _fits(table)
    assert "spring" in table and "frozen" in table
    assert _run(capsys, "final", "spring")[0] == 0              # its final scheduled
    code, _, err = _run(capsys, "close", "spring")
    assert code == 2 and "its final is not over" in err, err     # closing waits for it
    # one without a final closes at once (test_competition_season.py plays a final through)
    for argv in (["create", "autumn"], ["open", "autumn"], ["freeze", "autumn"],
                 ["final", "autumn"]):
        assert _run(capsys, *argv)[0] == 0
    closed = _json(capsys, "close", "autumn")
    assert closed["to"] == "closed"
    revealed = _json(capsys, "show", "autumn")
    assert revealed["seed_key"] and revealed["state"] == "closed"


def _keys(store, prefix):
    return sorted(k for k in store.r.keys(prefix + "*") if b"lock:" not in k)


BAD = [
    (["create", "c1", "--variant", "tie=triple"], "'triple'"),
    (["create", "c1", "--variant", "colour=red"], "'colour'"),
    (["create", "c1", "--freeze-at", "tomorrow"], "--freeze-at: bad time 'tomorrow'"),
    (["create", "c1", "--open-at", "+2y"], "--open-at: bad time '+2y'"),
    (["create", "c1", "--divisions", "2", "--every", "soon"], "bad --every 'soon'"),
    (["create", "c1", "--fair-play", "5/3"], "bad --fair-play '5/3'"),
    (["create", "c1", "--promote", "2"], "--promote without --division-size"),
    (["show", "nope"], "'nope'"),
    (["enter", "nope", "beta"], "'nope'"),
    (["enter", "known", "ghost"], "'ghost'"),
    (["freeze", "nope"], "'nope'"),
    (["final", "known"], "competition 'known' is"),
    (["open", "known", "--by", ""], "bad --by ''"),
]


@pytest.mark.parametrize("argv, quoted", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_quoting_it_and_writes_nothing(arena, capsys, prefix, argv,
                                                            quoted):
    store = arena
    assert _run(capsys, "create", "known")[0] == 0
    before = _keys(store, prefix)
    log = store.competitions.get("known")["log"]
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and quoted in err, err
    assert "Traceback" not in err
    assert _keys(store, prefix) == before
    assert store.competitions.get("known")["log"] == log


def test_a_move_out_of_order_says_what_comes_first(arena, capsys):
    assert _run(capsys, "create", "x")[0] == 0
    assert _run(capsys, "open", "x")[0] == 0
    code, _, err = _run(capsys, "final", "x")
    assert code == 2 and err.count("\n") == 1
    assert "competition 'x' is open" in err and "freeze" in err, err
    code, _, err = _run(capsys, "open", "x")
    assert code == 2 and "competition 'x' is already open" in err, err


def test_a_hosted_only_competition_takes_a_bot_only_while_it_runs_a_submission(
        arena, capsys) -> None:
    assert _run(capsys, "create", "hosted-cup", "--hosted-only")[0] == 0
    code, _, err = _run(capsys, "enter", "hosted-cup", "beta")
    assert code == 2 and "hosted bots only" in err and err.count("\n") == 1
    version = arena.versions.bump("beta", by="bots submit", submission="ab" * 32)
    arena.hosted.host("beta", version=version, submission="ab" * 32)
    arena.versions.bump("gamma", by="owner")  # a connected bot's new version: not hosted
    arena.hosted.host("gamma", version=1, submission="cd" * 32)
    assert _run(capsys, "enter", "hosted-cup", "beta")[0] == 0
    code, _, err = _run(capsys, "enter", "hosted-cup", "gamma")
    assert code == 2 and "hosted bots only" in err
    assert list(arena.competitions.entries("hosted-cup")) == ["beta"]
