"""Tests for the WME baseline of Zhao et al. 2024 (Levy et al. 2021's two-stage winsorized
mean): reference/zhao2024_wme.py, its property suite ``userdp.properties.zhao2024_wme`` on the
reference and its planted bugs (tests/papers/zhao2024/planted_wme.py).

Oracles, never the code under test: scipy.linalg.hadamard and explicit matrices for the
rotation; closed forms (Hoeffding's tau, the bin grid, the sensitivities sqrt(2 d') and
min(3 tau sqrt(d'), 2R) / n); brute force over every replacement of one user's local
average on a grid (the statistics read a user only through y_i, and y_i ranges over the support, so
a grid of y_i is exhaustive up to its spacing); the noisy argmax's exact law by quadrature;
``gaussian_sigma_analytic`` (tested in test_mechanisms.py) for the noise calibration; and
dp_accounting's privacy-loss distributions for the composed claim.

Statistical tests: fixed seeds, and each states its false-failure probability (<= 1e-4).
Tolerances: closed forms in double precision are compared at rel 1e-12 (a few ulps).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy import integrate, stats
from scipy.linalg import hadamard

from papers.zhao2024.planted_wme import BUGS  # tests/ is on sys.path (rootdir conftest)
from userdp.properties import zhao2024_wme as P
from userdp.properties.adapter import check_suite_property
from userdp.properties.strategies import neighbouring_pairs, user_datasets
from userdp.reference import zhao2024_wme as W
from userdp.reference.claims import ApproxDP, Claims
from userdp.reference.data import UserDataset
from userdp.reference.mechanisms import gaussian_sigma_analytic
from userdp.reference.neighbours import REPLACE_USER_ITEMS

TIGHT = 1e-12
ALPHA = 1e-4  # false-failure budget of each statistical test
# beta = 2/e makes ln(2/beta) = 1, so tau = R sqrt(2/m): m = 8 items gives tau = R/2, and the
# grid on [-1, 1] is e = (-1, -0.5, 0, 0.5, 1), K = 4 bins.
BETA_HALF = 2.0 / math.e


def users(avgs, m=8):
    """One user per entry of ``avgs`` (a scalar or a d-vector), each holding m copies of it:
    local average = the entry."""
    a = np.asarray(avgs, dtype=float)
    values = np.repeat(a, m, axis=0)
    return UserDataset.from_arrays(values, np.repeat(np.arange(a.shape[0]), m))


def grid_edges(R, tau):
    K = math.ceil(2 * R / tau)
    return -R + tau * np.arange(K + 1)


def chosen_bin(lo, R, tau):
    """The bin k with lo = e_k - tau = -R + (k - 1) tau."""
    return np.rint((np.asarray(lo) + R) / tau).astype(int) + 1


# ----------------------------------------------------------------------------- rotation
@pytest.mark.parametrize("d_pad", [1, 2, 4, 8, 32, 256])
def test_fwht_is_the_sylvester_hadamard_matrix(d_pad):
    x = np.random.default_rng(d_pad).normal(size=(3, d_pad))
    np.testing.assert_allclose(W.fwht(x), x @ hadamard(d_pad).T, rtol=TIGHT, atol=TIGHT * d_pad)
    np.testing.assert_allclose(W.fwht(x[0]), hadamard(d_pad) @ x[0], rtol=TIGHT, atol=TIGHT * d_pad)


@pytest.mark.parametrize("d", [2, 3, 5, 8, 13])
def test_rotation_is_orthogonal_and_unrotate_inverts_it(d):
    rng = np.random.default_rng(d)
    d_pad = W.padded_dimension(d)
    assert d_pad == 2 ** math.ceil(math.log2(d))
    s = W.random_signs(d, rng)
    U = hadamard(d_pad) @ np.diag(s) / math.sqrt(d_pad)  # brute-force matrix
    np.testing.assert_allclose(U @ U.T, np.eye(d_pad), atol=TIGHT)
    x = rng.normal(size=(4, d))
    z = W.rotate(x, s)
    np.testing.assert_allclose(z, np.pad(x, ((0, 0), (0, d_pad - d))) @ U.T, atol=TIGHT)
    np.testing.assert_allclose(np.linalg.norm(z, axis=1), np.linalg.norm(x, axis=1), rtol=TIGHT)
    np.testing.assert_allclose(W.unrotate(z, s, d), x, atol=TIGHT)
    # one rotation per row
    S = W.random_signs(d, rng, size=4)
    Z = W.rotate(x, S)
    for r in range(4):
        Ur = hadamard(d_pad) @ np.diag(S[r]) / math.sqrt(d_pad)
        np.testing.assert_allclose(Z[r], Ur[:, :d] @ x[r], atol=TIGHT)
    np.testing.assert_allclose(W.unrotate(Z, S, d), x, atol=TIGHT)


def test_random_signs_are_fair_at_every_position():
    # 2 * 10^5 draws of 4 signs: each position's count of +1 is Binomial(2e5, 1/2); the
    # acceptance region [isf(1 - a), isf(a)] with a = ALPHA / 8 per side and position has
    # false-failure <= ALPHA (union bound over 4 positions, 2 sides).
    S = W.random_signs(3, np.random.default_rng(11), size=200_000)
    assert set(np.unique(S)) == {-1.0, 1.0}
    plus = (S > 0).sum(axis=0)
    lo, hi = stats.binom.ppf(ALPHA / 8, 200_000, 0.5), stats.binom.isf(ALPHA / 8, 200_000, 0.5)
    assert ((plus >= lo) & (plus <= hi)).all(), plus


# ------------------------------------------------------------------------------- radius
def test_radius_is_hoeffding_at_the_smallest_user():
    # Hoeffding, items in [-R, R]: 2 exp(-m t^2 / (2 R^2)) = beta  <=>  t = R sqrt(2 ln(2/beta) / m).
    assert W.wme_radius(20, 1.0, 0.05) == pytest.approx(math.sqrt(2 * math.log(40) / 20), rel=TIGHT)
    assert W.wme_radius(np.array([50, 8, 200]), 2.0, 0.1) == pytest.approx(
        2 * math.sqrt(2 * math.log(20) / 8), rel=TIGHT
    )
    assert W.wme_radius(8, 1.0, BETA_HALF) == pytest.approx(0.5, rel=TIGHT)
    D = UserDataset.from_user_lists([[0.1] * 30, [0.2] * 3, [0.3] * 10])
    assert W.wme_radius(D.counts, 1.0) == pytest.approx(math.sqrt(2 * math.log(2 / 0.05) / 3), rel=TIGHT)


# ---------------------------------------------------------------------- stage I: counts
def test_histogram_by_hand():
    # tau = 1/2 on [-1, 1]: bins [-1, -.5), [-.5, 0), [0, .5), [.5, 1]; y = 1 is in the last (closed) bin.
    D = users([-0.9, -0.2, 0.1, 0.3, 1.0, -1.0])
    np.testing.assert_array_equal(W.wme_histogram(D, 1.0, beta=BETA_HALF), [[2, 1, 2, 1]])
    # d = 2 with a given rotation: U = H_2 diag(s) / sqrt 2; z = U y by hand.
    s = np.array([1.0, -1.0])
    Y = np.array([[0.6, 0.0], [0.0, 0.6], [-0.3, -0.3]])
    Z = Y @ (hadamard(2) @ np.diag(s) / math.sqrt(2)).T  # (0.42, 0.42), (-0.42, 0.42), (0, -0.42)
    want = np.zeros((2, 4))
    for z in Z:
        for j in range(2):
            want[j, min(int(np.floor((z[j] + 1) / 0.5)), 3)] += 1
    np.testing.assert_array_equal(W.wme_histogram(users(Y), 1.0, beta=BETA_HALF, signs=s), want)


def _replacements_1d(D, step):
    """Every neighbour of D in which one user's local average moves to a point of the grid."""
    grid = np.linspace(-1.0, 1.0, round(2 / step) + 1)
    for u in D.users:
        k = D.records_of(int(u)).size
        for g in grid:
            yield REPLACE_USER_ITEMS.neighbour(D, int(u), np.full(k, g))


