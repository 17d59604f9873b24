"""Calibrations of HLM (Zhao et al. 2024, ``zhao2024``) chosen from public inputs, and the
global-curvature calibration (derived here, not from the paper: the poster gives no
calibration of the noise W of eq. (4)).

Three ways to calibrate W, all for the estimator of ``zhao2024`` (the weighted Huber
minimiser of eq. (2)-(3), T_i = tau R / sqrt(m_i)), all user-level (epsilon, delta)-DP under
``REPLACE_USER_ITEMS`` (m_i public), claim ``zhao2024.claim``:

- ``"ptr-default"``: ``zhao2024.mechanism`` at its defaults (kappa0 = 1/2, eps_t = eps / 4,
  cap from ``choose_cap``). Kept as the named alternative; it is the calibration with which
  the poster's imbalance claim did not reproduce.
- ``"ptr"``: ``zhao2024.mechanism`` with (kappa0, test_share, cap) from ``tune_ptr``.
- ``"global"``: ``global_mechanism`` (no test), when a support is declared.

``calibrate`` picks between "ptr" and "global" by a predicted mean squared error;
``calibrated_mechanism`` releases with its pick. Every choice reads only the public inputs
(the counts m_i, d, R, tau, R_c, the support, epsilon, delta), never a record.

Why the tuned "ptr" calibration is private
------------------------------------------
Items 1-5 of ``zhao2024``'s docstring hold for every kappa0 in (0, 1), every test_share in
(0, 1) and every weight vector that is a function of the public counts: no step uses the
value 1/2 or 1/4. ``tune_ptr`` computes its choice from public inputs only (its arguments
are the counts, not the dataset), so the choice is the same on every pair of neighbours and
the mechanism it parametrises is (epsilon, delta)-DP on each of them.

The reserve (derived here). With all users robustly inside their quadratic regions, one
user moves mu0 by at most 2c / (weight in the quadratic region) ~ 2c, while the pass branch
is calibrated to B ~ 2c / kappa0: the reserve is 1 / kappa0 (2 at the default). How far it can
be cut: the test passes with probability >= 1 - p exactly when gamma(D) >= L + ln(1/(2p)) / eps_t
=: j_p, i.e. (item 3) when kappa0 < K(D, j_p B) - j_p w_max. So kappa0 can approach 1 only if
almost all of the weight has a margin >= j_p B and j_p w_max is small. ``tune_ptr`` predicts
K(D, t) from public inputs under a utility model (below) and keeps the kappa0 whose predicted
failure probability, times the fallback's noise variance, still pays: on the poster's setting
it picks kappa0 = 0.85-0.9 (reserve 1.11-1.18) with eps_t = 0.15-0.25 eps.

The utility model (used to CHOOSE, never to prove): items of scale R, per coordinate of
variance ``ITEM_VARIANCE`` R^2 = R^2 / 3 (uniform on [-R, R], the model behind tau = 2 in
``zhao2024``). Then ||y_i - mu|| ~ R sqrt(m_i^-1 / 3) chi_d, the weighted mean has variance
(d R^2 / 3) sum_i w_i^2 / m_i, and K(D, t) has mean sum_i w_i P(||y_i - mu|| <= T_i - t) (1 if
T_i - t >= 2 rho under a support rho). If the data are more spread than the model, the test
fails more often and the release falls back: it stays private, it loses accuracy.

Calibration "global": global curvature from a declared support (derived here)
---------------------------------------------------------------------------
Setting: a declared support rho (every item in the L2 ball of radius rho around 0: checked,
data outside is refused, as in ``zhao2024``). Public: n, the m_i, d, R, tau, rho, theta.

Weights (``equalised_weights``): t_i = min(T_i, rho), w_i prop. to min(m_i, theta / t_i). A user's
pull on the gradient is bounded by w_i t_i (``zhao2024`` item 1), so theta caps every user's
pull at theta / sum_j a_j while a user below the cap keeps weight prop. to m_i (its average's
precision). Users with small T_i (many items) may so carry weight up to sqrt(m_i)-fold more
than under the cap of ``zhao2024.weights``: the poster's "adaptive thresholds and weights".

Radii (floating point). The averages y_i are projected onto the ball of radius rho (in d = 1
clipped to [-rho, rho], exact in floating point; since the items are in the support this
moves a y_i only by rounding). rho_s = rho in d = 1, rho (1 + (d + 8) u) in d >= 2 (u = 2^-53):
the ball the iterates are projected onto; every projected y_i has true norm <= rho_s (a
projection computed in floats has norm <= rho (1 + (d/2 + 4) u)). rho_G = rho in d = 1,
rho_s (1 + (d + 8) u) in d >= 2: every computed iterate has true norm <= rho_G.

G1. The set of guaranteed users G = {i : T_i >= 2 rho_G} and kappa_G = sum_{i in G} w_i are
    public. For s with ||s|| <= rho_G, every i in G is in its quadratic region: ||s - y_i|| <=
    ||s|| + ||y_i|| <= 2 rho_G <= T_i. Refused (ValueError, public inputs) when G is empty.
G2. The minimiser. Let s* minimise F(s) = sum_i w_i phi_i(s - y_i) (``zhao2024``, eq. 2-3).
    The projection P onto the convex ball B_s = {||s|| <= rho_s}, which holds every y_i, obeys
    ||P s - y_i||^2 <= ||s - y_i||^2 - ||s - P s||^2, and each phi_i increases strictly in
    ||s - y_i||; so for s outside B_s, F(P s) < F(s) as soon as some w_i > 0 (G non-empty):
    every minimiser lies in B_s. On B_s, F is kappa_G-strongly convex (the users of G add
    kappa_G ||s||^2 / 2 plus an affine term; the others are convex), so s* is unique.
G3. Sensitivity. D, D' differ in user k (y_k -> y'_k, both in B_s; m_k, w_k, T_k public).
    Let s = s*(D), s' = s*(D'), u = (s' - s) / ||s' - s||, h(t) = <grad F_D'(s + t u), u> on
    [0, ||s' - s||], a segment inside B_s (convex). grad F_D'(s) = grad F_D(s) + w_k
    (psi_k(s - y'_k) - psi_k(s - y_k)) has norm <= w_k min(2 T_k, ||y_k - y'_k||) <= 2 w_k
    min(T_k, rho_G) <= 2c, c = max_i w_i min(T_i, rho_G) (psi_k is the projection onto the
    ball of radius T_k: 1-Lipschitz, norm <= T_k). Each user of G, k included (G and the
    quadratic region depend only on public T_k and on B_s, which holds y'_k too), adds
    exactly w_i t to h(t) - h(0); every other term is non-decreasing (psi_i is monotone). So
    0 = h(||s' - s||) >= -2c + kappa_G ||s' - s||:  ||s*(D) - s*(D')|| <= Delta = 2c / kappa_G.
    Tight: when every user is in G (all thresholds >= 2 rho), F is the weighted squared loss on
    B_s, s* the weighted mean, and a user with w_k = c / rho moving from -rho to +rho moves it
    by 2c = Delta (the audit's pair; ``audits/papers/zhao2024/calibration.py``).
G4. A solver with a public iteration count. Phi(x) = P_s(x - grad F(x)) (P_s: projection onto
    B_s). For x, z with norm <= rho_G, x - grad F(x) - (z - grad F(z)) = sum_i w_i [(x - z) -
    (psi_i(x - y_i) - psi_i(z - y_i))] + (1 - sum_i w_i)(x - z); a user of G contributes 0
    (psi_i is the identity there), any other at most w_i ||x - z|| (I - psi_i is the
    complement of a projection onto a convex set: 1-Lipschitz). So Phi contracts by
    |1 - W| + W - kappa_G <= q = 1 - kappa_G + 2 |1 - W| on that ball (W = sum_i w_i, 1 up to
    rounding; P_s is 1-Lipschitz). Its fixed point is
    s* (the minimiser of F over B_s, which by G2 is the global one: grad F(s*) = 0, P_s s* = s*).
    The code starts at x_0 = P_s(weighted mean) and applies K computed steps; each computed
    step differs from Phi at the computed point by at most delta_f = 4 sqrt(d) (n + 2d + 20) u
    rho_G (the gradient is a sum of n terms of norm <= w_i 2 rho_G: recursive summation in any
    order errs by <= (n - 1) u times the sum of |terms| per coordinate; the products, the norm,
    the subtraction and the projection add O(d u rho_G); the factor 2 covers second-order
    terms). So e_k = ||x_k - s*|| obeys e_{k+1} <= q e_k + delta_f and
        ||x_K - s*|| <= e = q^K 2 rho_G + delta_f / (1 - q),
    with K a count making q^K 2 rho_G <= max(GLOBAL_SLACK Delta, 2 delta_f / (1 - q)) - delta_f /
    (1 - q) (the smallest such count plus one, for the logarithms' rounding): a public number,
    so the running time reads no record either.
    Refused (ValueError, public inputs) when K > MAX_GLOBAL_STEPS.
G5. Release: Clip(x_K, R_c) + N(0, sigma^2 I_d), sigma = ``gaussian_sigma_analytic`` at the L2
    sensitivity S = min(Delta + 2e + 2 e_clip, 2 R_c (1 + (d + 8) u)) and the WHOLE (epsilon,
    delta) (no test, no fallback). ||x_K(D) - x_K(D')|| <= e + Delta + e (G3, G4); Clip is
    1-Lipschitz and its computed value differs from the exact one by <= e_clip = (d + 8) u
    min(R_c, rho_G) (0 when R_c >= rho_G: the clip is then a no-op in floats); any two clipped
    points are within 2 R_c. By Balle and Wang 2018 (Thm 8) the release is (epsilon, delta)-DP.
    Public quantities are rounded conservatively (kappa_G down, c, Delta, q and e up; fsum
    for the sums).

When each calibration wins (measured, ``userdp reproduce zhao2024-imbalance``): "global"
needs weight on users whose thresholds reach the support's diameter (T_i >= 2 rho: with tau
= 2, R = rho, the one-item users), and then buys the whole budget for the release and weights
that grow like sqrt(m_i) for the heavy users; "ptr" needs no support and wins where few users
have so few items (balanced users, or m_min >= 2).

Smooth sensitivity (Nissim, Raskhodnikova, Smith 2007) in place of propose-test-release does
not help here (derived here, for their framework with Gaussian noise). The release f(D) +
S(D) Z / alpha needs noise that stays (eps/2, delta/2)-indistinguishable under a shift by
alpha, and again under a dilation by e^beta: half of the budget each. The shift half alone
forces sigma >= S(D) s(eps/2, delta/2), with s(eps, delta) = ``gaussian_sigma_analytic(1, eps,
delta)``, and S(D) >= LS(D) >= 2c (1 - o(1)) on typical data (one user moving between the
support's poles while all users stay in their quadratic regions; G3's tight case). At eps = 1,
delta = 1e-5: s(1/2, 5e-6) = 7.35, against s(3/4, 5e-6) / kappa0 = 5.06 / kappa0 for "ptr"
(5.62 at kappa0 = 0.9) and s(1, 1e-5) = 3.73 for "global" (at Delta = 2c / kappa_G). So it
is dominated by "ptr" for kappa0 >= 0.69 (``tests/papers/zhao2024/test_zhao2024_calibration.py`` checks the
three constants). Analyses of smooth sensitivity that do not halve the budget exist, with
other noise laws; they are not compared here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from ._checks import (
    check_delta,
    check_epsilon,
    check_generator,
    check_int,
    check_noise_scale,
    check_positive,
    check_size,
)
from .claims import ApproxDP
from .data import UserDataset, check_dataset
from .mechanisms import gaussian_sigma_analytic
from . import zhao2024 as Z

__all__ = [
    "CALIBRATIONS",
    "TUNED_KAPPAS",
    "TUNED_SHARES",
    "ITEM_VARIANCE",
    "GLOBAL_SLACK",
    "MAX_GLOBAL_STEPS",
    "equalised_weights",
    "GlobalConstants",
    "global_constants",
    "GlobalPlan",
    "global_plan",
    "global_mechanism",
    "choose_theta",
    "tune_ptr",
    "Calibration",
    "calibrate",
    "calibrated_mechanism",
    "claim",
]

CALIBRATIONS = ("ptr-default", "ptr", "global")
TUNED_KAPPAS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9)  # the kappa0 ``tune_ptr`` may propose
TUNED_SHARES = (0.1, 0.15, 0.25, 0.35)  # the test shares eps_t / eps it may spend
ITEM_VARIANCE = 1.0 / 3.0  # utility model: per-coordinate item variance in units of R^2 (uniform on [-R, R])
GLOBAL_SLACK = 1e-6  # the solver's target error, relative to Delta (G4)
MAX_GLOBAL_STEPS = 10_000  # G4: refuse a calibration that needs more (kappa_G too small)
_U = 2.0**-53  # unit roundoff of a double
_K_SDS = 3.0  # the pass proxy keeps K's mean 3 standard deviations above the bar
_FLOOR = 1e-12  # as zhao2024: the test's cap J makes P(fail | gamma = J) <= this


# ------------------------------------------------------------------------------ inputs
def _counts(m) -> np.ndarray:
    return Z._counts(m)


def _rho(support) -> float:
    if support is None:
        raise ValueError(
            "support must be given (a radius rho > 0 with every item in the L2 ball of radius rho): "
            "the global calibration's curvature bound needs it; without one use calibration 'ptr'"
        )
    return check_positive(support, "support")


def _d(d) -> int:
    return check_int(d, "d", hi=2**20)


def _budget(epsilon, delta) -> tuple[float, float]:
    eps, dl = check_epsilon(epsilon), check_delta(delta)
    if not 0.0 < dl < 1.0:
        raise ValueError(f"delta must lie in (0, 1) (Gaussian noise needs delta > 0), got {dl!r}")
    return eps, dl


def _groups(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct counts and how many users have each: every public quantity depends on m_i only."""
    mu, cnt = np.unique(m, return_counts=True)
    return mu, cnt.astype(float)


