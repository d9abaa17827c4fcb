"""Retention on a real Redis: a ratings checkpoint + the log's tail rebuilds the same numbers as
the whole log; old matches go to gzip archive files before Redis forgets them, idempotently and
safely across a crash; live work is never touched; bad input is refused whole."""

from __future__ import annotations

import gzip
import json
import time
import uuid

import pytest
from kits.arena import arena_env, cli

from sueca.arena import retention
from sueca.arena.bench.retention import replay_templates, synthetic_results
from sueca.arena.keys import Keys
from sueca.arena.store import Store
from sueca.arena.store.errors import RatingsError
from sueca.arena.store.ratings import (
    catch_up,
    checkpoint,
    fit_of_record,
    load,
    load_matchups,
    rebuild,
    save_config,
)

DAY = retention.DAY


def _other(store: Store) -> Store:
    return Store(store.r, Keys(f"u{uuid.uuid4().hex[:8]}:"))


def _record(store: Store, results, replays=None, tournament="ladder") -> list[str]:
    eids = []
    for i, r in enumerate(results):
        store.create_match(r["match_id"], {"bots": r["seats"]}, pair=r["pair"],
                           tournament=tournament(i) if callable(tournament) else tournament)
        replay = None if replays is None else dict(replays[i % len(replays)],
                                                   match_id=r["match_id"])
        new, eid = store.record_result(r["match_id"], r, replay)
        assert new
        eids.append(eid)
    return eids


def _numbers(ratings):
    return {b: (r.elo, r.mu, r.sigma, r.games, r.score) for b, r in ratings.items()}


def test_checkpoint_plus_tail_rebuilds_the_numbers_of_the_whole_log(store):
    """300 seeded results (pairs whose halves straddle the checkpoint, four-bot matches,
    timeouts) in two arenas: one keeps its whole log, the other is trimmed twice."""
    results = synthetic_results(300, bots=12, seed=5)
    whole, trimmed = _other(store), store
    _record(whole, results)
    eids = _record(trimmed, results[:120])
    catch_up(trimmed)
    cp = checkpoint(trimmed, eids[99])
    assert cp == {"cursor": eids[99], "results": 100, "trimmed": 100}
    assert trimmed.results_count() == 20 and trimmed.trimmed_through() == eids[99]
    pending = trimmed.r.hlen(trimmed.keys.ratings_pending())
    assert pending, "the seed must leave a duplicate half waiting across the checkpoint"
    eids += _record(trimmed, results[120:250])
    cp = checkpoint(trimmed, eids[200])       # folds on from the first checkpoint
    assert cp == {"cursor": eids[200], "results": 201, "trimmed": 101}
    assert checkpoint(trimmed, eids[150])["trimmed"] == 0                # never backwards
    _record(trimmed, results[250:])
    catch_up(whole)
    catch_up(trimmed)

    full = rebuild(whole, write=False)
    again = rebuild(trimmed, write=False)
    assert trimmed.results_count() == 99 and again["results"] == full["results"] == 300
    assert again["checkpoint"] == eids[200] and again["checkpoint_results"] == 201
    assert full["max_diff"] == 0.0 and again["max_diff"] == 0.0
    assert _numbers(again["ratings"]) == _numbers(full["ratings"])      # bit for bit
    assert _numbers(load(trimmed)) == _numbers(load(whole))
    assert load_matchups(trimmed) == load_matchups(whole)
    assert fit_of_record(trimmed).rating == fit_of_record(whole).rating
    # a rebuild that writes, then the live ratings lost entirely: both come back the same
    rebuild(trimmed)
    for system in ("elo", "openskill", "games", "score"):
        trimmed.r.delete(trimmed.keys.ratings(system))
    trimmed.r.delete(trimmed.keys.ratings_cursor(), trimmed.keys.ratings_pending(),
                     trimmed.keys.ratings_matchups())
    catch_up(trimmed)
    assert _numbers(load(trimmed)) == _numbers(load(whole))
    # another K cannot be computed without the trimmed entries: refused, nothing changed
    with pytest.raises(RatingsError, match=r"trimmed at entry .* K=24 .* 201 trimmed results"):
        save_config(trimmed, elo_k=40)
    assert _numbers(load(trimmed)) == _numbers(load(whole))


