"""exec: bots' speed: the C example bot through ``exec:`` beside the same strategy in Python.

Beside bare pipe round trips to the same program too.

What an ``exec:`` bot costs is the line protocol: a JSON line out, a pipe, the program, a JSON
line back. The C example (``sdk/examples/c/bot.c``, compiled here with ``cc -O2``; one process
for every game) is about the fastest program that can sit behind it, so its figure is the
protocol's ceiling; :class:`CheapestWinner` is its strategy card for card in Python, the
baseline measured in the same run (the two play the same cards: the run checks that they end
every match with the same score).

- ``selfplay``: matches in this process as ``sueca-bot selfplay`` plays them, the bot against
  ``random``, in alternating blocks of the same seeds: ``exec`` (the C bot, up to
  :data:`~sueca.sdk.selfplay.IN_FLIGHT` matches in flight on its one process, its turns
  batched), ``exec_serial`` (the C bot one match at a time) and ``python`` (the twin);
  ``moves_per_s`` counts the bot's own moves. ``exec_move_us`` is the exec run's wall time over
  its moves (the engine and the opponent's moves included); ``serial_exec_move_us`` the time
  inside the one-at-a-time bot's ``play``. After each block, ``bare_round_trip_us``: the turn
  lines of those matches written one at a time to another process of the same program on
  plain pipes, each answer read back, blocking: the floor of a move played alone.
- ``network`` (unless ``--no-network``): a private Redis and referee, the C bot and the Python
  bot each a ``sueca-bot run`` process, ``random`` in a third; ``--concurrency`` matches at once
  through the referee, the two sides in alternating blocks; ``moves_per_s`` counts every seat's
  moves (the referee's throughput with that bot in two seats).

The last line is one JSON object: the details, and ``selfplay_ratio``,
``bare_round_trip_us``, ``exec_move_us``, ``ratio_to_bare`` and ``network_ratio``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sueca.arena.local_arena import LocalArena
from sueca.engine import DEFAULT
from sueca.referee import control
from sueca.sdk import Bot
from sueca.sdk.bots import RandomBot, load_bot
from sueca.sdk.cli import Bounded, UserError
from sueca.sdk.execbot import protocol
from sueca.sdk.selfplay import IN_FLIGHT, in_flight, play_many

BLOCKS = 4
POINTS = (0, 0, 0, 0, 0, 2, 3, 4, 10, 11)


class CheapestWinner(Bot):
    """``sdk/examples/c/bot.c``'s strategy: take the trick with the cheapest card that can
    (plain cards before trumps), feed points to a partner who is winning, else throw the
    cheapest card; lead the strongest plain card, else the weakest trump. Never redeals."""

    def play(self, observation: Any) -> Any:
        legal = observation.legal
        trump = observation.trump_suit
        trick = [c for _, c in observation.trick]
        best = None
        if not trick:
            for c in legal:
                if c // 10 != trump and (best is None or c % 10 > best % 10):
                    best = c
            if best is not None:
                return best
            for c in legal:
                if best is None or c % 10 < best % 10:
                    best = c
            return best
        led, win = trick[0] // 10, 0
        for i in range(1, len(trick)):
            if _beats(trick[i], trick[win], led, trump):
                win = i
        partner_wins = len(trick) - win == 2
        if not partner_wins:
            for c in legal:
                if _beats(c, trick[win], led, trump) and (best is None or (
                        (c // 10 == trump, c % 10) < (best // 10 == trump, best % 10))):
                    best = c
            if best is not None:
                return best
        sign = -1 if partner_wins else 1
        best_key = 1 << 30
        for c in legal:
            key = (c // 10 == trump) * 100 + sign * POINTS[c % 10] * 10 + c % 10
            if key < best_key:
                best, best_key = c, key
        return best


def _beats(a: int, b: int, led: int, trump: int) -> bool:
    if a // 10 == b // 10:
        return a % 10 > b % 10
    return a // 10 == trump or (a // 10 == led and b // 10 != trump)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--matches", action=Bounded, kind=int, low=BLOCKS, default=200,
                        help="self-play matches on each side (200)")
    parser.add_argument("--net-matches", action=Bounded, kind=int, low=1, default=100,
                        help="matches through the referee on each side (100)")
    parser.add_argument("--concurrency", action=Bounded, kind=int, low=1, default=8,
                        help="matches at once through the referee (8)")
    parser.add_argument("--no-network", action="store_true",
                        help="self-play only: no Redis, referee or bot processes")


def compile_c(out_dir: Path) -> Path:
    """The C example, compiled into ``out_dir``; a UserError naming what is missing."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise UserError("no C compiler (cc): install one, e.g. apt-get install gcc")
    source = _examples() / "c" / "bot.c"
    if not source.is_file():
        raise UserError(f"no {source}: bench exec runs from a source tree of the project")
    out = out_dir / "bot"
    done = subprocess.run([cc, "-O2", "-o", str(out), str(source)], capture_output=True,
                          text=True, timeout=120)
    if done.returncode != 0:
        raise UserError(f"cc could not build {source}: {done.stderr.strip()[:300]}")
    return out


