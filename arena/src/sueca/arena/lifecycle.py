"""A competition's rules and lifecycle, with no I/O (the store and the competitions
package build on it; it imports neither).

A season only goes forward, one step at a time: draft -> open -> frozen -> final -> closed
(:data:`NEXT_STATE`). Entries are taken while it is a draft or open; from the freeze on the
versions that play are fixed, so the ratings settle on code that no longer changes. Each move
happens by command or at the time the spec sets for it (:func:`due`, which the scheduler asks).

The arena's ladder is the default competition (:data:`DEFAULT`): always open, every registered
bot entered, no freeze, final or divisions, so a league that never made a competition plays as
it always has.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from sueca.arena.records import (
    NEXT_STATE,
    CompetitionSpec,
    CompetitionState,
    DivisionSpec,
    Entry,
    FairPlaySpec,
    FinalSpec,
    Transition,
)
from sueca.sdk.logs import shown

__all__ = ["State", "NEXT_STATE", "CompetitionError", "CompetitionSpec", "FinalSpec",
           "DivisionSpec", "FairPlaySpec", "Transition", "Entry", "DEFAULT", "FINAL_FORMATS",
           "DEFAULT_FAIR_PLAY", "new_spec", "default_spec", "check_name", "check_move", "due",
           "parse_time", "ENTERING", "PLAYING", "FIXED"]

State = CompetitionState

#: The default competition: the arena's ladder.
DEFAULT = "ladder"
#: What a final can be.
FINAL_FORMATS = ("knockout", "double-elimination", "round-robin", "none")
#: States in which bots may enter and start new versions.
ENTERING = frozenset({State.DRAFT, State.OPEN})
#: States in which the competition's ladder plays and rates.
PLAYING = frozenset({State.OPEN, State.FROZEN})
#: States in which the playing versions are fixed: a new version is refused.
FIXED = frozenset({State.FROZEN, State.FINAL})
#: Suspended after 5 faults in the last 10 matches; 6 challenge matches an hour.
DEFAULT_FAIR_PLAY: FairPlaySpec = {"faults": 5, "of_last": 10, "challenges_per_hour": 6}

_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,39}$")
#: the time each state is entered at, by spec field
_TIMES = {State.OPEN: "opens_at", State.FROZEN: "freezes_at", State.FINAL: "final_at",
          State.CLOSED: "closes_at"}
_RELATIVE = re.compile(r"^\+(\d+(?:\.\d+)?)([smhd])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class CompetitionError(ValueError):
    """A bad competition name, rule, time or move; the message quotes it."""


def check_name(name: str) -> str:
    """``name`` if it can name a competition: 1-40 lower-case letters, digits, ``_ . -``."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise CompetitionError(f"bad competition name {shown(name, 64)}: 1-40 lower-case "
                               "letters, digits, '_', '.', '-', starting with a letter or digit")
    return name


