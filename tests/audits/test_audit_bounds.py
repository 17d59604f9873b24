"""The bound itself: Clopper-Pearson pieces, p-values, and coverage (DESIGN §6)."""
import math

import numpy as np
import pytest
from scipy import stats

from userdp.audits import audit
from userdp.audits.bounds import cp_lower, cp_upper, epsilon_lower_bound, p_value
from userdp.reference.claims import PureDP


def test_cp_matches_beta_quantiles():
    # Independent oracle: the Clopper-Pearson bounds are beta quantiles (Clopper & Pearson 1934).
    k, n, a = 37, 200, 0.025
    assert cp_lower(k, n, a) == pytest.approx(stats.beta.ppf(a, k, n - k + 1), rel=1e-12)
    assert cp_upper(k, n, a) == pytest.approx(stats.beta.isf(a, k + 1, n - k), rel=1e-12)
    assert cp_lower(0, n, a) == 0.0 and cp_upper(n, n, a) == 1.0


def test_epsilon_lower_bound_formula():
    k1, k2, n, alpha = 5000, 1840, 10000, 0.05
    expected = math.log(stats.beta.ppf(alpha / 2, k1, n - k1 + 1) / stats.beta.isf(alpha / 2, k2 + 1, n - k2))
    assert epsilon_lower_bound(k1, k2, n, alpha) == pytest.approx(expected, rel=1e-12)
    lo = stats.beta.ppf(alpha / 2, k1, n - k1 + 1)
    assert epsilon_lower_bound(k1, k2, n, alpha, delta=0.01) == pytest.approx(
        math.log((lo - 0.01) / stats.beta.isf(alpha / 2, k2 + 1, n - k2)), rel=1e-12)
    assert epsilon_lower_bound(10, 5, n, alpha, delta=0.5) == -math.inf


@pytest.mark.parametrize("eps,delta", [(0.5, 0.0), (0.9, 0.0), (0.3, 0.02)])
def test_p_value_inverts_the_bound(eps, delta):
    # Counts whose p-values (2e-7, 0.33, 1e-11) lie above P_VALUE_FLOOR = 1e-30, where the
    # p-value is exact; at 5000/1840 of 10^4 two of them fall below the floor (next test).
    k1, k2, n = 500, 184, 1000
    p = p_value(k1, k2, n, eps, delta)
    assert 0 < p < 1
    # The decision "eps_lb(a) > eps" switches exactly at a = p.
    assert epsilon_lower_bound(k1, k2, n, p * 1.001, delta) > eps
    assert epsilon_lower_bound(k1, k2, n, p * 0.999, delta) <= eps
    assert p_value(k1, k2, n, 5.0, delta) == 1.0


def test_p_value_below_floor_is_reported_as_floor():
    from userdp.audits.bounds import P_VALUE_FLOOR
    k1, k2, n = 5000, 1840, 10000
    assert epsilon_lower_bound(k1, k2, n, P_VALUE_FLOOR, 0.0) > 0.5  # rejected even at the floor
    assert p_value(k1, k2, n, 0.5) == P_VALUE_FLOOR                   # so reported as the floor


def _rr(D, rng, size):
    """Randomized response on one bit with eps = ln 3: Pr[truth] = 3/4."""
    return np.where(rng.random(size) < 0.75, D, 1 - D).astype(np.int64)


def test_coverage_randomized_response():
    # Randomized response has true eps = ln 3 and a set ({1}) attaining it, so eps_lb is
    # close to eps and coverage is really exercised. Validity: Pr[eps_lb > ln 3] <= 0.05 per
    # audit, independent seeds, so #exceed ~ at most Bin(300, 0.05); the threshold 33 has
    # Pr[Bin(300, 0.05) > 33] = 6.9e-5 <= 1e-4.
    exceed = sum(audit(_rr, (0, 1), PureDP(1.0), samples=400, seed=s).epsilon_lower_bound > math.log(3)
                 for s in range(300))
    assert stats.binom.sf(33, 300, 0.05) <= 1e-4
    assert exceed <= 33


def test_coverage_laplace():
    # Laplace eps = 1: Pr[eps_lb > 1] <= 0.05 per audit; Pr[Bin(200, 0.05) > 24] = 8.3e-5.
    lap = lambda D, rng, size: D + rng.laplace(0.0, 1.0, size)  # noqa: E731
    exceed = sum(audit(lap, (0.0, 1.0), PureDP(1.0), samples=2000, seed=s).epsilon_lower_bound > 1.0
                 for s in range(200))
    assert stats.binom.sf(24, 200, 0.05) <= 1e-4
    assert exceed <= 24


def test_multiplicity_keeps_false_alarms_below_alpha():
    # 10 identical pairs of randomized response claiming its exact eps = ln 3, all 10
    # confirmed (m = 10 candidates per audit). With the Holm/Bonferroni correction the
    # audit flags with probability <= alpha = 0.05; Pr[Bin(200, 0.05) > 24] = 8.3e-5.
    pairs = [(0, 1)] * 10
    results = [audit(_rr, pairs, PureDP(math.log(3)), samples=400, seed=s, confirm_pairs=10)
               for s in range(200)]
    assert all(r.witness.candidates_tested == 10 for r in results)
    assert sum(r.verdict == "violation" for r in results) <= 24


@pytest.mark.parametrize("n", [100, 10**4, 10**6, 10**7])
def test_extreme_counts_do_not_warn_and_p_value_is_floored(n):
    # Regression: p_value used to probe level 1e-300, where scipy's beta quantile warns
    # (boost ibeta root finding) for small counts; warnings are errors in this suite.
    from userdp.audits.bounds import P_VALUE_FLOOR
    for k in sorted({0, 1, 2, 3, 10, n // 2, n - 3, n - 1, n}):
        assert 0.0 <= cp_lower(k, n, P_VALUE_FLOOR) <= cp_upper(k, n, P_VALUE_FLOOR) <= 1.0
    # k1 = n, k2 = 0 at n >= 10^4 is an overwhelming violation: the p-value sits at the floor
    if n >= 10**4:
        assert p_value(n, 0, n, 1.0) == P_VALUE_FLOOR
    assert p_value(2, 0, 90_000, 1.0) >= P_VALUE_FLOOR
