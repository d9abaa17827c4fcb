"""Connect a bot to one or more referees and play every game they give it.

>>> from sueca.sdk.client import run
>>> run(MyBot, "127.0.0.1:50051", token="mybot.Xy...", capacity=8)   # blocks; Ctrl-C drains

One bidirectional stream per referee address (:mod:`sueca.sdk.connection`); each referee
multiplexes every game it seats this bot in over that stream, and the client keeps one
:class:`~sueca.sdk.bot.Bot` instance per game (:mod:`sueca.sdk.game`). This module owns the
dispatch: synchronous bots run in a thread pool (a batch of turns per pool job, so a fast bot
does not pay a thread hop per card), or in the event loop while they answer in microseconds;
bots whose ``play`` is ``async def`` are awaited in the event loop. Answers leave in batches:
everything ready in one event-loop tick goes in one message.

SIGINT/SIGTERM drain: the referees are told to give no new games, running games finish, then
the process exits; a second signal exits at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import math
import os
import signal
import time
from collections.abc import Callable
from typing import Any

from sueca.sdk.addresses import dns_name, plain_address, resolve
from sueca.sdk.bot import Bot
from sueca.sdk.channels import PLAINTEXT, ClientTLS
from sueca.sdk.connection import WELCOME_SECONDS, AuthenticationError, Connection, sdk_version
from sueca.sdk.game import Game
from sueca.sdk.logs import bind
from sueca.sdk.settings import current
from sueca.sdk.summary import Summary

__all__ = ["run", "serve", "resolve", "AuthenticationError", "sdk_version", "Client",
           "Connection", "Game", "WELCOME_SECONDS"]

log = logging.getLogger("sueca.bot")

BATCH_BUDGET = 0.002            # seconds of bot work per pool job before a batch is split
INLINE_BELOW = 0.0001           # a bot this fast (CPU seconds per call) runs in the event loop
BLOCKING = 0.002                # ...unless its calls also take this long (sleeps, I/O) 3 times
PROBE_EVERY = 5.0               # seconds between inline re-measurements of a pooled bot
RESOLVE_EVERY = 30.0            # seconds between DNS look-ups of a multi-address name
IDLE_GAME_SECONDS = 1800.0      # a game silent this long (its referee is gone) is forgotten


class Client:
    """Sessions to every referee address, a pool for synchronous bots, and the drain."""

    def __init__(self, factory: Callable[[], Any], server: str, *, token: str, capacity: int,
                 name: str | None = None, threads: int | None = None, max_backoff: float = 30.0,
                 tls: ClientTLS = PLAINTEXT) -> None:
        if not token:
            raise AuthenticationError("no token: pass --token or set SUECA_TOKEN "
                                      "(`sueca-arena bots add NAME` prints one)")
        self.factory = factory
        self.server = server
        self.token = token
        self.name = name or token.rpartition(".")[0] or token  # bot names may hold dots
        if capacity < 1:
            raise ValueError(f"bad capacity {capacity}: at least 1")
        self.capacity = capacity
        # threads None: a pool, but a bot that answers in microseconds runs in the event loop
        # (a thread hop costs more than its move); 0: always in the loop; N: always the pool.
        self.adaptive = threads is None
        self.threads = min(capacity, 8) if threads is None else threads
        self.pool = (concurrent.futures.ThreadPoolExecutor(self.threads, "bot")
                     if self.threads > 0 else None)
        self.max_backoff = max_backoff
        self.tls = tls
        # address -> the host name it was resolved from: under TLS the referee's certificate is
        # checked against that name, not against the IP the SDK dialled
        self.names: dict[str, str] = {}
        self.version = sdk_version()
        self.connections: dict[str, Connection] = {}
        self.draining = False
        self.drain_event = asyncio.Event()
        # CPU seconds per bot call, measured when run in the event loop (a pool thread's clock
        # also counts its waits for the GIL); with ``strikes`` (calls that block: sleeps, I/O)
        # it decides inline or pool, and sizes pool jobs.
        self.avg_turn = 0.0
        self.strikes = 0
        self.pooled = False
        self.probe_at = 0.0
        self.summary = Summary()  # logged every summary_every seconds, and at the end
        self.summary_every = current().bot_summary_seconds

    # -- running work -------------------------------------------------------------------------
    # Any: a work item is a TurnRequest or an (event kind, message) pair (see Game.apply)
    def dispatch(self, conn: Connection, work: dict[str, list[Any]]) -> None:
        """Run ``work`` (items by game id, all of the connection's current stream)."""
        games = conn.games
        stream = conn.stream
        sync_jobs: list[tuple[Game, list[Any]]] = []
        for gid, items in work.items():
            game = games[gid]
            game.last_seen = time.monotonic()
            if game.busy:
                game.backlog.extend(items)
                continue
            game.busy = True
            if game.is_async:
                asyncio.get_running_loop().create_task(self._run_async(conn, stream, game,
                                                                       items))
            else:
                sync_jobs.append((game, items))
        if not sync_jobs:
            return
        if self.pool is None or (self.adaptive and self._inline()):
            self._done(conn, stream, sync_jobs, self._run_group(sync_jobs, measure=True))
            return
        n_turns = sum(len(items) for _, items in sync_jobs)
        groups = max(1, min(self.threads, len(sync_jobs),
                            math.ceil(n_turns * self.avg_turn / BATCH_BUDGET)))
        loop = asyncio.get_running_loop()
        for k in range(groups):
            part = sync_jobs[k::groups]
            fut = loop.run_in_executor(self.pool, self._run_group, part)
            fut.add_done_callback(functools.partial(self._group_done, conn, stream, part))

    def _group_done(self, conn: Connection, stream: int, jobs: list[tuple[Game, list[Any]]],
                    fut: asyncio.Future[list[bytes]]) -> None:
        self._done(conn, stream, jobs, fut.result())

    def _inline(self) -> bool:
        """Run this batch in the event loop? Yes while the bot is fast; a pooled bot is
        re-measured inline now and then, so a slow start does not banish it for good."""
        if not self.pooled:
            return True
        if time.monotonic() >= self.probe_at:
            self.pooled = False  # judged afresh from this batch on
            self.avg_turn = 0.0
            self.strikes = 0
            return True
        return False

    def _run_group(self, jobs: list[tuple[Game, list[Any]]], measure: bool = False) -> list[bytes]:
        t0 = time.perf_counter()
        c0 = time.thread_time()
        out = []
        n = 0
        for game, items in jobs:
            for item in items:
                n += 1
                action = game.apply(item)
                if action is not None:
                    out.append(action)
        if measure and n:
            # CPU time, not wall time: on a busy machine the OS preempts this process, and that
            # says nothing about the bot; a bot that sleeps or waits on I/O shows as strikes.
            per = (time.thread_time() - c0) / n
            self.avg_turn += min(1.0, 0.05 * n) * (per - self.avg_turn)
            self.strikes = self.strikes + 1 if (time.perf_counter() - t0) / n > BLOCKING else 0
            if (self.avg_turn >= INLINE_BELOW or self.strikes >= 3) and not self.pooled:
                self.pooled = True
                self.probe_at = time.monotonic() + PROBE_EVERY
                log.debug("bot calls take %.0f us of CPU (%d blocking): thread pool",
                          self.avg_turn * 1e6, self.strikes)
        return out

    def _done(self, conn: Connection, stream: int, jobs: list[tuple[Game, list[Any]]],
              actions: list[bytes]) -> None:
        conn.send(actions, stream)
        again: dict[str, list[Any]] = {}
        for game, _ in jobs:
            if game.moves:  # in the event loop, the game idle: no thread adds to it meanwhile
                self.summary.answered(game.moves, game.move_seconds)
                game.moves, game.move_seconds = 0, 0.0
            if game.resigned and not game.summarised:
                # counted now: the game is forgotten below, before the referee's match end
                # (a bot error of this seat, lost) comes back for it
                game.summarised = True
                self.summary.resigned(game.share)
            game.busy = False
            if game.backlog:
                again[game.game_id] = game.backlog
                game.backlog = []
            elif game.ended:
                conn.games.pop(game.game_id, None)
        if again:
            self.dispatch(conn, again)

    async def _run_async(self, conn: Connection, stream: int, game: Game,
                         items: list[Any]) -> None:
        out = []
        for item in items:
            action = await game.apply_async(item)
            if action is not None:
                out.append(action)
        self._done(conn, stream, [(game, items)], out)

    # -- lifecycle ----------------------------------------------------------------------------
    async def run(self) -> None:
        addresses = self._resolve()
        if not addresses:
            raise ValueError(f"no server address in {self.server!r}")
        for address in addresses:
            self._open(address)
        expanding = any(dns_name(item) for item in self.server.split(","))
        sweeper = asyncio.create_task(self._housekeeping(expanding))
        reporter = asyncio.create_task(self._report())
        drain_wait = asyncio.ensure_future(self.drain_event.wait())
        try:
            while not self.draining:
                tasks = {c.task for c in self.connections.values() if c.task is not None}
                done, _ = await asyncio.wait(tasks | {drain_wait},
                                             return_when=asyncio.FIRST_COMPLETED)
                for t in done:
                    if t is not drain_wait and not t.cancelled() and t.exception() is not None:
                        raise t.exception()  # type: ignore[misc]
        finally:
            sweeper.cancel()
            reporter.cancel()
            drain_wait.cancel()
            if not self.draining:
                for c in self.connections.values():
                    if c.task is not None:
                        c.task.cancel()

    def _resolve(self) -> list[str]:
        """:func:`resolve` of ``server``, noting the name each resolved address came from."""
        found: list[str] = []
        for item in self.server.split(","):
            if not item.strip():
                continue
            host = dns_name(item)
            for address in resolve(item):
                if host and address != plain_address(item):
                    self.names[address] = host
                if address not in found:
                    found.append(address)
        return found

    def _open(self, address: str) -> None:
        conn = Connection(self, address)
        conn.task = asyncio.get_running_loop().create_task(conn.run(), name=f"session {address}")
        self.connections[address] = conn

    async def _report(self) -> None:
        """Log the summary line every ``summary_every`` seconds (``SUECA_BOT_SUMMARY_SECONDS``)."""
        while True:
            await asyncio.sleep(self.summary_every)
            log.info("%s", self.summary.line())

    async def _housekeeping(self, expanding: bool) -> None:
        last_resolve = time.monotonic()
        while True:
            await asyncio.sleep(5.0)
            now = time.monotonic()
            for conn in self.connections.values():
                for gid, game in list(conn.games.items()):
                    if not game.busy and now - game.last_seen > IDLE_GAME_SECONDS:
                        del conn.games[gid]
            if expanding and now - last_resolve > RESOLVE_EVERY:
                last_resolve = now
                try:
                    found = await asyncio.to_thread(self._resolve)
                except Exception:
                    continue
                for address in found:
                    if address not in self.connections:
                        log.info("new referee address %s", address)
                        self._open(address)

    async def drain(self, timeout: float) -> None:
        if self.draining:
            return
        self.draining = True
        self.drain_event.set()
        running = sum(len(c.games) for c in self.connections.values())
        log.info("draining: no new games; waiting for %d running game(s) (up to %.0fs)",
                 running, timeout)
        try:
            await asyncio.wait_for(asyncio.gather(*(c.drain() for c in
                                                    self.connections.values())), timeout)
        except TimeoutError:
            log.warning("drain timed out; closing with games still running")
        for c in self.connections.values():
            if c.task is not None:
                c.task.cancel()
        await asyncio.gather(*(c.task for c in self.connections.values() if c.task),
                             return_exceptions=True)
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)


