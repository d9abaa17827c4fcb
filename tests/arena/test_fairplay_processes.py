"""Fair play through real processes: Redis, a referee, a Celery worker, ``sueca-bot run`` bots
and the ``sueca-arena scheduler``. A bot that raises in every match is suspended after X of
its last Y, the ladder leaves it out over a window of matches, ``bots list`` and its page say
so, a tournament naming it is refused; ``bots lift`` brings it back. An owner's challenge plays
unrated duplicate pairs that move no rating, and its cap refuses the next one. (Bad requests:
tests/arena/cli/test_fairplay_cli.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kits.arena import SUECA_ARENA, TESTS, cli
from kits.wait import wait_for

from sueca.arena.fairplay import CHALLENGE
from sueca.arena.local_arena import LocalArena
from sueca.arena.store.client import entry_key
from sueca.arena.store.fairplay import suspended
from sueca.arena.store.ratings import catch_up, load, load_matchups

pytestmark = pytest.mark.slow

CRASHY = f"{TESTS / 'kits' / 'bots' / 'faulty.py'}:RaisesOnThirdCard"


def ladder_matches(store) -> dict[str, list[str]]:
    """Every ladder match so far: id -> its seats."""
    _, ids = store.match_page(0, 10_000)
    return {m["id"]: m["spec"]["bots"] for m in store.matches_of(ids)
            if m is not None and m["tournament"] == "ladder"}


def test_a_crashing_bot_is_suspended_then_lifted(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SUECA_SUSPEND_AFTER", "2/3")  # this process and every child
    monkeypatch.setenv("SUECA_CHALLENGES_PER_HOUR", "1")
    logs = tmp_path / "arena"
    logs.mkdir()
    arena = LocalArena(None, None, {"good1": "random", "good2": "random", "crashy": CRASHY},
                       capacity=4, concurrency=2, log_dir=logs)
    arena.start(timeout=90)
    try:
        env, store = arena.env(COLUMNS="80"), arena.store
        arena.children.spawn("scheduler", [SUECA_ARENA, "scheduler", "--target", "2",
                                           "--interval", "0.3", "--pace", "120"], {"SUECA_REDIS_URL": arena.redis_url})

        def recorded() -> dict | None:
            held = store.fairplay.bots_state(["crashy"])["crashy"].suspensions.get("ladder")
            return held if held and held.get("recorded") else None

        held = wait_for(recorded, 60, "the scheduler records crashy's suspension", 0.2,
                        detail=lambda: _debug(store, logs))
        assert held["rule"] == "2/3" and len(held["faults"]) >= 2
        wait_for(lambda: "bot crashy is suspended from the ladder: faulted in" in
                 (logs / "scheduler.log").read_text(), 10, "the scheduler's log line", 0.2)
        assert {f["end"] for f in held["faults"]} == {"bot_error"}
        for f in held["faults"]:  # each one a recorded match that crashy lost by its fault
            res = store.result_of(f["match"])
            assert res["fault_bot"] == "crashy" and res["end"] == "bot_error", res

        # over a window of further ladder matches, crashy is never scheduled
        before = set(ladder_matches(store))
        window = wait_for(lambda: (lambda new: new if len(new) >= 4 else None)(
            {m: s for m, s in ladder_matches(store).items() if m not in before}),
            60, "4 more ladder matches", 0.2)
        assert all("crashy" not in seats for seats in window.values()), window
        assert suspended(store, ["crashy", "good1", "good2"]).keys() == {"crashy"}

        # bots list, its JSON, the bot's page and a tournament that names it
        table = cli("bots", "list", env=env).stdout
        assert max(map(len, table.splitlines())) <= 80, table
        row = next(line for line in table.splitlines() if "crashy" in line)
        assert row.rstrip(" │|").endswith("yes"), table
        assert "good1" in table and "suspended" in table
        listed = {r["bot"]: r for r in json.loads(cli("bots", "list", "--json", env=env).stdout)}
        assert listed["good1"]["suspended"] is None
        assert listed["crashy"]["suspended"]["rule"] == "2/3"
        assert "faulted in" in listed["crashy"]["suspended"]["reason"]
        page = _bot_page(store, "crashy")
        assert 'id="suspended"' in page and held["faults"][0]["match"] in page
        assert 'id="suspended"' not in _bot_page(store, "good1")
        refused = cli("tournament", "run", "--bots", "crashy,good1", "-k", "2", env=env, check=2)
        assert "bot 'crashy' is suspended" in refused.stderr and "bots lift" in refused.stderr
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr

        # lifted: recorded, and the ladder schedules it again (until it faults twice more)
        again = set(ladder_matches(store))
        lifted = json.loads(cli("bots", "lift", "crashy", "--by", "tester", "--json",
                                env=env).stdout)
        assert lifted["lifted"]["by"] == "tester" and lifted["lifted"]["at"]
        lifted_at = store.fairplay.bots_state(["crashy"])["crashy"].lift["at"]
        assert store.fairplay.bots_state(["crashy"])["crashy"].lift["by"] == "tester"
        wait_for(lambda: any("crashy" in s for m, s in ladder_matches(store).items()
                             if m not in again), 60, "a ladder match of crashy after the lift", 0.2,
                 detail=lambda: _debug(store, logs))
        resuspended = wait_for(lambda: (lambda s: s if s and s["at"] > lifted_at else None)(
            recorded()), 60, "crashy suspended again by its new faults", 0.2)
        assert all(entry_key(f["entry"]) > entry_key(lifted["lifted"]["after"])
                   for f in resuspended["faults"])

        # a new version comes back too (no lift: checked on read), and is judged on its own
        before_v2 = set(ladder_matches(store))
        assert store.versions.bump("crashy", by="owner") == 2
        assert suspended(store, ["crashy"]) == {}
        wait_for(lambda: any("crashy" in s for m, s in ladder_matches(store).items()
                             if m not in before_v2), 60, "a ladder match of crashy's version 2",
                 0.2)
        v2 = wait_for(lambda: (lambda s: s if s and s["version"] == 2 else None)(recorded()),
                      60, "version 2 suspended by its own faults", 0.2)
        for f in v2["faults"]:
            assert store.result_of(f["match"])["versions"]["crashy"] == 2

        # a challenge: unrated duplicate pairs; the ladder stopped so that nothing else moves
        arena.procs.stop(["scheduler"], grace=10)
        wait_for(lambda: not store.ladder_running() or all(
            s in ("done", "failed") for s in store.statuses(store.ladder_running())),
            60, "the ladder's last matches", 0.2)
        catch_up(store)
        live, counts = load(store), load_matchups(store)
        tokens = arena.tokens
        queued = json.loads(cli("bots", "challenge", "good1", "good2", "-n", "2", "--token",
                                tokens["good1"], "--json", env=env).stdout)
        assert queued["rated"] is False and len(queued["matches"]) == 2
        capped = cli("bots", "challenge", "good1", "good2", "--token", tokens["good1"], env=env,
                     check=2).stderr
        assert "asked for 1 challenge(s) in the last hour" in capped and "next is allowed" in capped
        results = wait_for(lambda: (lambda r: r if all(r) else None)(
            store.results_of(queued["matches"])), 60, "the challenge's results", 0.2)
        assert {r["tournament"] for r in results} == {CHALLENGE}
        assert {r["rated"] for r in results} == {False}
        assert results[0]["pair"] == results[1]["pair"] and results[0]["seed"] == results[1]["seed"]
        catch_up(store)
        assert load(store) == live and load_matchups(store) == counts
        assert "identical" in cli("ratings", "rebuild", "--check", env=env).stdout
        shown = cli("matches", "--tournament", CHALLENGE, "--json", env=env).stdout
        assert sorted(m["id"] for m in json.loads(shown)) == sorted(queued["matches"])
    finally:
        arena.stop()


def _bot_page(store, name: str) -> str:
    from starlette.testclient import TestClient

    from sueca.arena.web.app import create_app
    with TestClient(create_app(store)) as client:
        got = client.get(f"/bots/{name}")
        assert got.status_code == 200
        return got.text


def _debug(store, logs):  # what the arena did, when a wait times out
    from sueca.arena.schedule import connected_bots
    out = [repr(suspended(store, ["crashy"])), repr(store.fairplay.bots_state(["crashy"])),
           repr(connected_bots(store, None))]
    for f in sorted(logs.glob("*.log")):
        out.append(f"== {f.name}\n" + f.read_text()[-1500:])
    return "\n".join(out)
