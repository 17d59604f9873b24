"""Amin, Kulesza, Munoz Medina, Vassilvitskii, "Bounding User Contributions: A Bias-Variance
Trade-off in Differential Privacy", ICML 2019 (PMLR 97:263-271). Algorithm 1 (§5):
contribution-bounded ERM, run with output perturbation (Chaudhuri, Monteleoni, Sarwate
2011 [CMS11], Algorithm 1) for L2-regularised logistic or ridge regression.

Relation: add/remove one user (Amin Def. 1). Claim: pure epsilon-DP (Amin Def. 2).

Stages (docs/design.md §4):
    kept_records(D, tau)                 S_tau: the first tau records of each user
    effective_sample_size(D, tau)        n_tau = sum_j min(n_j, tau)            (§5)
    weights(D, tau, n_min)               c_i = 1[i in S_tau] / max(n_tau, n_min)
    statistic(D, ...)                    theta-hat = argmin_theta J(theta, S_tau)
    sensitivity(...), noise_scale(...)   Delta_2 and the noise scale Delta_2 / eps
    mechanism(D, rng, size, ...)         theta-hat + b, density(b) ~ exp(-eps ||b|| / Delta_2)
    bias_bound(D, tau, var_H)            Proposition 1 (data-dependent form)

Choices (the paper leaves them open):
- **Which tau records.** Amin §4: "we only take the first tau": the first tau records
  of each user in record order (deterministic; no rng). tau is counted per USER.
- **tau is a public integer.** Algorithm 1 sets tau = tau_0 n, but n (the raw record
  count) changes when a user is added or removed, so a tau computed from the data is
  itself data-dependent. The reference takes tau as a public input.
- **The normaliser n_tau is private.** The paper's objective is the average loss over
  S_tau, and Theorem 1 prices the noise as F(tau / n_tau, ...). Read literally, the
  noise scale 2 tau L / (n_tau Lambda) would depend on the dataset's own n_tau, which
  changes between neighbours; noise of a data-dependent scale is not epsilon-DP (the
  density ratio of two L2-Laplace laws of different scales is unbounded in the tail).
  Privacy before utility: the reference normalises by n' = max(n_tau, n_min) with a
  PUBLIC floor n_min, and calibrates to the worst case over all datasets (below). When
  n_tau >= n_min (the intended use) J is exactly the paper's average. The literal
  reading is kept as a planted bug (tests/papers/amin2019/planted_erm.py: ``data_dependent_n_tau``).

Objective [CMS11, eq. (1)], with w_i = 1[i in S_tau] / n':
    J(theta, D) = sum_i w_i l(theta, z_i) + (Lambda/2) ||theta||^2,   n' = max(n_tau, n_min).

Why this is private
-------------------
Let D' = D plus one user u with k = min(s_u, tau) kept records (1 <= k <= tau); the other
users keep the same records (tau is per user, ``kept_records``). Write G(theta) for the sum
of the N = n_tau(D) kept losses of D and H(theta) for u's k kept losses, M = max(N, n_min),
M' = max(N + k, n_min). Then J' - J = g with
    g(theta) = (1/M' - 1/M) G(theta) + H(theta) / M',
and ||grad l|| <= L per record (``erm.lipschitz``) gives
    ||grad g|| <= (1/M - 1/M') N L + k L / M'.
Both J and J' are Lambda-strongly convex, so [CMS11, Lemma 7] ||theta-hat - theta-hat'||
<= max ||grad g|| / Lambda (only at theta-hat', which for ridge lies in the ball of
``erm.ridge_theta_radius``, where L holds). Three cases:
    N >= n_min:            2 k L / (N + k)               <= 2 tau L / (n_min + tau);
    N + k <= n_min:        k L / n_min                   <= tau L / n_min;
    N < n_min < N + k:     L (N / n_min + (k - N)/(N + k)), convex in N, so at most its
                           value at an end of the interval, i.e. one of the two above.
Hence (``sensitivity``)
    Delta_2 = (L / Lambda) * max(2 tau / (n_min + tau), tau / n_min)
bounds ||theta-hat(D) - theta-hat(D')||_2 for every add/remove-user pair, with no
condition on the data beyond ||x_i|| <= R and the label domain (checked, never clipped).
Adding b with density proportional to exp(-eps ||b||_2 / Delta_2) (``mechanisms.l2_laplace_noise``
with eta = eps / Delta_2) is eps-DP by the triangle inequality [CMS11, Thm 6]: the scale
depends only on public parameters (tau, n_min, Lambda, R, Y, eps).
"""

