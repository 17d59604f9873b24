"""Epasto, Mahdian, Mao, Mirrokni, Ren, "Smoothly Bounding User Contributions in Differential
Privacy", NeurIPS 2020 (the paper text gives no arXiv id). Algorithm 2 (§4): weighted ERM.

The user-level loss of user j is l'(theta, M_j) = sum_{i in S_j} c_i l(theta, X_i) (§4),
so sum_j l'(theta, M_j) = L-hat(theta, c, D) = sum_i c_i l(theta, X_i). Step 2 runs an
(eps, delta)-DP ERM algorithm over the m users with loss l'. The paper uses Algorithm 1
of Bassily, Smith, Thakurta 2014 [BST14] (noisy SGD, n^2 steps, privacy by subsampling
and advanced composition); the paper allows any: "we can use any DP ERM algorithms for
the new loss l'" (§4).

Choice (derived here, not from the paper): full-batch projected noisy gradient descent
with Gaussian noise, accounted with Renyi DP. It is in the style of [BST14, Alg. 1]
(noisy gradient steps, projection on C = {||theta|| <= B}) but needs no subsampling
amplification: each step is a plain Gaussian mechanism [M17, Prop. 7 / Cor. 3], composed exactly
[M17, Prop. 1] and converted once [CKS20, Prop. 12] (``mechanisms.rdp_to_dp``). It is
vectorized over releases and takes T steps, not n^2, so audits can run it 10^5 times.

Relation: replace one user, S_l public (Epasto §2.2: neighbours are "the same except all
data points from a single user l"; the S_l are public). The user's features AND labels
change: X_i = (x_i, y_i), as ``neighbours.REPLACE_USER`` allows (``neighbour(D, u, x, labels=y)``).
Claim: (eps, delta)-DP (Theorem 4); declared beside it, the exact Gaussian-DP parameter
mu = sqrt(T) / z of the noisy GD (``gdp_mu``, ``gdp_claim``; derivation below).

Stages (docs/design.md §4):
    weights(D, c)                        c checked: non-negative, sum 1 (Alg. 2 parameters)
    user_losses(D, theta, c), user_gradients(D, theta, c)   l'(theta, M_j) and its gradient
    statistic(D, theta, c)               sum_j grad l'(theta, M_j), the quantity each step perturbs
    sensitivity(D, c)                    Delta_2 = 2 L max_l sum_{i in S_l} c_i
    noise_scale(D, c, eps, delta, T)     sigma from RDP composition of T Gaussian steps
    mechanism(D, rng, size, ...)         noisy projected GD, averaged iterate

Why this is private
-------------------
The weights c depend only on the public S_l (the caller's responsibility: c must be
fixed before seeing values, e.g. Lemma 3's form); the relation keeps S_l, so c is the same
on D and D'. At any theta, the per-step statistic sum_j grad l'(theta, M_j) changes only in
user u's term, which goes from sum_{i in S_u} c_i g_i to sum_{i in S_u} c_i g'_i with
||g_i||, ||g'_i|| <= L (``erm.lipschitz``; for ridge L holds on C, the projection keeps
theta there). So the change is at most 2 L sum_{i in S_u} c_i <= Delta_2 = 2 L C_max,
C_max = max_l sum_{i in S_l} c_i, the user-level Lipschitz constant of l' times 2 (``sensitivity``).
Step t releases statistic(theta_t) + N(0, sigma^2 I): (alpha, alpha Delta_2^2 / (2 sigma^2))-RDP
[M17, Prop. 7 / Cor. 3]; theta_t is a function of earlier releases, so the T steps compose
adaptively to (alpha, T alpha Delta_2^2 / (2 sigma^2))-RDP [M17, Prop. 1], and
``noise_scale`` returns the smallest sigma (to 1e-9 relative, rounded up) whose
conversion [CKS20, Prop. 12] is <= eps at delta. Projection and averaging are
post-processing.

The same steps in Gaussian DP [DRS22] (``gdp_mu``). ``noise_scale`` sets sigma = z Delta_2,
so step t is the Gaussian mechanism with noise sigma on a statistic of L2 sensitivity
<= Delta_2 (above): Delta_2 / sigma = 1/z-GDP [DRS22, Thm 2.7; ``mechanisms.gaussian_gdp_mu``].
The T steps compose adaptively (theta_t depends on earlier releases, which [DRS22, Cor. 3.3]
allows) to sqrt(T (1/z)^2) = sqrt(T) / z-GDP, and the released average of the projected
iterates is post-processing [DRS22, §2.2], which cannot lower a trade-off function. The mu is
exact for the composition of worst-case steps; this release may realise less (averaging, a
logistic gradient rarely reaches L). It is a tighter account of the same noise than the RDP
route: GaussianDP(mu).epsilon_at(delta) <= eps (tests/test_claims_gdp.py checks it).

[DRS22] J. Dong, A. Roth, W. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 84(1),
2022, arXiv:1905.02383v3.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from . import erm
from ._checks import (
    check_delta,
    check_epsilon,
    check_finite_array,
    check_generator,
    check_int,
    check_noise_scale,
    check_positive,
    check_size,
)
from .claims import ApproxDP, Claims, GaussianDP
from .data import UserDataset, check_dataset
from .mechanisms import DEFAULT_RDP_ORDERS, clip_l2, gaussian_rdp, rdp_to_dp
from .neighbours import REPLACE_USER

__all__ = [
    "RELATION",
    "claim",
    "gdp_mu",
    "gdp_claim",
    "weights",
    "user_weight_sums",
    "user_losses",
    "user_gradients",
    "statistic",
    "lipschitz",
    "sensitivity",
    "epsilon_spent",
    "noise_scale",
    "step_size",
    "mechanism",
]

RELATION = REPLACE_USER  # Epasto §2.2, S_l public; features and labels of one user change
WEIGHT_SUM_TOL = 1e-9  # |sum_i c_i - 1| allowed for hand-passed weights (float rounding)
MAX_STEPS = 10**6  # T: each step is one full pass over the data for every release


def claim(epsilon, delta) -> ApproxDP:
    """Theorem 4: Algorithm 2 is (eps, delta)-DP, with delta > 0 (Gaussian noise)."""
    if check_delta(delta) == 0.0:
        raise ValueError("delta must be > 0: Gaussian noise gives (eps, delta)-DP with delta > 0, got 0.0")
    return ApproxDP(epsilon, delta)


def gdp_mu(epsilon, delta, T) -> float:
    """mu = sqrt(T) / z: the noisy GD of ``mechanism`` is mu-GDP (module docstring, "Gaussian DP").

    z = sigma / Delta_2 is the noise multiplier ``noise_scale`` uses (it depends on eps, delta
    and T only). sigma = z Delta_2 is rounded once, so Delta_2 / sigma may exceed 1/z by an ulp:
    rounding mu up by 8 ulps keeps it an upper bound.
    """
    eps, d = check_epsilon(epsilon), check_delta(delta)
    if d == 0.0:
        raise ValueError("delta must be > 0: Gaussian noise gives (eps, delta)-DP with delta > 0")
    T = _steps(T)
    return math.sqrt(T) / _noise_multiplier(eps, d, T) * (1.0 + 8.0 * 2.0**-52)


def gdp_claim(epsilon, delta, T) -> Claims:
    """Theorem 4's (eps, delta) claim with the exact mu-GDP of the same noise declared beside it."""
    return Claims(claim(epsilon, delta), GaussianDP(gdp_mu(epsilon, delta, T), delta))


