"""Redis URLs: ``unix://`` works for the whole league (Celery calls it ``redis+socket://``), and
a password in a URL never shows in what our commands print or log."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kits.arena import SUECA_ARENA, Worker, arena_env, cli
from kits.wait import wait_for

from sueca.arena.keys import Keys
from sueca.arena.redisproc import RedisServer, free_port
from sueca.arena.redisurl import for_celery, masked
from sueca.arena.store import Store, connect

SECRET = "s3cret-Pw"


@pytest.mark.parametrize("url, shown", [
    ("redis://localhost:6379/0", "redis://localhost:6379/0"),
    (f"redis://:{SECRET}@host:6379/0", "redis://:***@host:6379/0"),
    (f"redis://user:{SECRET}@host:6379/0", "redis://user:***@host:6379/0"),
    ("redis://user@host:6379/0", "redis://user@host:6379/0"),          # a name is no secret
    (f"rediss://:{SECRET}@host/2?ssl_cert_reqs=none", "rediss://:***@host/2?ssl_cert_reqs=none"),
    (f"unix://:{SECRET}@/run/redis.sock?db=1", "unix://:***@/run/redis.sock?db=1"),
    (f"unix:///run/redis.sock?db=1&password={SECRET}", "unix:///run/redis.sock?db=1&password=***"),
    ("redis://:p@ss:w@rd@host:6379/0", "redis://:***@host:6379/0"),    # unescaped '@' and ':'
    (f"redis+socket://:{SECRET}@/run/redis.sock", "redis+socket://:***@/run/redis.sock"),
    ("not a url", "not a url"),
    ("redis://:ab#cd@host:6379/0", "redis://:***@host:6379/0"),        # '#', '?', '/' in it
    ("redis://:ab?cd@host/0", "redis://:***@host/0"),
    ("redis://:a/b@host/0", "redis://:***@host/0"),
    (f"rediss://host/0?ssl_password={SECRET}", "rediss://host/0?ssl_password=***"),
    (f"redis://host/0?db=1&pass%77ord={SECRET}", "redis://host/0?db=1&pass%77ord=***"),
    (f"user:{SECRET}@127.0.0.1:6379", "user:***@127.0.0.1:6379"),      # no scheme
    ("unix:///run/a@b.sock?db=1", "unix:///run/a@b.sock?db=1"),         # '@' in a path
    (f"redis://h/0?password=ab;{SECRET}", "redis://h/0?password=***"),  # ';' is in the value
    (f"redis://h/0?db=0;password={SECRET}&x=1", "redis://h/0?db=***&x=1"),  # one piece
])
def test_masked_hides_the_password_only(url, shown):
    assert masked(url) == shown


@pytest.mark.parametrize("url, celery", [
    ("redis://h:6379/0", "redis://h:6379/0"),
    ("rediss://:pw@h:6380/1", "rediss://:pw@h:6380/1"),
    ("unix:///run/redis.sock", "redis+socket:///run/redis.sock"),
    ("unix:///run/redis.sock?db=3", "redis+socket:///run/redis.sock?virtual_host=3"),
    ("unix://:pw@/run/redis.sock?db=2&socket_timeout=5",
     "redis+socket://:pw@/run/redis.sock?virtual_host=2&socket_timeout=5"),
])
def test_for_celery_spells_unix_sockets_the_kombu_way(url, celery):
    assert for_celery(url) == celery


@pytest.fixture(scope="module")
def unix_redis() -> Iterator[RedisServer]:
    """A real Redis listening only on a unix socket, with a password."""
    server = RedisServer(unix_socket=True, password=SECRET).start()
    try:
        yield server
    finally:
        server.stop()


def _no_secret(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text, text[-3000:]


def test_the_league_runs_over_a_unix_socket_with_a_password(unix_redis: RedisServer,
                                                            tmp_path: Path) -> None:
    """bots add, a worker, tournament run, scheduler and ratings over ``unix://``, in database 3
    (so a database lost in translation would show); no output carries the password."""
    from sueca.arena.keys import Keys
    from sueca.arena.store import Store
    url = unix_redis.url.replace("?db=0", "?db=3")
    prefix = "ux:"
    env = arena_env(url, prefix)
    outputs = []
    for bot in ("random", "heuristic"):
        outputs.append(cli("bots", "add", bot, "--redis", url, env=env).stdout)
    worker = Worker(url, prefix, "--runner", "local", "-c", "1", log=tmp_path / "worker.log")
    try:
        worker.wait_ready()
        run = cli("tournament", "run", "--redis", url, "--bots", "random,heuristic", "-k", "2",
                  "--duplicate", "--id", "ux-t", "--json", "--timeout", "120", env=env,
                  timeout=180)
        report = json.loads(run.stdout)
        assert report["recorded"] == 2 and report["failed"] == []
        sched = cli("scheduler", "--redis", url, "--once", "--target", "1", "--bots",
                    "random,heuristic", env=env)
        outputs += [run.stdout, run.stderr, sched.stdout, sched.stderr]
        store = Store.from_url(url, Keys(prefix))
        (mid,) = [m.decode() for m in store.r.smembers(store.keys.ladder_running())]
        assert store.r.connection_pool.connection_kwargs["db"] == 3
        wait_for(lambda: store.is_recorded(mid), 60, "the ladder's match recorded",  # queued
                 interval=0.1, detail=worker.text)                # and played over the socket
        assert store.r.keys(f"{prefix}celery*")                # Celery's keys are in database 3 too
        rebuilt = cli("ratings", "rebuild", "--redis", url, "--check", env=env)
        assert "identical to the live ratings" in rebuilt.stdout
        outputs += [rebuilt.stdout, rebuilt.stderr]
    finally:
        worker.stop()
    log = worker.text()
    assert "redis+socket://:***@" in log or "redis+socket://:**@" in log   # Celery's banner
    _no_secret(*outputs, log)


@pytest.mark.parametrize("argv", [["leaderboard"], ["tournament", "run", "--bots", "a,b"],
                                  ["worker"], ["scheduler", "--once"], ["ratings", "rebuild"],
                                  ["referee"]])
def test_a_password_in_the_url_is_masked_in_errors(unix_redis: RedisServer, argv) -> None:
    unreachable = f"redis://:{SECRET}@127.0.0.1:{free_port()}/0"
    wrong = unix_redis.url.replace(SECRET, SECRET + "-wrong")
    for url, shown in ((unreachable, unreachable.replace(SECRET, "***")),
                       (wrong, wrong.replace(SECRET + "-wrong", "***"))):
        out = cli(*argv, "--redis", url, check=2, timeout=60)
        assert out.stderr.startswith(f"error: cannot reach Redis at {shown}: "), out.stderr
        _no_secret(out.stdout, out.stderr)


def test_a_malformed_url_with_a_password_is_refused_without_quoting_any_of_it() -> None:
    from sueca.arena.store import StoreUnavailable, connect
    head, tail = SECRET[:4], SECRET[4:]
    url = f"redis://:{head}#{tail}@127.0.0.1:{free_port()}/0"  # redis-py reads 'head' as a port
    with pytest.raises(StoreUnavailable) as err:
        connect(url)
    assert str(err.value).startswith("bad Redis URL 'redis://:***@127.0.0.1:")
    assert head not in str(err.value) and tail not in str(err.value)


def test_the_referee_refuses_a_malformed_url_in_one_line_without_the_password() -> None:
    head, tail = SECRET[:4], SECRET[4:]
    out = cli("referee", "--redis", f"redis://:{head}#{tail}@127.0.0.1:{free_port()}/0",
              check=2, timeout=60)
    assert out.stderr.startswith("error: bad Redis URL 'redis://:***@127.0.0.1:")
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert head not in out.stderr and tail not in out.stderr


def test_the_password_is_not_on_redis_servers_command_line(unix_redis: RedisServer) -> None:
    """Every user of the machine can read a process's arguments (ps, /proc/PID/cmdline)."""
    assert unix_redis.proc is not None
    cmdline = Path(f"/proc/{unix_redis.proc.pid}/cmdline").read_bytes().decode()
    assert "redis" in cmdline and SECRET not in cmdline


