"""``competition export``, ``competition verify`` and ``ratings rebuild --from``: bad input is
one line quoting it, exit 2, with nothing written; a competition not closed yet has no key to
verify with. In this process (``main``) on the session's real Redis; real exports of played
matches are checked by tests/arena/competitions/test_competition_season.py."""

from __future__ import annotations

import json

import pytest

from sueca.arena.cli import main
from sueca.arena.lifecycle import State, new_spec


@pytest.fixture
def arena(store, prefix, redis_url, monkeypatch):
    monkeypatch.setenv("SUECA_KEY_PREFIX", prefix)
    monkeypatch.setenv("SUECA_REDIS_URL", redis_url)
    store.bots.add("ann")
    store.competitions.create(new_spec("cup"), by="org")
    store.competitions.enter("cup", "ann", by="org")
    return store


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_an_open_competition_exports_without_its_key_and_cannot_be_verified(
        arena, capsys, tmp_path) -> None:
    arena.competitions.move("cup", State.OPEN, by="org")
    path = tmp_path / "cup.jsonl"
    code, out, _ = _run(capsys, "competition", "export", "cup", "-o", str(path))
    assert code == 0 and "wrote 0 matches of competition cup" in out and "without" in out
    header = json.loads(path.read_text().splitlines()[0])
    assert header["format"] == "sueca-competition/1" and header["seed_key"] is None
    assert header["seed_hash"] == arena.competitions.get("cup")["seed_hash"]
    assert [e["bot"] for e in header["entries"]] == ["ann"]
    for target in ("cup", str(path)):
        code, out, err = _run(capsys, "competition", "verify", target)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert "'cup' is open: its seed key is revealed when it closes" in err
    # closed: the key is in the export and checks (no match to check yet)
    for to in (State.FROZEN, State.FINAL, State.CLOSED):
        arena.competitions.move("cup", to, by="org")
    assert _run(capsys, "competition", "export", "cup", "-o", str(path))[0] == 0
    code, out, _ = _run(capsys, "competition", "verify", str(path))
    assert code == 0 and "the revealed key matches the seed hash" in out
    code, out, _ = _run(capsys, "ratings", "rebuild", "--from", str(path))
    assert code == 0 and "identical to the ratings it records" in out


BAD = [
    (["competition", "export", "nope", "-o", "x.jsonl"], "unknown competition 'nope'"),
    (["competition", "export", "cup", "-o", "/no/such/dir/x.jsonl"], "'/no/such/dir/x.jsonl'"),
    (["competition", "verify", "nope"], "no export file 'nope', nor a competition"),
    (["ratings", "rebuild", "--from", "missing.jsonl"], "'missing.jsonl'"),
    (["ratings", "rebuild", "--from", "x.jsonl", "--elo-k", "8"], "leave out --elo-k"),
]


@pytest.mark.parametrize("argv, quoted", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_quoting_it(arena, capsys, argv, quoted, tmp_path,
                                          monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    before = sorted(arena.r.keys("*"))
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and quoted in err, err
    assert "Traceback" not in err
    assert sorted(arena.r.keys("*")) == before
    assert not (tmp_path / "x.jsonl").exists()


def test_a_file_that_is_not_an_export_is_named(arena, capsys, tmp_path) -> None:
    path = tmp_path / "replays.jsonl"
    path.write_text(json.dumps({"format": "sueca-replay/1", "match_id": "m"}) + "\n")
    for argv in (["competition", "verify", str(path)], ["ratings", "rebuild", "--from",
                                                          str(path)]):
        code, _, err = _run(capsys, *argv)
        assert code == 2 and "is not a competition export" in err and "'sueca-replay/1'" in err
