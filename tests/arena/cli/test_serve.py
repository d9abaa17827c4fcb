"""``sueca-arena serve``: a persistent arena that plays the ladder with its example bots, stops
on Ctrl-C or SIGTERM within seconds leaving nothing behind, and resumes from its data directory."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from kits.arena import SUECA_ARENA
from kits.serve import Serve, alive

pytestmark = pytest.mark.slow


def test_serve_plays_stops_and_resumes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = Serve(data, tmp_path / "serve1.log", "--example-bots").wait_up()
    out = first.text()
    assert first.web in out and f"127.0.0.1:{first.port}" in out and "sueca-arena bots add" in out
    rows = first.wait_games(bots=3, games=3)
    assert {r["bot"] for r in rows} == {"random", "heuristic", "reckless"}
    retention = first.get("/api/health")["retention"]  # serve's hourly retention, by default
    assert retention["retain_days"] == 1 and retention["archive_days"] == 7
    assert retention["archive"] == str((data / "archive").resolve())
    # every process's metrics, on the ports serve printed (--metrics-port and the next three)
    assert (f"referee :{first.metrics}, worker :{first.metrics + 1}, ratings "
            f":{first.metrics + 2}, scheduler :{first.metrics + 3}") in out
    scraped = [_samples(first.metrics_text(i)) for i in range(4)]
    referee, worker, ratings, scheduler = scraped
    assert ratings['sueca_rating_games{bot="heuristic"}'] >= 1
    assert referee["sueca_referee_sessions"] >= 3  # the example bots' streams
    assert sum(v for k, v in worker.items()
               if k.startswith("sueca_worker_matches_recorded_total")) >= 3
    assert scheduler["sueca_scheduler_matches_queued_total"] >= 3
    assert scheduler["sueca_scheduler_last_loop_timestamp_seconds"] > 0
    # a second serve on the same data directory is refused while the first runs
    again = subprocess.run([SUECA_ARENA, "serve", "--data", str(data), "--port", "1",
                            "--web-port", "1"], capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "in use" in again.stderr and "Traceback" not in again.stderr
    first_ids = {m["id"] for m in rows_matches(first) if m["status"] == "done"}
    kids = first.descendants()
    assert len(kids) >= 9  # redis, referee, worker (+ pool), 3 bots, scheduler, exporter, web
    seconds = first.stop(signal.SIGINT, group=True)  # a terminal's Ctrl-C
    assert first.proc.returncode == 0, first.text()
    assert seconds < 30, f"took {seconds:.1f}s to stop"
    assert not [p for p in kids if alive(p)], "processes left behind"

    second = Serve(data, tmp_path / "serve2.log", "--example-bots").wait_up()
    try:
        before = {r["bot"]: r["games"] for r in rows}
        now = {r["bot"]: r for r in second.get("/api/leaderboard")}
        for bot, games in before.items():  # ratings and history resumed, not started over
            assert now[bot]["games"] >= games
        later = second.wait_games(bots=3, games=max(before.values()) + 1)
        assert sum(r["games"] for r in later) > sum(before.values())
        done_now = {m["id"] for m in second.get("/api/matches?per=200&end=normal")["matches"]}
        assert first_ids and first_ids <= {m["id"] for m in rows_matches_all(second)}
        assert done_now
        assert second.status("/matches/no-such-match") == 404
    finally:
        kids = second.descendants()
        seconds = second.stop(signal.SIGTERM, group=False)  # a service manager's stop
    assert second.proc.returncode == 0, second.text()
    assert seconds < 30 and not [p for p in kids if alive(p)]


def _samples(text: str) -> dict[str, float]:
    """``name{labels}`` -> value of every sample in a Prometheus text page."""
    from sueca.arena.promscrape import parse_samples
    out = {}
    for (name, labels), value in parse_samples(text).items():
        shown = ",".join(f'{k}="{v}"' for k, v in labels)
        out[name + (f"{{{shown}}}" if shown else "")] = value
    return out


def rows_matches(serve: Serve) -> list[dict]:
    return serve.get("/api/matches?per=200")["matches"]


def rows_matches_all(serve: Serve) -> list[dict]:
    """Every match, all pages."""
    out, page = [], 1
    while True:
        got = serve.get(f"/api/matches?per=200&page={page}")
        out += got["matches"]
        if page >= got["pages"]:
            return out
        page += 1


def test_serve_on_an_external_redis(tmp_path: Path, redis_url: str, prefix: str) -> None:
    from sueca.arena.keys import Keys
    from sueca.arena.store import Store, connect
    serve = Serve(tmp_path / "data", tmp_path / "serve.log", "--example-bots", "--redis",
                  redis_url, SUECA_KEY_PREFIX=prefix).wait_up()
    try:
        rows = serve.wait_games(bots=3, games=1)
        assert {r["bot"] for r in rows} == {"example-random", "example-heuristic",
                                            "example-reckless"}
        assert "(data in" not in serve.text()
    finally:
        serve.stop(signal.SIGTERM, group=False)
    assert serve.proc.returncode == 0, serve.text()
    store = Store(connect(redis_url), Keys(prefix))  # the external Redis is left running
    assert store.results_count() >= 2
    assert not (tmp_path / "data" / "appendonly.aof").exists()


def test_serve_refuses_bad_settings_before_starting_anything(tmp_path: Path) -> None:
    afile = tmp_path / "a-file"
    afile.write_text("x")
    for argv, quoted in ((["--metrics-port", "65533"], "'65533'"),
                         (["--data", str(afile)], repr(str(afile))),
                         (["--web-port", "0"], "'0'"),
                         (["--tls-cert", str(afile)], "--tls-key"),
                         (["--tls-cert", str(afile), "--tls-key", str(afile)], repr(str(afile)))):
        run = subprocess.run([SUECA_ARENA, "serve", *argv], capture_output=True, text=True,
                             timeout=60, cwd=tmp_path)
        assert run.returncode == 2 and quoted in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "sueca-data").exists()  # nothing was created for a refused start


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, made with the openssl command line."""
    cert, key = folder / "arena.crt", folder / "arena.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=sueca serve test", "-addext",
                    "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", str(key),
                    "-out", str(cert)], check=True, capture_output=True, timeout=60)
    return cert, key