def _replacements_disk(D, step):
    axis = np.linspace(-1.0, 1.0, round(2 / step) + 1)
    pts = np.array([(a, b) for a in axis for b in axis if a * a + b * b <= 1.0])
    for u in D.users:
        k = D.records_of(int(u)).size
        for p in pts:
            yield REPLACE_USER_ITEMS.neighbour(D, int(u), np.tile(p, (k, 1)))


def test_histogram_sensitivity_is_sqrt_2d_by_brute_force():
    # d = 1: ||c - c'||_2 <= sqrt(2), attained when the user changes bin.
    D = users([-0.7, 0.1, 0.4])
    c = W.wme_histogram(D, 1.0, beta=BETA_HALF)
    worst = max(np.linalg.norm(W.wme_histogram(N, 1.0, beta=BETA_HALF) - c) for N in _replacements_1d(D, 0.05))
    assert worst == pytest.approx(math.sqrt(2), rel=TIGHT)
    # d = 2 (d' = 2), fixed rotation: <= sqrt(2 d') = 2, attained (both coordinates change bin).
    s = np.array([1.0, -1.0])
    D2 = users([[0.5, 0.1], [-0.2, 0.3], [0.0, -0.6]])
    c2 = W.wme_histogram(D2, 1.0, beta=BETA_HALF, signs=s)
    worst2 = max(
        np.linalg.norm(W.wme_histogram(N, 1.0, beta=BETA_HALF, signs=s) - c2) for N in _replacements_disk(D2, 0.1)
    )
    assert worst2 == pytest.approx(2.0, rel=TIGHT)


