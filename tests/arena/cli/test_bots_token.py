"""The owner's token is read one way by every ``bots`` command that needs it (``challenge``,
``submit``, ``logs``): ``--token``, else ``$SUECA_TOKEN``; a missing or blank one is refused in
the same line naming what is missing, exit code 2, nothing written to Redis."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from kits.arena import arena_env

from sueca.arena.cli import main
from sueca.arena.keys import Keys
from sueca.arena.store import Store, connect

MISSING = {
    "unset": ([], {}, "no --token given and $SUECA_TOKEN is not set"),
    "blank env": ([], {"SUECA_TOKEN": "  "}, "no --token given and $SUECA_TOKEN is not set"),
    "blank flag": (["--token", ""], {"SUECA_TOKEN": "{alice}"}, "--token is blank"),
}


@pytest.mark.parametrize("how", MISSING)
def test_every_owner_command_refuses_a_missing_token_alike(
        how: str, redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = f"tk{uuid.uuid4().hex[:8]}:"
    store = Store(connect(redis_url), Keys(prefix))
    tokens = {b: store.bots.add(b) for b in ("alice", "bob")}
    env = arena_env(redis_url, prefix)
    for name in ("SUECA_REDIS_URL", "SUECA_KEY_PREFIX"):
        monkeypatch.setenv(name, env[name])
    monkeypatch.delenv("SUECA_TOKEN", raising=False)
    flags, extra, missing = MISSING[how]
    for name, value in extra.items():
        monkeypatch.setenv(name, value.format(**tokens))
    folder = tmp_path / "alice"
    folder.mkdir()
    (folder / "bot.py").write_text("from sueca.sdk.bots.random_bot import RandomBot as B\n")
    (folder / "sueca-bot.toml").write_text('python = "bot:B"\n')
    before = {k: store.r.dump(k) for k in store.r.keys(prefix + "*")}
    said = set()
    for argv in (["challenge", "alice", "bob"], ["submit", "alice", str(folder)],
                 ["logs", "alice"]):
        capsys.readouterr()
        assert main(["bots", *argv, *flags]) == 2, argv
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
        assert err == (f"error: no token for bot 'alice': {missing}; pass its token (from "
                       "`sueca-arena bots add`) with --token TOKEN or in $SUECA_TOKEN\n"), err
        said.add(err)
        assert {k: store.r.dump(k) for k in store.r.keys(prefix + "*")} == before
    assert len(said) == 1  # the same words from each command


def test_the_token_flag_reads_the_same_in_every_owner_command(
        capsys: pytest.CaptureFixture[str]) -> None:
    helps = set()
    for action in ("challenge", "submit", "logs"):
        with pytest.raises(SystemExit):
            main(["bots", action, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        start = text.rindex("--token TOKEN")  # the options list, not the usage line
        helps.add(text[start:text.index(")", start) + 1])
    assert helps == {"--token TOKEN NAME's token, proving you own it (default: $SUECA_TOKEN)"}
