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
import inspect
import math
import os
import shlex
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from sueca.engine import BotFailed, Match, SuecaError, Variant
from sueca.engine import replay as replays
from sueca.engine.game import FAULT_ENDS, REDEAL
from sueca.engine.variant import DEFAULT

from .execbot import PREFIX, ExecCommand, command_of
from .execbot.program import pump
from .local import play_local, play_local_steps
from .logs import shown

__all__ = ["IN_FLIGHT", "MatchFailed", "bot_labels", "in_flight", "match_seed", "play_many",
           "play_numbered", "selfplay", "short_name", "wilson"]

# the most matches self-play keeps in flight on an exec: program that takes many games: enough
# to batch its turns (one write carries tens of them, one read many answers), few enough that
# one write (64 turns of at most about 900 bytes) fits a pipe's 64 KiB
IN_FLIGHT = 64


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
    order, seats, mseed, match_id = _numbered(names, i, seed, duplicate)
    try:
        match = play_local([factories[b] for b in order], variant, mseed, match_id, seats)
    except Exception as failed:
        raise _failed(failed, match_id, seats, mseed) from None
    return match, order, seats


def _numbered(names: Sequence[str], i: int, seed: int | str,
              duplicate: bool) -> tuple[tuple[int, ...], list[str], int, str]:
    """Match ``i``'s bot index by seat, seat names, match seed and match id."""
    order = (0, 1, 0, 1) if i % 2 == 0 else (1, 0, 1, 0)  # bot index by seat
    seats = [names[b] for b in order]
    return order, seats, match_seed(seed, i // 2 if duplicate else i), f"selfplay-{seed}-{i}"


def _failed(failed: Exception, match_id: str, seats: Sequence[str], mseed: int) -> MatchFailed:
    err = failed.error if isinstance(failed, BotFailed) else failed
    if isinstance(err, SuecaError):
        return MatchFailed(f"match {match_id} (seats {', '.join(seats)}): {err}")
    # the bot's own bug: where it raised, not our traceback
    return MatchFailed(f"match {match_id} (seats {', '.join(seats)}, match seed {mseed}): a bot "
                       f"raised {type(err).__name__}: {shown(str(err), 200)}{_where(err)}")


def in_flight(factories: Sequence[Callable[[], Any]], most: int = IN_FLIGHT) -> int:
    """How many matches to play at once: 1, unless a bot is an ``exec:`` program whose hello
    said it takes many games, and the other bot is synchronous; then as many as its
    processes' games hold (two seats a match for each bot it plays), at most ``most``."""
    if most <= 1:
        return 1
    need: dict[ExecCommand, int] = {}
    for factory in factories:
        command = command_of(factory)
        if command is None:
            if inspect.iscoroutinefunction(getattr(factory(), "play", None)):
                return 1  # an async bot plays on an event loop of its match's own
        else:
            need[command] = need.get(command, 0) + 2
    if not need:
        return 1
    return max(1, min([most] + [c.games_now() // n for c, n in need.items()]))


def play_many(factories: Sequence[Callable[[], Any]], names: Sequence[str], *,
              variant: Variant, matches: range, seed: int | str, duplicate: bool = False,
              at_once: int = 1) -> Iterator[tuple[Match, tuple[int, ...], list[str]]]:
    """:func:`play_numbered` for each of ``matches``, in order, with up to ``at_once`` of them
    in flight in this thread (:func:`in_flight`): every ``exec:`` turn they are waiting on goes
    out in one write to its program, every answer there is read at each wake-up, and the
    matches those answers resume run until they wait again. Each match is the one
    :func:`play_numbered` plays (the same calls of each bot, in the same order; the tests
    compare whole runs), only interleaved; the first that fails is :class:`MatchFailed` after
    those before it are yielded."""
    if at_once <= 1:
        for i in matches:
            yield play_numbered(factories, names, variant=variant, i=i, seed=seed,
                                duplicate=duplicate)
        return
    ready: list[object] = []
    waiting: dict[object, Any] = {}  # a bot whose turn is posted -> its match's steps
    playing: dict[int, Any] = {}  # the matches in flight: number -> their steps
    finished: dict[int, Any] = {}  # number -> the match, or what it failed with
    runnable: list[tuple[int, Any]] = []
    todo = iter(matches)
    upcoming = next(todo, None)
    for i in matches:
        while upcoming is not None and len(playing) < at_once:
            order, seats, mseed, match_id = _numbered(names, upcoming, seed, duplicate)
            steps = play_local_steps([factories[b] for b in order], variant, mseed, match_id,
                                     seats, ready=ready)
            playing[upcoming] = steps
            runnable.append((upcoming, steps))
            upcoming = next(todo, None)
        while i not in finished:
            _advance(runnable, waiting, playing, finished)
            runnable = _answered(waiting, ready)
        result = finished.pop(i)
        order, seats, mseed, match_id = _numbered(names, i, seed, duplicate)
        if isinstance(result, Exception):
            for steps in playing.values():
                steps.close()
            raise _failed(result, match_id, seats, mseed) from None
        yield result, order, seats


def _advance(runnable: list[tuple[int, Any]], waiting: dict[object, Any],
             playing: dict[int, Any], finished: dict[int, Any]) -> None:
    """Run each of ``runnable`` until it posts a turn (then it waits) or ends."""
    for number, steps in runnable:
        try:
            bot = steps.send(None)
        except StopIteration as stop:
            finished[number] = stop.value
            del playing[number]
        except Exception as failed:
            finished[number] = failed
            del playing[number]
        else:
            waiting[bot] = (number, steps)


def _answered(waiting: dict[object, Any], ready: list[object]) -> list[tuple[int, Any]]:
    """Write every posted turn, one write a program, then read until some are answered (or a
    turn's time is up): the matches to resume."""
    if not waiting:
        return []
    programs = list({bot.program: None for bot in waiting})  # type: ignore[attr-defined]
    for program in programs:
        program.flush_posted()
    pump(programs, ready, min(bot.deadline() for bot in waiting),  # type: ignore[attr-defined]
         len(waiting))
    if not ready:  # the first deadline passed: those turns are late
        now = time.monotonic()
        ready.extend(b for b in waiting if b.deadline() <= now)  # type: ignore[attr-defined]
    resumed = [waiting.pop(bot) for bot in ready if bot in waiting]
    ready.clear()
    return resumed


def selfplay(factories: Sequence[Callable[[], Any]], names: Sequence[str], *,
             variant: Variant = DEFAULT, matches: int, seed: int | str = 0,
             duplicate: bool = False,
             on_match: Callable[[Any, replays.ReplayRecord | None], None] | None = None,
             want_records: bool = False, at_once: int = IN_FLIGHT) -> dict[str, Any]:
    """Play the matches and return the summary (the ``--json`` object, minus timing).

    With an ``exec:`` bot whose program takes many games, up to ``at_once`` matches are in
    flight at a time (:func:`play_many`): the same matches, results and callbacks in the same
    order, at pipe speed; 1 plays them one after another.

    ``on_match(match, record)`` is called after each match; ``record`` is the replay when
    ``want_records`` is set. Match ids are ``selfplay-{seed}-{i}``, i counting from 0.
    """
    stats = [_Tally(names[0]), _Tally(names[1])]
    total_deals = 0
    played = play_many(factories, names, variant=variant, matches=range(matches), seed=seed,
                       duplicate=duplicate, at_once=in_flight(factories, at_once))
    for i, (match, order, seats) in enumerate(played):
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