def _lines(path):
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def test_retention_archives_before_it_forgets_and_spares_live_matches(store, tmp_path):
    results = synthetic_results(60, bots=6, seed=2)
    replays = replay_templates(3)
    _record(store, results, replays, lambda i: "t-old" if i % 2 else "ladder")
    catch_up(store)
    # live work, created "before the cutoff" too: not recorded, queued, leased
    for mid in ("pending1", "queued1", "leased1"):
        store.create_match(mid, {"bots": ["a", "b", "a", "b"]})
        store.r.zadd(store.keys.matches(), {mid: time.time() - 10 * DAY})
    store.claim("queued1")
    store.start_attempt("leased1", owner="w1")
    old_ids = [r["match_id"] for r in results]
    want = {mid: store.replay(mid) for mid in old_ids}
    later = time.time() + 2 * DAY

    dry = retention.run(store, 1.0, archive=str(tmp_path), dry_run=True, now=later)
    assert dry["matches"] == 60 and dry["results_to_trim"] == 60
    assert not list(tmp_path.rglob("*.gz")) and store.results_count() == 60

    # a crash after the archive file is in place but before Redis forgot anything
    real = store.forget_matches
    store.forget_matches = lambda mids: (_ for _ in ()).throw(ConnectionError("killed"))
    with pytest.raises(ConnectionError):
        retention.run(store, 1.0, archive=str(tmp_path), now=later)
    store.forget_matches = real
    # the log was archived and trimmed behind the checkpoint first; the matches wait
    assert store.match(old_ids[0]) is not None and store.results_count() == 0
    assert not store.r.exists(store.keys.lock("retention"))              # lock released

    rep = retention.run(store, 1.0, archive=str(tmp_path), now=later)
    assert rep["removed_matches"] == 60 and rep["archived_matches"] == 0  # already in the file
    assert rep["trimmed_results"] == 0 and rep["deferred_matches"] == 0
    day = time.strftime("%Y-%m-%d", time.gmtime())
    lines = _lines(tmp_path / "matches" / f"{day}.jsonl.gz")
    assert sorted(x["id"] for x in lines) == sorted(old_ids)              # each exactly once
    assert {x["id"]: x["replay"] for x in lines} == want
    assert all(x["match"]["status"] == "done" and x["match"]["spec"]["bots"] for x in lines)
    logged = _lines(tmp_path / "results" / f"{day}.jsonl.gz")
    assert [x["data"]["match_id"] for x in logged] == old_ids
    for i, mid in enumerate(old_ids):
        assert store.match(mid) is None and store.replay(mid) is None
        # a tournament's match keeps its idempotency key (a tombstone), a ladder match not
        assert store.is_recorded(mid) == bool(i % 2)
    for mid in ("pending1", "queued1", "leased1"):
        assert store.match(mid) is not None
    assert store.statuses(["pending1", "queued1", "leased1", old_ids[1], old_ids[0]]) == [
        "pending", "queued", "running", "done", None]
    # re-created by a re-run tournament: not resurrected as pending, never queued again
    assert not store.create_match(old_ids[1], {"bots": ["x"] * 4}, tournament="t-old")
    assert store.match(old_ids[1]) is None and not store.claim(old_ids[1])

    again = retention.run(store, 1.0, archive=str(tmp_path), now=later)   # idempotent
    assert again["removed_matches"] == again["trimmed_results"] == 0
    assert len(_lines(tmp_path / "matches" / f"{day}.jsonl.gz")) == 60
    assert rebuild(store, write=False)["max_diff"] == 0.0


