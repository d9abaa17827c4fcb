"""``leaderboard`` and ``ratings show-config|set-config`` through the real command, on a real
Redis with a results log written directly (no referee needed)."""

from __future__ import annotations

import json

from kits.arena import arena_env, cli


def _league(store, n: int = 40) -> None:
    reg = store.bots
    for b in ("strong", "weak", "newbie"):
        reg.add(b)
    for i in range(n):  # strong beats weak 3 times in 4; newbie plays twice, one won
        seats = ["strong", "weak", "strong", "weak"]
        winner = 0 if i % 4 else 1
        if i >= n - 2:
            seats, winner = ["newbie", "weak", "newbie", "weak"], i % 2
        mid = f"m{i}"
        store.create_match(mid, {"bots": seats})
        store.record_result(mid, {"match_id": mid, "seats": seats, "winner": winner,
                                  "game_points": [4, 0], "end": "normal"})


def test_leaderboard_shows_the_rating_of_record_with_its_interval_and_a_provisional_mark(
        store, redis_url):
    _league(store)
    env = arena_env(redis_url, store.keys.prefix)
    rows = json.loads(cli("leaderboard", "--json", env=env).stdout)
    by_bot = {r["bot"]: r for r in rows}
    assert [r["bot"] for r in rows][0] == "strong"
    for r in rows:
        assert {"rating", "rating_pm", "matches", "provisional", "elo", "mu"} <= set(r)
        assert r["rating_pm"] > 0
    assert by_bot["strong"]["matches"] == 38 and by_bot["strong"]["provisional"] is False
    assert by_bot["newbie"]["matches"] == 2 and by_bot["newbie"]["provisional"] is True
    assert by_bot["strong"]["rating"] - by_bot["weak"]["rating"] > 100
    table = cli("leaderboard", env=env).stdout
    assert "rating ±95%" in table and "newbie ?" in table
    lines = table.splitlines()
    head = [x.split("┃") for x in lines[2:next(i for i, x in enumerate(lines) if "┡" in x)]]
    columns = {" ".join(c.strip() for c in cells if c.strip()) for cells in zip(*head)}
    assert "live Elo" in columns and "rating ±95%" in columns, columns  # headers may wrap
    by_elo = json.loads(cli("leaderboard", "--by", "elo", "--json", env=env).stdout)
    assert [r["rank"] for r in by_elo] == [1, 2, 3]


def test_settings_are_shown_and_changed_only_by_set_config_which_rebuilds(store, redis_url,
                                                                         monkeypatch):
    from sueca.arena.store.ratings import load_config
    _league(store)
    monkeypatch.delenv("SUECA_ELO_K", raising=False)
    assert load_config(store) == (24.0, 1500.0)                       # the league is made
    env = arena_env(redis_url, store.keys.prefix, SUECA_ELO_K="99")   # the league exists
    shown = json.loads(cli("ratings", "show-config", "--json", env=env).stdout)
    assert (shown["elo_k"], shown["elo_initial"]) == (24.0, 1500.0)
    assert shown["env_elo_k_ignored"] == 99.0
    text = cli("ratings", "show-config", env=env).stdout
    assert "set-config" in text and "SUECA_ELO_K is 99 here" in text
    out = cli("ratings", "set-config", "--elo-k", "32", "--initial", "1000", env=env).stdout
    assert "rebuilt 3 ratings from 40 results with Elo K=32, initial rating 1000" in out
    shown = json.loads(cli("ratings", "show-config", "--json", env=env).stdout)
    assert (shown["elo_k"], shown["elo_initial"]) == (32.0, 1000.0)
    rows = json.loads(cli("leaderboard", "--json", env=env).stdout)
    # --json rounds ratings to 0.1 (as /api/leaderboard): the mean is 1000 within that rounding
    assert abs(sum(r["rating"] for r in rows) / 3 - 1000.0) <= 0.05 + 1e-9
    assert "identical" in cli("ratings", "rebuild", "--check", env=env).stdout
    nothing = cli("ratings", "set-config", env=env, check=2)
    assert "nothing to change" in nothing.stderr and "Traceback" not in nothing.stderr
    bad = cli("ratings", "set-config", "--elo-k", "-1", env=env, check=2)
    assert "-1" in bad.stderr and "Traceback" not in bad.stderr
