"""Scoring a deal, tie variants, renúncia, match target and dealer rotation (docs/rules.md
§ Scoring a deal, § Winning the match, § Renúncia and other faults)."""

import pytest
from kits.deals import play_all, scripted, state

from sueca.engine import (
    Deal,
    GameOverError,
    Match,
    SeatView,
    Variant,
    deal_game_points,
    team_of,
)

# -- the scoring table ----------------------------------------------------------------------------

@pytest.mark.parametrize("points,tricks,game", [
    ((61, 59), (5, 5), (1, 0)),   # 000: "Si una de las parejas gana más de 60 se anota un juego"
    ((59, 61), (5, 5), (0, 1)),
    ((90, 30), (6, 4), (1, 0)),   # 90 is still one game
    ((91, 29), (6, 4), (2, 0)),   # 001: "If a team takes 91 or more card points ... two games"
    ((29, 91), (3, 7), (0, 2)),
    ((119, 1), (9, 1), (2, 0)),
    ((120, 0), (9, 1), (2, 0)),   # 001: 120 points but a trick lost: "just score 2 games"
    ((0, 120), (1, 9), (0, 2)),
    ((120, 0), (10, 0), (4, 0)),  # 001: "If they take all the tricks they score four games"
    ((0, 120), (0, 10), (0, 4)),
    ((60, 60), (5, 5), (0, 0)),   # 001: "both teams taking exactly 60 ... no one scores"
])
def test_scoring_table_all_tricks(points, tricks, game):
    """000 § 11 and 001 Scoring: 61-90 -> 1 game, 91-120 -> 2, every trick ("bandeira") -> 4,
    60-60 -> nothing; 000: "Si una pareja gana 120 puntos, pero no todas las bazas ... sólo gana
    dos juegos"."""
    assert deal_game_points(points, tricks, "all_tricks") == game


@pytest.mark.parametrize("points,tricks,game", [
    ((120, 0), (9, 1), (4, 0)),   # 003: "120（全部分数） | 4（直接一个 bandeira）"
    ((0, 120), (1, 9), (0, 4)),
    ((120, 0), (10, 0), (4, 0)),
    ((119, 1), (9, 1), (2, 0)),   # 003: "91 到 119 | 2"
    ((91, 29), (5, 5), (2, 0)),
    ((90, 30), (5, 5), (1, 0)),   # 003: "61 到 90 | 1"
    ((61, 59), (5, 5), (1, 0)),
    ((60, 60), (5, 5), (0, 0)),   # 003: "60 : 60 | 0"
])
def test_scoring_table_all_points(points, tricks, game):
    """003 § 6 table: 61-90 -> 1, 91-119 -> 2, 120 (all the points) -> 4, 60:60 -> 0
    (variant bandeira=all_points)."""
    assert deal_game_points(points, tricks, "all_points") == game


def _one_deal(name, dealer=3, **variant):
    s = scripted(name, dealer)
    m = Match(Variant(target=8, **variant), decks=[s.deck], first_dealer=dealer)
    plays = play_all(m, s.plays)
    return s, m, plays[-1].deal


def test_deal_won_61_to_90_scores_one():
    """000: "Si una de las parejas gana más de 60 se anota un juego"; 002: "Si una pareja hace de
    61 a 90 puntos, gana 1 punto de juego"."""
    s, m, result = _one_deal("LEADER_62")
    assert result.points == (62, 58) and result.game_points == (1, 0) and result.end == "normal"
    assert m.game_points == [1, 0] and not m.over


@pytest.mark.parametrize("bandeira,expected", [("all_tricks", 2), ("all_points", 4)])
def test_001_example_120_points_one_pointless_trick_lost(bandeira, expected):
    """001: "Taking 120 points but losing a trick (with no counting cards in it) is not sufficient
    to dar un bandiera. In this case the winning team would just score 2 games" (all_tricks);
    003's table: "120（全部分数） | 4" (all_points)."""
    s, m, result = _one_deal("LEADER_120_NOT_ALL", bandeira=bandeira)
    assert s.tricks_won == (9, 1)
    assert result.points == (120, 0) and result.game_points == (expected, 0)