def _league(cwd: Path, *args: str, prefix: str) -> subprocess.CompletedProcess[str]:
    """``sueca-arena ARGS`` in ``cwd`` with no Redis in the environment."""
    env = arena_env("", prefix)
    env.pop("SUECA_REDIS_URL")
    return subprocess.run([SUECA_ARENA, *args], capture_output=True, text=True, timeout=60,
                          env=env, cwd=cwd)


def test_league_commands_find_the_arena_serve_runs_from_the_default_folder(
        tmp_path: Path, prefix: str) -> None:
    """In a folder where ``serve`` made ``./sueca-data``, a league command given no Redis uses
    that arena and says so once on stderr; with none running it says what to pass."""
    missing = _league(tmp_path, "bots", "list", "--json", prefix=prefix)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "--redis URL" in missing.stderr and "--data DIR" in missing.stderr
    assert "./sueca-data" in missing.stderr
    with RedisServer(data_dir=tmp_path / "sueca-data", unix_socket=True) as server:
        store = Store(connect(server.url), Keys(prefix))
        store.bots.add("finder")
        listed = _league(tmp_path, "bots", "list", "--json", prefix=prefix)
        assert listed.returncode == 0, listed.stderr
        assert [b["bot"] for b in json.loads(listed.stdout)] == ["finder"]
        said = [line for line in listed.stderr.splitlines() if "sueca-data" in line]
        assert len(said) == 1 and "using the arena" in said[0], listed.stderr
        # the tournament command reads the URL twice: still said once
        shown = _league(tmp_path, "tournament", "list", "--json", prefix=prefix)
        assert shown.returncode == 0, shown.stderr
        assert shown.stderr.count("using the arena") == 1, shown.stderr


