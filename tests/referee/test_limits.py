"""Each per-bot limit of the referee, attacked from outside: a real referee process (small
limits set by flag), real Redis, raw gRPC clients that misbehave on the wire."""

from __future__ import annotations

import os
import queue
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest
from kits.net import RawBot, RefereeProc, sessions_of, wait_for

from sueca.arena.bench.hostile import _bogus, _hello, _stream
from sueca.arena.promscrape import metrics_url, scrape, total
from sueca.referee import control
from sueca.v1 import sueca_pb2 as pb

pytestmark = pytest.mark.slow
POOL = ThreadPoolExecutor(4)


def metric(ref: RefereeProc, name: str, **labels: str) -> float:
    """The sum of a referee metric's samples whose labels include ``labels``."""
    return total(scrape(metrics_url(ref.metrics_port)), name, labels)


def rss_mb(ref: RefereeProc) -> float:
    with open(f"/proc/{ref.proc.pid}/status") as f:
        line = next(x for x in f if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def status_of(call: Any, timeout: float = 15.0) -> grpc.RpcError:
    """Read a raw stream to its end (what was buffered, then the status)."""
    deadline = time.monotonic() + timeout
    try:
        for _ in call:
            if time.monotonic() > deadline:
                raise AssertionError("the stream did not end")
    except grpc.RpcError as err:
        return err
    raise AssertionError("the stream ended without an error status")


@pytest.fixture
def make_referee(redis_url: str, tmp_path: Path) -> Iterator[Callable[..., RefereeProc]]:
    started: list[RefereeProc] = []

    def make(*flags: str) -> RefereeProc:
        ref = RefereeProc(redis_url, log_path=tmp_path / f"referee-{len(started)}.log",
                          extra=flags)
        started.append(ref)
        return ref

    yield make
    for ref in started:
        ref.stop()


@pytest.fixture(scope="module")
def limited(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RefereeProc]:
    """One referee with small limits for the tests that do not need their own."""
    log = tmp_path_factory.mktemp("limited") / "referee.log"
    ref = RefereeProc(redis_url, log_path=log, extra=[
        "--errors-per-message", "4", "--errors-per-second", "20", "--messages-per-second", "100",
        "--hello-seconds", "1", "--streams-per-connection", "3",
        "--connections-per-address", "50", "--sessions-per-bot", "2"])
    yield ref
    ref.stop()


def start_match(address: str, bots: list[str], **spec: Any) -> Future:
    return POOL.submit(control.run_match, address, {"bots": bots, **spec}, 60)


# -- what is queued towards a bot ----------------------------------------------------------------

def test_a_bot_that_floods_and_never_reads_is_cut_off_and_its_games_follow_grace(
        make_referee, tokens, bot_proc):
    """The attack: faults in, answers never read. Unlimited, the referee would queue ~62x what
    it is sent; the stream ends RESOURCE_EXHAUSTED at --out-bytes instead, the referee's
    memory stays flat, and the bot's match ends as a disconnect after its grace."""
    ref = make_referee("--out-bytes", "200000", "--errors-per-second", "0",
                       "--errors-per-message", "0", "--actions-per-second", "0",
                       "--messages-per-second", "0")
    for name in ("alice", "bob"):
        bot_proc("random", ref.address, tokens[name])
    channel, call, out = _stream(ref.address, [_hello("mallory", tokens["mallory"])])
    wait_for(lambda: sessions_of(ref.address, "mallory") == 1, 10, "mallory's session")
    fut = start_match(ref.address, ["mallory", "alice", "bob", "alice"], seed=3,
                      grace_ms=1500, move_ms=20_000, bank_ms=0)
    wait_for(lambda: metric(ref, "sueca_referee_active_matches") == 1, 20, "mallory's match to start",
             interval=0.1)
    rss_before = rss_mb(ref)
    flood = _bogus(300)  # 300 faults per message, each answered with an ActionError
    sent = 0
    deadline = time.monotonic() + 20
    while sessions_of(ref.address, "mallory") and time.monotonic() < deadline:
        for _ in range(20):
            if out.qsize() < 4:
                out.put(flood)
                sent += 1
            else:
                time.sleep(0.002)  # pacing the flood to what the stream takes: no event to await
    assert not sessions_of(ref.address, "mallory"), f"still open after {sent} flood messages"
    # the stream ended at the limit; the bot learns why once it reads what was sent before
    err = status_of(call)
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err
    assert "not read" in err.details() and len(err.details()) < 300
    assert rss_mb(ref) - rss_before < 40, (rss_before, rss_mb(ref))
    assert metric(ref, "sueca_referee_limit_hits_total", limit="out_queue") >= 1
    result = fut.result(30)
    assert (result["end"], result["fault_bot"]) == ("disconnect", "mallory"), result
    out.put(None)
    channel.close()
    assert "Traceback" not in ref.logs()


# -- errors answered -----------------------------------------------------------------------------

def test_errors_are_answered_at_most_per_message_and_per_second(limited, tokens):
    bot = RawBot(limited.address, "eve", tokens["eve"])
    assert bot.next_message().HasField("welcome")
    hits = metric(limited, "sueca_referee_limit_hits_total", limit="errors")
    bot.send(_bogus(16))  # as many as a stream without games may send (ANSWER_SLACK)
    first = bot.expect(lambda m: m.errors, 10, "errors")
    assert len(first.errors) == 4  # --errors-per-message 4, the other 12 only counted
    assert "no-such-game-0" in first.errors[0].message
    # 60 messages of 4 faults at once: the bucket (20 a second, 20 saved) answers about 20
    for _ in range(60):
        bot.send(_bogus(4))
    # every message read: 240 faults, at most ~70 of them answered, the rest counted
    wait_for(lambda: metric(limited, "sueca_referee_limit_hits_total", limit="errors") - hits >= 150,
             20, "the 60 messages' faults counted", interval=0.1)
    answered = 0
    while True:
        try:
            msg = bot.next_message(timeout=0.5)
        except Exception:
            break
        answered += len(msg.errors)
    assert answered <= 20 + 20 * 2.5, answered  # burst + rate x the seconds it took
    assert metric(limited, "sueca_referee_limit_hits_total", limit="errors") - hits >= 150
    bot.cancel()


def test_a_game_id_the_bot_made_up_is_quoted_cut_and_escaped(limited, tokens):
    bot = RawBot(limited.address, "eve", tokens["eve"])
    assert bot.next_message().HasField("welcome")
    gid = "\nFORGED" + "g" * 5000
    bot.send(pb.BotMessage(actions=[pb.Action(game_id=gid, request_id=1, card=1)]))
    err = bot.expect(lambda m: m.errors, 10, "error").errors[0]
    assert len(err.message) < 250 and "5007 long" in err.message and "\n" not in err.message
    assert len(err.game_id) <= 64
    bot.cancel()


def test_a_message_is_read_only_as_far_as_its_games_can_be_answered(limited, tokens):
    """2,000 actions from a stream with no game: one MALFORMED answer quoting the count, and
    only the first 16 are looked at (each costs the loop ~2 us; a 64 KB message of them held it
    ~60 ms, and 32 streams of one bot could keep it busy)."""
    bot = RawBot(limited.address, "eve", tokens["eve"])
    assert bot.next_message().HasField("welcome")
    hits = metric(limited, "sueca_referee_limit_hits_total", limit="errors")
    bot.send(_bogus(2000))
    first = bot.expect(lambda m: m.errors, 10, "errors")
    assert first.errors[0].code == "malformed", first.errors[0]
    assert first.errors[0].message.startswith("2000 actions in one message, more than the 0 "
                                              "game(s) of this stream can answer: only the "
                                              "first 16 were read"), first.errors[0].message
    assert [e.game_id for e in first.errors[1:]] == ["no-such-game-0", "no-such-game-1",
                                                     "no-such-game-2"]  # 4 per message
    assert metric(limited, "sueca_referee_limit_hits_total", limit="errors") - hits == 13
    bot.cancel()


def test_the_streams_of_one_bot_share_one_read_budget(limited, tokens):
    """Two streams of one bot (--sessions-per-bot 2) sending 150 one-fault messages each: with
    --messages-per-second 100 (100 saved) for the bot, not for each stream, the 300 take >= 1.5 s
    (a budget per stream read them in about half a second)."""
    bots = [RawBot(limited.address, "eve", tokens["eve"]) for _ in range(2)]
    for bot in bots:
        assert bot.next_message().HasField("welcome")
    drain = pb.BotMessage(drain=True).SerializeToString()
    t0 = time.monotonic()
    for bot in bots:
        for _ in range(150):
            bot.send(_bogus(1))
        bot.send(drain)
    for bot in bots:
        bot.expect(lambda m: m.HasField("welcome") and m.welcome.capacity == 0, 20, "drain echo")
    took = time.monotonic() - t0
    assert took >= 1.5, took
    for bot in bots:
        bot.cancel()


# -- incoming rate ---------------------------------------------------------------------------------

def test_incoming_messages_are_read_at_most_per_second(limited, tokens):
    """250 one-fault messages at once: with --messages-per-second 100 (100 saved) the referee
    takes them in at that pace (>= 1.5 s), not as fast as they were sent; each still gets its
    error answered within the error budget, and the pause is counted."""
    bot = RawBot(limited.address, "eve", tokens["eve"])
    assert bot.next_message().HasField("welcome")
    throttled = metric(limited, "sueca_referee_limit_hits_total", limit="read_throttle")
    drain = pb.BotMessage(drain=True).SerializeToString()
    t0 = time.monotonic()
    for _ in range(250):
        bot.send(_bogus(1))
    bot.send(drain)  # answered (a welcome with capacity 0) once every message before is read
    bot.expect(lambda m: m.HasField("welcome") and m.welcome.capacity == 0, 20, "drain echo")
    took = time.monotonic() - t0
    assert took >= 1.3, took
    assert metric(limited, "sueca_referee_limit_hits_total", limit="read_throttle") > throttled
    bot.cancel()


def test_an_honest_bot_answering_a_move_per_message_is_never_throttled(make_referee, tokens,
                                                                      bot_proc):
    """A fast bot with one game in flight sends one message per move, far above any fixed
    message rate: answers to turns the referee asked for cost what the referee chose to spend,
    so they never spend the read budget (the default 500/s once cut a tournament's speed by
    40%). Here the budget is 5 messages a second and a whole match still runs unthrottled."""
    ref = make_referee("--messages-per-second", "5", "--actions-per-second", "5")
    for name in ("alice", "bob"):
        bot_proc("random", ref.address, tokens[name], capacity=2)
    throttled = metric(ref, "sueca_referee_limit_hits_total", limit="read_throttle")
    t0 = time.monotonic()
    result = start_match(ref.address, ["alice", "bob", "alice", "bob"], seed=5).result(60)
    took = time.monotonic() - t0
    assert result["end"] == "normal", result
    moves = sum(len(t["cards"]) for d in result["replay"]["deals"] for t in d["tricks"])
    assert moves >= 40
    # at 5 messages a second the match's messages alone would take minutes
    assert took < moves / 5 / 4, (took, moves)
    assert metric(ref, "sueca_referee_limit_hits_total", limit="read_throttle") == throttled


# -- streams, connections, sessions, hello deadline -----------------------------------------------

def test_a_stream_without_hello_is_closed_at_the_hello_deadline(limited):
    """A stream that never says hello costs the referee one second here (--hello-seconds 1;
    5 by default), then ends DEADLINE_EXCEEDED, counted per peer address."""
    before = metric(limited, "sueca_referee_bad_hellos_total", reason="no_hello",
                    peer="ipv4:127.0.0.1")
    channel, call, out = _stream(limited.address, [])
    t0 = time.monotonic()
    err = status_of(call, 10)
    assert err.code() == grpc.StatusCode.DEADLINE_EXCEEDED and "no hello within 1s" in \
        err.details()
    assert 0.8 <= time.monotonic() - t0 < 5
    assert metric(limited, "sueca_referee_bad_hellos_total", reason="no_hello",
                  peer="ipv4:127.0.0.1") == before + 1
    out.put(None)
    channel.close()


def hello_less(channel: grpc.Channel) -> tuple[Any, queue.Queue[bytes | None]]:
    """A Connect stream on ``channel`` that sends nothing until its queue is given bytes (None
    ends it)."""
    out: queue.Queue[bytes | None] = queue.Queue()
    call = channel.stream_stream("/sueca.v1.BotService/Connect",
                                 request_serializer=lambda b: b,
                                 response_deserializer=lambda b: b)(iter(out.get, None))
    return call, out


def own_channel(address: str) -> grpc.Channel:
    """A channel on a connection of its own (gRPC would otherwise share one)."""
    return grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])


