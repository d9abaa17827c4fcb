"""The worked examples of docs/rules.md, computed again by the engine (docs/rules.md § Worked
examples).

Every diagram of the page sits under a ``<!-- example: NAME -->`` marker. Here each one is rebuilt
from the example's inputs (the cards played, the decks, the variant) and everything the page
states as a consequence — who takes a trick, its points, a deal's card and game points, the
match score under each tie rule, when a redeal may be called — is read from the engine's own
results. The rebuilt text must equal the page's block, so the page and the code cannot drift
apart: change either and a test here fails. After an intended change, print the blocks with
``.venv/bin/python tests/engine/test_rules_examples.py`` and paste the ones that changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from kits.deals import build_deck, cs, hands_with, play_all

from sueca.engine import CARDS, Deal, Match, Variant, card, cards_of, deal_game_points
from sueca.engine.cards import SUIT_NAMES, hand_points

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
MARKER = re.compile(r"<!-- example: ([a-z0-9-]+) -->\n```text\n(.*?)```", re.S)
ORDINAL = ("1st", "2nd", "3rd", "4th")
RANK_ORDER = "A7KJQ65432"


def doc_blocks() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    blocks: dict[str, str] = {}
    for name, body in MARKER.findall(text):
        assert name not in blocks, f"example {name!r} appears twice in {DOC}"
        blocks[name] = body
    return blocks


def team(seat: int) -> str:
    return f"team {seat % 2}"


def by_suit(cards: Sequence[int]) -> str:
    """A hand as it is held: spades, hearts, diamonds, clubs, each high to low."""
    out = []
    for s in (3, 2, 1, 0):
        mine = sorted((c for c in cards if c // 10 == s), reverse=True)
        if mine:
            out.append(" ".join(str(CARDS[c]) for c in mine))
    return "   ".join(out)


# -- tricks --------------------------------------------------------------------------------------

def trick_diagram(deal: Deal, index: int, note: str = "") -> str:
    """One trick of a played deal drawn round the table: seat 0 at the bottom, seat 1 to its
    right, counter-clockwise as in Portugal (the direction is only a drawing)."""
    t = deal.tricks[index]
    played = dict(zip(t.seats(), t.cards, strict=True))
    order = {s: i for i, s in enumerate(t.seats())}

    def label(seat: int) -> tuple[str, str]:
        head = f"seat {seat} ({team(seat)})"
        if seat not in played:
            return head, "-  (no card: the deal has ended)"
        i = order[seat]
        return head, f"{played[seat]}  {ORDINAL[i]}" + (", led" if i == 0 else "")

    top, left, right, bottom = label(2), label(3), label(1), label(0)
    mid = 18
    lines = [f"trump: {SUIT_NAMES[deal.trump_suit]}          seat {t.leader} leads", "",
             " " * mid + top[0], " " * mid + top[1], "",
             left[0].ljust(2 * mid) + right[0], left[1].ljust(2 * mid) + right[1], "",
             " " * mid + bottom[0], " " * mid + bottom[1], ""]
    led = t.cards[0] // 10
    if t.winner is None:
        seat = deal.fault_seat
        assert seat is not None
        bad = t.cards[-1]
        held = sorted(cards_of(deal.hands[seat] & (((1 << 10) - 1) << (10 * led))), reverse=True)
        lines.append(f"renúncia: seat {seat} plays {bad}, not a {SUIT_NAMES[led][:-1]}, "
                     f"while holding {' '.join(map(str, held))}")
    else:
        win = played[t.winner]
        trumps = [c for c in t.cards if c // 10 == deal.trump_suit]
        if win // 10 == deal.trump_suit:
            why = "the only trump" if len(trumps) == 1 else "the highest trump"
        else:
            why = f"the highest {SUIT_NAMES[led][:-1]}, no trump played"
        lines.append(f"winner: seat {t.winner} ({team(t.winner)}) with {win}, {why}")
        parts = " + ".join(f"{c} {c.points}" for c in t.cards)
        lines.append(f"points: {parts} = {t.points}, to {team(t.winner)}")
    if note:
        lines.append(note)
    return "\n".join(line.rstrip() for line in lines) + "\n"


def first_trick(fixed: dict[int, str], dealer: int, trump: str, plays: str,
                avoid: dict[int, str] | None = None, seed: int = 1) -> Deal:
    """A deal whose first trick is ``plays``: the seats hold the ``fixed`` cards (the rest at
    random but never of the ``avoid`` suits) and the dealer's turned card is ``trump``."""
    hands = hands_with({s: cs(t) for s, t in fixed.items()}, seed=seed, avoid=avoid)
    deal = Deal(build_deck(hands, dealer, "last", trump), dealer)
    play_all(deal, cs(plays))  # each card checked legal first: no renúncia slips in unseen
    return deal