# ------------------------------------------------------------------------------ weights
def equalised_weights(m, R, theta, *, tau=Z.DEFAULT_TAU, support) -> np.ndarray:
    """w_i = a_i / sum_j a_j, a_i = min(m_i, theta / t_i), t_i = min(T_i, support), T_i = tau R /
    sqrt(m_i) (derived here, not from the paper). A user's pull on the gradient is at most w_i
    t_i: theta caps it at theta / sum_j a_j; below the cap the weight grows like m_i. Non-negative,
    summing to 1 (up to rounding), non-decreasing in m_i (t_i does not increase with m_i)."""
    m = _counts(m)
    theta = check_positive(theta, "theta")
    t = np.minimum(Z.thresholds(m, R, tau), _rho(support))
    a = np.minimum(m, theta / t)
    return a / a.sum()


# ------------------------------------------------------------------------------ calibration "global"
@dataclass(frozen=True)
class GlobalConstants:
    """The public quantities of calibration "global" (module docstring, G1-G5)."""

    w: np.ndarray  # (n,) weights (``equalised_weights``)
    T: np.ndarray  # (n,) thresholds
    in_G: np.ndarray  # (n,) bool: T_i >= 2 rho_G (always in the quadratic region, G1)
    rho: float  # the declared support
    rho_s: float  # the iterates' ball (G4)
    rho_G: float  # the ball every computed iterate lies in (G1)
    kappa_G: float  # sum of w_i over G, rounded down
    c: float  # max_i w_i min(T_i, rho_G), rounded up
    Delta: float  # 2 c / kappa_G (G3), rounded up
    q: float  # the solver's contraction factor (G4), rounded up
    steps: int  # K: iterations of the solver
    e: float  # bound on ||x_K - s*|| (G4)
    theta: float