@pytest.mark.parametrize("bandeira", ["all_tricks", "all_points"])
def test_bandeira_every_trick_scores_four(bandeira):
    """000: "Si una pareja gana todas las bazas se dice que «da una bandera» y gana cuatro juegos";
    002: "Vencida - Cuando una pareja gana todas las rondas"."""
    s, m, result = _one_deal("LEADER_BANDEIRA", bandeira=bandeira)
    assert result.points == (120, 0) and result.game_points == (4, 0)


def test_bandeira_in_a_match_to_4_wins_at_once():
    """000: "gana cuatro juegos de golpe y, por tanto, la partida"; 001: "they score four games
    and thus win the rubber immediately"."""
    s = scripted("LEADER_BANDEIRA", 0)  # dealer 0: the leader is seat 1, team 1
    m = Match(decks=[s.deck], first_dealer=0)
    result = play_all(m, s.plays)[-1].deal
    assert result.game_points == (0, 4)
    assert m.over and m.winner == 1 and m.end == "normal" and m.game_points == [0, 4]
    assert m.turn is None and len(m.deals) == 1


def test_tie_60_60_scores_nothing():
    """001: "If there is a tie, both teams taking exactly 60 card points in tricks, no one
    scores"; 003: "60 : 60——双方都不得分"."""
    s, m, result = _one_deal("TIE_60_60")
    assert result.points == (60, 60) and result.game_points == (0, 0)
    assert m.game_points == [0, 0]


# -- ties held over: sequences of scripted deals ------------------------------------------------

def _run(scripts, first_dealer, **variant):
    """Play scripted deals in a row; deal k is dealt by first_dealer + k."""
    decks = [scripted("LEADER_62" if name == "RENUNCIA_BY_1" else name, (first_dealer + k) % 4).deck
             for k, name in enumerate(scripts)]
    m = Match(Variant(**variant), decks=decks, first_dealer=first_dealer)
    results = []
    for k, name in enumerate(scripts):
        dealer = (first_dealer + k) % 4
        assert m.deal.dealer == dealer
        if name == "RENUNCIA_BY_1":
            results.append(_renuncia(m, 1).deal)
        else:
            results.append(play_all(m, scripted(name, dealer).plays)[-1].deal)
    return m, results


def _renuncia(m, team):
    """Play the lowest legal cards until a seat of ``team`` can fail to follow suit, and do."""
    while True:
        deal = m.deal
        seat = deal.turn
        if team_of(seat) == team and deal.trick:
            led = deal.trick[0].suit
            hand = deal.hand(seat)
            off = [c for c in hand if c.suit != led]
            if off and any(c.suit == led for c in hand):
                assert deal.is_renuncia(off[0])
                return m.play(off[0])
        m.play(deal.legal_cards()[0])


# first dealer 3: the leader's scripts score for team 0 with dealers 3 and 1, DEALER_62 with 0, 2
@pytest.mark.parametrize("tie,expected", [("carry", 2), ("none", 1), ("double", 2)])
def test_one_tie_then_a_61_90_deal(tie, expected):
    """000: "el punto del juego se lo anotará el ganador del siguiente"; 001: "the next hand is
    worth an extra game - ie the winners will score two games if they take 61 - 90" (carry);
    003 main text: nothing held over (none); 003 variant "60 : 60 加倍 | 下一手加倍" (double)."""
    m, (r0, r1) = _run(["TIE_60_60", "DEALER_62"], 3, tie=tie)
    assert r0.game_points == (0, 0)
    assert r1.points == (62, 58) and r1.game_points == (expected, 0)
    assert m.game_points == [expected, 0]


@pytest.mark.parametrize("tie,expected", [("carry", 3), ("none", 1), ("double", 4)])
def test_two_ties_in_a_row_then_a_61_90_deal(tie, expected):
    """000: "Si este nuevo juego fuera otro empate, serían dos juegos los que estarían pendientes";
    001: "If the next game is another tie, the following hand would be worth two extra games";
    double: x2 then x4 (docs/rules.md § Scoring a deal, 003 variant)."""
    m, rs = _run(["TIE_60_60", "TIE_60_60", "LEADER_62"], 3, tie=tie, target=8)
    assert [r.game_points for r in rs[:2]] == [(0, 0), (0, 0)]
    assert rs[2].game_points == (expected, 0)
    assert m.game_points == [expected, 0]


