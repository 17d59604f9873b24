"""Scalar outputs whose neighbours differ in spread, not location (``rejection.choose_continuous``).

The mechanism is diffprivlib's ``tools.mean`` rewritten in numpy (the gallery found it,
README "Audit a real library"): clip(mean(D) + Lap((hi - lo) / (n eps)), lo, hi) on [0, 1]
with n = len(D) private under add/remove-record. On D = [0] vs D' = [0, 1] at eps = 0.5
the first side is clip(Lap(2)), the second clip(1/2 + Lap(1)); at x = 1/2 the density
ratio is (e^0 / 2) / (e^(-1/4) / 4) = 2 e^(1/4), a loss of ln 2 + eps/2 = 0.943 > 0.5, while
every threshold set {x >= t}, {x <= t} (atoms at 0 and 1 included) has a ratio of at most
e^eps: the violation sits in the middle, in an interval, where only the quadratic
classifier statistic's level sets reach it.
"""

import numpy as np

from userdp.audits import VIOLATION, audit
from userdp.audits.engine import learned, rejection, thresholds
from userdp.audits.engine import search
from userdp.audits.engine.thresholds import StatisticThreshold
from userdp.reference.claims import PureDP

EPS = 0.5
PAIR = ([0.0], [0.0, 1.0])
SEEDS = range(8)


def clipped_mean(D, rng, size):
    return np.clip(np.mean(D) + rng.laplace(0.0, 1.0 / (len(D) * EPS), size), 0.0, 1.0)


def flags() -> list:
    return [audit(clipped_mean, PAIR, PureDP(EPS), samples=20_000, seed=s, confidence=1 - 1e-4) for s in SEEDS]


def test_a_spread_that_reveals_n_is_flagged():
    """Measured on seeds 100-399 (disjoint from these): eps_lb mean 0.677, sd 0.034; 1 of 300
    below 0.5 (the selection share picked a threshold). 99.99% upper bound on a miss:
    0.038, so ">= 4 of 8 flag" fails with probability <= P[Bin(8, 0.038) >= 5] = 4e-6."""
    results = flags()
    assert sum(r.verdict == VIOLATION for r in results) >= 4, [r.epsilon_lower_bound for r in results]
    assert any(isinstance(r.witness.rejection_set, StatisticThreshold) for r in results if r.verdict == VIOLATION)


def test_planted_thresholds_alone_miss_it(monkeypatch):
    """The planted bug: scalar outputs tested with thresholds alone (the auditor before this
    change). Every threshold set has ratio <= e^eps here, so each audit flags with
    probability <= 1e-4 (its confidence), and 4 of 8 with probability < 1e-14."""
    monkeypatch.setattr(search, "choose_continuous", thresholds.choose_scalar)
    results = flags()
    assert sum(r.verdict == VIOLATION for r in results) < 4


def test_no_release_outputs_keep_thresholds_alone():
    a = np.array([0.1, np.nan, 0.4, 0.9] * 50)
    b = np.array([0.5, 0.5, np.nan, 0.2] * 50)
    cands = rejection.choose_continuous(a, b, 1000, 0.05, 0.0, k=20)
    assert cands and not any(isinstance(c.rejection_set, StatisticThreshold) for c in cands)


def test_a_monotone_classifier_is_left_to_the_thresholds():
    """s(x) = w1 z + w2 z^2 + w3 |z| on x in [-3, 3] (centre 0, spread 1): monotone, so its level
    sets are thresholds, exactly when its derivative keeps one sign on [-3, 0) and (0, 3]."""
    x = np.array([-3.0, 0.5, 3.0])
    fit = lambda w: ((0.0,), (1.0,), np.array(w, dtype=float))  # noqa: E731
    assert learned._monotone(fit([1, 0, 0]), x) and learned._monotone(fit([-1, 0.1, 0]), x)
    assert learned._monotone(fit([1, 0, 0.9]), x)  # slopes 0.1 and 1.9
    assert not learned._monotone(fit([0, 1, 0]), x)  # a parabola: intervals
    assert not learned._monotone(fit([0, 0, 1]), x)  # |z|
    assert not learned._monotone(fit([1, 0.2, 0]), x)  # turns at z = -2.5
    assert not learned._monotone(fit([0.5, 0, -1]), x)  # a kink: slopes 1.5, -0.5