def test_streams_per_connection_are_limited(limited):
    channel = own_channel(limited.address)
    held = [hello_less(channel) for _ in range(3)]
    # a sleep: a stream without hello shows nowhere outside the referee, so nothing can be
    # polled; it lets the three be taken in before the fourth
    time.sleep(0.3)
    call, out = hello_less(channel)
    err = status_of(call, 10)  # refused after 4 x --hello-seconds
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "3 bot streams" in err.details()
    # the three held streams were not cut by the limit (only, later, by the hello deadline)
    for c, _ in held:
        assert status_of(c, 5).code() == grpc.StatusCode.DEADLINE_EXCEEDED
    for c, q in [*held, (call, out)]:
        q.put(None)
        c.cancel()
    channel.close()


def test_connections_per_address_are_limited(make_referee):
    ref = make_referee("--connections-per-address", "4", "--hello-seconds", "1.5")
    channels = [own_channel(ref.address) for _ in range(5)]
    held = []
    for ch in channels[:4]:
        held.append(hello_less(ch))
        time.sleep(0.1)  # a sleep: nothing outside shows a hello-less stream taken in, in order
    call, out = hello_less(channels[4])
    err = status_of(call, 10)
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "4 connections from ipv4:127.0.0.1" in err.details()
    assert metric(ref, "sueca_referee_limit_hits_total", limit="connections_per_address") == 1
    for c, q in [*held, (call, out)]:
        q.put(None)
        c.cancel()
    # the count goes down with the streams: a new connection is let in again (a wrong token,
    # but past the connection limit), once the referee saw the others end
    def past_the_limit() -> RawBot | None:
        bot = RawBot(ref.address, "eve", "eve.x")
        assert bot.next_message() is None
        return None if bot.status.code() == grpc.StatusCode.RESOURCE_EXHAUSTED else bot

    again = wait_for(past_the_limit, 20, "a connection let in again", interval=0.1)
    assert again.status.code() == grpc.StatusCode.UNAUTHENTICATED, again.status
    for ch in channels:
        ch.close()


