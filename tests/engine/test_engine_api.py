"""The engine's public surface and its purity (import-linter's contract: "the engine must stay free of
grpc, redis, celery and prometheus so that bots, tools and tests can use it alone")."""

import json
import subprocess
import sys

from kits.deals import ROOT_DIR

import sueca.engine

INTENDED = {
    "CARDS", "SUITS", "RANKS", "Card", "card", "cards_of", "parse_card", "parse_cards",
    "CardError", "CardNotInHandError", "DeckError", "GameOverError", "IllegalPlayError",
    "NotYourTurnError", "RedealError", "RenunciaError", "ReplayError", "SuecaError",
    "VariantError", "Deal", "DealResult", "Match", "Play", "Trick", "deal_game_points",
    "shuffled_deck", "team_of", "Observation", "SeatView", "Snapshot", "play_match", "DEFAULT",
    "Variant", "End", "legal_mask", "trick_keys", "Player", "BotFailed",
}
FORBIDDEN = ("grpc", "redis", "celery", "prometheus_client", "google.protobuf")


def test_all_names_exactly_the_public_api():
    """The public API is what __all__ lists: no more, no less, no duplicates."""
    names = sueca.engine.__all__
    assert len(names) == len(set(names))
    assert set(names) == INTENDED
    for name in names:
        assert getattr(sueca.engine, name) is not None, name


def test_each_public_name_is_importable_in_a_fresh_interpreter():
    """``from sueca.engine import X`` works for every name in __all__, and ``import *``
    gives exactly those."""
    code = (
        "import json, sueca.engine as e\n"
        "ns = {}\n"
        "exec('from sueca.engine import *', ns)\n"
        "ns.pop('__builtins__')\n"
        "for n in e.__all__:\n"
        "    exec(f'from sueca.engine import {n}')\n"
        "print(json.dumps(sorted(ns)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT_DIR, capture_output=True,
                         text=True, check=True, timeout=60)
    assert set(json.loads(out.stdout)) == INTENDED


def test_engine_imports_no_service_dependencies():
    """The engine is pure standard library (also a contract in pyproject's import-linter
    configuration): no grpc, redis, celery or prometheus, so bots and tools can use it alone."""
    code = (
        "import json, sys\n"
        "import sueca.engine, sueca.engine.replay, sueca.engine.playout\n"
        "import sueca.engine.observation, sueca.engine.variant\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT_DIR, capture_output=True,
                         text=True, check=True, timeout=60)
    loaded = json.loads(out.stdout)
    bad = [m for m in loaded if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert bad == []
    assert "sueca.engine" in loaded