def global_constants(m, R, theta, *, d=1, tau=Z.DEFAULT_TAU, support) -> GlobalConstants:
    """G1-G4 of the module docstring from the public inputs (the counts, not the dataset)."""
    m = _counts(m)
    d = _d(d)
    rho = _rho(support)
    n = m.size
    rho_s = rho if d == 1 else rho * (1.0 + (d + 8) * _U)
    rho_G = rho if d == 1 else rho_s * (1.0 + (d + 8) * _U)
    T = Z.thresholds(m, R, tau)
    w = equalised_weights(m, R, theta, tau=tau, support=rho)
    in_G = T >= 2.0 * rho_G
    kappa_G = math.fsum(w[in_G]) * (1.0 - 2 * _U)  # fsum: correctly rounded
    if not kappa_G > 0.0:
        raise ValueError(
            f"no user has a threshold T_i = tau R / sqrt(m_i) >= 2 support (the largest is "
            f"{float(T.max())!r} < {2 * rho_G!r}): calibration 'global' has no guaranteed "
            "curvature here; use calibration 'ptr' (zhao2024.mechanism)"
        )
    c = float(np.max(w * np.minimum(T, rho_G))) * (1.0 + 2 * _U)
    Delta = 2.0 * c / kappa_G * (1.0 + 2 * _U)
    q = min(1.0, (1.0 - kappa_G) + 2.0 * (abs(1.0 - math.fsum(w)) + 2 * _U) + 4 * _U)  # G4, W = sum w rounded
    if not q < 1.0:
        raise ValueError(
            f"kappa_G = {kappa_G!r} is too small for the solver's contraction (q = 1); use calibration 'ptr'"
        )
    delta_f = 4.0 * math.sqrt(d) * (n + 2 * d + 20) * _U * rho_G
    e_f = delta_f / (1.0 - q) * (1.0 + 4 * _U)
    target = max(GLOBAL_SLACK * Delta, 2.0 * e_f)
    if q == 0.0:
        steps = 1
    else:
        need = math.log((target - e_f) / (2.0 * rho_G)) / math.log(q)  # q^K 2 rho_G <= target - e_f
        steps = max(1, math.ceil(need * (1.0 + 1e-12)) + 1)  # +1: the logs' rounding
    if steps > MAX_GLOBAL_STEPS:
        raise ValueError(
            f"calibration 'global' would need {steps} solver steps > {MAX_GLOBAL_STEPS} "
            f"(kappa_G = {kappa_G:.3g}: the guaranteed curvature is too small); use calibration 'ptr'"
        )
    e = (q**steps * 2.0 * rho_G + e_f) * (1.0 + 4 * _U)
    return GlobalConstants(
        w=w,
        T=T,
        in_G=in_G,
        rho=rho,
        rho_s=rho_s,
        rho_G=rho_G,
        kappa_G=kappa_G,
        c=c,
        Delta=Delta,
        q=q,
        steps=int(steps),
        e=e,
        theta=float(theta),
    )


