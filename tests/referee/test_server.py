"""The referee over the network: real referee process, real SDK bot processes."""

from __future__ import annotations

import signal
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from kits.net import BOTLIB, SEED_KEY, RawBot, RefereeProc, free_of, rpc_error, sessions_of, wait_for

from sueca.engine import Variant, replay, shuffled_deck
from sueca.referee import control
from sueca.sdk.bots import RandomBot
from sueca.sdk.local import play_local
from sueca.v1 import sueca_pb2 as pb
from sueca.v1 import sueca_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow

AB = ["alice", "bob", "alice", "bob"]


def test_full_match(referee, random_bots):
    result = control.run_match(referee.address, {"bots": AB, "seed": 1, "match_id": "full-1"})
    assert result["match_id"] == "full-1"
    assert result["end"] == "normal"
    assert result["winner"] in (0, 1)
    assert result["game_points"][result["winner"]] >= 4
    assert result["fault_seat"] is None and result["fault_bot"] is None
    rec = result["replay"]
    assert rec["format"] == "sueca-replay/1" and rec["seats"] == AB
    assert replay.verify(rec) == []
    assert rec["winner"] == result["winner"] and rec["end"] == "normal"
    # the seats are released: every game of capacity is free again
    wait_for(lambda: free_of(referee.address, "alice") == 32, 5, "capacity back")


def test_quiet_and_full_run_match_streams(referee, random_bots):
    """A quiet RunMatch (what schedulers send) streams started, the deal ends and the result:
    no deal starts, cards or tricks, each a gRPC write per match on the referee and the
    caller. Without quiet, every public event comes, a deal start before each deal."""
    quiet: list[dict] = []
    full: list[dict] = []
    spec = {"bots": AB, "seed": 5}
    control.run_match(referee.address, {**spec, "quiet": True}, on_event=quiet.append)
    result = control.run_match(referee.address, spec, on_event=full.append)
    deals = len(result["replay"]["deals"])
    kinds = [e["type"] for e in quiet]
    assert kinds == ["started"] + ["deal_end"] * deals + ["result"]
    full_kinds = [e["type"] for e in full]
    assert full_kinds.count("deal_start") == full_kinds.count("deal_end") == deals
    assert full_kinds.count("card") == sum(len(t["cards"]) for d in result["replay"]["deals"]
                                           for t in d["tricks"])


def test_shared_channel_and_async_run_match(referee, random_bots):
    """A scheduler's ways to run matches: several on one shared channel, or from an event loop;
    both give the same record as a match on its own connection."""
    import asyncio

    spec = {"bots": AB, "seed": 5}
    alone = control.run_match(referee.address, {**spec, "match_id": "chan-0"})
    with control.channel(referee.address) as channel:
        with ThreadPoolExecutor(3) as pool:
            shared = list(pool.map(
                lambda k: control.run_match(referee.address, {**spec, "match_id": f"chan-{k}"},
                                            channel=channel), (1, 2, 3)))

    async def in_loop() -> dict:
        async with grpc.aio.insecure_channel(referee.address) as aio_channel:
            return await control.run_match_async(aio_channel, referee.address,
                                                 {**spec, "match_id": "chan-4"})

    for result in [*shared, asyncio.run(in_loop())]:
        assert result["end"] == "normal"
        assert (result["game_points"], result["winner"]) == (alone["game_points"],
                                                              alone["winner"])
        assert replay.verify(result["replay"]) == []
    with pytest.raises(control.BadSpec):
        asyncio.run(_async_bad_spec(referee.address))


