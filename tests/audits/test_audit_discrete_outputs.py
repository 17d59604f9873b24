"""Ordered discrete outputs: threshold sets {x <= t}, {x >= t} compete with
the likelihood-ratio value sets on the selection share.

The mechanism is discrete Laplace (two-sided geometric) noise, P(z) prop. to exp(-eps |z|),
on a count of 0 vs 1 (sensitivity 1): exactly eps-DP, with likelihood ratio e^eps on every
x >= 1 and e^-eps on every x <= 0, so the value sets' ranking of those values is noise.
"""

import numpy as np
import pytest

from userdp.audits import VIOLATION, ValueSet, audit
from userdp.audits.engine import value_sets
from userdp.audits.engine.value_sets import ValueThreshold, choose_discrete
from userdp.audits.engine.sampling import encode
from userdp.reference.claims import PureDP

SEEDS = range(10)


def discrete_laplace(eps: float):
    q = 1.0 - np.exp(-eps)

    def mechanism(count, rng, size):
        return count + rng.geometric(q, size) - rng.geometric(q, size)  # int64 outputs

    return mechanism


def tightness(eps: float, samples: int, seeds=SEEDS, output: str | None = None) -> list[float]:
    """None: inferred from the int64 outputs, i.e. "discrete" (value sets and thresholds);
    "categorical": value sets alone."""
    return [
        audit(discrete_laplace(eps), (0, 1), PureDP(eps), samples=samples, seed=s, output=output).tightness
        for s in seeds
    ]


def test_thresholds_tighten_a_flat_likelihood_ratio():
    """eps = 0.2, 2e4 outputs per side, seeds 0-29; a seed "reaches" when tightness >= 0.6.

    Measured on seeds 100-399 (disjoint from these): 10 of 300 seeds miss with thresholds
    (median tightness 0.84), 260 of 300 miss with value sets alone (median 0.00: they rank
    some 60 values of equal ratio by noise). 99.99% Clopper-Pearson upper bounds: a miss has
    probability <= 0.09 with thresholds, a reach <= 0.22 without. So requiring >= 18 of 30
    reaches fails the real auditor with probability <= P[Bin(30, 0.09) >= 13] = 7e-7, and
    passes the planted bug (output="categorical": no thresholds) with probability <=
    P[Bin(30, 0.22) >= 18] = 8e-6."""
    reaches = lambda ts: sum(t >= 0.6 for t in ts)  # noqa: E731
    assert reaches(tightness(0.2, 20_000, range(30))) >= 18
    assert reaches(tightness(0.2, 20_000, range(30), output="categorical")) < 18  # the planted bug


def test_correct_discrete_laplace_is_not_flagged_and_a_planted_bug_is():
    """Correct: 10 audits at confidence 1 - 1e-5 each, so a false failure has probability
    <= 1e-4 (union bound). Planted bug: noise for eps = 2 under a claim of eps = 1 (true
    loss 2): at 2e4 per side {x <= 0}, {x >= 1} or {-1, 0} gives eps_lb 1.87-1.94 (seeds 0-4),
    > 10 sd above 1.5."""
    for s in SEEDS:
        r = audit(discrete_laplace(1.0), (0, 1), PureDP(1.0), samples=20_000, seed=s, confidence=1 - 1e-5)
        assert r.verdict != VIOLATION, (s, r.epsilon_lower_bound)
    bug = audit(discrete_laplace(2.0), (0, 1), PureDP(1.0), samples=20_000, seed=0, confidence=1 - 1e-5)
    assert bug.verdict == VIOLATION and bug.epsilon_lower_bound > 1.5  # seeds 0-4: 1.87-1.94, sd 0.03


def test_value_threshold_members_and_report():
    a = np.array([3, -1, 0, 2, 2, 5])
    b = np.array([1, 1, 0, -4, 7, 2])
    ca, cb, values = encode(a, b, "discrete")
    for tail, t in (("upper", 2), ("lower", 0)):
        codes = tuple(j for j, v in enumerate(values) if (v >= t if tail == "upper" else v <= t))
        s = ValueThreshold(tail, float(t), tuple(values[c] for c in codes), codes)
        expect = a >= t if tail == "upper" else a <= t
        assert s.mask(ca).tolist() == expect.tolist() == s.contains(a).tolist()
    assert s.describe() == "{x <= 0}" and s.to_dict()["type"] == "threshold"


def test_unordered_outputs_get_value_sets_only():
    rng = np.random.default_rng(3)
    rows_a = rng.integers(0, 3, (2000, 2))
    rows_b = np.where(rng.random((2000, 1)) < 0.3, 2, rng.integers(0, 3, (2000, 2)))
    ca, cb, values = encode(rows_a, rows_b, "discrete")
    cands = choose_discrete(ca, cb, values, 2000, 0.05, 0.0, k=5)
    assert cands and all(isinstance(c.rejection_set, ValueSet) for c in cands)
    assert value_sets._ordered(values) is None and value_sets._ordered([None]) is None
    assert value_sets._ordered([3, 1, None, 2]).tolist() == [1, 3, 0]  # codes by value, None left out


@pytest.mark.slow
def test_discrete_laplace_eps_1_figure():
    """The issue's figure on our own discrete Laplace at eps = 1, seeds 0-19 (a measured
    figure, deterministic at these seeds; the statistical guarantee is the test above).
    Measured: at 5e3 per side mean tightness 0.940 with thresholds vs 0.933 alone (min 0.858
    vs 0.850); at 1e5, 0.988 vs 0.986 (min 0.979 vs 0.972). Where the ratio is flat over few
    values the value sets are nearly as good; the gain is in the worst seeds."""
    for samples in (5_000, 100_000):
        t = tightness(1.0, samples, range(20))
        v = tightness(1.0, samples, range(20), output="categorical")
        print(f"samples {samples}: mean tightness {np.mean(t):.4f} with thresholds, {np.mean(v):.4f} value sets alone")
        assert np.mean(t) >= np.mean(v) and min(t) >= min(v)