def _project(x: np.ndarray, radius: float) -> np.ndarray:
    """Rows of x (k, d) projected onto the ball of the radius (d = 1: np.clip, exact)."""
    if x.shape[1] == 1:
        return np.clip(x, -radius, radius)
    r = np.linalg.norm(x, axis=1, keepdims=True)
    return np.where(r > radius, x * (radius / np.maximum(r, np.finfo(float).tiny)), x)


def _global_solve(y: np.ndarray, k: GlobalConstants) -> np.ndarray:
    """K = k.steps steps of x <- P_s(x - grad F(x)) from P_s(weighted mean) (G4)."""
    w, T = k.w, k.T
    s = _project((w @ y / w.sum())[None, :], k.rho_s)[0]
    for _ in range(k.steps):
        u = s[None, :] - y
        r = np.linalg.norm(u, axis=1)
        g = (w * T / np.maximum(r, T)) @ u  # sum_i w_i psi_i(s - y_i)
        s = _project((s - g)[None, :], k.rho_s)[0]
    return s


@dataclass(frozen=True)
class GlobalPlan:
    """Everything ``global_mechanism`` computes before drawing noise."""

    mu0: np.ndarray  # (d,) x_K, within e of the exact minimiser s*
    clipped: np.ndarray  # (d,) Clip(x_K, R_c)
    constants: GlobalConstants
    sensitivity: float  # S of G5
    sigma: float
    epsilon: float
    delta: float


