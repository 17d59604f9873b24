"""Confident lower bounds on a privacy loss from two counts (DESIGN §6).

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

Scores used only to *choose* a set on the selection share (``projected_bound``) need
not be valid; they use the Wilson interval because it is vectorised and cheap.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtri
from statsmodels.stats.proportion import proportion_confint

from userdp.reference._checks import (
    check_delta, check_finite_array, check_int, check_nonnegative, check_positive, check_real,
)

__all__ = ["cp_lower", "cp_upper", "epsilon_lower_bound", "p_value", "projected_bound"]


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


def _wilson(k: np.ndarray, n: float, z: float, upper: bool) -> np.ndarray:
    """Wilson score bound of k/n (vectorised), used only for ranking candidate sets."""
    ph = k / n
    centre = ph + z * z / (2 * n)
    half = z * np.sqrt(np.maximum(ph * (1 - ph), 0.0) / n + z * z / (4 * n * n))
    return (centre + half if upper else centre - half) / (1 + z * z / n)


def projected_bound(k1, k2, n_sel: int, n_count: int, alpha: float, delta: float = 0.0,
                    z_sel: float = 2.0) -> np.ndarray:
    """Rank candidate sets by the bound they are expected to give on the counting share.

    p and q are first shrunk to two-sigma Wilson bounds on the selection share (so a
    far-tail set with a lucky handful of selection hits is not preferred), then the
    Wilson version of eps_lb at the counting size and level alpha is computed. Not a
    valid bound, only a score: validity comes from counting on fresh samples.
    """
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
    p_lo = _wilson(p_s * n_count, n_count, z, upper=False) - delta
    q_hi = _wilson(q_s * n_count, n_count, z, upper=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.log(np.where(p_lo > 0, p_lo, np.nan)) - np.log(q_hi)
    return np.where(np.isfinite(score), score, -np.inf)
