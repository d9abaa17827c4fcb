"""Each competition's ladder: who may play whom in it this tick, and its divisions' upkeep.

:func:`plays` reads every competition that plays its ladder (the default one, and every open
or frozen competition) into a :class:`Play`: its rules, the versions that play (the frozen ones
once frozen), the rating it pairs by, and its :class:`Board`\\ s, the groups a ladder match is
drawn within: all its entrants, or one board per division and one per newcomer still placing
(the newcomer and its next placement opponent). Before it does, :func:`upkeep` keeps a
competition's divisions: the first split once every entrant has played its placement matches,
a placed newcomer's division, and every ``every_s`` a promotion cycle, each move logged.

:func:`next_board` shares the slots of a tick: the competition with the fewest matches in
flight gets the next, and within it the board with the fewest; so every competition that can
play holds about ``target / n`` matches in flight, whatever the size of its field, and a
competition that cannot use its share leaves it to the others.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any, cast

from sueca.arena.competitions import divisions
from sueca.arena.lifecycle import DEFAULT, PLAYING, State
from sueca.arena.ratings.fit import Fit
from sueca.arena.records import CompetitionRecord, DivisionMove, Entry, MatchRecord
from sueca.arena.store import Store
from sueca.arena.store.fairplay import playable
from sueca.arena.store.ratings import fit_of_record

__all__ = ["Board", "Play", "plays", "upkeep", "next_board", "board_of", "competition_fit",
           "LOCK"]

#: the lock of a ladder tick, which writes entries (divisions, placement counts)
LOCK = "ladder"


@dataclasses.dataclass
class Board:
    """A group of bots a ladder match is drawn within: a competition's entrants, one of its
    divisions, or a placing newcomer and its next opponent (``placing``: at most one of its
    matches in flight, counted as played when scheduled)."""

    key: str
    bots: frozenset[str]
    placing: str | None = None


@dataclasses.dataclass
class Play:
    """One competition's ladder for a tick. ``secret`` None (the default ladder): seeds drawn
    at random, as the arena's ladder always has."""

    name: str
    variant: dict[str, Any]  # Any: a Variant's to_dict(), JSON values
    limits: dict[str, int | None]
    boards: list[Board]
    versions: dict[str, int]
    fit: Fit | None
    secret: str | None = None
    counts_placement: bool = False  # before the first split: every match is a placement one
    placed: dict[str, int] = dataclasses.field(default_factory=dict)  # placement matches played
    #: connected entrants its own fair-play rule suspends: they sit out of this ladder only
    sitting_out: frozenset[str] = frozenset()

    def count_placement(self, store: Store, board: Board, seated: Sequence[str]) -> None:
        """A match of ``seated`` on ``board`` was scheduled: count it as a placement match for
        the placing newcomer, or for both bots before the first split."""
        bots = [board.placing] if board.placing else list(seated) if self.counts_placement else []
        for bot in bots:
            self.placed[bot] = self.placed.get(bot, 0) + 1
            store.competitions.update_entry(self.name, bot, placed=self.placed[bot])


def competition_fit(store: Store, name: str) -> Fit:
    """The rating a competition pairs, splits and places by: its own rating of record, fit over
    its own results (the default ladder's is the arena's, over every rated result)."""
    return fit_of_record(store, None if name == DEFAULT else name)


def plays(store: Store, registered: Sequence[str], *, present: Collection[str],
          variant: Mapping[str, Any],  # Any: a Variant's to_dict(), JSON values
          limits: Mapping[str, int | None], now: float,
          running: Sequence[MatchRecord] = ()) -> list[Play]:
    """Every competition that plays its ladder now, the default first (``variant`` and
    ``limits`` are the default ladder's: the scheduler's options). ``present`` are the bots
    connected now (the first split waits for them only), ``running`` the ladder matches in
    flight (their hashes), so that a placing newcomer waits for its match. ``present`` has
    passed the arena's fair-play rule (:func:`sueca.arena.store.fairplay.playable`); each
    competition's own rule is applied here, to its entrants only (:attr:`Play.sitting_out`)."""
    fit = fit_of_record(store)
    bots = list(registered)
    out = [Play(DEFAULT, dict(variant), dict(limits), [Board(f"{DEFAULT}/all", frozenset(bots))],
                store.versions.currents(bots), fit)]
    for name in store.competitions.names():
        if name == DEFAULT:
            continue
        record = store.competitions.get(name)
        if record is None or record["state"] not in PLAYING:
            continue
        entries = {b: e for b, e in store.competitions.entries(name).items() if b in registered}
        if len(entries) < 2:
            continue
        rating = competition_fit(store, name)
        busy = Counter(b for m in running if m.get("competition") == name
                       for b in set(m["spec"].get("bots", ())))
        here = set(playable(store, {b: 0 for b in entries if b in present}, competition=name))
        entries = upkeep(store, name, record=record, entries=entries, rating=rating, now=now,
                         busy=busy, present=here)
        play = _play(store, name, record, entries, rating)
        play.sitting_out = frozenset(b for b in entries if b in present and b not in here)
        out.append(play)
    return out


