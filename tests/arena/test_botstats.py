"""Per-bot health (sueca.arena.botstats): per-seat stats in each results-log entry, the per-bot
totals written with the result (exactly once), their rebuild from the log (old entries without
stats included), the leaderboard and the worker's bounded per-bot Prometheus series. Real Redis;
a real referee with a reckless bot and a bot that times out for the end-to-end cases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kits.wait import wait_for

from sueca.arena import botstats


def _renuncias(replay: dict[str, Any], seats: list[str], bot: str) -> int:
    """Counted here from the replay, independently of the code under test."""
    return sum(1 for d in replay["deals"]
               if d["end"] == "renuncia" and seats[d["fault_seat"]] == bot)


def _health(store: Any, names: list[str]) -> dict[str, dict[str, Any]]:
    return {n: {k: v for k, v in h.items() if k != "last"}
            for n, h in store.bot_stats(names).items()}


# -- the numbers of one match ------------------------------------------------------------------
def test_seat_latency_is_exact_per_match_and_close_from_the_buckets() -> None:
    times = {0: [300, 700, 900, 1500, 2600, 40_000], 2: [100] * 99 + [9_000_000]}
    st = botstats.seat_stats(4, "timeout", fault_seat=1, replay=None, times=times)
    assert st[0]["turns"] == 6 and st[0]["p50_ms"] == 0.9 and st[0]["max_ms"] == 40.0
    assert st[0]["p99_ms"] == 40.0 and sum(st[0]["hist"]) == 6
    assert st[2]["p50_ms"] == 0.1 and st[2]["p99_ms"] == 0.1 and st[2]["max_ms"] == 9000.0
    assert st[2]["hist"][-1] == 1 and len(st[2]["hist"]) == len(botstats.BOUNDS_US) + 1
    assert "turns" not in st[1] and st[1]["timeouts"] == 1 and "timeouts" not in st[3]
    inc = botstats.increments(["a", "b", "a", "b"], st)
    assert inc["a"]["turns"] == 106 and inc["a"]["games"] == 1 and inc["a"]["max_us"] == 9_000_000
    assert inc["b"] == {"games": 1, "max_us": 0, "timeouts": 1}
    # from the buckets: within a factor of two, never above the slowest turn
    hist = [0] * (len(botstats.BOUNDS_US) + 1)
    for t in times[0]:
        hist[botstats._bucket(t)] += 1
    p50 = botstats.quantile(hist, 0.5, 40_000)
    assert p50 is not None and 0.45 <= p50 <= 1.8
    assert botstats.quantile(hist, 0.99, 40_000) == 40.0
    assert botstats.quantile([0] * 17, 0.5, 0) is None


def test_turn_times_metadata_is_parsed_and_junk_skipped() -> None:
    md = [("other", "x"), ("sueca-turn-times-us", "0=812,977;1=;2=5,x;3=4;9=1;junk")]
    assert botstats.parse_turn_times(md) == {0: [812, 977], 1: [], 3: [4]}
    assert botstats.parse_turn_times([("other", "x")]) is None


# -- recorded exactly once, rebuilt from the log -----------------------------------------------
def _play_local(store: Any, mid: str, seed: str) -> dict[str, Any]:
    from sueca.arena.match_job import play_and_record
    store.create_match(mid, {"bots": ["reckless", "random", "reckless", "random"], "seed": seed})
    out = play_and_record(store, mid, mode="local")
    assert out["status"] == "recorded"
    return out


def test_a_redelivered_result_counts_once(store) -> None:
    _play_local(store, "m1", "7")
    entry = store.result_of("m1")
    replay = store.replay("m1")
    seats = entry["seats"]
    assert [s.get("renuncias", 0) for s in entry["stats"]] == [
        sum(1 for d in replay["deals"] if d["end"] == "renuncia" and d["fault_seat"] == k)
        for k in range(4)]
    before = _health(store, ["reckless", "random"])
    assert before["reckless"]["faults"]["renuncia"] == _renuncias(replay, seats, "reckless") >= 1
    assert before["reckless"]["games"] == 1 and before["random"]["faults"]["renuncia"] == 0
    assert before["reckless"]["moves"] == sum(s["moves"] for s in entry["stats"][0::2]) > 0
    # the same match recorded again (a re-delivered task, a racing worker): nothing added
    again, _ = store.record_result("m1", entry, replay)
    assert not again
    from sueca.arena.match_job import play_and_record
    assert play_and_record(store, "m1", mode="local")["status"] == "skipped"
    assert _health(store, ["reckless", "random"]) == before


def test_old_entries_without_stats_read_and_the_totals_rebuild_identically(store) -> None:
    from sueca.arena.league.view import LeagueView
    from sueca.arena.match_job import outcome_to_result, run_local
    for i in range(3):
        _play_local(store, f"new{i}", str(i))
    # two entries as written before per-seat stats existed: one with its replay, one without
    spec = {"bots": ["reckless", "random", "reckless", "random"], "seed": "99",
            "match_id": "old1"}
    store.create_match("old1", spec)
    out = run_local(spec)
    old = {k: v for k, v in outcome_to_result(store.match("old1"), out).items() if k != "stats"}
    store.record_result("old1", old, out["replay"])
    store.create_match("old2", {"bots": ["random"] * 4})
    store.record_result("old2", {"match_id": "old2", "seats": ["random", "reckless"] * 2,
                                 "end": "timeout", "fault_seat": 1, "fault_bot": "reckless",
                                 "winner": 0, "game_points": [4, 0]})
    live = _health(store, ["reckless", "random"])
    want = sum(_renuncias(store.replay(m), store.result_of(m)["seats"], "reckless")
               for m in ("new0", "new1", "new2", "old1"))
    assert live["reckless"]["faults"] == {"renuncia": want, "timeout": 1, "disconnect": 0,
                                         "bot_error": 0}
    assert live["reckless"]["games"] == 5
    exact = store.bot_stats(["reckless", "random"])
    assert exact["reckless"]["last"] == max(store.result_of(m)["time"]
                                            for m in ("new0", "new1", "new2", "old1"))
    assert store.rebuild_bot_stats() == 2
    assert store.bot_stats(["reckless", "random"]) == exact  # "last" too: the results' time
    # every reader takes the old entries as they are
    from sueca.arena.leaderboard import leaderboard
    from sueca.arena.store.ratings import rebuild
    assert rebuild(store, write=False)["results"] == 5
    for b in ("reckless", "random"):
        store.bots.add(b)
    rows = {r["bot"]: r for r in leaderboard(store)}
    assert rows["reckless"]["faults"] == live["reckless"]["faults"]
    web = {r["bot"]: r for r in LeagueView(store).leaderboard()}
    assert web["reckless"]["faults"] == live["reckless"]["faults"]
    assert LeagueView(store).bot("reckless")["faults"]["renuncia"] == want


def test_an_arena_older_than_the_totals_is_folded_once_by_the_next_result(store) -> None:
    from sueca.arena.store import Store
    for i in range(2):
        _play_local(store, f"o{i}", str(i))
    want = _health(store, ["reckless", "random"])
    # as an older version left it: results in the log, no totals
    store.r.delete(store.keys.bot_stats_format(), store.keys.bot_stats("reckless"),
                   store.keys.bot_stats("random"), store.keys.bot_stats_index())
    fresh = Store(store.r, store.keys)  # a worker started after the upgrade
    assert _health(fresh, ["reckless"])["reckless"]["games"] == 0
    _play_local(fresh, "n1", "9")
    got = _health(fresh, ["reckless", "random"])
    assert got["reckless"]["games"] == 3 and got["random"]["games"] == 3
    assert got["reckless"]["faults"]["renuncia"] == want["reckless"]["faults"]["renuncia"] + \
        _renuncias(fresh.replay("n1"), fresh.result_of("n1")["seats"], "reckless")
    assert not fresh.ensure_bot_stats() and not Store(store.r, store.keys).ensure_bot_stats()


def test_a_rebuild_raced_by_new_results_starts_over(store) -> None:
    _play_local(store, "r1", "1")
    calls = []
    real = store.fold_bot_stats

    def fold(totals: Any, batch: list[Any]) -> None:
        real(totals, batch)
        if not calls:  # a result arrives while the first fold runs
            calls.append(1)
            _play_local(store, "r2", "2")

    store.fold_bot_stats = fold
    store.rebuild_bot_stats()
    assert _health(store, ["reckless"])["reckless"]["games"] == 2


# -- Prometheus: bounded per-bot series --------------------------------------------------------
def _sample(name: str, **labels: str) -> float:
    from prometheus_client import REGISTRY
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_per_bot_series_fold_past_the_bound_the_same_in_every_process(store, monkeypatch) -> None:
    from sueca.arena import metrics
    monkeypatch.setenv("SUECA_METRICS_MAX_BOTS", "2")
    monkeypatch.setattr(metrics, "_labels", None)
    bots = [f"b{i}-{store.keys.prefix[:-1]}" for i in range(3)]
    stats = [{"renuncias": 1, "timeouts": 0, "disconnects": 0}] * 4
    other = _sample("sueca_bot_faults_total", bot="_other", kind="renuncia")
    metrics.observe_bots(store, [bots[0], bots[1], bots[2], bots[0]], stats,
                         {0: [1000, 2000], 2: [3000]})
    assert _sample("sueca_bot_faults_total", bot=bots[0], kind="renuncia") == 2
    assert _sample("sueca_bot_faults_total", bot=bots[1], kind="renuncia") == 1
    assert _sample("sueca_bot_faults_total", bot=bots[1], kind="timeout") == 0.0  # pre-created
    assert _sample("sueca_bot_faults_total", bot=bots[2], kind="renuncia") == 0
    assert _sample("sueca_bot_faults_total", bot="_other", kind="renuncia") == other + 1
    assert _sample("sueca_bot_turn_seconds_count", bot=bots[0]) == 2
    # another process (a fresh cache) labels the same bots the same way, whatever order
    fresh = metrics.BotLabels(2)
    assert [fresh.label(store, b) for b in reversed(bots)] == ["_other", bots[1], bots[0]]
    assert metrics.BotLabels(0).label(store, bots[0]) == "_other"


# -- end to end on a real referee --------------------------------------------------------------
SLEEPY = """
import time
from sueca.sdk.bots import RandomBot

