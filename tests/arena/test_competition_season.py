"""A whole competition through real processes: a private Redis, ``sueca-arena referee``, a
Celery worker, nine bots as ``sueca-bot run`` processes and the command line, from the
competition's creation to the check of its revealed seed key against every match it played.

One test, one arena (about a minute on two cores): each step needs the state the last left.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from kits.arena import TESTS, arena_env, cli, competition_final

from sueca.arena.competitions import final
from sueca.arena.competitions.export import read_export
from sueca.arena.lifecycle import State, new_spec
from sueca.arena.local_arena import LocalArena
from sueca.arena.seeds import derive_seed
from sueca.engine import Variant

pytestmark = pytest.mark.slow

NAME = "spring"
FIELD = [f"s{i}" for i in range(1, 9)]  # the eight who play the final
KINDS = ("heuristic", "random", "reckless")


@pytest.fixture(scope="module")
def season_arena(tmp_path_factory: pytest.TempPathFactory):
    bots = {b: KINDS[i % len(KINDS)] for i, b in enumerate(FIELD)}
    env = {"PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
           "SUECA_KEY_PREFIX": "sueca:"}
    saved = os.environ.get("SUECA_KEY_PREFIX")
    os.environ["SUECA_KEY_PREFIX"] = "sueca:"
    arena = LocalArena(None, None, bots, capacity=4, concurrency=2,
                       log_dir=tmp_path_factory.mktemp("season"), extra_env=env)
    try:
        arena.start(timeout=60)
        arena.cli_env = arena_env(arena.redis_url, "sueca:")
        yield arena
    finally:
        if saved is None:
            os.environ.pop("SUECA_KEY_PREFIX", None)
        else:
            os.environ["SUECA_KEY_PREFIX"] = saved
        arena.stop()


def _arena(*args: str, env: dict[str, str], check: int | None = 0):
    return cli(*args, env=env, check=check, timeout=120)


def test_a_season_from_creation_to_the_seed_reveal(season_arena, tmp_path: Path) -> None:
    store, env = season_arena.store, season_arena.cli_env
    spec = new_spec(NAME, variant=Variant(target=4).to_dict(),
                    final={"format": "round-robin", "top": 4, "best_of": 1})
    store.competitions.create(spec, by="organiser")
    rec = store.competitions.get(NAME)
    assert rec is not None and rec["seed_key"] is None and len(rec["seed_hash"]) == 64

    for bot in FIELD:
        store.competitions.enter(NAME, bot, by="organiser")
    store.competitions.move(NAME, State.OPEN, by="organiser")

    # two versions of one bot: s1 starts version 2 while the competition is open
    _arena("bots", "version", "s1", "--note", "better leads", env=env)
    assert store.versions.current("s1") == 2

    store.competitions.move(NAME, State.FROZEN, by="organiser")
    refused = _arena("bots", "version", "s1", env=env, check=2)
    assert "spring" in refused.stderr and "Traceback" not in refused.stderr, refused.stderr
    assert store.versions.current("s1") == 2  # nothing changed

    # the final: refused to close before it is over, then played round by round
    store.competitions.move(NAME, State.FINAL, by="organiser")
    with pytest.raises(ValueError, match="its final has not started"):
        final.check_closable(store, NAME)
    started = competition_final("start", NAME, env)
    assert started["tournament"] == f"{NAME}-final" and len(started["seeds"]) == 4
    assert not started["done"], started
    done = competition_final("wait", NAME, env)
    assert done["done"] and done["failed"] == 0 and done["recorded"] == done["total"] == 12
    final.check_closable(store, NAME)
    tid = done["tournament"]
    mids = store.tournament_matches(tid)
    logged = [r for _, r in store.results() if r.get("tournament") == tid]
    assert Counter(r["match_id"] for r in logged) == Counter(mids)  # each recorded once
    assert all(r.get("competition") == NAME for r in logged)
    # the frozen versions play: s1's results say version 2 wherever it sat
    assert all(r["versions"]["s1"] == 2 for r in logged if "s1" in r["seats"])

    store.competitions.move(NAME, State.CLOSED, by="organiser")
    key = store.competitions.get(NAME)["seed_key"]
    assert key is not None

    # the export: a header and a replay line per match, read by replay verify and rebuild
    out = tmp_path / "spring.jsonl"
    from sueca.arena.competitions.export import write_export
    assert write_export(store, NAME, out) == len(mids)
    header, lines = read_export(out)
    assert header["seed_key"] == key and header["final"] == tid
    assert {m["result"]["match_id"] for m in lines} == set(mids)
    verified = _arena("replay", "verify", str(out), "--json", env=env)
    report = json.loads(verified.stdout)
    assert report["ok"] and report["records"] == len(mids) and report["skipped"] == 1
    rebuilt = _arena("ratings", "rebuild", "--from", str(out), "--json", env=env)
    assert json.loads(rebuilt.stdout)["identical"], rebuilt.stdout

    # the seed reveal: every match's seed and decks from the key, a forged one named
    from sueca.arena.competitions.export import check_seeds
    assert check_seeds(header, lines)["ok"]
    forged = json.loads(json.dumps(lines))
    forged[3]["result"]["seed"] = derive_seed("not-the-key", forged[3]["result"]["match_id"])
    bad = check_seeds(header, forged)
    assert [w["match_id"] for w in bad["wrong"]] == [forged[3]["result"]["match_id"]]