# --------------------------------------------------------------- stage II: the statistic
def test_statistic_is_the_clipped_mean_by_hand():
    D = users([-0.9, -0.2, 0.1, 0.7])
    # interval [-0.5, 1.0]: clip -> (-0.5, -0.2, 0.1, 0.7), mean 0.1/4 = 0.025.
    assert W.wme_statistic(D, [-0.5], [1.0], 1.0) == pytest.approx([0.025], rel=TIGHT)
    # two intervals at once (rows): [-1, 0.5] -> (-0.9, -0.2, 0.1, 0.5), mean -0.125.
    np.testing.assert_allclose(
        W.wme_statistic(D, [[-0.5], [-1.0]], [[1.0], [0.5]], 1.0), [[0.025], [-0.125]], rtol=TIGHT
    )


def _intervals(R, tau):
    """Every interval stage I can choose: [e_k - tau, e_k + 2 tau], k = 0..K-1."""
    e = grid_edges(R, tau)
    return e[:-1] - tau, e[:-1] + 2 * tau


@pytest.mark.parametrize("m,tau", [(8, 0.5), (2, 1.0)])
def test_statistic_sensitivity_d1_by_brute_force(m, tau):
    # For every interval stage I can choose and every replacement of one user's average on
    # a grid: |stat(D) - stat(D')| <= min(3 tau, 2R) / n. Attained: the user at -1 moved to 1
    # crosses I cap [-1, 1] whole. m = 8: tau = 1/2, 3 tau = 1.5 < 2 (Levy et al.'s width
    # bound binds, at k = 1, 2); m = 2: tau = 1, 3 tau = 3 > 2 (the support bound 2R binds).
    n = 3
    D = users([-1.0, 0.1, 0.4], m=m)
    lo, hi = _intervals(1.0, tau)
    base = W.wme_statistic(D, lo[:, None], hi[:, None], 1.0)[:, 0]
    moves = np.array(
        [W.wme_statistic(N, lo[:, None], hi[:, None], 1.0)[:, 0] - base for N in _replacements_1d(D, 0.05)]
    )
    bound = min(3 * tau, 2.0) / n
    assert W.wme_sensitivities(D, 1.0, beta=BETA_HALF) == pytest.approx((math.sqrt(2), bound), rel=TIGHT)
    worst = np.abs(moves).max(axis=0)
    assert (worst <= bound * (1 + TIGHT)).all()
    assert worst.max() == pytest.approx(bound, rel=TIGHT)


@pytest.mark.parametrize("m,tau", [(32, 0.25), (8, 0.5)])
def test_statistic_sensitivity_d2_by_brute_force(m, tau):
    # d = 2 (d' = 2), a fixed rotation, every box of the grid in both coordinates, every
    # replacement of one user's average on a grid of the unit disk:
    # ||stat(D) - stat(D')||_2 <= min(3 tau sqrt 2, 2R) / n. m = 32: the box diagonal
    # 1.06 binds; m = 8: 2.12 > 2R = 2, the projection bound binds.
    n = 3
    s = np.array([-1.0, -1.0])
    D2 = users([[0.5, 0.1], [-0.2, 0.3], [0.0, -0.6]], m=m)
    lo, _ = _intervals(1.0, tau)
    boxes_lo = np.array([(a, b) for a in lo for b in lo])
    boxes_hi = boxes_lo + 3 * tau
    base = W.wme_statistic(D2, boxes_lo, boxes_hi, 1.0, signs=s)
    worst = max(
        np.linalg.norm(W.wme_statistic(N, boxes_lo, boxes_hi, 1.0, signs=s) - base, axis=1).max()
        for N in _replacements_disk(D2, 0.1)
    )
    bound = min(3 * tau * math.sqrt(2), 2.0) / n
    assert worst <= bound * (1 + TIGHT)
    assert W.wme_sensitivities(D2, 1.0, beta=BETA_HALF) == pytest.approx((2.0, bound), rel=TIGHT)


@st.composite
def _pair_signs_box(draw):
    """A REPLACE_USER_ITEMS pair of imbalanced users (1..6 items) with items in [-1, 1]^d
    (inside the ball of radius R = sqrt(d)), d in {1, 2, 3}, a rotation, beta, and one box of
    the grid (a bin k_j per rotated coordinate)."""
    d = draw(st.sampled_from([1, 2, 3]))
    pair = draw(
        neighbouring_pairs(
            REPLACE_USER_ITEMS, user_datasets(dim=None if d == 1 else d, value_range=(-1.0, 1.0)), -1.0, 1.0
        )
    )
    d_pad = W.padded_dimension(d)
    signs = None if d == 1 else np.array(draw(st.lists(st.sampled_from([1.0, -1.0]), min_size=d_pad, max_size=d_pad)))
    beta = draw(st.floats(0.01, 0.99))
    R = math.sqrt(d)
    tau = W.wme_radius(pair.first.counts, R, beta)
    K = math.ceil(2 * R / tau)
    k = np.array(draw(st.lists(st.integers(0, K - 1), min_size=d_pad, max_size=d_pad)))
    return pair, signs, beta, R, -R + (k - 1) * tau, -R + (k + 2) * tau