def test_serve_over_tls(tmp_path: Path) -> None:
    """With a certificate the bots' port speaks TLS only: the example bots and a bot of ours
    connect over TLS and play; a plaintext client is refused."""
    import os

    from kits.arena import SUECA_ARENA
    cert, key = _self_signed(tmp_path)
    serve = Serve(tmp_path / "data", tmp_path / "serve.log", "--example-bots",
                  "--tls-cert", str(cert), "--tls-key", str(key)).wait_up()
    bot = None
    try:
        out = serve.text()
        assert f"127.0.0.1:{serve.port} over TLS" in out and f"--tls-ca {cert}" in out
        env = {k: v for k, v in os.environ.items() if not k.startswith("SUECA_")}
        added = subprocess.run([SUECA_ARENA, "bots", "add", "mine", "--data", str(serve.data)],
                               env=env,
                               capture_output=True, text=True, timeout=60)
        assert added.returncode == 0, added.stderr
        log = open(tmp_path / "mine.log", "wb")
        bot = subprocess.Popen(  # as serve told us to connect it
            [str(Path(SUECA_ARENA).parent / "sueca-bot"), "run", "heuristic", "--server",
             f"127.0.0.1:{serve.port}", "--name", "mine", "--tls-ca", str(cert)],
            env={**env, "SUECA_TOKEN": added.stdout.strip()}, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True)
        rows = serve.wait_games(bots=4, games=1, timeout=120)
        assert "mine" in {r["bot"] for r in rows if r["games"] >= 1}
        health = [SUECA_ARENA, "health", f"127.0.0.1:{serve.port}", "--timeout", "3"]
        plain = subprocess.run(health, env=env, capture_output=True, text=True, timeout=60)
        assert plain.returncode == 1 and "UNAVAILABLE" in plain.stdout, plain
        assert "Traceback" not in plain.stderr
        tls = subprocess.run([*health, "--tls-ca", str(cert)], env=env, capture_output=True,
                             text=True, timeout=60)
        assert tls.returncode == 0 and "SERVING" in tls.stdout, tls
    finally:
        if bot is not None:
            bot.terminate()
            bot.wait(30)
        serve.stop(signal.SIGTERM, group=False)
    assert serve.proc.returncode == 0, serve.text()


def _registry(serve: Serve) -> Any:
    """The bot registry of the arena ``serve`` keeps in its data folder."""
    from sueca.arena.keys import Keys
    from sueca.arena.store import connect
    from sueca.arena.store.bots import BotRegistry
    return BotRegistry(connect(serve.url()), Keys())


def _bot_logs(data: Path) -> list[str]:
    return sorted(p.name for p in (data / "logs").glob("bot-*.log"))


