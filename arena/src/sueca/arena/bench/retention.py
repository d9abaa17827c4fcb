"""Redis bytes per recorded match, and what retention gives back: records ``--matches`` matches.

On its own Redis (started here, unless ``--redis``; the key prefix is fresh either way), in
this order:

* ``record``: ``--matches`` matches created and recorded through the store's real path
  (``Store.create_match`` and ``Store.record_result``: the same Lua script a worker runs, one
  call per match, with the match hash, the results entry, the idempotency key and the zlib
  replay). No game is played per match: the results are seeded synthetic ones (two- and
  four-bot matches, duplicate pairs, some faults, among ``--bots`` bots) and each replay is
  one of ``TEMPLATES`` real matches played once by the engine (random bots), renamed, so the
  replays have the size and the compressibility of real ones. Nine in ten are ladder matches,
  one in ten a tournament's (which keeps a ~100-byte tombstone after retention). Bytes per match = Redis
  ``used_memory`` after minus before, over the matches; ``by_key`` breaks it down with
  ``MEMORY USAGE`` (sampled keys for the per-match keys, the whole stream for the log).
* ``ratings``: the live ratings catch up with the log (as the workers do after recording).
* baseline, ``read``: reading everything retention reads (every match hash, replay and results
  entry, pipelined) without writing anything: the floor of a retention run.
* ``retention``: :func:`sueca.arena.retention.run` with an archive directory (a temporary one,
  unless ``--archive``) and a clock one day ahead, so every match is old: the archive files are
  written and fsynced, the hashes and replays deleted, the ratings checkpointed and the log
  trimmed. Then ``used_memory`` again, and ``ratings rebuild --check`` from the checkpoint,
  which must give numbers identical to the live ratings folded over the whole log.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from sueca.arena import render, retention
from sueca.arena.bench import measured
from sueca.arena.keys import Keys
from sueca.arena.redisproc import RedisServer
from sueca.arena.store import Store, connect
from sueca.arena.store.ratings import catch_up, rebuild
from sueca.engine import End
from sueca.engine import replay as replays
from sueca.sdk.bots import RandomBot
from sueca.sdk.cli import Bounded
from sueca.sdk.local import play_local

#: Real replays recorded once and reused (renamed) for every synthetic match.
TEMPLATES = 24


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--matches", action=Bounded, kind=int, low=1, default=100_000)
    p.add_argument("--bots", action=Bounded, kind=int, low=4, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", action=Bounded, kind=int, low=1, high=64, default=16,
                   help="threads recording at once (default 16), as many workers would")
    p.add_argument("--redis", metavar="URL", default=None,
                   help="use this Redis (a fresh key prefix) instead of starting one; its "
                        "memory figures then include whatever else it holds")
    p.add_argument("--archive", metavar="DIR", default=None,
                   help="keep the archive files here (default: a temporary directory)")


def replay_templates(n: int = TEMPLATES, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` replays of real matches (random bots, the default variant), played now."""
    out = []
    for i in range(n):
        match = play_local([RandomBot] * 4, seed=f"bench-{seed}-{i}", match_id=f"t{i}",
                           seed_key=b"retention-bench-key")
        out.append(dict(replays.record(match, f"t{i}", ["a", "b", "a", "b"])))
    return out


