"""Under-noised releases, each shown possible without its check and refused with it.

The systematic table of bad inputs lives in tests/test_bad_input.py; these tests pin the
failure modes behind the checks (the "planted bug" is the unchecked computation itself,
run here through numpy directly) and the boundaries of the supported ranges.
"""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest
from scipy import stats

from userdp.reference import allow_large_epsilon
from userdp.reference import epasto2020_gwa as G
from userdp.reference import mechanisms as M
from userdp.reference._checks import MAX_EPSILON, NOISE_RESOLUTION, check_noise_scale
from userdp.reference.data import UserDataset


# ------------------------------------------------------------- noise absorbed by the value
def test_unchecked_laplace_at_2_60_releases_the_exact_value():
    # The failure mode: numpy adds Lap(1) to 2^60 and rounds back to 2^60,
    # because the spacing of doubles there is 2^8 = 256 >> the noise. Pr[|Lap(1)| > 128] =
    # e^-128, so all 10,000 draws are exact (false-failure probability 1e4 e^-128 ~ 0).
    raw = np.random.default_rng(0).laplace(2.0**60, 1.0, 10_000)
    assert np.all(raw == 2.0**60)
    with pytest.raises(ValueError, match=r"value.*2\^52.*noise cannot change the float"):
        M.laplace_mechanism(2**60, 1.0, 1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"value.*2\^52"):
        M.l2_laplace_mechanism([1e308, 0.0], 1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"value.*2\^52"):
        M.gaussian_mechanism(2.0**60, 1.0, np.random.default_rng(0))


def test_at_the_threshold_the_noise_still_moves_the_float_most_of_the_time():
    # |value| / scale = 2^52 exactly (value 2^52, b = 1: the spacing there is 1 = b) is
    # accepted. value + Lap(1) rounds to a different double when |noise| > 1/2, with
    # probability e^-1/2 = 0.607. With 10,000 draws the observed share is >= 0.55 except
    # with probability Pr[Bin(10^4, 0.607) < 5500] < 1e-20 (computed below).
    out = M.laplace_mechanism(2.0**52, 1.0, 1.0, np.random.default_rng(1), size=10_000)
    assert stats.binom.cdf(5499, 10_000, math.exp(-0.5)) < 1e-20
    assert np.mean(out != 2.0**52) >= 0.55
    with pytest.raises(ValueError, match="2\\^52"):  # one ulp above the threshold
        check_noise_scale(1.0, np.nextafter(NOISE_RESOLUTION, np.inf))


def test_scale_that_underflows_or_overflows_is_refused():
    # sensitivity 1e-200 with eps 1e200 gave scale 0 (an exact release);
    # both inputs are now outside the supported ranges, and the computed scale is checked.
    assert 1e-200 / 1e200 == 0.0  # the unchecked computation
    for call in (
        lambda: M.laplace_mechanism(1.0, 1e-200, 1e200, np.random.default_rng(0)),
        lambda: M.laplace_mechanism(1.0, 5e-324, 1.0, np.random.default_rng(0)),
        lambda: M.laplace_scale(1.0, 5e-324),
    ):
        with pytest.raises(ValueError, match="sensitivity|epsilon"):
            call()
    for bad in (0.0, math.inf, math.nan, -1.0):
        with pytest.raises(ValueError, match="noise scale must be finite and > 0"):
            check_noise_scale(bad)
    # the corners of the ranges stay finite and positive
    assert 0 < M.laplace_scale(1e-50, MAX_EPSILON) < M.laplace_scale(1e50, 1e-50) < math.inf