@pytest.mark.parametrize("tie,expected", [("carry", 3), ("none", 2), ("double", 4)])
def test_002_example_tie_then_91_plus_scores_2_plus_1(tie, expected):
    """002: "después de un empate, una pareja hace más de 91 puntos. Vence 2 puntos de juego por
    esa partida más 1 punto de la partida acumulada" (2 + 1 = 3); 001: "three games if they take
    91 or more"."""
    m, (r0, r1) = _run(["TIE_60_60", "LEADER_120_NOT_ALL"], 0, tie=tie, target=8)
    # dealer 1 for the second deal: the leader is seat 2, team 0
    assert r1.points == (120, 0) and r1.game_points == (expected, 0)


@pytest.mark.parametrize("tie,expected", [("carry", 1), ("none", 0), ("double", 1)])
def test_held_over_is_shown_in_observations(tie, expected):
    """docs/rules.md § Scoring a deal: one game point is held over after a tie (carry, 000/001/002), doubled
    (double, 003 variant) or nothing is held over (none, 003 main text)."""
    m, _ = _run(["TIE_60_60"], 3, tie=tie)
    views = [SeatView(m, s) for s in range(4)]
    assert all(v.held_over == expected and v.snapshot().held_over == expected for v in views)


def test_a_decided_deal_pays_out_the_held_over_points_once():
    """000: the held-over games go to the winner of the next decided deal, "más todos los juegos
    pendientes" — and only once."""
    m, rs = _run(["TIE_60_60", "DEALER_62", "LEADER_62"], 3, tie="carry", target=8)
    assert [r.game_points for r in rs] == [(0, 0), (2, 0), (1, 0)]
    assert m.held == 0


# -- renúncia --------------------------------------------------------------------------------------

def test_renuncia_ends_the_deal_card_is_last_of_last_trick():
    """003: "Renúncia（违规）： 能跟花色却没跟，这一手判负，对方得 4 分" (failing to follow suit while able
    loses the deal; the opponents score 4)."""
    s = scripted("LEADER_62", 3)
    deal = Deal(s.deck, 3)
    play_all(deal, s.plays[:5])  # trick 1, then seat 0 leads QC in trick 2
    assert str(deal.trick[0]) == "QC" and deal.turn == 1
    off = next(c for c in deal.hand(1) if c.suit_letter != "C")
    assert any(c.suit_letter == "C" for c in deal.hand(1))
    before_points = list(deal.points)
    p = deal.play(off, seat=1)
    assert deal.end == "renuncia" and deal.fault_seat == 1
    assert p.trick is not None and p.trick.winner is None and p.trick.points == 0
    assert deal.tricks[-1] == p.trick and p.trick.cards[-1] == off
    assert list(p.trick.cards) == [s.plays[4], off] and len(deal.tricks) == 2
    assert off not in deal.hand(1)
    assert deal.points == before_points
    before = state(deal)
    with pytest.raises(GameOverError, match="over"):
        deal.play(deal.hand(2)[0])
    assert state(deal) == before


@pytest.mark.parametrize("tie,expected", [("carry", 4 + 1), ("none", 4), ("double", 4 * 2)])
def test_renuncia_scores_4_to_the_opponents_plus_held_over(tie, expected):
    """003: "对方得 4 分" (the opponents score 4 game points); docs/rules.md § Where the texts are
    silent: a deal ended by a renúncia counts as decided in the opponents' favour, plus anything held over (per the tie rule)."""
    m, (r0, r1) = _run(["TIE_60_60", "RENUNCIA_BY_1"], 3, tie=tie, target=8)
    assert r1.end == "renuncia" and team_of(r1.fault_seat) == 1
    assert r1.game_points == (expected, 0)
    assert m.deals[1].fault_seat == r1.fault_seat