from __future__ import annotations

import math

import numpy as np

from . import erm
from ._checks import (
    check_epsilon,
    check_generator,
    check_int,
    check_noise_scale,
    check_nonnegative,
    check_positive,
    check_size,
)
from .claims import PureDP
from .data import UserDataset, check_dataset
from .mechanisms import l2_laplace_noise
from .neighbours import ADD_REMOVE_USER

__all__ = [
    "RELATION",
    "claim",
    "kept_records",
    "effective_sample_size",
    "weights",
    "fit",
    "statistic",
    "sensitivity",
    "noise_scale",
    "mechanism",
    "bias_bound",
    "bias_bound_tau0",
]

RELATION = ADD_REMOVE_USER  # Amin Def. 1: neighbours differ by all data of one user


def claim(epsilon) -> PureDP:
    """Amin Def. 2: Pr[A(S) in U] <= e^eps Pr[A(S') in U]."""
    return PureDP(epsilon)


def _count(value, name: str) -> int:
    return check_int(value, name, lo=1)


# ---------------------------------------------------------------------------- contribution bound
def kept_records(dataset: UserDataset, tau) -> np.ndarray:
    """S_tau: indices (ascending) of the first tau records of every user, in record order.

    Amin §4: "If a user contributes more than tau examples ... we only take the first tau".
    """
    tau = _count(tau, "tau")
    order, offsets = check_dataset(dataset).record_order  # S_l = order[offsets[l]:offsets[l+1]]
    rank = np.arange(dataset.n) - np.repeat(offsets[:-1], dataset.counts)  # position within user
    return np.sort(order[rank < tau])  # (n_tau,)


def effective_sample_size(dataset: UserDataset, tau) -> int:
    """§5: n_tau = sum_j n_{j tau}, n_{j tau} = min(n_j, tau)."""
    return int(np.minimum(check_dataset(dataset).counts, _count(tau, "tau")).sum())


def weights(dataset: UserDataset, tau, n_min) -> np.ndarray:
    """w_i = 1[i in S_tau] / max(n_tau, n_min), shape (n,); sums to n_tau / max(n_tau, n_min) <= 1."""
    n_min = _count(n_min, "n_min")
    keep = kept_records(dataset, tau)
    w = np.zeros(dataset.n)
    w[keep] = 1.0 / max(keep.size, n_min)  # n' = max(n_tau, n_min): module docstring
    return w


# ------------------------------------------------------------------------------ statistic
def fit(dataset: UserDataset, *, tau, Lambda, n_min, loss="logistic", R=1.0, Y=1.0) -> erm.Minimiser:
    """argmin_theta J(theta, D), certified to ||theta - theta*|| <= CERT_REL * Delta_2.

    The privacy proof (module docstring) bounds the distance between EXACT minimisers. The
    solver returns theta with a certificate ||theta - theta*|| <= ||grad J(theta)|| / Lambda
    [Nes04, Thm 2.1.10] (``erm.minimise``); we ask for tol = CERT_REL * Delta_2 and refuse
    (RuntimeError) when the certificate is larger, so ``sensitivity`` may add 2 tol.
    """
    X, y = erm.check_erm_data(dataset, loss, R, Y)
    w = weights(dataset, tau, n_min)
    keep = w > 0
    tol = CERT_REL * _exact_sensitivity(tau=tau, Lambda=Lambda, n_min=n_min, loss=loss, R=R, Y=Y)
    fitted = erm.minimise(X[keep], y[keep], w[keep], Lambda, loss, tol=tol)
    if not fitted.error_bound <= tol:
        raise RuntimeError(
            f"the minimiser is certified only to ||theta - theta*|| <= {fitted.error_bound:.3g}, "
            f"above tol = CERT_REL * Delta_2 = {tol:.3g} that the noise accounts for; "
            f"refusing to release (the data may be too ill-conditioned for double precision)"
        )
    return fitted


def statistic(dataset: UserDataset, **params) -> np.ndarray:
    """theta-hat (d,): the noise-free minimiser of J on S_tau (``fit``'s parameters)."""
    return fit(dataset, **params).theta


# ---------------------------------------------------------------------------- noise
# The solver's accuracy, relative to Delta_2: negligible next to the noise (2e-9 of its scale),
# far above rounding (the certificate reaches ~1e-16 relative on the data we test).
CERT_REL = 1e-9