async def _async_bad_spec(address: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        await control.run_match_async(channel, address, {"bots": ["alice"], "seed": 1})


def test_many_games_over_one_stream(referee, random_bots):
    """12 matches at once: alice plays 24 seats, all over her single stream."""
    specs = [{"bots": AB, "seed": 100 + i, "match_id": f"many-{i}"} for i in range(12)]
    with ThreadPoolExecutor(12) as pool:
        results = list(pool.map(lambda s: control.run_match(referee.address, s, 60), specs))
    assert [r["end"] for r in results] == ["normal"] * 12
    assert {r["match_id"] for r in results} == {s["match_id"] for s in specs}
    assert sessions_of(referee.address, "alice") == 1
    assert sessions_of(referee.address, "bob") == 1


@pytest.mark.parametrize("seed", [2024, "duplicate-pair-7"])
def test_same_seed_same_replay_in_process_and_over_network(referee, random_bots, seed):
    mid = f"same-{seed}"
    local = replay.record(play_local([RandomBot] * 4, seed=seed, match_id=mid, seat_names=AB,
                                     seed_key=SEED_KEY.encode()), mid, AB)
    remote = control.run_match(referee.address, {"bots": AB, "seed": seed, "match_id": mid})
    assert remote["replay"] == local


def test_explicit_decks_and_duplicate_seating(referee, random_bots):
    import random
    decks = [[str(c) for c in shuffled_deck(random.Random(k))] for k in range(12)]
    first = control.run_match(referee.address, {
        "bots": AB, "decks": decks, "first_dealer": 3, "seed": 5, "match_id": "dup-a"})
    second = control.run_match(referee.address, {
        "bots": ["bob", "alice", "bob", "alice"], "decks": decks, "first_dealer": 3, "seed": 5,
        "match_id": "dup-b"})
    for res in (first, second):
        deals = res["replay"]["deals"]
        assert deals[0]["dealer"] == 3
        assert [d["deck"] for d in deals] == decks[:len(deals)]
    # the same seat gets the same cards whichever bot sits there
    assert first["replay"]["deals"][0]["hands"] == second["replay"]["deals"][0]["hands"]


def test_variant_travels(referee, random_bots):
    result = control.run_match(referee.address, {
        "bots": AB, "seed": 9, "variant": "target=8 tie=double trump_card=first"})
    rec = result["replay"]
    assert rec["variant"] == Variant(target=8, tie="double", trump_card="first").to_dict()
    assert max(rec["game_points"]) >= 8
    assert replay.verify(rec) == []


def test_run_match_errors_name_the_problem(referee, random_bots, tokens, bot_proc):
    addr = referee.address
    with pytest.raises(control.BotUnavailable) as err:
        control.run_match(addr, {"bots": ["alice", "nobody-such", "alice", "bob"]})
    assert err.value.code() == grpc.StatusCode.NOT_FOUND and "'nobody-such'" in str(err.value)
    with pytest.raises(control.BotUnavailable) as err:
        control.run_match(addr, {"bots": ["alice", "ghost", "alice", "bob"]})
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "'ghost'" in str(err.value) and "not connected" in str(err.value)
    # the client refuses a bad variant itself; the server does too (raw stub)
    with pytest.raises(control.BadSpec, match="'triple'"):
        control.run_match(addr, {"bots": AB, "variant": {"tie": "triple"}})
    with grpc.insecure_channel(addr) as ch:
        stub = pb_grpc.MatchServiceStub(ch)
        e = rpc_error(lambda: list(stub.RunMatch(pb.MatchSpec(
            bots=AB, variant=pb.Variant(tie="triple")), timeout=10)))
        assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "'triple'" in e.details()
        e = rpc_error(lambda: list(stub.RunMatch(pb.MatchSpec(bots=AB[:3]), timeout=10)))
        assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "4 bots" in e.details()
        e = rpc_error(lambda: list(stub.RunMatch(pb.MatchSpec(
            bots=AB, decks=[pb.Deck(cards=list(range(39)) + [0])]), timeout=10)))
        assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "deck 0" in e.details()
        # a caller's long text is quoted cut, never whole (a status message over ~8 KB fails
        # in the client as a metadata error instead of saying what was wrong)
        e = rpc_error(lambda: list(stub.RunMatch(pb.MatchSpec(bots=["x" * 50] * 1000),
                                                 timeout=10)))
        assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "names 1000" in e.details()
        assert len(e.details()) < 500, len(e.details())
        e = rpc_error(lambda: list(stub.RunMatch(pb.MatchSpec(bots=["alice", "g" * 20_000,
                                                                    "alice", "bob"]),
                                                 timeout=10)))
        assert "(20000 long)" in e.details() and len(e.details()) < 300, e.details()
        e = rpc_error(lambda: list(stub.RunMatch(pb.MatchSpec(bots=AB, match_id="m" * 20_000),
                                                 timeout=10)))
        assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "(20000 long)" in e.details() and len(e.details()) < 300, e.details()
    # capacity: carol plays one game at a time, this match needs two of hers
    bot_proc("random", addr, tokens["carol"], capacity=1)
    with pytest.raises(control.BotUnavailable) as err:
        control.run_match(addr, {"bots": ["carol", "bob", "carol", "bob"]})
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "'carol'" in str(err.value)
    assert control.run_match(addr, {"bots": ["carol", "bob", "alice", "bob"]})["end"] == "normal"


def test_watch_shows_public_play_only(referee, random_bots, tokens):
    """A spectator sees every card as played and the result, never a hand or the replay."""
    spy = RawBot(referee.address, "spy", tokens["spy"])
    wait_for(lambda: sessions_of(referee.address, "spy") == 1, 10, "raw bot")
    with ThreadPoolExecutor(2) as pool:
        fut = pool.submit(control.run_match, referee.address,
                          {"bots": ["spy", "alice", "bob", "alice"], "seed": 3,
                           "match_id": "watched"})
        turn = spy.next_turn()  # the match is running, waiting for the spy
        seen = []
        watching = threading.Event()

        def spectate():
            for ev in control.watch(referee.address, "watched", timeout=60):
                seen.append(ev)
                watching.set()

        watcher = pool.submit(spectate)
        assert watching.wait(10)
        spy.play(turn)
        while not fut.done():
            try:
                spy.play(spy.next_turn(timeout=0.2))
            except TimeoutError:
                continue
        result = fut.result(30)
        watcher.result(30)
    spy.close()
    kinds = [e["type"] for e in seen]
    assert kinds[0] == "started" and kinds[-1] == "result"
    assert "deal_start" in kinds and "card" in kinds and "trick_end" in kinds
    assert seen[-1]["replay"] is None and seen[-1]["end"] == result["end"]
    for e in seen:
        assert not ({"hands", "hand", "deck", "replay_json"} & set(e)), e
    # the cards seen are the replay's cards, in order, from where the spectator joined
    played = [c for d in result["replay"]["deals"] for t in d["tricks"] for c in t["cards"]]
    watched = [e["card"] for e in seen if e["type"] == "card"]
    assert watched and played[-len(watched):] == watched


def test_weak_hand_redeal_over_the_network(referee, tokens, bot_proc):
    """The redeal question travels (TurnRequest kind REDEAL, Action redeal) and the match is
    the same as in-process."""
    bot_proc(f"{BOTLIB}:Redealer", referee.address, tokens["carol"], capacity=4)
    from kits.bots.network import Redealer
    variant = Variant(weak_hand_redeal=True)
    seats = ["carol"] * 4
    local = replay.record(play_local([Redealer] * 4, variant=variant, seed=16, match_id="redeal",
                                     seed_key=SEED_KEY.encode(),
                                     seat_names=seats), "redeal", seats)
    remote = control.run_match(referee.address, {"bots": seats, "seed": 16, "match_id": "redeal",
                                                 "variant": {"weak_hand_redeal": True}})
    assert "redeal" in [d["end"] for d in remote["replay"]["deals"]]
    assert remote["replay"] == local


def test_referee_publishes_its_bots_in_redis(referee, random_bots, redis_url):
    import redis
    from kits.net import KEY_PREFIX

    from sueca.arena.keys import Keys
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    keys = Keys(KEY_PREFIX)
    wait_for(lambda: referee.address in r.zrange(keys.referees(), 0, -1), 10, "heartbeat")
    free = wait_for(lambda: r.hgetall(keys.referee_bots(referee.address)), 10, "bot list")
    assert int(free["alice"]) >= 1 and int(free["bob"]) >= 1
    assert 0 < r.ttl(keys.referee_bots(referee.address)) <= 10


def test_list_bots(referee, random_bots):
    bots = {b["bot"]: b for b in control.list_bots(referee.address)}
    assert bots["alice"]["sessions"] == 1 and bots["alice"]["capacity"] == 32
    assert 0 <= bots["alice"]["free"] <= 32 and bots["alice"]["referee"]


def test_health_and_reflection(referee):
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
    with grpc.insecure_channel(referee.address) as ch:
        for service in ("", "sueca.v1.BotService", "sueca.v1.MatchService"):
            resp = health_pb2_grpc.HealthStub(ch).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=5)
            assert resp.status == health_pb2.HealthCheckResponse.SERVING
        stub = reflection_pb2_grpc.ServerReflectionStub(ch)
        answers = stub.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5)
        names = {s.name for a in answers for s in a.list_services_response.service}
    assert {"sueca.v1.BotService", "sueca.v1.MatchService", "grpc.health.v1.Health"} <= names