def test_renuncia_ending_the_match_records_the_fault():
    """003: renúncia — the opponents score 4, which ends a match to 4 (docs/rules.md § Renúncia and other
    faults: the match records which seat and which fault ended it)."""
    m, (r,) = _run(["RENUNCIA_BY_1"], 2)
    assert m.over and m.winner == 0 and m.end == "renuncia"
    assert m.fault_seat == r.fault_seat and team_of(m.fault_seat) == 1
    assert m.game_points == [4, 0]


# -- the match -------------------------------------------------------------------------------------

@pytest.mark.parametrize("target", [4, 8])
def test_match_ends_when_a_team_reaches_the_target(target):
    """000: "Para ganar la partida, una pareja ha de ganar cuatro juegos"; 001: "The first team to
    score four games win the rubber"; 003: 4 game points, variant "8 分" (target 8)."""
    # team 0 scores 1 per deal: dealers 3, 0, 1, 2, 3, 0, 1, 2
    names = ["LEADER_62", "DEALER_62"] * 4
    m, rs = _run(names[:target], 3, target=target)
    assert [r.game_points for r in rs] == [(1, 0)] * target
    assert m.over and m.winner == 0 and m.game_points == [target, 0]
    assert m.end == "normal" and m.fault_seat is None


def test_match_to_8_goes_on_after_a_bandeira():
    """003 variant "8 分": a match to 8 continues after a 4-point deal."""
    m, rs = _run(["LEADER_BANDEIRA"], 3, target=8)
    assert rs[0].game_points == (4, 0) and not m.over and m.winner is None
    assert m.deal.number == 1 and m.turn == (m.deal.dealer + 1) % 4


@pytest.mark.parametrize("target", [4, 8])
def test_passing_the_target_ends_the_match(target):
    """002: "Cuando una de las parejas alcanza 4 puntos de juego o más, gana el juego" (reaching
    or passing the target ends the match)."""
    lead = ["LEADER_62", "DEALER_62", "LEADER_62"]
    if target == 8:
        lead += ["DEALER_62", "LEADER_62"]  # 5 points
    m, rs = _run(lead + ["RENUNCIA_BY_1"], 3, target=target)
    assert m.over and m.winner == 0
    assert m.game_points == [len(lead) + 4, 0] and m.game_points[0] > target


@pytest.mark.parametrize("first_dealer", range(4))
def test_dealer_rotates_each_deal(first_dealer):
    """000: "los sucesivos dadores lo son por turno"; 001: "the turn to deal passes to the right
    after each hand" (the next seat in playing order)."""
    names = ["TIE_60_60"] * 6
    m, rs = _run(names, first_dealer, tie="carry")
    assert [r.dealer for r in rs] == [(first_dealer + k) % 4 for k in range(6)]
    assert m.deal.dealer == (first_dealer + 6) % 4 and m.deal.number == 6
    assert m.turn == (first_dealer + 7) % 4


def test_first_dealer_is_drawn_from_the_seed():
    """000: "El primer dador lo suele ser por sorteo"; 001: "The first dealer is chosen at
    random"."""
    dealers = {Match(seed=k).first_dealer for k in range(40)}
    assert dealers == {0, 1, 2, 3}
    assert Match(seed=5).first_dealer == Match(seed=5).first_dealer


def test_teams_are_partners_opposite():
    """001: "four players playing in teams, two against two, with partners sitting opposite"."""
    assert [team_of(s) for s in range(4)] == [0, 1, 0, 1]
    assert [SeatView(Match(seed=1), s).team for s in range(4)] == [0, 1, 0, 1]


@pytest.mark.parametrize("end,seat,winner", [
    ("timeout", 1, 0), ("disconnect", 2, 1), ("aborted", None, None)])
def test_stopped_match_records_the_fault(end, seat, winner):
    """docs/rules.md § Renúncia and other faults: "timeout", "disconnect" — each match records which seat and which fault
    ended it; an aborted match has no winner."""
    m = Match(seed=3)
    m.play(m.deal.legal_cards()[0])
    r = m.stop(end, seat)
    assert m.over and m.end == end and m.fault_seat == seat and m.winner == winner
    assert r.end == end and r.fault_seat == seat and r.game_points == (0, 0)
    assert m.deal.end == end