def _global_public(m, d, *, epsilon, delta, R, R_c, support, tau, theta):
    eps, dl = _budget(epsilon, delta)
    R_c = check_positive(R_c, "R_c")
    rho = _rho(support)
    if theta is None:
        theta = choose_theta(m, R, eps, dl, d=d, tau=tau, support=rho, R_c=R_c)
    k = global_constants(m, R, theta, d=d, tau=tau, support=rho)
    e_clip = (d + 8) * _U * R_c if R_c < k.rho_G else 0.0
    S = min((k.Delta + 2.0 * k.e + 2.0 * e_clip) * (1.0 + 4 * _U), 2.0 * R_c * (1.0 + (d + 8) * _U))
    sigma = gaussian_sigma_analytic(S, eps, dl)
    check_noise_scale(sigma, min(R_c, k.rho_G), "sigma")  # public: the release's norm is <= min(R_c, rho_G)
    return k, R_c, S, sigma, eps, dl


def global_plan(dataset: UserDataset, *, epsilon, delta, R, R_c, support, tau=Z.DEFAULT_TAU, theta=None) -> GlobalPlan:
    """The noise-free part of calibration "global": every public quantity is computed and
    checked before a record is read (``theta=None``: ``choose_theta`` on the counts)."""
    check_dataset(dataset)
    d = 1 if dataset.values.ndim == 1 else dataset.values.shape[1]
    k, R_c, S, sigma, eps, dl = _global_public(
        dataset.counts, d, epsilon=epsilon, delta=delta, R=R, R_c=R_c, support=support, tau=tau, theta=theta
    )
    Z._check_support(dataset, k.rho)  # the domain: items in the support
    y, _ = Z.local_averages(dataset)
    y = _project(y, k.rho)  # rounding only (the items are in the support)
    s = _global_solve(y, k)
    r = float(np.linalg.norm(s))
    clipped = s if r <= R_c else s * (R_c / r)  # Clip(x_K, R_c), eq. (4)
    return GlobalPlan(mu0=s, clipped=clipped, constants=k, sensitivity=S, sigma=sigma, epsilon=eps, delta=dl)