def test_sessions_per_bot_are_limited(limited, tokens):
    bots = [RawBot(limited.address, "carol", tokens["carol"]) for _ in range(2)]
    for b in bots:
        assert b.next_message().HasField("welcome")
    third = RawBot(limited.address, "carol", tokens["carol"])
    assert third.next_message() is None
    assert third.status.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "already has 2 sessions" in third.status.details()
    bots[0].cancel()
    wait_for(lambda: sessions_of(limited.address, "carol") == 1, 10, "one session left")
    again = RawBot(limited.address, "carol", tokens["carol"])
    assert again.next_message().HasField("welcome")
    for b in (bots[1], again):
        b.cancel()


# -- unauthenticated input --------------------------------------------------------------------------

def redis_lookups(redis_url: str) -> int:
    import redis
    stats = redis.Redis.from_url(redis_url).info("commandstats")
    return int(stats.get("cmdstat_hmget", {}).get("calls", 0))


def test_a_60kb_name_is_refused_short_without_asking_redis(limited, redis_url):
    before = redis_lookups(redis_url)
    log_before = len(limited.logs())
    raw = RawBot(limited.address, "x" * 60_000, "x.y")
    assert raw.next_message() is None
    assert raw.status.code() == grpc.StatusCode.INVALID_ARGUMENT, raw.status
    assert raw.status.details().startswith("bad bot name 'xxxx")
    assert "60000 long" in raw.status.details() and len(raw.status.details()) < 200
    assert redis_lookups(redis_url) == before
    time.sleep(0.3)  # a sleep on purpose: proves the name is not logged within a while
    # Other tests' sessions may log while this one runs: judge the refusal's own lines.
    logged = limited.logs()[log_before:]
    refusals = [line for line in logged.splitlines() if "reason=bad_name" in line]
    assert len(refusals) <= 1 and all(len(line) < 500 for line in refusals), refusals
    assert "x" * 300 not in logged  # the name is never logged whole


