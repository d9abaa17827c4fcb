"""A bot's failure in :func:`play_match` names its seat (:class:`BotFailed`): its play or
redeal raised or gave an answer the rules refuse, or one of its hooks raised (the seat whose
hook it was, not the seat to play). The detail is the error's first line, capped; the bot's
exception is the cause; Ctrl-C is not a bot's failure."""

from __future__ import annotations

import random

import pytest

from sueca.engine import DEFAULT, BotFailed, Match, Variant, play_match
from sueca.engine.errors import CardError
from sueca.engine.playout import DETAIL_CHARS


class Legal:
    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def play(self, obs):
        return self.rng.choice(obs.legal)


class RaisesAt(Legal):
    """Raises on its n-th card (a lead or a follow)."""

    def __init__(self, n: int, error: BaseException) -> None:
        super().__init__()
        self.n, self.error = n, error

    def play(self, obs):
        self.n -= 1
        if self.n == 0:
            raise self.error
        return super().play(obs)


class TrickHook(Legal):
    def on_trick_end(self, trick):
        raise RuntimeError("hook broke\nsecond line")


@pytest.mark.parametrize("hooked", [False, True])  # the fast path and the plain one
@pytest.mark.parametrize("seat", range(4))
def test_the_seat_that_raised_is_named(seat: int, hooked: bool) -> None:
    bots: list[Legal] = [Legal(s) for s in range(4)]
    bots[seat] = RaisesAt(3, ValueError("x" * 500 + "\nmore"))
    if hooked:  # a hook that does nothing sends every seat down the plain path
        bots[(seat + 1) % 4].on_deal_end = lambda result: None  # type: ignore[attr-defined]
    match = Match(DEFAULT, 7)
    with pytest.raises(BotFailed) as err:
        play_match(match, bots)
    failed = err.value
    assert failed.seat == seat == match.deal.turn and failed.match is match and match.end is None
    assert failed.__cause__ is failed.error and type(failed.error) is ValueError
    assert failed.detail == "ValueError: " + "x" * (DETAIL_CHARS - 12) + "..."
    assert str(failed).startswith(f"the bot of seat {seat} failed: ValueError: xxx")


def test_a_hook_that_raises_is_its_own_seats_failure() -> None:
    bots = [Legal(0), Legal(1), TrickHook(2), Legal(3)]
    match = Match(DEFAULT, 3)
    with pytest.raises(BotFailed) as err:
        play_match(match, bots)
    assert err.value.seat == 2 and err.value.detail == "RuntimeError: hook broke"
    assert len(match.deal.tricks) == 1  # raised as the first trick closed


def test_an_answer_the_rules_refuse_and_a_raising_redeal() -> None:
    class Garbage(Legal):
        def play(self, obs):
            return "not a card"

    with pytest.raises(BotFailed) as err:
        play_match(Match(DEFAULT, 1), [Garbage()] * 4)
    assert isinstance(err.value.error, CardError) and "'not a card'" in err.value.detail

    class BadRedeal(Legal):
        def redeal(self, obs):
            raise KeyError("redeal")

    weak = next(s for s in range(2000) if Match(Variant(weak_hand_redeal=True), s)
                .awaiting_redeal)
    match = Match(Variant(weak_hand_redeal=True), weak)
    with pytest.raises(BotFailed) as err:
        play_match(match, [BadRedeal(s) for s in range(4)])
    assert err.value.seat == match.deal.turn and err.value.detail == "KeyError: 'redeal'"


def test_ctrl_c_is_not_a_bots_failure() -> None:
    with pytest.raises(KeyboardInterrupt):
        play_match(Match(DEFAULT, 1), [RaisesAt(2, KeyboardInterrupt())] + [Legal()] * 3)
