"""Fair play: when a bot is suspended for faulting, and how often an owner may challenge.

Pure rules, no I/O (the records are :mod:`sueca.arena.store.fairplay`'s):

* **Suspension.** A bot that faulted (:data:`FAULTS`: its program failed, it ran out of clock,
  it lost its connection — the match ends charged to one seat) in ``faults`` of its last
  ``of_last`` matches is suspended from scheduling (:func:`tripped`). A renúncia is a bad card,
  not a broken bot: it costs the deal and is no fault here. Only the outcomes since the bot's
  last fresh start count (:func:`counted`): its current version's matches, recorded after the
  last lift. A suspension stays until its owner starts a new version or an operator lifts it;
  it does not wear off as older matches slide out of the window.
* **Challenges.** An owner asks for unrated matches against a named bot at most ``per_hour``
  times in any hour (:func:`next_challenge`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from sueca.arena.records import FairPlaySpec, ResultEntry
from sueca.engine import End

__all__ = ["FAULTS", "MAX_WINDOW", "CHALLENGE", "CHALLENGE_WINDOW", "MAX_CHALLENGE_MATCHES",
           "RULE_WORDS", "COMES_BACK", "FairPlayError", "Rule", "parse_rule", "rule_of",
           "Outcome", "Fault", "Suspension", "outcome_of", "counted", "tripped", "reason",
           "next_challenge", "challenge_matches"]

#: The match ends that count as a bot's fault (a renúncia does not: see the module's doc).
FAULTS = (End.BOT_ERROR, End.TIMEOUT, End.DISCONNECT)
#: The longest window a rule may look back over: each bot's recent outcomes kept in Redis.
MAX_WINDOW = 100
#: The ``tournament`` of a challenge match, as ``ladder`` is a ladder match's: never rated.
CHALLENGE = "challenge"
#: The span, in seconds, the challenges cap counts over.
CHALLENGE_WINDOW = 3600.0
#: The most matches one challenge may ask for (ten duplicate pairs).
MAX_CHALLENGE_MATCHES = 20


#: How a suspended bot comes back, for messages.
COMES_BACK = ("A suspended bot plays again once its owner starts a new version (`sueca-arena "
              "bots version NAME`) or an operator lifts it (`sueca-arena bots lift NAME`)")
#: What a suspension rule's text is, for messages.
RULE_WORDS = (f"X/Y such as 5/10, with 1 <= X <= Y <= {MAX_WINDOW} (suspend a bot that "
              "faulted in X of its last Y matches), or off")


class FairPlayError(ValueError):
    """A bad fair-play rule or request; the message quotes the bad value."""


@dataclass(frozen=True)
class Rule:
    """Suspend a bot that faulted in ``faults`` of its last ``of_last`` matches."""

    faults: int
    of_last: int

    def __post_init__(self) -> None:
        if not (isinstance(self.faults, int) and isinstance(self.of_last, int)
                and 1 <= self.faults <= self.of_last <= MAX_WINDOW):
            raise FairPlayError(f"bad suspension rule {self.faults!r}/{self.of_last!r}: "
                                f"{RULE_WORDS}")

    def __str__(self) -> str:
        return f"{self.faults}/{self.of_last}"


def parse_rule(raw: str) -> Rule | None:
    """``"5/10"`` as a :class:`Rule`; ``"off"`` (or ``"0"``) as None: no suspensions.
    FairPlayError quoting anything else."""
    value = raw.strip()
    if value.lower() in ("off", "0"):
        return None
    x, sep, y = value.partition("/")
    if not (sep and x.strip().isdigit() and y.strip().isdigit()):
        raise FairPlayError(f"bad suspension rule {raw[:40]!r}: {RULE_WORDS}")
    return Rule(int(x), int(y))


def rule_of(fair_play: FairPlaySpec | None) -> Rule | None:
    """The rule of a competition's ``fair_play`` (``{"faults": X, "of_last": Y, ...}``); None
    when it sets none (``faults`` 0 or absent)."""
    if not fair_play or not fair_play.get("faults"):
        return None
    return Rule(int(fair_play["faults"]), int(fair_play.get("of_last") or 0))


class Outcome(TypedDict):
    """One of a bot's recent matches, as kept for the rule: the results-log ``entry`` id,
    the ``match``, the fault charged to the bot (an End value, "" for none), the ``version``
    of the bot that played."""

    entry: str
    match: str
    fault: str
    version: int


class Fault(TypedDict):
    match: str
    end: str
    entry: str


class Suspension(TypedDict):
    """Why and since when a bot is suspended: the ``faults`` (matches and ends) that tripped
    ``rule`` at ``version`` of the bot, the newest results-log ``entry`` looked at, and the
    ``competition`` whose rule it was; ``at`` (unix time) and ``recorded`` once stored."""

    bot: str
    competition: str
    rule: str
    version: int
    faults: list[Fault]
    entry: str
    at: float | None
    recorded: bool


def outcome_of(result: ResultEntry, bot: str) -> tuple[str, int]:
    """The fault ``result`` charges to ``bot`` ("" for none) and the version that played
    (version 1 for a result that names none)."""
    fault = ""
    try:
        end = End(result.get("end"))
    except ValueError:
        end = None
    if result.get("fault_bot") == bot and end in FAULTS:
        assert end is not None
        fault = end.value
    versions = result.get("versions") or {}
    version = versions.get(bot, 1) if isinstance(versions, dict) else 1
    return fault, int(version) if isinstance(version, int) else 1


def _key(entry: str) -> tuple[int, int]:
    ms, _, seq = entry.partition("-")
    return (int(ms), int(seq or 0)) if ms.isdigit() and (seq or "0").isdigit() else (0, 0)


def counted(outcomes: Sequence[Outcome], *, version: int,
            after: str | None = None) -> list[Outcome]:
    """The outcomes (newest first) that count: played by ``version`` and recorded after
    results-log entry ``after`` (the last lift), in the order given."""
    cut = _key(after) if after else (-1, -1)
    return [o for o in outcomes if o["version"] == version and _key(o["entry"]) > cut]


def tripped(outcomes: Sequence[Outcome], rule: Rule) -> list[Outcome] | None:
    """The faults among the last ``rule.of_last`` of ``outcomes`` (newest first) when there
    are at least ``rule.faults`` of them, else None. Fewer matches than the window count as
    they are: a bot that faulted in its first ``faults`` matches is suspended at once."""
    faults = [o for o in outcomes[:rule.of_last] if o["fault"]]
    return faults if len(faults) >= rule.faults else None


def reason(s: Suspension, *, most: int = 3) -> str:
    """One line: ``faulted in 5 of its last 10 matches (suspended at 5): bot_error ×5 in m1,
    m2, m3, ...``."""
    kinds: dict[str, int] = {}
    for f in s["faults"]:
        kinds[f["end"]] = kinds.get(f["end"], 0) + 1
    x, _, y = s["rule"].partition("/")
    shown = ", ".join(f["match"] for f in s["faults"][:most])
    more = ", ..." if len(s["faults"]) > most else ""
    what = ", ".join(f"{k} ×{n}" for k, n in sorted(kinds.items()))
    return (f"faulted in {len(s['faults'])} of its last {y} matches (suspended at {x}): "
            f"{what} in {shown}{more}")


def next_challenge(asked: Sequence[float], *, per_hour: int, now: float) -> float | None:
    """None when one more challenge fits the cap (``asked``: the times of earlier ones), else
    the unix time the next one is allowed (when the oldest in the window leaves it)."""
    if per_hour < 1:
        return math.inf  # challenges are off
    window = sorted(t for t in asked if t > now - CHALLENGE_WINDOW)
    if len(window) < per_hour:
        return None
    return window[len(window) - per_hour] + CHALLENGE_WINDOW


def challenge_matches(n: int) -> int:
    """``n`` if it is a number of challenge matches (duplicate pairs: even, 2 to
    :data:`MAX_CHALLENGE_MATCHES`), else FairPlayError quoting it."""
    if not (isinstance(n, int) and 2 <= n <= MAX_CHALLENGE_MATCHES and n % 2 == 0):
        raise FairPlayError(f"bad number of challenge matches {n!r}: an even number from 2 to "
                            f"{MAX_CHALLENGE_MATCHES} (duplicate pairs, so that the luck of "
                            "the cards cancels)")
    return n
