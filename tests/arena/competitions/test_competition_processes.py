"""Two competitions and the default ladder at once, through real processes: a private Redis,
a referee, a Celery worker, ``sueca-bot run`` bots and ``sueca-arena scheduler``; the
competitions made and opened with the CLI. Each competition's matches are among its entrants
with its rules and its seeds; one opens and freezes by its times alone (the freeze stamping
versions); its divisions split and go through a promotion cycle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kits.arena import SUECA_ARENA, cli
from kits.wait import wait_for

from sueca.arena.cli import main
from sueca.arena.lifecycle import State
from sueca.arena.local_arena import LocalArena
from sueca.arena.schedule import derive_seed
from sueca.arena.store.versions import VersionError

pytestmark = pytest.mark.slow

BOTS = {"r1": "random", "r2": "random", "h1": "heuristic", "k1": "reckless"}
ALPHA = ("r1", "h1", "k1")
BETA = ("r1", "r2", "h1", "k1")


def _cli(redis_url: str, *argv: str) -> None:
    """The CLI in this process (a subprocess costs seconds of start-up on a busy machine)."""
    assert main([*argv, "--redis", redis_url]) == 0


def test_two_competitions_and_the_ladder_play_at_once(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    arena = LocalArena(None, None, BOTS, capacity=4, concurrency=2, log_dir=tmp_path)
    arena.start(timeout=90)
    try:
        env = arena.env()
        store = arena.store
        url = arena.redis_url
        _cli(url, "competition", "create", "alpha", "--variant", "tie=double", "--move-ms",
             "900", "--by", "org")
        _cli(url, "competition", "create", "beta", "--variant", "bandeira=all_points",
             "--open-at", "+2s", "--freeze-at", "+10s", "--divisions", "2", "--promote", "1",
             "--every", "2s", "--placement", "1")
        for name, bots in (("alpha", ALPHA), ("beta", BETA)):
            for bot in bots:
                _cli(url, "competition", "enter", name, bot)
        _cli(url, "competition", "open", "alpha", "--by", "org")
        store.versions.bump("r2", by="owner")                     # beta is a draft: fine
        arena.children.spawn("scheduler", [SUECA_ARENA, "scheduler", "--target", "6",
                                           "--interval", "0.3", "--referee", arena.referee],
                             {"SUECA_REDIS_URL": url})

        def season() -> bool:
            arena.check()
            beta = store.competitions.get("beta")
            kinds = [c["kind"] for c in store.competitions.division_log("beta")]
            played = {r.get("competition", "") for _, r in store.results()}
            return (beta["state"] is State.FROZEN and "cycle" in kinds
                    and {"", "alpha", "beta"} <= played)

        wait_for(season, 60, "beta frozen by its time, a cycle of its divisions, results of "
                 "both competitions and the ladder", interval=0.5,
                 detail=lambda: json.dumps(cli("competition", "show", "beta", "--json",
                                               env=env).stdout[-1500:]))
        beta = json.loads(cli("competition", "show", "beta", "--json", env=env).stdout)
        assert [(m["to"], m["by"]) for m in beta["log"][1:]] == [
            ("open", "scheduler"), ("frozen", "scheduler")]        # by its times alone
        assert {e["bot"]: e["version"] for e in beta["entries"]} == {
            "r1": 1, "r2": 2, "k1": 1, "h1": 1}                    # stamped at the freeze
        with pytest.raises(VersionError, match="frozen"):
            store.versions.bump("r2", by="owner")
        changes = beta["divisions_log"]
        assert changes[0]["kind"] == "split" and changes[0]["by"] == "scheduler"
        cycle = next(c for c in changes if c["kind"] == "cycle")
        assert sorted((m["from_division"], m["to"]) for m in cycle["moves"]) == [(0, 1), (1, 0)]
        secrets = {n: store.competitions.secret(n) for n in ("alpha", "beta")}
        seen = set()
        for _, r in store.results():
            name = r.get("competition", "")
            match = store.match(r["match_id"])
            seats = set(r["seats"])
            seen.add(name)
            if name == "alpha":
                assert seats <= set(ALPHA) and r["variant"]["tie"] == "double"
                assert match["spec"]["move_ms"] == 900
            elif name == "beta":
                assert seats <= set(BETA) and r["variant"]["bandeira"] == "all_points"
                assert r["versions"] == {b: 2 if b == "r2" else 1 for b in seats}
            else:
                assert seats <= set(BOTS) and r["variant"].get("tie", "carry") == "carry"
                continue
            assert match["spec"]["seed"] == derive_seed(secrets[name], r["match_id"])
        assert seen == {"", "alpha", "beta"}
        capsys.readouterr()
        _cli(url, "competition", "list", "--json")
        listed = {c["name"]: c["state"] for c in json.loads(capsys.readouterr().out)}
        assert listed == {"ladder": "open", "alpha": "open", "beta": "frozen"}
    finally:
        arena.stop(grace=3.0)  # all at once: nothing here needs a graceful stop
