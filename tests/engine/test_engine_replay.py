"""Replay records: a recorded deck replays the same hands and every card re-plays through the
rules (docs/rules.md § Dealing and the trump: a recorded deck replays the same hands); tampering is caught."""

import copy
import json

import pytest
from kits.deals import VARIANTS, play_all, random_match, scripted

from sueca.engine import Match, ReplayError, Variant, replay

SEATS = ["north", "east", "south", "west"]


def _scripted_record():
    """tie (dealer 3), then a renúncia by seat 2 (dealer 0): team 1 scores 4 + 1 held over."""
    decks = [scripted("TIE_60_60", 3).deck, scripted("LEADER_62", 0).deck]
    m = Match(Variant(), seed=1, decks=decks, first_dealer=3)
    play_all(m, scripted("TIE_60_60", 3).plays)
    m.play(m.deal.legal_cards()[0])  # seat 1 leads
    off = next(c for c in m.deal.hand(2) if m.deal.is_renuncia(c))  # seat 2, team 0, reneges
    m.play(off)
    assert m.over and m.winner == 1 and m.game_points == [0, 5]
    return m, replay.record(m, "scripted-1", SEATS)


def test_record_holds_decks_hands_tricks_and_results():
    """docs/rules.md § Dealing and the trump: the deck order plus the variant reproduce the deal exactly; 003: the
    renúncia card is the offending card, the opponents score 4 (+1 held over, tie=carry)."""
    m, rec = _scripted_record()
    assert rec["format"] == "sueca-replay/1" and rec["match_id"] == "scripted-1"
    assert rec["seats"] == SEATS and rec["variant"] == Variant().to_dict()
    d0, d1 = rec["deals"]
    assert d0["dealer"] == 3 and d0["end"] == "normal" and d0["points"] == [60, 60]
    assert d0["game_points"] == [0, 0] and len(d0["tricks"]) == 10
    assert d0["hands"][0] == [str(c) for c in m.deals[0].deck[:10]]  # seat after the dealer
    assert d0["trump"] == str(m.deals[0].deck[39])
    assert d1["end"] == "renuncia" and d1["fault_seat"] == 2 and d1["game_points"] == [0, 5]
    assert d1["tricks"][-1]["winner"] is None and len(d1["tricks"][-1]["cards"]) == 2
    assert rec["game_points"] == [0, 5] and rec["winner"] == 1 and rec["end"] == "renuncia"
    assert replay.verify(rec) == []


def test_record_survives_json_and_files(tmp_path):
    """replay.py: one JSON object per match, one per line in a file."""
    m, rec = _scripted_record()
    again = json.loads(json.dumps(rec))
    assert again == rec and replay.verify(again) == []
    path = tmp_path / "replays.jsonl"
    replay.write(path, [rec, rec], append=False)
    with open(path, "a", encoding="utf-8") as f:
        f.write("\n{not json\n")
    rows = list(replay.read(path))
    assert [(n, r == rec, e) for n, r, e in rows[:2]] == [(1, True, None), (2, True, None)]
    assert rows[2][0] == 4 and rows[2][1] is None and "not JSON" in rows[2][2]


@pytest.mark.parametrize("k", range(0, len(VARIANTS), 5))
def test_random_matches_replay_and_verify(k):
    """docs/rules.md § Dealing and the trump: a recorded deck replays the same hands; every
    variant."""
    m = random_match(1000 + k, VARIANTS[k], renuncia_rate=0.01, stop_rate=0.002)
    rec = json.loads(json.dumps(replay.record(m, f"r{k}", SEATS)))
    assert replay.verify(rec) == []
    again = replay.replay(rec)
    assert again.game_points == m.game_points and again.winner == m.winner
    assert [d.start_hands for d in again.deals] == [d.start_hands for d in m.deals
                                                    if d.end is not None]


# -- tampering -------------------------------------------------------------------------------------

def _tamper(path, value):
    _, rec = _scripted_record()
    bad = copy.deepcopy(rec)
    target = bad
    for key in path[:-1]:
        target = target[key]
    old = target[path[-1]]
    target[path[-1]] = value(old) if callable(value) else value
    return rec, bad