def _examples() -> Path:
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "sdk" / "examples").is_dir():
            return parent / "sdk" / "examples"
    return Path("sdk/examples").resolve()


def selfplay(exec_spec: str, program: Path, matches: int) -> dict[str, Any]:
    """Each side on the same seeds, in alternating blocks: the exec bot with matches in flight
    (as ``sueca-bot selfplay`` plays it), the exec bot one match at a time, the Python twin;
    each block followed by bare round trips of the turn lines those matches sent, to another
    process of the same program."""
    exec_factory = load_bot(exec_spec)
    spent = [0]  # nanoseconds inside the one-at-a-time exec bot's play and redeal

    def timed() -> Any:
        bot: Any = exec_factory()
        for name in ("play", "redeal"):
            setattr(bot, name, _timed(getattr(bot, name), spent))
        return bot

    # name -> (factory, matches at once)
    sides: dict[str, tuple[Any, int]] = {"exec": (exec_factory, IN_FLIGHT),
                                         "exec_serial": (timed, 1),
                                         "python": (CheapestWinner, 1)}
    deals = dict.fromkeys(sides, 0)
    seconds = dict.fromkeys(sides, 0.0)
    cpu = dict.fromkeys(sides, 0.0)  # this process's CPU seconds (the program's not counted)
    scores: dict[str, list[tuple[int, int]]] = {k: [] for k in sides}
    per_block = matches // BLOCKS
    bare_seconds, bare_cpu, trips = 0.0, 0.0, 0
    at_once = 1
    with BareProgram(program) as bare:
        for block in range(BLOCKS):
            seed = f"bench-{block}"
            for name, (factory, most) in sides.items():
                t, c = time.perf_counter(), time.process_time()
                k = in_flight([factory, RandomBot], most)
                at_once = max(at_once, k)
                played = play_many([factory, RandomBot], [name, "random"], variant=DEFAULT,
                                   matches=range(per_block), seed=seed, at_once=k)
                for match, _, _ in played:
                    deals[name] += len(match.deals)
                    scores[name].append(tuple(match.game_points))  # type: ignore[arg-type]
                seconds[name] += time.perf_counter() - t
                cpu[name] += time.process_time() - c
            lines = turn_lines(seed, per_block)
            c = time.process_time()
            bare_seconds += bare.round_trips(lines)
            bare_cpu += time.process_time() - c
            trips += len(lines)
    out: dict[str, Any] = {"matches": per_block * BLOCKS, "at_once": at_once,
                           "same_play": scores["exec"] == scores["python"] == scores[
                               "exec_serial"]}
    for name in sides:
        moves = deals[name] * 20  # the bot's two seats play half of each deal's 40 cards
        out[name] = {"deals": deals[name], "seconds": round(seconds[name], 3),
                     "moves_per_s": round(moves / seconds[name]),
                     "cpu_us_per_move": round(cpu[name] / moves * 1e6, 1)}
    exec_moves = deals["exec"] * 20
    python_move = seconds["python"] / (deals["python"] * 20)
    out["ratio"] = round(out["exec"]["moves_per_s"] / out["python"]["moves_per_s"], 3)
    out["serial_ratio"] = round(
        out["exec_serial"]["moves_per_s"] / out["python"]["moves_per_s"], 3)
    out["us_per_exec_move"] = round((seconds["exec"] / exec_moves - python_move) * 1e6, 1)
    # a move through exec: with matches in flight, everything counted: the wall time of the
    # run over the bot's moves (the engine and the opponent's moves included)
    out["exec_move_us"] = round(seconds["exec"] / exec_moves * 1e6, 1)
    out["serial_exec_move_us"] = round(spent[0] / (deals["exec_serial"] * 20) / 1e3, 1)
    out["bare_round_trip_us"] = round(bare_seconds / trips * 1e6, 1)
    out["bare_round_trips"] = trips
    # CPU of this process: what a move through exec: adds to the Python twin's move (its
    # strategy included), and what a bare round trip spends on its two system calls
    out["exec_move_cpu_us"] = round(
        (cpu["exec"] / exec_moves - cpu["python"] / (deals["python"] * 20)) * 1e6, 1)
    out["bare_round_trip_cpu_us"] = round(bare_cpu / trips * 1e6, 1)
    out["ratio_to_bare"] = round(out["exec_move_us"] / out["bare_round_trip_us"], 2)
    return out


def _timed(fn: Any, spent: list[int]) -> Any:
    def call(observation: Any) -> Any:
        t = time.perf_counter_ns()
        try:
            return fn(observation)
        finally:
            spent[0] += time.perf_counter_ns() - t
    return call


def turn_lines(seed: str, matches: int) -> list[bytes]:
    """The turn lines the exec bot is sent in those matches (as the Python twin plays the
    same cards, its observations are the C bot's)."""
    lines: list[bytes] = []

    class Recorder(CheapestWinner):
        def on_match_start(self, info: Any) -> None:
            self.text = protocol.GameLines(f"{info.match_id}/{info.seat}")
            self.turns = 0

        def play(self, observation: Any) -> Any:
            self.turns += 1
            lines.append(self.text.turn(self.turns, "play", observation, 10_000))
            return super().play(observation)

    for _ in play_many([Recorder, RandomBot], ["exec", "random"], variant=DEFAULT,
                       matches=range(matches), seed=seed):
        pass
    return lines