def test_retention_command_and_its_refusals(store, redis_url, tmp_path):
    results = synthetic_results(30, bots=5, seed=3)
    _record(store, results)
    env = arena_env(redis_url, store.keys.prefix)
    out = cli("retention", "run", "--older-than", "1", env=env, check=2)
    assert "nowhere to put old records" in out.stderr and "Traceback" not in out.stderr
    # a dry run writes nothing, so it needs no archive: it counts, and changes nothing
    before = store.results_count()
    time.sleep(1.0)  # recorded over a second ago: older than 0.00001 days (0.86 s)
    out = cli("retention", "run", "--older-than", "0.00001", "--dry-run", "--json", env=env)
    dry = json.loads(out.stdout)
    assert dry["dry_run"] is True and dry["archive"] is None
    assert dry["matches"] == 30 and dry["results_to_trim"] == 30
    assert store.results_count() == before == 30
    out = cli("retention", "run", "--older-than", "1", "--dry-run", env=env)
    assert "dry run: nothing changed" in out.stdout and "a real run needs --archive" in out.stdout
    out = cli("retention", "run", "--older-than", "-2", "--drop", env=env, check=2)
    assert "-2" in out.stderr
    for age, quoted in (("inf", "'inf'"), ("1e7", "10000000.0")):  # no cutoff date
        out = cli("retention", "run", "--older-than", age, "--drop", env=env, check=2)
        assert quoted in out.stderr and "Traceback" not in out.stderr, out.stderr
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = cli("retention", "run", "--older-than", "1", "--archive", str(blocker / "x"),
              env=env, check=2)
    assert repr(str(blocker / "x")) in out.stderr
    out = cli("retention", "run", "--older-than", "1", "--archive", "d", "--drop",
              env=env, check=2)
    assert "contradict" in out.stderr
    assert store.results_count() == 30 and store.match(results[0]["match_id"]) is not None
    off = json.loads(cli("retention", "run", "--json", env=env).stdout)
    assert off["off"] is True
    # nothing is old enough yet: a real run changes nothing
    rep = json.loads(cli("retention", "run", "--older-than", "1", "--drop", "--json",
                         env=env).stdout)
    assert rep["removed_matches"] == 0 and rep["trimmed_results"] == 0
    # 0.00001 days = 0.86 s: everything recorded before is old
    time.sleep(1.0)
    env["SUECA_ARCHIVE_DIR"] = str(tmp_path / "arch")
    out = cli("retention", "run", "--older-than", "0.00001", env=env)
    assert str(tmp_path / "arch") in out.stdout and "matches (hash + replay) moved" in out.stdout
    assert store.results_count() == 0 and len(list((tmp_path / "arch").rglob("*.gz"))) == 2
    status = json.loads(cli("retention", "status", "--json", env=env).stdout)
    assert status["results_retained"] == 0 and status["results_in_checkpoint"] == 30
    out = cli("ratings", "set-config", "--elo-k", "30", env=env, check=2)
    assert "only the retention archive holds" in out.stderr
    out = cli("ratings", "rebuild", "--check", env=env)
    assert "30 of them from the checkpoint" in out.stdout and "identical" in out.stdout


def test_retention_bench_reports_bytes_per_match_and_identical_rebuild():
    out = cli("bench", "retention", "--matches", "300", "--bots", "10", "--threads", "4",
              timeout=300)
    rep = json.loads(out.stdout.strip().splitlines()[-1])
    assert rep["matches"] == 300 and rep["removed_matches"] == 300
    assert rep["trimmed_results"] == 300 and rep["rebuild_identical"] is True
    assert 1000 < rep["bytes_per_match"] < 10000
    assert rep["bytes_per_match_after_retention"] < rep["bytes_per_match"] / 3
    assert rep["by_key"]["replay"] > rep["by_key"]["recorded_key"] > 0