@pytest.mark.parametrize("path,value,needle", [
    (("deals", 0, "tricks", 0, "cards", 1), "2S", ""),                # a changed card
    (("deals", 0, "tricks", 3, "cards", 0), "AS", ""),
    (("deals", 0, "points"), [61, 59], "points"),                     # points of a deal
    (("deals", 0, "tricks", 0, "points"), 27, "tricks"),              # points of a trick
    (("deals", 0, "tricks", 2, "winner"), 1, "tricks"),               # the winner of a trick
    (("winner",), 0, "winner"),                                       # the winner of the match
    (("game_points",), [0, 4], "game_points"),
    (("deals", 1, "game_points"), [0, 4], "game_points"),
    (("deals", 1, "fault_seat"), 0, "fault_seat"),
    (("deals", 1, "end"), "timeout", ""),
    (("deals", 0, "hands", 1, 0), "AS", "hands"),
    (("deals", 0, "trump"), "AS", "trump"),
    (("deals", 1, "dealer"), 1, "dealer"),
    (("end",), "normal", "end"),
    (("variant", "tie"), "double", ""),
    (("deals", 0, "deck"), lambda d: d[1:] + d[:1], ""),
])
def test_tampered_replay_is_reported(path, value, needle):
    """docs/rules.md § Dealing and the trump: the record must follow from its decks and plays; verify reports every
    difference (a changed card, points, a winner...)."""
    rec, bad = _tamper(path, value)
    assert bad != rec
    problems = replay.verify(bad)
    assert problems, path
    assert needle in " ".join(problems)


# -- bad replays -----------------------------------------------------------------------------------

def _bad(change):
    _, rec = _scripted_record()
    bad = copy.deepcopy(rec)
    change(bad)
    return bad


@pytest.mark.parametrize("make,needle", [
    (lambda: None, "format is None"),
    (lambda: "sueca", "format is 'sueca'"),
    (lambda: _bad(lambda r: r.update(format="sueca-replay/9")), "'sueca-replay/9'"),
    (lambda: _bad(lambda r: r.update(deals=[])), "non-empty list"),
    (lambda: _bad(lambda r: r.update(deals="x")), "'x'"),
    (lambda: _bad(lambda r: r.pop("variant")), "KeyError 'variant'"),
    (lambda: _bad(lambda r: r.update(variant={"tie": "triple"})), "'triple'"),
    (lambda: _bad(lambda r: r["deals"][0].pop("deck")), "KeyError 'deck'"),
    (lambda: _bad(lambda r: r["deals"][0]["deck"].pop()), "39 cards"),
    (lambda: _bad(lambda r: r["deals"][0]["deck"].__setitem__(0, "10H")), "'10H'"),
    (lambda: _bad(lambda r: r["deals"][0].update(dealer=7)), "7"),
    (lambda: _bad(lambda r: r["deals"][0]["tricks"][0]["cards"].__setitem__(0, "XZ")), "'XZ'"),
    (lambda: _bad(lambda r: r["deals"][0]["tricks"][0]["cards"].__setitem__(0, "AS")),
     "AS is not in the hand"),
    (lambda: _bad(lambda r: r["deals"][1]["tricks"][-1]["cards"].append("2C")),
     "the match is over"),
    (lambda: _bad(lambda r: r["deals"][0]["tricks"][-1]["cards"].append("2C")),
     "deal 1: card 2C is played after the deal ended"),
    (lambda: _bad(lambda r: r["deals"][0].update(end="redeal")), "no redeal"),
    (lambda: _bad(lambda r: r["deals"].append(r["deals"][1])), ""),
])
def test_bad_replay_is_refused_quoting_the_bad_value(make, needle):
    """replay.py: a malformed record, or one the rules refuse, raises ReplayError (and verify
    returns that message) quoting what was wrong."""
    bad = make()
    before = copy.deepcopy(bad)
    with pytest.raises(ReplayError) as err:
        replay.replay(bad)
    assert needle in str(err.value)
    assert replay.verify(bad) == [str(err.value)]
    assert bad == before  # the record itself is left as it was


def test_deal_after_the_match_is_over_is_refused():
    """000: the match ends when a team has four games; nothing may follow it."""
    s = scripted("LEADER_BANDEIRA", 3)
    m = Match(decks=[s.deck], first_dealer=3)
    play_all(m, s.plays)
    rec = replay.record(m, "b", SEATS)
    assert replay.verify(rec) == []
    rec["deals"].append(copy.deepcopy(rec["deals"][0]))
    with pytest.raises(ReplayError, match="already over"):
        replay.replay(rec)