def global_mechanism(
    dataset: UserDataset, rng, size=None, *, epsilon, delta, R, R_c, support, tau=Z.DEFAULT_TAU, theta=None
) -> np.ndarray:
    """HLM with calibration "global": Clip(x_K, R_c) + N(0, sigma^2 I), sigma calibrated to the
    global sensitivity of G5 at the whole (epsilon, delta). Shape as ``zhao2024.mechanism``:
    () or (size,) for scalar items, (d,) or (size, d) otherwise; each release draws its own W."""
    rng = check_generator(rng)
    size = check_size(size)
    p = global_plan(dataset, epsilon=epsilon, delta=delta, R=R, R_c=R_c, support=support, tau=tau, theta=theta)
    k = 1 if size is None else size
    out = p.clipped[None, :] + p.sigma * rng.standard_normal((k, p.clipped.size))
    if dataset.values.ndim == 1:
        out = out[:, 0]
    return out[0] if size is None else out


# ------------------------------------------------------------------------------ choosing from public inputs
def _model_mse_weights(mu, cnt, w, R, d) -> float:
    """The utility model's variance of the weighted mean: d R^2 ITEM_VARIANCE sum_i w_i^2 / m_i."""
    return d * R * R * ITEM_VARIANCE * float(np.dot(cnt, w * w / mu))


def _best_global(m, R, eps, dl, *, d, tau, support, R_c, candidates):
    """(predicted MSE, theta) minimising the model's MSE of calibration "global" over theta at
    quantiles of m_i t_i; None if no candidate is admissible (G1, G4)."""
    mu, _ = _groups(m)
    t = np.minimum(Z.thresholds(mu, R, tau), support)
    thetas = np.unique(np.quantile(mu * t, np.linspace(0.0, 1.0, candidates)))
    unit = gaussian_sigma_analytic(1.0, eps, dl)
    best = None
    for th in thetas:
        try:
            k = global_constants(m, R, float(th), d=d, tau=tau, support=support)
        except ValueError:
            continue
        S = min(k.Delta + 2.0 * k.e, 2.0 * R_c)
        mse = d * R * R * ITEM_VARIANCE * float(np.sum(k.w * k.w / m)) + d * (unit * S) ** 2
        if best is None or mse < best[0]:
            best = (mse, float(th))
    return best