class Sleepy(RandomBot):
    def play(self, observation):
        time.sleep(0.5)  # on purpose: slower than the 50 ms move limit and bank
        return super().play(observation)
"""


def _referee_arena(spec: str, monkeypatch: Any) -> Any:
    from sueca.arena.loadtest.private_arena import PrivateArena
    arena = PrivateArena(spec, 1, capacity=2, house=["random"]).start()
    monkeypatch.setenv("SUECA_REFEREES", arena.address)
    monkeypatch.setenv("SUECA_RUNNER", "referee")
    return arena


def test_a_reckless_bot_on_a_real_referee(monkeypatch) -> None:
    """Renúncias and the referee's turn times per seat in the entry; the totals, the
    leaderboard, the web API and the worker's series show them; the bot page shows its
    sessions on the referee (ListBots)."""
    from sueca.arena import metrics
    from sueca.arena.keys import Keys
    from sueca.arena.leaderboard import leaderboard
    from sueca.arena.league.view import LeagueView
    from sueca.arena.match_job import play_and_record
    from sueca.arena.store import Store, connect
    monkeypatch.setattr(metrics, "_labels", None)
    arena = _referee_arena("reckless", monkeypatch)
    try:
        store = Store(connect(arena.redis_url), Keys())
        turns0 = _sample("sueca_bot_turn_seconds_count", bot="target")
        seats = ["target", "house:random", "target", "house:random"]
        renuncias = 0
        for i in range(3):
            store.create_match(f"e{i}", {"bots": seats, "seed": str(i)})
            assert play_and_record(store, f"e{i}")["status"] == "recorded"
            entry, replay = store.result_of(f"e{i}"), store.replay(f"e{i}")
            renuncias += _renuncias(replay, seats, "target")
            for st in entry["stats"]:  # every answered turn timed (an early renúncia may
                assert st.get("turns", 0) >= st["moves"], entry  # leave a seat none)
                if st["moves"]:
                    assert 0 < st["p50_ms"] <= st["p99_ms"] <= st["max_ms"] < 5000
                    assert sum(st["hist"]) == st["turns"]
        assert renuncias >= 1
        h = _health(store, ["target"])["target"]
        assert h["faults"] == {"renuncia": renuncias, "timeout": 0, "disconnect": 0,
                              "bot_error": 0}
        assert h["games"] == 3 and h["turns"] >= h["moves"] > 0
        assert 0 < h["p50_ms"] <= h["p99_ms"] <= h["max_ms"]
        assert _sample("sueca_bot_turn_seconds_count", bot="target") - turns0 == h["turns"]
        assert store.bots.exists("target")  # PrivateArena's
        row = next(r for r in leaderboard(store) if r["bot"] == "target")
        assert row["faults"]["renuncia"] == renuncias and row["p50_ms"] == h["p50_ms"]
        # the terminal's table shows them too (renúncias/timeouts/disconnects, p50)
        import io

        from rich.console import Console

        from sueca.arena.cli.leaderboard import print_leaderboard
        out = io.StringIO()
        print_leaderboard(leaderboard(store), Console(file=out, width=200))
        line = next(x for x in out.getvalue().splitlines() if " target" in x)
        p50 = h["p50_ms"]  # three significant figures, in µs below 0.1 ms
        shown = (f"{p50:#.3g}".rstrip(".") + " ms" if p50 >= 0.1
                 else f"{p50 * 1000:#.3g}".rstrip(".") + " µs")
        assert f"{renuncias}/0/0" in line and shown in line, (shown, line)
        view = LeagueView(store)
        web = next(r for r in view.leaderboard() if r["bot"] == "target")
        assert web["faults"]["renuncia"] == renuncias
        wait_for(lambda: view.bot("target")["connected"], 20,  # the referee's heartbeat says so
                 "the target bot shown connected", interval=0.2,
                 detail=lambda: f"{store.referees()} {store.bots_on(store.referees())}")
        page = view.bot("target")
        assert page["faults"]["renuncia"] == renuncias and page["p99_ms"] == h["p99_ms"]
        assert page["connected"] == [{"referee": arena.address, "free": 2, "sessions": 1}]
    finally:
        arena.stop()


def test_timeouts_are_counted_per_bot(monkeypatch, tmp_path: Path) -> None:
    from sueca.arena.keys import Keys
    from sueca.arena.match_job import play_and_record
    from sueca.arena.store import Store, connect
    (tmp_path / "sleepy.py").write_text(SLEEPY)
    arena = _referee_arena(str(tmp_path / "sleepy.py") + ":Sleepy", monkeypatch)
    try:
        store = Store(connect(arena.redis_url), Keys())
        before = _sample("sueca_bot_faults_total", bot="target", kind="timeout")
        seats = ["target", "house:random", "house:random", "house:random"]
        store.create_match("t1", {"bots": seats, "seed": "1", "move_ms": 50, "bank_ms": 50})
        out = play_and_record(store, "t1")
        assert out["end"] == "timeout", out
        entry = store.result_of("t1")
        assert entry["fault_bot"] == "target" and entry["stats"][0]["timeouts"] == 1
        assert [s.get("timeouts", 0) for s in entry["stats"][1:]] == [0, 0, 0]
        h = _health(store, ["target", "house:random"])
        assert h["target"]["faults"]["timeout"] == 1 and h["house:random"]["faults"]["timeout"] == 0
        assert _sample("sueca_bot_faults_total", bot="target", kind="timeout") == before + 1
    finally:
        arena.stop()
