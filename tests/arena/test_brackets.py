"""Single- and double-elimination brackets (sueca.arena.brackets), pure: every field of 2 to 17
bots played out on random results from a seeded generator, and each tie-break rule."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from sueca.arena.brackets import (
    DOUBLE,
    EXTRA_PAIRS,
    FORMATS,
    KNOCKOUT,
    BracketError,
    Game,
    bracket,
    match_key,
    schedule,
    seeding_order,
)


def _play(fmt, n, rng, best_of=1, level=0.3):
    """Play a bracket of ``n`` bots to its end on random results; a match has no winner now and
    then, and game points are often level (so that every tie-break rule is reached). Returns
    the final bracket and every bracket on the way."""
    bots = [f"b{i}" for i in range(1, n + 1)]
    games, seen = {}, []
    while True:
        b = bracket(fmt, bots, best_of, games)
        seen.append(b)
        todo = [m for m in schedule(b) if m.key not in games]
        if not todo:
            return b, seen, games
        for m in todo[:rng.randint(1, len(todo))]:  # results arrive in any number at a time
            x, y = m.seats
            winner = rng.choice((x, y, x, y, None))
            pts = rng.randint(0, 4)
            points = {x: pts, y: pts} if rng.random() < level else {x: rng.randint(0, 4),
                                                                    y: rng.randint(0, 4)}
            games[m.key] = Game(winner, points)


def _ties(b):
    return [t for r in b["rounds"] for t in r["ties"]]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n", range(2, 18))
def test_every_field_plays_out_to_one_champion(fmt, n):
    size = 1 << (n - 1).bit_length()
    by_rule: Counter[str] = Counter()
    for seed in range(12):
        rng = random.Random(seed * 100 + n)
        b, seen, games = _play(fmt, n, rng, best_of=1 + seed % 2)
        ties = _ties(b)
        by_rule.update(t["by"] for t in ties)
        # byes: the top size - n seeds, in round 1, and nowhere else in the winners' bracket
        first = b["rounds"][0]["ties"]
        assert sorted(t["seeds"][0] for t in first if t["bye"]) == list(range(1, size - n + 1))
        assert all(t["bots"][1] is None for t in first if t["bye"])
        assert not any(t["bye"] for t in ties if t["bracket"] == "winners" and t["round"] > 1)
        assert len(first) == size // 2
        # one champion, every tie decided, no bot twice in a round
        assert b["champion"] is not None and all(r["decided"] for r in b["rounds"])
        for r in b["rounds"]:
            inside = [x for t in r["ties"] for x in t["bots"] if x]
            assert len(inside) == len(set(inside)), r
        losses = {p["bot"]: p["losses"] for p in b["standings"]}
        lost = Counter(t["loser"] for t in ties if t["loser"])
        assert all(lost[bot] == k for bot, k in losses.items())
        others = [bot for bot in losses if bot != b["champion"]]
        if fmt == KNOCKOUT:
            assert all(losses[bot] == 1 for bot in others) and losses[b["champion"]] == 0
            # every bot plays each round until it is out: it is in round r's ties for every r
            # up to the one it lost (a bye in round 1 counts as being in it)
            for bot in losses:
                rounds = [t["round"] for t in ties if bot in t["bots"]]
                assert rounds == list(range(1, len(rounds) + 1)), (bot, rounds)
                if bot != b["champion"]:
                    assert ties[[t["loser"] for t in ties].index(bot)]["round"] == rounds[-1]
        else:
            assert all(losses[bot] == 2 for bot in others), losses
            gf1 = next(t for t in ties if t["id"] == "GF1")
            assert b["reset"] == (gf1["winner"] == gf1["bots"][1])
            assert losses[b["champion"]] == (1 if b["reset"] else 0)
            assert [t["id"] for t in ties if t["bracket"] == "final"] == (
                ["GF1", "GF2"] if b["reset"] else ["GF1"])
            # a bot plays until its second loss, never after it
            for bot in losses:
                mine = [t for t in ties if bot in t["bots"] and not t["bye"]]
                second = [i for i, t in enumerate(mine)
                          if sum(u["loser"] == bot for u in mine[:i + 1]) == 2]
                assert not second or second[0] == len(mine) - 1, (bot, mine)
        # places: 1 to n, each round's losers sharing theirs
        places = sorted((p["place"], p["last"]) for p in b["standings"])
        assert places[0] == (1, 1) and places[-1][1] == n
        groups = Counter(places)
        for (first_place, last), count in groups.items():
            assert last - first_place + 1 == count
        # the matches: unique keys, each tie best_of pairs plus at most EXTRA_PAIRS
        keys = [m.key for m in schedule(b)]
        assert len(keys) == len(set(keys)) == len(games)
        for t in ties:
            assert t["bye"] or b["best_of"] <= t["pairs"] <= b["best_of"] + EXTRA_PAIRS
        # a decided tie never changes as results come; the same results in another order
        # build the same bracket
        final = {t["id"]: t for t in ties}
        for partial in seen:
            for t in _ties(partial):
                if t["winner"] is not None:
                    assert final[t["id"]] == t
        shuffled = list(games.items())
        rng.shuffle(shuffled)
        assert bracket(fmt, b["seeds"], b["best_of"], dict(shuffled)) == b
    if n == 2 or n >= 8:
        assert {"matches", "game points"} <= set(by_rule)


def test_seeding_keeps_the_top_seeds_apart():
    assert seeding_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    for size in (4, 8, 16, 32):
        order = seeding_order(size)
        assert sorted(order) == list(range(1, size + 1))
        assert all(order[i] + order[i + 1] == size + 1 for i in range(0, size, 2))
        for parts in (2, 4):  # seeds 1-2 in different halves, 1-4 in different quarters
            part = size // parts
            assert len({order.index(s) // part for s in range(1, parts + 1)}) == parts


def _one_tie(results, best_of=1, bots=("top", "low")):
    """A knockout of two bots: its one tie W1-1, from results given as (winner, points of
    top, points of low) by match key."""
    games = {k: Game(w, {bots[0]: p0, bots[1]: p1}) for k, (w, p0, p1) in results.items()}
    b = bracket(KNOCKOUT, list(bots), best_of, games)
    return b, b["rounds"][0]["ties"][0]


def _pair(p, first, second):
    return {match_key("W1-1", p, 0): first, match_key("W1-1", p, 1): second}


def test_a_tie_goes_to_more_matches_won():
    b, tie = _one_tie({**_pair(0, ("low", 1, 4), ("low", 0, 4)), **_pair(1, ("top", 4, 3),
                                                                          (None, 2, 2))}, 2)
    assert (tie["winner"], tie["by"], tie["wins"]) == ("low", "matches", [1, 2])
    assert b["champion"] == "low" and tie["points"] == [7, 13]


def test_a_level_tie_goes_to_more_game_points():
    _, tie = _one_tie(_pair(0, ("top", 4, 3), ("low", 1, 4)))
    assert (tie["winner"], tie["by"], tie["points"]) == ("low", "game points", [5, 7])


def test_a_level_tie_then_plays_extra_pairs_one_at_a_time():
    level = _pair(0, ("top", 4, 2), ("low", 2, 4))
    b, tie = _one_tie(level)
    assert tie["winner"] is None and tie["pairs"] == 2 and b["champion"] is None
    assert [m.key for m in schedule(b)] == ["W1-1-0a", "W1-1-0b", "W1-1-1a", "W1-1-1b"]
    assert [m.seats for m in schedule(b)][2:] == [("top", "low"), ("low", "top")]
    _, tie = _one_tie({**level, match_key("W1-1", 1, 0): ("low", 0, 4)})
    assert tie["winner"] is None and tie["played"] == 3  # the extra pair's second half to play
    b, tie = _one_tie({**level, **_pair(1, ("low", 1, 4), ("top", 4, 0))})
    assert (tie["winner"], tie["by"], tie["wins"]) == ("top", "game points", [2, 2])
    b, tie = _one_tie({**level, **_pair(1, ("low", 0, 4), ("low", 3, 4))})
    assert (tie["winner"], tie["by"]) == ("low", "matches")


def test_a_tie_level_after_every_extra_pair_goes_to_the_higher_seed():
    level = {}
    for p in range(1 + EXTRA_PAIRS):
        level.update(_pair(p, ("top", 4, 2), ("low", 2, 4)))
    b, tie = _one_tie(level)
    assert (tie["winner"], tie["by"], tie["pairs"]) == ("top", "seed", 1 + EXTRA_PAIRS)
    # the higher seed is the first listed, whatever the side it plays on
    _, tie = _one_tie(level, bots=("low", "top"))
    assert (tie["winner"], tie["by"]) == ("low", "seed")
    # one extra pair fewer: still playing
    del level[match_key("W1-1", EXTRA_PAIRS, 1)]
    _, tie = _one_tie(level)
    assert tie["winner"] is None


def _de2(gf):
    """A double elimination of two bots: top wins the winners' final; then the grand finals."""
    games = {**{k: Game("top", {"top": 4, "low": 0}) for k in ("W1-1-0a", "W1-1-0b")}}
    for tie, winner in gf:
        for h in "ab":
            games[f"{tie}-0{h}"] = Game(winner, {winner: 4})
    return bracket(DOUBLE, ["top", "low"], 1, games)


