"""Who meets whom in a tournament's formats: round robin, gauntlet and Swiss. Pure functions of
the bots and the results so far, so a resumed tournament pairs exactly as the first run did.

- Round robin: every pair of bots, in the order of the bot list.
- Gauntlet: the challenger against each bot of the field, in the field's order.
- Swiss: in each round, bots are ranked by score (ties by their place in the bot list) and
  paired from the top down, each with the next-ranked bot it has not met yet (the Monrad
  system), backtracking when a later bot would be left with no new opponent. With an odd
  number of bots one sits out the round (a *bye*): the lowest-ranked bot that has not had one
  yet (so byes rotate), the bye scoring as a drawn round, half the round's matches.
  A Swiss tournament plays at most half as many rounds as it has bots
  (:func:`swiss_rounds_allowed`), so that a pairing without a repeat always exists; the
  search still falls back to the pairing with the fewest repeats rather than fail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

__all__ = ["PairingError", "gauntlet_pairs", "round_robin_pairs", "swiss_pairs",
           "swiss_rounds_allowed"]

Pair = tuple[str, str]
_BUDGET = 20_000  # search steps for one pairing attempt


class PairingError(ValueError):
    """Bots that cannot be paired as asked (a challenger not among them, a field too small);
    the message quotes the bad value."""


def round_robin_pairs(bots: Sequence[str]) -> list[Pair]:
    """Every pair of ``bots`` once, (earlier, later) in the list's order."""
    return [(bots[i], bots[j]) for i in range(len(bots)) for j in range(i + 1, len(bots))]


def gauntlet_pairs(bots: Sequence[str], challenger: str) -> list[Pair]:
    """The challenger against every other bot of ``bots``, in their order."""
    if challenger not in bots:
        raise PairingError(f"challenger {challenger!r} is not among the bots "
                           f"({', '.join(bots)})")
    field = [b for b in bots if b != challenger]
    if not field:
        raise PairingError(f"a gauntlet needs a field: {challenger!r} has no opponent")
    return [(challenger, b) for b in field]


def swiss_rounds_allowed(n_bots: int) -> int:
    """The most rounds a Swiss tournament of ``n_bots`` may have: half the field, rounded down
    (at least 1). Within that a pairing without a repeat always exists whatever the results:
    the m bots to pair (the field less the bye) have each met at most m/2 - 1 of the others,
    so the pairs not yet played leave every bot at least m/2 possible opponents, and such a
    graph has a perfect matching (Dirac's theorem). More rounds can leave no repeat-free
    pairing however the earlier ones were chosen; a round robin plays every pair instead."""
    return max(1, n_bots // 2)


def swiss_pairs(bots: Sequence[str], scores: Mapping[str, float], met: Set[frozenset[str]],
                byes: Set[str]) -> tuple[list[Pair], str | None]:
    """One Swiss round: the pairs (higher-ranked bot first) and the bye (None for an even
    field). ``scores`` are the scores so far, ``met`` the pairs that have played, ``byes`` the
    bots that have had a bye."""
    place = {b: i for i, b in enumerate(bots)}
    ranked = sorted(bots, key=lambda b: (-scores.get(b, 0.0), place[b]))
    for allowed_repeats in range(len(bots)):
        budget = [_BUDGET]
        if len(ranked) % 2 == 0:
            pairs = _pair_down(ranked, met, allowed_repeats, budget)
            if pairs is not None:
                return pairs, None
            continue
        # the bye: the lowest-ranked bot without one yet (all have had one: the lowest)
        candidates = [b for b in reversed(ranked) if b not in byes] or list(reversed(ranked))
        for bye in candidates:
            pairs = _pair_down([b for b in ranked if b != bye], met, allowed_repeats, budget)
            if pairs is not None:
                return pairs, bye
    raise AssertionError("unreachable: with repeats allowed every field pairs")


def _pair_down(ranked: Sequence[str], met: Set[frozenset[str]], allowed_repeats: int,
               budget: list[int]) -> list[Pair] | None:
    """Pair ``ranked`` from the top, each bot with the nearest-ranked unpaired bot, using at
    most ``allowed_repeats`` pairs that have met; None when impossible, or when the search has
    spent its ``budget`` of steps (a large field late in a Swiss then allows one repeat more
    rather than searching for ever)."""
    if not ranked:
        return []
    budget[0] -= 1
    if budget[0] < 0:
        return None
    top, rest = ranked[0], ranked[1:]
    for i, other in enumerate(rest):
        repeat = frozenset((top, other)) in met
        if repeat and allowed_repeats == 0:
            continue
        tail = _pair_down([*rest[:i], *rest[i + 1:]], met, allowed_repeats - repeat, budget)
        if tail is not None:
            return [(top, other), *tail]
    return None