def test_views_of_trimmed_history_say_what_they_lost(store, redis_url, tmp_path):
    """A tournament half archived: its table counts the rest and says how many are missing;
    its progress still counts every match done; an archived match is named as such."""
    from sueca.arena.tournaments import tournament_report
    results = synthetic_results(20, bots=4, seed=9)

    def schedule(tid, spec):
        return [{"id": r["match_id"], "spec": {"bots": r["seats"]}, "pair": r["pair"]}
                for r in results]
    store.create_tournament("t1", {"bots": ["a"]}, schedule)
    eids = [store.record_result(r["match_id"], r)[1] for r in results]
    catch_up(store)
    checkpoint(store, eids[11])
    report = tournament_report(store, "t1")
    assert report["archived"] == 12 and report["recorded"] == 8
    assert sum(s["matches"] for s in report["standings"]) >= 8
    store.forget_matches([results[0]["match_id"]])
    assert store.progress("t1")["done"] == 20
    env = arena_env(redis_url, store.keys.prefix)
    out = cli("matches", "show", results[0]["match_id"], env=env, check=2)
    assert "archived by retention" in out.stderr
    out = cli("tournament", "show", "t1", env=env)
    assert "12 more results of this tournament were archived" in out.stdout


def test_web_pages_say_what_retention_archived(store):
    """The web pages of a league whose log was trimmed name what they no longer count."""
    from starlette.testclient import TestClient

    from sueca.arena.web.app import create_app
    results = synthetic_results(16, bots=4, seed=4)
    for r in results:
        r["pair"] = ""
    for b in {s for r in results for s in r["seats"]}:
        store.bots.add(b)

    def schedule(tid, spec):
        return [{"id": r["match_id"], "spec": {"bots": r["seats"]}} for r in results]
    store.create_tournament("t2", {"bots": ["a"]}, schedule)
    eids = [store.record_result(r["match_id"], r)[1] for r in results]
    catch_up(store)
    bot = results[-1]["seats"][0]
    with TestClient(create_app(store), raise_server_exceptions=False) as c:
        counted = c.get("/api/leaderboard").json()
        assert sum(r["logged"] for r in counted) > 0 and 'id="trimmed"' not in c.get("/").text
        checkpoint(store, eids[9])          # trimmed while the web process runs
        store.forget_matches([results[0]["match_id"]])
        after = c.get("/api/leaderboard").json()
        assert sum(r["logged"] for r in after) < sum(r["logged"] for r in counted)
        page = c.get("/").text
        assert 'id="trimmed"' in page and "archived the 10 results" in page
        page = c.get(f"/bots/{bot}").text
        assert "archived the 10 results before it" in page
        # the rating history goes on from the checkpoint: it ends at the live rating
        history = c.get(f"/api/bots/{bot}").json()["history"]
        assert history and history[-1]["elo"] == load(store)[bot].elo
        page = c.get("/tournaments/t2").text
        assert "10 results of this tournament were archived" in page
        got = c.get(f"/matches/{results[0]['match_id']}")
        assert got.status_code == 404 and "archived by retention" in got.text


