"""The SDK client: light import, wire observations equal to the engine's, and real `sueca-bot`
processes against a real referee (async bots, hooks, reconnect, drain, bad token, several
referees, a broken bot, a killed bot)."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from kits.net import BIN, BOTLIB, ROOT, BotProc, RefereeProc, free_of, sessions_of, wait_for

from sueca import codec as conv
from sueca.engine import Card, Match, SeatView, Trick, Variant
from sueca.engine.observation import OBSERVATION_FIELDS
from sueca.referee import control
from sueca.sdk import net_observation as wire
from sueca.sdk.client import resolve

POOL = ThreadPoolExecutor(4)


# -- no server needed ----------------------------------------------------------------------------

def test_sdk_import_does_not_pull_in_the_league():
    code = ("import sys, sueca.sdk, sueca.sdk.client, sueca.sdk.net_observation, sueca.sdk.cli, sueca.sdk.bots\n"
            "bad = [m for m in ('celery', 'redis', 'prometheus_client', 'kombu') "
            "if m in sys.modules]\n"
            "print('LOADED', bad)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "LOADED []" in out.stdout


@pytest.mark.parametrize("variant", [Variant(), Variant(trump_card="first", tie="double")])
def test_wire_observation_is_the_engine_observation(variant):
    rng = random.Random(3)
    for seed in range(4):
        match = Match(variant, seed=seed)
        checked = 0
        while match.end is None and checked < 60:
            seat = match.deal.turn
            for s in range(4):
                mine = SeatView(match, s)
                msg = conv.observation(match, s)
                theirs = wire.Observation(type(msg).FromString(msg.SerializeToString()), variant)
                for name in (*OBSERVATION_FIELDS, "team"):
                    assert getattr(theirs, name) == getattr(mine, name), name
                assert all(type(c) is Card for c in theirs.hand + theirs.legal)
                assert type(theirs.trump) is Card
                assert all(type(t) is Trick and all(type(c) is Card for c in t.cards)
                           for t in theirs.tricks)
                assert all(type(c) is Card for _, c in theirs.trick)
                assert theirs.snapshot() == mine.snapshot()
            match.play(rng.choice(SeatView(match, seat).legal))
            checked += 1


def test_resolve_addresses():
    assert resolve("127.0.0.1:1,localhost:2, [::1]:3") == ["127.0.0.1:1", "localhost:2", "[::1]:3"]
    assert resolve("a.invalid:5") == ["a.invalid:5"]  # not resolvable now: kept, retried later
    assert resolve("dns:///127.0.0.1:1, dns:localhost:2") == ["127.0.0.1:1", "localhost:2"]
    with pytest.raises(ValueError, match="DNS authority"):
        resolve("dns://8.8.8.8/referee:50051")


def test_the_name_a_certificate_is_checked_against_ignores_the_dns_prefix():
    """With TLS, an address a name resolved to is checked against that name: never against
    'dns:///name', and never for an IP literal or localhost (their own names are dialled)."""
    from sueca.sdk.addresses import dns_name as _dns_name
    assert _dns_name("dns:///referee.example:50051") == "referee.example"
    assert _dns_name("dns:referee.example:50051") == "referee.example"
    assert _dns_name("referee.example:50051") == "referee.example"
    for item in ("dns:///127.0.0.1:1", "dns:///localhost:2", "[::1]:3"):
        assert _dns_name(item) is None, item
    with pytest.raises(ValueError, match="host:port"):
        resolve("nohost")


def test_a_new_stream_forgets_the_answers_and_turns_of_the_old_one():
    """After a reconnect the referee re-sends each open turn: an answer queued, or computed
    later, for the old stream is dropped, and so is an old turn still waiting in a game's
    backlog (its events stay: the bot's hooks must see them). The end-to-end race is the
    conformance kit's reconnect check (tests/arena/conformance/test_conformance.py)."""
    from sueca.sdk.client import Connection, Game
    from sueca.v1 import sueca_pb2 as pb
    conn = Connection(None, "127.0.0.1:1")  # type: ignore[arg-type]  (no client needed)
    game = Game("g1", object(), Variant())
    conn.games["g1"] = game
    trick = ("trick", pb.Trick())
    game.backlog = [trick, pb.TurnRequest(game_id="g1", request_id=5)]
    conn.call = object()  # a live stream
    old = conn.stream
    conn.send([b"queued"], old)
    conn._new_stream()
    assert conn.outbox == [] and game.backlog == [trick]
    conn.send([b"computed late"], old)
    assert conn.outbox == []
    conn.send([b"answer"], conn.stream)
    assert conn.outbox == [b"answer"]


# -- real processes ------------------------------------------------------------------------------

def test_async_bot_and_hooks_over_the_network(referee, tokens, bot_proc):
    bot_proc(f"{BOTLIB}:AsyncRandom", referee.address, tokens["async"], capacity=8)
    hooks = bot_proc(f"{BOTLIB}:HookCheck", referee.address, tokens["carol"], capacity=8)
    bots = ["async", "carol", "async", "carol"]
    results = list(POOL.map(lambda k: control.run_match(
        referee.address, {"bots": bots, "seed": k, "match_id": f"async-{k}"}), range(4)))
    assert [r["end"] for r in results] == ["normal"] * 4
    wait_for(lambda: hooks.logs().count("HOOKCHECK match end") == 8, 5, "match end hooks")
    assert "Traceback" not in hooks.logs()
    # over the network a bot's match id is its seat's opaque game id: one per seat, and
    # nothing that names the match or pairs carol's two seats of one match
    # (pool threads print concurrently: a message is one write, its newline another)
    ids = re.findall(r"HOOKCHECK match end (\S+)", hooks.logs())
    assert len(set(ids)) == 8 and not any("async" in i for i in ids), ids


def test_bad_token_exits_with_a_readable_error(referee):
    out = subprocess.run([str(BIN / "sueca-bot"), "run", "random", "--server", referee.address,
                          "--token", "alice.not-the-token"], capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    assert out.returncode == 2
    assert "refused bot 'alice'" in out.stderr and "wrong token" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_name_that_is_not_the_tokens_is_refused_before_connecting() -> None:
    """``--name bob`` with alice's token: said at once, naming only what was typed."""
    out = subprocess.run([str(BIN / "sueca-bot"), "run", "random", "--server", "127.0.0.1:1",
                          "--name", "bob"], capture_output=True, text=True, timeout=60,
                         cwd=ROOT, env={**os.environ, "SUECA_TOKEN": "alice.s3cret"})
    assert out.returncode == 2, out.stderr
    assert ("--name 'bob' does not match the token, which was issued to bot 'alice'"
            in out.stderr) and "s3cret" not in out.stderr and "Traceback" not in out.stderr


def test_broken_bot_is_logged_and_resigns_its_match(referee, tokens, bot_proc):
    broken = bot_proc(f"{BOTLIB}:Raiser", referee.address, tokens["broken"], capacity=2)
    bot_proc("random", referee.address, tokens["dave"], capacity=4)
    result = control.run_match(referee.address, {
        "bots": ["dave", "broken", "dave", "broken"], "seed": 1, "move_ms": 200, "bank_ms": 100})
    assert result["end"] == "bot_error" and result["fault_bot"] == "broken"
    assert result["winner"] == 0
    assert result["fault_detail"] == "RuntimeError: boom: this bot is broken on purpose"
    wait_for(lambda: "raised in play" in broken.logs(), 5, "the log line")
    assert "Traceback" in broken.logs() and "resigning the game" in broken.logs()


def test_a_bot_reads_its_turn_clock_over_the_network_and_none_in_self_play(
        referee, tokens, bot_proc):
    reader = bot_proc(f"{BOTLIB}:ClockReader", referee.address, tokens["broken"], capacity=2)
    bot_proc("random", referee.address, tokens["dave"], capacity=4)
    result = control.run_match(referee.address, {
        "bots": ["dave", "broken", "dave", "broken"], "seed": 3, "move_ms": 700,
        "bank_ms": 1300})
    assert result["end"] == "normal"
    wait_for(lambda: "clock move_s" in reader.logs(), 5, "the log line")
    line = next(x for x in reader.logs().splitlines() if "clock move_s" in x)
    assert "move_s=0.7 bank_s=1.3 " in line, line
    left = float(line.rsplit("left=", 1)[1].split()[0])
    assert 1.0 < left <= 2.0, line  # counted from the turn's arrival: some of it is gone
    from sueca.sdk import Bot
    from sueca.sdk.local import play_local
    seen: list[object] = []

    class Looks(Bot):
        def play(self, obs):
            seen.append(self.clock)
            return obs.legal[0]

    play_local([Looks, Looks, Looks, Looks], Variant(), 1, "m", ["a", "b", "c", "d"])
    assert seen and set(seen) == {None}


def test_a_card_not_held_resigns_the_game_quoting_it(referee, tokens, bot_proc):
    """A bot returning a card it does not hold would be refused by the referee, its turn kept
    open until its clock ran out; the SDK checks the answer against the observation first and
    resigns, so the match ends at once as bot_error with the card quoted (the bot's log says
    so too). The clock is long: a timeout here would take 30 s and fail the end's check."""
    wrong = bot_proc(f"{BOTLIB}:NotHeld", referee.address, tokens["broken"], capacity=2)
    bot_proc("random", referee.address, tokens["dave"], capacity=4)
    t0 = time.monotonic()
    result = control.run_match(referee.address, {
        "bots": ["dave", "broken", "dave", "broken"], "seed": 2, "move_ms": 20000,
        "bank_ms": 10000})
    assert result["end"] == "bot_error" and result["fault_bot"] == "broken", result
    assert time.monotonic() - t0 < 15
    detail = result["fault_detail"]
    assert re.fullmatch(r"play returned \w{2,3}, which is not in its hand", detail), detail
    wait_for(lambda: detail in wrong.logs(), 5, "the log line")
    assert "resigning game" in wrong.logs(), wrong.logs()
    assert "turn stays open" not in wrong.logs()


def test_reconnects_with_backoff_until_the_referee_is_up(redis_url, tokens, tmp_path):
    from sueca.arena.redisproc import free_port
    port = free_port()
    bot = BotProc("random", f"127.0.0.1:{port}", tokens["eve"], capacity=4,
                  log_path=tmp_path / "eve.log")
    ref = None
    try:
        wait_for(lambda: bot.logs().count("retrying in") >= 2, 20, "a few failed attempts")
        assert bot.proc.poll() is None
        ref = RefereeProc(redis_url, port=port, log_path=tmp_path / "referee.log")
        wait_for(lambda: sessions_of(ref.address, "eve") == 1, 10, "the bot to reconnect")
        assert "retrying in" in bot.logs()
        result = control.run_match(ref.address, {"bots": ["eve"] * 4, "seed": 3})
        assert result["end"] == "normal"
        # the referee restarts: the bot comes back on its own
        ref.stop()
        ref = RefereeProc(redis_url, port=port, log_path=tmp_path / "referee2.log")
        wait_for(lambda: sessions_of(ref.address, "eve") == 1, 10, "the bot to reconnect")
    finally:
        assert bot.stop() == 0
        if ref is not None:
            ref.stop()


def test_sigterm_drains_running_games(referee, tokens, bot_proc):
    drainer = bot_proc(f"{BOTLIB}:Slow", referee.address, tokens["drainer"], capacity=4,
                       env={"SUECA_TEST_DELAY": "0.01"})
    fut = POOL.submit(control.run_match, referee.address,
                      {"bots": ["drainer"] * 4, "seed": 4, "match_id": "drained"})
    wait_for(lambda: free_of(referee.address, "drainer") == 0, 10, "the match to start")
    drainer.proc.send_signal(signal.SIGTERM)
    wait_for(lambda: "draining" in drainer.logs(), 5, "drain")
    # while draining, the bot takes no new game
    with pytest.raises(control.BotUnavailable):
        control.run_match(referee.address, {"bots": ["drainer"] * 4})
    result = fut.result(60)
    assert result["end"] == "normal", (result, drainer.logs())
    assert drainer.proc.wait(20) == 0
    assert sessions_of(referee.address, "drainer") == 0


def test_one_process_serves_several_referees(redis_url, referee, tokens, bot_proc, tmp_path):
    other = RefereeProc(redis_url, log_path=tmp_path / "other.log")
    try:
        bot_proc("random", f"{referee.address},{other.address}", tokens["dave"], capacity=8,
                 wait=False)
        for addr in (referee.address, other.address):
            wait_for(lambda a=addr: sessions_of(a, "dave") == 1, 15, f"a session on {addr}")
        for addr in (referee.address, other.address):
            assert control.run_match(addr, {"bots": ["dave"] * 4, "seed": 8})["end"] == "normal"
    finally:
        other.stop()


def test_killed_bot_process_ends_its_match_as_disconnect(referee, tokens, bot_proc):
    bot_proc("random", referee.address, tokens["dave"], capacity=4)
    sleepy = bot_proc(f"{BOTLIB}:Slow", referee.address, tokens["sleepy"], capacity=1,
                      env={"SUECA_TEST_DELAY": "0.05"})
    fut = POOL.submit(control.run_match, referee.address, {
        "bots": ["dave", "sleepy", "dave", "dave"], "seed": 5, "grace_ms": 300,
        "move_ms": 5000})
    wait_for(lambda: free_of(referee.address, "sleepy") == 0, 10, "the match to start")
    time.sleep(0.2)  # on purpose: a few moves in (they show nowhere to poll)
    sleepy.proc.kill()
    result = fut.result(20)
    assert result["end"] == "disconnect"
    assert (result["fault_seat"], result["fault_bot"], result["winner"]) == (1, "sleepy", 0)
