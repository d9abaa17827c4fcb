"""``sueca-arena serve``: a persistent arena on one machine, until Ctrl-C.

It starts, as separate processes: a private Redis keeping its data in ``--data DIR`` (an
append-only file, so a second ``serve`` on the same directory resumes the same ladder, ratings
and history), a referee for bots (``--host``, ``--port``), a Celery worker, the ladder scheduler,
the ratings exporter (``--metrics-port``) and the web front end (``--web-port``); with
``--example-bots`` also the bundled bots, as ``sueca-bot`` processes, so a fresh arena has games
to show. ``--redis URL`` (or ``SUECA_REDIS_URL``) uses that Redis instead of a private one.
``--tls-cert``/``--tls-key`` (or ``SUECA_TLS_CERT``/``SUECA_TLS_KEY``) serve TLS to bots, as
``sueca-arena referee`` does; a plaintext connection is then refused.

Metrics (Prometheus ``/metrics``): the referee on ``--metrics-port``, the worker on the next
port, the ratings exporter on the one after and the scheduler after that (the deploys' ports).

Ctrl-C or SIGTERM stops everything in order — the scheduler and the web first, then the worker
(it finishes the match in hand; an unfinished one is re-queued by the broker), the bots, the
referee, and Redis last, which writes its file out (:class:`sueca.arena.redisproc.RedisServer`
with a data directory: one module owns starting Redis). Logs are in ``DIR/logs``. One ``serve`` per
data directory: a second one on a directory in use is refused.

The arena's processes are started and stopped by :class:`sueca.arena.local_arena.LocalArena`, which
the demo uses too; the scheduler, the exporter and the web by a
:class:`sueca.arena.processes.Supervisor` of their own, stopped first.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path
from typing import IO, Any

from sueca.arena.cli.common import Bounded, UserError, add_port
from sueca.arena.local_arena import EXAMPLE_BOTS, LocalArena
from sueca.arena.processes import Child, ChildExited, Supervisor, wait_until
from sueca.arena.redisproc import RedisServer
from sueca.arena.settings import current, replace, use


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run a persistent arena on this machine (Redis, referee, "
                                     "worker, ladder, web pages) until Ctrl-C",
                       description=(__doc__ or "").split("\n\n", 1)[-1])
    p.add_argument("--data", metavar="DIR", default="./sueca-data",
                   help="where the private Redis keeps the arena (default ./sueca-data)")
    p.add_argument("--redis", metavar="URL", default=None,
                   help="use this Redis instead of a private one (default $SUECA_REDIS_URL)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address the referee listens on for bots (default 127.0.0.1; 0.0.0.0 "
                        "for every interface)")
    add_port(p, "--port", default=50051, help="the referee's port for bots (default 50051)")
    add_port(p, "--metrics-port", default=9464,
             help="Prometheus metrics of the referee on this port, the worker's on the next, "
                  "the ratings exporter's on the one after, the scheduler's after that "
                  "(default 9464: 9464-9467, as in the deploys)")
    p.add_argument("--tls-cert", default=current().tls_cert, metavar="FILE",
                   help="serve TLS to bots with this PEM certificate (chain), with --tls-key "
                        "(default $SUECA_TLS_CERT; without it the bots' port is plaintext)")
    p.add_argument("--tls-key", default=current().tls_key, metavar="FILE",
                   help="PEM private key of --tls-cert (default $SUECA_TLS_KEY)")
    p.add_argument("--web-host", default="127.0.0.1",
                   help="address the web pages listen on (default 127.0.0.1)")
    add_port(p, "--web-port", default=8080, help="the web pages' port (default 8080)")
    p.add_argument("--example-bots", action="store_true",
                   help=f"also run the bundled bots ({', '.join(EXAMPLE_BOTS)}; example-NAME "
                        "with --redis) as sueca-bot processes, so the ladder has games to play")
    p.add_argument("--target", action=Bounded, kind=int, low=1, default=2,
                   help="ladder matches to keep in flight (default 2)")
    p.add_argument("--concurrency", action=Bounded, kind=int, low=1, default=2,
                   help="worker pool processes (default 2)")
    p.set_defaults(func=cmd_serve)


# what serves Prometheus metrics, from --metrics-port up, one port each: the deploys' order
# (referee 9464, worker 9465, ratings exporter 9466, scheduler 9467)
METRICS = ("referee", "worker", "ratings", "scheduler")


def _lock(data: Path) -> IO[str]:
    """Hold ``DIR/serve.lock`` for as long as we run: two Redis on one file would ruin it."""
    import fcntl
    f = open(data / "serve.lock", "a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise UserError(f"data directory {str(data)!r} is in use by another `sueca-arena serve`; "
                        "stop it first or pass another --data") from None
    f.truncate(0)
    f.write(f"{os.getpid()}\n")
    f.flush()
    return f


def _tls(args: argparse.Namespace) -> tuple[str, dict[str, str]]:
    """Check the TLS files before anything starts, and set up how this process and its
    children (worker, scheduler, web, example bots) dial the referee: plaintext without a
    certificate, whatever TLS settings the caller's shell holds for other referees dropped;
    with one, the caller's ``SUECA_TLS``/``SUECA_TLS_CA``/``SUECA_TLS_SERVER_NAME`` if set, else
    the certificate itself as the CA (a self-signed one, made for 127.0.0.1). Returns the
    ``sueca-bot`` flag a bot needs ("" for plaintext) and the children's extra environment."""
    from sueca.arena.cli.referee import security
    from sueca.sdk.channels import drop_tls_settings
    args.tls_cert, args.tls_key = args.tls_cert or None, args.tls_key or None
    security(argparse.Namespace(tls_cert=args.tls_cert, tls_key=args.tls_key,
                                operator_token_file=None))  # a UserError quoting a bad file
    if not args.tls_cert:
        drop_tls_settings()
        return "", {}
    args.tls_cert, args.tls_key = os.path.abspath(args.tls_cert), os.path.abspath(args.tls_key)
    settings = current()
    if settings.tls_ca:
        return f"--tls-ca {settings.tls_ca}", {}
    if settings.tls:
        return "--tls", {}
    use(replace(settings, tls_ca=args.tls_cert))  # this process: it checks the bots connected
    return f"--tls-ca {args.tls_cert}", {"SUECA_TLS_CA": args.tls_cert}