def _exact_sensitivity(*, tau, Lambda, n_min, loss="logistic", R=1.0, Y=1.0) -> float:
    tau, n_min = _count(tau, "tau"), _count(n_min, "n_min")
    Lambda = check_positive(Lambda, "Lambda")
    L = erm.lipschitz(loss, R, Y, Lambda)
    return (L / Lambda) * max(2.0 * tau / (n_min + tau), tau / n_min)


def sensitivity(*, tau, Lambda, n_min, loss="logistic", R=1.0, Y=1.0) -> float:
    """Delta_2 (1 + 2 CERT_REL), Delta_2 = (L / Lambda) max(2 tau / (n_min + tau), tau / n_min).

    Delta_2 bounds ||theta*(D) - theta*(D')|| for the exact minimisers (module docstring);
    ``fit`` returns each within CERT_REL * Delta_2 of its exact minimiser, so the released
    statistics differ by at most Delta_2 + 2 CERT_REL Delta_2 (triangle inequality).
    The record-level [CMS11, Cor. 8] value 2L / (n Lambda) is the special case tau = 1
    with a public n = n_min >= 1 (then 2/(n+1) <= 2/n).
    """
    return _exact_sensitivity(tau=tau, Lambda=Lambda, n_min=n_min, loss=loss, R=R, Y=Y) * (1.0 + 2.0 * CERT_REL)


def noise_scale(*, epsilon, **params) -> float:
    """Delta_2 / eps: the noise density is proportional to exp(-||b||_2 / (Delta_2 / eps)) [CMS11, Alg. 1]."""
    return check_noise_scale(sensitivity(**params) / check_epsilon(epsilon), name="noise scale")


def mechanism(
    dataset: UserDataset, rng, size=None, *, epsilon, tau, Lambda, n_min, loss="logistic", R=1.0, Y=1.0
) -> np.ndarray:
    """Algorithm 1 with output perturbation: theta-hat + b; shape (d,) or (size, d).

    b = r u with r ~ Gamma(d, Delta_2 / eps) and u uniform on the sphere
    (``mechanisms.l2_laplace_noise``), so density(b) ~ exp(-eps ||b||_2 / Delta_2).
    """
    rng = check_generator(rng)
    size = check_size(size)
    params = dict(tau=tau, Lambda=Lambda, n_min=n_min, loss=loss, R=R, Y=Y)
    scale = noise_scale(epsilon=epsilon, **params)
    theta = statistic(dataset, **params)  # (d,)
    check_noise_scale(scale, theta)  # the noise can move theta
    return theta + l2_laplace_noise(1.0 / scale, theta.size, rng, size)  # eta = eps / Delta_2


# ------------------------------------------------------------------------- bias (Prop. 1)
def _var_h(var_H) -> float | None:
    """Var(H) of Def. 6 for a loss in [0, 1]: 0 <= Var(H) <= 1/4 (Popoviciu)."""
    if var_H is None:
        return None
    v = check_nonnegative(var_H, "var_H")
    if v > 0.25:
        raise ValueError(f"var_H (the variance Var(H) of Def. 6, a loss in [0, 1]) must lie in [0, 1/4], got {v!r}")
    return v


def bias_bound(dataset: UserDataset, tau, var_H=None) -> float:
    """Proposition 1 (data-dependent form), for a loss with ||L||_inf <= 1:

        sup_h |sum_j (n_{j tau}/n_tau - n_j/n) L_j(h)|
            <= min( sqrt((1/2) log(n / n_tau)), sqrt((2 n / n_tau) Var(H)) ).

    Var(H) (Def. 6) depends on the users' distributions, not only on the data sizes; pass
    it as ``var_H`` if known, else only the first term is used (a valid, larger bound).
    This is a statistic of the raw data (n, n_tau): it is NOT private.
    """
    n, n_tau = check_dataset(dataset).n, effective_sample_size(dataset, tau)
    first = math.sqrt(0.5 * math.log(n / n_tau))  # Prop. 1, first term
    v = _var_h(var_H)
    return first if v is None else min(first, math.sqrt(2.0 * n / n_tau * v))


def bias_bound_tau0(tau0, var_H=None) -> float:
    """Proposition 1 (second line), tau = tau0 n, tau0 in (0, 1]:
    min( sqrt((1/2) log(1/tau0)), sqrt(2 Var(H) / tau0) )."""
    t = check_positive(tau0, "tau0")
    if t > 1:
        raise ValueError(f"tau0 must lie in (0, 1], got {t!r}")
    first = math.sqrt(0.5 * math.log(1.0 / t))
    v = _var_h(var_H)
    return first if v is None else min(first, math.sqrt(2.0 * v / t))