def test_serve_runs_no_example_bot_unless_asked_and_resumes_over_a_registered_one(
        tmp_path: Path) -> None:
    """Without --example-bots no bot is registered or started; a serve on a data directory
    whose Redis already holds a bot named like an example ('random', left by an earlier
    --example-bots run) starts as well and leaves that bot's token alone."""
    data = tmp_path / "data"
    first = Serve(data, tmp_path / "serve1.log").wait_up()
    try:
        registry = _registry(first)
        assert registry.names() == [] and _bot_logs(data) == []
        token = registry.add("random")
    finally:
        first.stop(signal.SIGTERM, group=False)
    assert first.proc.returncode == 0, first.text()

    second = Serve(data, tmp_path / "serve2.log").wait_up()
    try:
        registry = _registry(second)
        assert registry.names() == ["random"] and registry.verify("random", token)
        assert _bot_logs(data) == []
    finally:
        second.stop(signal.SIGTERM, group=False)
    assert second.proc.returncode == 0, second.text()
    assert "Traceback" not in second.text()


@pytest.mark.parametrize("which", ["--port", "--metrics-port", "--web-port"])
def test_serve_refuses_a_port_in_use_before_starting_anything(tmp_path: Path, which: str) -> None:
    """A port serve needs is held (by another program, or another serve on another folder):
    serve says which port and who holds it, exit 2, and starts and writes nothing (its data
    folder is not even made): a second referee on a port held with SO_REUSEPORT would
    otherwise share it, and the bots would meet the other arena's tokens."""
    import os
    import socket

    from sueca.arena.redisproc import free_port, free_ports
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        web = port if which == "--web-port" else free_port()
        metrics = port if which == "--metrics-port" else free_ports(4, avoid=(port, web))
        bots = port if which == "--port" else free_ports(1, avoid=(web, *range(metrics, metrics + 4)))
        run = subprocess.run([SUECA_ARENA, "serve", "--data", str(tmp_path / "data"),
                              "--port", str(bots), "--web-port", str(web),
                              "--metrics-port", str(metrics), "--example-bots"],
                             capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, run.stderr
    assert f"port {port} in use (by pid {os.getpid()}: " in errors[0] and which in errors[0]
    assert not (tmp_path / "data").exists()  # nothing written


def test_a_second_serve_on_another_folder_is_told_the_port_is_taken(tmp_path: Path) -> None:
    """Two serves on one port: the second names the port and the first's referee."""
    first = Serve(tmp_path / "one", tmp_path / "serve1.log").wait_up()
    try:
        again = subprocess.run([SUECA_ARENA, "serve", "--data", str(tmp_path / "two"),
                                "--port", str(first.port)],
                               capture_output=True, text=True, timeout=60, cwd=tmp_path)
    finally:
        first.stop(signal.SIGTERM, group=False)
    assert again.returncode == 2 and "Traceback" not in again.stderr, again.stderr
    assert f"port {first.port} in use (by pid " in again.stderr
    assert "referee" in again.stderr and "wrong token" not in again.stderr
    assert not (tmp_path / "two").exists()


def test_serve_keeps_every_metrics_port_on_loopback(tmp_path: Path) -> None:
    """The referee's, worker's, exporter's and scheduler's metrics listen on 127.0.0.1 (read
    from the kernel's table of listening sockets, owner by owner), unless --metrics-host says
    otherwise."""
    from sueca.arena.processes import listeners, socket_owner
    serve = Serve(tmp_path / "data", tmp_path / "serve.log").wait_up()
    try:
        for offset in range(4):
            serve.metrics_text(offset)  # every one answers
        ours = set(serve.descendants())
        found = {sock.port: sock.host for sock in listeners()
                 if sock.port in range(serve.metrics, serve.metrics + 4)
                 and socket_owner(sock.inode) in ours}
    finally:
        serve.stop(signal.SIGTERM, group=False)
    assert found == {serve.metrics + i: "127.0.0.1" for i in range(4)}, found


@pytest.mark.parametrize("argv", [
    [],
    ["--example-bots"],
    ["--data", "club data", "--example-bots", "--port", "50052", "--web-port", "8081",
     "--pace", "0", "--target", "4", "--retain-days", "2.5", "--log-format", "json"],
])
def test_the_printed_resume_command_starts_the_arena_as_it_runs(argv: list[str]) -> None:
    """``Ctrl-C stops everything; `sueca-arena serve ...` resumes``: the printed command, parsed
    again, gives every option serve was started with (a resume without --example-bots would
    leave the ladder with no bot to play)."""
    import shlex

    from sueca.arena.cli import build_parser
    from sueca.arena.cli.serve import resume_args
    parser = build_parser()
    args = parser.parse_args(["serve", *argv])
    printed = resume_args(args, Path(args.data))
    again = parser.parse_args(shlex.split(printed))
    skip = {"log_format", "func"}
    assert {k: v for k, v in vars(again).items() if k not in skip} == \
        {k: v for k, v in vars(args).items() if k not in skip}, printed
    assert ("--example-bots" in printed) == ("--example-bots" in argv)