def weights(dataset: UserDataset, c) -> np.ndarray:
    """Algorithm 2's parameters c (n,): c_i >= 0 and sum_i c_i = 1 (to WEIGHT_SUM_TOL); refuses others."""
    c = check_finite_array(c, "c", ndim=(1,))
    if c.shape != (check_dataset(dataset).n,):
        raise ValueError(f"c must have shape ({dataset.n},) (one weight per record), got {c.shape}")
    if (c < 0).any():
        i = int(np.argmax(c < 0))
        raise ValueError(f"c must be non-negative; c[{i}] = {c[i]!r}")
    if abs(c.sum() - 1.0) > WEIGHT_SUM_TOL:
        raise ValueError(f"c must sum to 1 (Algorithm 2), got sum(c) = {c.sum()!r}")
    return c


def user_weight_sums(dataset: UserDataset, c) -> np.ndarray:
    """sum_{i in S_l} c_i for every user l, shape (m,)."""
    c = weights(dataset, c)  # checks the dataset first
    return dataset.user_sums(c)


# ---------------------------------------------------------------------- user-level loss
def user_losses(dataset: UserDataset, theta, c, *, loss="logistic", R=1.0, Y=1.0) -> np.ndarray:
    """§4: l'(theta, M_j) = sum_{i in S_j} c_i l(theta, X_i), shape (m,)."""
    X, y = erm.check_erm_data(dataset, loss, R, Y)
    t = check_finite_array(theta, "theta", ndim=(1,))
    return dataset.user_sums(weights(dataset, c) * erm.record_losses(t, X, y, loss))


