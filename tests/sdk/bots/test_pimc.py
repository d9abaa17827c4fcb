"""The ``pimc`` bot: determinization honours every constraint, the endgame solver is exact, the
bot plays legal cards under every variant, is deterministic given its seed, keeps to its budget
and to the referee's clock, beats random by a wide margin, and its spec arguments parse.

Its strength against ``heuristic`` is measured by ``sueca-arena bench strength`` (thousands of
deals), not here."""

from __future__ import annotations

import functools
import random
import time
from types import SimpleNamespace

import pytest

from sueca.engine import DEFAULT, End, Match, SeatView, Variant
from sueca.engine.cards import FULL_DECK, SUIT_MASKS
from sueca.sdk.bot import Clock, MatchInfo
from sueca.sdk.bots import EXAMPLES, BotLoadError, HeuristicBot, PimcBot, RandomBot, load_bot
from sueca.sdk.bots.playout import history, likelihood, playout
from sueca.sdk.bots.sampling import SamplingError, knowledge, sample
from sueca.sdk.bots.solver import close_trick, solve
from sueca.sdk.local import play_duplicate, play_local

FAST = functools.partial(PimcBot, samples=6)
FAST_INFER = functools.partial(PimcBot, samples=6, infer=1)
FAST_READ = functools.partial(PimcBot, samples=8, eps=0.1, pool=2, least=4)


def _position(seed: int) -> Match:
    """A match played by random legal cards to a random point of its first deal."""
    rng = random.Random(seed)
    variant = Variant(trump_card=rng.choice(["last", "first"]))
    match = Match(variant, seed)
    for _ in range(rng.randrange(0, 39)):
        seat = match.deal.turn
        match.play(rng.choice(match.legal_cards(seat)), seat)
    return match


