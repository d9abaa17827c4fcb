"""The league's read model as a person meets it through the CLI: whether a bot is online
(a real referee, a real bot process killed), tables at the width a person asked for, a
match's fault reason, bot names told apart regardless of case. Every command a subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest
from kits.arena import SUECA_ARENA, arena_env, cli
from kits.wait import wait_for

BOT = [os.path.join(os.path.dirname(SUECA_ARENA), "sueca-bot")]


def _line(text: str, bot: str) -> str:
    return next(x for x in text.splitlines() if f" {bot} " in x or f" {bot} ?" in x)


def test_a_killed_bot_is_shown_offline(referee_arena) -> None:
    """``leaderboard`` and ``bots list`` say a bot is online while its process is connected to
    the referee, and no once that process is killed."""
    env = referee_arena.cli_env
    token = cli("bots", "add", "ghost", env=env).stdout.strip()
    bot = subprocess.Popen([*BOT, "run", "random", "--server", referee_arena.referee, "--name",
                            "ghost", "--capacity", "2", "--log-level", "warning"],
                           env={**env, "SUECA_TOKEN": token}, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        def online(command: str) -> bool | None:
            rows = json.loads(cli(command, *(["list"] if command == "bots" else []), "--json",
                                  env=env).stdout)
            return next((r["connected"] for r in rows if r["bot"] == "ghost"), None)
        wait_for(lambda: online("bots") is True, 30, "ghost listed as connected", interval=0.2)
        cli("tournament", "run", "--bots", "ghost,random", "-k", "1", "--id", "rm-ghost",
            env=env)
        assert online("leaderboard") is True
        assert _line(cli("leaderboard", env=env).stdout, "ghost").rstrip(" │").endswith("yes")
        os.killpg(bot.pid, signal.SIGKILL)
        bot.wait(10)
        wait_for(lambda: online("leaderboard") is False, 30, "ghost shown offline",
                 interval=0.3)
        assert online("bots") is False
        for command in (["leaderboard"], ["bots", "list"]):
            line = _line(cli(*command, env=env).stdout, "ghost")
            assert line.rstrip(" │").endswith("no"), line
            assert _line(cli(*command, env=env).stdout, "random").rstrip(" │").endswith("yes")
    finally:
        if bot.poll() is None:
            os.killpg(bot.pid, signal.SIGKILL)
            bot.wait(10)
        cli("bots", "remove", "ghost", env=env)


LONG = [f"ladder-20261201231500-{k:06x}" for k in range(3)]  # 28 characters, as the ladder's


@pytest.fixture
def recorded(store, prefix, redis_url):
    """Three recorded matches with ladder-long ids (the last won on a timeout), and the env of
    a command that reads them."""
    from sueca.arena.match_job import outcome_to_result
    for name in ("heuristic", "random-bot"):
        store.bots.add(name)
    for k, mid in enumerate(LONG):
        store.create_match(mid, {"bots": ["heuristic", "random-bot"] * 2,
                                 "seed": str(k)})
        timeout = k == 2
        out = {"end": "timeout" if timeout else "normal", "winner": 0,
               "game_points": [0, 0] if timeout else [4, 1], "replay": None,
               "fault_seat": 1 if timeout else None,
               "fault_bot": "random-bot" if timeout else None}
        store.record_result(mid, outcome_to_result(store.match(mid), out))
    env = arena_env(redis_url, prefix)
    env.pop("COLUMNS", None)
    return store, env


def test_columns_is_the_width_even_into_a_pipe(recorded) -> None:
    """``COLUMNS=60`` into a pipe: 60 columns, keeping teams, score and winner, the ids cut to
    a unique tail that ``matches show`` takes; without COLUMNS a pipe is never cut."""
    _, env = recorded
    text = cli("matches", env={**env, "COLUMNS": "60"}).stdout
    assert max(len(x) for x in text.splitlines()) <= 60, text
    for mid in LONG:
        assert mid not in text
        assert f"…{mid[-6:]}" in text, text
    for word in ("heuristic", "random-bot", "4–1", "team 0", "timeout"):
        assert word in text, (word, text)
    shown = cli("matches", "show", f"…{LONG[1][-6:]}", env=env)
    assert f"match {LONG[1]}" in shown.stdout
    assert cli("matches", "show", "…zzz", env=env, check=2).stderr.startswith(
        "error: unknown match '…zzz'")
    wide = cli("matches", env=env).stdout
    assert all(mid in wide for mid in LONG) and "too narrow" not in wide
    assert max(len(x) for x in wide.splitlines()) > 60


def test_matches_show_gives_the_fault_reason_escaped(store, prefix, redis_url) -> None:
    """A bot's reported failure is shown by ``matches show`` (escaped, capped), and held back
    while the match is a duplicate half whose twin is unfinished."""
    from sueca.arena.match_job import outcome_to_result
    from sueca.arena.tournaments import new_spec, prepare_tournament
    for b in ("crashy", "random"):
        store.bots.add(b)
    tid, _ = prepare_tournament(store, new_spec(["crashy", "random"], 2, duplicate=True),
                                tid="tpair")
    first, twin = store.tournament_matches(tid)

    def record(mid: str, detail: str) -> None:
        m = store.match(mid)
        crashy = m["spec"]["bots"].index("crashy")
        store.record_result(mid, outcome_to_result(m, {
            "end": "bot_error", "winner": 1 - crashy % 2, "game_points": [0, 0], "replay": None,
            "fault_seat": crashy, "fault_bot": "crashy", "fault_detail": detail}))

    env = arena_env(redis_url, prefix)
    record(first, "ValueError: my hand is AS 7S KS")
    out = cli("matches", "show", first, env=env).stdout
    assert "fault: bot_error by crashy" in out and "my hand is" not in out
    assert "hidden" in out
    record(twin, "ValueError: \x1b[31mred " + "x" * 1000)
    out = cli("matches", "show", twin, env=env).stdout
    assert "fault: bot_error by crashy: ValueError: \\x1b[31mred" in out, out
    assert "\x1b[31m" not in out and "x" * 1000 not in " ".join(out.split()).replace(" ", "")
    assert "my hand is AS 7S KS" in cli("matches", "show", first, env=env).stdout


def test_bot_names_are_told_apart_regardless_of_case(store, prefix, redis_url) -> None:
    env = arena_env(redis_url, prefix)
    cli("bots", "add", "MyGreedy", env=env)
    err = cli("bots", "add", "mygreedy", env=env, check=2).stderr
    assert err.count("\n") == 1 and "'mygreedy'" in err and "'MyGreedy'" in err, err
    assert store.bots.names() == ["MyGreedy"]
    gone = cli("bots", "remove", "mygreedy", env=env, check=2).stderr
    assert "did you mean 'MyGreedy'" in gone, gone
    assert "did you mean 'MyGreedy'" in cli("matches", "--bot", "mygreedy", env=env,
                                            check=2).stderr
    # an arena that registered both before keeps them both
    store.bots.add_unverifiable(["mygreedy"])
    listed = json.loads(cli("bots", "list", "--json", env=env).stdout)
    assert [b["bot"] for b in listed] == ["MyGreedy", "mygreedy"]
    cli("bots", "remove", "mygreedy", env=env)
    assert store.bots.names() == ["MyGreedy"]
