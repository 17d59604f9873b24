"""Tests of the Gaussian-DP claim (reference/claims.py: ``GaussianDP``, ``Claims``) and of the
mu that the reference's Gaussian mechanisms declare (``mechanisms.gaussian_gdp_mu``,
``epasto2020_erm.gdp_mu``).

Oracles, never the code under test: closed forms (scipy.stats.norm), dp_accounting's exact
Gaussian hockey-stick divergence (``GaussianPrivacyLoss.get_delta_for_epsilon``) and its PLD
composition, which brackets the exact delta between an optimistic and a pessimistic
discretisation. dp_accounting is a test-only dependency, imported here only.

Every check below is also run on a planted wrong formula (``*_BUGS``) and must reject it.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import optimize
from scipy.stats import norm

from dp_accounting.pld import privacy_loss_distribution as pld
from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss

from userdp.reference import epasto2020_erm as E
from userdp.reference import erm
from userdp.reference.claims import DEFAULT_GDP_DELTA, ApproxDP, Claims, GaussianDP, PureDP, RenyiDP
from userdp.reference.data import UserDataset
from userdp.reference.mechanisms import gaussian_gdp_mu

MUS = (0.05, 0.3, 1.0, 2.0, 5.0, 20.0)
EPSILONS = (0.0, 0.1, 0.5, 1.0, 3.0, 10.0, 40.0)


# ------------------------------------------------------------------------------ profile
def _naive_delta(mu, eps):
    """DRS22 Cor. 2.13 written as in the paper, with scipy's normal CDF (accurate while
    the two terms do not cancel, i.e. delta not tiny)."""
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def _profile_rel_error(delta_fn) -> float:
    """Largest relative gap between delta_fn(mu, eps) and dp_accounting's exact hockey-stick
    divergence of N(0, 1/mu^2) vs N(1, 1/mu^2) (= mu-GDP's profile, DRS22 Cor. 2.13), over
    the grid where the oracle keeps its digits (delta > 1e-250)."""
    worst = 0.0
    for mu in MUS:
        oracle = GaussianPrivacyLoss(1.0 / mu, sensitivity=1.0)
        for eps in EPSILONS:
            ref = oracle.get_delta_for_epsilon(eps)
            if ref > 1e-250:
                worst = max(worst, abs(delta_fn(mu, eps) - ref) / ref)
    return worst


PROFILE_TOL = 1e-9  # measured agreement ~1e-12 (both are double-precision closed forms)
PROFILE_BUGS = {
    # sigma and mu confused: the profile of N(0, mu^2), i.e. of (1/mu)-GDP
    "sigma-for-mu": lambda mu, eps: GaussianDP(1.0 / mu).delta_at(eps),
    # e^{-eps} for e^{eps} (a sign slip in the hockey stick)
    "exp-sign": lambda mu, eps: max(0.0, norm.cdf(-eps / mu + mu / 2) - math.exp(-eps) * norm.cdf(-eps / mu - mu / 2)),
    # Phi(-eps/mu + mu/2) alone: the first term, an upper bound, not the profile
    "first-term-only": lambda mu, eps: norm.cdf(-eps / mu + mu / 2),
}


def test_delta_at_closed_form_at_zero():
    # mu = 1, eps = 0: delta = Phi(1/2) - Phi(-1/2) = 2 Phi(1/2) - 1 (total variation of the shift)
    assert GaussianDP(1.0).delta_at(0.0) == pytest.approx(2 * norm.cdf(0.5) - 1, rel=1e-14, abs=0)
    assert GaussianDP(3.0).delta_at(0.0) == pytest.approx(2 * norm.cdf(1.5) - 1, rel=1e-14, abs=0)


@pytest.mark.parametrize("mu", (0.2, 1.0, 3.0))
@pytest.mark.parametrize("eps", (0.0, 0.3, 1.0, 2.5))
def test_delta_at_matches_paper_formula(mu, eps):
    assert GaussianDP(mu).delta_at(eps) == pytest.approx(_naive_delta(mu, eps), rel=1e-11, abs=0)


def test_delta_at_matches_dp_accounting():
    assert _profile_rel_error(lambda mu, eps: GaussianDP(mu).delta_at(eps)) <= PROFILE_TOL


@pytest.mark.parametrize("bug", sorted(PROFILE_BUGS))
def test_profile_check_rejects_planted_formula(bug):
    assert _profile_rel_error(PROFILE_BUGS[bug]) > PROFILE_TOL


def _small_mu_ok(delta_fn) -> bool:
    """For eps = s mu, delta = mu (phi(s) - s Phi(-s)) + O(mu^2) (expand Cor. 2.13 to first
    order in mu: Phi(a) - Phi(a - mu) = mu phi(s) + O(mu^2), expm1(eps) Phi(b) = s mu Phi(-s)
    + O(mu^2)); at mu = 1e-40 the O(mu^2) term is 40 digits below, so rel 1e-12 is rounding
    (eps = s mu stays in the supported range [1e-50, ...])."""
    mu = 1e-40
    return all(
        delta_fn(mu, s * mu) == pytest.approx(mu * (norm.pdf(s) - s * norm.sf(s)), rel=1e-12, abs=0)
        for s in (0.0, 0.5, 1.0, 3.0, 8.0)
    )


def test_delta_at_small_mu_first_order():
    assert _small_mu_ok(lambda mu, eps: GaussianDP(mu).delta_at(eps))


def test_small_mu_check_rejects_the_cancelling_formula():
    # planted: the paper's formula evaluated as written cancels to 0 (or noise) at mu = 1e-40
    assert not _small_mu_ok(_naive_delta)


def test_delta_at_extreme_parameters_stay_in_range():
    # no overflow of e^eps, no cancellation to a negative delta, for the whole supported range
    for mu in (1e-50, 1e-8, 1e8, 1e50):
        for eps in (0.0, 1.0, 1e10, 1e300):
            d = GaussianDP(mu).delta_at(eps)
            assert 0.0 <= d <= 1.0
    # tiny mu: delta(0) = erf(mu / (2 sqrt 2)) ~ mu / sqrt(2 pi) (first Taylor term, exact to O(mu^3))
    assert GaussianDP(1e-8).delta_at(0.0) == pytest.approx(1e-8 / math.sqrt(2 * math.pi), rel=1e-12, abs=0)


# ----------------------------------------------------------------------- trade-off curve
@pytest.mark.parametrize("mu", (0.3, 1.0, 4.0))
def test_trade_off_is_the_gaussian_test(mu):
    # Neyman-Pearson for N(0, 1) vs N(mu, 1): reject iff x > t, alpha = 1 - Phi(t),
    # beta = Phi(t - mu) [DRS22, Def. 2.6 / Thm 2.7]
    g = GaussianDP(mu)
    for t in (-2.0, 0.0, mu / 2, 1.5, 6.0):
        assert g.trade_off(norm.sf(t)) == pytest.approx(norm.cdf(t - mu), rel=1e-12, abs=0)
    assert g.trade_off(0.0) == 1.0 and g.trade_off(1.0) == 0.0
    # symmetric point alpha = beta = Phi(-mu/2)
    assert g.trade_off(norm.cdf(-mu / 2)) == pytest.approx(norm.cdf(-mu / 2), rel=1e-12, abs=0)


def test_trade_off_check_rejects_planted_formula():
    # planted: Phi(Phi^-1(alpha) - mu) (1 - alpha read as alpha); the Neyman-Pearson check fails
    bug = lambda mu, a: norm.cdf(norm.ppf(a) - mu)  # noqa: E731
    assert abs(bug(1.0, norm.sf(1.0)) - norm.cdf(1.0 - 1.0)) > 1e-3


# ------------------------------------------------------------------ (eps, delta) conversion
def _exact_epsilon(mu, delta):
    """eps with dp_accounting's exact delta(eps) = delta (scipy's brentq on the oracle)."""
    f = lambda e: GaussianPrivacyLoss(1.0 / mu, 1.0).get_delta_for_epsilon(e) - delta  # noqa: E731
    if f(0.0) <= 0:
        return 0.0
    return optimize.brentq(f, 0.0, 10.0 * mu * mu + 50.0 * mu + 10.0, xtol=1e-14, rtol=1e-14)


def _conversion_ok(eps_fn, mu, delta) -> bool:
    """eps_fn(mu, delta) is the exact conversion, rounded up: within 1e-9 above the oracle's root."""
    e, ref = eps_fn(mu, delta), _exact_epsilon(mu, delta)
    return ref - 1e-12 <= e <= ref * (1 + 1e-9) + 1e-12


