"""Tests of userdp.reference.mechanisms: samplers, calibrations, clipping, RDP accounting.

Statistical tests: every sampler is compared with its exact CDF by a one-sample KS test
at a fixed seed. Under the null hypothesis the KS p-value is uniform on [0, 1], so the
rejection rule "p < 1e-5" fails a correct sampler with probability 1e-5 <= 1e-4
(docs/design.md §7) for any seed. Positive controls (a planted wrong scale) check that the same
rule does reject.

Oracles are independent of the code under test: scipy.stats distributions, closed forms
derived by hand below, and dp_accounting (imported only here, never by the package).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import dp_accounting
from dp_accounting.pld.common import DifferentialPrivacyParameters
from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp

from userdp.reference import mechanisms as M

KS_ALPHA = 1e-5  # reject iff p < 1e-5; false failure probability 1e-5 <= 1e-4
N_KS = 100_000


def rng(seed=20240601):
    return np.random.default_rng(seed)


def assert_ks_accepts(sample, cdf):
    p = stats.kstest(sample, cdf).pvalue
    assert p >= KS_ALPHA, f"KS rejects the exact CDF: p = {p:.3g}"


def assert_ks_rejects(sample, cdf):
    p = stats.kstest(sample, cdf).pvalue
    assert p < KS_ALPHA, f"KS failed to reject a planted wrong distribution: p = {p:.3g}"


# ------------------------------------------------------------------------- shapes
SHAPE_CASES = [(0.5, None, ()), ([1.0, -2.0, 3.0], None, (3,)), (0.5, 7, (7,)), ([1.0, -2.0, 3.0], 7, (7, 3))]


@pytest.mark.parametrize("value,size,shape", SHAPE_CASES)
def test_laplace_and_gaussian_shapes(value, size, shape):
    assert M.laplace_mechanism(value, 1.0, 1.0, rng(), size=size).shape == shape
    assert M.gaussian_mechanism(value, 1.0, rng(), size=size).shape == shape


@pytest.mark.parametrize("size,shape", [(None, (4,)), (5, (5, 4))])
def test_l2_laplace_shapes(size, shape):
    assert M.l2_laplace_noise(1.0, 4, rng(), size=size).shape == shape
    assert M.l2_laplace_mechanism(np.zeros(4), 1.0, rng(), size=size).shape == shape


def test_same_seed_same_release_and_value_is_added():
    v = np.array([1.0, -2.0, 3.0])
    a = M.laplace_mechanism(v, 1.0, 0.5, rng(1), size=4)
    b = M.laplace_mechanism(np.zeros(3), 1.0, 0.5, rng(1), size=4)
    np.testing.assert_allclose(a - v, b, rtol=0, atol=1e-12)
    g = M.gaussian_mechanism(v, 2.0, rng(2), size=4) - M.gaussian_mechanism(0 * v, 2.0, rng(2), size=4)
    np.testing.assert_allclose(g, np.broadcast_to(v, (4, 3)), atol=1e-12)
    z = M.l2_laplace_mechanism(v, 0.7, rng(3), size=4) - M.l2_laplace_noise(0.7, 3, rng(3), size=4)
    np.testing.assert_allclose(z, np.broadcast_to(v, (4, 3)), atol=1e-12)


# ---------------------------------------------------------------------- samplers vs CDF
def test_laplace_matches_cdf():
    b = M.laplace_scale(2.0, 0.5)
    assert b == 4.0  # b = Delta / eps
    x = M.laplace_mechanism(3.0, 2.0, 0.5, rng(), size=N_KS)
    assert_ks_accepts(x, stats.laplace(loc=3.0, scale=4.0).cdf)


def test_laplace_vector_value_matches_cdf_per_coordinate():
    v = np.array([1.0, -2.0, 3.0])
    x = M.laplace_mechanism(v, 1.0, 2.0, rng(), size=N_KS // 3)  # (m, 3)
    assert_ks_accepts((x - v).ravel(), stats.laplace(scale=0.5).cdf)


def test_laplace_positive_control_wrong_scale_is_rejected():
    # Planted bug: noise with scale 2b tested against the Laplace(b) CDF must be rejected.
    x = M.laplace_mechanism(0.0, 2.0, 1.0, rng(), size=N_KS)  # scale 2b, b = 1
    assert_ks_rejects(x, stats.laplace(scale=1.0).cdf)


def test_gaussian_matches_cdf_and_positive_control():
    x = M.gaussian_mechanism(-1.0, 2.5, rng(), size=N_KS)
    assert_ks_accepts(x, stats.norm(loc=-1.0, scale=2.5).cdf)
    assert_ks_rejects(x, stats.norm(loc=-1.0, scale=2.5 / 1.05).cdf)  # 5% too small a sigma


@pytest.mark.parametrize("d,eta", [(1, 0.5), (2, 2.0), (5, 1.0), (30, 0.3)])
def test_l2_laplace_radius_is_gamma_d_rate_eta(d, eta):
    r = np.linalg.norm(M.l2_laplace_noise(eta, d, rng(d), size=N_KS), axis=1)
    assert_ks_accepts(r, stats.gamma(a=d, scale=1 / eta).cdf)
    # Positive control: the shape d-1 (a common off-by-one) is rejected.
    assert_ks_rejects(r, stats.gamma(a=max(d - 1, 0.5), scale=1 / eta).cdf)


@pytest.mark.parametrize("d", [2, 3, 5, 30])
def test_l2_laplace_direction_is_uniform_on_sphere(d):
    # For x uniform on S^{d-1} and a fixed unit u, (1 + <u, x>)/2 ~ Beta((d-1)/2, (d-1)/2).
    z = M.l2_laplace_noise(1.3, d, rng(100 + d), size=N_KS)
    r = np.linalg.norm(z, axis=1)
    u = np.ones(d) / math.sqrt(d)
    t = (1 + (z @ u) / r) / 2
    assert_ks_accepts(t, stats.beta((d - 1) / 2, (d - 1) / 2).cdf)
    # Loose independence check only: Spearman correlation of radius and projection
    # (p uniform under independence, same 1e-5 rule). Full independence is not tested.
    assert stats.spearmanr(r, t).pvalue >= KS_ALPHA


def test_l2_laplace_in_one_dimension_is_laplace():
    z = M.l2_laplace_noise(0.5, 1, rng(), size=N_KS)[:, 0]
    assert_ks_accepts(z, stats.laplace(scale=2.0).cdf)  # exp(-eta |z|): Laplace(1/eta)


# ------------------------------------------------------------------------- clipping
def test_clip_interval():
    np.testing.assert_array_equal(M.clip_interval([-3.0, 0.5, 9.0], -1, 2), [-1.0, 0.5, 2.0])
    with pytest.raises(ValueError, match="lo < hi"):
        M.clip_interval([0.0], 1.0, 1.0)
    with pytest.raises(ValueError, match="x"):
        M.clip_interval([np.nan], 0, 1)


finite = st.floats(-1e6, 1e6, allow_nan=False)


@given(st.lists(st.lists(finite, min_size=3, max_size=3), min_size=1, max_size=8), st.floats(1e-3, 1e3))
def test_clip_l2_rows(rows, radius):
    x = np.array(rows)  # (n, 3)
    y = M.clip_l2(x, radius)
    nx, ny = np.linalg.norm(x, axis=1), np.linalg.norm(y, axis=1)
    # Tolerance 1e-12 relative: one rounding in the scale factor and in the norm.
    assert (ny <= radius * (1 + 1e-12)).all()
    inside = nx <= radius
    np.testing.assert_array_equal(y[inside], x[inside])  # unchanged inside the ball
    out = ~inside
    np.testing.assert_allclose(ny[out], radius, rtol=1e-12)
    np.testing.assert_allclose(y[out] * (nx[out] / radius)[:, None], x[out], rtol=1e-9, atol=1e-9)


def test_clip_l2_vector_and_zero():
    np.testing.assert_allclose(M.clip_l2([3.0, 4.0], 1.0), [0.6, 0.8])
    np.testing.assert_array_equal(M.clip_l2(np.zeros((2, 3)), 1.0), np.zeros((2, 3)))


# ---------------------------------------------------------------- Gaussian calibration
def bw18_delta(sigma, Delta, eps):
    """Balle & Wang 2018 Thm 8, written directly with scipy.stats.norm (test oracle)."""
    u, v = Delta / (2 * sigma), eps * sigma / Delta
    return stats.norm.cdf(u - v) - math.exp(eps) * stats.norm.cdf(-u - v)


def test_classical_sigma_closed_form_and_domain():
    # Delta sqrt(2 ln(1.25/delta)) / eps with Delta = 2, eps = 0.5, delta = 1e-5
    assert M.gaussian_sigma_classical(2.0, 0.5, 1e-5) == pytest.approx(4 * math.sqrt(2 * math.log(1.25e5)), rel=1e-14)
    with pytest.raises(ValueError, match="epsilon"):
        M.gaussian_sigma_classical(1.0, 1.0, 1e-5)
    with pytest.raises(ValueError, match="delta"):
        M.gaussian_sigma_classical(1.0, 0.5, 0.0)


ANALYTIC_CASES = [
    (1.0, 1.0, 1e-5),
    (1.0, 0.5, 1e-5),
    (3.0, 0.1, 1e-6),
    (1.0, 5.0, 1e-8),
    (1.0, 10.0, 1e-10),
    (0.2, 1e-3, 1e-3),
    (1.0, 2.0, 0.3),
]


@pytest.mark.parametrize("Delta,eps,delta", ANALYTIC_CASES)
def test_analytic_sigma_is_the_smallest_satisfying_bw18(Delta, eps, delta):
    s = M.gaussian_sigma_analytic(Delta, eps, delta)
    # dp_accounting computes the exact hockey-stick divergence of N(0, s^2) vs N(Delta, s^2).
    oracle = GaussianPrivacyLoss(s, sensitivity=Delta)
    assert oracle.get_delta_for_epsilon(eps) <= delta * (1 + 1e-9)
    assert GaussianPrivacyLoss(s * (1 - 1e-9), sensitivity=Delta).get_delta_for_epsilon(eps) > delta
    if delta >= 1e-8:  # the direct formula loses digits below that
        assert bw18_delta(s, Delta, eps) <= delta * (1 + 1e-9)
        assert bw18_delta(s * (1 - 1e-9), Delta, eps) > delta
    # dp_accounting's own calibration (binary search, tolerance 1e-7 absolute on sigma)
    ref = GaussianPrivacyLoss.from_privacy_guarantee(
        DifferentialPrivacyParameters(eps, delta), sensitivity=Delta
    ).standard_deviation
    assert s == pytest.approx(ref, rel=1e-6, abs=2e-7)
    if eps < 1:
        assert s <= M.gaussian_sigma_classical(Delta, eps, delta)


@settings(deadline=None, max_examples=30)
@given(st.floats(1e-2, 1e2), st.floats(1e-2, 20.0), st.floats(1e-12, 0.5), st.floats(0.1, 10.0))
def test_analytic_sigma_scales_with_sensitivity(Delta, eps, delta, c):
    # delta(sigma) depends on sigma/Delta only, so sigma(c Delta) = c sigma(Delta).
    # Tolerance 1e-9: both calls are accurate to ~1e-12 relative.
    a = M.gaussian_sigma_analytic(c * Delta, eps, delta)
    assert a == pytest.approx(c * M.gaussian_sigma_analytic(Delta, eps, delta), rel=1e-9)
    assert M.gaussian_sigma_analytic(Delta, eps, delta / 2) > M.gaussian_sigma_analytic(Delta, eps, delta)


# ------------------------------------------------------------------------- Renyi DP
def test_default_orders():
    o = M.DEFAULT_RDP_ORDERS
    assert o.shape == (99 + 53,) and o[0] == pytest.approx(1.1) and o[98] == pytest.approx(10.9)
    assert o[-1] == 63 and (np.diff(o) > 0).all()


def test_gaussian_rdp_and_composition_closed_form():
    o = np.array([2.0, 4.0])
    np.testing.assert_allclose(M.gaussian_rdp(o, 2.0, 4.0), [2 * 4 / 32, 4 * 4 / 32])  # alpha Delta^2/(2 sigma^2)
    np.testing.assert_allclose(M.compose_rdp([0.1, 0.2], [0.3, 0.4], [0, 0]), [0.4, 0.6])


def test_conversions_on_hand_derived_numbers():
    # mironov: rho + log(1/delta)/(alpha - 1). alpha=2, rho=0.5, delta=e^-3: 0.5 + 3 = 3.5
    assert M.rdp_to_dp([2.0], [0.5], math.exp(-3), method="mironov2017") == pytest.approx(3.5, rel=1e-14)
    # min over orders: alpha=2, rho=1 -> 1 + 4 = 5; alpha=3, rho=1.2 -> 1.2 + 4/2 = 3.2
    assert M.rdp_to_dp([2.0, 3.0], [1.0, 1.2], math.exp(-4), method="mironov2017") == pytest.approx(3.2, rel=1e-14)
    # cks: 0.5 + log(1/2) - (log 2 - 3)/1 = 3.5 - 2 log 2
    assert M.rdp_to_dp([2.0], [0.5], math.exp(-3)) == pytest.approx(3.5 - 2 * math.log(2), rel=1e-14)
    # inverses: mironov delta = exp((alpha-1)(rho-eps)); cks adds (alpha-1)log(1-1/alpha) - log alpha
    assert M.rdp_delta([2.0], [0.5], 3.5, method="mironov2017") == pytest.approx(math.exp(-3), rel=1e-12)
    assert M.rdp_delta([2.0], [0.5], 3.5 - 2 * math.log(2)) == pytest.approx(math.exp(-3), rel=1e-12)


@given(st.lists(st.floats(1.001, 1e3), min_size=1, max_size=5), st.data(), st.floats(1e-12, 0.9))
def test_cks_never_exceeds_mironov(orders, data, delta):
    # Theorem: the gap log(1-1/alpha) - log(alpha)/(alpha-1) is < 0 for every alpha > 1.
    rdp = data.draw(st.lists(st.floats(0, 1e3), min_size=len(orders), max_size=len(orders)))
    cks = M.rdp_to_dp(orders, rdp, delta)
    mir = M.rdp_to_dp(orders, rdp, delta, method="mironov2017")
    assert 0 <= cks <= mir * (1 + 1e-12)


ACCOUNTANT_CASES = [
    (1.0, 1, 1e-5),
    (0.8, 10, 1e-6),
    (2.0, 100, 1e-5),
    (5.0, 1000, 1e-8),
    (20.0, 3, 1e-3),
    (0.5, 50, 1e-9),
]


@pytest.mark.parametrize("z,k,delta", ACCOUNTANT_CASES)
def test_rdp_to_dp_matches_dp_accounting(z, k, delta):
    orders = M.DEFAULT_RDP_ORDERS
    acc = dp_rdp.RdpAccountant(list(orders))
    acc.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(z), k))
    ours = M.compose_rdp(*[M.gaussian_rdp(orders, 1.0, z)] * k)
    eps = M.rdp_to_dp(orders, ours, delta)
    assert eps == pytest.approx(acc.get_epsilon(delta), rel=1e-9)
    assert M.rdp_delta(orders, ours, eps) == pytest.approx(acc.get_delta(eps), rel=1e-9)
    # Same Gaussian at sensitivity Delta = 3 with sigma = z * Delta: identical curve.
    np.testing.assert_allclose(M.gaussian_rdp(orders, 3.0, 3.0 * z), M.gaussian_rdp(orders, 1.0, z), rtol=1e-14)


def test_heterogeneous_composition_matches_dp_accounting():
    orders = M.DEFAULT_RDP_ORDERS
    acc = dp_rdp.RdpAccountant(list(orders))
    acc.compose(dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(z) for z in (0.7, 3.0, 10.0)]))
    ours = M.compose_rdp(*[M.gaussian_rdp(orders, 1.0, z) for z in (0.7, 3.0, 10.0)])
    assert M.rdp_to_dp(orders, ours, 1e-6) == pytest.approx(acc.get_epsilon(1e-6), rel=1e-9)


@pytest.mark.parametrize(
    "orders,rdp,delta",
    [
        ([2.0, 5.0], [1e-6, 1e-5], 0.5),  # KL shortcut -> 0
        ([2.0], [0.5], 0.5),  # cks formula < 0 -> clipped to 0
        ([3.0, 30.0], [np.inf, 2.0], 1e-5),
    ],
)  # infinite rho at one order
def test_rdp_to_dp_edge_cases_match_dp_accounting(orders, rdp, delta):
    assert M.rdp_to_dp(orders, rdp, delta) == pytest.approx(
        dp_rdp.compute_epsilon(orders, rdp, delta)[0], rel=1e-12, abs=0
    )


# ---------------------------------------------------------------------- bad input
G = np.random.default_rng(0)
BAD = [
    (lambda: M.laplace_scale(1.0, 0.0), ValueError, "epsilon"),
    (lambda: M.laplace_scale(1.0, -1.0), ValueError, "epsilon"),
    (lambda: M.laplace_scale(0.0, 1.0), ValueError, "sensitivity"),
    (lambda: M.laplace_scale(np.inf, 1.0), ValueError, "sensitivity"),
    (lambda: M.laplace_mechanism(np.nan, 1.0, 1.0, G), ValueError, "value"),
    (lambda: M.laplace_mechanism([0.0, np.inf], 1.0, 1.0, G), ValueError, r"value\[1\]"),
    (lambda: M.laplace_mechanism(np.zeros((2, 2)), 1.0, 1.0, G), ValueError, "value"),
    (lambda: M.laplace_mechanism(0.0, 1.0, 1.0, np.random.RandomState(0)), TypeError, "rng"),
    (lambda: M.laplace_mechanism(0.0, 1.0, 1.0, 0), TypeError, "rng"),
    (lambda: M.laplace_mechanism(0.0, 1.0, 1.0, G, size=0), ValueError, "size"),
    (lambda: M.laplace_mechanism(0.0, 1.0, 1.0, G, size=2.5), TypeError, "size"),
    (lambda: M.gaussian_mechanism(0.0, 0.0, G), ValueError, "sigma"),
    (lambda: M.gaussian_mechanism(0.0, -1.0, G), ValueError, "sigma"),
    (lambda: M.gaussian_mechanism(0.0, 1.0, None), TypeError, "rng"),
    (lambda: M.gaussian_sigma_classical(1.0, 1.5, 1e-5), ValueError, "epsilon"),
    (lambda: M.gaussian_sigma_classical(1.0, 0.5, 1.0), ValueError, "delta"),
    (lambda: M.gaussian_sigma_classical(0.0, 0.5, 1e-5), ValueError, "sensitivity"),
    (lambda: M.gaussian_sigma_analytic(1.0, 0.0, 1e-5), ValueError, "epsilon"),
    (lambda: M.gaussian_sigma_analytic(1.0, 1.0, 0.0), ValueError, "delta"),
    (lambda: M.gaussian_sigma_analytic(1.0, 1.0, -0.1), ValueError, "delta"),
    (lambda: M.gaussian_sigma_analytic(1.0, 1.0, 1.0), ValueError, "delta"),
    (lambda: M.gaussian_sigma_analytic(-1.0, 1.0, 1e-5), ValueError, "sensitivity"),
    (lambda: M.l2_laplace_noise(0.0, 3, G), ValueError, "eta"),
    (lambda: M.l2_laplace_noise(1.0, 0, G), ValueError, "d"),
    (lambda: M.l2_laplace_noise(1.0, 2.0, G), TypeError, "d"),
    (lambda: M.l2_laplace_noise(1.0, 3, "seed"), TypeError, "rng"),
    (lambda: M.l2_laplace_mechanism(1.0, 1.0, G), ValueError, "value"),
    (lambda: M.l2_laplace_mechanism([0.0, np.nan], 1.0, G), ValueError, "value"),
    (lambda: M.clip_interval([0.0], 2.0, 1.0), ValueError, "lo < hi"),
    (lambda: M.clip_l2([1.0, 2.0], 0.0), ValueError, "radius"),
    (lambda: M.clip_l2([1.0, np.inf], 1.0), ValueError, "x"),
    (lambda: M.gaussian_rdp([1.0, 2.0], 1.0, 1.0), ValueError, r"orders\[0\]"),
    (lambda: M.gaussian_rdp([2.0], 1.0, 0.0), ValueError, "sigma"),
    (lambda: M.compose_rdp(), ValueError, "at least one"),
    (lambda: M.compose_rdp([0.1, 0.2], [0.1]), ValueError, r"rdp_curves\[1\]"),
    (lambda: M.compose_rdp([0.1, -0.2]), ValueError, r"rdp_curves\[0\]"),
    (lambda: M.rdp_to_dp([2.0, 0.5], [0.1, 0.1], 1e-5), ValueError, r"orders\[1\]"),
    (lambda: M.rdp_to_dp([2.0], [-0.1], 1e-5), ValueError, "rdp"),
    (lambda: M.rdp_to_dp([2.0], [np.nan], 1e-5), ValueError, "rdp"),
    (lambda: M.rdp_to_dp([2.0, 3.0], [0.1], 1e-5), ValueError, "rdp"),
    (lambda: M.rdp_to_dp([2.0], [0.1], 0.0), ValueError, "delta"),
    (lambda: M.rdp_to_dp([2.0], [0.1], 1.0), ValueError, "delta"),
    (lambda: M.rdp_to_dp([2.0], [0.1], 1e-5, method="bun2016"), ValueError, "method"),
    (lambda: M.rdp_delta([2.0], [0.1], -1.0), ValueError, "epsilon"),
]


@pytest.mark.parametrize("call,exc,match", BAD, ids=[f"{i}-{m}" for i, (_, _, m) in enumerate(BAD)])
def test_bad_input_is_refused(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
