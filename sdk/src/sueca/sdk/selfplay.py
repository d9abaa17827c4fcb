"""Self-play: two bots play N matches in this process, and a summary says who won and how sure
that is (a Wilson interval). ``sueca-bot selfplay`` and ``sueca-arena selfplay`` both print it.

Bot A and bot B form the two teams (each bot fills both seats of its team). Matches alternate
which team sits in seats 0 and 2; the first dealer and the decks come from the match seed,
derived from the run seed and the match number, so a run is reproducible. In duplicate play
matches come in pairs with the same seed (so the same cards) and the teams swapped, which takes
most of the luck of the deal out of the comparison.
"""

from __future__ import annotations

import hashlib
import math
import os
import shlex
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sueca.engine import BotFailed, Match, SuecaError, Variant
from sueca.engine import replay as replays
from sueca.engine.game import FAULT_ENDS, REDEAL
from sueca.engine.variant import DEFAULT

from .execbot import PREFIX
from .local import play_local
from .logs import shown

__all__ = ["MatchFailed", "bot_labels", "match_seed", "play_numbered", "selfplay", "short_name",
           "wilson"]


class _Tally:
    """One bot's running totals over the run."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.matches = self.wins = self.deals = self.points = self.faults = 0


class MatchFailed(Exception):
    """A match could not be played to its end (a bot raised, or returned no card at all): the
    message names the match and its seats."""


_SUECA = Path(__file__).resolve().parents[1]  # the sueca package: frames there are not the bot's


def _where(err: BaseException) -> str:
    """`` at FILE:LINE in FUNCTION``: the innermost frame of ``err`` outside the sueca package
    (the bot's own code), or nothing."""
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if not Path(frame.filename).resolve().is_relative_to(_SUECA):
            return f" at {frame.filename}:{frame.lineno} in {frame.name}"
    return ""


def match_seed(run_seed: int | str, number: int) -> int:
    """A 64-bit match seed from the run seed and the match (or duplicate pair) number."""
    digest = hashlib.sha256(f"sueca-selfplay:{run_seed}:{number}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a win rate (95% for z = 1.96); (0, 1) with no matches."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def short_name(spec: str) -> str:
    """A bot's name where a spec would be long: a file bot ``path/to/mybot.py:Greedy`` is
    ``mybot:Greedy``, an ``exec:`` bot its words without their folders (``exec:python
    bot.py``); an example or ``module:Class`` is its spec."""
    if spec.startswith(PREFIX):
        try:
            words = shlex.split(spec[len(PREFIX):])
        except ValueError:
            return spec
        return PREFIX + " ".join(os.path.basename(w) or w for w in words)
    where, sep, attr = spec.rpartition(":")
    if sep and (where.endswith(".py") or "/" in where or os.sep in where):
        return f"{Path(where).stem}:{attr}"
    return spec


def bot_labels(specs: Sequence[str], names: Sequence[str] = ()) -> list[str]:
    """Names for the seats list: ``names`` where given (in the order of ``specs``), else each
    bot's :func:`short_name`; told apart with ``#1``, ``#2`` when the two are the same."""
    labels = [names[k] if k < len(names) else short_name(spec) for k, spec in enumerate(specs)]
    if labels[0] == labels[1]:
        return [f"{labels[0]}#1", f"{labels[1]}#2"]
    return labels


def play_numbered(factories: Sequence[Callable[[], Any]], names: Sequence[str], *,
                  variant: Variant, i: int, seed: int | str,
                  duplicate: bool = False) -> tuple[Match, tuple[int, ...], list[str]]:
    """Play match number ``i`` of a run: returns the match, the bot index (0 for A, 1 for B) of
    each seat and the seat names. Bot A sits in seats 0, 2 in even matches and 1, 3 in odd
    ones; in duplicate play matches 2k and 2k + 1 share a seed. A failure is
    :class:`MatchFailed`."""
    order = (0, 1, 0, 1) if i % 2 == 0 else (1, 0, 1, 0)  # bot index by seat
    seats = [names[b] for b in order]
    mseed = match_seed(seed, i // 2 if duplicate else i)
    match_id = f"selfplay-{seed}-{i}"
    try:
        match = play_local([factories[b] for b in order], variant, mseed, match_id, seats)
    except Exception as failed:
        err = failed.error if isinstance(failed, BotFailed) else failed
        if isinstance(err, SuecaError):
            raise MatchFailed(f"match {match_id} (seats {', '.join(seats)}): {err}") from None
        # the bot's own bug: where it raised, not our traceback
        raise MatchFailed(f"match {match_id} (seats {', '.join(seats)}, match seed "
                          f"{mseed}): a bot raised {type(err).__name__}: "
                          f"{shown(str(err), 200)}{_where(err)}") from None
    return match, order, seats


def selfplay(factories: Sequence[Callable[[], Any]], names: Sequence[str], *,
             variant: Variant = DEFAULT, matches: int, seed: int | str = 0,
             duplicate: bool = False,
             on_match: Callable[[Any, replays.ReplayRecord | None], None] | None = None,
             want_records: bool = False) -> dict[str, Any]:
    """Play the matches and return the summary (the ``--json`` object, minus timing).

    ``on_match(match, record)`` is called after each match; ``record`` is the replay when
    ``want_records`` is set. Match ids are ``selfplay-{seed}-{i}``, i counting from 0.
    """
    stats = [_Tally(names[0]), _Tally(names[1])]
    total_deals = 0
    for i in range(matches):
        match, order, seats = play_numbered(factories, names, variant=variant, i=i, seed=seed,
                                            duplicate=duplicate)
        a_team = i % 2  # bot A's team (play_numbered seats it)
        team_of_bot = (a_team, 1 - a_team)
        for b in (0, 1):
            st = stats[b]
            st.matches += 1
            st.wins += match.winner == team_of_bot[b]
        for r in match.results:
            if r.end == REDEAL:
                continue
            total_deals += 1
            for b in (0, 1):
                stats[b].deals += 1
                stats[b].points += r.points[team_of_bot[b]]
            if r.end in FAULT_ENDS and r.fault_seat is not None:  # renúncia, bot error
                stats[order[r.fault_seat]].faults += 1
        if on_match is not None:
            rec = (replays.record(match, f"selfplay-{seed}-{i}", seats) if want_records
                   else None)
            on_match(match, rec)
    bots = []
    for st in stats:
        lo, hi = wilson(st.wins, st.matches)
        bots.append({
            "name": st.name, "matches": st.matches, "wins": st.wins,
            "win_rate": st.wins / st.matches if st.matches else 0.0,
            "ci95": [lo, hi], "deals": st.deals,
            "mean_points": st.points / st.deals if st.deals else 0.0,
            "faults": st.faults,
        })
    return {"matches": matches, "deals": total_deals, "seed": seed,
            "variant": variant.to_dict(), "duplicate": duplicate, "bots": bots}
