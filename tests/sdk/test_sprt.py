"""The sequential test of ``sueca-bot duel --sprt`` (sueca.sdk.sprt), pure: its LLR against an
independent computation, and its error rates over many simulated duels."""

from __future__ import annotations

import math
import random

import pytest

from sueca.sdk.selfplay import wilson
from sueca.sdk.sprt import (
    SCORES,
    Sprt,
    SprtError,
    bounds,
    elo_interval,
    expected_score,
    llr,
    pair_class,
    parse_elos,
    score_elo,
)


def _profile(probs: list[float], s: float) -> float:
    """max over lam of sum p_i log(1 + lam (x_i - s)): the log-likelihood a mean of s costs,
    by golden-section search on the concave function (not the module's Newton steps)."""
    shifted = [x - s for x in SCORES]
    lo, hi = -1 / max(shifted) + 1e-12, -1 / min(shifted) - 1e-12

    def g(lam: float) -> float:
        return sum(p * math.log(1 + lam * a) for p, a in zip(probs, shifted))

    phi = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        m1, m2 = hi - phi * (hi - lo), lo + phi * (hi - lo)
        if g(m1) < g(m2):
            lo = m1
        else:
            hi = m2
    return g((lo + hi) / 2)


def test_llr_agrees_with_an_independent_computation():
    counts = [1, 3, 10, 4, 2]
    n = sum(counts)
    probs = [c / n for c in counts]
    s0, s1 = expected_score(0), expected_score(30)
    by_hand = n * (_profile(probs, s0) - _profile(probs, s1))
    assert llr(counts, 0, 30) == pytest.approx(by_hand, abs=1e-9)
    # the value, and the normal approximation N (s1 - s0) (2 mean - s0 - s1) / (2 var) = 0.2375
    assert llr(counts, 0, 30) == pytest.approx(0.2349, abs=1e-4)


def test_llr_is_zero_when_the_data_favour_neither():
    assert llr([2, 2, 2, 2, 2], -20, 20) == pytest.approx(0, abs=1e-12)
    assert llr([0, 0, 0, 0, 0], 0, 10) == 0.0


def test_llr_grows_with_wins_and_empty_classes_are_allowed():
    assert llr([0, 0, 5, 5, 10], 0, 20) > 0 > llr([10, 5, 5, 0, 0], 0, 20)
    assert llr([0, 0, 5, 5, 10], 0, 20) > llr([0, 0, 5, 5, 5], 0, 20)


def test_bounds_pair_class_and_elo_conversions():
    low, high = bounds(0.05, 0.05)
    assert low == pytest.approx(math.log(0.05 / 0.95)) and high == pytest.approx(-low)
    assert [pair_class(a, b) for a, b in ((0, 0), (0, .5), (1, 0), (.5, 1), (1, 1))] == \
        [0, 1, 2, 3, 4]
    assert score_elo(expected_score(123.0)) == pytest.approx(123.0)
    assert score_elo(0.0) == -math.inf and score_elo(1.0) == math.inf


def test_elo_interval_of_a_known_case():
    elo, low, high = elo_interval([0, 0, 10, 0, 10])  # mean 0.75, variance 1/16
    assert elo == pytest.approx(score_elo(0.75))
    half = 1.96 * math.sqrt(1 / 16 / 20)
    assert (low, high) == (pytest.approx(score_elo(0.75 - half)),
                           pytest.approx(score_elo(0.75 + half)))


@pytest.mark.parametrize("text, says", [
    ("10", "expected two Elo numbers"), ("a,b", "expected two Elo numbers"),
    ("1,2,3", "expected two Elo numbers"), ("5,5", "ELO0 must be below ELO1"),
    ("nan,5", "finite"), ("0,5000", "within -1000..1000"),
])
def test_bad_elo_bounds_are_quoted(text, says):
    with pytest.raises(SprtError) as err:
        parse_elos(text)
    assert says in str(err.value) and repr(text) in str(err.value)


def test_bad_rates_are_refused():
    with pytest.raises(SprtError, match="alpha"):
        Sprt(0, 10, alpha=0.0)
    with pytest.raises(SprtError, match="beta"):
        Sprt(0, 10, beta=0.5)
    assert parse_elos("-5,7.5") == (-5.0, 7.5)


BASE = [0.08, 0.2, 0.44, 0.2, 0.08]  # a symmetric pentanomial: mean 1/2, Elo 0


def _tilted(mean: float) -> list[float]:
    """BASE reweighted by exp(t x) so that its mean is ``mean``."""
    lo, hi = -50.0, 50.0
    for _ in range(100):
        t = (lo + hi) / 2
        w = [p * math.exp(t * x) for p, x in zip(BASE, SCORES)]
        if sum(wi * x for wi, x in zip(w, SCORES)) / sum(w) < mean:
            lo = t
        else:
            hi = t
    return [wi / sum(w) for wi in w]


def _verdicts(probs: list[float], runs: int, seed: int) -> list[str | None]:
    """Simulated duels: 8 deal pairs per step (a duplicate pair of matches), up to 4000."""
    rng = random.Random(seed)
    out = []
    for _ in range(runs):
        test = Sprt(0, 40, 0.05, 0.05)
        while sum(test.counts) < 4000 and test.verdict() is None:
            test.add(rng.choices(range(5), probs, k=8))
        out.append(test.verdict())
    return out


def test_false_positive_rate_is_within_alpha():
    runs = 2000
    verdicts = _verdicts(BASE, runs, seed=1)  # the truth is H0: Elo 0
    false_positives = verdicts.count("H1")
    low, _ = wilson(false_positives, runs)
    assert low <= 0.05, f"{false_positives}/{runs} accepted H1 at Elo 0"
    assert verdicts.count(None) < runs // 100  # and the test does decide


def test_false_negative_rate_is_within_beta():
    runs = 1000
    probs = _tilted(expected_score(40))
    assert sum(p * x for p, x in zip(probs, SCORES)) == pytest.approx(expected_score(40))
    verdicts = _verdicts(probs, runs, seed=2)  # the truth is H1: Elo 40
    low, _ = wilson(verdicts.count("H0"), runs)
    assert low <= 0.05 and verdicts.count("H1") > runs * 0.9
