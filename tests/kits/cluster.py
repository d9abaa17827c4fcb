"""Hosts as Linux network namespaces on a private bridge: the cluster kit (tests/cluster/).

A :class:`Cluster` makes one bridge in the root namespace and, for each :meth:`Cluster.host`, a
namespace joined to it by a veth pair, with its own address on a private /24 (10.77.N.0/24, N
per cluster so two test runs on one machine never meet). Addresses live only inside the
namespaces the kit makes: the bridge itself has none, so no traffic reaches the machine's own
network or leaves it. A process runs on a host through ``ip netns exec``; a host is lost with
:meth:`Host.kill` (every process in its namespace SIGKILLed) and cut off with :meth:`Host.cut`
(its link down: packets vanish, as when a cable is pulled).

Everything is torn down by :meth:`Cluster.close`, also when a test fails: processes, links,
namespaces and the bridge, and it checks that nothing of them is left. Where a namespace cannot
be made (not root, no ``ip``), :func:`require` fails with one line saying why: never a silent
skip.

The test's own checks read Redis through its unix socket (a path, which no network namespace
hides); every process of the arena reaches Redis over the bridge, by address.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from kits.cluster_tls import SHARED_NAME, Pki, make_pki
from kits.wait import wait_for
from sueca.arena.keys import Keys
from sueca.arena.local_arena import register_in
from sueca.arena.processes import Child
from sueca.arena.records import ResultEntry
from sueca.arena.redisproc import redis_binary
from sueca.arena.store import Store, connect

__all__ = ["Cluster", "Host", "require", "League", "Figures", "league_fixture", "BOTS",
           "RECORDS_AGAIN_S", "RULES_ENDS", "SERVICE", "SENTINEL_DOWN_MS"]


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def require() -> None:
    """Fail in one line when this machine cannot make network namespaces."""
    import pytest
    if shutil.which("ip") is None:
        pytest.fail("the cluster tests need iproute2's `ip` (apt-get install iproute2)")
    if os.geteuid() != 0:
        pytest.fail("the cluster tests make network namespaces: run them as root "
                    f"(uid is {os.geteuid()})")
    probe = f"sc-probe-{secrets.token_hex(3)}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        pytest.fail(f"cannot make a network namespace: {made.stderr.strip()}")
    _ip("netns", "del", probe, check=False)


class Host:
    """One machine of the cluster: a network namespace with one address on the bridge."""

    def __init__(self, cluster: Cluster, name: str, index: int) -> None:
        self.cluster, self.name, self.index = cluster, name, index
        self.ns = f"{cluster.tag}-{name}"
        self.addr = f"{cluster.subnet}.{index}"
        self.outer = f"{cluster.tag}v{index}"  # the veth end on the bridge, in the root ns
        self.children: list[Child] = []
        _ip("netns", "add", self.ns)
        _ip("link", "add", self.outer, "type", "veth", "peer", "name", f"{self.outer}i")
        _ip("link", "set", f"{self.outer}i", "netns", self.ns)
        _ip("link", "set", self.outer, "master", cluster.bridge, "up")
        inside = ["netns", "exec", self.ns, "ip"]
        _ip(*inside, "link", "set", "lo", "up")
        _ip(*inside, "link", "set", f"{self.outer}i", "name", "eth0")
        _ip(*inside, "addr", "add", f"{self.addr}/24", "dev", "eth0")
        _ip(*inside, "link", "set", "eth0", "up")

    def run(self, name: str, argv: Sequence[str], env: Mapping[str, str] | None = None) -> Child:
        """Start ``argv`` on this host; its output goes to the cluster's log folder."""
        log = self.cluster.logs / f"{self.name}-{name}.log".replace(" ", "_")
        child = Child(f"{self.name}/{name}", ["ip", "netns", "exec", self.ns, *argv],
                      env=env, log=log)
        self.children.append(child)
        return child

    def call(self, argv: Sequence[str], env: Mapping[str, str],
             timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` on this host to its end, as an operator's command: its exit status
        and output."""
        return subprocess.run(["ip", "netns", "exec", self.ns, *argv], env=env, text=True,
                              capture_output=True, timeout=timeout)

    def pids(self) -> list[int]:
        got = _ip("netns", "pids", self.ns, check=False)
        return [int(p) for p in got.stdout.split()]

    def kill(self) -> None:
        """The host is lost: every process on it SIGKILLed at once (and reaped)."""
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for child in self.children:
            child.finish(time.monotonic())  # reaped, its log closed
        self.children.clear()

    def cut(self) -> None:
        """Pull its cable: the link to the bridge goes down, packets to and from it vanish."""
        _ip("link", "set", self.outer, "down")

    def heal(self) -> None:
        """Plug its cable back in. The neighbour entries that failed while it was cut are
        flushed on every host of the cluster: until they expire by themselves the kernel
        answers "no route to host" for seconds after the link is back."""
        _ip("link", "set", self.outer, "up")
        for host in self.cluster.hosts.values():
            _ip("-n", host.ns, "neigh", "flush", "all", check=False)

    def reach(self, addrs: Sequence[str], port: int, timeout: float = 15.0) -> None:
        """Wait until a TCP connection from this host to one of ``addrs`` on ``port``
        succeeds (a server started after :meth:`heal` finds its peers)."""
        probe = ("import socket, sys\nfor a in sys.argv[2:]:\n    try:\n"
                 "        socket.create_connection((a, int(sys.argv[1])), timeout=1).close()\n"
                 "        sys.exit(0)\n    except OSError:\n        pass\nsys.exit(1)")
        def ok() -> bool:
            return subprocess.run(["ip", "netns", "exec", self.ns, sys.executable, "-c", probe,
                                   str(port), *addrs], capture_output=True).returncode == 0
        wait_for(ok, timeout, f"{self.name} to reach {', '.join(addrs)} on port {port}",
                 interval=0.2)

    def drop(self, *others: Host) -> None:
        """Cut it off from ``others`` only: packets from it to them are dropped here (a
        blackhole route in its namespace), so neither side hears the other."""
        for other in others:
            _ip("netns", "exec", self.ns, "ip", "route", "add", "blackhole", f"{other.addr}/32")


class Cluster:
    """A bridge and the hosts on it (see the module doc); a context manager."""

    def __init__(self, logs: Path) -> None:
        self.tag = f"sc{secrets.token_hex(2)}"  # short: interface names are at most 15
        self.subnet = f"10.77.{int(self.tag[2:], 16) % 250 + 1}"
        self.bridge = f"{self.tag}br"
        self.logs = logs
        self.logs.mkdir(parents=True, exist_ok=True)
        self.hosts: dict[str, Host] = {}
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("link", "set", self.bridge, "up")

    def host(self, name: str) -> Host:
        host = self.hosts[name] = Host(self, name, len(self.hosts) + 1)
        return host

    def tail_logs(self, lines: int = 6) -> str:
        """The end of every process's log, for a failure message."""
        out = []
        for log in sorted(self.logs.glob("*.log")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {log.name}\n" + "\n".join(tail))
        return "\n".join(out)

    def close(self) -> list[str]:
        """Tear everything down; returns what was still there afterwards (nothing, or the
        names of what could not be removed)."""
        for host in self.hosts.values():
            host.kill()
        for host in self.hosts.values():
            _ip("netns", "del", host.ns, check=False)
            _ip("link", "del", host.outer, check=False)
        _ip("link", "del", self.bridge, check=False)
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and self.leftovers():
            time.sleep(0.1)
        return self.leftovers()

    def leftovers(self) -> list[str]:
        links = _ip("-o", "link", "show", check=False).stdout
        spaces = _ip("netns", "list", check=False).stdout
        return sorted({w.split("@")[0].rstrip(":") for w in (links + " " + spaces).split()
                       if w.startswith(self.tag)})

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- a league over seven hosts -------------------------------------------------------------
ARENA = [sys.executable, "-m", "sueca.arena.cli"]
BOT = [sys.executable, "-c", "import sys; from sueca.sdk.cli import main; sys.exit(main())"]
#: dave thinks 30 ms a card (a match of his lasts a few seconds): one to lose a host under
BOTS = {"alice": "random", "bob": "heuristic", "carol": "reckless",
        "dave": "kits.bots.slow:SlowBot"}
TESTS = str(Path(__file__).resolve().parents[1])  # tests/: kits.bots for the bot host
#: how a match ends by the rules (carol, ``reckless``, plays renúncias now and then)
RULES_ENDS = ("normal", "renuncia")
PREFIX = "sueca:"
OPERATOR_TOKEN = "cluster-operator-token-0123456789"
SEED_KEY = "cluster-seed-key-0123456789abcdef"
#: how soon after a referee host is lost the league must record a result again
RECORDS_AGAIN_S = 30.0
#: the name the sentinels monitor the primary under, and how soon they call it down
SERVICE = "league"
SENTINEL_DOWN_MS = 2000


#: a worker's line for a task that recorded its match (Celery's "succeeded", at INFO)
_RECORDED = re.compile(r"succeeded in [^:]*: \{'status': 'recorded', "
                       r"'match_id': '(?P<match>[^']+)', 'entry': '(?P<entry>[^']+)'")


class League:
    """The hosts and the test's own view of the records (Redis's unix socket)."""

    def __init__(self, cluster: Cluster, tmp: Path, *,
                 clocks: Mapping[str, str] | None = None, tls: bool = False,
                 house_bots: str = "", sentinel: bool = False, referees: int = 2,
                 workers: int = 2, target: int = 4, concurrency: int = 2, capacity: int = 4,
                 bots: Mapping[str, str] = BOTS) -> None:
        """``sentinel``: Redis on three hosts behind Sentinel (:meth:`start_sentinels`), the
        league's URL ``redis+sentinel://``; else one Redis on the host ``redis``.
        ``referees``, ``workers``: how many of the two hosts of each start now (the others are
        there, idle, for :meth:`start_referee` and :meth:`start_worker`); ``target``: the
        scheduler's matches in flight; ``concurrency``: each worker's threads; ``capacity``:
        each bot's games at once; ``bots``: name -> strategy (the bots' processes)."""
        self.cluster, self.tmp = cluster, tmp
        self.house_bots = house_bots
        self.clocks = dict(clocks or {})
        self.concurrency, self.capacity, self.bot_specs = concurrency, capacity, dict(bots)
        #: behind Sentinel the workers log every result they acknowledge (:meth:`acknowledged`)
        self.worker_log = "INFO" if sentinel else "WARNING"
        redis_hosts = ("redis-a", "redis-b", "redis-c") if sentinel else ("redis",)
        self.redis_hosts = [cluster.host(n) for n in redis_hosts]
        self.redis_host = self.redis_hosts[0]
        self.ref_a, self.ref_b, self.work_a, self.work_b, self.sched, self.bots = (
            cluster.host(n) for n in ("ref-a", "ref-b", "work-a", "work-b", "sched", "bots"))
        self.url = self.start_sentinels() if sentinel else self.start_redis(self.redis_host)
        self.store = self.store_on(self.redis_host)
        self.env = {"PATH": os.environ["PATH"], "SUECA_REDIS_URL": self.url,
                    "SUECA_KEY_PREFIX": PREFIX, "SUECA_SEED_KEY": SEED_KEY,
                    "SUECA_OPERATOR_TOKEN": OPERATOR_TOKEN, "HOME": str(tmp)}
        self.pki: Pki | None = None
        if tls:  # every hop that crosses hosts to a referee: its certificate checked by name
            self.pki = make_pki(tmp / "pki", [self.ref_a.name, self.ref_b.name])
            self.env |= {"SUECA_TLS_CA": str(self.pki.ca), "SUECA_TLS_SERVER_NAME": SHARED_NAME}
        self.tokens = register_in(self.store, self.bot_specs)
        for ref in (self.ref_a, self.ref_b)[:referees]:
            self.start_referee(ref)
        for work in (self.work_a, self.work_b)[:workers]:
            self.start_worker(work)
        self.sched.run("scheduler", [*ARENA, "scheduler", "--target", str(target),
                                     "--interval", "0.5"], self.env)
        self.start_bots()

    def socket(self, host: Host) -> Path:
        """The unix socket of the Redis on ``host``: the test's own way in."""
        return self.tmp / f"{host.name}.sock"

    def start_redis(self, host: Host, *extra: str) -> str:
        """A Redis server on ``host`` (port 6379 on its address, and a unix socket for the
        test); its URL."""
        sock = self.socket(host)
        host.run("redis", [redis_binary(), "--port", "6379", "--bind", host.addr,
                           "--protected-mode", "no", "--save", "", "--appendonly", "no",
                           "--unixsocket", str(sock), "--unixsocketperm", "700", *extra])
        wait_for(sock.exists, 10, f"redis's socket on {host.name}")
        return f"redis://{host.addr}:6379/0"

    def store_on(self, host: Host) -> Store:
        sock = self.socket(host)
        return Store(wait_for(lambda: connect(f"unix://{sock}"), 10, f"redis on {host.name}"),
                     Keys(PREFIX))

    def start_sentinels(self) -> str:
        """The primary on the first Redis host, a replica on each other, a sentinel on each
        of the three (quorum 2, a primary down after SENTINEL_DOWN_MS); the league's URL."""
        primary = self.redis_hosts[0]
        self.start_redis(primary)
        for host in self.redis_hosts[1:]:
            self.start_redis(host, "--replicaof", primary.addr, "6379")
        for host in self.redis_hosts:
            conf = self.tmp / f"{host.name}-sentinel.conf"  # a sentinel rewrites its own file
            conf.write_text(
                f"port 26379\nbind {host.addr}\nprotected-mode no\n"
                f"sentinel monitor {SERVICE} {primary.addr} 6379 2\n"
                f"sentinel down-after-milliseconds {SERVICE} {SENTINEL_DOWN_MS}\n"
                f"sentinel failover-timeout {SERVICE} {SENTINEL_DOWN_MS * 3}\n"
                f"sentinel parallel-syncs {SERVICE} 2\n")
            host.run("sentinel", [redis_binary(), str(conf), "--sentinel"])
        sentinels = ",".join(f"{h.addr}:26379" for h in self.redis_hosts)
        for host in self.redis_hosts[1:]:
            wait_for(lambda h=host: self.store_on(h).r.info("replication").get(  # type: ignore[misc]
                "master_link_status") == "up" or None, 20, f"the replica on {host.name}")
        return f"redis+sentinel://{sentinels}/{SERVICE}/0"

    def primary(self, among: Sequence[Host] | None = None) -> Host:
        """The Redis host whose server is the primary now (of ``among``, default all)."""
        def find() -> Host | None:
            for host in among or self.redis_hosts:
                try:
                    if self.store_on(host).r.info("replication")["role"] == "master":
                        return host
                except Exception:  # a lost host's socket: no one answers
                    continue
            return None
        return wait_for(find, 30, "a primary")

    def start_referee(self, host: Host) -> None:
        """A referee on ``host``; with a clock offset for it, its wall clock is that far off
        (libfaketime; its monotonic clock is left true, as a skewed machine's is)."""
        host.reach([h.addr for h in self.redis_hosts], 6379)  # one that finds no Redis exits
        skew, env = [], self.env
        if host.name in self.clocks:
            skew = ["faketime", "-f", self.clocks[host.name]]
            env = {**env, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
        host.run("referee", [*skew, *ARENA, "referee", "--host", host.addr, "--port", "50051",
                             "--operator-port", "50052", "--operator-host", host.addr,
                             "--advertise", f"{host.addr}:50052", "--metrics-port", "0",
                             "--drain-seconds", "1", "--log-level", "warning",
                             *self.serve_tls(host),
                             *(["--house-bots", self.house_bots] if self.house_bots else [])],
                 env)

    def serve_tls(self, host: Host) -> list[str]:
        """A referee's TLS flags (its own certificate), none in a plaintext league."""
        if self.pki is None:
            return []
        cert, key = self.pki.certs[host.name]
        return ["--tls-cert", str(cert), "--tls-key", str(key)]

    def dial_tls(self) -> list[str]:
        """A bot's TLS flags: the league's CA and the name every referee's certificate
        carries (the bot dials them by address); none in a plaintext league."""
        if self.pki is None:
            return []
        return ["--tls-ca", str(self.pki.ca), "--tls-server-name", SHARED_NAME]

    def start_worker(self, host: Host) -> None:
        host.reach([h.addr for h in self.redis_hosts], 6379)
        host.run("worker", [*ARENA, "worker", "-c", str(self.concurrency), "--pool", "threads",
                            "--hostname",
                            f"worker@{host.name}", "--loglevel", self.worker_log], self.env)

    def start_bots(self) -> None:
        servers = ",".join(f"{r.addr}:50051" for r in (self.ref_a, self.ref_b))
        bot_env = {k: v for k, v in self.env.items() if k != "SUECA_OPERATOR_TOKEN"}
        for name, spec in self.bot_specs.items():  # its own token, nothing of the operator's
            self.bots.run(name, [*BOT, "run", spec, "--server", servers, "--name", name,
                                 "--capacity", str(self.capacity), "--max-backoff", "1",
                                 "--log-level", "warning", *self.dial_tls()],
                          {**bot_env, "SUECA_TOKEN": self.tokens[name], "PYTHONPATH": TESTS,
                           "SLOWBOT_THINK": "0.03"})

    def acknowledged(self) -> dict[str, str]:
        """Every result a worker has called recorded so far (its task's "succeeded" line):
        match id -> results-log entry id."""
        out = {}
        for log in self.cluster.logs.glob("work-*-worker.log"):
            for m in _RECORDED.finditer(log.read_text(errors="replace")):
                out[m["match"]] = m["entry"]
        return out

    def results(self) -> list[ResultEntry]:
        return [r for _, r in self.store.results()]

    def recorded(self, at_least: int, timeout: float) -> list[ResultEntry]:
        return wait_for(lambda: (got := self.results()) and len(got) >= at_least and got,
                        timeout, f"{at_least} results", interval=0.2,
                        detail=lambda: self.cluster.tail_logs())

    def in_flight(self) -> list[str]:
        return [m for m in self.store.ladder_running()
                if (self.store.match(m) or {}).get("status") in ("queued", "running")]

    def running_with(self, bot: str) -> list[str]:
        """Ladder matches being played with ``bot`` in them (dave's last a few seconds)."""
        return [m for m in self.in_flight() if (rec := self.store.match(m) or {}).get("status")
                == "running" and bot in rec.get("spec", {}).get("bots", ())]

    def played_by(self, mid: str, host: Host) -> bool:
        """Whether match ``mid`` is running under a worker process of ``host`` (an attempt's
        owner is ``hostname/pid/task``; the namespaces share the hostname, not the pids)."""
        rec = self.store.match(mid) or {}
        owner = str(rec.get("owner", "")).split("/")
        return (rec.get("status") == "running" and len(owner) > 1 and owner[1].isdigit()
                and int(owner[1]) in host.pids())

    def healthy(self) -> None:
        """Every bot connected to both referees again, as they publish it in Redis: the next
        test starts from here."""
        def both() -> bool:
            return all(set(BOTS) <= self.store.bots_on([f"{r.addr}:50052"])
                       for r in (self.ref_a, self.ref_b))
        wait_for(both, 60, "every bot on both referees", interval=0.5,
                 detail=lambda: self.cluster.tail_logs())

    def doctor(self) -> tuple[int, list[dict[str, object]]]:
        """``sueca-arena doctor --json`` on the scheduler's host: its exit code and checks."""
        run = self.sched.call([*ARENA, "doctor", "--json"], self.env, timeout=60)
        assert run.returncode in (0, 1), run.stderr
        checks: list[dict[str, object]] = json.loads(run.stdout)
        print("\n".join(f"{'ok  ' if c['ok'] else 'FAIL'} {c['check']}: {c['detail']}"
                        for c in checks))
        return run.returncode, checks

    def lost(self, created: list[str]) -> list[str]:
        """Matches neither recorded (their idempotency key written with the result) nor on
        their way (pending: just made; queued; running) nor failed with a reason."""
        pipe = self.store.r.pipeline(transaction=False)
        for m in created:
            pipe.exists(self.store.keys.recorded(m))
        done = pipe.execute()
        return [m for m, d in zip(created, done) if not d and (self.store.match(m) or {}).get(
            "status") not in ("pending", "queued", "running", "failed")]

    def figures(self, fault: str, since: int, at: float) -> Figures:
        """Once the ladder has recorded some more: the fault's figures, printed."""
        after = self.recorded(since + 6, 120)
        again = max(0.0, min(r["time"] for r in after[since:]) - at)
        wait_for(lambda: len(self.in_flight()) < 4 or None, 60, "the ladder to keep going")
        created = [m.decode() for m in self.store.r.zrange(self.store.keys.matches(), 0, -1)]
        results = self.results()  # after: a match made is recorded by now, or on its way
        ids = Counter(r["match_id"] for r in results)
        statuses = Counter(str((self.store.match(m) or {}).get("status")) for m in created)
        stuck = [m for m in created if (self.store.match(m) or {}).get("status") in
                 ("queued", "running") and m not in self.in_flight()]
        f = Figures(recorded=len(results), twice=sum(n > 1 for n in ids.values()),
                    failed=statuses["failed"], stuck=len(stuck),
                    lost=len(self.lost(created)),
                    again_s=round(again, 1))
        print(f"\n{fault}: {f.recorded} matches recorded, lost {f.lost}, recorded twice "
              f"{f.twice}, stuck {f.stuck}, failed {f.failed}, the league recorded again "
              f"{f.again_s} s after it")
        return f


class Figures(NamedTuple):
    """What a fault cost (see the module doc)."""

    recorded: int
    lost: int
    twice: int
    stuck: int
    failed: int
    again_s: float


def league_fixture(tmp_path_factory: Any, *, clocks: Mapping[str, str] | None = None,
                   tls: bool = False, house_bots: str = "",
                   sentinel: bool = False) -> Iterator[League]:
    """One league for the module; each test leaves it healthy (its hosts back, every bot on
    both referees), so the tests hold in any order. ``clocks``: host name -> how far off its
    wall clock is (faketime's offset, such as ``+600s``); ``tls``: every referee serves TLS
    with a certificate of the league's throwaway CA (kits.cluster_tls), every client checks it;
    ``house_bots``: the referees' ``--house-bots`` (for ``sueca-arena loadtest``)."""
    require()
    tmp = tmp_path_factory.mktemp("cluster")
    cluster = Cluster(tmp / "logs")
    try:
        league = League(cluster, tmp, clocks=clocks, tls=tls, house_bots=house_bots,
                        sentinel=sentinel)
        league.recorded(4, 90)
        league.healthy()
        yield league
    finally:
        left = cluster.close()
        assert not left, f"the cluster left {left} behind"


