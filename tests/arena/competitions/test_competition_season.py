"""A whole competition through real processes: a private Redis, ``sueca-arena referee``, a
Celery worker, nine bots as ``sueca-bot run`` processes, ``sueca-arena scheduler`` and the
command line, from the competition's creation to the check of its revealed seed key against
every match it played: entries, two versions of one bot, divisions with a promotion cycle, a
suspension and its lift, the freeze refusing a new version, a double-elimination final of 8,
the close, the export and the seed reveal.

One test, one arena: each step needs the state the last left (about a minute on two cores).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from kits.arena import SUECA_ARENA, TESTS, cli
from kits.wait import wait_for

from sueca.arena import final
from sueca.arena.cli import main
from sueca.arena.lifecycle import State
from sueca.arena.local_arena import LocalArena
from sueca.arena.seeds import derive_seed
from sueca.arena.store.fairplay import suspended

pytestmark = pytest.mark.slow

NAME = "spring"
#: eight bots for the final, and s9, whose code fails on its third card of every match: it is
#: suspended, lifted, suspended again, and a suspended bot does not qualify for the final
FIELD = {**{f"s{i}": ("random", "reckless")[i % 2] for i in range(1, 9)},
         "s9": f"{TESTS / 'kits' / 'bots' / 'faulty.py'}:RaisesOnThirdCard"}
FINAL = ["--final", "double-elimination", "--final-top", "8", "--best-of", "1"]


def _page(store, name: str) -> dict:
    """The competition's page as /api/competitions/NAME answers it."""
    from starlette.testclient import TestClient

    from sueca.arena.web.app import create_app
    with TestClient(create_app(store)) as client:
        got: dict = client.get(f"/api/competitions/{name}").json()
    return got


def _html(store, name: str) -> str:
    from starlette.testclient import TestClient

    from sueca.arena.web.app import create_app
    with TestClient(create_app(store)) as client:
        return client.get(f"/competitions/{name}").text


def _cli(url: str, *argv: str) -> None:
    """The CLI in this process (a subprocess costs seconds of start-up on a busy machine)."""
    assert main([*argv, "--redis", url]) == 0