def choose_theta(m, R, epsilon, delta, *, d=1, tau=Z.DEFAULT_TAU, support, R_c, candidates=64) -> float:
    """The theta of ``equalised_weights`` minimising the utility model's MSE of calibration
    "global" (module docstring) over theta at the quantiles of m_i min(T_i, support): public
    inputs only. ValueError when no theta admits the calibration (no user with T_i >= 2 support)."""
    m = _counts(m)
    eps, dl = _budget(epsilon, delta)
    best = _best_global(
        m,
        R,
        eps,
        dl,
        d=_d(d),
        tau=tau,
        support=_rho(support),
        R_c=check_positive(R_c, "R_c"),
        candidates=check_int(candidates, "candidates", lo=2, hi=10_000),
    )
    if best is None:
        raise ValueError(
            "no theta admits calibration 'global' here (no user has T_i >= 2 support, or the "
            "guaranteed curvature is too small); use calibration 'ptr'"
        )
    return best[1]


def _ptr_model(mu, cnt, R, d, tau, rho, R_c, kappa0, share, cap, eps, dl, unit_r) -> tuple[float, int]:
    """(predicted MSE, predicted gamma) of ``zhao2024.mechanism`` at (kappa0, share, cap)."""
    a = np.minimum(mu, cap)
    w = a / float(np.dot(cnt, a))
    T = tau * R / np.sqrt(mu)
    c = float(np.max(w * np.minimum(T, rho)))
    b = 2.0 * c / kappa0
    e = 1e-6 * b  # the PTR solver's slack (zhao2024 item 5)
    B = b + 2.0 * e
    eps_t = share * eps
    L = math.log(1.0 / dl) / eps_t  # ln(1 / (2 delta_t)), delta_t = delta / 2
    J = int(math.ceil(L + math.log(0.5 / _FLOOR) / eps_t))
    v = R * R * ITEM_VARIANCE / mu
    wmax = float(w.max())

    def counted(j: int) -> bool:  # level j of item 3, under the model
        slack = T - ((j + 1) * B + e)
        p = special.gammainc(d / 2.0, np.maximum(slack, 0.0) ** 2 / (2.0 * v)) * (slack > 0)  # chi2_d cdf
        if math.isfinite(rho):
            p = np.where(slack >= 2.0 * rho, 1.0, p)
        mean = float(np.dot(cnt, w * p))
        sd = math.sqrt(float(np.dot(cnt, w * w * p * (1.0 - p))))
        return mean - _K_SDS * sd - (j + 1) * wmax > kappa0

    if counted(J - 1):
        gamma = J
    elif not counted(0):
        gamma = 0
    else:
        lo, hi = 0, J - 1  # counted(lo), not counted(hi): a prefix
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if counted(mid) else (lo, mid)
        gamma = lo + 1
    fail = 0.5 * math.exp(-eps_t * (gamma - L)) if gamma >= L else 1.0 - 0.5 * math.exp(-eps_t * (L - gamma))
    sp, sf = unit_r * min(B, 2.0 * R_c), unit_r * 2.0 * R_c
    mse = d * R * R * ITEM_VARIANCE * float(np.dot(cnt, w * w / mu)) + d * ((1.0 - fail) * sp * sp + fail * sf * sf)
    return mse, gamma


def tune_ptr(m, R, epsilon, delta, *, d=1, tau=Z.DEFAULT_TAU, support=None, R_c, candidates=32) -> dict:
    """(kappa0, test_share, cap) for ``zhao2024.mechanism`` minimising the utility model's
    predicted MSE (module docstring): kappa0 in ``TUNED_KAPPAS``, test_share in
    ``TUNED_SHARES``, cap at quantiles of the counts. Public inputs only. Returns the three
    keywords plus ``predicted_mse`` and ``predicted_gamma`` (information)."""
    m = _counts(m)
    R = check_positive(R, "R")
    eps, dl = _budget(epsilon, delta)
    d = _d(d)
    tau = check_positive(tau, "tau")
    rho = math.inf if support is None else check_positive(support, "support")
    R_c = check_positive(R_c, "R_c")
    candidates = check_int(candidates, "candidates", lo=2, hi=10_000)
    mu, cnt = _groups(m)
    caps = np.unique(np.quantile(m, np.linspace(0.0, 1.0, candidates)).round())
    best = None
    for share in TUNED_SHARES:
        b = Z.budget(eps, dl, share)
        unit_r = gaussian_sigma_analytic(1.0, b["eps_release"], b["delta_release"])
        for kappa0 in TUNED_KAPPAS:
            for cap in caps:
                mse, gamma = _ptr_model(mu, cnt, R, d, tau, rho, R_c, kappa0, share, float(cap), eps, dl, unit_r)
                if best is None or mse < best["predicted_mse"]:
                    best = {
                        "kappa0": kappa0,
                        "test_share": share,
                        "cap": float(cap),
                        "predicted_mse": mse,
                        "predicted_gamma": gamma,
                    }
    return best


