"""``sueca-arena bots version``: a new version of a bot, as a subprocess on a real Redis; refused
in one line, with nothing changed, for an unknown bot and while a competition it entered is
frozen; ``bots list`` shows each bot's current version."""

from __future__ import annotations

import json

from kits.arena import arena_env, cli

from sueca.arena.lifecycle import State, new_spec


def test_a_version_is_started_listed_and_refused_while_frozen(store, redis_url, prefix) -> None:
    env = arena_env(redis_url, prefix, USER="ann", LOGNAME="ann")
    for bot in ("greedy", "careful"):
        store.bots.add(bot)
    out = cli("bots", "version", "greedy", env=env).stdout
    assert out == "greedy is at version 2: its matches from now on are rated as version 2\n"
    made = json.loads(cli("bots", "version", "greedy", "--note", "bigger search", "--json",
                          env=env).stdout)
    assert made == {"bot": "greedy", "version": 3, "by": "ann", "note": "bigger search"}
    assert [(v["version"], v["by"], v["note"]) for v in store.versions.history("greedy")] == [
        (1, "", ""), (2, "ann", ""), (3, "ann", "bigger search")]
    listed = {r["bot"]: r["version"] for r in json.loads(cli("bots", "list", "--json",
                                                             env=env).stdout)}
    assert listed == {"greedy": 3, "careful": 1}
    table = cli("bots", "list", env={**env, "COLUMNS": "80"}).stdout
    line = next(x for x in table.splitlines() if "greedy" in x)
    assert " 3 " in line and "unrated" in line, table

    bad = cli("bots", "version", "Greedy", env=env, check=2)
    assert bad.stderr.strip() == "error: unknown bot 'Greedy' (did you mean 'greedy'?)"
    assert bad.stdout == "" and "Traceback" not in bad.stderr
    forged = cli("bots", "version", "greedy", "--note", "ok\nerror: forged", env=env, check=2)
    assert forged.stderr == ("error: bad --note 'ok\\nerror: forged': one line of at most 200 "
                             "printable characters (16 given)\n")

    store.competitions.create(new_spec("cup"), by="ann")
    store.competitions.enter("cup", "greedy", by="ann")
    for to in (State.OPEN, State.FROZEN):
        store.competitions.move("cup", to, by="ann")
    frozen = cli("bots", "version", "greedy", env=env, check=2)
    assert len(frozen.stderr.splitlines()) == 1, frozen.stderr
    assert "competition 'cup'" in frozen.stderr and "frozen" in frozen.stderr
    assert store.versions.current("greedy") == 3                   # nothing changed
    assert store.versions.current("careful") == 1
