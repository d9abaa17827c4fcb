"""``sueca-arena bench KIND``: benchmarks whose last output line is one JSON object.

Each kind lives in its own module (imported only when run) and measures a baseline in the same
run: machines are shared and noisy, and a lone absolute time means little.
"""

from __future__ import annotations

import argparse
import importlib

# kind -> module; each module has add_arguments(parser) and run(args) -> int
KINDS = {
    "engine": "sueca.arena.bench.engine",
    "exec": "sueca.arena.bench.exec",
    "env": "sueca.arena.bench.env",
    "ladder": "sueca.arena.bench.ladder",
    "ladder-live": "sueca.arena.bench.ladder_live",
    "grpc-pingpong": "sueca.arena.bench.pingpong",
    "ratings": "sueca.arena.bench.ratings",
    "retention": "sueca.arena.bench.retention",
    "serve": "sueca.arena.bench.serve",
    "strength": "sueca.arena.bench.strength",
    "hostile": "sueca.arena.bench.hostile",
    "redis-writes": "sueca.arena.bench.redis_writes",
    "referee": "sueca.arena.bench.referee",
    "tournament": "sueca.arena.bench.tournament",
    "wan": "sueca.arena.bench.wan",
    "web": "sueca.arena.bench.web",
}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("bench", help="run a benchmark (last line: one JSON object)")
    kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
    for kind, module_name in KINDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name != module_name:
                raise
            continue
        p = kinds.add_parser(kind, help=(module.__doc__ or "").strip().splitlines()[0].replace("%", "%%"))
        module.add_arguments(p)
        p.set_defaults(func=module.run)
