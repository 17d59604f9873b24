"""Krichene et al. 2023: the property suite on the reference, the planted bugs, closed forms,
the accounting against dp-accounting, and bad input. Oracles: hand-computed weights and
statistics, the paper's formulas written out, dp_accounting's RDP accountant (a second
library), and the suite's own oracles (``properties/krichene2023.py``)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from papers.krichene2023.planted import BUGS  # tests/ is on sys.path (rootdir conftest)
from userdp.properties import krichene2023 as P
from userdp.properties.adapter import check_property
from userdp.reference import krichene2023 as K
from userdp.reference import krichene2023_weights as W
from userdp.reference.data import UserDataset
from userdp.reference.mechanisms import DEFAULT_RDP_ORDERS

LARGER = P.mt_examples(max_tasks=6, max_users=8, dim=3)


def _run(prop, impl, strategy=None, n=None):
    """One property run as a validator runs it: the suite's strategy, hard examples and effort
    (the statistical property: exactly one fixed example, false failure <= 3 x STAT_LEVEL < 1e-4);
    ``strategy`` and ``n`` override them for the larger-graph runs."""
    strategy = P.STRATEGIES[prop] if strategy is None else strategy
    return check_property(
        prop, strategy, impl, max_examples=n or P.MAX_EXAMPLES.get(prop, 100), examples=P.EXAMPLES.get(prop, ())
    )


def test_statistical_property_runs_once_on_a_fixed_example():
    # Its stated false-failure probability holds for ONE example only.
    for prop in P.STATISTICAL_PROPERTIES:
        assert P.MAX_EXAMPLES[prop] == 1 and prop not in P.EXAMPLES
        assert repr(P.STRATEGIES[prop]).startswith("just("), P.STRATEGIES[prop]


@pytest.mark.parametrize("prop", P.ALL_PROPERTIES, ids=lambda p: p.__name__)
def test_reference_passes(prop):
    f = _run(prop, P.REFERENCE)
    assert f.verdict == "pass", f


@pytest.mark.parametrize(
    "prop",
    [
        P.prop_budget_holds,
        P.prop_sensitivity_every_user,
        P.prop_public_inputs_only,
        P.prop_gradient_sensitivity_every_user,
    ],
    ids=lambda p: p.__name__,
)
def test_reference_passes_on_larger_random_graphs(prop):
    f = _run(prop, P.REFERENCE, LARGER, n=40)
    assert f.verdict == "pass", f


@pytest.mark.parametrize("bug", [b for b in BUGS if b.adapter is not None], ids=lambda b: b.name)
def test_planted_bug_caught_by_property(bug):
    names = [n for n in bug.caught_by if n != "audit"]
    assert names
    for name in names:
        f = _run(getattr(P, name), bug.adapter)
        assert f.verdict == "invariant violation", (bug.name, name, f)


def test_every_planted_bug_is_caught_by_something():
    assert len(BUGS) >= 7
    for bug in BUGS:
        assert bug.caught_by and bug.source, bug.name
        audit_only = bug.caught_by == ("audit",)
        assert (bug.adapter is None) == audit_only, bug.name


def test_every_property_fails_on_some_planted_bug():
    caught = {name for bug in BUGS for name in bug.caught_by}
    props = P.ALL_PROPERTIES
    missing = {p.__name__ for p in props} - caught
    # Four properties have no planted bug in BUGS; each is shown to fail here on a wrong stage.
    assert missing == {
        "prop_declared_sensitivity_is_appendix_a1",
        "prop_closed_form_solves_problem_10",
        "prop_ratios_at_least_one",
        "prop_estimated_weights_underestimate",
    }
    half = dataclasses.replace(
        P.REFERENCE,
        name="bug: sensitivity without sqrt(beta)",
        sensitivity=lambda *, beta, Gamma_x, Gamma_star, **_: (Gamma_x**2, Gamma_x**2 * Gamma_star),
    )
    assert _run(P.prop_declared_sensitivity_is_appendix_a1, half).verdict == "invariant violation"
    mu_third = dataclasses.replace(
        P.REFERENCE,
        name="bug: n^-1/3",  # eq. (11) with the wrong exponent
        omega=lambda n_counts, *, n_users, beta_bar, mu: W.omega_mu(n_counts, n_users, beta_bar, mu * 4 / 3),
    )
    assert _run(P.prop_closed_form_solves_problem_10, mu_third).verdict == "invariant violation"
    r_sq = dataclasses.replace(
        P.REFERENCE,
        name="bug: R_0 squared",
        ratios=lambda n_counts: (W.improvement_ratios(n_counts)[0] ** 2, W.improvement_ratios(n_counts)[1]),
    )
    assert _run(P.prop_ratios_at_least_one, r_sq).verdict == "invariant violation"
    # the mu-family at mu = 1 in place of eq. (11): the normaliser falls as the counts grow (App. B fails)
    mu_one = dataclasses.replace(
        P.REFERENCE,
        name="bug: omega at mu = 1",
        omega=lambda n_counts, *, n_users, beta_bar, mu: W.omega_mu(n_counts, n_users, beta_bar, 1.0),
    )
    assert _run(P.prop_estimated_weights_underestimate, mu_one).verdict == "invariant violation"


# ------------------------------------------------------------------ closed forms
def _tiny():
    # tasks 0, 1; user 0 in both, user 1 in task 0. x, y chosen inside the bounds (Gamma_x = Gamma_* = 1).
    return UserDataset(
        np.array([[0.6, 0.0], [0.0, 0.5], [0.3, 0.4]]),
        np.array([0, 0, 1]),
        labels=np.array([0.5, -0.2, 0.4]),
        task_ids=np.array([0, 1, 0]),
    )


def test_weights_closed_form():
    # n = (2, 1), n_users = 2, beta_bar = beta = 1, mu = 1/2: sum n^0 = 2, scale sqrt(2 * 1 / 2) = 1,
    # omega = (2^-1/2, 1). User 0: B = 1/2 + 1 = 3/2 > 1: factor sqrt(2/3); user 1: 1/2 <= 1: factor 1.
    D = _tiny()
    om = W.omega_mu([2.0, 1.0], 2, 1.0, 0.5)
    np.testing.assert_allclose(om, [2**-0.5, 1.0], rtol=1e-15)
    w = W.clip_weights(D, om, 1.0, 2)
    np.testing.assert_allclose(w, [2**-0.5 * (2 / 3) ** 0.5, (2 / 3) ** 0.5, 2**-0.5], rtol=1e-15)
    np.testing.assert_allclose(W.user_budgets(D, w, 2), [1.0, 0.5], rtol=1e-15)
    # per-user normalisation (Appendix C): every user at beta = 1
    np.testing.assert_allclose(W.user_budgets(D, W.per_user_weights(D, om, 1.0, 2), 2), [1.0, 1.0], rtol=1e-15)
    # eq. (11) gamma = 0 is mu = 1/4: omega = n^-1/4 / sqrt((sqrt 2 + 1) / 2)
    np.testing.assert_allclose(
        W.omega_star([2.0, 1.0], 2, 1.0, 0), np.array([2**-0.25, 1.0]) / math.sqrt((math.sqrt(2) + 1) / 2), rtol=1e-15
    )


def test_ssp_statistic_by_hand():
    D = _tiny()
    w = np.array([0.5, 2.0, 1.0])
    A, b = K.statistic(D, w, m=2, Gamma_x=1.0, Gamma_star=1.0)
    np.testing.assert_allclose(A[0], 0.5 * np.outer([0.6, 0], [0.6, 0]) + np.outer([0.3, 0.4], [0.3, 0.4]), atol=1e-16)
    np.testing.assert_allclose(A[1], 2.0 * np.outer([0, 0.5], [0, 0.5]), atol=1e-16)
    np.testing.assert_allclose(b, [[0.5 * 0.5 * 0.6 + 0.4 * 0.3, 0.4 * 0.4], [0.0, 2 * -0.2 * 0.5]], atol=1e-16)
    # line 2 clips: x = (3, 4) -> (0.6, 0.8) at Gamma_x = 1; y = 5 -> Gamma_x Gamma_* = 2
    D2 = UserDataset(np.array([[3.0, 4.0]]), np.array([0]), labels=np.array([5.0]), task_ids=np.array([0]))
    A2, b2 = K.statistic(D2, np.array([1.0]), m=1, Gamma_x=1.0, Gamma_star=2.0)
    np.testing.assert_allclose(A2[0], np.outer([0.6, 0.8], [0.6, 0.8]), rtol=1e-15)
    np.testing.assert_allclose(b2[0], [1.2, 1.6], rtol=1e-15)


def test_symmetric_noise_sensitivity_constant():
    # The upper-triangle sensitivity of x x^T is sqrt((||x||^4 + sum x_k^4) / 2) <= ||x||^2 = ||x x^T||_F,
    # with equality iff x lies on an axis (module docstring of krichene2023).
    for x, tight in (([1.0, 0.0, 0.0], True), ([0.6, 0.8, 0.0], False), ([3**-0.5] * 3, False)):
        M = np.outer(x, x)
        tri = np.linalg.norm(M[np.triu_indices(3)])
        assert tri == pytest.approx(math.sqrt((1.0 + np.sum(np.asarray(x) ** 4)) / 2), rel=1e-14)
        assert (abs(tri - 1.0) < 1e-14) == tight and tri <= 1.0 + 1e-15


def test_solve_matches_regularised_normal_equations():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(5, 3, 3))
    A = A @ np.swapaxes(A, -1, -2)  # PSD
    b = rng.normal(size=(5, 3))
    th = K.solve(A, b, 0.7)
    want = np.stack([np.linalg.lstsq(A[i] + 0.7 * np.eye(3), b[i], rcond=None)[0] for i in range(5)])
    np.testing.assert_allclose(th, want, rtol=1e-10, atol=1e-12)
    # §2.1: A^dagger is the pseudo-inverse of the PSD projection: a negative eigenvalue is dropped
    M = np.diag([2.0, -1.0])[None]
    np.testing.assert_allclose(K.solve(M, np.array([[1.0, 1.0]]), 0.0), [[0.5, 0.0]], atol=1e-15)
    # with lambda = 0.5 the projection comes first: diag(max(2, 0), max(-1, 0)) + 0.5 I = diag(2.5, 0.5),
    # so theta = (0.4, 2.0); projecting A + lambda I instead would give diag(2.5, 0) and (0.4, 0).
    np.testing.assert_allclose(K.solve(M, np.array([[1.0, 1.0]]), 0.5), [[0.4, 2.0]], rtol=1e-14)


def test_gd_schedule_theorem_3_12():
    n, om = np.array([4.0, 1.0]), np.array([0.5, 1.0])
    # (a): T = (2/d) sum n^2 / sum omega^-2 = (2/2) 17 / 5 = 3.4 -> 4; eta_i^(t) = 2R / (Gamma sqrt(om^2 n^2 + T
    # d/2) sqrt t)
    T, eta = K.theorem312_schedule(n, om, 2, case="a", Gamma=1.0, radius=1.0)
    assert T == 4
    np.testing.assert_allclose(eta[0], [2 / math.sqrt(4 + 4), 2 / math.sqrt(1 + 4)], rtol=1e-15)
    np.testing.assert_allclose(eta[3], eta[0] / 2, rtol=1e-15)
    # (b): T = (2/d) sum n / sum 1/(om^2 n) = 5 / (1 + 1) = 2.5 -> 3; eta = 1 / (om n lambda t)
    T, eta = K.theorem312_schedule(n, om, 2, case="b", Gamma=1.0, Lambda=2.0)
    assert T == 3
    np.testing.assert_allclose(eta[1], [1 / (0.5 * 4 * 2 * 2), 1 / (1 * 1 * 2 * 2)], rtol=1e-15)


def test_gd_noise_free_step_by_hand():
    # one record, x = (1, 0), y = 2, theta = 0, lambda = 0: grad = (0 - 2) x = (-2, 0), clipped to Gamma = 1.
    D = UserDataset(np.array([[1.0, 0.0]]), np.array([0]), labels=np.array([2.0]), task_ids=np.array([0]))
    g = K.weighted_gradient(D, np.array([0.5]), np.zeros((1, 2)), m=1, Gamma=1.0, Lambda=0.0)
    np.testing.assert_allclose(g, [[-0.5, 0.0]], rtol=1e-15)


def test_gd_mechanism_noise_scale():
    # With w = 0 the gradient is 0: theta^(1) = -eta * Gamma sqrt(T/2) xi (T = 1, no projection at radius 1e6).
    # Var = eta^2 Gamma^2 / 2 = 0.5; the sample variance of 20,000 draws has sd sqrt(2/19999) 0.5 = 0.005:
    # |s^2 - 0.5| < 0.03 fails with probability < 1e-8 (6 sd).
    D = UserDataset(np.array([[1.0]]), np.array([0]), labels=np.array([1.0]), task_ids=np.array([0]))
    th = K.gd_mechanism(
        D,
        np.array([0.0]),
        np.random.default_rng(3),
        20_000,
        m=1,
        Gamma=1.0,
        Lambda=0.0,
        eta=np.ones((1, 1)),
        radius=1e6,
    )
    assert abs(th.var() - 0.5) < 0.03


# ------------------------------------------------------------------ accounting
def test_rdp_against_dp_accounting():
    dp_accounting = pytest.importorskip("dp_accounting", reason="the independent oracle of the [test] extra")
    from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

    orders = list(DEFAULT_RDP_ORDERS)
    for beta, runs, k, sigma in ((0.5, 1, None, None), (0.03, 5, 3, 20.0), (2.0, 2, 1, 4.0)):
        acc = rdp_acc.RdpAccountant(orders)
        # each run = a Gaussian with noise multiplier z, alpha / (2 z^2) = alpha beta: z = 1/sqrt(2 beta)
        acc.compose(dp_accounting.GaussianDpEvent(1 / math.sqrt(2 * beta)), runs)
        kw = {}
        if k is not None:
            acc.compose(dp_accounting.GaussianDpEvent(sigma / math.sqrt(k)))
            kw = dict(count_k=k, count_sigma=sigma)
        want = acc.get_epsilon(1e-5)
        got = W.epsilon(beta, 1e-5, runs=runs, **kw)
        assert got == pytest.approx(want, rel=1e-9)


def test_beta_for_epsilon_is_the_inverse_to_1e_6():
    for eps, kw in ((1.0, {}), (0.5, dict(runs=4)), (5.0, dict(count_k=5, count_sigma=30.0, runs=3))):
        b = W.beta_for_epsilon(eps, 1e-5, **kw)
        assert W.epsilon(b, 1e-5, **kw) <= eps
        assert W.epsilon(b * (1 + 2e-6), 1e-5, **kw) > eps * (1 - 1e-12)  # within relative 1e-6 (+ margin)
    # Theorem 3.3's translation: beta <= eps^2 / (8 log(1/delta)) suffices for (eps, delta)-DP
    for eps in (0.5, 1.0, 3.0):
        assert W.beta_for_epsilon(eps, 1e-5) >= eps**2 / (8 * math.log(1e5))


def test_claim_mu_is_sqrt_2_beta():
    c = W.claim(0.5, 1e-5)
    assert c.gdp.mu == pytest.approx(1.0, rel=1e-15)
    assert W.gdp_mu(0.5, count_k=4, count_sigma=2.0) == pytest.approx(math.sqrt(1 + 1), rel=1e-15)
    # the GDP claim implies an eps no larger than the RDP conversion (GDP is the exact curve)
    assert c.gdp.epsilon_at(1e-5) <= c.primary.epsilon


def test_ratios_closed_form_and_growth():
    assert W.improvement_ratios([1.0, 4.0]) == pytest.approx((math.sqrt(10) / 3, 1.25 * 5 / 4), rel=1e-15)
    # §4: n_1 = m^(1+nu), the rest constant: R_0 ~ m^(nu/2), R_1 ~ m^nu as m grows (nu = 1)
    r = [W.improvement_ratios([m**2] + [1] * (m - 1)) for m in (100, 1000)]
    assert r[1][1] / r[0][1] == pytest.approx(10, rel=0.02) and r[1][0] / r[0][0] == pytest.approx(10**0.5, rel=0.05)


def test_mu_above_half_breaks_underestimation():
    # Appendix B's monotonicity fails for mu > 1/2 (module docstring): n = (1, 100), s = 10, exact
    # counts; omega(n + s) exceeds omega(n) on the big task at mu = 1.
    n = np.array([1.0, 100.0])
    assert np.any(W.omega_mu(n + 10, 1000, 1.0, 1.0) > W.omega_mu(n, 1000, 1.0, 1.0))
    assert np.all(W.omega_mu(n + 10, 1000, 1.0, 0.5) <= W.omega_mu(n, 1000, 1.0, 0.5))


def test_private_counts_noise_and_cap():
    # user 0 has 3 tasks, k = 2: it contributes to exactly 2 of them; sigma tiny -> counts exact.
    D = UserDataset(np.zeros((4, 1)), np.array([0, 0, 0, 1]), labels=np.zeros(4), task_ids=np.array([0, 1, 2, 0]))
    c = W.private_counts(D, np.random.default_rng(0), m=3, k=2, sigma=1e-9)
    assert round(c.sum()) == 3 and np.all(np.round(c) <= [2, 1, 1])
    np.testing.assert_allclose(W.count_rdp([2.0], 2, 1.0), [2.0], rtol=1e-15)  # alpha k / (2 sigma^2)
    assert W.accuracy_margin(1.0, 1, 0.05) == pytest.approx(1.959964, rel=1e-6)  # Phi^-1(0.975)


def test_sampling_baselines():
    D = UserDataset(np.zeros((5, 1)), np.array([0, 0, 0, 1, 1]), labels=np.zeros(5), task_ids=np.array([0, 1, 2, 1, 2]))
    w = W.tail_sample_weights(D, np.array([5.0, 1.0, 3.0]), m=3, k=2, beta=2.0)
    np.testing.assert_allclose(w, [0, 1, 1, 1, 1])  # user 0 drops task 0 (largest count)
    u = W.uniform_sample_weights(D, np.random.default_rng(1), m=3, k=1, beta=2.0)
    assert np.bincount(D.user_index, weights=u > 0).tolist() == [1, 1] and set(u) <= {0.0, math.sqrt(2)}


# ------------------------------------------------------------------ bad input
def test_bad_input_names_the_argument():
    D, rng = _tiny(), np.random.default_rng(0)
    w = np.array([0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="Gamma_x"):
        K.ssp_mechanism(D, w, rng, m=2, Gamma_x=0.0, Gamma_star=1.0, Lambda=1.0)
    with pytest.raises(ValueError, match="Lambda"):
        K.ssp_mechanism(D, w, rng, m=2, Gamma_x=1.0, Gamma_star=1.0, Lambda=-1.0)
    with pytest.raises(ValueError, match="beta"):
        W.adaptive_weights(D, m=2, beta=0.0, mu=0.5, n_counts=[2, 1], n_users=2)
    with pytest.raises(ValueError, match="mu"):
        W.adaptive_weights(D, m=2, beta=1.0, mu=-0.5, n_counts=[2, 1], n_users=2)
    with pytest.raises(ValueError, match="n_counts"):
        W.adaptive_weights(D, m=2, beta=1.0, mu=0.5, n_counts=[2, 0], n_users=2)  # a task with no users
    with pytest.raises(ValueError, match="alpha"):
        W.rdp([1.0, 2.0], 1.0)
    with pytest.raises(ValueError, match="delta"):
        W.epsilon(1.0, 1.5)
    with pytest.raises(ValueError, match="task_ids"):
        K.statistic(D.with_fields(task_ids=None), w, m=2, Gamma_x=1.0, Gamma_star=1.0)
    with pytest.raises(ValueError, match="task_ids"):
        K.statistic(D, w, m=1, Gamma_x=1.0, Gamma_star=1.0)  # task 1 >= m


def test_far_gradient_clip_matches_the_direct_one():
    # _clipped_far_gradients (the path of records whose gradient overflows) against the direct
    # formula clip((theta.x - y) x + lambda theta, Gamma) on records where the direct one is finite:
    # a clipped one (oracle by hand: resid = 1.5e100 - 1e100 - 1e100 = -5e99, g = resid x, so
    # g / ||g|| = (-0.6, 0.8)) and one inside the ball (no clipping, factor 4^p)
    th = np.array([[0.5, 0.25], [0.5, 0.25]])
    x = np.array([[3e100, -4e100], [1e-3, 0.0]])
    y = np.array([1e100, 0.0])
    got = K._clipped_far_gradients(th, x, y, 0.1, 1.0)
    assert np.allclose(got[0], [-0.6, 0.8], rtol=1e-12, atol=0)
    direct = (th[1] @ x[1] - y[1]) * x[1] + 0.1 * th[1]  # norm ~0.056 < Gamma = 1: unclipped
    assert np.allclose(got[1], direct, rtol=1e-12, atol=0)
    # and a record at the float maximum: finite, of norm Gamma, no warning
    with np.errstate(all="raise"):
        far = K._clipped_far_gradients(th[:1], np.array([[1.7e308, -1.7e308]]), np.array([1.7e308]), 0.0, 2.0)
    assert np.isfinite(far).all() and abs(np.linalg.norm(far) - 2.0) <= 1e-12
