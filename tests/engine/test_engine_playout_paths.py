"""The runner's fast path (bots without hooks) plays exactly as ``Deal.play`` does.

``play_match`` inlines the common case of ``Deal.play`` when no bot has hooks; a bot with a hook
takes the plain path (one ``Match.play``-equivalent ``Deal.play`` per card). Same seeds and bots
must give the same matches either way, renúncias, coerced cards and errors included.
"""

from __future__ import annotations

import random

import pytest

from sueca.engine import CARDS, DEFAULT, BotFailed, Match, SeatView, Variant, play_match
from sueca.engine.errors import CardNotInHandError
from sueca.engine.replay import record


class Sloppy:
    """Plays a random legal card, sometimes any held card (a renúncia), sometimes as an int/str."""

    def __init__(self, seed: int, renege: float = 0.02) -> None:
        self.rng = random.Random(seed)
        self.renege = renege
        self.seen = []  # the legal cards of every turn: both paths must show the same

    def play(self, obs):
        self.seen.append(obs.legal)
        r = self.rng.random()
        cards = obs.hand if r < self.renege else obs.legal
        c = cards[int(self.rng.random() * len(cards))]
        form = self.rng.random()
        return int(c) if form < 0.1 else str(c) if form < 0.2 else c

    def redeal(self, obs):
        assert obs.legal == ()
        return self.rng.random() < 0.5


class Hooked(Sloppy):
    def on_trick_end(self, trick):
        pass


def _state(match: Match) -> object:
    deals = [(d.tricks, d.hands, d.points, d.end, d.fault_seat, d.turn, d.leader, list(d.trick),
              (d.win_key, d.win_seat) if d.trick else None, d.led_mask) for d in match.deals]
    return (record(match, "m", ["a", "b", "c", "d"]), match.results, deals, match.game_points,
            match.end, match.winner, match.fault_seat)


def _replay(variant: Variant, seed: int, cls: type) -> object:
    bots = [cls(seed * 4 + s) for s in range(4)]
    return _state(play_match(Match(variant, seed), bots)), [b.seen for b in bots]


@pytest.mark.parametrize("variant", [DEFAULT, Variant(weak_hand_redeal=True)])
def test_fast_path_plays_as_deal_play(variant: Variant) -> None:
    for seed in range(150):
        assert _replay(variant, seed, Sloppy) == _replay(variant, seed, Hooked), seed


class Boom(Exception):
    pass


def _after_a_bot_raises(seed: int, cls: type) -> object | None:
    """Bots that raise on the match's n-th card (a lead or a follow); then the match is played
    on through Match.play, as a caller that catches a bot's error might."""
    calls = [0]
    raised_by: list[int] = []
    limit = 2 + seed * 2

    class Raising(cls):  # type: ignore[valid-type, misc]
        def play(self, obs):
            calls[0] += 1
            if calls[0] == limit:
                raised_by.append(obs.seat)
                raise Boom
            return super().play(obs)

    match = Match(DEFAULT, seed)
    try:
        play_match(match, [Raising(seed * 4 + s) for s in range(4)])
    except BotFailed as err:
        assert type(err.error) is Boom and err.__cause__ is err.error
        assert err.seat == raised_by[0] == match.deal.turn and err.detail == "Boom"
    else:
        return None  # the match ended first (a renúncia can end it within a few cards)
    views = [SeatView(match, s) for s in range(4)]
    during = _state(match)
    rng = random.Random(seed)
    while not match.over:
        if match.awaiting_redeal:
            match.redeal(False)
        else:
            match.play(rng.choice(views[match.deal.turn].legal))
    return during, _state(match)


def test_a_bot_that_raises_leaves_the_state_deal_play_would() -> None:
    raised = 0
    for seed in range(40):
        fast = _after_a_bot_raises(seed, Sloppy)
        assert fast == _after_a_bot_raises(seed, Hooked), seed
        raised += fast is not None
    assert raised >= 25


def test_fast_path_raises_as_deal_play() -> None:
    class Cheat:
        def play(self, obs):
            held = set(obs.hand)
            return next(c for c in CARDS if c not in held)

    with pytest.raises(BotFailed) as err:
        play_match(Match(DEFAULT, 1), [Cheat() for _ in range(4)])
    assert type(err.value.error) is CardNotInHandError
    assert err.value.detail.startswith("CardNotInHandError: ")


def test_turn_view_legal_only_for_the_seat_to_play() -> None:
    seen = []

    class Peek:
        views: list = []

        def __init__(self) -> None:
            self.rng = random.Random(len(Peek.views))

        def play(self, obs):
            if obs not in Peek.views:
                Peek.views.append(obs)
            seen.append([v.legal == () for v in Peek.views if v is not obs])
            legal = obs.legal
            assert legal and set(legal) <= set(obs.hand)
            return legal[int(self.rng.random() * len(legal))]

    m = play_match(Match(DEFAULT, 3), [Peek() for _ in range(4)])
    assert m.end is not None and all(all(x) for x in seen)
    assert all(v.legal == () for v in Peek.views)