def test_a_season_from_creation_to_the_seed_reveal(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("SUECA_SUSPEND_AFTER", "2/3")  # this process and every child
    arena = LocalArena(None, None, dict(FIELD), capacity=4, concurrency=2, log_dir=tmp_path)
    arena.start(timeout=90)
    try:
        _season(arena, tmp_path, capsys)
    finally:
        arena.stop()


def _season(arena: LocalArena, tmp_path: Path, capsys) -> None:
    store, env, url = arena.store, arena.env(), arena.redis_url
    _cli(url, "competition", "create", NAME, "--variant", "target=4", *FINAL, "--divisions",
         "2", "--promote", "1", "--every", "3s", "--placement", "0", "--by", "organiser")
    for bot in FIELD:
        _cli(url, "competition", "enter", NAME, bot)
    _cli(url, "competition", "open", NAME, "--by", "organiser")
    rec = store.competitions.get(NAME)
    assert rec["seed_key"] is None and len(rec["seed_hash"]) == 64  # committed, not shown
    _cli(url, "bots", "version", "s1", "--note", "better leads")   # two versions of s1
    arena.children.spawn("scheduler", [SUECA_ARENA, "scheduler", "--target", "4",
                                       "--interval", "0.3", "--referee", arena.referee],
                         {"SUECA_REDIS_URL": url})

    def settled() -> bool:
        arena.check()
        kinds = [c["kind"] for c in store.competitions.division_log(NAME)]
        mine = [r for _, r in store.results() if r.get("competition") == NAME]
        return ("cycle" in kinds and len(mine) >= 8
                and any(r.get("versions", {}).get("s1") == 2 for r in mine))

    wait_for(settled, 90, "the competition's ladder: a promotion cycle, s1's version 2 played",
             interval=0.5)
    cycle = next(c for c in store.competitions.division_log(NAME) if c["kind"] == "cycle")
    assert sorted((m["from_division"], m["to"]) for m in cycle["moves"]) == [(0, 1), (1, 0)]

    # a suspension and its lift: s9 faulted in 2 of its last 3 matches; the ladder leaves it
    # out until an operator lifts it, then pairs it again
    wait_for(lambda: arena.check() or suspended(store, ["s9"]), 60, "s9 to be suspended",
             interval=0.5)
    capsys.readouterr()
    assert main(["bots", "list", "--json", "--redis", url]) == 0
    listed = {r["bot"]: r for r in json.loads(capsys.readouterr().out)}
    assert listed["s9"]["suspended"] and not listed["s1"]["suspended"]
    held = store.r.zcard(store.keys.matches())
    wait_for(lambda: store.r.zcard(store.keys.matches()) >= held + 6, 60, "six more matches")
    since = store.r.zrange(store.keys.matches(), held, -1)
    assert not [m for m in since if "s9" in store.match(m.decode())["spec"]["bots"]]
    _cli(url, "bots", "lift", "s9", "--by", "organiser")
    assert "s9" not in suspended(store, ["s9"])
    lifted = store.r.zcard(store.keys.matches())
    wait_for(lambda: any("s9" in store.match(m.decode())["spec"]["bots"]
                         for m in store.r.zrange(store.keys.matches(), lifted, -1)), 60,
             "the ladder to pair s9 again once lifted", interval=0.5)
    # its code still fails: suspended again, so the final of the top 8 passes it over
    wait_for(lambda: arena.check() or suspended(store, ["s9"]), 60, "s9 suspended again",
             interval=0.5)

    # the freeze: the versions that play are fixed, a new one refused with a clear message
    _cli(url, "competition", "freeze", NAME, "--by", "organiser")
    capsys.readouterr()
    assert main(["bots", "version", "s1", "--redis", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and NAME in err and "frozen" in err, err
    assert store.versions.current("s1") == 2

    # the final: seeded by the competition's rating of record, played round by round by the
    # scheduler; closing is refused meanwhile; `final --wait` then resumes it (over: at once)
    started = cli("competition", "final", NAME, env=env).stdout
    assert f"final {NAME}-final: double-elimination of 8" in started, started
    refused = cli("competition", "close", NAME, env=env, check=2).stderr
    assert "its final is not over" in refused and refused.count("\n") == 1, refused
    wait_for(lambda: arena.check() or final.progress(store, NAME)["done"], 150,
             "the scheduler to play the final round by round", interval=0.5)
    out = cli("competition", "final", NAME, "--wait", "--json", env=env, timeout=180)
    got = json.loads(out.stdout)["final"]
    assert got["done"] and got["failed"] == 0 and got["recorded"] == got["total"]
    assert got["format"] == "double-elimination" and sorted(got["seeds"]) == sorted(FIELD)[:8]
    tid = got["tournament"]
    page = _page(store, NAME)
    bracket = page["bracket"]
    assert bracket["champion"] is not None and bracket["seeds"] == got["seeds"]
    ties = [t for r in bracket["rounds"] for t in r["ties"] if not t["bye"]]
    assert sum(t["loser"] is not None for t in ties) >= 14  # 7 bots out twice, or 8 with a reset
    assert got["total"] == 2 * sum(t["pairs"] for t in ties)  # each tie its duplicate pairs
    mids = store.tournament_matches(tid)
    finals = [r for _, r in store.results() if r.get("tournament") == tid]
    assert Counter(r["match_id"] for r in finals) == Counter(mids)  # each recorded once
    assert all(r["competition"] == NAME for r in finals)
    assert all(r["versions"]["s1"] == 2 for r in finals if "s1" in r["seats"])

    _cli(url, "competition", "close", NAME, "--by", "organiser")
    closed = _page(store, NAME)
    assert [p["bot"] for p in closed["placings"]][0] == bracket["champion"]
    assert closed["seed_key"] and closed["seed_key"] in _html(store, NAME)
    key = store.competitions.get(NAME)["seed_key"]
    assert key is not None
    played = [r for _, r in store.results() if r.get("competition") == NAME]
    assert len(played) > len(finals)  # its ladder's matches and its final's

    # the export: a header, then a replay line per match; replay verify and rebuild take it
    path = tmp_path / "spring.jsonl"
    _cli(url, "competition", "export", NAME, "-o", str(path))
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[0]["format"] == "sueca-competition/1" and lines[0]["seed_key"] == key
    assert sorted(m["result"]["match_id"] for m in lines[1:]) == sorted(
        r["match_id"] for r in played)
    verified = json.loads(cli("replay", "verify", str(path), "--json", env=env).stdout)
    assert verified["ok"] and verified["records"] == len(played) and verified["skipped"] == 1
    rebuilt = json.loads(cli("ratings", "rebuild", "--from", str(path), "--json").stdout)
    assert rebuilt["identical"] and rebuilt["results"] == len(played), rebuilt

    # the seed reveal: the key hashes to what open published; every seed and deck follows
    for target in (NAME, str(path)):
        capsys.readouterr()
        assert main(["competition", "verify", target, "--json", "--redis", url]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["ok"] and report["checked"] == len(played) and report["deals"] > 0
    secret = store.competitions.secret(NAME)
    ladder = [r for r in played if r["tournament"] != tid]
    assert all(store.match(r["match_id"])["spec"]["seed"] == derive_seed(secret, r["match_id"])
               for r in ladder)
    # a seed the organiser picked is named
    forged = lines[1]["result"]["match_id"]
    lines[1]["result"]["seed"] = derive_seed("another-key", forged)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    bad = cli("competition", "verify", str(path), check=1)
    assert f"{forged}: seed " in bad.stdout and "1 problem(s)" in bad.stdout, bad.stdout
    assert store.competitions.get(NAME)["state"] is State.CLOSED