def _bin(name: str) -> str:
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else name


def _wait_web(url: str, proc: Child, timeout: float = 30.0) -> None:
    import urllib.request

    def healthy() -> bool:
        try:
            with urllib.request.urlopen(url + "/api/health", timeout=1) as r:
                return bool(r.status == 200)
        except OSError:
            return False

    try:
        if wait_until(healthy, time.monotonic() + timeout, proc.check):
            return
    except ChildExited as err:
        raise UserError(str(err)) from None
    raise UserError(f"the web front end did not answer at {url} within {timeout:.0f}s; "
                    f"see {proc.log}")


def _shown_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "[::]") else host


def cmd_serve(args: argparse.Namespace) -> int:
    from sueca.arena.cli.common import console as make_console
    from sueca.arena.redisurl import masked
    from sueca.arena.store import StoreUnavailable, connect
    console = make_console(stderr=True)
    if args.metrics_port + len(METRICS) - 1 > 65535:
        raise UserError(f"bad --metrics-port {str(args.metrics_port)!r}: the next "
                        f"{len(METRICS) - 1} ports are taken too ({', '.join(METRICS[1:])}); "
                        f"at most {65536 - len(METRICS)}")
    tls_client, tls_env = _tls(args)
    data = Path(args.data)
    try:
        data.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"cannot use data directory {args.data!r}: {err.strerror}") from None
    lock = _lock(data)
    import shutil
    if (data / "logs").exists():  # this run's logs in logs/, the previous run's in logs.prev/
        shutil.rmtree(data / "logs.prev", ignore_errors=True)
        (data / "logs").rename(data / "logs.prev")
    (data / "logs").mkdir()
    external = args.redis or current().redis_url
    redis_server: RedisServer | None = None
    arena: LocalArena | None = None
    extra: Supervisor | None = None

    def terminate(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, terminate)
    try:
        with console.status("starting Redis, the referee, a worker, the ladder and the web..."):
            if external:
                try:
                    connect(external).close()
                except StoreUnavailable as err:
                    raise UserError(str(err)) from None
                url = external
            else:
                redis_server = RedisServer(data_dir=data, log_file=data / "logs" / "redis.log")
                try:  # a long append-only file takes a while to load
                    redis_server.start(timeout=60)
                except RuntimeError as err:
                    raise UserError(f"{err}; see {data / 'logs' / 'redis.log'}") from None
                url = redis_server.url
            # on a Redis of our own the example bots are "random" etc.; on a shared one
            # "example-random" etc., so that no real bot's token is ever re-issued
            bots = ({(f"example-{b}" if external else b): b for b in EXAMPLE_BOTS}
                    if args.example_bots else {})
            m = args.metrics_port
            port_of = {name: m + i for i, name in enumerate(METRICS)}
            # a resumed arena re-issues the example bots' tokens (ratings stay: they are by name)
            arena = LocalArena(url, f"127.0.0.1:{args.port}", bots, capacity=4,
                               concurrency=args.concurrency, log_dir=data / "logs",
                               worker_env={"SUECA_METRICS_PORT": str(port_of["worker"])},
                               extra_env=tls_env, reissue=True)

            extra = Supervisor(arena.log_dir)

            def spawn(name: str, argv: list[str], **env: str) -> Child:
                assert arena is not None and extra is not None
                return extra.start(name, argv, arena.env(**env))

            tls = ["--tls-cert", args.tls_cert, "--tls-key", args.tls_key] if args.tls_cert else []
            # the arena's own: its start-up checks the referee is alive while it waits for it
            # (a port in use is then the referee's own error at once, not bots that never
            # connect), and its stop ends the referee after the workers and bots
            arena.procs.start("referee", [
                _bin("sueca-arena"), "referee", "--host", args.host, "--port", str(args.port),
                "--operator-port", "0", "--metrics-port", str(port_of["referee"]),
                "--drain-seconds", "5", "--log-level", "warning", *tls], arena.env())
            arena.start(timeout=60)
            spawn("scheduler", [_bin("sueca-arena"), "scheduler", "--referee", arena.referee,
                                "--target", str(args.target),
                                "--metrics-port", str(port_of["scheduler"])])
            spawn("exporter", [_bin("sueca-arena"), "ratings", "exporter",
                               "--metrics-port", str(port_of["ratings"]),
                               "--addr", "127.0.0.1"])
            web = spawn("web", [sys.executable, "-m", "uvicorn", "--factory",
                                "sueca.arena.web.app:from_env", "--host", args.web_host,
                                "--port", str(args.web_port), "--log-level", "warning",
                                "--no-access-log"],
                        SUECA_REFEREES=arena.referee)  # spectators: where matches run
            web_url = f"http://{_shown_host(args.web_host)}:{args.web_port}"
            _wait_web(web_url, web)
        from sueca.arena.cli.referee import is_loopback
        if not is_loopback(args.host) and current().operator_token is None:
            console.print(f"[yellow]the referee listens on {args.host} without an operator "
                          "token: anyone who reaches its port can run matches and list bots; "
                          "set SUECA_OPERATOR_TOKEN[/]")
        where = f"Redis {masked(url)}" + ("" if external else f" (data in {data}/)")
        bot_addr = f"{_shown_host(args.host)}:{args.port}"
        security = " over TLS" if tls_client else " (plaintext)"
        console.print(
            f"[bold]Sueca Arena is up.[/] {where}; logs in {arena.log_dir}/\n"
            f"  web pages     {web_url}/  (JSON under {web_url}/api/)\n"
            f"  bots connect  {bot_addr}{security}\n"
            f"  metrics       {', '.join(f'{k} :{v}' for k, v in port_of.items())}"
            f"  (Prometheus, /metrics)\n"
            f"  register a bot (its token is shown once):\n"
            f"    SUECA_REDIS_URL={masked(url)} sueca-arena bots add MYBOT\n"
            f"  connect it:\n"
            f"    SUECA_TOKEN=<token> sueca-bot run mybot.py:MyBot --server {bot_addr} "
            f"--name MYBOT{' ' + tls_client if tls_client else ''}\n"
            f"  Ctrl-C stops everything; `sueca-arena serve --data {data}` resumes.",
            soft_wrap=True)  # commands to copy: never broken across lines
        while True:
            time.sleep(1.0)
            try:
                extra.check()
            except ChildExited as err:
                raise UserError(str(err)) from None
            arena.check()
    except KeyboardInterrupt:
        console.print("stopping...")
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the stop short
        try:
            if extra is not None:  # one by one, each given 10 s
                extra.stop(*([child.name] for child in extra), grace=10.0)
            if arena is not None:
                arena.stop()
            if redis_server is not None:
                redis_server.stop()
        finally:
            use(None)
            signal.signal(signal.SIGTERM, old)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            lock.close()