@given(_pair_signs_box())
def test_sensitivities_hold_on_adversarial_imbalanced_pairs(case):
    # Hypothesis: imbalanced users (uniform, Zipf-like, many singletons), any user replaced
    # anywhere in the support, any rotation and any box stage I can choose. Both stages
    # move by at most the sensitivity their noise is calibrated to (rounding slack 1e-12).
    pair, signs, beta, R, lo, hi = case
    D1, D2 = W.wme_sensitivities(pair.first, R, beta=beta)
    c = [W.wme_histogram(D, R, beta=beta, signs=signs) for D in (pair.first, pair.second)]
    assert np.linalg.norm(c[0] - c[1]) <= D1 * (1 + TIGHT)
    s = [W.wme_statistic(D, lo, hi, R, signs=signs) for D in (pair.first, pair.second)]
    assert np.linalg.norm(s[0] - s[1]) <= D2 * (1 + TIGHT)


def test_sensitivities_use_the_padded_dimension():
    # d = 3 pads to d' = 4 (all 4 rotated coordinates move): Delta_1 = sqrt(8); at m = 128,
    # tau = sqrt(2/128) = 1/8 and Delta_2 = 3 tau * 2 / n = 0.75 / 5 (below 2R / n = 0.4).
    D = users(np.full((5, 3), 0.1), m=128)
    assert W.wme_sensitivities(D, 1.0, beta=BETA_HALF) == pytest.approx((math.sqrt(8), 0.15), rel=TIGHT)
    # at m = 8 (tau = 1/2) the box diagonal 3 > 2R = 2, so Delta_2 = 2 / 5.
    assert W.wme_sensitivities(users(np.full((5, 3), 0.1)), 1.0, beta=BETA_HALF)[1] == pytest.approx(0.4, rel=TIGHT)


# ---------------------------------------------------------------------- budgets, noise
def test_budgets_split_and_compose_back():
    e1, d1, e2, d2 = W.wme_budgets(2.0, 1e-5, 0.25)
    assert (e1, d1, e2, d2) == pytest.approx((0.5, 5e-6, 1.5, 5e-6), rel=TIGHT)
    assert e1 + e2 == pytest.approx(2.0, rel=TIGHT) and d1 + d2 == pytest.approx(1e-5, rel=TIGHT)


@pytest.mark.parametrize("d", [1, 3])
def test_noise_scales_are_the_analytic_gaussian_of_the_stated_sensitivities(d):
    # sigma_k = Delta_k * gaussian_sigma_analytic(1, eps_k, delta_k) * (1 + 2^-50) equals
    # gaussian_sigma_analytic(Delta_k, eps_k, delta_k) to that function's tolerance: each
    # returns a sigma in [sigma*, sigma* e^{3 tol / 4} (1 + tol)^1000] (its brentq step and
    # its round-up loop, tol = 1e-12), so the two differ by < 1.1e-9 relative.
    avgs = np.linspace(-0.5, 0.5, 7) if d == 1 else np.tile([0.2, -0.1, 0.3], (7, 1))
    D = users(avgs)
    tau, n, d_pad = 0.5, 7, W.padded_dimension(d)
    D1, D2 = math.sqrt(2 * d_pad), min(3 * tau * math.sqrt(d_pad), 2.0) / n
    s1, s2 = W.wme_noise_scales(D, 1.0, 1e-5, 1.0, beta=BETA_HALF, split=0.3)
    assert s1 == pytest.approx(gaussian_sigma_analytic(D1, 0.3, 5e-6), rel=1.1e-9)
    assert s2 == pytest.approx(gaussian_sigma_analytic(D2, 0.7, 5e-6), rel=1.1e-9)
    assert s1 / D1 >= gaussian_sigma_analytic(1.0, 0.3, 5e-6)  # the round-up keeps sigma / Delta >= s
    assert s2 / D2 >= gaussian_sigma_analytic(1.0, 0.7, 5e-6)


# ------------------------------------------------------------------------------ claims
def test_claim_is_basic_composition_and_the_exact_gdp():
    c = W.wme_claim(1.0, 1e-5, split=0.4)
    assert isinstance(c, Claims) and c.primary == ApproxDP(1.0, 1e-5)
    mu1 = 1 / gaussian_sigma_analytic(1.0, 0.4, 5e-6)
    mu2 = 1 / gaussian_sigma_analytic(1.0, 0.6, 5e-6)
    assert c.gdp.mu == pytest.approx(math.hypot(mu1, mu2), rel=1e-14)
    assert c.gdp.mu >= math.hypot(mu1, mu2)
    # the mechanism's own stages are no less private than claimed: Delta_k / sigma_k <= mu_k
    D = users(np.linspace(-0.5, 0.5, 9))
    (D1, D2), (s1, s2) = W.wme_sensitivities(D, 1.0), W.wme_noise_scales(D, 1.0, 1e-5, 1.0, split=0.4)
    assert math.hypot(D1 / s1, D2 / s2) <= c.gdp.mu


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0, 30.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-5, 0.1])
@pytest.mark.parametrize("split", [0.1, 0.5, 0.9])
def test_the_gdp_claim_implies_the_eps_delta_claim(eps, delta, split):
    g = W.wme_claim(eps, delta, split=split).gdp
    assert g.delta_at(eps) <= delta
    assert g.as_eps_delta()[0] <= eps


