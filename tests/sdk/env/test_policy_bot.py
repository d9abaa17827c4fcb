"""PolicyBot: a function (observation array, action mask) -> card plays as a bot named
``./agent.py:make_bot`` in self-play, ``duel`` and against a real referee (a ``sueca-bot run``
process), and sees the very arrays the environment gives for the same positions."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kits.net import SEED_KEY  # the test referees key their bots' seeds with it

from sueca.engine import Variant
from sueca.engine import replay as replays
from sueca.referee import control
from sueca.sdk.bots import RandomBot, check_bot, load_bot
from sueca.sdk.env import PolicyBot, PolicyError, raw_env
from sueca.sdk.local import play_local
from sueca.sdk.selfplay import MatchFailed, selfplay

BIN = Path(sys.executable).parent

AGENT = '''
import hashlib
import os

from sueca.sdk.env import PolicyBot


def policy(observation, mask):
    """A card chosen from the whole array: another array, another card."""
    legal = mask.nonzero()[0]
    log = os.environ.get("AGENT_LOG")
    if log:
        with open(log, "a") as f:
            f.write(hashlib.sha256(observation.tobytes() + mask.tobytes()).hexdigest() + "\\n")
    return int(legal[int(observation.sum() * 7919) % len(legal)])


def make_bot():
    return PolicyBot(policy)
'''


def array_policy(observation: np.ndarray, mask: np.ndarray) -> int:
    """The agent file's choice, in this process."""
    legal = mask.nonzero()[0]
    return int(legal[int(observation.sum() * 7919) % len(legal)])


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    path = tmp_path / "agent.py"
    path.write_text(AGENT)
    return path


def test_a_policy_sees_the_same_arrays_in_the_env_and_in_self_play() -> None:
    """The env's match (its decks and first dealer) replayed by play_local with four
    PolicyBots of the same policy: every array and mask a seat sees is the env's."""
    e = raw_env()
    e.reset(seed=17)
    seen_env: list[tuple[int, bytes, bytes]] = []
    for agent in e.agent_iter():
        obs, _r, term, _t, _i = e.last()
        if term:
            e.step(None)
            continue
        seen_env.append((int(agent[-1]), obs["observation"].tobytes(),
                         obs["action_mask"].tobytes()))
        e.step(array_policy(obs["observation"], obs["action_mask"]))
    match = e.game.match
    seen_local: list[tuple[int, bytes, bytes]] = []

    def bot_for(seat: int) -> Any:
        def policy(observation: np.ndarray, mask: np.ndarray) -> int:
            assert observation.dtype == np.float32 and mask.dtype == np.int8
            seen_local.append((seat, observation.tobytes(), mask.tobytes()))
            return array_policy(observation, mask)
        return lambda: PolicyBot(policy)

    local = play_local([bot_for(s) for s in range(4)], match.variant,
                       decks=[d.deck for d in match.deals], first_dealer=match.first_dealer)
    assert len(seen_env) == len(seen_local) > 40
    assert seen_local == seen_env
    assert local.game_points == match.game_points


def test_the_agent_file_is_a_bot_for_self_play_and_duel(agent: Path) -> None:
    spec = f"{agent}:make_bot"
    factory = load_bot(spec)
    check_bot(spec, factory)  # what every command does at start-up
    summary = selfplay([factory, RandomBot], ["agent", "random"], matches=6, seed=1)
    assert summary["bots"][0]["matches"] == 6 and summary["bots"][0]["faults"] == 0
    duel = subprocess.run([str(BIN / "sueca-bot"), "duel", "./agent.py:make_bot", "random",
                           "--matches", "4", "--workers", "1", "--json"],
                          cwd=agent.parent, capture_output=True, text=True, timeout=120)
    assert duel.returncode in (0, 1, 3), duel.stderr
    result = json.loads(duel.stdout.strip().splitlines()[-1])
    assert result["matches"] == 4, result


def test_a_policy_that_answers_no_legal_card_is_a_clear_error() -> None:
    def bad(observation: np.ndarray, mask: np.ndarray) -> int:
        return int(np.flatnonzero(mask == 0)[0])

    with pytest.raises(MatchFailed, match=r"PolicyError: .policy answered \d+: not a legal card; "
                                          r"the legal card numbers are \d+ \("):
        selfplay([lambda: PolicyBot(bad), RandomBot], ["bad", "random"], matches=1, seed=1)
    with pytest.raises(MatchFailed, match=r"policy answered 'AS': not a card number"):
        selfplay([lambda: PolicyBot(lambda o, m: "AS"), RandomBot], ["bad", "random"],
                 matches=1, seed=1)
    with pytest.raises(TypeError, match="PolicyBot needs a function"):
        PolicyBot(3)  # type: ignore[arg-type]
    assert issubclass(PolicyError, ValueError)


def _log_lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.slow
def test_the_agent_plays_over_the_network_as_in_self_play(
        agent: Path, referee: Any, tokens: dict[str, str], bot_proc: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``sueca-bot run ./agent.py:make_bot`` against a real referee plays the same cards, and
    its policy is shown the same arrays (hashed into a log), as the same match in-process."""
    remote_log, local_log = tmp_path / "remote.log", tmp_path / "local.log"
    bot_proc(f"{agent}:make_bot", referee.address, tokens["north"], capacity=4,
             env={"AGENT_LOG": str(remote_log)})
    bot_proc("random", referee.address, tokens["east"], capacity=4)
    variant = {"weak_hand_redeal": True, "trump_card": "first"}
    seats = ["north", "east", "north", "east"]
    remote = control.run_match(referee.address, {"bots": seats, "seed": 5, "variant": variant})
    assert remote["end"] == "normal", remote
    monkeypatch.setenv("AGENT_LOG", str(local_log))
    factories = [load_bot(f"{agent}:make_bot"), RandomBot]
    local = play_local([factories[s % 2] for s in range(4)], Variant.from_dict(variant), 5,
                       "local", seats, seed_key=SEED_KEY.encode())
    here = replays.record(local, "local", seats)
    assert here["deals"] == remote["replay"]["deals"]  # every deck, card, trick and score
    hashes = _log_lines(local_log)
    assert len(hashes) >= 40 and _log_lines(remote_log) == hashes
    assert hashes[0] != hashes[1]  # the log holds the arrays, not a constant
    assert hashlib.sha256(b"").hexdigest() not in hashes