@dataclass(frozen=True)
class Calibration:
    """``calibrate``'s pick: ``kind`` ("ptr" or "global"), the keywords that parametrise its
    mechanism (``params``), and the predicted MSE of each candidate (information)."""

    kind: str
    params: dict = field(default_factory=dict)
    predicted: dict = field(default_factory=dict)


def calibrate(m, *, R, epsilon, delta, R_c, d=1, tau=Z.DEFAULT_TAU, support=None) -> Calibration:
    """Pick the calibration with the smaller predicted MSE under the utility model: "ptr"
    (``tune_ptr``) or, with a support, "global" (``choose_theta``) when it is admissible.
    Reads only public inputs (the counts, not the dataset): the pick is the same on neighbours."""
    m = _counts(m)
    eps, dl = _budget(epsilon, delta)
    d = _d(d)
    R, R_c = check_positive(R, "R"), check_positive(R_c, "R_c")
    tau = check_positive(tau, "tau")
    ptr = tune_ptr(m, R, eps, dl, d=d, tau=tau, support=support, R_c=R_c)
    predicted = {"ptr": ptr["predicted_mse"], "global": None}
    glob = None
    if support is not None:
        glob = _best_global(
            m, R, eps, dl, d=d, tau=tau, support=check_positive(support, "support"), R_c=R_c, candidates=64
        )
        predicted["global"] = None if glob is None else glob[0]
    if glob is not None and glob[0] < ptr["predicted_mse"]:
        return Calibration("global", {"theta": glob[1]}, predicted)
    return Calibration("ptr", {k: ptr[k] for k in ("kappa0", "test_share", "cap")}, predicted)


def calibrated_mechanism(
    dataset: UserDataset, rng, size=None, *, epsilon, delta, R, R_c, tau=Z.DEFAULT_TAU, support=None, calibration=None
) -> np.ndarray:
    """HLM with the calibration ``calibrate`` picks from the public counts of ``dataset``:
    ``zhao2024.mechanism`` at the tuned (kappa0, test_share, cap), or ``global_mechanism``.
    (epsilon, delta)-DP under ``REPLACE_USER_ITEMS`` either way (module docstring).

    ``calibration``: a ``Calibration`` computed beforehand (``calibrate`` on these counts, to
    spare its cost over many datasets with the same counts). Any fixed calibration that does
    not depend on the records keeps the claim; None computes it here."""
    check_dataset(dataset)
    d = 1 if dataset.values.ndim == 1 else dataset.values.shape[1]
    if calibration is None:
        cal = calibrate(dataset.counts, R=R, epsilon=epsilon, delta=delta, R_c=R_c, d=d, tau=tau, support=support)
    elif isinstance(calibration, Calibration) and calibration.kind in ("ptr", "global"):
        cal = calibration
    else:
        raise TypeError(
            f"calibration must be None or a Calibration of kind 'ptr' or 'global' (from calibrate), got {calibration!r}"
        )
    if cal.kind == "global":
        return global_mechanism(
            dataset, rng, size, epsilon=epsilon, delta=delta, R=R, R_c=R_c, support=support, tau=tau, **cal.params
        )
    return Z.mechanism(
        dataset, rng, size, epsilon=epsilon, delta=delta, R=R, R_c=R_c, tau=tau, support=support, **cal.params
    )


def claim(epsilon, delta) -> ApproxDP:
    """(epsilon, delta)-DP under ``REPLACE_USER_ITEMS``, for every calibration here."""
    _budget(epsilon, delta)
    return ApproxDP(epsilon, delta)