def example_trick_led_suit() -> str:
    # seat 2 has no diamond: it throws its ace of clubs away rather than trump with a spade
    deal = first_trick({0: "KD", 1: "7D", 2: "AC 2S", 3: "2D 6S"}, dealer=3, trump="6S",
                       plays="KD 7D AC 2D", avoid={2: "D"})
    return trick_diagram(deal, 0, "seat 2 had no diamond and chose not to trump: its AC wins nothing")


def example_trick_trumped() -> str:
    # the trick of the Chinese text (003): players 3, 1, 2, 4 are seats 1, 2, 3, 0 here
    deal = first_trick({1: "AS", 2: "2S 7S", 3: "QS", 0: "4H 5H"}, dealer=0, trump="5H",
                       plays="AS 2S QS 4H", avoid={0: "S"})
    return trick_diagram(deal, 0, "seat 2 keeps its 7S: it could not beat the AS and gives 0 instead")


def example_trick_overtrumped() -> str:
    deal = first_trick({2: "AD", 3: "2H", 0: "QH", 1: "7D 3H"}, dealer=1, trump="3H",
                       plays="AD 2H QH 7D", avoid={3: "D", 0: "D", 1: "D"})
    return trick_diagram(deal, 0, "seat 1 holds one diamond, the 7D, and must play it")


# -- dealing -------------------------------------------------------------------------------------

def dealing(trump_card: str, dealer: int = 2) -> str:
    deck = list(CARDS)  # card i of the deck (top first) is CARDS[i]: positions read back easily
    deal = Deal(deck, dealer, trump_card)
    turned = deck.index(deal.trump) + 1
    rows = []
    for seat in sorted(range(4), key=lambda s: min(deal.hand(s))):
        pos = sorted(deck.index(c) + 1 for c in deal.hand(seat))
        assert pos == list(range(pos[0], pos[0] + 10)), pos  # one batch of ten
        notes = []
        if seat == deal.turn:
            notes.append("plays first")
        if seat == dealer:
            which = "top" if turned == 1 else "bottom"
            notes.append(f"the dealer; card {turned}, the {which} card, is turned face up")
        note = f"  ({'; '.join(notes)})" if notes else ""
        rows.append(f"  deck cards {pos[0]:>2}-{pos[-1]:<2} ->  seat {seat}{note}")
    head = f"trump_card={trump_card}, dealer seat {dealer}"
    return "\n".join([head, *rows]) + "\n"


def example_deal_last() -> str:
    return dealing("last")


def example_deal_first() -> str:
    return dealing("first")


