"""Chaos: the whole league on one machine, and everything killed once while a tournament runs.

Real processes throughout: a Redis with an append-only file, two ``sueca-arena referee``
replicas, two ``sueca-arena worker`` processes (referee runner, 2 pool processes each), four
bots as ``sueca-bot run`` processes connected to both referees, and one ``sueca-arena tournament
run`` waiting for 24 matches. While it runs: SIGKILL a worker (a supervisor starts another), a
referee, a bot (restarted), a pool process; SIGSTOP Redis for 15 s; SIGKILL Redis and restart it
from its append-only file. Then the same ``tournament run`` must finish by itself, every
scheduled match recorded exactly once (or failed with a reason), none left running, and the
ratings rebuilt from the results log equal to the live ones.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from kits.arena import ROOT, SUECA_ARENA, VENV_BIN, arena_env, children, cli
from kits.wait import wait_for

from sueca.arena.keys import Keys
from sueca.arena.processes import Child as Proc
from sueca.arena.redisproc import RedisServer, free_port
from sueca.arena.store import Store, connect
from sueca.arena.store.ratings import catch_up, rebuild

pytestmark = pytest.mark.slow

BOTS = ("slow1", "slow2", "slow3", "slow4")
PREFIX = "chaos:"
CAPACITY = 8
FROZEN = 15.0


class Fleet:
    """The arena's processes, each with its log; :meth:`stop` ends every one (and its group)."""

    def __init__(self, server: RedisServer, logs: Path) -> None:
        self.server, self.logs = server, logs
        self.env = arena_env(server.url, PREFIX, SUECA_RETRY_BASE="0.2", SLOWBOT_THINK="0.02",
                             SUECA_PLACE_WAIT="10")
        self.ports = [free_port(), free_port()]
        self.referees = [f"127.0.0.1:{p}" for p in self.ports]
        self.procs: dict[str, Proc] = {}
        self.tokens: dict[str, str] = {}

    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> Proc:
        p = Proc(name, argv, env or self.env, self.logs / f"{name}.log")
        self.procs[name] = p
        return p

    def referee(self, i: int) -> Proc:
        return self.spawn(f"referee{i}", [SUECA_ARENA, "referee", "--port", str(self.ports[i]),
                                          "--metrics-port", "0", "--drain-seconds", "1",
                                          "--log-level", "warning"])

    def worker(self, name: str) -> Proc:
        return self.spawn(name, [SUECA_ARENA, "worker", "-c", "2", "-n", f"{name}-{os.getpid()}@%h",
                                 "--referee", self.referees[0], "--referee", self.referees[1]])

    def bot(self, name: str) -> Proc:
        env = {k: v for k, v in self.env.items() if k != "SUECA_REDIS_URL"}
        env["SUECA_TOKEN"] = self.tokens[name]
        return self.spawn(name, [str(VENV_BIN / "sueca-bot"), "run", "kits.bots.slow:SlowBot",
                                 "--server", ",".join(self.referees), "--name", name,
                                 "--capacity", str(CAPACITY), "--max-backoff", "1",
                                 "--log-level", "warning"], env)

    def kill(self, name: str) -> None:
        p = self.procs[name]
        os.killpg(p.popen.pid, signal.SIGKILL)
        p.popen.wait(10)

    def logs_tail(self) -> str:
        return "\n".join(f"--- {n}\n{p.tail(15)}" for n, p in self.procs.items())

    def stop(self) -> None:
        for p in self.procs.values():  # all at once, then wait for each
            if p.alive():
                p.popen.terminate()
        for p in self.procs.values():
            p.stop(5)


def _until(cond, timeout: float, what: str, fleet: Fleet):
    return wait_for(cond, timeout, what, interval=0.1, detail=fleet.logs_tail)


def _running(store: Store, mids: list[str]) -> list[dict]:
    return [m for m in (store.match(mid) for mid in mids) if m and m["status"] == "running"]


