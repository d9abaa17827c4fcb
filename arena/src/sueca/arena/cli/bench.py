"""``sueca-arena bench KIND``: benchmarks whose last output line is one JSON object.

Each kind lives in its own module and measures a baseline in the same run: machines are shared
and noisy, and a lone absolute time means little. A kind's module is imported only when that
kind is run: together they import numpy, uvicorn, Celery and the whole web stack.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

from sueca.arena.cli import LazyCommands

# kind -> (module, its docstring's first line); each module has add_arguments(parser) and
# run(args) -> int. The help is repeated here so `bench --help` imports none of them (a test
# holds it equal to the docstring).
KINDS = {
    "engine": ("sueca.arena.bench.engine", "Engine speed: random-vs-random deals per second, "
               "against a bare bitmask sketch of Sueca."),
    "exec": ("sueca.arena.bench.exec", "exec: bots' speed: the C example bot through ``exec:`` "
             "beside the same strategy in Python."),
    "env": ("sueca.arena.bench.env", "RL environment speed: agent steps/s of the PettingZoo env "
            "against the engine's playout."),
    "ladder": ("sueca.arena.bench.ladder", "Ladder convergence: how fast the ladder's pairings "
               "find the true order, against round robin."),
    "ladder-live": ("sueca.arena.bench.ladder_live", "Ladder throughput: matches/s of the "
                    "event-driven scheduler, against a tournament through Celery."),
    "grpc-pingpong": ("sueca.arena.bench.pingpong", "gRPC ping-pong: the bare grpc.aio "
                      "bidirectional round-trip rate, the referee's ceiling."),
    "ratings": ("sueca.arena.bench.ratings", "Rating of record: seconds to refit 100,000 results "
                "among 1,000 bots, against the live Elo fold."),
    "retention": ("sueca.arena.bench.retention", "Redis bytes per recorded match, and what "
                  "retention gives back: records ``--matches`` matches."),
    "serve": ("sueca.arena.bench.serve", "What a club's serve costs: CPU share and data growth "
              "of serve --example-bots at a pace."),
    "strength": ("sueca.arena.bench.strength", "Bot strength: single deals won by a bot "
                 "(``pimc``) against ``heuristic`` in duplicate matches."),
    "hostile": ("sueca.arena.bench.hostile", "Honest matches/s on a referee under attack by "
                "hostile clients, against none, in the same run."),
    "redis-writes": ("sueca.arena.bench.redis_writes", "Redis writes per match: the league's "
                     "cost in Redis, counted, for sizing."),
    "referee": ("sueca.arena.bench.referee", "Referee throughput: real bots over gRPC, matches "
                "through the control API, against ping-pong."),
    "tournament": ("sueca.arena.bench.tournament", "Tournament throughput: matches/s through "
                   "Celery and Redis against straight RunMatch calls."),
    "wan": ("sueca.arena.bench.wan", "Bots across the internet: the referee bench with a "
            "delaying proxy between bots and referee."),
    "web": ("sueca.arena.bench.web", "Web pages with a large history: server time of each page "
            "over 100,000 matches and 1,000 bots."),
}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("bench", help="run a benchmark (last line: one JSON object)")
    kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
    assert isinstance(kinds, LazyCommands)  # every parser of the CLI's tree makes these
    for kind, (module_name, help) in KINDS.items():
        kinds.add_lazy(kind, help.replace("%", "%%"), _kind_loader(kind, module_name, help))


def _kind_loader(kind: str, module_name: str, help: str) -> Callable[[LazyCommands], None]:
    def load(kinds: LazyCommands) -> None:
        module = importlib.import_module(module_name)
        parser = kinds.add_parser(kind, help=help.replace("%", "%%"))
        module.add_arguments(parser)
        parser.set_defaults(func=module.run)
    return load