@pytest.mark.parametrize("words", [
    ["ratings", "--data", "DIR", "show-config", "--json"],
    ["ratings", "show-config", "--data", "DIR", "--json"],
    ["bots", "--data", "DIR", "list", "--json"],
    ["bots", "--json", "--data", "DIR", "list"],
    ["tournament", "--json", "--data", "DIR", "list"],
    ["tournament", "--data", "DIR", "list", "--json"],
    ["retention", "--json", "--data", "DIR", "status"],
    ["matches", "--data", "DIR", "--json"],
])
def test_shared_options_go_before_or_after_the_action(tmp_path: Path, prefix: str,
                                                      words: list[str]) -> None:
    """``--data``, ``--redis`` and ``--json`` are the command's as well as each action's:
    ``ratings --data DIR show-config`` is ``ratings show-config --data DIR``."""
    data = tmp_path / "club data"
    with RedisServer(data_dir=data, unix_socket=True):
        run = _league(tmp_path, *[str(data) if w == "DIR" else w for w in words], prefix=prefix)
    assert run.returncode == 0, run.stderr
    json.loads(run.stdout)  # --json was heard wherever it stood
    assert "using the arena" not in run.stderr  # --data was heard too


@pytest.mark.parametrize("words, refused", [
    (["bots", "--json", "remove", "someone"], "`sueca-arena bots remove` takes no --json"),
    (["ratings", "--json", "exporter", "--metrics-port", "9"],
     "`sueca-arena ratings exporter` takes no --json"),
])
def test_a_shared_option_before_an_action_that_lacks_it_is_refused(
        tmp_path: Path, prefix: str, words: list[str], refused: str) -> None:
    run = _league(tmp_path, *words, prefix=prefix)
    assert run.returncode == 2 and refused in run.stderr and "Traceback" not in run.stderr



@pytest.mark.parametrize("url, celery", [
    ("redis+sentinel://10.0.0.1:26379,10.0.0.2/league/2",
     "sentinel://10.0.0.1:26379/2;sentinel://10.0.0.2:26379/2"),
    (f"redis+sentinel://:{SECRET}@s1:1,s2:2/league",
     f"sentinel://:{SECRET}@s1:1/0;sentinel://:{SECRET}@s2:2/0"),
])
def test_a_sentinel_url_is_kombus_list_of_sentinels(url, celery):
    from sueca.arena.redisurl import celery_options, sentinel_parts
    assert for_celery(url) == celery
    assert celery_options(url) == {"master_name": "league"}
    assert sentinel_parts(url).service == "league"
    assert masked(url).count("***") == ("@" in url)


@pytest.mark.parametrize("url, why", [
    ("redis+sentinel://h:26379", "no SERVICE"),
    ("redis+sentinel://h:x/league/0", "'h:x' is not a sentinel's host:port"),
    ("redis+sentinel://h:1,/league/0", "'' is not a sentinel's host:port"),
    ("redis+sentinel://h:1/league/zero", "the database 'zero' is not a number"),
])
def test_a_bad_sentinel_url_is_refused_in_one_line_without_the_password(url, why) -> None:
    bad = url.replace("://", f"://:{SECRET}@")
    out = cli("leaderboard", "--redis", bad, check=2, timeout=60)
    assert out.stderr.startswith(f"error: bad Redis URL {masked(bad)!r}: {why}"), out.stderr
    assert out.stderr.count("\n") == 1 and SECRET not in out.stderr


def test_no_sentinel_answering_is_the_clear_error_of_an_unreachable_redis() -> None:
    url = f"redis+sentinel://:{SECRET}@127.0.0.1:{free_port()}/league/0"
    out = cli("bots", "list", "--redis", url, check=2, timeout=60)
    assert out.stderr.startswith(f"error: cannot reach Redis at {masked(url)}: No master found "
                                 "for 'league'"), out.stderr
    assert SECRET not in out.stderr and "Traceback" not in out.stderr