def test_the_grand_final_is_reset_when_the_losers_bracket_winner_wins_it():
    b = _de2([])
    assert [t["id"] for t in _ties(b)] == ["W1-1", "GF1"] and b["champion"] is None
    assert _ties(b)[1]["bots"] == ["top", "low"]  # the winners' bracket winner first
    b = _de2([("GF1", "top")])
    assert (b["champion"], b["reset"]) == ("top", False)
    assert [t["id"] for t in _ties(b)] == ["W1-1", "GF1"]
    assert [(p["bot"], p["place"], p["losses"]) for p in b["standings"]] == [
        ("top", 1, 0), ("low", 2, 2)]
    b = _de2([("GF1", "low")])
    assert b["champion"] is None and b["reset"]
    assert [m.key for m in schedule(b)][-2:] == ["GF2-0a", "GF2-0b"]
    for winner, loser in (("low", "top"), ("top", "low")):
        b = _de2([("GF1", "low"), ("GF2", winner)])
        assert (b["champion"], b["reset"]) == (winner, True)
        assert {p["bot"]: p["losses"] for p in b["standings"]} == {winner: 1, loser: 2}


def test_standings_while_playing_and_at_the_end():
    b = bracket(KNOCKOUT, ["a", "b", "c", "d", "e"], 1, {
        "W1-2-0a": Game("e", {}), "W1-2-0b": Game("e", {})})
    assert [t["by"] for t in b["rounds"][0]["ties"]] == ["bye", "matches", "bye", "bye"]
    table = {p["bot"]: (p["place"], p["last"], p["out"]) for p in b["standings"]}
    assert table["d"] == (5, 5, "Quarter-finals") and table["a"] == (None, None, "")
    assert [p["bot"] for p in b["standings"]] == ["a", "b", "c", "e", "d"]
    assert [r["name"] for r in b["rounds"]] == ["Quarter-finals", "Semi-finals", "Final"]
    names = [r["name"] for r in bracket(DOUBLE, list("abcdefgh"), 1, {})["rounds"]]
    assert names == ["Winners' round 1", "Winners' round 2", "Winners' final",
                     "Losers' round 1", "Losers' round 2", "Losers' round 3", "Losers' final",
                     "Grand final"]


def test_a_bad_bracket_is_refused():
    for args, says in (((("knock", ["a", "b"], 1)), "bad bracket format 'knock'"),
                       ((KNOCKOUT, ["a"], 1), "at least 2 different bots"),
                       ((DOUBLE, ["a", "a"], 1), "at least 2 different bots"),
                       ((KNOCKOUT, ["a", "b"], 0), "best of 0")):
        with pytest.raises(BracketError, match=says):
            bracket(*args, {})