def test_chaos_every_match_recorded_once_and_the_tournament_finishes(tmp_path: Path) -> None:
    started = time.monotonic()
    server = RedisServer(appendonly=True).start()
    fleet = Fleet(server, tmp_path)
    run = None
    try:
        store = Store(connect(server.url), Keys(PREFIX))
        for b in BOTS:
            fleet.tokens[b] = cli("bots", "add", b, env=fleet.env).stdout.strip()
        for i in (0, 1):
            fleet.referee(i)
        for name in ("worker0", "worker1"):
            fleet.worker(name)
        for b in BOTS:
            fleet.bot(b)

        def connected() -> bool:
            for addr in fleet.referees:
                if set(BOTS) - {k.decode() for k in store.r.hkeys(store.keys.referee_bots(addr))}:
                    return False
            return all(b" ready." in fleet.procs[w].log.read_bytes() for w in ("worker0", "worker1"))
        _until(connected, 60, "bots on both referees and workers ready", fleet)

        run_log = open(tmp_path / "tournament.log", "w")
        run = subprocess.Popen([SUECA_ARENA, "tournament", "run", "--bots", ",".join(BOTS),
                                "-k", "4", "--duplicate", "--id", "chaos-t", "--json"],
                               env=fleet.env, cwd=ROOT, stdout=subprocess.PIPE, stderr=run_log,
                               text=True)
        mids = _until(lambda: store.tournament_matches("chaos-t"), 30, "the schedule", fleet)
        assert len(mids) == 24

        # 1. a whole worker, while it plays; a supervisor would start another
        def busy_worker():
            for m in _running(store, mids):
                pid = int(m["owner"].split("/")[1])
                for w in ("worker0", "worker1"):
                    if pid in children(fleet.procs[w].popen.pid):
                        return w
            return None
        fleet.kill(_until(busy_worker, 60, "a worker playing a match", fleet))
        fleet.worker("worker2")

        # 2. a referee with games in progress (the workers' RunMatch streams break)
        def busy_referee() -> bool:
            free = store.r.hgetall(store.keys.referee_bots(fleet.referees[1]))
            return any(int(v) < CAPACITY for v in free.values())
        _until(busy_referee, 60, "a game on referee1", fleet)
        fleet.kill("referee1")

        # 3. a bot process in the middle of its games; it comes back (same token)
        def busy_bot() -> str | None:
            free = store.r.hgetall(store.keys.referee_bots(fleet.referees[0]))
            return next((k.decode() for k, v in free.items() if int(v) < CAPACITY), None)
        victim = _until(busy_bot, 60, "a bot in a game", fleet)
        fleet.kill(victim)
        fleet.bot(victim)

        # 4. one pool process of a worker, while it plays (its parent re-queues the message)
        def busy_child() -> int | None:
            for m in _running(store, mids):
                pid = int(m["owner"].split("/")[1])
                for w in ("worker0", "worker1", "worker2"):
                    p = fleet.procs[w]
                    if p.alive() and pid in children(p.popen.pid):
                        return pid
            return None
        os.kill(_until(busy_child, 60, "a pool process playing a match", fleet), signal.SIGKILL)

        # 5. Redis frozen for longer than every client's socket timeout
        _until(lambda: _running(store, mids), 60, "a match in flight", fleet)
        os.kill(server.proc.pid, signal.SIGSTOP)
        time.sleep(FROZEN)  # a sleep on purpose: the freeze must outlast every socket timeout
        os.kill(server.proc.pid, signal.SIGCONT)

        # 6. Redis crashes mid-tournament and comes back from its append-only file
        _until(lambda: _running(store, mids), 60, "a match in flight after the freeze", fleet)
        # everything written so far in the file (what a SIGKILL keeps): the AOF buffer empty
        _until(lambda: int(store.r.info("persistence")["aof_buffer_length"]) == 0, 30,
               "Redis's append-only buffer written out", fleet)
        server.kill()
        time.sleep(1.0)  # a sleep on purpose: Redis stays away a while mid-tournament
        server.start(timeout=30)
        chaos_over = time.monotonic()
        assert store.tournament_matches("chaos-t") == mids          # back from its file

        out, _ = run.communicate(timeout=150)
        finished = time.monotonic()
        run_log.close()
        err = (tmp_path / "tournament.log").read_text()
        assert run.returncode in (0, 1), err[-3000:] + fleet.logs_tail()
        assert "Traceback" not in err, err[-3000:]
        report = json.loads(out)
        assert report["matches"] == 24

        statuses = dict(zip(mids, store.statuses(mids)))
        assert set(statuses.values()) <= {"done", "failed"}, statuses  # none left running
        logged: dict[str, int] = {}
        for _, r in store.results():
            logged[r["match_id"]] = logged.get(r["match_id"], 0) + 1
        for mid, st in statuses.items():
            if st == "done":
                assert logged.get(mid) == 1, (mid, logged.get(mid))  # exactly once
            else:
                assert logged.get(mid) is None
                assert store.match(mid)["error"], mid                 # failed with a reason
        assert report["recorded"] == sum(st == "done" for st in statuses.values())
        assert report["recorded"] >= 20, report["failed"]             # failures are exceptions

        catch_up(store)
        assert rebuild(store, write=False)["max_diff"] == 0.0
        print(f"chaos: {report['recorded']} recorded, {len(report['failed'])} failed; "
              f"tournament done {finished - chaos_over:.1f} s after Redis came back; "
              f"whole test {time.monotonic() - started:.1f} s")
    finally:
        if run is not None and run.poll() is None:
            run.kill()
            run.wait()
        fleet.stop()
        server.stop()
