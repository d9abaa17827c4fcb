"""Golden replays: a few whole matches checked in, replayed card by card through the engine.

Each file in ``golden/`` holds one sueca-replay/1 record played by the example bots. The test
re-plays it move by move — every card must be legal for the seat to move (or be the recorded
renúncia), every trick must have the recorded winner and points, every deal the recorded score —
and then plays the same match again with the same bots and seed, which must give the same record
byte for byte. A change to the rules, the deal, the scoring or the bots shows up here as a diff.
After an intended change: ``pytest tests/engine/test_engine_golden.py --regen-golden``
and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sueca.engine import Match, SeatView, Variant, card, replay

GOLDEN = Path(__file__).parent / "golden"

# name -> (bot of team 0, bot of team 1, seed, variant words); sources of each rule in docs/rules.md
CASES = {
    "default_heuristic_vs_random": ("heuristic", "random", 1, []),
    "renuncia_reckless_vs_heuristic": ("reckless", "heuristic", 2, []),
    "variants_first_double_target8_redeal": (
        "random", "heuristic", 42,  # a redeal, and a 60-60 tie doubled
        ["trump_card=first", "tie=double", "target=8", "bandeira=all_points",
         "weak_hand_redeal=on"]),
    "tie_none_heuristic_mirror": ("heuristic", "heuristic", 35, ["tie=none"]),  # a 60-60 tie
}


def _play(name: str) -> dict:
    from sueca.sdk.bots import load_bot
    from sueca.sdk.local import play_local

    a, b, seed, words = CASES[name]
    bots = [load_bot(a), load_bot(b), load_bot(a), load_bot(b)]
    seats = [a, b, a, b]
    variant = Variant.parse(words)
    match = play_local(bots, variant, seed, f"golden-{name}", seats)
    return replay.record(match, f"golden-{name}", seats)


def _path(name: str) -> Path:
    return GOLDEN / f"{name}.jsonl"


@pytest.fixture(scope="module")
def regen(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--regen-golden"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_replay_move_by_move(name: str, regen: bool) -> None:
    if regen:
        GOLDEN.mkdir(exist_ok=True)
        _path(name).write_text(json.dumps(_play(name), separators=(",", ":")) + "\n")
    rec = json.loads(_path(name).read_text())
    deals = rec["deals"]
    match = Match(Variant.from_dict(rec["variant"]), seed=rec["seed"],
                  decks=[d["deck"] for d in deals], first_dealer=deals[0]["dealer"])
    for k, d in enumerate(deals):
        assert match.deal.number == k and match.deal.dealer == d["dealer"]
        assert str(match.deal.trump) == d["trump"]
        for seat in range(4):
            assert sorted(map(str, SeatView(match, seat).hand)) == sorted(d["hands"][seat])
        if match.awaiting_redeal:
            result = match.redeal(d["end"] == "redeal")
            if result is not None:
                assert result.end == "redeal"
                continue
        for t in d["tricks"]:
            assert match.deal.leader == t["leader"]
            for i, text in enumerate(t["cards"]):
                seat = match.deal.turn
                assert seat == (t["leader"] + i) % 4
                c = card(text)
                view = SeatView(match, seat)
                fault = d["end"] == "renuncia" and t is d["tricks"][-1] and i == len(t["cards"]) - 1
                assert (c in view.legal) != fault, f"deal {k}: {text} by seat {seat}"
                played = match.play(c)
            assert played.trick is not None
            assert (played.trick.winner, played.trick.points) == (t["winner"], t["points"])
        assert played.deal is not None
        assert list(played.deal.points) == d["points"]
        assert list(played.deal.game_points) == d["game_points"]
        assert played.deal.end == d["end"]
    assert match.over
    assert replay.record(match, rec["match_id"], rec["seats"]) == rec


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_match_is_reproduced_by_its_bots_and_seed(name: str) -> None:
    assert _play(name) == json.loads(_path(name).read_text())


def test_golden_set_covers_the_interesting_ends() -> None:
    ends, ties = set(), 0
    for name in CASES:
        for d in json.loads(_path(name).read_text())["deals"]:
            ends.add(d["end"])
            ties += d["points"] == [60, 60] and d["end"] == "normal"
    assert {"normal", "renuncia", "redeal"} <= ends
    assert ties >= 2