def example_weak_hand() -> str:
    weak, strong = "KS QD 6C 5H 4H 3S 3D 2C 2H 6S", "AS 6C 5H 4H 3S 3D 2C 2H 6S 5D"
    lines = ["weak_hand_redeal=on, dealer seat 1: seat 2 plays first", ""]
    for text in (weak, strong):
        hands = hands_with({2: cs(text)}, seed=3)
        deck = build_deck(hands, 1, "last", next(c for c in hands[1] if c // 10 == 1))
        m = Match(Variant(weak_hand_redeal=True), decks=[deck, deck], first_dealer=1)
        hand = m.deal.hand(2)
        worth = [CARDS[c] for c in sorted(hand, key=lambda c: (-(c // 10), -c)) if CARDS[c].points]
        pts = hand_points(m.deal.hands[2])
        lines.append(f"seat 2 holds {by_suit(hand)}")
        lines.append(f"  card points: {' + '.join(f'{c} {c.points}' for c in worth)} = {pts}")
        if m.can_redeal(2):
            lines.append("  10 or less: seat 2 is asked whether to call a redeal")
            m.redeal(True, 2)
            assert m.results[-1].end == "redeal"
            lines.append(f"  it calls one: the deal is thrown in and seat {m.deal.dealer} deals "
                         "again")
        else:
            lines.append("  more than 10: no redeal can be called; seat 2 leads")
        lines.append("")
    return "\n".join(lines[:-1]) + "\n"


# -- scoring -------------------------------------------------------------------------------------

SCORING_ROWS = [  # card points of team 0 and team 1, tricks taken by team 0 and team 1
    ((61, 59), (5, 5)), ((90, 30), (7, 3)), ((91, 29), (6, 4)), ((118, 2), (9, 1)),
    ((120, 0), (9, 1)), ((120, 0), (10, 0)), ((60, 60), (5, 5)), ((42, 78), (3, 7)),
]


def example_scoring() -> str:
    lines = ["card points      tricks     game points           game points",
             "team 0  team 1   t0 - t1    bandeira=all_tricks   bandeira=all_points"]
    # the columns start where the words of the header start
    for (p0, p1), (w0, w1) in SCORING_ROWS:
        assert p0 + p1 == 120 and w0 + w1 == 10
        a = deal_game_points((p0, p1), (w0, w1), "all_tricks")
        b = deal_game_points((p0, p1), (w0, w1), "all_points")
        show = [f"{x[0]} - {x[1]}" + ("  tie" if x == (0, 0) else "") for x in (a, b)]
        lines.append(f"  {p0:>3}     {p1:>3}   {w0:>2} - {w1:<2}     {show[0]:<22}{show[1]}")
    return "\n".join(line.rstrip() for line in lines) + "\n"


# -- a recorded match: heuristic bots, seed 91, first dealer seat 0 ------------------------------
# Eight deals as the example bots played them (deck top card first, then the cards in play
# order). Deals 5 and 6 are 60-60 ties in a row, which is what the tie example needs.
MATCH_91 = [
    ("KS AS 2C KD 5C 3C QS 6D AC JS 3H 2S 6H 3D 4S 3S AH AD KC 4D 2H 4H 2D 4C 7H QH JC QD JD JH "
     "7C 6S QC KH 5S 7S 6C 5H 5D 7D",
     "AS 2S 7H 5S AC KC JC 6C QS 3S 2H 7S 7C 2C AH 4C QC 3C AD 4H 3H QH KH 6D JS 4S JH 6S KS 6H "
     "2D 5D 7D KD 3D QD 5H 5C 4D JD"),
    ("KS 3S 6S 4H 3C 4C JH AS 6D 2H 2C 2S 6C AD KC 7H 3D KH JS AH 2D 3H QC 7S 7D 5D 6H 5H AC 7C "
     "JD JC QH 4D QD 5S QS 4S 5C KD",
     "AS 2S 7S 4S 2H KH 3H QH AH 5H JC 4H 2C 7C 5C 3C AC 4D 4C KC 5S KS JS QC 3S AD 6H QS 6C 7D "
     "QD JH 2D JD 6D 3D KD 6S 7H 5D"),
    ("3S 6S 2H 3C QD QS AD 6D JH 7C 6C KH 7H 4D 2C 3H 7D JC 6H KS QH 4S QC JD 5H 5C 2S AC AH 2D "
     "4C AS 5D 4H 3D KD 7S 5S JS KC",
     "AD 4D JD 3D 2H 3H AH 4H 2D 5D 6D 7D 7H 5H 7S JH 6H QH 5S QD 2S AS 3S KS JS 6S KH 4S KD 3C "
     "6C QC 5C 4C 7C 2C QS JC AC KC"),
    ("QH JC JD JH 3D 6S KH 5S 6C 6H 4C 7D 2H 5C 2D KD KS KC 4H 2C AD AH 2S QD 3H 6D 7H AS 7S 4S "
     "AC JS 3S QC 7C 4D 5D QS 5H 3C",
     "3D 2D 6D 4D AS 3S 5S KS AH 5H KH 2H AD 5D JD KD 7S QS 6S 2C 4H 7H 3C 6H JS QH 7D 2S QC 6C "
     "4C 3H 7C JC 5C 4S AC JH KC QD"),
    ("AH AD 2C 5S 7S 3D 6D JS 5D KD QH 4S QC 3C 5H JH QD KC 6S 2S JD 6C 3H 4C KS 4H KH 2H QS 5C "
     "JC 7H 3S 2D 6H 4D AC 7D AS 7C",
     "AH 5H KH 6H AD QD JD 2D 3D 3C 2H 7D 2S QS AS 5S 7H 2C QH 3H 7S 4S KS 3S JS 6S 4H 4D 5D JH "
     "4C JC 7C 6D QC 5C AC KD KC 6C"),
    ("AC KD 6C QD 7H 2C 3D 3C 4S 3H QC 2S 7C 5S AD 5C 7S AS QH 5D 5H 2H 7D 3S KS 6H 2D 4D JH 4C "
     "KC KH QS JC 6S JD 6D JS 4H AH",
     "AC 5C 4C JC 2C 7C 2H KC 2D 6D 3D AD AS 3S JS 4S 7S KS QS 3H 3C QC 4D JD 5D 7D 4H QD KH 7H "
     "QH 5H 6C 2S 6H 6S JH AH KD 5S"),
    ("4D AC 5C JS 2H 5H 6D 7D 6S 4S QS 2S 2C QC 7S 4H 4C AD 3S 5D JH 2D QH KD QD JC 7H 6C 3C KC "
     "5S JD AH 3H AS 3D KS 6H 7C KH",
     "AC 2C KC 7C 4D AD 2D JD 2S QH 5S JS 3C 3H 5C QC 3D 7D 5D KD 4S 3S 6C KS 6H 2H 4H JH QD KH "
     "6D 7S AH 5H QS 7H AS 6S 4C JC"),
    ("QS AH KD 4H 3C KH 3D 6H 6D QD 6C JH 7D KC JD 2C AS JS 4S 7H 3S 3H JC AC 4C 5S 2H 6S KS 5D "
     "7C 5H 2S 5C 7S 2D QH 4D QC AD",
     "AH JH 2H 5H 3C 2C 4C 5C 2S QS AS 3S 7H 3H QH 4H 4S 5S 7S 3D 6H JD 6S 7C 6C AC QC KH JC AD "
     "6D KC 2D QD 7D 5D JS KS 4D KD"),
]
WHOLE_DEAL = 6  # the deal after the two ties: dealer seat 2, hearts trump


def play_recorded(variant: Variant, deals: int = len(MATCH_91)) -> Match:
    m = Match(variant, decks=[cs(d) for d, _ in MATCH_91[:deals]], first_dealer=0)
    for _, plays in MATCH_91[:deals]:
        if m.over:
            break
        play_all(m, cs(plays))
    return m


def example_whole_deal() -> str:
    m = play_recorded(Variant(), WHOLE_DEAL + 1)
    deal = m.deals[WHOLE_DEAL]
    assert deal.number == WHOLE_DEAL and deal.end == "normal"
    lines = [f"dealer: seat {deal.dealer}   turned card: {deal.trump} "
             f"(trump: {SUIT_NAMES[deal.trump_suit]}), the last card dealt, in the dealer's hand",
             ""]
    for seat in sorted(range(4), key=lambda s: (s - deal.dealer - 1) % 4):
        first = "   plays first" if seat == (deal.dealer + 1) % 4 else ""
        mark = "   dealer" if seat == deal.dealer else first
        lines.append(f"seat {seat}: {by_suit(cards_of(deal.start_hands[seat]))}{mark}")
    lines += ["", "trick  seat 0  seat 1  seat 2  seat 3  winner           points  team 0  team 1"]
    run = [0, 0]
    for i, t in enumerate(deal.tricks, 1):
        cells = {s: f"{c}" + ("*" if s == t.leader else "") for s, c in
                 zip(t.seats(), t.cards, strict=True)}
        assert t.winner is not None
        run[t.winner % 2] += t.points
        row = "".join(f"{cells[s]:<8}" for s in range(4))
        who = f"seat {t.winner} ({team(t.winner)})"
        lines.append(f" {i:>2}    {row}{who:<17}{t.points:>6}{run[0]:>8}{run[1]:>8}")
    assert tuple(run) == tuple(deal.points)
    won = deal.tricks_won
    lines += ["(* leads the trick; the winner of a trick leads the next)", "",
              f"card points: team 0 {deal.points[0]}, team 1 {deal.points[1]} "
              f"({deal.points[0]} + {deal.points[1]} = {sum(deal.points)});"
              f" tricks: team 0 {won[0]}, team 1 {won[1]}"]
    base = deal_game_points(deal.points, won, "all_tricks")
    winner = 0 if base[0] else 1
    lines.append(f"team {winner} has {deal.points[winner]} card points (61-90): "
                 f"{base[winner]} game point before any tie hold-over")
    return "\n".join(line.rstrip() for line in lines) + "\n"


TIES = ("carry", "double", "none")


def example_ties() -> str:
    matches = {tie: play_recorded(Variant(tie=tie)) for tie in TIES}
    longest = max(len(m.results) for m in matches.values())
    head = ["deal  dealer  card points   " + "".join(f"tie={t:<16}" for t in TIES),
            "                t0 - t1     " + "deal     match      " * 3]
    lines = list(head)
    held = dict.fromkeys(TIES, 0)
    score = {t: [0, 0] for t in TIES}
    for n in range(longest):
        some = next(m for m in matches.values() if len(m.results) > n).results[n]
        row = f" {n + 1:>2}   seat {some.dealer}   {some.points[0]:>4} - {some.points[1]:<4}  "
        for tie in TIES:
            m = matches[tie]
            if n >= len(m.results):
                row += " " * 20
                continue
            r = m.results[n]
            assert r.points == some.points  # the same cards under every tie rule
            score[tie][0] += r.game_points[0]
            score[tie][1] += r.game_points[1]
            if r.game_points == (0, 0):
                held[tie] = held[tie] + 1 if tie != "none" else 0
                cell = {"carry": f"+{held[tie]} held", "double": f"x{2 ** held[tie]} next",
                        "none": "tie"}[tie]
            else:
                held[tie] = 0
                cell = f"{r.game_points[0]} - {r.game_points[1]}"
            match = f"{score[tie][0]} - {score[tie][1]}"
            if n == len(m.results) - 1:
                assert m.over and list(m.game_points) == score[tie]
                match += " over"
            row += f"{cell:<9}{match:<11}"
        lines.append(row)
    return "\n".join(line.rstrip() for line in lines) + "\n"


def renuncia_match(tie: str) -> Match:
    """Deal 1: the 60-60 tie of the recorded match (deal 5 there, dealer seat 0); deal 2 (dealer
    seat 1): seat 2 leads 7S and seat 3, holding spades, answers with a heart."""
    tie_deck, tie_plays = MATCH_91[4]
    hands = hands_with({2: cs("7S AD"), 3: cs("AH KS 3S"), 1: cs("2H")}, seed=5)
    m = Match(Variant(tie=tie), decks=[cs(tie_deck), build_deck(hands, 1, "last", "2H")],
              first_dealer=0)
    play_all(m, cs(tie_plays))
    assert m.results[-1].points == (60, 60) and m.deal.dealer == 1
    play_all(m, cs("7S"))
    assert m.deal.is_renuncia(card("AH"))
    m.play(card("AH"))
    return m


def example_renuncia() -> str:
    m = renuncia_match("carry")
    deal = m.deals[1]
    r = m.results[1]
    assert r.end == "renuncia" and r.fault_seat == 3
    assert m.over and m.winner == 0  # the page: "more than enough to win a match to 4"
    lines = [trick_diagram(deal, len(deal.tricks) - 1).rstrip("\n"), "",
             f"the deal ends at once; card points do not count ({r.points[0]} - {r.points[1]} so far)",
             "game points to the other side, after one 60-60 tie held over:"]
    for tie in TIES:
        g = renuncia_match(tie).results[1].game_points
        lines.append(f"  tie={tie:<7} {g[0]} - {g[1]}")
    return "\n".join(lines) + "\n"


EXAMPLES: dict[str, Callable[[], str]] = {
    "trick-led-suit": example_trick_led_suit,
    "trick-trumped": example_trick_trumped,
    "trick-overtrumped": example_trick_overtrumped,
    "deal-last": example_deal_last,
    "deal-first": example_deal_first,
    "weak-hand": example_weak_hand,
    "scoring": example_scoring,
    "whole-deal": example_whole_deal,
    "ties": example_ties,
    "renuncia": example_renuncia,
}


def test_every_example_of_the_page_is_checked_here():
    """docs/rules.md § Worked examples: no diagram escapes the engine's check, none is missing."""
    assert sorted(doc_blocks()) == sorted(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_matches_the_engine(name):
    """The page's diagram is exactly what the engine computes for the example's cards."""
    page = doc_blocks().get(name)
    assert page is not None, f"docs/rules.md has no example {name!r}"
    assert page == EXAMPLES[name](), f"docs/rules.md example {name!r} disagrees with the engine"


def test_recorded_match_is_legal_and_ends_as_the_page_says():
    """The recorded plays are all legal (play_all verifies each card) and the two ties in a row
    are real: deals 5 and 6 are 60-60 under every tie rule."""
    for tie in TIES:
        m = play_recorded(Variant(tie=tie))
        assert m.over
        assert [r.points for r in m.results[4:6]] == [(60, 60), (60, 60)]
    carry = play_recorded(Variant(tie="carry"))
    assert carry.results[6].game_points == (3, 0)  # 1 + 2 held over (000, 001, 002)
    assert carry.game_points == [4, 3] and carry.winner == 0
    none = play_recorded(Variant(tie="none"))
    assert none.results[6].game_points == (1, 0) and none.winner == 1


def test_renuncia_pays_four_plus_the_hold_over():
    """docs/rules.md § Where the texts are silent: a renúncia is a decided deal for the tie rule."""
    assert renuncia_match("carry").results[1].game_points == (5, 0)
    assert renuncia_match("double").results[1].game_points == (8, 0)
    assert renuncia_match("none").results[1].game_points == (4, 0)


def test_stopped_match_leaves_the_hold_over_unpaid():
    """docs/rules.md § Where the texts are silent: a match stopped by a timeout ends with what was
    held over still unpaid; the team of the seat at fault loses."""
    tie_deck, tie_plays = MATCH_91[4]
    m = Match(Variant(), decks=[cs(tie_deck)], first_dealer=0)
    play_all(m, cs(tie_plays))
    assert m.held == 1
    r = m.stop("timeout", 1)
    assert r.game_points == (0, 0) and m.game_points == [0, 0] and m.winner == 0


if __name__ == "__main__":  # print every block, to paste into the page after an intended change
    for key, make in EXAMPLES.items():
        print(f"<!-- example: {key} -->\n```text\n{make()}```\n")