def test_a_failed_archive_write_changes_nothing(store, tmp_path, monkeypatch):
    results = synthetic_results(10, bots=4, seed=1)
    _record(store, results)
    catch_up(store)

    def full(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(retention.os, "fsync", full)   # the first file (the results log's)
    with pytest.raises(OSError):
        retention.run(store, 1.0, archive=str(tmp_path), now=time.time() + 2 * DAY)
    monkeypatch.undo()
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []   # no file, no temporary one
    assert store.results_count() == 10 and store.trimmed_through() is None
    assert all(store.match(r["match_id"]) is not None for r in results)
    token = store.lock("retention", 5)                                # the lock was released
    assert store.renew_lock("retention", token, 60) and not store.renew_lock("retention", "x", 60)
    assert store.r.pttl(store.keys.lock("retention")) > 30_000
    store.unlock("retention", token)

    # the matches' file failing after the log was archived and trimmed: no match forgotten,
    # and the next run moves them
    def broken(mids):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(store, "archive_rows", broken)
    with pytest.raises(OSError):
        retention.run(store, 1.0, archive=str(tmp_path), now=time.time() + 2 * DAY)
    monkeypatch.undo()
    assert store.results_count() == 0 and store.trimmed_through() is not None
    assert all(store.match(r["match_id"]) is not None for r in results)
    assert not list(tmp_path.rglob("matches/*"))
    rep = retention.run(store, 1.0, archive=str(tmp_path), now=time.time() + 2 * DAY)
    assert rep["removed_matches"] == rep["archived_matches"] == 10
    assert rebuild(store, write=False)["max_diff"] == 0.0


def test_another_k_after_a_trim_folds_the_archive(store, tmp_path, redis_url):
    """set-config after retention: from the archive files, the same numbers as an untrimmed
    league rebuilt with that K; the checkpoint moves to the new K; an incomplete archive is
    refused."""
    results = synthetic_results(80, bots=6, seed=12)
    whole = _other(store)
    _record(whole, results)
    _record(store, results[:50])
    catch_up(store)
    rep = retention.run(store, 1.0, archive=str(tmp_path / "a"), now=time.time() + 2 * DAY)
    assert rep["trimmed_results"] == 50
    _record(store, results[50:])
    env = arena_env(redis_url, store.keys.prefix)
    out = cli("ratings", "set-config", "--elo-k", "40", "--archive", str(tmp_path / "nowhere"),
              env=env, check=2)
    assert "no results archive in" in out.stderr and "Traceback" not in out.stderr
    cli("ratings", "set-config", "--elo-k", "40", "--archive", str(tmp_path / "a"), env=env)
    save_config(whole, elo_k=40)
    assert _numbers(load(store)) == _numbers(load(whole))
    assert load_matchups(store) == load_matchups(whole)
    assert rebuild(store, write=False)["max_diff"] == 0.0   # from the rewritten checkpoint
    # an archive that lacks entries (a day file lost) is refused, nothing written
    for f in (tmp_path / "a" / "results").glob("*.gz"):
        lines = gzip.open(f).read().splitlines()
        with gzip.open(f, "wb") as g:
            g.write(b"\n".join(lines[1:]) + b"\n")
    out = cli("ratings", "set-config", "--elo-k", "20", "--archive", str(tmp_path / "a"),
              env=env, check=2)
    assert "the archive holds 49 of the 50 results" in out.stderr
    assert _numbers(load(store)) == _numbers(load(whole))


def test_bot_totals_are_rebuilt_from_the_checkpoint_and_the_tail(store):
    """The per-bot health totals count every result when it is recorded; after a trim the
    checkpoint holds them as of its cursor, so a rebuild (the totals lost from Redis) gives
    them back exact: checkpoint + tail, across two checkpoints."""
    eids = _record(store, synthetic_results(40, bots=4, seed=9))
    catch_up(store)
    bots = sorted({b for _, r in store.results() for b in r["seats"]})
    before = store.bot_stats(bots)
    assert sum(before[b]["games"] for b in bots) > 0
    checkpoint(store, eids[9])
    checkpoint(store, eids[19])
    assert store.results_count() == 20
    store.r.delete(*(store.keys.bot_stats(b) for b in bots))
    assert store.rebuild_bot_stats() == len(bots)
    assert store.bot_stats(bots) == before


def test_bot_totals_are_not_rebuilt_past_a_checkpoint_that_kept_none(store):
    """A checkpoint made before it kept the totals: a fold of the tail would undercount, so
    the rebuild is refused and the totals stay as they were."""
    from sueca.arena.store import StoreError
    eids = _record(store, synthetic_results(40, bots=4, seed=9))
    catch_up(store)
    bots = sorted({b for _, r in store.results() for b in r["seats"]})
    before = store.bot_stats(bots)
    checkpoint(store, eids[9])
    store.r.hdel(store.keys.ratings_checkpoint(), "bot_stats")     # as an older version wrote it
    checkpoint(store, eids[19])                    # later checkpoints cannot know them either
    assert not store.r.hexists(store.keys.ratings_checkpoint(), "bot_stats")
    with pytest.raises(StoreError, match=f"through entry {eids[19]} with a checkpoint that "
                                         "holds no bot totals"):
        store.rebuild_bot_stats()
    assert store.bot_stats(bots) == before


def test_a_worker_says_once_that_totals_cannot_be_rebuilt(store, caplog):
    """The same arena, its totals' format marker lost too: a worker's ensure_bot_stats, called
    after each recorded result, warns once and then stops trying (it tried, silently, on every
    result)."""
    from sueca.arena.store import Store
    eids = _record(store, synthetic_results(20, bots=4, seed=3))
    catch_up(store)
    checkpoint(store, eids[9])
    store.r.hdel(store.keys.ratings_checkpoint(), "bot_stats")
    store.r.delete(store.keys.bot_stats_format())
    worker = Store(store.r, store.keys)
    calls = []
    rebuild = worker.rebuild_bot_stats
    worker.rebuild_bot_stats = lambda: calls.append(1) or rebuild()  # type: ignore[method-assign]
    with caplog.at_level("WARNING", logger="sueca.arena.store"):
        assert [worker.ensure_bot_stats() for _ in range(3)] == [False] * 3
    warned = [r.getMessage() for r in caplog.records if r.name == "sueca.arena.store"]
    assert len(warned) == 1 and f"through entry {eids[9]}" in warned[0], warned
    assert calls == [1]


def test_totals_of_entries_older_than_their_stats_survive_retention(store, tmp_path):
    """Entries written before results carried per-seat stats are counted from their replays:
    retention checkpoints them while the replays are still there, so a rebuild after it gives
    the same moves and renúncias (it forgot the replays first, and the checkpoint counted
    those matches without their moves)."""
    results = synthetic_results(40, bots=4, seed=5)
    assert not any("stats" in r for r in results)          # entries without stats, counted by replay
    _record(store, results, replay_templates(3))
    catch_up(store)
    bots = sorted({b for r in results for b in r["seats"]})
    before = store.bot_stats(bots)
    assert sum(before[b]["moves"] for b in bots) > 0
    rep = retention.run(store, 1.0, archive=str(tmp_path), now=time.time() + 2 * DAY)
    assert rep["removed_matches"] == 40 and store.results_count() == 0
    store.r.delete(*(store.keys.bot_stats(b) for b in bots))
    assert store.rebuild_bot_stats() == len(bots)
    assert store.bot_stats(bots) == before


def test_matches_whose_results_the_checkpoint_does_not_cover_wait(store, tmp_path, monkeypatch):
    """Only matches whose results entry is at or before the new checkpoint are forgotten; the
    rest (the live ratings had not folded them) stay for the next run."""
    eids = _record(store, synthetic_results(20, bots=4, seed=6), replay_templates(2))
    catch_up(store)
    monkeypatch.setattr(retention, "checkpoint",
                        lambda st, upto, advance=None: checkpoint(st, eids[9], advance))
    rep = retention.run(store, 1.0, archive=str(tmp_path), now=time.time() + 2 * DAY)
    assert (rep["removed_matches"], rep["deferred_matches"], rep["trimmed_results"]) == (10, 10, 10)
    mids = [r["match_id"] for _, r in store.results()]
    assert len(mids) == 10 and all(store.replay(m) is not None for m in mids)
    monkeypatch.undo()
    rep = retention.run(store, 1.0, archive=str(tmp_path), now=time.time() + 2 * DAY)
    assert (rep["removed_matches"], rep["deferred_matches"]) == (10, 0)
    assert rebuild(store, write=False)["max_diff"] == 0.0


def test_a_late_record_of_a_forgotten_ladder_match_is_refused(store):
    """Retention forgets a recorded ladder match with its idempotency key; a worker that
    stalled mid-match past that (its lease long lapsed, the match re-run and recorded by
    another) must not record it a second time."""
    (r,) = synthetic_results(1, bots=4, seed=7)
    store.create_match(r["match_id"], {"bots": r["seats"]}, tournament="ladder")
    assert store.record_result(r["match_id"], r, must_exist=True)[0]
    catch_up(store)
    bots = sorted(set(r["seats"]))
    before = store.bot_stats(bots)
    assert store.forget_matches([r["match_id"]]) == 1
    assert not store.is_recorded(r["match_id"])
    assert store.record_result(r["match_id"], r, must_exist=True) == (False, "")
    assert store.results_count() == 1 and store.match(r["match_id"]) is None
    assert store.replay(r["match_id"]) is None and store.bot_stats(bots) == before