def _voids(match: Match) -> list[int]:
    """Per seat, the suits it has shown out of, computed from the deal's plays."""
    void = [0, 0, 0, 0]
    deal = match.deal
    tricks = [(t.leader, t.cards) for t in deal.tricks] + [(deal.leader, tuple(deal.trick))]
    for leader, cards in tricks:
        for i, c in enumerate(cards):
            if c // 10 != cards[0] // 10:
                void[(leader + i) & 3] |= 1 << (cards[0] // 10)
    return void


@pytest.mark.parametrize("seed", range(60))
def test_samples_honour_every_constraint(seed: int) -> None:
    match = _position(seed)
    deal = match.deal
    seat = seed % 4
    obs = SeatView(match, seat).snapshot()
    k = knowledge(obs)
    played = FULL_DECK & ~sum(deal.hands)
    void = _voids(match)
    rng = random.Random(seed)
    for _ in range(25):
        hands = sample(k, rng)
        assert hands[seat] == deal.hands[seat]  # my own hand, as it is
        assert sum(h.bit_count() for h in hands) == sum(h.bit_count() for h in deal.hands)
        for s in range(4):
            assert hands[s].bit_count() == deal.hands[s].bit_count()  # hand sizes
            assert not hands[s] & played  # no card already played
            for suit in range(4):
                if void[s] >> suit & 1:
                    assert not hands[s] & SUIT_MASKS[suit]  # shown voids
        assert hands[0] | hands[1] | hands[2] | hands[3] == FULL_DECK & ~played
        if deal.trump_held:
            assert hands[deal.dealer] >> deal.trump & 1  # the turned trump stays with the dealer


@pytest.mark.parametrize("seed", range(12))
def test_inferences_hold_for_heuristic_players_and_samples_honour_them(seed: int) -> None:
    # four heuristic players to a random point: what infer bars is never in a real hand
    rng = random.Random(seed)
    match = Match(DEFAULT, seed)
    bots = [HeuristicBot() for _ in range(4)]
    for s, bot in enumerate(bots):
        bot.start(MatchInfo("m", s, ("h",) * 4, DEFAULT, s))
    for _ in range(rng.randrange(12, 39)):
        seat = match.deal.turn
        match.play(bots[seat].play(SeatView(match, seat)), seat)
    seat = seed % 4
    k = knowledge(SeatView(match, seat).snapshot(), infer=True)
    for s in range(4):
        assert not k.barred[s] & match.deal.hands[s]
    assert k.barred[seat] == 0
    for _ in range(20):
        hands = sample(k, rng)
        for s in range(4):
            assert not hands[s] & k.barred[s] & k.unseen


def test_a_seat_that_did_not_beat_an_opponent_last_in_suit_is_barred_above_it() -> None:
    from sueca.engine import Trick, card
    from sueca.sdk.bots.sampling import _inferred

    def trick(leader: int, cards: str) -> Trick:
        return Trick(leader, tuple(card(c) for c in cards.split()), None, 0)

    obs = SimpleNamespace(trump_suit=2, seat=0, tricks=(
        trick(0, "KS 2S QS 3S"),  # seat 3 last, opponent seat 0 wins with KS: no 7S, AS
        trick(1, "KD 7D 2D 3D"),  # seat 0 last: the bot itself, nothing
        trick(2, "2C QC 4C 3C"),  # seat 1 last, its partner seat 3 wins: nothing
        trick(3, "AD 2H 4D 5D"),  # seat 2 last, opponent seat 0 wins with a trump: nothing
        trick(2, "QC 2C JC 3C"),  # seat 1 last, opponent seat 0 wins with JC: no KC, 7C, AC
    ))
    barred = _inferred(obs)
    assert barred == (0, sum(1 << card(c) for c in ("KC", "7C", "AC")), 0,
                      sum(1 << card(c) for c in ("7S", "AS")))


def test_sampling_with_heavy_voids_never_fails_and_covers_every_seat() -> None:
    # seat 0 to see; seats 1, 2, 3 each void in two suits: a rejection sampler would mostly miss
    from sueca.sdk.bots.sampling import Knowledge
    mine = sum(1 << c for c in (0, 1, 10, 11, 20, 21, 30, 31))
    unseen = FULL_DECK & ~mine & ~sum(1 << c for c in range(2, 9))  # 7 clubs played already
    k = Knowledge(0, (mine, 0, 0, 0), unseen, (0, 8, 8, 9),
                  (0, 0b0011, 0b0110, 0b1001))  # 1: no C D; 2: no D H; 3: no C S
    rng = random.Random(3)
    seen: set[tuple[int, int]] = set()
    for _ in range(300):
        hands = sample(k, rng)
        for s in (1, 2, 3):
            assert hands[s].bit_count() == k.need[s]
            for suit in range(4):
                if k.void[s] >> suit & 1:
                    assert not hands[s] & SUIT_MASKS[suit]
            seen.update((s, c) for c in range(40) if hands[s] >> c & 1)
    for c in range(40):  # every card that may go to a seat went there in some sample
        for s in (1, 2, 3):
            if unseen >> c & 1 and not k.void[s] >> (c // 10) & 1:
                assert (s, c) in seen, (s, c)


def test_sampling_refuses_an_impossible_observation() -> None:
    from sueca.sdk.bots.sampling import Knowledge
    k = Knowledge(0, (1, 0, 0, 0), FULL_DECK & ~1, (0, 13, 13, 13), (0, 1, 1, 1))
    with pytest.raises(SamplingError, match="no seat may hold card 1"):
        sample(k, random.Random(0))


def _brute(hands: list[int], trump: int, leader: int, trick: list[int],
           seen: dict[tuple[int, ...], int]) -> int:
    """Team 0's points from here by trying every line of play (minimax without pruning; a
    position at a trick's start is worked out once, in ``seen``)."""
    if len(trick) == 4:
        winner, pts = close_trick(trump, leader, trick)
        return (0 if winner & 1 else pts) + _brute(hands, trump, winner, [], seen)
    key = (*hands, leader)
    if not trick and key in seen:
        return seen[key]
    seat = (leader + len(trick)) & 3
    hand = hands[seat]
    if not hand:
        return 0
    legal = (hand & SUIT_MASKS[trick[0] // 10] or hand) if trick else hand
    values = []
    for c in range(40):
        if legal >> c & 1:
            hands[seat] ^= 1 << c
            values.append(_brute(hands, trump, leader, trick + [c], seen))
            hands[seat] ^= 1 << c
    value = max(values) if seat % 2 == 0 else min(values)
    if not trick:
        seen[key] = value
    return value


def _endgame(rng: random.Random, tricks: int, suits: int = 4) -> tuple[list[int], int, int,
                                                                       list[int]]:
    """Hands of ``tricks`` cards (one fewer for the seats already on the trick), cards of
    ``suits`` suits, mostly points when few suits (where interchangeable cards matter)."""
    deck = [c for c in range(40) if c // 10 < suits and (suits == 4 or c % 10 >= 4
                                                          or rng.random() < 0.4)]
    deck += [c for c in range(10 * suits, 40) if rng.random() < 0.15]
    rng.shuffle(deck)
    leader, on_table = rng.randrange(4), rng.randrange(4)
    hands = [0, 0, 0, 0]
    for s in range(4):
        for _ in range(tricks - (1 if (s - leader) & 3 < on_table else 0)):
            hands[s] |= 1 << deck.pop()
    return hands, rng.randrange(4), leader, [deck.pop() for _ in range(on_table)]


@pytest.mark.parametrize(("tricks", "suits", "positions"), [(2, 4, 60), (3, 2, 300), (4, 4, 30)])
def test_solver_agrees_with_brute_force(tricks: int, suits: int, positions: int) -> None:
    # as pimc uses it: every card of the seat to play solved with one shared table
    rng = random.Random(tricks * 10 + suits)
    for _ in range(positions):
        hands, trump, leader, trick = _endgame(rng, tricks, suits)
        table: dict[tuple[int, ...], tuple[int, int]] = {}
        seat = (leader + len(trick)) & 3
        legal = (hands[seat] & SUIT_MASKS[trick[0] // 10] or hands[seat]) if trick else hands[seat]
        for c in range(40):
            if legal >> c & 1:
                after = hands[:]
                after[seat] ^= 1 << c
                kept = after[:]
                brute = _brute(after[:], trump, leader, trick + [c], {})
                if len(trick) == 3:
                    winner, pts = close_trick(trump, leader, trick + [c])
                    got = 0 if winner & 1 else pts
                    assert got + solve(after, trump, winner, [], table) == brute
                else:
                    assert solve(after, trump, leader, trick + [c], table) == brute
                assert after == kept  # hands restored


def _heuristic_table(seed: int) -> tuple[random.Random, Match, list[HeuristicBot]]:
    """A match of four heuristic players under a trump card variant the seed picks."""
    rng = random.Random(seed)
    variant = Variant(trump_card=rng.choice(["last", "first"]))
    match = Match(variant, seed)
    bots = [HeuristicBot() for _ in range(4)]
    for s, bot in enumerate(bots):
        bot.start(MatchInfo("m", s, ("h",) * 4, variant, s))
    return rng, match, bots


@pytest.mark.parametrize("first", range(0, 160, 40))
def test_playout_plays_as_four_heuristic_players(first: int) -> None:
    # from a random point of a deal of four heuristic players, playout on the true hands must
    # end the deal with the points the players themselves take: one card chosen otherwise
    # anywhere (a trump counted wrongly, a void missed) changes them in some of these deals
    for seed in range(first, first + 40):
        rng, match, bots = _heuristic_table(seed)
        stop = rng.randrange(0, 39)
        expected = -1
        for i in range(40):
            seat = match.deal.turn
            if i == stop:
                deal = match.deal
                obs = SeatView(match, seat).snapshot()
                expected = obs.points[0] + playout(list(deal.hands), obs.trump_suit, deal.leader,
                                                   list(deal.trick), list(knowledge(obs).void),
                                                   obs.dealer, obs.trump)
            match.play(bots[seat].play(SeatView(match, seat)), seat)
        assert match.results[0].points[0] == expected, (seed, stop)


VARIANTS = [DEFAULT, Variant(trump_card="first"), Variant(weak_hand_redeal=True),
            Variant(bandeira="all_points", tie="double", target=8),
            Variant(tie="none", direction="clockwise")]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: " ".join(v.words()) or "default")
def test_pimc_plays_only_legal_cards_under_every_variant(variant: Variant) -> None:
    # a card the seat does not hold raises; a renúncia would end a deal as such
    for seed in range(2):
        match = play_local([FAST, HeuristicBot, FAST_INFER, HeuristicBot], variant, seed)
        assert match.end == End.NORMAL
        assert all(r.end in (End.NORMAL, End.REDEAL) for r in match.results)
        match = play_local([FAST_READ, HeuristicBot, FAST_READ, RandomBot], variant, seed)
        assert match.end == End.NORMAL
        assert all(r.end in (End.NORMAL, End.REDEAL) for r in match.results)


def test_pimc_is_deterministic_given_its_seed() -> None:
    def tricks(seed: int) -> list[tuple[int, ...]]:
        match = play_local([FAST, FAST, RandomBot, HeuristicBot], DEFAULT, seed)
        return [t.cards for d in match.deals for t in d.tricks]

    assert tricks(11) == tricks(11)
    # the bot's rng drives it: the same decks with other bot seeds give another game
    one = play_local([FAST] * 4, DEFAULT, 4, seed_key=b"a")
    two = play_local([FAST] * 4, DEFAULT, 4, seed_key=b"b")
    assert one.deals[0].deck == two.deals[0].deck
    assert [t.cards for t in one.deals[0].tricks] != [t.cards for t in two.deals[0].tricks]


def _first_lead() -> tuple[PimcBot, SeatView]:
    match = Match(DEFAULT, 9)
    seat = match.deal.turn
    bot = PimcBot(samples=5_000)  # seconds of work: only a budget stops it sooner
    bot.start(MatchInfo("m", seat, ("a", "b", "c", "d"), DEFAULT, 1))
    return bot, SeatView(match, seat)


def test_pimc_keeps_to_the_referees_clock() -> None:
    bot, view = _first_lead()  # ten legal cards, 5,000 deals asked for
    bot.clock = Clock(move_s=0.2, bank_s=0.0, received=time.monotonic())
    t = time.monotonic()
    card = bot.play(view)
    assert card in view.legal
    assert time.monotonic() - t < 0.2 * 0.25 + 0.25  # its share, one deal, a loaded machine
    bot.clock = Clock(move_s=0.01, bank_s=0.0, received=time.monotonic() - 1)  # already late
    t = time.monotonic()
    assert bot.play(view) == HeuristicBot.play(bot._fallback, view)  # no time: heuristic's card
    assert time.monotonic() - t < 0.25


def test_pimc_keeps_to_its_ms_budget() -> None:
    bot, view = _first_lead()
    bot.ms = 20
    t = time.monotonic()
    assert bot.play(view) in view.legal
    assert time.monotonic() - t < 0.02 + 0.25  # 5,000 deals take seconds


def test_pimc_beats_random_by_a_wide_margin() -> None:
    won = lost = 0
    for seed in range(3):
        for match, team in zip(play_duplicate([FAST, RandomBot, FAST, RandomBot], seed=seed), (0, 1)):
            for r in match.results:
                won += r.points[team] > 60
                lost += r.points[team] < 60
    assert won >= 4 * lost and won >= 8


def test_pimc_is_an_example_bot() -> None:
    assert EXAMPLES["pimc"] is PimcBot
    assert load_bot("pimc") is PimcBot


def test_spec_arguments_parse() -> None:
    made = load_bot("pimc:samples=64:ms=15:solve=4:win=10")()
    assert isinstance(made, PimcBot)
    assert (made.samples, made.ms, made.solve_tricks, made.win) == (64, 15.0, 4, 10)


@pytest.mark.parametrize(("spec", "message"), [
    ("pimc:samples=many", "bot 'pimc:samples=many': bad value 'many' for samples: pimc takes "
                          "samples=<int>, ms=<float>, solve=<int>, win=<int>"),
    ("pimc:speed=3", "bot 'pimc:speed=3': unknown argument 'speed=3': pimc takes samples=<int>"),
    ("pimc:samples=0", "bot 'pimc:samples=0': bad samples=0: at least 1 deal per move"),
    ("pimc:solve=11", "bot 'pimc:solve=11': bad solve=11: tricks left, 0 (never) to 10"),
    ("pimc:ms=-1", "bot 'pimc:ms=-1': bad ms=-1.0"),
    ("pimc:eps=1", "bot 'pimc:eps=1': bad eps=1.0: a tremble from 0"),
    ("pimc:pool=0", "bot 'pimc:pool=0': bad pool=0: at least 1"),
    ("pimc:least=-2", "bot 'pimc:least=-2': bad least=-2"),
    ("pimc:samples=8:x", "unknown argument 'x'"),
    ("random:seed=3", "bot 'random:seed=3': unknown argument 'seed=3': random takes no arguments"),
])
def test_bad_spec_arguments_are_refused_quoting_them(spec: str, message: str) -> None:
    with pytest.raises(BotLoadError) as err:
        load_bot(spec)
    assert message in str(err.value)


def test_module_class_specs_still_load() -> None:
    assert load_bot("sueca.sdk.bots.pimc:PimcBot") is PimcBot


def test_likelihood_of_the_true_hands_under_heuristic_play_is_one() -> None:
    # four heuristic players: at every point each seat's true view of the other hands explains
    # every play seen (eps 0: one play judged otherwise than heuristic would make it 0), while
    # sampled deals that merely fit the voids often do not (the plays carry information)
    zero = total = 0
    for seed in range(12):
        rng, match, bots = _heuristic_table(seed)
        for _ in range(40):
            seat = match.deal.turn
            obs = SeatView(match, seat).snapshot()
            model = (obs.trump_suit, obs.dealer, obs.trump, 0.0)
            plays = history(obs)
            judged = 15 & ~(1 << seat)
            assert likelihood(list(match.deal.hands), plays, judged, model) == 1.0, seed
            k = knowledge(obs)
            for _ in range(4):
                total += 1
                zero += likelihood(sample(k, rng), plays, judged, model) == 0.0
            match.play(bots[seat].play(SeatView(match, seat)), seat)
    assert total * 0.3 < zero < total


def test_inference_with_a_pool_of_one_plays_out_the_same_deals() -> None:
    # before any other seat has played every weight is 1: with pool 1 the bot must deal and
    # play out the very deals it does without inference, so it picks the same card (what the
    # with-and-without measurement relies on); after plays were seen, weights change totals
    for seed in range(6):
        match = Match(DEFAULT, seed)
        seat = match.deal.turn
        cards = []
        for bot in (PimcBot(samples=12), PimcBot(samples=12, eps=0.2)):
            bot.start(MatchInfo("m", seat, ("a", "b", "c", "d"), DEFAULT, seed))
            bot.rng.seed(seed)
            k = knowledge(SeatView(match, seat).snapshot())
            cards.append(bot.play(SeatView(match, seat)))
            if bot.eps:
                bot.rng.seed(seed)
                first = sample(k, bot.rng)
                worlds = bot._read(SeatView(match, seat).snapshot(), k, first, float("inf"))
                bot.rng.seed(seed)
                assert [h for h, _ in worlds] == [sample(k, bot.rng) for _ in range(12)]
                assert {w for _, w in worlds} == {1.0}
        assert cards[0] == cards[1], seed


def test_an_adaptive_budget_stops_only_when_the_leading_card_is_clearly_ahead() -> None:
    bot = PimcBot(least=8)
    clear = [[60.0 + (i % 3) for i in range(8)], [40.0 + (i % 5) for i in range(8)]]
    assert bot._settled([sum(o) for o in clear], clear)
    close = [[60.0 + 20 * (i % 2) for i in range(8)], [70.0 - 20 * (i % 2) for i in range(8)]]
    assert not bot._settled([sum(o) for o in close], close)
    same = [[61.0] * 8, [61.0] * 8]  # every deal agrees the cards are worth the same
    assert not bot._settled([sum(o) for o in same], same)
