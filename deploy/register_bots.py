"""Register the example bots once and leave each token in a file: ``TOKENS_DIR/NAME``.

The compose file runs this before the bots start (``bots-init``), so ``docker compose up`` needs
no manual step. A bot whose token file exists is left alone; a bot registered in Redis without a
token file (the volume was lost) gets a fresh token, because tokens are only stored hashed.

    python register_bots.py --redis redis://redis:6379/0 --dir /tokens heuristic random
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sueca.arena.settings import current
from sueca.arena.store import Store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default=current().redis_url or "redis://redis:6379/0")
    parser.add_argument("--dir", default="/tokens", type=Path)
    parser.add_argument("names", nargs="+")
    args = parser.parse_args(argv)

    registry = Store.from_url(args.redis).bots
    args.dir.mkdir(parents=True, exist_ok=True)
    for name in args.names:
        path = args.dir / name
        if path.exists() and path.read_text().strip() and registry.exists(name):
            print(f"{name}: token already in {path}")
            continue
        if registry.exists(name):
            registry.remove(name)  # its token was lost with the volume: issue a new one
        token = registry.add(name)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(token + "\n")
        tmp.replace(path)
        print(f"{name}: registered, token in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
