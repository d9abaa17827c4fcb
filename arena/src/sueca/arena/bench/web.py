"""Web pages with a large history: server time of each page over 100,000 matches and 1,000 bots.

Seeds a private Redis (unless ``--redis``; under a fresh key prefix either way) the way the league
writes it: ``--bots`` registered bots, ``--matches`` ladder matches recorded exactly as a worker
records them (result in the results log, compressed replay, match hash; the replays are real
games played by the example bots, relabelled with the seeded bots' names) and the ratings folded
from the log, plus one small duplicate tournament really played. Then it serves the web front end
with uvicorn on a loopback port and requests each page ``--repeat`` times.

Each page's time is the app's own ``Server-Timing`` (routing, Redis, templates; no network),
with the HTTP round trip beside it. The baseline, measured in the same run, is ``/api/health``:
one Redis PING through the same stack. At start the app folds the whole results log into its
counters (in the background; the first request, timed as ``cold_s``, waits for it); later
requests fold only the new entries. The last line is one JSON object; ``ok`` is whether every
page's p95 is within ``--target-ms``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

import uvicorn

from sueca.arena import render
from sueca.arena.keys import Keys
from sueca.arena.match_job import outcome_to_result, play_and_record, run_local
from sueca.arena.records import MatchRecord, MatchStatus
from sueca.arena.redisproc import RedisServer, free_port
from sueca.arena.schedule import match_spec
from sueca.arena.store import Store, StoreUnavailable, connect
from sueca.arena.store.ratings import rebuild
from sueca.arena.tournaments import new_spec, prepare_tournament
from sueca.arena.web.app import create_app
from sueca.engine.replay import ReplayRecord
from sueca.sdk.bots import EXAMPLES
from sueca.sdk.cli import Bounded, UserError

if TYPE_CHECKING:
    import uvicorn

    from sueca.arena.store import Store

PAGES = [
    ("leaderboard", "/"),
    ("leaderboard p10", "/?page=10"),
    ("leaderboard by OpenSkill", "/?sort=openskill"),
    ("api leaderboard", "/api/leaderboard"),
    ("matches", "/matches"),
    ("matches p1000", "/matches?page=1000"),
    ("matches of a bot", "/matches?bot={bot}"),
    ("matches by end", "/matches?end=normal&page=50"),
    ("api matches", "/api/matches"),
    ("bot", "/bots/{bot}"),
    ("api bot", "/api/bots/{bot}"),
    ("replay viewer", "/matches/{match}?deal=1&trick=5"),
    ("api match", "/api/matches/{match}"),
    ("tournament", "/tournaments/{tournament}"),
]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--matches", action=Bounded, kind=int, low=1, default=100_000,
                   help="recorded matches to seed (default 100000)")
    p.add_argument("--bots", action=Bounded, kind=int, low=4, default=1000,
                   help="registered bots to seed (default 1000)")
    p.add_argument("--games", action=Bounded, kind=int, low=1, default=200,
                   help="real games played to take the replays from (default 200)")
    p.add_argument("--repeat", action=Bounded, kind=int, low=1, default=30,
                   help="requests per page (default 30)")
    p.add_argument("--target-ms", action=Bounded, kind=float, low=0, above=True, default=100.0,
                   help="p95 server time each page must stay within (default 100)")
    p.add_argument("--redis", metavar="URL", default=None, help="use this Redis")


def _seed(store: Store, n_matches: int, n_bots: int, n_games: int,
          progress: Callable[[int], None]) -> dict[str, str]:
    rng = random.Random(7)
    registry = store.bots
    bots = [f"bot{i:04d}" for i in range(n_bots)]
    registry.add_unverifiable(bots)
    examples: list[str] = [e for e in ("random", "heuristic", "reckless") if e in EXAMPLES]
    for e in examples:
        if not registry.exists(e):
            registry.add(e)
    templates = []
    for g in range(n_games):  # real games: the replays every seeded match re-uses
        seats = [rng.choice(examples) for _ in range(2)] * 2
        spec = match_spec(f"tpl-{g}", seats, seed=str(rng.getrandbits(63)), first_dealer=g % 4,
                          variant={})
        templates.append(run_local(spec))
    for i in range(n_matches):
        mid = f"bench-{i:06d}"
        a, b = rng.sample(bots, 2)
        seats = [a, b, a, b]
        spec = match_spec(mid, seats, seed=str(i), first_dealer=i % 4, variant={})
        store.create_match(mid, spec, tournament="ladder")
        out = templates[i % len(templates)]
        assert out["replay"] is not None  # played in-process: always a replay
        replay: ReplayRecord = {**out["replay"], "match_id": mid, "seats": seats}
        record: MatchRecord = {"id": mid, "spec": spec, "tournament": "ladder", "pair": "",
                               "status": MatchStatus.DONE, "attempts": 1, "updated": ""}
        result = outcome_to_result(record, {**out, "replay": replay, "fault_bot": None})
        store.record_result(mid, result, replay)
        progress(1)
    rebuild(store)
    tid, _ = prepare_tournament(store, new_spec(examples, 2, duplicate=True),
                                tid=f"bench-cup-{uuid.uuid4().hex[:4]}")
    for mid in store.tournament_matches(tid):
        play_and_record(store, mid, mode="local")
    return {"bot": bots[0], "match": "bench-000000", "tournament": tid}


def _serve(store: Store) -> tuple[uvicorn.Server, int, threading.Thread]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(store), host="127.0.0.1", port=port,
                                           log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    return server, port, thread


def _get(base: str, path: str) -> tuple[float, float]:
    """(app ms from Server-Timing, round-trip ms); a non-200 answer is an error."""
    t0 = time.perf_counter()
    with urllib.request.urlopen(base + path, timeout=30) as r:
        r.read()
        timing = r.headers.get("Server-Timing", "")
    rtt = (time.perf_counter() - t0) * 1000.0
    app = float(timing.split("dur=")[1]) if "dur=" in timing else rtt
    return app, rtt


def _p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


def run(args: argparse.Namespace) -> int:
    server_proc = None
    url = args.redis
    if url is None:
        server_proc = RedisServer().start()
        url = server_proc.url
    try:
        try:
            store = Store(connect(url), Keys(f"benchweb{uuid.uuid4().hex[:6]}:"))
        except StoreUnavailable as err:
            raise UserError(str(err)) from None
        t0 = time.perf_counter()
        with render.progress(args.matches, "seeding matches") as advance:
            names = _seed(store, args.matches, args.bots, args.games, advance)
        seed_s = time.perf_counter() - t0
        server, port, thread = _serve(store)
        base = f"http://127.0.0.1:{port}"
        try:
            cold_app, cold_rtt = _get(base, "/")
            rows = []
            timings: dict[str, dict[str, float]] = {}
            with render.progress(len(PAGES) + 1, "requesting pages") as advance:
                for label, path in [("baseline /api/health", "/api/health"), *PAGES]:
                    path = path.format(**names)
                    apps, rtts = [], []
                    _get(base, path)  # warm
                    for _ in range(args.repeat):
                        a, r = _get(base, path)
                        apps.append(a)
                        rtts.append(r)
                    timings[path] = {"p50_ms": round(statistics.median(apps), 2),
                                     "p95_ms": round(_p95(apps), 2),
                                     "rtt_p50_ms": round(statistics.median(rtts), 2)}
                    rows.append([label, f"{timings[path]['p50_ms']:.1f}",
                                 f"{timings[path]['p95_ms']:.1f}",
                                 f"{timings[path]['rtt_p50_ms']:.1f}", path])
                    advance(1)
        finally:
            server.should_exit = True
            thread.join(10)
        pages = {k: v for k, v in timings.items() if k != "/api/health"}
        worst = max(v["p95_ms"] for v in pages.values())
        out = render.stdout()
        out.print(render.table(
            f"web pages: {args.matches} matches, {args.bots} bots (app time from Server-Timing)",
            ["page", "p50 ms", "p95 ms", "HTTP p50 ms", "path"], rows,
            right=["p50 ms", "p95 ms", "HTTP p50 ms"]))
        out.print(f"seeded in {seed_s:.1f}s; first page (folds the results log) "
                  f"{cold_app / 1000:.2f}s; worst p95 {worst:.1f} ms "
                  f"(target {args.target_ms:g} ms): {'ok' if worst <= args.target_ms else 'SLOW'}")
        print(json.dumps({"bench": "web", "matches": args.matches, "bots": args.bots,
                          "seed_s": round(seed_s, 1), "cold_s": round(cold_app / 1000, 3),
                          "baseline_p50_ms": timings["/api/health"]["p50_ms"],
                          "worst_p95_ms": worst, "target_ms": args.target_ms,
                          "ok": worst <= args.target_ms, "pages": pages}))
        return 0
    finally:
        if server_proc is not None:
            server_proc.stop()
