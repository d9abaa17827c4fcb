"""The chaos tests' league: the whole league on one machine, with a tournament running.

Real processes throughout: a Redis with an append-only file, two ``sueca-arena referee``
replicas, two ``sueca-arena worker`` processes (referee runner, 2 pool processes each), four
bots as ``sueca-bot run`` processes connected to both referees, and one ``sueca-arena tournament
run`` waiting for 24 matches. A test (tests/arena/test_chaos_*.py) kills things while it runs;
:meth:`Chaos.finish` then checks that the same ``tournament run`` finished by itself, every
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

from kits.arena import ROOT, SUECA_ARENA, VENV_BIN, arena_env, cli
from kits.wait import wait_for
from sueca.arena.keys import Keys
from sueca.arena.processes import Child as Proc
from sueca.arena.redisproc import RedisServer, free_port
from sueca.arena.store import Store, connect
from sueca.arena.store.ratings import catch_up, rebuild

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


def running(store: Store, mids: list[str]) -> list[dict]:
    return [m for m in (store.match(mid) for mid in mids) if m and m["status"] == "running"]


class Chaos:
    """``with Chaos(tmp_path) as chaos:`` the league up and the tournament started (its 24
    matches scheduled, ``chaos.mids``); the test does its damage, then :meth:`finish`. Leaving
    the block stops every process and Redis."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.started = time.monotonic()
        self.server = RedisServer(appendonly=True)
        self.fleet = Fleet(self.server, tmp_path)
        self.run: subprocess.Popen[str] | None = None
        self.mids: list[str] = []

    def until(self, cond, timeout: float, what: str):  # type: ignore[no-untyped-def]
        return wait_for(cond, timeout, what, interval=0.1, detail=self.fleet.logs_tail)

    def __enter__(self) -> Chaos:
        self.server.start()
        try:
            self._start()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _start(self) -> None:
        fleet = self.fleet
        self.store = store = Store(connect(self.server.url), Keys(PREFIX))
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
        self.until(connected, 60, "bots on both referees and workers ready")

        self.run_log = open(self.tmp_path / "tournament.log", "w")
        self.run = subprocess.Popen([SUECA_ARENA, "tournament", "run", "--bots", ",".join(BOTS),
                                     "-k", "4", "--duplicate", "--id", "chaos-t", "--json"],
                                    env=fleet.env, cwd=ROOT, stdout=subprocess.PIPE,
                                    stderr=self.run_log, text=True)
        self.mids = self.until(lambda: store.tournament_matches("chaos-t"), 30, "the schedule")
        assert len(self.mids) == 24

    def in_flight(self, what: str) -> list[dict]:
        """Wait for a match of the tournament being played."""
        return self.until(lambda: running(self.store, self.mids), 60, what)

    def finish(self, chaos_over: float) -> dict:
        """The tournament run finishes by itself and every match is accounted for, once."""
        store, mids, run, fleet = self.store, self.mids, self.run, self.fleet
        assert run is not None
        out, _ = run.communicate(timeout=150)
        finished = time.monotonic()
        self.run_log.close()
        err = (self.tmp_path / "tournament.log").read_text()
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
              f"tournament done {finished - chaos_over:.1f} s after the last blow; "
              f"whole test {time.monotonic() - self.started:.1f} s")
        return report

    def __exit__(self, *_: object) -> None:
        if self.run is not None and self.run.poll() is None:
            self.run.kill()
            self.run.wait()
        self.fleet.stop()
        self.server.stop()


