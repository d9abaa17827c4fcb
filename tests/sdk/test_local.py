"""In-process play: reproducible from the seed, bots started like a referee would, duplicates."""

from __future__ import annotations

from typing import Any

import pytest

from sueca.engine import Variant
from sueca.engine import replay as replays
from sueca.sdk import MatchInfo, bot_seed
from sueca.sdk.bots import HeuristicBot, RandomBot, RecklessBot
from sueca.sdk.local import play_duplicate, play_local, swap_teams

NAMES = ["h", "r", "h2", "k"]
BOTS = [HeuristicBot, RandomBot, HeuristicBot, RecklessBot]


def test_same_seed_same_replay() -> None:
    variant = Variant(tie="double", target=8)
    recs = [replays.record(play_local(BOTS, variant, 42, "m", NAMES), "m", NAMES) for _ in range(2)]
    assert recs[0] == recs[1]
    assert replays.verify(recs[0]) == []
    other = replays.record(play_local(BOTS, variant, 43, "m", NAMES), "m", NAMES)
    assert other["deals"][0]["deck"] != recs[0]["deals"][0]["deck"]


def test_bots_are_started_with_their_seat_and_seed() -> None:
    seen: list[MatchInfo] = []

    class Recorder(RandomBot):
        def on_match_start(self, info: MatchInfo) -> None:
            seen.append(info)

    variant = Variant(target=8)
    play_local([Recorder] * 4, variant, 7, "match-7", NAMES)
    assert [i.seat for i in seen] == [0, 1, 2, 3]
    assert all(i.match_id == "match-7" and i.seats == tuple(NAMES) and i.variant == variant
               for i in seen)
    assert [i.bot_seed for i in seen] == [bot_seed(7, s) for s in range(4)]


def test_factories_and_plain_objects_with_play() -> None:
    class Plain:  # no Bot base class, no start(): only play()
        def play(self, observation: Any) -> Any:
            return observation.legal[0]

    match = play_local([Plain, lambda: Plain(), Plain, Plain], seed=1)
    assert match.over


def test_duplicate_pair_same_cards_teams_swapped() -> None:
    bots = [HeuristicBot, RandomBot, HeuristicBot, RandomBot]
    names = ["H", "R", "H", "R"]
    first, second = play_duplicate(bots, seed=5, match_ids=("a", "b"), seat_names=names)
    assert first.first_dealer == second.first_dealer
    shared = min(len(first.deals), len(second.deals))
    assert [d.deck for d in first.deals[:shared]] == [d.deck for d in second.deals[:shared]]
    rec = replays.record(second, "b", swap_teams(names))
    assert rec["seats"] == ["R", "H", "R", "H"]
    assert swap_teams([0, 1, 2, 3]) == [1, 0, 3, 2]


def test_wrong_number_of_bots() -> None:
    with pytest.raises(ValueError, match="4 bots"):
        play_local([RandomBot] * 3, seed=1)
