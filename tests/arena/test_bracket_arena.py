"""Brackets played through a real arena: its own Redis, referee, worker and eight
``sueca-bot run`` processes; a knockout of five (three byes) with ties of two duplicate pairs,
and a double elimination of eight with ties of one, by ``tournament run`` on the command
line."""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest
from kits.arena import TESTS, arena_env, cli

from sueca.arena.tournaments import format_schedule

pytestmark = pytest.mark.slow

#: six random players that differ (two plain RandomBots' duplicate pairs are mirrors, always
#: level), the heuristic and the reckless bot
BOTS = {"heuristic": "heuristic", "reckless": "reckless",
        **{f"r{i}": "kits.bots.clone:NamedRandomBot" for i in range(1, 7)}}


@pytest.fixture(scope="module")
def eight(tmp_path_factory: pytest.TempPathFactory):
    from sueca.arena.local_arena import LocalArena
    env = {"PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
           "SUECA_KEY_PREFIX": "de8:"}
    saved = os.environ.get("SUECA_KEY_PREFIX")
    os.environ["SUECA_KEY_PREFIX"] = "de8:"  # this process's Store of the arena
    arena = LocalArena(None, None, BOTS, capacity=4, concurrency=2,
                       log_dir=tmp_path_factory.mktemp("de8"), extra_env=env)
    try:
        arena.start(timeout=90)
        arena.cli_env = arena_env(arena.redis_url, "de8:")
        yield arena
    finally:
        arena.stop()
        if saved is None:
            os.environ.pop("SUECA_KEY_PREFIX", None)
        else:
            os.environ["SUECA_KEY_PREFIX"] = saved


def test_a_double_elimination_of_eight_plays_to_its_champion(eight) -> None:
    env, store = eight.cli_env, eight.store
    field = ["heuristic", "r1", "r2", "r3", "r4", "r5", "r6", "reckless"]
    run = cli("tournament", "run", "--bots", ",".join(field), "--format", "double-elimination",
              "--id", "de8", "--json", env=env, timeout=240)
    report = json.loads(run.stdout)
    b = report["bracket"]
    assert report["failed"] == [] and b["champion"] in field and b["seeds"] == field
    assert all(r["decided"] for r in b["rounds"])
    losses = {p["bot"]: p["losses"] for p in b["standings"]}
    assert all(k == 2 for bot, k in losses.items() if bot != b["champion"])
    assert losses[b["champion"]] == (1 if b["reset"] else 0)
    assert sorted(p["place"] for p in b["standings"]) == [1, 2, 3, 4, 5, 5, 7, 7]
    ties = [t for r in b["rounds"] for t in r["ties"]]
    assert not any(t["bye"] for t in ties)
    assert len(ties) == 14 + b["reset"]  # 7 in each bracket, the grand final(s)
    # every match the bracket needed recorded exactly once, and nothing else
    mids = store.tournament_matches("de8")
    logged = Counter(r["match_id"] for _, r in store.results() if r.get("tournament") == "de8")
    assert logged == Counter(mids) and report["matches"] == report["recorded"] == len(mids)
    assert sum(len(t["matches"]) for t in ties) == len(mids) >= 2 * len(ties)
    results = [r for _, r in store.results() if r.get("tournament") == "de8"]
    scheduled = format_schedule("de8", store.tournament(tid := "de8")["spec"], results)
    assert [m["id"] for m in scheduled] == mids
    for m in scheduled:  # a duplicate pair's halves: one deal, the teams swapped
        twin = next(o for o in scheduled if o["pair"] == m["pair"] and o is not m)
        assert twin["spec"]["seed"] == m["spec"]["seed"]
        assert twin["spec"]["bots"] == m["spec"]["bots"][1:] + m["spec"]["bots"][:1]
    # the command's table, at 80 columns
    table = cli("tournament", "show", tid, env={**env, "COLUMNS": "80"}).stdout
    assert f"Champion: {b['champion']}" in table and "Losers' final" in table
    assert max(map(len, table.splitlines())) <= 80


def test_a_knockout_of_five_gives_the_top_seeds_byes(eight) -> None:
    env, store = eight.cli_env, eight.store
    field = ["r1", "heuristic", "r2", "reckless", "r3"]
    report = json.loads(cli("tournament", "run", "--bots", ",".join(field), "--format",
                            "knockout", "--best-of", "2", "--id", "ko5", "--json", env=env,
                            timeout=240).stdout)
    b = report["bracket"]
    assert report["failed"] == [] and b["champion"] in field
    first = b["rounds"][0]["ties"]
    assert [(t["bots"], t["bye"]) for t in first] == [
        (["r1", None], True), (["reckless", "r3"], False), (["heuristic", None], True),
        (["r2", None], True)]
    ties = [t for r in b["rounds"] for t in r["ties"] if not t["bye"]]
    assert len(ties) == 4 and all(t["pairs"] >= 2 for t in ties)
    assert {p["bot"]: p["losses"] for p in b["standings"]} == {
        bot: 0 if bot == b["champion"] else 1 for bot in field}
    mids = store.tournament_matches("ko5")
    assert report["matches"] == report["recorded"] == len(mids) == sum(
        len(t["matches"]) for t in ties)
    assert sorted((p["place"], p["last"]) for p in b["standings"]) == [
        (1, 1), (2, 2), (3, 4), (3, 4), (5, 5)]