CONVERSION_CASES = [(mu, d) for mu in (0.1, 0.5, 1.0, 3.0, 10.0) for d in (1e-10, 1e-5, 1e-2)]
CONVERSION_BUGS = {
    # the classical Gaussian calibration read backwards: sound, but not the exact conversion
    "classical-bound": lambda mu, d: mu * math.sqrt(2 * math.log(1.25 / d)),
    # rounding down by 1e-6: the returned eps no longer guarantees delta
    "rounded-down": lambda mu, d: GaussianDP(mu).epsilon_at(d) * (1 - 1e-6),
    # the RDP-style conversion mu^2/2 + mu sqrt(2 ln(1/delta)) (zCDP with rho = mu^2/2): loose
    "zcdp-route": lambda mu, d: mu * mu / 2 + mu * math.sqrt(2 * math.log(1 / d)),
}


@pytest.mark.parametrize("mu, delta", CONVERSION_CASES)
def test_epsilon_at_is_the_exact_conversion(mu, delta):
    g = GaussianDP(mu, delta)
    assert _conversion_ok(lambda m, d: GaussianDP(m).epsilon_at(d), mu, delta)
    eps = g.epsilon_at(delta)
    assert g.delta_at(eps) <= delta  # the guarantee holds at the returned eps
    assert g.as_eps_delta() == (eps, delta)  # as_eps_delta is the conversion at the claim's delta