def parse_time(value: str, now: float) -> float:
    """A time as a person writes it: ``+90s``, ``+30m``, ``+2h``, ``+7d`` from ``now``, or an
    ISO 8601 time (UTC when it names no zone); unix seconds."""
    text = value.strip()
    rel = _RELATIVE.match(text)
    if rel:
        return now + float(rel.group(1)) * _UNITS[rel.group(2)]
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise CompetitionError(f"bad time {shown(value, 64)}: +N followed by s, m, h or d "
                               "(+2h), or an ISO time (2026-12-24T18:00, UTC by default)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


def _positive(what: str, value: object, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise CompetitionError(f"bad {what} {shown(value, 32)}: a whole number >= {least}")
    return value


def new_spec(name: str, *, variant: Mapping[str, Any] | None = None,  # Any: JSON values
             limits: Mapping[str, int | None] | None = None,
             opens_at: float | None = None, freezes_at: float | None = None,
             final_at: float | None = None, closes_at: float | None = None,
             final: FinalSpec | None = None, divisions: DivisionSpec | None = None,
             hosted_only: bool = False, fair_play: FairPlaySpec | None = None) -> CompetitionSpec:
    """A checked competition spec; :class:`CompetitionError` quoting the first bad value.

    ``variant`` is a Variant's ``to_dict()`` (checked by its caller, which parsed it);
    times are unix seconds and must come in the season's order where given.
    """
    check_name(name)
    if name == DEFAULT:
        raise CompetitionError(f"{DEFAULT!r} is the arena's ladder, the default competition: "
                               "choose another name")
    final = final or {"format": "none", "top": None, "best_of": 1}
    if final["format"] not in FINAL_FORMATS:
        raise CompetitionError(f"bad final format {shown(final['format'], 40)}: one of "
                               f"{', '.join(FINAL_FORMATS)}")
    if final["top"] is not None:
        _positive("final size (top)", final["top"], 2)
    _positive("best-of", final["best_of"])
    if divisions is not None:
        _check_divisions(divisions)
    fair_play = fair_play or dict(DEFAULT_FAIR_PLAY)  # type: ignore[assignment]
    assert fair_play is not None
    _positive("fault count", fair_play["faults"])
    if _positive("fault window", fair_play["of_last"]) < fair_play["faults"]:
        raise CompetitionError(f"bad fair play {fair_play['faults']}/{fair_play['of_last']}: "
                               "the faults cannot exceed the matches they are counted in")
    _positive("challenges per hour", fair_play["challenges_per_hour"], 0)
    times = [(s, t) for s, t in ((State.OPEN, opens_at), (State.FROZEN, freezes_at),
                                 (State.FINAL, final_at), (State.CLOSED, closes_at))
             if t is not None]
    for (s1, t1), (s2, t2) in zip(times, times[1:]):
        if t2 < t1:
            raise CompetitionError(f"the {_word(s2)} time comes before the {_word(s1)} time: "
                                   "a season opens, freezes, has its final and closes in order")
    return {"name": name, "variant": dict(variant or {}), "limits": dict(limits or {}),
            "opens_at": opens_at, "freezes_at": freezes_at, "final_at": final_at,
            "closes_at": closes_at, "final": final, "divisions": divisions,
            "hosted_only": hosted_only, "fair_play": fair_play}


def _check_divisions(d: DivisionSpec) -> None:
    if (d["size"] is None) == (d["count"] is None):
        raise CompetitionError("divisions need either a size (bots per division) or a count "
                               "(how many divisions), not both")
    if d["size"] is not None:
        _positive("division size", d["size"], 2)
    if d["count"] is not None:
        _positive("division count", d["count"], 1)
    _positive("promotions per cycle", d["promote"], 0)
    if d["size"] is not None and d["promote"] * 2 > d["size"]:
        raise CompetitionError(f"bad promotions per cycle {d['promote']}: at most half a "
                               f"division of {d['size']}")
    if not (isinstance(d["every_s"], int | float) and d["every_s"] > 0):
        raise CompetitionError(f"bad division cycle {shown(d['every_s'], 32)}: seconds > 0")
    _positive("placement matches", d["placement"], 0)


def _word(state: State) -> str:
    return {State.OPEN: "open", State.FROZEN: "freeze", State.FINAL: "final",
            State.CLOSED: "close"}.get(state, str(state))


def default_spec() -> CompetitionSpec:
    """The arena's ladder as a competition: always open, no times, no final."""
    return {"name": DEFAULT, "variant": {}, "limits": {}, "opens_at": None, "freezes_at": None,
            "final_at": None, "closes_at": None,
            "final": {"format": "none", "top": None, "best_of": 1}, "divisions": None,
            "hosted_only": False, "fair_play": dict(DEFAULT_FAIR_PLAY)}  # type: ignore[typeddict-item]


def check_move(name: str, state: State, to: State) -> None:
    """Nothing if ``to`` is ``state``'s next step, else :class:`CompetitionError` saying what
    comes first."""
    if name == DEFAULT:
        raise CompetitionError(f"{DEFAULT!r} is the arena's ladder: it is always open")
    if NEXT_STATE.get(state) is to:
        return
    if state is State.CLOSED:
        raise CompetitionError(f"competition {name!r} is closed: its results are fixed")
    if to is state:
        raise CompetitionError(f"competition {name!r} is already {state}")
    step = NEXT_STATE[state]
    raise CompetitionError(f"competition {name!r} is {state}: {_word(step)} it before "
                           f"{'its ' if to is State.FINAL else ''}{_word(to)}"
                           if _ORDER[to] > _ORDER[state] else
                           f"competition {name!r} is {state}: a season does not go back to {to}")


_ORDER = {s: i for i, s in enumerate(State)}


def due(spec: CompetitionSpec, state: State, now: float) -> State | None:
    """The move the spec's times ask for at ``now`` (None: none is due). One step at a time:
    a competition whose freeze and final times have both passed is frozen first."""
    step = NEXT_STATE.get(state)
    if step is None:
        return None
    when = spec.get(_TIMES[step])
    return step if isinstance(when, int | float) and when <= now else None


def transition(state: State, to: State, *, at: float, by: str) -> Transition:
    """The log's record of a move."""
    return {"from_state": str(state), "to": str(to), "at": at, "by": by}