def test_metrics_endpoint(referee, random_bots):
    from prometheus_client.parser import text_string_to_metric_families
    control.run_match(referee.address, {"bots": AB, "seed": 77})
    text = urllib.request.urlopen(
        f"http://127.0.0.1:{referee.metrics_port}/metrics", timeout=5).read().decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for name in ("sueca_referee_sessions", "sueca_referee_active_matches",
                 "sueca_referee_moves", "sueca_referee_move_rtt_seconds",
                 "sueca_referee_faults", "sueca_referee_matches"):
        assert name in families, name
    samples = {s.name: s for f in families.values() for s in f.samples}
    assert samples["sueca_referee_moves_total"].value >= 40
    assert samples["sueca_referee_sessions"].value >= 2
    ends = {s.labels["end"]: s.value for s in families["sueca_referee_matches"].samples
            if s.name == "sueca_referee_matches_total"}
    assert ends.get("normal", 0) >= 1


def test_graceful_shutdown(redis_url, tokens, tmp_path, bot_proc):
    """SIGTERM: no new matches; a match that finishes within the bound is a result; the match
    still running when the bound is over ends as aborted, never as a result."""
    ref = RefereeProc(redis_url, drain_seconds=3, log_path=tmp_path / "referee.log")
    try:
        bot_proc("random", ref.address, tokens["carol"], capacity=8)
        quick = RawBot(ref.address, "eve", tokens["eve"])
        stuck = RawBot(ref.address, "mallory", tokens["mallory"])
        wait_for(lambda: sessions_of(ref.address, "mallory") == 1, 10, "raw bots")
        wait_for(lambda: sessions_of(ref.address, "eve") == 1, 10, "raw bots")
        with ThreadPoolExecutor(2) as pool:
            finishing = pool.submit(control.run_match, ref.address, {
                "bots": ["eve", "carol", "carol", "carol"], "seed": 1, "move_ms": 60000})
            aborted = pool.submit(control.run_match, ref.address, {
                "bots": ["mallory", "carol", "carol", "carol"], "seed": 2, "move_ms": 60000})
            turn = quick.next_turn()
            stuck.next_turn()  # mallory never answers: only the drain bound can end it
            t0 = time.monotonic()
            ref.proc.send_signal(signal.SIGTERM)
            wait_for(lambda: _refuses_new_matches(ref.address), 5, "refusal of new matches")
            while not finishing.done():  # eve plays her match to the end during the drain
                quick.play(turn)
                try:
                    turn = quick.next_turn(timeout=5)
                except (TimeoutError, AssertionError):
                    break
            assert finishing.result(10)["end"] == "normal"
            with pytest.raises(control.MatchAborted) as err:
                aborted.result(30)
            assert 2.5 < time.monotonic() - t0 < 15
        res = err.value.result
        assert res["end"] == "aborted" and res["winner"] is None
        assert res["replay"]["end"] == "aborted"
        assert ref.proc.wait(20) == 0
        assert "aborting 1 match(es)" in ref.logs()
    finally:
        ref.stop()


def _refuses_new_matches(address: str) -> bool:
    try:
        control.run_match(address, {"bots": ["carol", "carol", "carol", "carol"]}, timeout=5)
    except control.RefereeUnavailable as err:
        return "shutting down" in str(err)
    return False


def test_a_second_referee_on_a_taken_port_is_refused(referee) -> None:
    """gRPC would share the port (SO_REUSEPORT) and split the bots between two referees."""
    import subprocess

    from kits.net import BIN

    proc = subprocess.run(
        [str(BIN / "sueca-arena"), "referee", "--insecure", "--port", str(referee.port),
         "--metrics-port", "0"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert f"cannot start the referee on 127.0.0.1:{referee.port}" in proc.stderr
    assert "Traceback" not in proc.stderr
