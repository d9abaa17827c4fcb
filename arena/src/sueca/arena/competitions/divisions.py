"""A competition's divisions, as pure functions of its entrants and their ratings.

Division 0 is the top one. :func:`split` makes the divisions from a ranking, :func:`cycle`
promotes the best of each division and relegates the worst (``promote`` bots each way between
two adjacent divisions, all moves decided on the divisions as they were), :func:`opponents`
picks a newcomer's placement opponents spread over the ranking, best to worst (a newcomer
rated against the top, the middle and the bottom alike is placed from few matches, as
aiarena does), and :func:`place` gives a placed newcomer the division its rating belongs to.

Ratings are the competition's rating of record (higher is better); a bot with none ranks below
every rated bot, ties by name, so that every answer is a function of its inputs alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from sueca.arena.records import DivisionMove

__all__ = ["ranked", "split", "cycle", "opponents", "place"]


def ranked(bots: Sequence[str], ratings: Mapping[str, float]) -> list[str]:
    """``bots`` best first by ``ratings``; unrated ones last; ties by name."""
    return sorted(bots, key=lambda b: (b not in ratings, -ratings.get(b, 0.0), b))


def split(ranking: Sequence[str], *, size: int | None = None,
          count: int | None = None) -> dict[str, int]:
    """Bot -> division (0 = top) for ``ranking`` (best first): divisions of at most ``size``
    bots, or ``count`` divisions, of even sizes (they differ by one at most, the higher ones
    larger) and of 2 bots at least, so that each can play: fewer divisions than asked when
    there are too few bots."""
    if (size is None) == (count is None):
        raise ValueError("give a division size or a division count, not both or neither")
    given = size if size is not None else count
    if given is None or given < 1:
        raise ValueError(f"a division size or count is at least 1, got {given}")
    n = len(ranking)
    wanted = math.ceil(n / size) if size is not None else int(given)
    divisions = max(1, min(wanted, n // 2))
    base, extra = divmod(n, divisions)
    out: dict[str, int] = {}
    start = 0
    for d in range(divisions):
        end = start + base + (1 if d < extra else 0)
        for bot in ranking[start:end]:
            out[bot] = d
        start = end
    return out


def cycle(divisions: Mapping[str, int], ratings: Mapping[str, float],
          promote: int) -> list[DivisionMove]:
    """One promotion cycle: for each two adjacent divisions, the bottom ``promote`` of the
    higher one go down and the top ``promote`` of the lower one go up (at most half of the
    smaller division each way, so that a division never swaps whole). Every move is decided
    on ``divisions`` as given: a bot moves once a cycle."""
    members: dict[int, list[str]] = {}
    for bot, d in divisions.items():
        members.setdefault(d, []).append(bot)
    levels = sorted(members)
    moves: list[DivisionMove] = []
    for upper, lower in zip(levels, levels[1:]):
        top = ranked(members[upper], ratings)
        bottom = ranked(members[lower], ratings)
        n = min(promote, len(top) // 2, len(bottom) // 2)
        if n <= 0:
            continue
        moves += [{"bot": b, "from_division": upper, "to": lower} for b in top[len(top) - n:]]
        moves += [{"bot": b, "from_division": lower, "to": upper} for b in bottom[:n]]
    return moves


def opponents(ranking: Sequence[str], k: int) -> list[str]:
    """``k`` placement opponents from ``ranking`` (best first), spread over it: the bots at the
    middle of ``k`` equal slices, best first; with fewer bots than ``k`` the spread repeats."""
    n = len(ranking)
    if n == 0 or k <= 0:
        return []
    return [ranking[min(n - 1, int((i + 0.5) * n / k))] for i in range(k)]


def place(rating: float | None, divisions: Mapping[str, int],
          ratings: Mapping[str, float]) -> int:
    """The division of a newcomer rated ``rating`` (None: unrated): that of the lowest-ranked
    placed bot rated above it, the top division when none is, the bottom one when unrated."""
    if not divisions:
        return 0
    if rating is None:
        return max(divisions.values())
    above = [b for b in ranked(list(divisions), ratings)
             if b in ratings and ratings[b] > rating]
    return divisions[above[-1]] if above else min(divisions.values())