@pytest.mark.parametrize("split", [0.25, 0.5])
def test_composed_gaussians_meet_the_claim_per_dp_accounting(split):
    # Second library: dp_accounting's pessimistic privacy-loss distribution of the two
    # Gaussian stages (sensitivity 1, noise s_k) has delta(eps) <= delta, and its eps at
    # delta agrees with the GDP claim's (the composition of Gaussians is exactly Gaussian).
    from dp_accounting.pld import privacy_loss_distribution as pld

    eps, delta = 1.0, 1e-5
    e1, d1, e2, d2 = W.wme_budgets(eps, delta, split)
    stages = [
        pld.from_gaussian_mechanism(gaussian_sigma_analytic(1.0, e, dl), value_discretization_interval=1e-4)
        for e, dl in ((e1, d1), (e2, d2))
    ]
    composed = stages[0].compose(stages[1])
    assert composed.get_delta_for_epsilon(eps) <= delta
    g = W.wme_claim(eps, delta, split=split).gdp
    assert composed.get_epsilon_for_delta(delta) == pytest.approx(g.epsilon_at(delta), rel=1e-3)


# ----------------------------------------------------------------- stage I: localisation
def _argmax_law(counts, sigma):
    """P(argmax_k (c_k + sigma g_k) = k) = int phi(x) prod_{l != k} Phi(x + (c_k - c_l)/sigma) dx."""
    c = np.asarray(counts, dtype=float)
    out = []
    for k in range(c.size):
        gaps = (c[k] - np.delete(c, k)) / sigma
        f = lambda x, g=gaps: stats.norm.pdf(x) * np.prod(stats.norm.cdf(x + g))  # noqa: E731
        out.append(integrate.quad(f, -12, 12, epsabs=1e-13, limit=200)[0])
    return np.array(out)


def test_localisation_follows_the_exact_law_of_the_noisy_argmax():
    # Counts (1, 30, 36, 0) on the tau = 1/2 grid; eps_1 = 1, delta_1 = 5e-6, so
    # sigma_1 = sqrt(2) gaussian_sigma_analytic(1, 1, 5e-6) ~ 5.5 and bins 1 and 2 compete.
    # Each bin's frequency over T releases is Binomial(T, p_k), p_k by quadrature: the
    # two-sided region with ALPHA / (2K) per side and bin has false-failure <= ALPHA.
    D = users([-0.8] + [-0.3] * 30 + [0.2] * 36)
    T_, R, tau = 100_000, 1.0, 0.5
    lo, hi = W.wme_localise(D, 1.0, 5e-6, R, np.random.default_rng(5), size=T_, beta=BETA_HALF)
    assert lo.shape == (T_, 1) and np.allclose(hi - lo, 3 * tau, rtol=TIGHT)
    k = chosen_bin(lo[:, 0], R, tau)
    np.testing.assert_allclose(lo[:, 0], -R + (k - 1) * tau, atol=TIGHT)  # lo = e_k - tau exactly
    sigma1 = math.sqrt(2) * gaussian_sigma_analytic(1.0, 1.0, 5e-6)
    p = _argmax_law([1, 30, 36, 0], sigma1)
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    freq = np.bincount(k, minlength=4)
    a = ALPHA / 8
    assert (freq >= stats.binom.ppf(a, T_, p)).all() and (freq <= stats.binom.isf(a, T_, p)).all(), (freq, p * T_)