def user_gradients(dataset: UserDataset, theta, c, *, loss="logistic", R=1.0, Y=1.0) -> np.ndarray:
    """grad_theta l'(theta, M_j) = sum_{i in S_j} c_i grad l(theta, X_i), shape (m, d)."""
    X, y = erm.check_erm_data(dataset, loss, R, Y)
    g = erm.record_gradients(theta, X, y, loss)  # (n, d)
    return dataset.user_sums(weights(dataset, c)[:, None] * g)  # (m, d)


def statistic(dataset: UserDataset, theta, c, *, loss="logistic", R=1.0, Y=1.0) -> np.ndarray:
    """sum_j grad l'(theta, M_j) = sum_i c_i grad l(theta, X_i), (d,): the noise-free step quantity."""
    X, y = erm.check_erm_data(dataset, loss, R, Y)
    t = check_finite_array(theta, "theta", ndim=(1,))
    return erm.weighted_gradient(t, X, y, weights(dataset, c), loss)


# ------------------------------------------------------------------------------- noise
def lipschitz(loss="logistic", R=1.0, Y=1.0, radius=1.0) -> float:
    """L per record on C = {||theta|| <= radius}: R (logistic), R (R radius + Y) (ridge).

    ||x_i|| <= R is checked up to erm's relative slack 1e-12 (``erm.check_erm_data``), so
    every R below is R (1 + 1e-12), as in ``erm.lipschitz``.
    """
    radius = check_positive(radius, "radius")
    check_positive(Y, "Y")  # checked for every loss
    if erm._loss_name(loss) == "ridge":
        # ||(theta.x - y) x|| <= (||x|| radius + Y) ||x|| on C, with ||x|| <= R (1 + 1e-12).
        R, Y = check_positive(R, "R") * (1 + erm._NORM_SLACK), check_positive(Y, "Y")
        return R * (R * radius + Y)
    return erm.lipschitz(loss, R)


def sensitivity(dataset: UserDataset, c, *, loss="logistic", R=1.0, Y=1.0, radius=1.0) -> float:
    """Delta_2 = 2 L max_l sum_{i in S_l} c_i: replace-user L2 sensitivity of ``statistic``."""
    C_max = float(user_weight_sums(dataset, c).max())  # user-level Lipschitz / L
    return 2.0 * lipschitz(loss, R, Y, radius) * C_max


def _steps(T) -> int:
    return check_int(T, "T (number of gradient steps)", lo=1, hi=MAX_STEPS)


def epsilon_spent(noise_multiplier, T, delta) -> float:
    """eps after T adaptive Gaussian steps of noise multiplier z = sigma / Delta_2:
    rdp_to_dp(orders, T alpha / (2 z^2), delta) [M17, Cor. 3 and Prop. 1; CKS20, Prop. 12]."""
    z = check_positive(noise_multiplier, "noise_multiplier")
    rdp = _steps(T) * gaussian_rdp(DEFAULT_RDP_ORDERS, 1.0, z)
    return rdp_to_dp(DEFAULT_RDP_ORDERS, rdp, delta)