@pytest.mark.parametrize("bug", sorted(CONVERSION_BUGS))
def test_conversion_check_rejects_planted_formula(bug):
    assert not all(_conversion_ok(CONVERSION_BUGS[bug], mu, d) for mu, d in CONVERSION_CASES)


def test_epsilon_at_zero_when_delta_exceeds_total_variation():
    # delta(0) = 2 Phi(mu/2) - 1 (closed form): at or below delta, eps = 0
    mu = 0.1
    tv = 2 * norm.cdf(mu / 2) - 1  # 0.0399
    assert GaussianDP(mu).epsilon_at(tv * 1.001) == 0.0
    assert GaussianDP(mu).epsilon_at(tv * 0.999) > 0.0


def test_default_delta_is_documented_value():
    assert DEFAULT_GDP_DELTA == 1e-5 and GaussianDP(1.0).delta == 1e-5
    # mu = 1 at delta = 1e-5: eps = 4.3772 (the oracle's root; reported in the docs as the implied eps)
    assert GaussianDP(1.0).as_eps_delta()[0] == pytest.approx(_exact_epsilon(1.0, 1e-5), rel=1e-9, abs=0)


# -------------------------------------------------------------------------- composition
@functools.lru_cache(maxsize=None)
def _composed_pld(mus: tuple, pessimistic: bool):
    """dp_accounting's PLD of the Gaussian mechanisms with sigma_i = 1/mu_i (sensitivity 1)
    composed; pessimistic upper- and optimistic lower-bounds the exact delta(eps)."""
    d = None
    for mu in mus:
        p = pld.from_gaussian_mechanism(
            1.0 / mu,
            sensitivity=1.0,
            pessimistic_estimate=pessimistic,
            use_connect_dots=pessimistic,
            value_discretization_interval=1e-4,
        )
        d = p if d is None else d.compose(p)
    return d


def _composition_ok(compose_fn, mus) -> bool:
    g = compose_fn(mus)
    lo, hi = _composed_pld(tuple(mus), False), _composed_pld(tuple(mus), True)
    return all(
        lo.get_delta_for_epsilon(e) <= g.delta_at(e) <= hi.get_delta_for_epsilon(e) for e in (0.25, 1.0, 2.0, 4.0)
    )


COMPOSE_MUS = (0.3, 0.4, 1.2)  # sqrt(0.09 + 0.16 + 1.44) = 1.3
COMPOSITION_BUGS = {
    "sum-of-mu": lambda mus: GaussianDP(sum(mus)),  # basic composition
    "sqrt-of-sum": lambda mus: GaussianDP(math.sqrt(sum(mus))),  # squares forgotten
    "max-of-mu": lambda mus: GaussianDP(max(mus)),  # parallel, not sequential
}


