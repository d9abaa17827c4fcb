"""The example bots: legal play, strength, faults on purpose, and finding bots by name."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from sueca.engine import DEFAULT, card
from sueca.engine.game import RENUNCIA
from sueca.sdk import MatchInfo
from sueca.sdk.bots import EXAMPLES, BotLoadError, HeuristicBot, RandomBot, RecklessBot, load_bot
from sueca.sdk.local import play_local, swap_teams


def checked(cls: type) -> type:
    """``cls`` with every card it plays checked against ``observation.legal``."""
    class Checked(cls):  # type: ignore[misc, valid-type]
        def play(self, observation: Any) -> Any:
            c = super().play(observation)
            assert c in observation.legal, f"{cls.__name__} played {c}, legal {observation.legal}"
            return c
    return Checked


@pytest.mark.parametrize("cls", [RandomBot, HeuristicBot])
def test_bot_plays_only_legal_cards(cls: type) -> None:
    for seed in range(25):
        match = play_local([checked(cls), checked(RandomBot)] * 2, seed=seed)
        assert match.winner in (0, 1)
        assert all(r.end != RENUNCIA for r in match.results)


def test_heuristic_beats_random_clearly() -> None:
    matches, wins = 200, 0
    for i in range(matches):
        seats = [HeuristicBot, RandomBot, HeuristicBot, RandomBot]
        heuristic_team = i % 2
        if heuristic_team:
            seats = swap_teams(seats)
        wins += play_local(seats, seed=10_000 + i).winner == heuristic_team
    assert wins / matches > 0.7, f"heuristic won only {wins} of {matches} against random"


def test_reckless_commits_renuncias_and_loses_those_deals() -> None:
    faults = 0
    for seed in range(20):
        match = play_local([RecklessBot, RandomBot, RecklessBot, RandomBot], seed=seed)
        for r in match.results:
            if r.end == RENUNCIA:
                faults += 1
                assert r.fault_seat in (0, 2)  # only the reckless seats fault
                assert r.game_points == (0, 4) or r.game_points[1] >= 4
    assert faults > 0


def test_bots_are_deterministic_given_the_seed() -> None:
    a = play_local([HeuristicBot, RecklessBot, RandomBot, HeuristicBot], seed=99)
    b = play_local([HeuristicBot, RecklessBot, RandomBot, HeuristicBot], seed=99)
    assert [t.cards for d in a.deals for t in d.tricks] == [t.cards for d in b.deals for t in d.tricks]


# -- heuristic decisions on hand-made positions -------------------------------------------------

def cs(text: str) -> tuple[Any, ...]:
    return tuple(card(t) for t in text.split())


def decide(seat: int, hand: str, trick: list[tuple[int, str]], trump: str = "AH",
           dealer: int = 0, legal: str | None = None) -> str:
    """What HeuristicBot in ``seat`` plays from ``hand`` with ``trick`` on the table."""
    bot = HeuristicBot()
    bot.start(MatchInfo("t", seat, ("h",) * 4, DEFAULT, 1))
    hand_cards = cs(hand)
    if legal is None:
        legal_cards = hand_cards
        if trick:
            led = card(trick[0][1]) // 10
            follow = tuple(c for c in hand_cards if c // 10 == led)
            legal_cards = follow or hand_cards
    else:
        legal_cards = cs(legal)
    trump_card = card(trump)
    obs = SimpleNamespace(
        seat=seat, hand=hand_cards, legal=legal_cards, trump=trump_card,
        trump_suit=trump_card // 10, trump_held=False, dealer=dealer, deal_number=0,
        tricks=(), trick=tuple((s, card(c)) for s, c in trick))
    return str(bot.play(obs))


def test_heuristic_smears_points_on_a_partner_sure_to_win() -> None:
    # seat 3 plays last; partner (seat 1) holds the trick with the ace
    assert decide(3, "7S 4S KD", [(0, "2S"), (1, "AS"), (2, "3S")]) == "7S"


def test_heuristic_wins_cheaply_when_last() -> None:
    # opponents lead K and Q of diamonds; the 7 wins as surely as the ace and keeps the ace
    assert decide(3, "AD 7D 3D 2C", [(0, "KD"), (1, "2D"), (2, "QD")]) == "7D"


def test_heuristic_keeps_a_seven_while_the_ace_is_out() -> None:
    assert decide(0, "7C 2C KH 4H", [], trump="AS", dealer=3) in ("2C", "4H")


def test_heuristic_trumps_a_point_rich_trick_but_not_a_poor_one() -> None:
    # seat 3 has no clubs; hearts are trump
    rich = [(0, "7C"), (1, "3C"), (2, "AC")]
    assert decide(3, "2H KS 4D", rich) == "2H"
    poor = [(0, "2C"), (1, "3C"), (2, "4C")]
    assert decide(3, "2H KS 4D", poor) == "4D"


# -- load_bot -----------------------------------------------------------------------------------

def test_load_bot_examples_and_module_class() -> None:
    for name, cls in EXAMPLES.items():
        assert load_bot(name) is cls
    assert load_bot("sueca.sdk.bots.random_bot:RandomBot") is RandomBot
    assert load_bot(" heuristic ") is HeuristicBot


@pytest.mark.parametrize("spec, quoted", [
    ("smartest", "'smartest'"),
    ("no.such.module:Bot", "'no.such.module'"),
    ("sueca.sdk.bots:NoSuchBot", "'NoSuchBot'"),
    ("sueca.sdk.bots:", "module:Class"),
    ("", "valid bots"),
])
def test_load_bot_errors_quote_the_bad_name(spec: str, quoted: str) -> None:
    with pytest.raises(BotLoadError) as err:
        load_bot(spec)
    assert quoted in str(err.value)
    if spec == "smartest":
        for name in EXAMPLES:
            assert name in str(err.value)


def test_load_bot_refuses_a_class_without_play() -> None:
    with pytest.raises(BotLoadError, match="play"):
        load_bot("sueca.sdk.bot:MatchInfo")


def test_redeal_answers() -> None:
    weak = SimpleNamespace(hand=cs("2H 3H 4C 5C 6S QS 2D 3D 4D 5D"), trump_suit=2)
    trumpy = SimpleNamespace(hand=cs("2H 3H 4H 5H 6S QS 2D 3D 4D 5D"), trump_suit=2)
    bot = HeuristicBot()
    bot.start(MatchInfo("t", 0, ("h",) * 4, DEFAULT, 1))
    assert bot.redeal(weak) is True and bot.redeal(trumpy) is False
    rb = RandomBot()
    rb.start(MatchInfo("t", 0, ("r",) * 4, DEFAULT, 1))
    assert {rb.redeal(weak) for _ in range(50)} == {True, False}