def synthetic_results(n: int, bots: int = 100, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` logged results as a league logs them: two-bot matches (a third of them duplicate
    pairs, whose halves may be far apart in the log), four-bot matches, some timeouts."""
    rng = random.Random(seed)
    names = [f"bot{i:03d}" for i in range(bots)]
    strength = {b: rng.gauss(0.0, 150.0) for b in names}
    out: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []
    k = 0
    while len(out) < n:
        k += 1
        if waiting and rng.random() < 0.3:
            out.append(waiting.pop(rng.randrange(len(waiting))))
            continue
        a, b = rng.sample(names, 2)
        four = rng.random() < 0.3
        seats = [a, b, a, b]
        if four:
            c, d = rng.sample([x for x in names if x not in (a, b)], 2)
            seats = [a, b, c, d]
        s0 = (strength[seats[0]] + strength[seats[2]] - strength[seats[1]] - strength[seats[3]]) / 2
        winner = 0 if rng.random() < 1.0 / (1.0 + 10.0 ** (-s0 / 400.0)) else 1
        end = End.TIMEOUT if rng.random() < 0.02 else End.NORMAL
        res = {"match_id": f"m{k:07d}", "seats": seats, "winner": winner,
               "game_points": [4, rng.randrange(3)] if winner == 0 else [rng.randrange(3), 4],
               "end": end, "pair": "", "seed": f"s{k}", "referee": "127.0.0.1:50051",
               "fault_seat": 2 if end == End.TIMEOUT else None,
               "fault_bot": seats[2] if end == End.TIMEOUT else None, "time": 0.0}
        if end == End.TIMEOUT:
            res["winner"], res["game_points"] = 1, [0, 4]
        if not four and rng.random() < 0.5 and len(out) + 1 < n:
            res["pair"] = f"p{k}"
            twin = dict(res, match_id=f"m{k:07d}b", seats=[b, a, b, a],
                        winner=1 - winner if rng.random() < 0.6 else winner,
                        fault_seat=None, fault_bot=None, end="normal")
            waiting.append(twin)
        out.append(res)
    return out[:n]


def _record_all(store: Any, results: list[dict[str, Any]], templates: list[dict[str, Any]],
                threads: int, advance: Any) -> None:
    """Create and record every match with the store's own calls, from ``threads`` threads (as
    many workers record at once): one call waits a whole round trip, and Redis on a busy
    machine answers in about half a millisecond."""
    def one(i: int) -> None:
        res = results[i]
        mid = res["match_id"]
        store.create_match(mid, {"bots": res["seats"], "seed": res["seed"]}, pair=res["pair"],
                           tournament="ladder" if i % 10 else "bench")
        replay = dict(templates[i % len(templates)], match_id=mid, seats=res["seats"],
                      seed=res["seed"])
        new, _ = store.record_result(mid, dict(res, time=time.time()), replay)
        if not new:
            raise RuntimeError(f"match {mid} was recorded twice")

    def chunk(lo: int) -> int:
        hi = min(lo + 500, len(results))
        for i in range(lo, hi):
            one(i)
        return hi - lo

    with ThreadPoolExecutor(threads) as pool:
        for n in pool.map(chunk, range(0, len(results), 500)):
            advance(n)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _by_key(store: Any, mids: list[str]) -> dict[str, float]:
    """Bytes per match of each kind of key (``MEMORY USAGE``; per-match keys sampled)."""
    k = store.keys
    sample = mids[:: max(1, len(mids) // 200)]
    got = store.key_sizes(key for mid in sample
                          for key in (k.match(mid), k.replay(mid), k.recorded(mid)))
    n = len(sample)

    def mean(xs: list[Any]) -> float:
        return sum(int(x or 0) for x in xs) / n
    return {"match_hash": mean(got[0::3]), "replay": mean(got[1::3]),
            "recorded_key": mean(got[2::3]),
            "results_entry": store.key_sizes([k.results()])[0] / len(mids),
            "matches_index": store.key_sizes([k.matches()])[0] / len(mids)}


def _left(store: Any, mids: list[str]) -> dict[str, int]:
    """Bytes (``MEMORY USAGE``) of what retention leaves: the tournament matches' idempotency
    keys (tombstones; summed over all of them), the ratings (which grow with bots and matchups,
    not with matches) and the checkpoint."""
    k = store.keys
    tombstones = [x for x in store.key_sizes(k.recorded(mid) for mid in mids) if x]
    ratings = [k.ratings(s) for s in ("elo", "openskill", "games", "score")] + [
        k.ratings_pending(), k.ratings_matchups(), k.ratings_record(), k.ratings_cursor(),
        k.ratings_config()]
    return {"tombstones": len(tombstones), "tombstone_bytes": sum(tombstones),
            "ratings_bytes": sum(store.key_sizes(ratings)),
            "checkpoint_bytes": store.key_sizes([k.ratings_checkpoint()])[0],
            "results_log_bytes": store.key_sizes([k.results()])[0]}


def _read_all(store: Any, mids: list[str]) -> int:
    """The baseline: read what retention reads, writing nothing; returns bytes read."""
    total = 0
    for i in range(0, len(mids), 1000):
        for h, blob in store.archive_rows(mids[i:i + 1000]):
            total += sum(len(v) for v in h.values()) + len(blob or b"")
    for _, res in store.results():
        total += len(res)
    return total


def measure(args: argparse.Namespace) -> dict[str, Any]:
    templates = replay_templates(seed=args.seed)
    results = synthetic_results(args.matches, args.bots, args.seed)
    server = None if args.redis else RedisServer().start()
    try:
        client = connect(args.redis or server.url)  # type: ignore[union-attr]
        store = Store(client, Keys(f"bench{uuid.uuid4().hex[:6]}:"))
        before = store.used_memory()
        t0 = time.perf_counter()
        with render.progress(len(results), "recording matches") as advance:
            _record_all(store, results, templates, args.threads, advance)
        record_s = time.perf_counter() - t0
        _say(f"recorded {len(results)} matches in {record_s:.1f} s")
        recorded = store.used_memory()
        mids = [r["match_id"] for r in results]
        by_key = _by_key(store, mids)
        t0 = time.perf_counter()
        catch_up(store)
        ratings_s = time.perf_counter() - t0
        _say(f"ratings caught up in {ratings_s:.1f} s")
        after_ratings = store.used_memory()
        t0 = time.perf_counter()
        read_bytes = _read_all(store, mids)
        read_s = time.perf_counter() - t0
        with tempfile.TemporaryDirectory() as tmp:
            where = args.archive or tmp
            report = retention.run(store, 1.0, archive=where, now=time.time() + retention.DAY + 1,
                                   progress=render.progress)
            archive_bytes = sum(p.stat().st_size for p in Path(where).rglob("*.jsonl.gz"))
        after = store.used_memory()
        left = _left(store, mids)
        _say(f"retention ran in {report['seconds']:.1f} s")
        t0 = time.perf_counter()
        check = rebuild(store, write=False)
        rebuild_s = time.perf_counter() - t0
        n = len(results)
        return {"bench": "retention", "matches": n, "bots": args.bots,
                "bytes_per_match": (recorded - before) / n,
                "by_key": {k: round(v, 1) for k, v in by_key.items()},
                "memory_empty": before, "memory_recorded": recorded,
                "memory_with_ratings": after_ratings, "memory_after_retention": after,
                "bytes_per_match_after_retention": (after - before) / n,
                "left_after_retention": left,
                "retention_checkpoint_seconds": report.get("checkpoint_seconds"),
                "record_seconds": record_s, "record_per_second": n / record_s,
                "ratings_catch_up_seconds": ratings_s,
                "baseline_read_seconds": read_s, "baseline_read_bytes": read_bytes,
                "retention_seconds": report["seconds"],
                "ratio_retention_to_read": report["seconds"] / read_s if read_s else None,
                "removed_matches": report["removed_matches"],
                "trimmed_results": report["trimmed_results"],
                "archive_bytes": archive_bytes, "archive_bytes_per_match": archive_bytes / n,
                "rebuild_from_checkpoint_seconds": rebuild_s,
                "rebuild_identical": check["max_diff"] == 0.0}
    finally:
        if server is not None:
            server.stop()


def run(args: argparse.Namespace) -> int:
    out = measured("retention", measure, args)
    if out is None:
        return 1
    _table(out)
    print(json.dumps(out), flush=True)
    return 0 if out["rebuild_identical"] else 1


def _table(o: dict[str, Any]) -> None:
    t = Table(title=f"Redis per recorded match ({o['matches']:,} matches, {o['bots']} bots)")
    t.add_column("")
    t.add_column("value", justify="right")
    t.add_row("bytes per match (used_memory delta / N)", f"{o['bytes_per_match']:,.0f}")
    for k, v in o["by_key"].items():
        t.add_row(f"  {k} (MEMORY USAGE)", f"{v:,.0f}")
    t.add_row("memory recorded + ratings", f"{o['memory_with_ratings'] / 1e6:,.1f} MB")
    t.add_row("memory after retention", f"{o['memory_after_retention'] / 1e6:,.1f} MB")
    t.add_row("bytes per match left (all of Redis)", f"{o['bytes_per_match_after_retention']:,.0f}")
    left = o["left_after_retention"]
    t.add_row(f"  {left['tombstones']:,} tombstones (tournament matches)",
              f"{left['tombstone_bytes'] / 1e6:,.1f} MB")
    t.add_row("  ratings (per bot and matchup) + checkpoint",
              f"{(left['ratings_bytes'] + left['checkpoint_bytes']) / 1e6:,.1f} MB")
    t.add_row("record, matches/s", f"{o['record_per_second']:,.0f}")
    t.add_row("baseline: read everything, s", f"{o['baseline_read_seconds']:.1f}")
    t.add_row("retention run, s", f"{o['retention_seconds']:.1f}")
    t.add_row("  of which the ratings checkpoint's fold, s",
              f"{o['retention_checkpoint_seconds'] or 0:.1f}")
    t.add_row("archive bytes per match (gzip)", f"{o['archive_bytes_per_match']:,.0f}")
    t.add_row("rebuild from checkpoint identical", str(o["rebuild_identical"]))
    Console(stderr=True, highlight=False, width=120).print(t)