def test_a_newline_in_sdk_version_cannot_forge_a_log_line(limited, tokens):
    forged = "1.0\n2026-01-01 00:00:00,000 ERROR sueca.referee: FORGED"
    bot = RawBot(limited.address, "dave", tokens["dave"], hello=False)
    bot.send(pb.BotMessage(hello=pb.Hello(bot="dave", token=tokens["dave"], capacity=1,
                                          sdk_version=forged)))
    assert bot.next_message().HasField("welcome")
    wait_for(lambda: "sdk '1.0\\n2026" in limited.logs(), 5, "the connect line")
    assert not any(line.startswith("2026-01-01") for line in limited.logs().splitlines())
    bot.cancel()


def test_welcome_names_no_host(limited, tokens):
    bot = RawBot(limited.address, "dave", tokens["dave"])
    rid = bot.next_message().welcome.referee_id
    assert rid and socket.gethostname() not in rid and str(limited.port) not in rid
    assert "127.0.0.1" not in rid
    bot.cancel()


def test_a_flood_of_wrong_tokens_is_summarised_and_stops_reaching_redis(make_referee,
                                                                       redis_url, tokens):
    """90 wrong tokens of the right syntax, 30 at a time: Redis is asked for the first ~20
    (the address's budget of refusals), the rest are refused without asking it (after a
    second's wait: a refusal flood gets no faster than the referee wants); the log has a
    summary line or two, and the metric counts them per peer address."""
    ref = make_referee("--refusals-per-second", "5", "--streams-per-connection", "0",
                       "--hello-seconds", "1")
    before = redis_lookups(redis_url)
    t0 = time.monotonic()

    def attempt(k: int) -> str:
        raw = RawBot(ref.address, "mallory", f"mallory.wrong{k}")
        raw.wait_end(20)
        raw.channel.close()
        return raw.status.code().name

    with ThreadPoolExecutor(30) as pool:
        names = list(pool.map(attempt, range(90)))
    took = time.monotonic() - t0
    # the refusals wait out their second side by side, outside the token-check gate (4 at
    # once): waiting in it they would be let out 4 a second (~8 s in all, against ~2 s)
    assert took < 6, took
    codes = {c: names.count(c) for c in set(names)}
    lookups = redis_lookups(redis_url) - before
    allowed = 20 + 5 * (time.monotonic() - t0) + 2  # the burst, then 5 a second
    assert lookups <= allowed, (lookups, codes)
    assert codes.get("RESOURCE_EXHAUSTED", 0) >= 90 - allowed, codes
    lines = [x for x in ref.logs().splitlines() if "refused a bot hello" in x]
    assert 1 <= len(lines) <= 3, lines
    assert metric(ref, "sueca_referee_bad_hellos_total", peer="ipv4:127.0.0.1",
                  reason="wrong_token") >= 20
    assert metric(ref, "sueca_referee_bad_hellos_total", peer="ipv4:127.0.0.1",
                  reason="rate_limited") >= 90 - allowed
    # the budget refills: a right token from the same address gets in again (a sleep on
    # purpose: the refill with time is under test)
    time.sleep(4.5)
    good = RawBot(ref.address, "mallory", tokens["mallory"])
    assert good.next_message().HasField("welcome")
    good.cancel()