def test_compose_closed_form_and_dp_accounting():
    g = GaussianDP(0.3).compose(GaussianDP(0.4), GaussianDP(1.2))
    assert g.mu == pytest.approx(1.3, rel=1e-15, abs=0)
    assert GaussianDP(0.3, delta=1e-7).compose(GaussianDP(0.4)).delta == 1e-7  # keeps its delta
    assert _composition_ok(lambda mus: GaussianDP(mus[0]).compose(*map(GaussianDP, mus[1:])), COMPOSE_MUS)
    # T equal steps: sqrt(T) mu
    assert GaussianDP(0.5).compose(*[GaussianDP(0.5)] * 15).mu == pytest.approx(2.0, rel=1e-15, abs=0)


@pytest.mark.parametrize("bug", sorted(COMPOSITION_BUGS))
def test_composition_check_rejects_planted_rule(bug):
    assert not _composition_ok(COMPOSITION_BUGS[bug], COMPOSE_MUS)


# ------------------------------------------------------------------------------- Claims
def test_claims_carries_both_and_reports_the_primary():
    c = Claims(ApproxDP(1.0, 1e-5), GaussianDP(0.268))
    assert c.as_eps_delta() == (1.0, 1e-5)
    assert c.kind == "claims"
    assert c.params() == {
        "primary": {"kind": "approx", "params": ApproxDP(1.0, 1e-5).params()},
        "gdp": {"kind": "gdp", "params": {"mu": 0.268, "delta": 1e-5}},
    }
    assert Claims(RenyiDP(2.0, 0.5, 1e-5), GaussianDP(1.0)).as_eps_delta() == RenyiDP(2.0, 0.5, 1e-5).as_eps_delta()


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("mu", (0.0, -1.0, math.nan, math.inf, -math.inf, 1e-60, 1e60))
def test_bad_mu_is_refused(mu):
    with pytest.raises(ValueError, match="mu"):
        GaussianDP(mu)


@pytest.mark.parametrize("mu", ("1", None, True, [1.0]))
def test_mu_of_wrong_type_is_refused(mu):
    with pytest.raises(TypeError, match="mu"):
        GaussianDP(mu)


def test_other_bad_input_is_refused():
    with pytest.raises(ValueError, match="delta"):
        GaussianDP(1.0, delta=0.0)
    with pytest.raises(ValueError, match="delta"):
        GaussianDP(1.0, delta=1.0)
    with pytest.raises(ValueError, match="alpha"):
        GaussianDP(1.0).trade_off(1.5)
    with pytest.raises(ValueError, match="epsilon"):
        GaussianDP(1.0).delta_at(-0.1)
    with pytest.raises(ValueError, match="delta"):
        GaussianDP(1.0).epsilon_at(0.0)
    with pytest.raises(TypeError, match=r"others\[0\]"):
        GaussianDP(1.0).compose(ApproxDP(1.0, 1e-5))
    with pytest.raises(TypeError, match="primary"):
        Claims(GaussianDP(1.0), GaussianDP(1.0))
    with pytest.raises(TypeError, match="gdp"):
        Claims(PureDP(1.0), ApproxDP(1.0, 1e-5))
    with pytest.raises(ValueError, match="sigma"):
        gaussian_gdp_mu(1.0, 0.0)
    with pytest.raises(ValueError, match="sensitivity"):
        gaussian_gdp_mu(-1.0, 1.0)


# ------------------------------------------------------- declared mu of the reference's noise
def _declared_mu_is_exact(mu_fn, sensitivity, sigma) -> bool:
    """The declared mu's profile equals the exact hockey stick of N(0, sigma^2) vs
    N(sensitivity, sigma^2) (dp_accounting), i.e. the declared mu is the mechanism's exact mu."""
    g, oracle = GaussianDP(mu_fn(sensitivity, sigma)), GaussianPrivacyLoss(sigma, sensitivity=sensitivity)
    return all(
        abs(g.delta_at(e) - oracle.get_delta_for_epsilon(e)) <= 1e-9 * oracle.get_delta_for_epsilon(e)
        for e in (0.0, 0.5, 1.0, 2.0)
    )


GAUSSIAN_MU_BUGS = {
    "inverted": lambda s, sigma: sigma / s,
    "variance": lambda s, sigma: s / sigma**2,
    "two-sided-sensitivity": lambda s, sigma: 2 * s / sigma,
}


