"""Properties over thousands of seeded random matches in every variant, checked against the
rules written out again in kits.deals (not against the engine itself)."""

import copy
import json
import random

import pytest
from kits.deals import (
    ALL_TEXTS,
    RANK_POINTS,
    VARIANTS,
    points_of,
    random_match,
    trick_winner,
)

from sueca.engine import CARDS, Card, SeatView, Snapshot, replay

SEATS = ["a", "b", "c", "d"]
MATCHES_PER_VARIANT = 30  # 48 variants -> 1440 matches, about 10 000 deals


def oracle_hands(deck, dealer, trump_card):
    """000/001: last -> seats from the one after the dealer get ten each, trump deck[39];
    first -> the dealer gets the top ten, trump deck[0] (docs/rules.md § Dealing and the trump)."""
    texts = [str(c) for c in deck]
    first = (dealer + 1) % 4 if trump_card == "last" else dealer
    hands = {(first + i) % 4: set(texts[10 * i:10 * i + 10]) for i in range(4)}
    return hands, texts[39] if trump_card == "last" else texts[0]


def oracle_game_points(end, points, tricks_won, fault_seat, v, held):
    """docs/rules.md § Scoring a deal (000, 001, 002, 003) and § Renúncia and other faults (003),
    with the tie rule."""
    if end == "renuncia":
        team, gp = 1 - fault_seat % 2, 4
    else:
        team = 0 if points[0] > 60 else 1 if points[1] > 60 else None
        if team is None:
            return (0, 0), held + (v["tie"] != "none")
        p = points[team]
        if (v["bandeira"] == "all_tricks" and tricks_won[team] == 10) or (
                v["bandeira"] == "all_points" and p == 120):
            gp = 4
        else:
            gp = 2 if p >= 91 else 1
    if v["tie"] == "carry":
        gp += held
    elif v["tie"] == "double":
        gp *= 2 ** held
    return ((gp, 0) if team == 0 else (0, gp)), 0


def check_deal(deal, v):
    """One finished deal, re-derived card by card from its deck."""
    hands, trump = oracle_hands(deal.deck, deal.dealer, v["trump_card"])
    assert str(deal.trump) == trump and trump in hands[deal.dealer]
    start = [{str(c) for c in CARDS if h >> c & 1} for h in deal.start_hands]  # bit c = card c
    assert start == [hands[s] for s in range(4)]
    if deal.end == "redeal":
        assert deal.tricks == [] and v["weak_hand_redeal"]
        assert points_of(hands[(deal.dealer + 1) % 4]) <= 10
        return
    leader = (deal.dealer + 1) % 4
    seen = set()
    points = [0, 0]
    won = [0, 0]
    renuncia = None
    for k, t in enumerate(deal.tricks):
        assert t.leader == leader
        texts = [str(c) for c in t.cards]
        led = texts[0][1]
        for i, c in enumerate(texts):
            seat = (leader + i) % 4
            assert c in hands[seat], (c, seat)  # in the hand: every card played at most once
            assert c not in seen
            seen.add(c)
            if i and c[1] != led and any(x[1] == led for x in hands[seat]):
                # failing to follow while able: only as the very last card, the renúncia
                assert renuncia is None and k == len(deal.tricks) - 1 and i == len(texts) - 1
                renuncia = seat
            hands[seat].discard(c)
        if renuncia is None:
            assert len(texts) == 4
            w = trick_winner(leader, texts, trump[1])
            assert t.winner == w and t.points == points_of(texts)
            points[w % 2] += t.points
            won[w % 2] += 1
            leader = w
        else:
            assert t.winner is None and t.points == 0
    assert deal.points == points and deal.tricks_won == won
    if deal.end == "normal":
        assert renuncia is None and len(deal.tricks) == 10
        assert sorted(seen) == sorted(ALL_TEXTS)  # every card exactly once
        assert sum(points) == 120 and sum(won) == 10
        assert all(not h for h in hands.values())
    elif deal.end == "renuncia":
        assert renuncia is not None and deal.fault_seat == renuncia
    else:  # a stop: a timeout, disconnect or abort cut the deal short
        assert renuncia is None and deal.end in ("timeout", "disconnect", "aborted")
    return points, won


def check_match(m, v):
    held = 0
    dealer = m.first_dealer
    assert len(m.results) == len(m.deals)
    totals = [0, 0]
    for deal, r in zip(m.deals, m.results):
        assert deal.dealer == r.dealer == dealer and deal.number == r.number
        assert deal.end == r.end and deal.fault_seat == r.fault_seat
        check_deal(deal, v)
        assert r.points == tuple(deal.points)
        if r.end == "redeal":  # 002: the same dealer deals again
            assert r.game_points == (0, 0)
            continue
        if r.end in ("timeout", "disconnect", "aborted"):
            assert deal is m.deals[-1] and m.end == r.end
            break
        gp, held = oracle_game_points(r.end, r.points, deal.tricks_won, r.fault_seat, v, held)
        assert r.game_points == gp, (r, held)
        totals = [totals[0] + gp[0], totals[1] + gp[1]]
        over = max(totals) >= v["target"]
        assert over == (deal is m.deals[-1])  # reaching or passing the target ends the match
        dealer = (dealer + 1) % 4  # 000/001: the deal passes to the next seat
    assert m.game_points == totals
    if m.end in ("normal", "renuncia"):
        assert m.winner == (0 if totals[0] >= v["target"] else 1) and m.end == m.deals[-1].end