def test_a_bot_reconnecting_in_a_loop_is_slowed_down(make_referee, tokens):
    """Connection churn with a right token: --hellos-per-second 2 (10 at once) lets 10
    sessions in, then refuses further hellos from the address (after a pause) without asking
    Redis, and lets in 2 a second after that."""
    ref = make_referee("--hellos-per-second", "2", "--hello-seconds", "1")
    codes: list[str] = []
    t0 = time.monotonic()
    for _ in range(16):
        bot = RawBot(ref.address, "mallory", tokens["mallory"])
        msg = bot.next_message()
        codes.append("welcome" if msg is not None else bot.status.code().name)
        if msg is None:
            assert "too many hellos from ipv4:127.0.0.1" in bot.status.details()
        bot.cancel()
    took = time.monotonic() - t0
    assert codes[:10] == ["welcome"] * 10 and codes[10] == "RESOURCE_EXHAUSTED", codes
    assert codes.count("welcome") <= 10 + 2 * took + 1, (codes, took)  # 2 a second after
    assert metric(ref, "sueca_referee_limit_hits_total", limit="hellos") == \
        codes.count("RESOURCE_EXHAUSTED")


# -- settings -------------------------------------------------------------------------------------

def test_bad_limit_settings_are_one_line_exit_2(tmp_path):
    from kits.net import BIN, ENV
    env = {**os.environ, **ENV, "SUECA_OUT_BYTES": "lots"}
    import subprocess
    out = subprocess.run([str(BIN / "sueca-arena"), "referee", "--insecure", "--metrics-port",
                          "0", "--port", "1"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "SUECA_OUT_BYTES='lots' is not usable: a number at least 0" in out.stderr
    env = {**os.environ, **ENV, "SUECA_SEED_KEY": "short"}
    out = subprocess.run([str(BIN / "sueca-arena"), "referee", "--insecure", "--metrics-port",
                          "0", "--port", "1"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 2 and "a seed key needs at least 16 characters, this one has 5" in out.stderr
    env = {**os.environ, **ENV}
    out = subprocess.run([str(BIN / "sueca-arena"), "referee", "--insecure",
                          "--hello-seconds", "-1"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 2 and "-1" in out.stderr and "--hello-seconds" in out.stderr


def test_the_referee_name_syntax_is_the_registry_s():
    from sueca.arena.store.bots import NAME as REGISTRY_NAME
    from sueca.referee.limits import NAME
    assert NAME.pattern.strip("^$") == REGISTRY_NAME.pattern.strip("^$")



def test_refusals_wait_but_never_more_than_a_bounded_number_per_address(monkeypatch):
    """A refused stream is answered after a pause (cheap: a timer), but only so many of one
    address wait at once; beyond that they are refused at once, so waiting refusals cannot
    pile up in memory. In-process referee, the bound set to 2 for the test."""
    from sueca.referee import admission
    from sueca.referee.limits import Limits
    from sueca.referee.server import ServerThread, StaticAuth

    monkeypatch.setattr(admission, "MAX_PAUSED_PER_ADDRESS", 2)
    limits = Limits(streams_per_connection=1, hello_seconds=1.0)
    with ServerThread(StaticAuth(None), limits=limits) as srv:
        channel = own_channel(srv.address)
        held = hello_less(channel)
        time.sleep(0.2)  # a sleep: a hello-less stream shows nowhere to poll; taken in first
        t0 = time.monotonic()
        extra = [hello_less(channel) for _ in range(4)]
        ends: list[float] = []
        for call, _ in extra:
            call.add_done_callback(lambda _c: ends.append(time.monotonic() - t0))
        for call, _ in extra:
            assert status_of(call, 15).code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        wait_for(lambda: len(ends) == 4, 5, "every refusal")
        quick = [t for t in ends if t < 1.5]
        slow = [t for t in ends if t >= 3.5]  # 4 x hello_seconds
        assert len(quick) == 2 and len(slow) == 2, ends
        for call, q in [held, *extra]:
            q.put(None)
            call.cancel()
        channel.close()