def _coverage_bound(n, K, sigma1, beta):
    """Stated miss rate of one coordinate (module docstring; derived there):
    min over f of P(Bin(n, beta) > f) + (K - 1) Q(((n - f)/3 - f) / (sqrt(2) sigma_1))."""
    f = np.arange(0, n // 4 + 1)
    gap = (n - f) / 3.0 - f
    ok = gap > 0
    b = stats.binom.sf(f[ok], n, beta) + (K - 1) * stats.norm.sf(gap[ok] / (math.sqrt(2) * sigma1))
    return float(min(1.0, b.min()))


def test_interval_holds_the_true_mean_at_the_stated_rate_d1():
    # Items uniform on [a, b] (mean mu), n = 100 users of m = 20
    # items, beta = 0.05, eps = 2 (eps_1 = 1), fresh data each trial. tau = sqrt(2 ln 40 / 20)
    # = 0.607, K = 4. mu = e_1 - 0.02 tau sits just below an edge, so the local averages split
    # between two bins (an interval without the +-tau widening would miss mu often).
    # Misses over T trials are Binomial(T, p), p <= the stated bound p_b; failing when
    # misses > binom.isf(ALPHA, T, p_b) has false-failure <= ALPHA.
    n, m, R, beta, T_ = 100, 20, 1.0, 0.05, 1500
    tau = W.wme_radius(m, R, beta)
    mu = -R + tau - 0.02 * tau
    a, b = mu - 0.4, mu + 0.4
    e1, d1, _, _ = W.wme_budgets(2.0, 1e-5, 0.5)
    sigma1 = math.sqrt(2) * gaussian_sigma_analytic(1.0, e1, d1)
    p_b = _coverage_bound(n, math.ceil(2 * R / tau), sigma1, beta)
    assert p_b < 0.1  # the bound says something here
    rng = np.random.default_rng(2024)
    ids = np.repeat(np.arange(n), m)
    misses = 0
    for _ in range(T_):
        D = UserDataset.from_arrays(rng.uniform(a, b, n * m), ids)
        lo, hi = W.wme_localise(D, e1, d1, R, rng, beta=beta)
        misses += not (lo[0] <= mu <= hi[0])
    assert misses <= stats.binom.isf(ALPHA, T_, p_b), (misses, p_b)


def test_interval_holds_the_rotated_mean_at_the_stated_rate_d3():
    # d = 3 (d' = 4): per release, fresh signs; the rotated items' coordinates lie in [-R, R]
    # and are i.i.d. given the signs, so the per-coordinate bound holds for each of the 4
    # coordinates of U [mu; 0], and a miss in any is bounded by 4 p_b (union bound).
    # Items: mu + uniform in the cube [-0.25, 0.25]^3 (||x|| <= 0.3 + 0.44 < 1).
    n, m, R, beta, T_ = 250, 20, 1.0, 0.05, 600
    mu = np.array([0.3, -0.1, 0.05])
    e1, d1, _, _ = W.wme_budgets(2.0, 1e-5, 0.5)
    sigma1 = math.sqrt(8) * gaussian_sigma_analytic(1.0, e1, d1)
    tau = W.wme_radius(m, R, beta)
    p_b = min(1.0, 4 * _coverage_bound(n, math.ceil(2 * R / tau), sigma1, beta))
    assert p_b < 0.1
    rng = np.random.default_rng(7)
    ids = np.repeat(np.arange(n), m)
    misses = 0
    for _ in range(T_):
        D = UserDataset.from_arrays(mu + rng.uniform(-0.25, 0.25, (n * m, 3)), ids)
        s = W.random_signs(3, rng)
        lo, hi = W.wme_localise(D, e1, d1, R, rng, beta=beta, signs=s)
        z = W.rotate(mu, s)
        misses += not ((lo <= z) & (z <= hi)).all()
    assert misses <= stats.binom.isf(ALPHA, T_, p_b), (misses, p_b)


# --------------------------------------------------------------------------- the release
def test_release_is_unbiased_when_no_average_is_clipped_d1():
    # Every local average lies in bin 2 = [0, 0.5) of the tau = 1/2 grid; for a chosen bin
    # k in {1, 2, 3} the interval [e_k - tau, e_k + 2 tau] contains [0, 0.5], so the release
    # is mean(y) + N(0, sigma_2^2) exactly. A far bin (0) wins with probability
    # <= Q(100 / (sqrt(2) sigma_1)) < 1e-37 per release (sigma_1 ~ 5.5). Tests: the mean
    # within z_{1 - ALPHA/4} sigma_2 / sqrt(T) two-sided (false-failure ALPHA/2), the variance
    # in the chi-square region at ALPHA/4 per side (ALPHA/2): total <= ALPHA.
    D = users(np.linspace(0.05, 0.45, 100))
    T_ = 20_000
    out = W.wme_mechanism(D, 2.0, 1e-5, 1.0, np.random.default_rng(3), size=T_, beta=BETA_HALF)
    assert out.shape == (T_,)
    _, sigma2 = W.wme_noise_scales(D, 2.0, 1e-5, 1.0, beta=BETA_HALF)
    assert sigma2 == pytest.approx(3 * 0.5 / 100 * gaussian_sigma_analytic(1.0, 1.0, 5e-6), rel=1.1e-9)
    z = stats.norm.isf(ALPHA / 4)
    assert abs(out.mean() - 0.25) <= z * sigma2 / math.sqrt(T_)
    q = (T_ - 1) * out.var(ddof=1) / sigma2**2
    assert stats.chi2.ppf(ALPHA / 4, T_ - 1) <= q <= stats.chi2.isf(ALPHA / 4, T_ - 1)


def test_release_mean_is_the_mixture_of_clipped_means_d1():
    # Bins 1, 2, 3 compete (counts 30, 40, 25) and one user sits at -0.95 (bin 0). A release
    # is M_K + sigma_2 G with K the chosen bin (law p_k: the exact argmax law, quadrature),
    # M_k the clipped mean at interval k (np.clip by hand) and G ~ N(0, 1) independent. So the
    # mean of T releases is E = p . M up to (mean of T bounded M_K) + sigma_2 (mean of T G):
    # Hoeffding bounds the first by b = (max M - min M) sqrt(ln(4 / ALPHA) / (2T)) except with
    # probability ALPHA/2, the second is exactly N(0, sigma_2^2 / T), bounded by
    # a = z_{1 - ALPHA/4} sigma_2 / sqrt(T) except with probability ALPHA/2: false-failure <= ALPHA.
    y = np.r_[-0.95, np.full(30, -0.3), np.full(40, 0.2), np.full(25, 0.7)]
    D = users(y)
    R, tau, T_ = 1.0, 0.5, 40_000
    e1, d1, e2, d2 = W.wme_budgets(1.0, 1e-5, 0.5)
    sigma1 = math.sqrt(2) * gaussian_sigma_analytic(1.0, e1, d1)
    sigma2 = 3 * tau / y.size * gaussian_sigma_analytic(1.0, e2, d2)
    p = _argmax_law([1, 30, 40, 25], sigma1)
    lo, hi = _intervals(R, tau)
    M = np.array([np.clip(y, lo[k], hi[k]).mean() for k in range(4)])
    out = W.wme_mechanism(D, 1.0, 1e-5, R, np.random.default_rng(9), size=T_, beta=BETA_HALF)
    a = stats.norm.isf(ALPHA / 4) * sigma2 / math.sqrt(T_)
    b = np.ptp(M) * math.sqrt(math.log(4 / ALPHA) / (2 * T_))
    assert abs(out.mean() - p @ M) <= a + b, (out.mean(), p @ M, a + b)


def test_release_is_unbiased_and_isotropic_in_d3():
    # 200 identical users: z_i = U y for every i, so each coordinate's count is n in one bin,
    # every interval the argmax can choose within one bin of it contains z, and the release
    # is U^T (U y + N(0, sigma_2^2 I_4)) restricted to 3 coordinates = y + N(0, sigma_2^2 I_3).
    # A far bin wins with probability <= 4 * 3 * Q(200 / (sqrt 2 sigma_1)) < 1e-30 per release
    # (sigma_1 = sqrt(8) * 3.9). 6 tests (mean, variance per coordinate), ALPHA/12 per side each.
    y = np.array([0.3, -0.4, 0.1])
    D = users(np.tile(y, (200, 1)))
    T_ = 5_000
    out = W.wme_mechanism(D, 2.0, 1e-5, 1.0, np.random.default_rng(4), size=T_, beta=BETA_HALF)
    assert out.shape == (T_, 3)
    _, sigma2 = W.wme_noise_scales(D, 2.0, 1e-5, 1.0, beta=BETA_HALF)
    # Delta_2 = min(3 tau sqrt(d'), 2R) / n = min(3, 2) / 200
    assert sigma2 == pytest.approx(2.0 / 200 * gaussian_sigma_analytic(1.0, 1.0, 5e-6), rel=1.1e-9)
    a = ALPHA / 12
    assert (np.abs(out.mean(axis=0) - y) <= stats.norm.isf(a) * sigma2 / math.sqrt(T_)).all()
    q = (T_ - 1) * out.var(axis=0, ddof=1) / sigma2**2
    assert ((stats.chi2.ppf(a, T_ - 1) <= q) & (q <= stats.chi2.isf(a, T_ - 1))).all(), q


def _noise_free_release(Y, s, R, tau):
    """The release without stage-II noise at the modal bins, by explicit matrices: z = U [y; 0],
    counts by floor, argmax, clip, mean, U^T, first d coordinates."""
    n, d = Y.shape
    d_pad = s.size
    U = hadamard(d_pad) @ np.diag(s) / math.sqrt(d_pad)
    Z = np.pad(Y, ((0, 0), (0, d_pad - d))) @ U.T
    K = math.ceil(2 * R / tau)
    bins = np.clip(np.floor((Z + R) / tau).astype(int), 0, K - 1)
    k = np.array([np.bincount(bins[:, j], minlength=K).argmax() for j in range(d_pad)])
    lo = -R + (k - 1) * tau
    return (U.T @ np.clip(Z, lo, lo + 3 * tau).mean(axis=0))[:d]


def test_each_release_draws_its_own_rotation():
    # Data whose clipping bias depends on the rotation: 150 users at (0.7, 0.1, 0.2), 100 at
    # (-0.6, -0.5, 0.3); the 16 sign vectors give two noise-free releases (by s_1), about
    # (0.30, -0.02, 0.28) and (0.22, -0.10, 0.20). eps = 20: sigma_1 = 1.45, so the modal bin
    # (count gaps >= 50) wins with probability >= 1 - 3 Q(50 / (sqrt 2 * 1.45)) = 1 - O(1e-130);
    # sigma_2 = 0.0041. Checks, per release: it lies within sigma_2 sqrt(chi2_3.isf(1e-6)) of
    # one of the 16 noise-free releases (false-failure <= 64e-6: U^T N(0, sigma^2 I_4)
    # restricted to 3 coordinates is N(0, sigma^2 I_3)); and both values of s_1 occur among
    # the 64 releases of one call (all equal: 2^-63 under independent rotations). A call
    # that drew one rotation for all its releases fails the second check.
    Y = np.r_[np.tile([0.7, 0.1, 0.2], (150, 1)), np.tile([-0.6, -0.5, 0.3], (100, 1))]
    D = users(Y)
    free = np.array(
        [_noise_free_release(Y, np.array(s), 1.0, 0.5) for s in itertools.product([1.0, -1.0], repeat=4)]
    )  # (16, 3), s_1 = +1 first
    assert np.ptp(free[:8], axis=0).max() < 1e-12 and np.ptp(free[8:], axis=0).max() < 1e-12
    assert np.abs(free[0] - free[8]).min() > 0.05  # the premise: two classes, by s_1
    _, sigma2 = W.wme_noise_scales(D, 20.0, 1e-5, 1.0, beta=BETA_HALF)
    out = W.wme_mechanism(D, 20.0, 1e-5, 1.0, np.random.default_rng(100), size=64, beta=BETA_HALF)
    dist = np.linalg.norm(out[:, None, :] - free[None], axis=2)  # (64, 16)
    assert (dist.min(axis=1) <= sigma2 * math.sqrt(stats.chi2.isf(1e-6, 3))).all()
    first_sign_positive = dist.argmin(axis=1) < 8
    assert 0 < first_sign_positive.sum() < 64


def test_release_shapes_and_reproducibility():
    D1 = users(np.linspace(-0.5, 0.5, 10))
    Dcol = UserDataset.from_arrays(D1.values[:, None], D1.user_ids)
    D3 = users(np.tile([0.1, 0.2, -0.1], (10, 1)))
    g = lambda: np.random.default_rng(1)  # noqa: E731
    assert W.wme_mechanism(D1, 1.0, 1e-5, 1.0, g()).shape == ()
    assert W.wme_mechanism(D1, 1.0, 1e-5, 1.0, g(), size=4).shape == (4,)
    assert W.wme_mechanism(Dcol, 1.0, 1e-5, 1.0, g()).shape == (1,)
    assert W.wme_mechanism(D3, 1.0, 1e-5, 1.0, g()).shape == (3,)
    assert W.wme_mechanism(D3, 1.0, 1e-5, 1.0, g(), size=5).shape == (5, 3)
    np.testing.assert_array_equal(
        W.wme_mechanism(D3, 1.0, 1e-5, 1.0, g(), size=5), W.wme_mechanism(D3, 1.0, 1e-5, 1.0, g(), size=5)
    )
    # Independent releases: each draws its own rotation, so the releases differ pairwise.
    out = W.wme_mechanism(D3, 1.0, 1e-5, 1.0, g(), size=50)
    assert np.unique(out, axis=0).shape[0] == 50


# ---------------------------------------------------------------------------- bad input
def test_bad_input_named_in_the_brief():
    D = users([0.1, 0.2])
    with pytest.raises(ValueError, match=r"\bm\[1\]"):
        W.wme_radius(np.array([3, 0]), 1.0)  # a user with zero items
    with pytest.raises(ValueError, match=r"\bR\b"):
        W.wme_mechanism(D, 1.0, 1e-5, 0.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"\bR\b"):
        W.wme_mechanism(D, 1.0, 1e-5, -1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"\bepsilon\b"):
        W.wme_mechanism(D, 0.0, 1e-5, 1.0, np.random.default_rng(0))
    for dl in (0.0, 1.0, -0.5):
        with pytest.raises(ValueError, match=r"\bdelta\b"):
            W.wme_mechanism(D, 1.0, dl, 1.0, np.random.default_rng(0))
    for v in (0.0, 1.0):
        with pytest.raises(ValueError, match=r"\bbeta\b"):
            W.wme_mechanism(D, 1.0, 1e-5, 1.0, np.random.default_rng(0), beta=v)
        with pytest.raises(ValueError, match=r"\bsplit\b"):
            W.wme_mechanism(D, 1.0, 1e-5, 1.0, np.random.default_rng(0), split=v)
    with pytest.raises(ValueError, match=r"dataset.*\|x\| <= R = 0\.15"):
        W.wme_mechanism(D, 1.0, 1e-5, 0.15, np.random.default_rng(0))
    D3 = users(np.array([[0.6, 0.6, 0.6]]))  # norm 1.04 > 1
    with pytest.raises(ValueError, match=r"dataset.*\|\|x\|\|_2 <= R = 1\.0"):
        W.wme_mechanism(D3, 1.0, 1e-5, 1.0, np.random.default_rng(0))
    with pytest.raises(TypeError, match=r"\brng\b"):
        W.wme_mechanism(D, 1.0, 1e-5, 1.0, 0)
    with pytest.raises(TypeError, match=r"\bdataset\b"):
        W.wme_mechanism([0.1, 0.2], 1.0, 1e-5, 1.0, np.random.default_rng(0))


# ----------------------------------------------------------------------------- property suite
@pytest.mark.parametrize("prop", P.ALL_PROPERTIES, ids=lambda p: p.__name__)
def test_property_suite_passes_on_the_reference(prop):
    f = check_suite_property(P, prop, P.REFERENCE)
    assert f.verdict == "pass", f


@pytest.mark.parametrize("bug", BUGS, ids=lambda b: b.name)
def test_planted_bug_is_caught(bug):
    for name in bug.caught_by:
        f = check_suite_property(P, getattr(P, name), bug.adapter)
        assert f.verdict == "invariant violation", (bug.name, f)


def test_every_property_fails_on_some_planted_bug():
    assert {p.__name__ for p in P.ALL_PROPERTIES} <= {name for bug in BUGS for name in bug.caught_by}