@pytest.mark.parametrize("k", range(len(VARIANTS)))
def test_random_matches_follow_the_rules_and_replay(k):
    """000/001/002/003 together: deal from the deck (000, 001), follow suit (all), highest trump
    else highest of the led suit (000, 001), 120 points per deal, every card once, the scoring
    table and tie rules (000, 001, 002, 003), renúncia (003), redeal (002), dealer rotation
    (000, 001), target (000, 003); and every match replays from its record (docs/rules.md § Dealing and the trump)."""
    v = VARIANTS[k]
    stops = renuncias = 0
    for j in range(MATCHES_PER_VARIANT):
        seed = 7919 * k + j
        m = random_match(seed, v, renuncia_rate=0.004, stop_rate=0.0005 if j % 3 == 0 else 0)
        check_match(m, v)
        stops += m.end in ("timeout", "disconnect", "aborted")
        renuncias += sum(d.end == "renuncia" for d in m.deals)
        rec = replay.record(m, f"p{seed}", SEATS)
        text = json.dumps(rec)
        assert json.loads(text) == rec
        assert replay.verify(json.loads(text)) == []
    assert renuncias > 0  # the property test does exercise renúncia


# -- observations: what one seat may know ----------------------------------------------------------

EXPECTED_FIELDS = {
    "seat", "hand", "legal", "trump", "trump_suit", "trump_held", "dealer", "leader", "trick",
    "tricks", "points", "game_points", "held_over", "variant", "deal_number"}


def _cards_in(value, out):
    if isinstance(value, Card):
        out.append(value)
    elif isinstance(value, (tuple, list)):
        for x in value:
            _cards_in(x, out)
    return out


def _check_views(m):
    deal = m.deal
    played = {c for t in deal.tricks for c in t.cards} | set(deal.trick)
    for seat in range(4):
        view = SeatView(m, seat)
        snap = view.snapshot()
        assert set(Snapshot._fields) == EXPECTED_FIELDS
        own = set(deal.hand(seat))
        assert set(snap.hand) == own and len(snap.hand) == len(own)
        for name in Snapshot._fields:
            if name != "trump":
                for c in _cards_in(getattr(snap, name), []):
                    # 001/003: no signals — a seat sees its own hand and public play only
                    assert c in own or c in played, (name, c, seat)
        # the turned card is public while the dealer holds it (003), played afterwards
        t = snap.trump
        assert snap.trump_held == (t in deal.hand(deal.dealer))
        assert t in own or t in played or (snap.trump_held and deal.dealer != seat)
        legal = set(snap.legal)
        if deal.turn == seat and not m.awaiting_redeal and not m.over:
            follow = {c for c in own if deal.trick and c.suit == deal.trick[0].suit}
            assert legal == (follow or own)  # 001: "Players must follow suit if they can"
        else:
            assert legal == set()
        assert snap.trick == tuple(((deal.leader + i) % 4, c) for i, c in enumerate(deal.trick))
        assert snap == Snapshot(*(getattr(view, f) for f in Snapshot._fields))
        assert snap.team == view.team == seat % 2


@pytest.mark.parametrize("k", range(0, len(VARIANTS), 3))
def test_no_observation_holds_another_seats_unplayed_card(k):
    """001: "No signals between partners are permitted"; 003: "暗号： 禁止谈论手牌" (docs/rules.md § Players, teams and
    seats: a bot sees only its own hand and public play; the turned trump is public until played, 003)."""
    v = VARIANTS[k]
    for j in range(6):
        random_match(31 * k + j, v, renuncia_rate=0.01, on_turn=_check_views)


# -- tampering at scale ----------------------------------------------------------------------------

def _tampers(rec, rng):
    """A changed card, changed points, a changed winner: each must be caught by verify."""
    normal = [d for d in rec["deals"] if d["tricks"] and d["end"] == "normal"]
    d = rng.choice(normal)
    out = []
    a = copy.deepcopy(rec)
    da = a["deals"][rec["deals"].index(d)]
    t = rng.choice(da["tricks"])
    i = rng.randrange(len(t["cards"]))
    t["cards"][i] = rng.choice([c for c in ALL_TEXTS if c != t["cards"][i]])
    out.append(("card", a))
    b = copy.deepcopy(rec)
    db = b["deals"][rec["deals"].index(d)]
    team = rng.randrange(2)
    db["points"][team] += rng.choice([-2, -1, 1, 3])
    out.append(("points", b))
    c = copy.deepcopy(rec)
    dc = c["deals"][rec["deals"].index(d)]
    tc = rng.choice(dc["tricks"])
    tc["winner"] = (tc["winner"] + rng.randrange(1, 4)) % 4
    out.append(("trick winner", c))
    e = copy.deepcopy(rec)
    e["winner"] = None if e["winner"] is not None else 0
    out.append(("match winner", e))
    f = copy.deepcopy(rec)
    tf = rng.choice(f["deals"][rec["deals"].index(d)]["tricks"])
    tf["points"] += RANK_POINTS["Q"]
    out.append(("trick points", f))
    return out


def test_tampered_random_replays_are_reported():
    """docs/rules.md § Dealing and the trump: a record must follow from its decks and plays; verify catches a changed
    card, changed points and a changed winner."""
    rng = random.Random(5)
    checked = 0
    for j in range(150):
        m = random_match(50_000 + j, VARIANTS[j % len(VARIANTS)], renuncia_rate=0.0)
        rec = replay.record(m, f"t{j}", SEATS)
        for what, bad in _tampers(rec, rng):
            assert replay.verify(bad), (what, j)
            checked += 1
    assert checked == 750
