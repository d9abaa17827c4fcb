"""``bots challenge`` and ``bots lift`` refuse bad input with one line quoting it, exit 2, and
nothing written to Redis; a bad SUECA_SUSPEND_AFTER stops a command the same way."""

from __future__ import annotations

import pytest
from kits.arena import arena_env, cli

CASES = [
    (["bots", "challenge", "alice", "ghost", "--token", "{alice}"], "unknown bot 'ghost'"),
    (["bots", "challenge", "Alice", "bob", "--token", "{alice}"],
     "unknown bot 'Alice' (did you mean 'alice'?)"),
    (["bots", "challenge", "alice", "bob", "--token", "{bob}"],
     "wrong token for bot 'alice': only its owner may challenge with it"),
    (["bots", "challenge", "alice", "bob", "--token", "alice.forged"], "wrong token for bot 'alice'"),
    (["bots", "challenge", "alice", "alice", "--token", "{alice}"], "cannot challenge itself"),
    (["bots", "challenge", "alice", "bob", "-n", "21", "--token", "{alice}"],
     "bad number of challenge matches 21: an even number from 2 to 20"),
    (["bots", "challenge", "alice", "bob"], "no token for bot 'alice': no --token given"),
    (["bots", "lift", "ghost"], "unknown bot 'ghost'"),
    (["bots", "lift", "bob"], "bot 'bob' is not suspended: nothing to lift"),
]


@pytest.mark.parametrize("argv, says", CASES, ids=[" ".join(a[:4]) for a, _ in CASES])
def test_bad_requests_are_one_line_and_change_nothing(store, redis_url, prefix, argv, says):
    tokens = {b: store.bots.add(b) for b in ("alice", "bob")}
    before = {k: store.r.dump(k) for k in store.r.keys(prefix + "*")}
    argv = [a.format(**tokens) for a in argv]
    out = cli(*argv, env=arena_env(redis_url, prefix), check=2, timeout=60)
    assert out.stderr.startswith("error: ") and says in out.stderr, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert tokens["alice"] not in out.stderr and tokens["bob"] not in out.stderr
    assert {k: store.r.dump(k) for k in store.r.keys(prefix + "*")} == before


def test_a_bad_suspension_rule_is_quoted(store, redis_url, prefix):
    out = cli("bots", "list", env=arena_env(redis_url, prefix, SUECA_SUSPEND_AFTER="6/5"),
              check=2, timeout=60)
    assert out.stderr.startswith("error: SUECA_SUSPEND_AFTER='6/5' is not usable: X/Y such as "
                                 "5/10"), out.stderr
    assert out.stderr.count("\n") == 1
