"""Single- and double-elimination brackets: a pure function of the seeded bots and the matches
recorded so far (no I/O), so that re-building a bracket from the stored results always gives
the same ties, the same winners and the same matches still to play.

Seeding. Bots are seeded in the order given (seed 1 first). The winners' bracket has P slots, P
the power of two at or above the field, filled in the standard order (1 meets P, 2 meets P - 1,
...; seeds 1 and 2 in opposite halves, 1-4 in different quarters, so the top seeds meet late).
Slots past the field are byes: the top P - n seeds pass round 1 without playing.

A tie is ``best_of`` duplicate pairs (two matches on the same decks, teams swapped, as a
``duplicate`` tournament plays them), all scheduled at once, scored per match: the bot that won
more of the tie's matches goes through. When they won as many, the tie-break, in order:

1. more game points over the tie's matches;
2. one extra duplicate pair, and the tie is scored again over all its pairs (matches won, then
   game points), up to :data:`EXTRA_PAIRS` extra pairs;
3. the higher seed (the lower seed number).

Card points are not in the results log, so they are not a tie-break. A tie's ``by`` says which
rule decided it: ``bye``, ``matches``, ``game points`` or ``seed``.

Knockout (:data:`KNOCKOUT`): the winner of each tie goes on; the loser is out. Double
elimination (:data:`DOUBLE`): a bot is out after its second lost tie. Losers of winners' round
1 meet in losers' round 1; each later winners' round's losers drop into a losers' round against
the survivors there (in reverse order every other round, so a bot does not at once meet the bot
that just beat it); the losers' bracket has 2 (k - 1) rounds for k winners' rounds. The grand
final sets the winners' bracket winner against the losers' bracket winner; when the latter wins
it, the bracket is *reset*: a second grand final between the two (each has then lost once)
decides the champion. Every bot but the champion therefore loses exactly two ties; the
champion loses none, or one when the bracket was reset.

A tie is ready to play as soon as both its bots are known: its matches are in :func:`schedule`
from then on. A bye needs nothing played. Places: the champion first, then the bots in the
reverse order of the round that eliminated them, those of one round sharing its places
(``place`` to ``last``: the semi-final losers of a knockout are 3-4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import NamedTuple, TypedDict

__all__ = ["KNOCKOUT", "DOUBLE", "FORMATS", "EXTRA_PAIRS", "BracketError", "Game", "Tie",
           "Round", "Placing", "Bracket", "BracketMatch", "bracket", "schedule", "match_key",
           "seeding_order"]

KNOCKOUT = "knockout"
DOUBLE = "double-elimination"
FORMATS = (KNOCKOUT, DOUBLE)
#: Extra duplicate pairs a level tie plays, one at a time, before the higher seed goes through.
EXTRA_PAIRS = 3


class BracketError(ValueError):
    """A bracket that cannot be made (a bad format, too few bots, a bad best-of); the message
    quotes the bad value."""


class Game(NamedTuple):
    """One recorded match of a tie: the bot whose team won (None: no winner) and each bot's
    game points."""

    winner: str | None
    points: Mapping[str, int]


class Tie(TypedDict):
    """One tie of the bracket. ``bots`` are None while not known (and on a bye's empty side);
    ``wins`` and ``points`` count the recorded matches, by side."""

    id: str  # "W1-1" (winners' round 1, first tie), "L2-1", "GF1", "GF2"
    bracket: str  # "winners", "losers" or "final"
    round: int
    bots: list[str | None]
    seeds: list[int | None]
    bye: bool  # one side is empty: the other goes through without playing
    pairs: int  # duplicate pairs scheduled: best_of, plus the extra pairs of a tie-break
    played: int  # matches recorded
    wins: list[int]  # matches won, by side
    points: list[int]  # game points, by side
    winner: str | None  # None while undecided
    loser: str | None
    by: str | None  # how it was decided: "bye", "matches", "game points", "seed"
    matches: list[str]  # the keys of its matches (match_key), scheduled so far


class Round(TypedDict):
    bracket: str
    round: int
    name: str  # "Round 1", "Semi-finals", "Final", "Losers' round 2", "Grand final", ...
    ties: list[Tie]  # empty ties (two byes meeting) left out
    decided: bool  # every tie decided


class Placing(TypedDict):
    """A bot's final place: ``place`` to ``last`` (shared by the bots one round eliminated);
    None while it is still in."""

    bot: str
    seed: int
    place: int | None
    last: int | None
    out: str  # the round that eliminated it, "champion", or "" while it is still in
    losses: int  # ties lost


class Bracket(TypedDict):
    format: str  # KNOCKOUT or DOUBLE
    best_of: int
    seeds: list[str]  # the bots, seed 1 first
    rounds: list[Round]  # in the order they play: winners' rounds, losers' rounds, finals
    champion: str | None
    reset: bool  # a double elimination whose grand final was reset (a second one played)
    standings: list[Placing]  # by place, bots still in first; then by seed


class BracketMatch(NamedTuple):
    """A match the bracket needs: ``key`` (:func:`match_key`) of duplicate ``pair`` of ``tie``,
    ``seats`` its two bots, the first on team 0 (seats 0 and 2)."""

    key: str
    tie: str
    pair: int
    seats: tuple[str, str]


class _Open(Enum):
    OPEN = 0  # a side not known yet


_OPEN = _Open.OPEN
Slot = str | None | _Open  # a bot, an empty side (a bye), or not known yet


def match_key(tie: str, pair: int, half: int) -> str:
    """The key of one match of a tie: ``W1-2-0a``, duplicate pair 0's first half of tie W1-2
    (the tournament's match id is its id, a dash and this key)."""
    return f"{tie}-{pair}{'ab'[half]}"


def seeding_order(size: int) -> list[int]:
    """Seed numbers by slot for a bracket of ``size`` (a power of two) slots: slot 2i meets
    slot 2i + 1 in round 1. [1, 8, 4, 5, 2, 7, 3, 6] for 8."""
    order = [1]
    while len(order) < size:
        n = 2 * len(order)
        order = [s for x in order for s in (x, n + 1 - x)]
    return order


class _Build:
    """The bracket as it stands: ties resolved in play order from the recorded games."""

    def __init__(self, bots: Sequence[str], best_of: int, games: Mapping[str, Game]) -> None:
        self.seed = {b: i + 1 for i, b in enumerate(bots)}
        self.best_of, self.games = best_of, games
        self.rounds: list[Round] = []
        self.losses: dict[str, int] = dict.fromkeys(bots, 0)
        self.out: dict[str, tuple[int, str]] = {}  # bot -> (stage, round name) it went out in
        self.stage_size: dict[int, int] = {}  # stage -> bots it eliminates (real ties)

    def round(self, bracket: str, number: int, name: str, sides: Sequence[tuple[Slot, Slot]],
              *, stage: int | None) -> tuple[list[Slot], list[Slot]]:
        """Resolve one round's ties; returns their winners and losers, by tie. A loser is out
        when ``stage`` is given (the order in which rounds eliminate, for the places)."""
        ties: list[Tie] = []
        winners: list[Slot] = []
        losers: list[Slot] = []
        prefix = {"winners": "W", "losers": "L", "final": "GF"}[bracket]
        for i, (a, b) in enumerate(sides):
            tid = f"{prefix}{number}-{i + 1}" if bracket != "final" else f"GF{number}"
            tie, winner, loser = self.tie(tid, bracket, number, (a, b))
            winners.append(winner)
            losers.append(loser)
            if tie is not None:
                ties.append(tie)
            if stage is not None and a is not None and b is not None:
                self.stage_size[stage] = self.stage_size.get(stage, 0) + 1
                if isinstance(loser, str):
                    self.out[loser] = (stage, name)
        self.rounds.append({"bracket": bracket, "round": number, "name": name, "ties": ties,
                            "decided": all(t["winner"] is not None for t in ties)})
        return winners, losers

    def tie(self, tid: str, bracket: str, number: int, sides: tuple[Slot, Slot]
            ) -> tuple[Tie | None, Slot, Slot]:
        """One tie: the Tie shown (None for two empty sides), its winner and loser."""
        a, b = sides
        if a is None and b is None:
            return None, None, None
        shown: list[str | None] = [x if isinstance(x, str) else None for x in (a, b)]
        tie: Tie = {"id": tid, "bracket": bracket, "round": number, "bots": shown,
                    "seeds": [self.seed[x] if x is not None else None for x in shown],
                    "bye": a is None or b is None, "pairs": 0, "played": 0, "wins": [0, 0],
                    "points": [0, 0], "winner": None, "loser": None, "by": None, "matches": []}
        if a is None or b is None:  # a bye: the other side goes through, nobody loses
            other = b if a is None else a
            if isinstance(other, str):
                tie["winner"], tie["by"] = other, "bye"
            return tie, other, None
        if not isinstance(a, str) or not isinstance(b, str):
            return tie, _OPEN, _OPEN
        winner, tie["by"] = self.play(tie, a, b)
        if winner is None:
            return tie, _OPEN, _OPEN
        loser = b if winner == a else a
        tie["winner"], tie["loser"] = winner, loser
        self.losses[loser] += 1
        return tie, winner, loser

    def play(self, tie: Tie, a: str, b: str) -> tuple[str | None, str | None]:
        """Score the tie's recorded matches, scheduling pairs as the tie-break asks; returns
        (the winner, the rule that decided) or (None, None) while matches are to play."""
        pairs = self.best_of
        while True:
            keys = [match_key(tie["id"], p, h) for p in range(pairs) for h in (0, 1)]
            got = [self.games[k] for k in keys if k in self.games]
            tie["pairs"], tie["matches"], tie["played"] = pairs, keys, len(got)
            tie["wins"] = [sum(g.winner == x for g in got) for x in (a, b)]
            tie["points"] = [sum(g.points.get(x, 0) for g in got) for x in (a, b)]
            if len(got) < len(keys):
                return None, None
            (wa, wb), (pa, pb) = tie["wins"], tie["points"]
            if wa != wb:
                return (a if wa > wb else b), "matches"
            if pa != pb:
                return (a if pa > pb else b), "game points"
            if pairs - self.best_of >= EXTRA_PAIRS:
                return (a if self.seed[a] < self.seed[b] else b), "seed"
            pairs += 1


def bracket(fmt: str, bots: Sequence[str], best_of: int,
            games: Mapping[str, Game]) -> Bracket:
    """The bracket of ``bots`` (seed 1 first) in format ``fmt`` (:data:`FORMATS`), each tie
    ``best_of`` duplicate pairs, from the recorded ``games`` by match key (:func:`match_key`);
    BracketError quoting a bad argument."""
    if fmt not in FORMATS:
        raise BracketError(f"bad bracket format {fmt[:40]!r}: one of {', '.join(FORMATS)}")
    if len(bots) < 2 or len(set(bots)) != len(bots):
        raise BracketError(f"a bracket needs at least 2 different bots, got {list(bots)!r}")
    if best_of < 1:
        raise BracketError(f"a tie is at least 1 duplicate pair, got best of {best_of}")
    size = 1 << (len(bots) - 1).bit_length()
    k = size.bit_length() - 1  # winners' rounds
    build = _Build(bots, best_of, games)
    slots: list[Slot] = [bots[s - 1] if s <= len(bots) else None for s in seeding_order(size)]
    knockout = fmt == KNOCKOUT
    dropped: list[list[Slot]] = []  # the losers of each winners' round
    for r in range(1, k + 1):
        name = _knockout_name(r, k) if knockout else ("Winners' final" if r == k
                                                      else f"Winners' round {r}")
        slots, lost = build.round("winners", r, name, _pairs(slots), stage=r if knockout else None)
        dropped.append(lost)
    top = slots[0]
    if knockout:
        return _finish(fmt, bots, build, top, reset=False)
    # the losers' bracket: round 1 pairs the losers of winners' round 1; round 2(r - 1) meets
    # the losers of winners' round r; the odd rounds between halve the field
    alive: list[Slot] = dropped[0] if k == 1 else []
    lb = 0
    for r in range(2, k + 1):
        lb += 1
        alive, _ = build.round("losers", lb, _losers_name(lb, k),
                               _pairs(dropped[0] if r == 2 else alive), stage=lb)
        drop = dropped[r - 1][::-1] if r % 2 == 0 else dropped[r - 1]
        lb += 1
        alive, _ = build.round("losers", lb, _losers_name(lb, k), list(zip(alive, drop)),
                               stage=lb)
    bottom = alive[0]
    final = lb + 1
    [won], _ = build.round("final", 1, "Grand final", [(top, bottom)], stage=None)
    if isinstance(won, str) and won == bottom:  # the losers' bracket winner won: reset
        [won], _ = build.round("final", 2, "Grand final, reset", [(top, bottom)], stage=final)
        return _finish(fmt, bots, build, won, reset=True)
    gf = build.rounds[-1]["ties"][0]
    if isinstance(gf["loser"], str):
        build.out[gf["loser"]] = (final, "Grand final")
    build.stage_size[final] = 1
    return _finish(fmt, bots, build, won, reset=False)


def _pairs(slots: Sequence[Slot]) -> list[tuple[Slot, Slot]]:
    return [(slots[i], slots[i + 1]) for i in range(0, len(slots), 2)]


def _knockout_name(r: int, k: int) -> str:
    return {k: "Final", k - 1: "Semi-finals", k - 2: "Quarter-finals"}.get(r, f"Round {r}")


def _losers_name(j: int, k: int) -> str:
    return "Losers' final" if j == 2 * (k - 1) else f"Losers' round {j}"


def _finish(fmt: str, bots: Sequence[str], build: _Build, top: Slot, *, reset: bool) -> Bracket:
    """The bracket's champion and places."""
    champion = top if isinstance(top, str) else None
    n = len(bots)
    below: dict[int, int] = {}  # stage -> the last place of the bots it eliminated
    left = n
    for stage in sorted(build.stage_size):
        below[stage] = left
        left -= build.stage_size[stage]
    table: list[Placing] = []
    for bot in bots:
        place: Placing = {"bot": bot, "seed": build.seed[bot], "place": None, "last": None,
                          "out": "", "losses": build.losses[bot]}
        if bot == champion:
            place["place"], place["last"], place["out"] = 1, 1, "champion"
        elif bot in build.out:
            stage, name = build.out[bot]
            place["place"] = below[stage] - build.stage_size[stage] + 1
            place["last"], place["out"] = below[stage], name
        table.append(place)
    table.sort(key=lambda p: (p["place"] is not None, p["place"] or 0, p["seed"]))
    return {"format": fmt, "best_of": build.best_of, "seeds": list(bots),
            "rounds": build.rounds, "champion": champion, "reset": reset, "standings": table}


def schedule(b: Bracket) -> list[BracketMatch]:
    """Every match the bracket has needed so far, recorded or not, in play order: the
    duplicate pairs of each tie whose two bots are known (a bye has none)."""
    out = []
    for r in b["rounds"]:
        for t in r["ties"]:
            x, y = t["bots"]
            if t["bye"] or x is None or y is None:
                continue
            for p in range(t["pairs"]):
                out.append(BracketMatch(match_key(t["id"], p, 0), t["id"], p, (x, y)))
                out.append(BracketMatch(match_key(t["id"], p, 1), t["id"], p, (y, x)))
    return out