@pytest.mark.parametrize("sensitivity, sigma", [(1.0, 1.0), (2.0, 4.0), (0.5, 3.7)])
def test_gaussian_gdp_mu_is_exact(sensitivity, sigma):
    assert gaussian_gdp_mu(sensitivity, sigma) == sensitivity / sigma
    assert _declared_mu_is_exact(gaussian_gdp_mu, sensitivity, sigma)


@pytest.mark.parametrize("bug", sorted(GAUSSIAN_MU_BUGS))
def test_declared_mu_check_rejects_planted_formula(bug):
    assert not _declared_mu_is_exact(GAUSSIAN_MU_BUGS[bug], 2.0, 4.0)


def _erm_data(seed=0, n=30, d=2):
    rng = np.random.default_rng(seed)
    X = erm.features(UserDataset(rng.uniform(-0.7, 0.7, (n, d)), np.zeros(n, dtype=int)))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return UserDataset(X, np.repeat(np.arange(6), [10, 5, 5, 4, 3, 3]), labels=y)


def _epasto_mu_ok(mu_fn, eps, delta, T) -> bool:
    """mu_fn's mu against the noise the mechanism really adds: sqrt(T) Delta_2 / sigma with
    sigma = ``noise_scale`` (closed form, DRS22 Thm 2.7 + Cor. 3.3), and its profile inside
    dp_accounting's PLD bracket for T Gaussian steps of that sigma and sensitivity."""
    D = _erm_data()
    c = np.full(30, 1 / 30)
    sigma, Delta = E.noise_scale(D, c, epsilon=eps, delta=delta, T=T), E.sensitivity(D, c)
    mu, exact = mu_fn(eps, delta, T), math.sqrt(T) * Delta / sigma
    if not exact <= mu <= exact * (1 + 1e-13):
        return False
    steps = lambda pess: pld.from_gaussian_mechanism(  # noqa: E731
        sigma, sensitivity=Delta, pessimistic_estimate=pess, use_connect_dots=pess, value_discretization_interval=1e-4
    ).self_compose(T)
    lo, hi = steps(False), steps(True)
    g = GaussianDP(mu)
    # eps where delta >= 1e-7: below that the FFT composition's ~1e-15 absolute rounding
    # exceeds the bracket's width (measured: optimistic 1.15e-15 > exact 2.4e-17 at eps = 2, T = 10)
    return all(lo.get_delta_for_epsilon(e) <= g.delta_at(e) <= hi.get_delta_for_epsilon(e) for e in (0.25, 0.5, 1.0))


EPASTO_CASES = [(1.0, 1e-5, 1), (1.0, 1e-5, 10), (2.0, 1e-6, 50)]
EPASTO_MU_BUGS = {
    "no-composition": lambda eps, d, T: E.gdp_mu(eps, d, T) / math.sqrt(T),  # one step's mu
    "linear-in-T": lambda eps, d, T: E.gdp_mu(eps, d, T) * math.sqrt(T),  # T mu, basic composition
}


@pytest.mark.parametrize("eps, delta, T", EPASTO_CASES)
def test_epasto_gdp_mu_is_the_composed_gaussian(eps, delta, T):
    assert _epasto_mu_ok(E.gdp_mu, eps, delta, T)
    # the GDP account of the same noise is at least as tight as Theorem 4's RDP account
    assert GaussianDP(E.gdp_mu(eps, delta, T)).epsilon_at(delta) <= eps
    c = E.gdp_claim(eps, delta, T)
    assert c.primary == E.claim(eps, delta) and c.gdp.mu == E.gdp_mu(eps, delta, T) and c.gdp.delta == delta


@pytest.mark.parametrize("bug", sorted(EPASTO_MU_BUGS))
def test_epasto_mu_check_rejects_planted_formula(bug):
    # T = 1 makes both bugs equal to the truth, so check the cases with T > 1
    assert not all(_epasto_mu_ok(EPASTO_MU_BUGS[bug], *case) for case in EPASTO_CASES if case[2] > 1)


def test_epasto_gdp_mu_bad_input():
    with pytest.raises(ValueError, match="delta"):
        E.gdp_mu(1.0, 0.0, 10)
    with pytest.raises(ValueError, match="T"):
        E.gdp_mu(1.0, 1e-5, 0)
    with pytest.raises(ValueError, match="epsilon"):
        E.gdp_mu(-1.0, 1e-5, 10)