def _noise_multiplier(epsilon: float, delta: float, T: int) -> float:
    """The smallest z (to 1e-9 relative, rounded up) with epsilon_spent(z, T, delta) <= epsilon.

    Bracketing moves s = log z by 1 per step, at most 300 steps each way (z in e^-300..e^300
    covers every eps in [1e-50, 1e50] and T <= MAX_STEPS); RuntimeError if that runs out.
    """
    f = lambda s: epsilon_spent(math.exp(s), T, delta) - epsilon  # noqa: E731, decreasing in s
    lo = hi = 0.0
    for _ in range(300):
        if f(hi) <= 0:
            break
        hi += 1.0
    else:
        raise RuntimeError(
            f"no noise multiplier up to e^{hi:g} reaches epsilon = {epsilon!r} (T = {T}, delta = {delta!r})"
        )
    for _ in range(300):
        if f(lo) > 0:
            break
        lo -= 1.0
    else:
        raise RuntimeError(
            f"noise multipliers down to e^{lo:g} all reach epsilon = {epsilon!r} (T = {T}, delta = {delta!r})"
        )
    s = brentq(f, lo, hi, xtol=1e-10)
    z = math.exp(s) * (1 + 1e-9)
    for _ in range(1000):  # guard the rounding
        if f(math.log(z)) <= 0:
            return z
        z *= 1 + 1e-9
    raise RuntimeError(f"noise multiplier calibration did not converge (epsilon = {epsilon!r}, T = {T})")


def noise_scale(dataset: UserDataset, c, *, epsilon, delta, T, loss="logistic", R=1.0, Y=1.0, radius=1.0) -> float:
    """sigma = z Delta_2 with z the smallest multiplier that keeps T steps (eps, delta)-DP."""
    eps, d = check_epsilon(epsilon), check_delta(delta)
    if d == 0.0:
        raise ValueError("delta must be > 0: Gaussian noise gives (eps, delta)-DP with delta > 0")
    Delta = sensitivity(dataset, c, loss=loss, R=R, Y=Y, radius=radius)
    sigma = _noise_multiplier(eps, d, _steps(T)) * Delta
    # each step adds N(0, sigma^2) to a gradient of norm <= L: the noise must move it
    return check_noise_scale(sigma, lipschitz(loss, R, Y, radius), "sigma")


def step_size(*, sigma, d, T, loss="logistic", R=1.0, Y=1.0, radius=1.0) -> float:
    """eta = radius / (G sqrt(T)), G^2 = L^2 + d sigma^2 >= E||noisy gradient||^2 (sum c = 1):
    the fixed step of projected stochastic subgradient descent (Bubeck 2015, Thm 6.1)."""
    sigma, d = check_positive(sigma, "sigma"), check_int(d, "d")
    G = math.sqrt(lipschitz(loss, R, Y, radius) ** 2 + d * sigma**2)
    return radius / (G * math.sqrt(_steps(T)))


def _noisy_gradient_descent(
    X, y, c, rng, size=None, *, sigma, T, loss="logistic", R=1.0, Y=1.0, radius=1.0
) -> np.ndarray:
    """Projected noisy GD with a given sigma; the average of theta_2..theta_{T+1}, (d,) or (size, d).

    theta_1 = 0; theta_{t+1} = Pi_C(theta_t - eta (sum_i c_i grad l(theta_t, X_i) + N(0, sigma^2 I))).
    Internal: private only with the sigma of ``noise_scale`` and data checked by
    ``erm.check_erm_data``; ``mechanism`` is the one public, checked entry point.
    """
    T = _steps(T)
    eta = step_size(sigma=sigma, d=X.shape[1], T=T, loss=loss, R=R, Y=Y, radius=radius)
    k = 1 if size is None else size
    theta = np.zeros((k, X.shape[1]))  # (k, d): k independent runs
    total = np.zeros_like(theta)
    for _ in range(T):
        g = erm._weighted_gradient(theta, X, y, c, loss)  # (k, d), no noise yet
        g += rng.normal(0.0, sigma, size=g.shape)  # Gaussian step, sigma above
        theta = clip_l2(theta - eta * g, radius)  # Pi_C: projection on the ball
        total += theta
    out = total / T
    return out[0] if size is None else out


def mechanism(
    dataset: UserDataset, rng, size=None, *, c, epsilon, delta, T, loss="logistic", R=1.0, Y=1.0, radius=1.0
) -> np.ndarray:
    """Algorithm 2: noisy projected GD on sum_j l'(theta, M_j) with sigma from ``noise_scale``."""
    rng = check_generator(rng)
    size = check_size(size)
    X, y = erm.check_erm_data(dataset, loss, R, Y)
    c = weights(dataset, c)
    sigma = noise_scale(dataset, c, epsilon=epsilon, delta=delta, T=T, loss=loss, R=R, Y=Y, radius=radius)
    return _noisy_gradient_descent(X, y, c, rng, size, sigma=sigma, T=T, loss=loss, R=R, Y=Y, radius=radius)
