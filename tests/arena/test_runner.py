"""A retried match never deals again the cards an earlier attempt may have shown its bots, and a
duplicate pair whose half was retried on a fresh seed is scored as two games, not one."""

from __future__ import annotations

from arena.runner import reseeded
from sdk.local import play_local
from sdk.bots import RandomBot


def test_first_attempt_plays_the_scheduled_seed() -> None:
    spec = {"match_id": "m", "seed": "123", "bots": ["a", "b", "a", "b"]}
    assert reseeded(spec, 1) is spec


def test_each_retry_gets_its_own_reproducible_seed_and_other_decks() -> None:
    spec = {"match_id": "m", "seed": "123", "bots": ["a", "b", "a", "b"]}
    second, third = reseeded(spec, 2), reseeded(spec, 3)
    assert second["seed"] != spec["seed"] and third["seed"] != second["seed"]
    assert reseeded(spec, 2) == second  # the same attempt number gives the same seed
    assert spec["seed"] == "123" and second["bots"] == spec["bots"]
    decks = [play_local([RandomBot] * 4, seed=int(s["seed"])).deals[0].deck
             for s in (spec, second)]
    assert decks[0] != decks[1]


def _play_pair(store, tid: str, retry_second: bool) -> list[dict]:
    """Play the two halves of one duplicate pair with the local runner, as a worker would; with
    ``retry_second`` an attempt of the second half died first (so it is played on attempt 2)."""
    from arena.runner import play_and_record
    from arena.schedule import round_robin, tournament_spec
    spec = tournament_spec(["random", "heuristic"], 2, True, {})
    store.create_tournament(tid, spec, round_robin)
    first, second = store.tournament_matches(tid)
    play_and_record(store, first, mode="local")
    if retry_second:
        assert store.start_attempt(second) == 1   # that attempt was lost with its worker
    assert play_and_record(store, second, mode="local")["attempt"] == (2 if retry_second else 1)
    return [store.result_of(m) for m in (first, second)]


def test_a_pair_played_on_one_seed_is_rated_as_one_game(store) -> None:
    from arena.ratings import load, rebuild
    results = _play_pair(store, "pair-ok", retry_second=False)
    scheduled = store.match(results[0]["match_id"])["spec"]["seed"]
    assert [r["seed"] for r in results] == [scheduled, scheduled]
    assert {b: r.games for b, r in load(store).items()} == {"random": 1, "heuristic": 1}
    assert rebuild(store, write=False)["max_diff"] == 0.0


def test_a_pair_whose_half_was_reseeded_is_rated_as_two_games(store) -> None:
    """The retried half is dealt other decks: the log says so, and the pair is two games."""
    from arena.cmd_league import tournament_report
    from arena.ratings import load, rebuild
    results = _play_pair(store, "pair-retried", retry_second=True)
    second = store.match(results[1]["match_id"])
    assert results[0]["seed"] == second["spec"]["seed"]                 # as scheduled
    assert results[1]["seed"] == reseeded(second["spec"], 2)["seed"]    # the seed played
    assert results[1]["seed"] != results[0]["seed"]
    assert str(store.replay(second["id"])["seed"]) == results[1]["seed"]
    assert {b: r.games for b, r in load(store).items()} == {"random": 2, "heuristic": 2}
    assert rebuild(store, write=False)["max_diff"] == 0.0              # rebuild == live
    table = {r["bot"]: r for r in tournament_report(store, "pair-retried")["standings"]}
    assert table["random"]["units"] == 2 and table["random"]["incomplete_pairs"] == 0


def test_the_local_runner_reads_a_seed_as_the_referee_does() -> None:
    """A spec's seed is text; the referee reads "42" as the int 42 (proto_convert.parse_seed),
    and so must the local runner, or the two would deal different decks from one spec."""
    from referee.engine import Match
    from referee.proto_convert import parse_seed

    from arena.runner import run_local
    out = run_local({"bots": ["random"] * 4, "seed": "42", "match_id": "m", "first_dealer": 1})
    dealt = Match(seed=parse_seed("42"), first_dealer=1).deals[0].deck
    assert out["replay"]["deals"][0]["deck"] == [str(c) for c in dealt]
    assert Match(seed="42", first_dealer=1).deals[0].deck != dealt  # the text would differ
