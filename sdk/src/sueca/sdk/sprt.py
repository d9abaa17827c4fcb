"""The sequential probability ratio test of ``sueca-bot duel --sprt``, on duplicate deal pairs.

A duplicate pair of matches deals the same cards twice with the teams swapped, so deal number k
of the first match and deal number k of the second are one *deal pair*. Bot A scores 1 for a
deal its team wins (more than 60 points), 1/2 for 60-60 and 0 for a loss; a deal pair scores
the mean of its two deals, one of 0, 1/4, 1/2, 3/4 or 1. The test counts the pairs in those five
classes (the *pentanomial*, as fishtest counts its game pairs), which keeps the correlation the
shared cards put between the two deals of a pair in the variance instead of hiding it.

The hypotheses are about the logistic Elo of a deal, ``H0: elo = ELO0`` against
``H1: elo = ELO1``, an Elo being the expected deal score ``s = 1 / (1 + 10 ** (-elo / 400))``.
The log-likelihood ratio is the generalized SPRT's: the likelihood of the counts under the most
likely five-class distribution whose mean is ``s1``, over the same under ``s0``. That
distribution is ``p_i / (1 + lam * (x_i - s))``, with ``lam`` the root of
``sum p_i (x_i - s) / (1 + lam (x_i - s)) = 0``. Wald's bounds ``log(beta / (1 - alpha))`` and
``log((1 - beta) / alpha)`` decide: H1 above the upper one, H0 below the lower one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["SCORES", "Sprt", "SprtError", "bounds", "elo_interval", "expected_score",
           "llr", "pair_class", "parse_elos", "score_elo"]

SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # the score of a deal pair in each pentanomial class
_EMPTY = 1e-3  # the count an empty class is given, so that no class is impossible


class SprtError(ValueError):
    """Bad test parameters; the message quotes them."""


def expected_score(elo: float) -> float:
    """The expected score of a deal at logistic Elo difference ``elo``."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def score_elo(score: float) -> float:
    """The logistic Elo difference of an expected score; +-inf at 1 and 0."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's (lower, upper) LLR bounds for false-positive rate ``alpha`` and false-negative
    rate ``beta``."""
    return (math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha))


def pair_class(first: float, second: float) -> int:
    """The pentanomial class (0..4) of a deal pair from bot A's two deal scores (0, 1/2, 1)."""
    return round((first + second) * 2)


def _lam(probs: Sequence[float], shifted: Sequence[float]) -> float:
    """The root ``lam`` of ``sum p_i a_i / (1 + lam a_i)``, ``a_i`` = ``shifted``; it lies where
    every ``1 + lam a_i`` is positive, and the sum falls as ``lam`` grows (Newton's steps, kept
    inside the bracket by bisection)."""
    low = -1.0 / max(shifted)
    high = -1.0 / min(shifted)
    lam = 0.0
    for _ in range(100):
        f = d = 0.0
        for p, a in zip(probs, shifted):
            q = 1.0 + lam * a
            f += p * a / q
            d -= p * a * a / (q * q)
        if f > 0:
            low = lam
        else:
            high = lam
        if abs(f) < 1e-13:
            break
        step = lam - f / d
        lam = step if low < step < high else (low + high) / 2
    return lam


def llr(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The GSPRT log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for pentanomial
    ``counts``; 0 with no pairs."""
    if len(counts) != 5:
        raise SprtError(f"bad counts {list(counts)!r}: expected 5 pentanomial classes")
    if sum(counts) == 0:
        return 0.0
    regular = [c if c > 0 else _EMPTY for c in counts]
    n = sum(regular)
    probs = [c / n for c in regular]
    total = 0.0
    for s, sign in ((expected_score(elo0), 1.0), (expected_score(elo1), -1.0)):
        shifted = [x - s for x in SCORES]
        lam = _lam(probs, shifted)
        total += sign * sum(p * math.log1p(lam * a) for p, a in zip(probs, shifted))
    return n * total


def elo_interval(counts: Sequence[int], z: float = 1.96) -> tuple[float, float, float]:
    """(elo, low, high): the logistic Elo of the mean pair score and its interval (``z``
    standard errors of the mean, from the pairs' own variance); (0, -inf, inf) with no pairs."""
    n = sum(counts)
    if n == 0:
        return (0.0, -math.inf, math.inf)
    mean = sum(c * x for c, x in zip(counts, SCORES)) / n
    var = sum(c * (x - mean) ** 2 for c, x in zip(counts, SCORES)) / n
    half = z * math.sqrt(var / n)
    return (score_elo(mean), score_elo(mean - half), score_elo(mean + half))


def parse_elos(text: str) -> tuple[float, float]:
    """``"ELO0,ELO1"`` as two finite numbers with ELO0 < ELO1; else :class:`SprtError`."""
    parts = text.split(",")
    shown = repr(text[:60])
    try:
        if len(parts) != 2:
            raise ValueError
        elo0, elo1 = float(parts[0]), float(parts[1])
    except ValueError:
        raise SprtError(f"bad --sprt {shown}: expected two Elo numbers ELO0,ELO1, "
                        "e.g. 0,10") from None
    if not (math.isfinite(elo0) and math.isfinite(elo1)):
        raise SprtError(f"bad --sprt {shown}: the Elo bounds must be finite numbers")
    if not elo0 < elo1:
        raise SprtError(f"bad --sprt {shown}: ELO0 must be below ELO1")
    if max(abs(elo0), abs(elo1)) > 1000:
        raise SprtError(f"bad --sprt {shown}: the Elo bounds must lie within -1000..1000")
    return (elo0, elo1)


class Sprt:
    """A running test: :meth:`add` deal pairs, read :attr:`llr` and :meth:`verdict`."""

    def __init__(self, elo0: float, elo1: float, alpha: float = 0.05,
                 beta: float = 0.05) -> None:
        if not elo0 < elo1:
            raise SprtError(f"bad Elo bounds {elo0!r},{elo1!r}: ELO0 must be below ELO1")
        for name, value in (("alpha", alpha), ("beta", beta)):
            if not 0.0 < value < 0.5:
                raise SprtError(f"bad --{name} {value!r}: must lie strictly between 0 and 0.5")
        self.elo0, self.elo1, self.alpha, self.beta = elo0, elo1, alpha, beta
        self.bounds = bounds(alpha, beta)
        self.counts = [0, 0, 0, 0, 0]
        self.llr = 0.0

    def add(self, classes: Sequence[int]) -> None:
        """Count deal pairs (their pentanomial classes) and recompute the LLR."""
        for k in classes:
            self.counts[k] += 1
        self.llr = llr(self.counts, self.elo0, self.elo1)

    def verdict(self) -> str | None:
        """``"H1"`` once the LLR reaches the upper bound, ``"H0"`` the lower one, else None."""
        if self.llr >= self.bounds[1]:
            return "H1"
        if self.llr <= self.bounds[0]:
            return "H0"
        return None