# --------------------------------------------------------------------- absurd epsilons
def test_epsilon_above_50_needs_the_explicit_opt_in():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"epsilon must be finite and > 0, in \[1e-50, 50\].*allow_large_epsilon"):
        M.laplace_mechanism(0.0, 1.0, 51.0, rng)
    with allow_large_epsilon():
        assert np.isfinite(M.laplace_mechanism(0.0, 1.0, 51.0, rng))
        with allow_large_epsilon():  # nesting keeps it on
            M.laplace_scale(1.0, 1e3)
        M.laplace_scale(1.0, 1e3)
        with pytest.raises(ValueError, match=r"in \[1e-50, 1e\+50\]"):
            M.laplace_scale(1.0, 1e60)  # the magnitude range still holds
    with pytest.raises(ValueError, match="allow_large_epsilon"):  # off again after the block
        M.laplace_scale(1.0, 51.0)
    with pytest.raises(RuntimeError):  # an exception inside resets it
        with allow_large_epsilon():
            raise RuntimeError("boom")
    with pytest.raises(ValueError, match="allow_large_epsilon"):
        M.laplace_scale(1.0, 51.0)


def test_opt_in_does_not_leak_to_other_threads():
    seen = []
    with allow_large_epsilon():
        t = threading.Thread(target=lambda: seen.append(_refused(lambda: M.laplace_scale(1.0, 51.0))))
        t.start()
        t.join()
    assert seen == [True]


def _refused(call) -> bool:
    try:
        call()
    except ValueError:
        return True
    return False


# ------------------------------------------------------------------------------ hangs
@pytest.mark.parametrize(
    "Delta,eps,delta", [(1e50, 1e-50, 1e-300), (1e-50, 50.0, 0.5), (1.0, 1e-50, 1e-5), (1e50, 50.0, 1e-12)]
)
def test_analytic_gaussian_at_the_range_corners_returns_fast_and_scales(Delta, eps, delta):
    # the bracket search started at inf and never moved for (1e308, 0.5, 1e-5).
    # Oracle: delta(sigma) depends on sigma / Delta only [BW18, Thm 8], so the corner must
    # equal Delta times the Delta = 1 calibration (computed where nothing over/underflows).
    t0 = time.perf_counter()
    s = M.gaussian_sigma_analytic(Delta, eps, delta)
    assert time.perf_counter() - t0 < 5.0
    assert s == pytest.approx(Delta * M.gaussian_sigma_analytic(1.0, eps, delta), rel=1e-9)


@pytest.mark.parametrize(
    "B,eps,sigma", [(1.0, 1e-50, 0.5), (1e50, 1e-50, 1e-50), (1.0, 1e-3, 0.5), (1e-50, 50.0, 1e50)]
)
def test_optimal_C_at_the_range_corners_is_certified_and_fast(B, eps, sigma):
    # optimal_C(..., epsilon=5e-324) never returned. In range, the noise-dominated
    # regime is answered by the sigma = 0 LP, certified for sigma by weak duality
    # (P_sigma(C) >= P_0(C) >= D_0). Independent checks: the certificate recomputed with
    # dual_bound at sigma = 0, Theorem 6's variance recomputed with total_variance, and no
    # random feasible perturbation of C doing better than the lower bound.
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (12, 2))
    D = UserDataset(X, [0, 0, 0, 1, 1, 2, 3, 4, 5, 5, 6, 7], labels=rng.uniform(0, 1, 12) * min(B, 1.0))
    t0 = time.perf_counter()
    opt = G.optimal_C(D, B, eps, sigma)
    assert time.perf_counter() - t0 < 5.0
    assert opt.gap <= 1e-6
    V = G.total_variance(D, opt.C, B, eps, sigma)
    assert V == pytest.approx(opt.variance, rel=1e-12)
    lower = (
        G.dual_bound(D, B, eps, 0.0, opt.Lambda)
        if opt.mu is None
        else G.dual_bound(D, B, eps, sigma, opt.Lambda, opt.mu)
    )
    # lower <= V up to rounding: when sigma^2 ||C||^2 dominates both are the same sum (1 ulp apart)
    assert lower == pytest.approx(opt.lower_bound, rel=1e-9) and lower <= V * (1 + 1e-12)
    proj = np.eye(D.n) - X @ np.linalg.solve(X.T @ X, X.T)  # onto {N : N X = 0}
    for scale in (1e-6, 1e-3, 1.0):
        Cp = opt.C + scale * np.abs(opt.C).max() * rng.standard_normal((2, D.n)) @ proj
        assert G.total_variance(D, Cp, B, eps, sigma) >= opt.lower_bound * (1 - 1e-12)