class BareProgram:
    """The program on plain pipes, nothing between: each round trip writes one turn line and
    reads until the answer's newline, blocking (the floor any exec: move stands on)."""

    def __init__(self, program: Path) -> None:
        self.proc = subprocess.Popen([str(program)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=0)
        assert self.proc.stdin and self.proc.stdout
        self.fd_in, self.fd_out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.write(self.fd_in, protocol.hello())
        self._answer()

    def _answer(self) -> bytes:
        data = os.read(self.fd_out, 65536)
        while not data.endswith(b"\n"):
            more = os.read(self.fd_out, 65536)
            if not more:
                raise UserError(f"the bare program exited: {data[-200:]!r}")
            data += more
        return data

    def round_trips(self, lines: list[bytes]) -> float:
        """Seconds for one round trip of each of ``lines``."""
        write, answer = os.write, self._answer
        fd = self.fd_in
        t = time.perf_counter()
        for line in lines:
            write(fd, line)
            answer()
        return time.perf_counter() - t

    def __enter__(self) -> BareProgram:
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()


def network(exec_spec: str, matches: int, concurrency: int) -> dict[str, Any]:
    """Matches through a private referee, the two sides in alternating blocks of the same
    seeds."""
    bots = {"exec-c": exec_spec, "python-twin": f"{__name__}:CheapestWinner",
            "random": "random"}
    sides = {"exec": "exec-c", "python": "python-twin"}
    moves = dict.fromkeys(sides, 0)
    seconds = dict.fromkeys(sides, 0.0)
    per_block = max(1, matches // BLOCKS)
    out: dict[str, Any] = {"matches": per_block * BLOCKS, "concurrency": concurrency}
    with LocalArena(bots=bots, capacity=2 * concurrency, workers=0) as arena:
        with control.channel(arena.referee) as channel:
            for block in range(BLOCKS):
                for name, side in sides.items():
                    seats = [side, "random", side, "random"]

                    def one(i: int, seats: list[str] = seats) -> int:
                        result = control.run_match(arena.referee, {"bots": seats, "seed": i},
                                                   channel=channel)
                        replay: Any = result["replay"]
                        return sum(len(d["tricks"]) * 4 for d in replay["deals"])

                    t = time.perf_counter()
                    with ThreadPoolExecutor(concurrency) as pool:
                        moves[name] += sum(pool.map(one, range(block * per_block,
                                                               (block + 1) * per_block)))
                    seconds[name] += time.perf_counter() - t
    for name in sides:
        out[name] = {"moves": moves[name], "seconds": round(seconds[name], 3),
                     "moves_per_s": round(moves[name] / seconds[name])}
    out["ratio"] = round(out["exec"]["moves_per_s"] / out["python"]["moves_per_s"], 3)
    return out


def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="sueca-bench-exec-") as tmp:
        program = compile_c(Path(tmp))
        spec = f"exec:{program}"
        print(f"self-play: {args.matches} matches on each side...", file=sys.stderr, flush=True)
        result: dict[str, Any] = {"bench": "exec", "cpus": os.cpu_count(),
                                  "load": round(os.getloadavg()[0], 1),
                                  "selfplay": selfplay(spec, program, args.matches)}
        if not args.no_network:
            print(f"network: {args.net_matches} matches on each side, {args.concurrency} at "
                  "once...", file=sys.stderr, flush=True)
            result["network"] = network(spec, args.net_matches, args.concurrency)
    sp = result["selfplay"]
    print(f"self-play  C via exec {sp['exec']['moves_per_s']:>8,} moves/s ({sp['at_once']} at once)"
          f"   Python "
          f"{sp['python']['moves_per_s']:>8,} moves/s   ratio {sp['ratio']}   "
          f"+{sp['us_per_exec_move']} us/move")
    print(f"one at a time  C via exec {sp['exec_serial']['moves_per_s']:>8,} moves/s   ratio "
          f"{sp['serial_ratio']}   {sp['serial_exec_move_us']} us inside play")
    print(f"a move     through exec {sp['exec_move_us']} us   bare pipe round trip "
          f"{sp['bare_round_trip_us']} us   ratio {sp['ratio_to_bare']}")
    if "network" in result:
        net = result["network"]
        print(f"network    C via exec {net['exec']['moves_per_s']:>8,} moves/s   Python "
              f"{net['python']['moves_per_s']:>8,} moves/s   ratio {net['ratio']}")
    result["selfplay_ratio"] = sp["ratio"]
    result["bare_round_trip_us"] = sp["bare_round_trip_us"]
    result["exec_move_us"] = sp["exec_move_us"]
    result["ratio_to_bare"] = sp["ratio_to_bare"]
    result["network_ratio"] = result["network"]["ratio"] if "network" in result else None
    print(json.dumps(result))
    return 0
