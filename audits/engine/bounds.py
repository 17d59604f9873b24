"""Confident lower bounds on a privacy loss from two counts (docs/design.md §6).

Setting. A rejection set S is fixed *before* the counting samples are drawn. Out of
n i.i.d. outputs of M(D) we see k1 in S, out of n i.i.d. outputs of M(D') we see k2 in
S; so k1 ~ Bin(n, p), k2 ~ Bin(n, q), independent, with p = Pr[M(D) in S] and
q = Pr[M(D') in S]. An (eps, delta)-DP mechanism satisfies p <= e^eps q + delta.

The bound (split Clopper-Pearson, as DP-Sniper). With one-sided level a/2 each,

    p_lo = CP lower bound of k1/n,   q_hi = CP upper bound of k2/n,
    eps_lb(a) = ln((p_lo - delta) / q_hi)           (-inf when p_lo <= delta).

Why the bound is valid: Pr[p_lo > p] <= a/2 and Pr[q_hi < q] <= a/2 (Clopper-Pearson
is exact-conservative), so with probability >= 1 - a both p_lo <= p and q_hi >= q hold,
and then eps_lb(a) <= ln((p - delta)/q) <= eps_true (the DP inequality for this S). The
union bound needs no independence between the two sides.

As a test. eps_lb(a) increases with a (wider a, narrower intervals). The p-value of
H0: "p <= e^eps q + delta" is p(eps) = inf{a in (0, 1] : eps_lb(a) > eps}; rejecting
when p(eps) <= a has level a, because rejecting means eps_lb(a) > eps >= eps_true, which
happens with probability <= a. So "eps_lb(alpha/m) > eps" and "m * p(eps) <= alpha" are
the same decision, and both compose with Bonferroni/Holm over m candidates
(``statsmodels.stats.multitest.multipletests``).

Gaussian DP: the trade-off-curve bound (``mu_lower_bound``). The same set S is a test of
"the output came from M(second)" (H0) against "from M(first)": reject H0 iff the output is
in S. Its false-positive rate is FPR = Pr[M(second) in S] = q and its false-negative rate
FNR = Pr[M(first) not in S] = 1 - p. A mu-GDP mechanism [DRS22, Def. 2.6] has, for every
test of M(D') against M(D) with D, D' neighbours, FNR >= G_mu(FPR) = Phi(Phi^-1(1 - FPR) - mu);
Phi^-1 increases, so this is

    mu >= g(FPR, FNR) := Phi^-1(1 - FPR) - Phi^-1(FNR).

With one-sided level a/2 each, FPR_hi = CP upper bound of k2/n and FNR_hi = CP upper bound
of (n - k1)/n, and

    mu_lb(a) = g(FPR_hi, FNR_hi) = -Phi^-1(FPR_hi) - Phi^-1(FNR_hi)

(Phi^-1(1 - x) = -Phi^-1(x) exactly; computed so, a tiny rate keeps its digits).

Why the bound is valid: g decreases in each argument, so on the event {FPR_hi >= FPR and
FNR_hi >= FNR}, whose probability is >= 1 - a (each CP bound fails with probability <= a/2;
union bound, no independence needed), mu_lb(a) <= g(FPR, FNR) <= mu. The Gaussian-DP claim
is symmetric in the pair (the neighbour relation is), so both orderings of the pair are
tests of it, exactly as for eps. By the symmetry of Clopper-Pearson, 1 - FNR_hi is the CP
lower bound p_lo of k1/n: mu_lb = Phi^-1(p_lo) - Phi^-1(q_hi) uses the same two confidence
bounds as eps_lb (with delta = 0), read through the probit instead of the log; this is why
both bounds can share one counting share and one level. For a shift of two Gaussians every
threshold set has g(FPR, FNR) = mu exactly (Phi^-1(p) - Phi^-1(q) = mu for p = Phi(mu - t),
q = Phi(-t)), so the set that gives the best bound is the one where the two rates are known
best: the middle of the distributions, not the far tail that the eps bound wants. Nasr et
al. 2023 ("Tight auditing of differentially private machine learning", USENIX Security,
arXiv:2302.07956) audit DP-SGD through the same Gaussian trade-off curve.

Its p-value (``gdp_p_value``) for H0: "(FPR, FNR) is on or above the mu-GDP curve", i.e.
g(FPR, FNR) <= mu, is p(mu) = inf{a in (0, 1] : mu_lb(a) > mu}, as for eps: mu_lb(a) is
continuous and increasing in a (wider a, narrower CP intervals), so p(mu) <= a implies
mu_lb(a) >= mu >= g(FPR, FNR), which needs FPR_hi <= FPR or FNR_hi <= FNR (g strictly
decreases), each of probability <= a/2 (a CP upper bound U(k) <= r iff k <= k*, and
Pr[k <= k*] <= a/2). So rejecting when p(mu) <= a has level a, and "mu_lb(alpha/m) > mu"
and "m p(mu) <= alpha" are the same decision.

[DRS22] J. Dong, A. Roth, W. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 84(1),
2022, arXiv:1905.02383v3.

Scores used only to *choose* a set on the selection share (``projected_bound``,
``projected_mu_bound``) need not be valid; they use the Wilson interval because it is
vectorised and cheap.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtri
from statsmodels.stats.proportion import proportion_confint

from userdp.reference._checks import (
    check_delta,
    check_finite_array,
    check_int,
    check_nonnegative,
    check_positive,
    check_real,
)

__all__ = [
    "cp_lower",
    "cp_upper",
    "epsilon_lower_bound",
    "p_value",
    "projected_bound",
    "error_rate_upper_bounds",
    "mu_lower_bound",
    "gdp_p_value",
    "projected_mu_bound",
]


def _level(a, name: str, hi: float = 0.5) -> float:
    """A significance level in (0, hi]."""
    v = check_real(a, name)
    if not (0.0 < v <= hi):
        raise ValueError(f"{name} must lie in (0, {hi:g}], got {v!r}")
    return v


def _count_of(count, nobs, name: str) -> tuple[int, int]:
    n = check_int(nobs, "nobs" if name == "count" else "n", lo=1, hi=2**62)
    return check_int(count, name, lo=0, hi=n), n


def cp_lower(count: int, nobs: int, level_alpha: float) -> float:
    """One-sided Clopper-Pearson lower bound: Pr[bound > p] <= level_alpha (in (0, 1/2])."""
    count, nobs = _count_of(count, nobs, "count")
    level_alpha = _level(level_alpha, "level_alpha")
    lo, _ = proportion_confint(count, nobs, alpha=2.0 * level_alpha, method="beta")
    return 0.0 if count == 0 or not np.isfinite(lo) else float(lo)


def cp_upper(count: int, nobs: int, level_alpha: float) -> float:
    """One-sided Clopper-Pearson upper bound: Pr[bound < q] <= level_alpha (in (0, 1/2])."""
    count, nobs = _count_of(count, nobs, "count")
    level_alpha = _level(level_alpha, "level_alpha")
    _, hi = proportion_confint(count, nobs, alpha=2.0 * level_alpha, method="beta")
    return 1.0 if count == nobs or not np.isfinite(hi) else float(hi)


def epsilon_lower_bound(k1: int, k2: int, n: int, alpha: float, delta: float = 0.0) -> float:
    """eps_lb = ln((p_lo - delta) / q_hi), each CP bound at one-sided level alpha/2.

    Holds (eps_lb <= the true privacy loss of this set) with probability >= 1 - alpha.
    Returns -inf when p_lo <= delta (no evidence at all). alpha in (0, 1], delta in [0, 1).
    """
    alpha, delta = _level(alpha, "alpha", hi=1.0), check_delta(delta)
    k1, n = _count_of(k1, n, "k1")
    k2, _ = _count_of(k2, n, "k2")
    p_lo = cp_lower(k1, n, alpha / 2.0)
    q_hi = cp_upper(k2, n, alpha / 2.0)
    if p_lo <= delta:
        return -math.inf
    return math.log(p_lo - delta) - math.log(q_hi)


# p-values below this are reported as this. Reporting a larger p-value is conservative.
# Below ~1e-100 scipy's beta quantile (boost ibeta inverse) fails to converge for small
# counts (e.g. k = 2 of n = 90,000) and warns; at 1e-30 it converges for every
# (k, n) with n <= 10^7 (tests/audits/test_audit_bounds.py checks a grid).
P_VALUE_FLOOR = 1e-30


def p_value(k1: int, k2: int, n: int, epsilon: float, delta: float = 0.0) -> float:
    """p-value of H0: p <= e^eps q + delta (see module docstring); 1.0 if never rejected.

    epsilon >= 0 is the claim tested (no cap: a claim, not a calibration)."""
    epsilon = check_nonnegative(epsilon, "epsilon")
    if epsilon_lower_bound(k1, k2, n, 1.0, delta) <= epsilon:
        return 1.0
    lo = math.log(P_VALUE_FLOOR)
    if epsilon_lower_bound(k1, k2, n, P_VALUE_FLOOR, delta) > epsilon:
        return P_VALUE_FLOOR

    def f(log_a: float) -> float:  # increasing in log_a
        return epsilon_lower_bound(k1, k2, n, math.exp(log_a), delta) - epsilon

    return math.exp(brentq(f, lo, 0.0, xtol=1e-10, rtol=1e-12))


def error_rate_upper_bounds(k1: int, k2: int, n: int, alpha: float) -> tuple[float, float]:
    """(FPR_hi, FNR_hi): one-sided CP upper bounds at level alpha/2 each of the test "reject
    H0 (output from M(second)) iff the output is in S": FPR = Pr[M(second) in S] (k2 of n),
    FNR = Pr[M(first) not in S] (n - k1 of n). Both hold with probability >= 1 - alpha."""
    alpha = _level(alpha, "alpha", hi=1.0)
    k1, n = _count_of(k1, n, "k1")
    k2, _ = _count_of(k2, n, "k2")
    return cp_upper(k2, n, alpha / 2.0), cp_upper(n - k1, n, alpha / 2.0)


def mu_lower_bound(k1: int, k2: int, n: int, alpha: float) -> float:
    """mu_lb = Phi^-1(1 - FPR_hi) - Phi^-1(FNR_hi) (module docstring, "Gaussian DP").

    Holds (mu_lb <= the mu of any mu-GDP mechanism) with probability >= 1 - alpha. -inf when
    FPR_hi = 1 or FNR_hi = 1 (k2 = n or k1 = 0: no evidence at all). alpha in (0, 1].
    """
    fpr_hi, fnr_hi = error_rate_upper_bounds(k1, k2, n, alpha)
    return float(-ndtri(fpr_hi) - ndtri(fnr_hi))


def gdp_p_value(k1: int, k2: int, n: int, mu: float) -> float:
    """p-value of H0: "(FPR, FNR) is on or above the mu-GDP trade-off curve" (module
    docstring); 1.0 if never rejected, ``P_VALUE_FLOOR`` below the floor. mu > 0 is the claim."""
    mu = check_positive(mu, "mu")
    if mu_lower_bound(k1, k2, n, 1.0) <= mu:
        return 1.0
    if mu_lower_bound(k1, k2, n, P_VALUE_FLOOR) > mu:
        return P_VALUE_FLOOR

    def f(log_a: float) -> float:  # increasing in log_a
        return mu_lower_bound(k1, k2, n, math.exp(log_a)) - mu

    return math.exp(brentq(f, math.log(P_VALUE_FLOOR), 0.0, xtol=1e-10, rtol=1e-12))


def _wilson(k: np.ndarray, n: float, z: float, upper: bool) -> np.ndarray:
    """Wilson score bound of k/n (vectorised), used only for ranking candidate sets."""
    ph = k / n
    centre = ph + z * z / (2 * n)
    half = z * np.sqrt(np.maximum(ph * (1 - ph), 0.0) / n + z * z / (4 * n * n))
    return (centre + half if upper else centre - half) / (1 + z * z / n)


def projected_bound(
    k1, k2, n_sel: int, n_count: int, alpha: float, delta: float = 0.0, z_sel: float = 2.0
) -> np.ndarray:
    """Rank candidate sets by the bound they are expected to give on the counting share.

    p and q are first shrunk to two-sigma Wilson bounds on the selection share (so a
    far-tail set with a lucky handful of selection hits is not preferred), then the
    Wilson version of eps_lb at the counting size and level alpha is computed. Not a
    valid bound, only a score: validity comes from counting on fresh samples.
    """
    p_lo, q_hi = _projected_pq(k1, k2, n_sel, n_count, alpha, z_sel, delta)
    p_lo = p_lo - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.log(np.where(p_lo > 0, p_lo, np.nan)) - np.log(q_hi)
    return np.where(np.isfinite(score), score, -np.inf)


# Selection-share shrinkage of the GDP score (``projected_mu_bound``), in Wilson sds. Larger
# than the eps score's 2 because the GDP optimum is a broad plateau in the middle and the
# noisy tails must not win it by luck. Measured on the 5%-too-small Gaussian (100 seeds at
# 1e6 per side; true mu 1.0526): smallest mu_lb 1.0116 with z_sel = 2 (a set with 8.6x the
# middle's sd was chosen once), 1.0362 with 3, 1.0409 with 4, 1.0416 with 6; at 1e4 per side
# (correct Gaussian, 200 seeds) the median mu_lb is 0.933, 0.936, 0.936, 0.935.
GDP_Z_SEL = 4.0


def projected_mu_bound(k1, k2, n_sel: int, n_count: int, alpha: float, z_sel: float = GDP_Z_SEL) -> np.ndarray:
    """Rank candidate sets by the mu_lb they are expected to give on the counting share.

    As ``projected_bound``, with the Wilson p_lo and q_hi read through the probit:
    Phi^-1(p_lo) - Phi^-1(q_hi) (= ``mu_lower_bound``'s form). Its optimum is in the middle
    of the distributions, where the two rates are estimated best. Not a valid bound.
    """
    p_lo, q_hi = _projected_pq(k1, k2, n_sel, n_count, alpha, z_sel)
    ok = (p_lo > 0) & (q_hi < 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = ndtri(np.where(ok, p_lo, np.nan)) - ndtri(np.where(ok, q_hi, np.nan))
    return np.where(np.isfinite(score), score, -np.inf)


def _projected_pq(k1, k2, n_sel: int, n_count: int, alpha: float, z_sel: float, delta: float = 0.0):
    """Wilson p_lo and q_hi at the counting size, after shrinking p and q to z_sel-sigma
    Wilson bounds on the selection share (ranking only). Checks every argument (delta too)."""
    n_sel, n_count = check_int(n_sel, "n_sel", hi=2**62), check_int(n_count, "n_count", hi=2**62)
    alpha, delta = _level(alpha, "alpha", hi=1.0), check_delta(delta)
    z_sel = check_positive(z_sel, "z_sel", hi=40.0)
    k1, k2 = check_finite_array(k1, "k1"), check_finite_array(k2, "k2")
    for name, k in (("k1", k1), ("k2", k2)):
        if k.size and (k.min() < 0 or k.max() > n_sel):
            raise ValueError(f"{name} must hold counts in [0, n_sel = {n_sel}], got range [{k.min()!r}, {k.max()!r}]")
    p_s = np.clip(_wilson(k1, n_sel, z_sel, upper=False), 0.0, 1.0)
    q_s = np.clip(_wilson(k2, n_sel, z_sel, upper=True), 1e-300, 1.0)
    z = float(ndtri(1.0 - alpha / 2.0))
    return _wilson(p_s * n_count, n_count, z, upper=False), _wilson(q_s * n_count, n_count, z, upper=True)
