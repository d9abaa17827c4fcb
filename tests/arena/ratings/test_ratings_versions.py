"""Ratings of record per version and per competition: each version rated as a player of its own,
a bot as the version it plays; a named competition's standings from its own results; all of it
kept live in Redis, equal to a rebuild and to a checkpoint plus the log's tail; a log without
versions or competitions rated exactly as before."""

from __future__ import annotations

import json
import math
import random
import uuid

from sueca.arena.bench.retention import synthetic_results
from sueca.arena.keys import Keys
from sueca.arena.ratings.fit import MatchupCounts, fit, fit_results, matchup
from sueca.arena.ratings.live import Ratings, rated
from sueca.arena.ratings.standings import standings
from sueca.arena.store import Store
from sueca.arena.store.ratings import (
    catch_up,
    checkpoint,
    fit_of_record,
    load,
    load_checkpoint,
    load_matchups,
    rebuild,
    versions_of_record,
)


def _by_name(results) -> MatchupCounts:
    """The matchup counts by bot name alone, as the fold counted them before it knew versions."""
    stats: MatchupCounts = {}
    for r in results:
        m = matchup(r["seats"]) if rated(r) else None
        if m is not None:
            row = stats.setdefault(m[0], [0, 0])
            row[0] += 1
            row[1] += (r["winner"] == 0) == m[1]
    return stats


def _versioned(n: int, seed: int = 11) -> list[dict]:
    """A league log of ``n`` results in which bot000 and bot001 move to versions 2 and 3 along
    the way (bot000's v2 much stronger than its v1), and a third of the results after the
    first hundred are played in competition "cup" (some in the default ladder, named)."""
    rng = random.Random(seed)
    out = synthetic_results(n, bots=8, seed=seed)
    for i, r in enumerate(out):
        versions = {}
        if i >= n // 3:
            versions["bot000"] = 2
        if i >= 2 * n // 3:
            versions["bot001"] = 3
        if versions:
            r["versions"] = {b: v for b, v in versions.items() if b in r["seats"]} or {}
            if "bot000" in r["seats"] and versions.get("bot000") == 2:  # the strong v2 wins
                r["winner"] = r["seats"].index("bot000") % 2
        if i >= 100 and rng.random() < 0.4:
            r["competition"] = "cup" if rng.random() < 0.8 else "ladder"
    return out


def test_a_log_without_versions_or_competitions_is_rated_as_before():
    results = synthetic_results(400, bots=10, seed=2)
    fold = Ratings().apply_all(results)
    assert fold.matchups == _by_name(results)                     # the same counts, the same keys
    assert fit(_by_name(results)) == fit_results(results)          # the same fit, bit for bit
    assert "competitions" not in fold.state()                      # the checkpoint's JSON as before
    # fields that say the default (version 1, the default ladder) change nothing either
    marked = [dict(r, versions={b: 1 for b in r["seats"]},
                   competition=random.Random(i).choice(["", "ladder"]))
              for i, r in enumerate(results)]
    again, before = Ratings().apply_all(marked).state(), fold.state()
    assert (again["bots"], again["matchups"]) == (before["bots"], before["matchups"])
    assert again["pending"].keys() == before["pending"].keys() and "competitions" not in again
    got = fit_results(marked)
    assert got == fit_results(results) and got.for_bots({}) == got


def test_each_version_has_its_own_rating_and_a_bot_is_the_version_it_plays():
    results = _versioned(600)
    whole = fit_results(results)
    assert {"bot000", "bot000@2", "bot001", "bot001@3"} <= set(whole.rating)
    assert "bot001@2" not in whole.rating                          # never played
    assert whole.rating["bot000@2"] - whole.rating["bot000"] > 200  # the strong v2, rated apart
    now = whole.for_bots({"bot000": 2, "bot001": 3})
    assert now.rating["bot000"] == whole.rating["bot000@2"]
    assert now.pm["bot001"] == whole.pm["bot001@3"] and now.games["bot002"] == whole.games["bot002"]
    assert set(now.rating) == {f"bot{i:03d}" for i in range(8)}
    # a bot just bumped to a version with no rated match yet has no row: unrated, provisional
    fresh = whole.for_bots({"bot002": 2})
    assert "bot002" not in fresh.rating and fresh.provisional("bot002")
    rows = whole.versions_of("bot001", upto=4)
    assert [r["version"] for r in rows] == [4, 3, 2, 1]           # newest first, gaps shown
    assert rows[0] == {"version": 4, "rating": None, "rating_pm": None, "matches": 0,
                       "provisional": True}
    assert rows[1]["rating"] == whole.rating["bot001@3"] and rows[2]["matches"] == 0
    assert sum(r["matches"] for r in whole.versions_of("bot000")) == \
        sum(1 for r in results if rated(r) and "bot000" in r["seats"] and
            matchup(r["seats"]) is not None)
    # a tournament's table rates a bot as the latest version it played there
    table = {r["bot"]: r for r in standings(results)}
    assert table["bot000"]["rating"] == whole.rating["bot000@2"]