async def serve(bot_factory: Callable[[], Bot], server: str, *, token: str, capacity: int = 1,
                name: str | None = None, threads: int | None = None, max_backoff: float = 30.0,
                drain_timeout: float = 60.0, stop: asyncio.Event | None = None,
                tls: ClientTLS = PLAINTEXT) -> None:
    """The coroutine behind :func:`run`: serve until ``stop`` is set (then drain) or a
    referee refuses the token (:class:`AuthenticationError`)."""
    client = Client(bot_factory, server, token=token, capacity=capacity, name=name,
                    threads=threads, max_backoff=max_backoff, tls=tls)
    bind(bot=client.name)  # one bot per process: every line of this task and its tasks names it
    main = asyncio.create_task(client.run())
    waits: list[asyncio.Task[Any]] = [main]
    if stop is not None:
        waits.append(asyncio.create_task(stop.wait()))
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if main.done():
            main.result()  # raises AuthenticationError and the like
        await client.drain(drain_timeout)
        log.info("%s", client.summary.line())
    finally:
        for t in waits:
            t.cancel()
        if client.pool is not None:
            client.pool.shutdown(wait=False, cancel_futures=True)


def run(bot_factory: Callable[[], Bot], server: str, *, token: str, capacity: int = 1,
        name: str | None = None, threads: int | None = None, max_backoff: float = 30.0,
        drain_timeout: float = 60.0, tls: ClientTLS = PLAINTEXT) -> int:
    """Serve games until SIGINT/SIGTERM, then drain. Returns an exit code: 0 after a clean
    drain, 2 when a referee refused the token.

    ``bot_factory`` makes one bot per game (a :class:`~sueca.sdk.bot.Bot` subclass works);
    ``server`` is ``host:port`` or a comma list; ``capacity`` is how many games this process
    plays at once (per referee); ``threads`` sizes the pool for synchronous bots (0 runs them in
    the event loop: fastest for bots that take microseconds); the bot's name is the part of the
    token before its last '.' (names may hold dots), unless ``name`` is given; ``tls``
    (:func:`sueca.sdk.channels.client_tls`) connects with TLS instead of plaintext.
    """

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        signals = (signal.SIGINT, signal.SIGTERM)
        count = 0

        def on_signal() -> None:
            nonlocal count
            count += 1
            if count > 1:
                # at once, as promised: no drain, and no asyncio cancellation traceback (raising
                # SystemExit here unwinds every task of the loop, each printing its own)
                log.warning("second signal: exiting now")
                logging.shutdown()
                os._exit(130)
            stop.set()

        for sig in signals:
            try:
                loop.add_signal_handler(sig, on_signal)
            except (NotImplementedError, RuntimeError):
                pass
        try:
            await serve(bot_factory, server, token=token, capacity=capacity, name=name,
                        threads=threads, max_backoff=max_backoff, drain_timeout=drain_timeout,
                        stop=stop, tls=tls)
        except AuthenticationError as err:
            log.error("%s", err)
            return 2
        log.info("stopped")
        return 0

    return asyncio.run(main())