def _play(store: Store, name: str, record: CompetitionRecord, entries: Mapping[str, Entry],
          rating: Fit) -> Play:
    spec = record["spec"]
    bots = sorted(entries)
    if record["state"] is State.FROZEN:
        current = store.versions.currents([b for b in bots if entries[b]["version"] is None])
        versions = {b: entries[b]["version"] or current.get(b, 1) for b in bots}
    else:
        versions = store.versions.currents(bots)
    play = Play(name, dict(spec["variant"]), dict(spec["limits"]), [], versions, rating,
                secret=store.competitions.secret(name),
                placed={b: int(e["placed"]) for b, e in entries.items()})
    shape = spec.get("divisions")
    if not shape:
        play.boards = [Board(f"{name}/all", frozenset(bots))]
        return play
    formed = any(e["division"] is not None for e in entries.values())
    if not formed:  # every entrant is placing: one board, every match a placement one
        play.boards = [Board(f"{name}/all", frozenset(bots))]
        play.counts_placement = True
        return play
    by_division: dict[int, set[str]] = {}
    for bot, entry in entries.items():
        if entry["division"] is not None:
            by_division.setdefault(entry["division"], set()).add(bot)
    play.boards = [Board(f"{name}/division {d}", frozenset(members))
                   for d, members in sorted(by_division.items()) if len(members) >= 2]
    ranking = divisions.ranked([b for m in by_division.values() for b in m], rating.rating)
    k = int(shape["placement"])
    rivals = divisions.opponents(ranking, k)
    for bot, entry in sorted(entries.items()):
        if entry["division"] is None and int(entry["placed"]) < k:
            if rivals:
                rival = rivals[int(entry["placed"]) % len(rivals)]
                play.boards.append(Board(f"{name}/placing {bot}", frozenset((bot, rival)),
                                         placing=bot))
    return play


def upkeep(store: Store, name: str, *, record: CompetitionRecord,
           entries: Mapping[str, Entry], rating: Fit, now: float, busy: Mapping[str, int],
           present: Collection[str]) -> dict[str, Entry]:
    """Keep competition ``name``'s divisions (nothing to do without): split its entrants
    connected now (``present``) once each has played its placement matches (one that was not
    connected places later, as a newcomer), give a placed newcomer (none of its matches in
    flight: ``busy``) its division, and run a promotion cycle every ``every_s`` after the
    split or the last cycle; each change in its divisions log. The entries after it."""
    shape = record["spec"].get("divisions")
    out: dict[str, Entry] = {b: cast(Entry, dict(e)) for b, e in entries.items()}
    if not shape:
        return out
    k = int(shape["placement"])
    ratings = rating.rating
    formed = {b: int(e["division"]) for b, e in out.items() if e["division"] is not None}
    moves: list[DivisionMove] = []
    if not formed:
        here = [b for b in out if b in present]
        if len(here) < 2 or any(int(out[b]["placed"]) < k for b in here):
            return out
        split = divisions.split(divisions.ranked(here, ratings), size=shape["size"],
                                count=shape["count"])
        moves = [{"bot": b, "from_division": None, "to": d} for b, d in split.items()]
        _apply(store, name, out, "split", moves, now)
        return out
    moves = [{"bot": bot, "from_division": None, "to": divisions.place(ratings.get(bot), formed,
                                                                      ratings)}
             for bot, entry in sorted(out.items())
             if entry["division"] is None and int(entry["placed"]) >= k and not busy.get(bot)]
    _apply(store, name, out, "placed", moves, now)
    formed.update({m["bot"]: m["to"] for m in moves})
    last = max((c["at"] for c in store.competitions.division_log(name)
                if c["kind"] in ("split", "cycle")), default=None)
    if last is not None and now - last >= float(shape["every_s"]):
        cycle = divisions.cycle(formed, ratings, int(shape["promote"]))
        _apply(store, name, out, "cycle", cycle, now, always=True)
    return out


def _apply(store: Store, name: str, entries: dict[str, Entry], kind: str,
           moves: list[DivisionMove], now: float, *, always: bool = False) -> None:
    """Write ``moves`` to the entries and log them as one change (a cycle is logged even when
    nothing moves: it restarts the clock of the next)."""
    for m in moves:
        entries[m["bot"]] = store.competitions.update_entry(name, m["bot"], division=m["to"])
    if moves or always:
        store.competitions.note_divisions(name, {"kind": kind, "at": now, "by": "scheduler",
                                                 "moves": moves})


def board_of(play: Play, bots: Sequence[str]) -> Board | None:
    """The board of ``play`` a match of ``bots`` belongs to (for counting those in flight)."""
    seated = set(bots)
    for board in play.boards:
        if board.placing is not None and board.placing in seated and seated <= board.bots:
            return board
    for board in play.boards:
        if board.placing is None and seated <= board.bots:
            return board
    return None


def next_board(plays: Sequence[Play], *, by_play: Mapping[str, int],
               by_board: Mapping[str, int], done: set[str]) -> tuple[Play, Board] | None:
    """The board that gets the next slot: the competition with the fewest matches in flight
    (``by_play``, by competition name), then its board with the fewest (``by_board``, by
    key); boards in ``done`` (no pair to draw, or a placing newcomer's match in flight) are
    passed over, and a competition with none left."""
    open_plays = [p for p in plays if any(b.key not in done for b in p.boards)]
    if not open_plays:
        return None
    play = min(open_plays, key=lambda p: (by_play.get(p.name, 0), p.name))
    board = min((b for b in play.boards if b.key not in done),
                key=lambda b: (by_board.get(b.key, 0), b.key))
    return play, board