def test_a_competition_is_rated_on_its_own_results():
    results = _versioned(600)
    fold = Ratings().apply_all(results)
    cup = [r for r in results if r.get("competition") == "cup"]
    assert set(fold.competitions) == {"cup"}                       # "ladder" is the arena's own
    assert fit(fold.competitions["cup"]) == fit_results(cup)
    assert fit(fold.matchups) == fit_results(results)             # the arena's counts them all
    assert fit(fold.competitions["cup"]) != fit(fold.matchups)


def _record(store: Store, results) -> list[str]:
    eids = []
    for r in results:
        store.create_match(r["match_id"], {"bots": r["seats"]}, pair=r["pair"])
        new, eid = store.record_result(r["match_id"], r)
        assert new
        eids.append(eid)
    return eids


def test_live_counts_equal_a_rebuild_and_a_checkpoint_plus_the_tail(store):
    results = _versioned(500)
    cup = [r for r in results if r.get("competition") == "cup"]
    whole = Store(store.r, Keys(f"w{uuid.uuid4().hex[:8]}:"))
    _record(whole, results)
    eids = []
    for i in range(0, len(results), 37):                      # recorded and folded in batches
        eids += _record(store, results[i:i + 37])
        catch_up(store)
        if i == 222:
            checkpoint(store, eids[150])                      # retention trims the log
    catch_up(whole)
    assert store.results_count() < len(results)
    assert "cup" in load_checkpoint(store)["state"]["competitions"]
    for arena in (store, whole):
        assert rebuild(arena, write=False)["max_diff"] == 0.0
        assert load_matchups(arena, "cup") == load_matchups(whole, "cup")
        assert versions_of_record(arena).rating == fit_results(results).rating
        assert versions_of_record(arena, "cup").rating == fit_results(cup).rating
        assert fit_of_record(arena, "ladder") == fit_of_record(arena)
        assert load_matchups(arena, "no-such") == {}
    # a count that drifted is seen, and a rebuild puts it right; so is a lost competition
    k = store.keys
    field = next(iter(store.r.hkeys(k.ratings_matchups("cup"))))
    store.r.hincrby(k.ratings_matchups("cup"), field, 1)
    assert rebuild(store, write=False)["max_diff"] == math.inf
    store.r.sadd(k.ratings_competitions(), "ghost")
    store.r.hset(k.ratings_matchups("ghost"), "g:[]", 1)
    rebuild(store)
    assert rebuild(store, write=False)["max_diff"] == 0.0
    assert not store.r.exists(k.ratings_matchups("ghost"))
    assert load_matchups(store, "cup") == load_matchups(whole, "cup")
    # every live count lost: the next catch-up starts again from the checkpoint
    store.r.delete(k.ratings_cursor(), k.ratings_matchups(), k.ratings_matchups("cup"),
                   k.ratings_competitions(), k.ratings_pending(),
                   *(k.ratings(s) for s in ("elo", "openskill", "games", "score")))
    catch_up(store)
    assert load_matchups(store, "cup") == load_matchups(whole, "cup")
    assert load_matchups(store) == load_matchups(whole)
    assert {b: r.elo for b, r in load(store).items()} == {b: r.elo for b, r in load(whole).items()}


def test_a_checkpoint_of_a_log_without_competitions_reads_as_before(store):
    results = synthetic_results(120, bots=6, seed=4)
    eids = _record(store, results)
    catch_up(store)
    checkpoint(store, eids[80])
    raw = json.loads(store.r.hget(store.keys.ratings_checkpoint(), "state"))
    assert set(raw) == {"bots", "pending", "matchups"}
    assert raw["matchups"] == _by_name(results[:81])
    assert rebuild(store, write=False)["max_diff"] == 0.0
    assert fit_of_record(store).rating == fit_results(results).rating


def test_a_competition_ranks_each_entrant_as_the_version_its_entry_fixed(store):
    """A closed competition keeps the versions that played it, whatever came after; the read
    model reads the same standings without writing anything."""
    from sueca.arena.league.view import LeagueView
    from sueca.arena.lifecycle import new_spec
    results = [dict(r, competition="cup") for r in _versioned(300)]
    for b in sorted({b for r in results for b in r["seats"]}):
        store.bots.add(b)
    store.competitions.create(new_spec("cup"), by="ann")
    for b in ("bot000", "bot001"):
        store.competitions.enter("cup", b, by="ann")
    for _ in range(3):
        store.versions.bump("bot001", by="ann")               # now at version 4
    store.competitions.update_entry("cup", "bot001", version=3)
    _record(store, results)
    catch_up(store)
    assert not store.r.exists(store.keys.ratings_record("cup"))
    by_bot, by_version = LeagueView(store).competition_ratings("cup")
    assert not store.r.exists(store.keys.ratings_record("cup"))   # read only
    whole = fit_results(results)
    assert by_version.rating == whole.rating
    assert by_bot.rating["bot001"] == whole.rating["bot001@3"]     # its entry's version
    assert by_bot.rating["bot000"] == whole.rating["bot000"]       # no entry version: current
    assert fit_of_record(store, "cup") == by_bot                   # and the cached one agrees
    assert store.r.exists(store.keys.ratings_record("cup"))
