"""``sueca-arena bots submit`` through the real CLI on a real Redis: a refused submission (bad
manifest, a link out of the folder, a wrong token, a bot frozen in a competition) is one line
quoting why, exit code 2, and writes nothing; accepted ones are content-addressed (the same
folder, the same hash) and each is a new version of the bot."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from kits.arena import arena_env, cli

from sueca.arena.cli import bots as bots_cli
from sueca.arena.cli import main
from sueca.arena.keys import Keys
from sueca.arena.lifecycle import new_spec
from sueca.arena.records import CompetitionState
from sueca.arena.store import Store, connect


def test_refused_submissions_write_nothing(redis_url: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = f"hs{uuid.uuid4().hex[:8]}:"
    store = Store(connect(redis_url), Keys(prefix))
    env = arena_env(redis_url, prefix)
    for name in ("SUECA_REDIS_URL", "SUECA_KEY_PREFIX"):
        monkeypatch.setenv(name, env[name])
    monkeypatch.delenv("SUECA_TOKEN", raising=False)

    def submit(*args: str, code: int = 0) -> str:
        """``sueca-arena bots submit ARGS`` in this process: its stdout."""
        capsys.readouterr()
        assert main(["bots", "submit", *args]) == code
        out, err = capsys.readouterr()
        return out if code == 0 else err
    token = store.bots.add("mine")
    other = store.bots.add("theirs")
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "bot.py").write_text("from sueca.sdk.bots.random_bot import RandomBot as B\n")

    def refused(*args: str, says: str) -> None:
        capsys.readouterr()
        assert main(["bots", "submit", *args]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1, err
        assert says in err, err
        assert store.versions.current("mine") == 1 and store.hosted.hosted() == {}
        assert not list(store.r.scan_iter(f"{prefix}submission:*"))

    (folder / "sueca-bot.toml").write_text('python = "bot:B"\nstart = "now"\n')
    refused("mine", str(folder), "--token", token,
            says="refused: sueca-bot.toml: unknown key 'start' (the keys are python, exec, build)")
    (folder / "sueca-bot.toml").write_text('python = "bot:B"\n')
    (folder / "out").symlink_to("/etc/passwd")
    refused("mine", str(folder), "--token", token,
            says="link 'out' points to '/etc/passwd'")
    (folder / "out").unlink()
    refused("mine", str(folder), "--token", other,
            says="error: wrong token for bot 'mine': a bot's code is submitted only with its "
                 "own token")
    refused("nobody", str(folder), "--token", token, says="unknown bot 'nobody'")
    refused("mine", str(tmp_path / "missing.tar.gz"), "--token", token,
            says="cannot read")

    first = json.loads(cli("bots", "submit", "mine", str(folder), "--token", token, "--json",
                           env=env).stdout)
    monkeypatch.setenv("SUECA_TOKEN", token)
    again = json.loads(submit("mine", str(folder), "--json"))
    assert first["submission"] == again["submission"] and len(first["submission"]) == 64
    assert (first["version"], again["version"]) == (2, 3)
    assert (store.versions.get("mine", 3) or {}).get("submission") == first["submission"]
    assert store.hosted.hosted()["mine"]["version"] == 3

    # at most SUBMISSIONS_AN_HOUR an hour
    monkeypatch.setattr(bots_cli, "SUBMISSIONS_AN_HOUR", 2)
    err = submit("mine", str(folder), code=2)
    assert err == "error: bot 'mine' had 2 submissions in the last hour: at most 2 an hour\n"
    assert store.versions.current("mine") == 3
    monkeypatch.setattr(bots_cli, "SUBMISSIONS_AN_HOUR", 10)

    # frozen in a competition: no new version, and the new archive is not kept
    store.competitions.create(new_spec("cup"), by="test")
    store.competitions.enter("cup", "mine", by="test")
    for state in (CompetitionState.OPEN, CompetitionState.FROZEN):
        store.competitions.move("cup", state, by="test")
    (folder / "bot.py").write_text("from sueca.sdk.bots.heuristic import HeuristicBot as B\n")
    err = submit("mine", str(folder), code=2)
    assert "competition 'cup'" in err and err.count("\n") == 1, err
    assert store.versions.current("mine") == 3
    assert [k for k in store.r.scan_iter(f"{prefix}submission:*")] == [
        f"{prefix}submission:{first['submission']}".encode()]

    # removed once its competition closes: its versions go, and so do their archives
    for state in (CompetitionState.FINAL, CompetitionState.CLOSED):
        store.competitions.move("cup", state, by="test")
    capsys.readouterr()
    assert main(["bots", "remove", "mine"]) == 0
    assert not list(store.r.scan_iter(f"{prefix}submission:*"))
    assert store.hosted.hosted() == {}
