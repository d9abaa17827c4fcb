"""Hosted bots end to end, all real processes: a Python SDK bot and a C bot are submitted with
``sueca-arena bots submit``, a ``sueca-arena bot-host`` claims them, builds the C one in the
sandbox (cc) and runs both as ``sueca-bot run exec:...``; they play ladder matches through the
referee and a Celery worker like connected bots. A second bot host shares them, and takes the
first one's bots over when it is SIGKILLed, within the stated time: its runners connect from
there. The owner reads the bot's stderr with its token; a wrong token shows nothing."""

from __future__ import annotations

import shutil
import signal
import time
from pathlib import Path

import pytest
from kits.arena import SUECA_ARENA, arena_env, cli
from kits.wait import wait_for

from sueca.arena.hosted.host import INTERVAL
from sueca.arena.local_arena import LocalArena
from sueca.arena.processes import Child
from sueca.arena.store.hosted import OWNER_TTL
from sueca.referee import control

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
C_BOT = ROOT / "sdk" / "examples" / "c" / "bot.c"
PY_BOT = '''import sys
from sueca.sdk import Bot


class Greedy(Bot):
    """The highest legal card; says so on stderr once a match."""

    def on_match_start(self, info):
        print(f"greedy starts seat {info.seat}", file=sys.stderr, flush=True)

    def play(self, observation):
        return max(observation.legal)
'''
#: a bot host's claims expire OWNER_TTL after its last renewal, the next heartbeat of another
#: host takes them, and the runner connects within a few seconds more
TAKEOVER = OWNER_TTL + INTERVAL + 10.0


def submission(tmp: Path, name: str) -> Path:
    folder = tmp / name
    folder.mkdir()
    if name == "pybot":
        (folder / "sueca-bot.toml").write_text('python = "greedy:Greedy"\n')
        (folder / "greedy.py").write_text(PY_BOT)
    else:
        shutil.copy(C_BOT, folder / "bot.c")
        (folder / "sueca-bot.toml").write_text('exec = "./bot"\nbuild = "cc -O2 -o bot bot.c"\n')
    return folder


def bot_host(arena: LocalArena, tmp: Path, name: str) -> Child:
    env = arena_env(arena.redis_url, "sueca:")
    child = Child(name, [SUECA_ARENA, "bot-host", "--server", arena.referee, "--name", name,
                         "--work", str(tmp / name), "--capacity", "2"], env, tmp / f"{name}.log")
    child.wait_ready(lambda: "ready" in child.text(), 30, name)
    return child


def connected(arena: LocalArena) -> set[str]:
    return {b["bot"] for b in control.list_bots(arena.referee, timeout=2.0) if b["sessions"]}


def test_submitted_bots_play_the_ladder_and_move_to_another_host(tmp_path: Path) -> None:
    arena = LocalArena(None, None, {}, workers=1, concurrency=2, log_dir=tmp_path)
    arena.start(timeout=90)
    hosts: list[Child] = []
    try:
        env = arena.env()
        tokens = {name: arena.store.bots.add(name) for name in ("pybot", "cbot")}
        for name, token in tokens.items():
            out = cli("bots", "submit", name, str(submission(tmp_path, name)), "--token", token,
                      "--json", env=env)
            assert '"version": 2' in out.stdout, out.stdout
        hosts.append(bot_host(arena, tmp_path, "host-a"))
        wait_for(lambda: connected(arena) >= {"pybot", "cbot"}, 90, "both hosted bots connected",
                 interval=0.5, detail=lambda: hosts[0].tail())

        def played() -> list[dict[str, object]] | None:
            results = [r for _, r in arena.store.results()]
            if {"pybot", "cbot"} <= {s for r in results for s in r["seats"]}:
                return results  # type: ignore[return-value]
            cli("scheduler", "--once", "--target", "2", "--bots", "pybot,cbot", env=env)
            return None

        results = wait_for(played, 120, "a ladder match of the hosted bots", interval=1.0)
        assert results is not None
        for r in results:
            assert r["tournament"] == "ladder" and r["end"] == "normal", r
            assert r["fault_bot"] is None, r

        # the owner reads the bot's stderr; a wrong token sees nothing of it
        lines = wait_for(lambda: [line for line in cli(
            "bots", "logs", "pybot", "--token", tokens["pybot"], env=env).stdout.splitlines()
            if "greedy starts seat" in line], 20, "the bot's stderr in its owner's log")
        assert lines
        built = cli("bots", "logs", "cbot", "--token", tokens["cbot"], env=env).stdout
        assert "[bot host] building: cc -O2 -o bot bot.c" in built and "build done" in built
        wrong = cli("bots", "logs", "pybot", "--token", tokens["cbot"], env=env, check=2)
        assert wrong.stdout == "" and "greedy" not in wrong.stderr
        assert wrong.stderr.strip() == ("error: wrong token for bot 'pybot': a bot's log is "
                                        "shown only with its own token")

        # a second host takes its share, then the first one's bots when it is killed
        hosts.append(bot_host(arena, tmp_path, "host-b"))
        owners = wait_for(lambda: (o := arena.store.hosted.owners(["pybot", "cbot"]))
                          and set(o.values()) == {"host-a", "host-b"} and o, 60,
                          "the bots shared by the two hosts")
        assert owners
        wait_for(lambda: connected(arena) >= {"pybot", "cbot"}, 60, "both bots connected again")
        killed = time.monotonic()
        hosts[0].send(signal.SIGKILL)
        wait_for(lambda: set(arena.store.hosted.owners(["pybot", "cbot"]).values())
                 == {"host-b"}, TAKEOVER + 10, "host-b holding both bots", interval=0.2)
        wait_for(lambda: connected(arena) >= {"pybot", "cbot"}, TAKEOVER + 10,
                 "both bots connected from host-b", interval=0.2)
        took = time.monotonic() - killed
        print(f"takeover after SIGKILL: {took:.1f} s")
        assert took <= TAKEOVER, took
    finally:
        for host in hosts:
            host.stop(grace=15.0, group=True)
        arena.stop()
