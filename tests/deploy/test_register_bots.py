"""``deploy/register_bots.py``, the compose file's ``bots-init``: registers the example bots once,
each token in its own file, against a real Redis; run again it keeps what is there, and a bot
whose token file was lost gets a new token."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sueca.arena.redisproc import RedisServer
from sueca.arena.store import Store

SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "register_bots.py"


def _register(url: str, tokens: Path, *names: str) -> str:
    run = subprocess.run([sys.executable, str(SCRIPT), "--redis", url, "--dir", str(tokens),
                          *names], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_bots_are_registered_once_and_a_lost_token_is_replaced(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    with RedisServer() as server:
        registry = Store.from_url(server.url).bots
        out = _register(server.url, tokens, "random", "heuristic")
        assert out.count("registered, token in") == 2
        first = {n: (tokens / n).read_text().strip() for n in ("random", "heuristic")}
        assert all(registry.verify(n, t) for n, t in first.items())

        again = _register(server.url, tokens, "random", "heuristic")
        assert again.count("token already in") == 2
        assert {n: (tokens / n).read_text().strip() for n in first} == first

        (tokens / "random").unlink()  # the volume lost one file
        _register(server.url, tokens, "random", "heuristic")
        new = (tokens / "random").read_text().strip()
        assert new != first["random"] and registry.verify("random", new)
        assert not registry.verify("random", first["random"])
        assert registry.verify("heuristic", first["heuristic"])
