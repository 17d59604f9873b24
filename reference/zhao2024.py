"""P. Zhao, L. Lai, L. Shen, Q. Li, J. Wu, Z. Liu, "A Huber Loss Minimization Approach to
Mean Estimation under User-Level Differential Privacy", NeurIPS 2024, arXiv:2405.13453.
We have ONLY THE POSTER (NOTES.md): eq. (1) (user-level (eps, delta)-DP, "differ in items
belonging to only one user"), eq. (2)-(3) (the weighted Huber estimator) and eq. (4) (the
release). Everything the poster leaves open is derived below and labelled "derived here,
not from the paper". The baseline WME is in ``zhao2024_wme``. Other calibrations of W, chosen
from public inputs (this propose-test-release with a tuned reserve and test, and a global-
curvature calibration without a test), are proved in ``zhao2024_calibration``.

Data: ``dataset.values`` holds the items, (N,) or (N, d); user i owns m_i >= 1 of them;
y_i is user i's local average. Relation: ``REPLACE_USER_ITEMS`` (one user's items change,
m_i kept: the item counts are public in the imbalanced-user setting). Claim:
``ApproxDP(epsilon, delta)`` (``claim``). The items need no bounded support: the proof
below never uses one (the Huber gradient is bounded whatever y is), which is the point of
the method for heavy tails. ``R`` is the item scale that sets the thresholds. Optionally a
declared ``support`` rho (every item in the L2 ball of radius rho around 0, so every
local average too) tightens the sensitivity (item 1); data outside it is then refused.

The estimator (poster eq. (2)-(3)): mu0 = argmin_s F(s), F(s) = sum_i w_i phi_i(s - y_i),

    phi_i(u) = ||u||^2 / 2            if ||u|| <= T_i,
               T_i ||u|| - T_i^2 / 2  otherwise                                  (eq. 3)

(the vector Huber loss on the L2 norm). Its gradient is psi_i(u) = u min(1, T_i/||u||),
the projection of u onto the ball of radius T_i: continuous, monotone, ||psi_i|| <= T_i.

Adaptive weights and thresholds (derived here, not from the paper; the poster says only
"adjusting the connecting points adaptively" and "adaptive thresholds and weights"):

    T_i = tau R / sqrt(m_i),      w_i = min(m_i, cap) / sum_j min(m_j, cap).

Rationale: the average of m_i items of scale R concentrates within a radius of order
R / sqrt(m_i) of the mean, so T_i = tau R / sqrt(m_i) keeps a typical user in the quadratic
region (where it acts as in a weighted mean) and turns an atypical one into a bounded,
median-like pull; T_i decreases in m_i. A user's weight grows with its data (its average
is more accurate) but is capped so that no single user dominates: the sensitivity below
is driven by c = max_i w_i T_i, and with the cap, w_i T_i = tau R min(m_i, cap) /
(sqrt(m_i) sum_j min(m_j, cap)) is largest at m_i = cap, so a huge user costs no more than
a user of size cap. ``choose_cap`` picks the cap from the PUBLIC counts m_i by minimising a
variance-plus-noise proxy (no privacy cost: the m_i are public under the relation).
tau = 2 by default: for items uniform on [-R, R] (standard deviation R / sqrt 3), T_i is
3.5 standard deviations of y_i.

Why this is private (derived here, not from the paper: the poster does not say how W in
eq. (4) is calibrated; we use propose-test-release, Dwork and Lei 2009, STOC, §3).

1. Local sensitivity of the minimiser. Let D, D' differ in user k only (y_k -> y'_k; m_k,
   w_k, T_k unchanged). Let s = mu0(D), s' = mu0(D'), G = grad F_{D'}. Then
   G(s) = grad F_D(s) + w_k (psi_k(s - y'_k) - psi_k(s - y_k)) = 0 + w_k (...), and psi_k,
   the projection onto the ball of radius T_k, is 1-Lipschitz with norm <= T_k, so the
   difference has norm <= min(2 T_k, ||y_k - y'_k||) <= 2 min(T_k, rho) (rho = the declared
   support radius, infinite by default). So ||G(s)|| <= 2c, c = max_i w_i min(T_i, rho).
   With u = (s' - s)/||s' - s||, h(t) = <G(s + t u), u> is non-decreasing (F_{D'} is convex) and h(||s' - s||) = 0. For
   r > 0 let kappa_r = sum of w_i over users i != k with ||s - y_i|| <= T_i - r: on
   t in [0, r] such a user stays in its quadratic region and adds slope w_i to h; every
   other user adds a non-decreasing term. So h(t) >= -2c + t kappa_r for t <= r. Hence if
   r kappa_r > 2c, then ||s' - s|| <= 2c / kappa_r < r: were ||s' - s|| > r, then
   h(||s' - s||) >= h(r) > 0, a contradiction; so ||s' - s|| <= r and 0 >= -2c + ||s' - s|| kappa_r.
2. Propose. b = 2c / kappa0 with a public kappa0 in (0, 1) (default 1/2): "half of the
   weight robustly in the quadratic region". D is SAFE when every neighbour is within b.
   By 1, D is safe when kappa_b(D) > kappa0 (then b kappa_b > 2c and 2c/kappa_b < b).
3. Test: a distance to unsafety of sensitivity 1. Let K(D, t) = sum of w_i over users with
   margin T_i - ||s - y_i|| >= t, w_max = max_i w_i, B = b (+ solver slack, item 5), and
       gamma(D) = #{ j in {0, 1, ..., J-1} : K(D, (j+1) B) - (j+1) w_max > kappa0 }.
   (a) gamma(D) >= 1 implies D safe: kappa_b(D) >= K(D, b) - w_max > kappa0.
   (b) gamma has sensitivity 1: if gamma(D) >= 1, D is safe, so ||s(D') - s(D)|| <= b, and
       every user i != k counted in K(D, (j+2) B) is counted in K(D', (j+1) B); so
       K(D', (j+1)B) - (j+1) w_max >= K(D, (j+2)B) - (j+2) w_max, i.e. each j+1 counted for
       D gives j counted for D': gamma(D') >= gamma(D) - 1 (trivially true if gamma(D) = 0;
       swap D and D' for the other side). The counted j form a prefix {0..gamma-1} because
       K(D, .) decreases and (j+1) w_max increases. Capping at J keeps sensitivity 1.
   The test passes when gamma(D) + Z > L, Z ~ Laplace(1/eps_t), L = ln(1/(2 delta_t)) / eps_t
   (``mechanism``). It is eps_t-DP (gamma has sensitivity 1); if gamma(D) = 0 it passes with
   probability P(Z > L) = exp(-eps_t L) / 2 = delta_t (``tests/test_zhao2024.py`` checks it).
4. Release (poster eq. (4)): pass -> Clip(mu0, R_c) + N(0, sigma_p^2 I), sigma_p calibrated
   to L2 sensitivity min(B, 2 R_c) at (eps_r, delta_r) (analytic Gaussian, Balle and Wang
   2018); fail -> the GLOBAL FALLBACK Clip(mu0, R_c) + N(0, sigma_f^2 I), sigma_f calibrated
   to 2 R_c, the sensitivity of a point clipped to the ball of radius R_c on ANY pair (so
   the mechanism is private on every dataset, not only typical ones). Clip is the
   projection onto that ball: 1-Lipschitz, so it never increases a sensitivity.
   Case analysis for neighbours D, D': if gamma(D) >= 1 or gamma(D') >= 1, the pass branch
   is (eps_r, delta_r) for this pair, the fail branch always is, and the test is eps_t-DP:
   adaptive composition gives (eps_t + eps_r, delta_r). If gamma(D) = gamma(D') = 0, both
   pass with probability <= delta_t; the fail branch composes as before: (eps_t + eps_r,
   delta_r + delta_t). CLAIM: (epsilon, delta)-DP with epsilon = eps_t + eps_r and
   delta = delta_t + delta_r; by default eps_t = epsilon / 4, delta_t = delta_r = delta / 2
   (``budget``).
5. Solver slack. The code releases an approximate minimiser s_hat. ``solve`` stops at a
   gradient norm eta <= e kappa0 / 2 with e = SOLVER_SLACK * b; by the argument of item 1
   (with G = grad F_D at s_hat and r = e) ||s_hat - s|| <= eta / K(D, e) <= e whenever
   K(D, e) > kappa0 / 2, which holds whenever gamma(D) >= 1. So s_hat moves by at most
   b + 2e between neighbours: every margin above uses s_hat and B = b + 2e, and thresholds
   are shifted by e, so (a) and (b) hold for s_hat. ASSUMPTION (checked at every call):
   ``solve`` reaches eta <= e kappa0 / 2. Where it does not, ``release_plan`` raises
   RuntimeError instead of releasing (fail loudly): (b) needs the neighbours of a dataset
   with gamma >= 2 solved to the same accuracy, and those are strongly convex (curvature
   >= kappa0) around their minimiser, where damped Newton converges quadratically.

The cost: one sort of the n margins for gamma (O(n log n), not quadratic in n) and a few
Newton steps of O(n d^2) each.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import (
    check_dataset, check_delta, check_epsilon, check_finite_array, check_generator, check_int, check_noise_scale,
    check_nonnegative, check_positive, check_size,
)
from .claims import ApproxDP
from .data import UserDataset
from .mechanisms import gaussian_sigma_analytic

__all__ = [
    "DEFAULT_TAU", "DEFAULT_KAPPA0", "DEFAULT_TEST_SHARE", "SOLVER_SLACK", "local_averages",
    "thresholds", "weights", "choose_cap", "huber_loss", "huber_gradient", "solve", "statistic",
    "proposed_sensitivity", "ptr_distance", "budget", "Plan", "release_plan", "mechanism", "claim",
]

DEFAULT_TAU = 2.0          # T_i = tau R / sqrt(m_i)          (derived here, not from the paper)
DEFAULT_KAPPA0 = 0.5       # proposed weight share in the quadratic region (derived here)
DEFAULT_TEST_SHARE = 0.25  # eps_t = share * epsilon; delta split in halves (derived here)
SOLVER_SLACK = 1e-6        # e = SOLVER_SLACK * b: certified distance of s_hat to the minimiser
_MAX_NEWTON = 100
_PASS_FAIL_FLOOR = 1e-12   # J makes P(fail | gamma = J) <= this (the cap only bounds the work)


# --------------------------------------------------------------------------- inputs
def local_averages(dataset: UserDataset) -> tuple[np.ndarray, np.ndarray]:
    """(y, m): the local averages y_i as an (n, d) array (d = 1 for scalar items) and the
    item counts m_i, (n,), in the dataset's user order."""
    check_dataset(dataset)
    y = dataset.local_averages()
    return (y[:, None] if y.ndim == 1 else y), dataset.counts.astype(float)


def _counts(m) -> np.ndarray:
    m = check_finite_array(m, "m", ndim=(1,))
    if m.size == 0:
        raise ValueError("m must hold one item count per user, got an empty array")
    bad = (m < 1) | (m != np.round(m))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"m must hold integers >= 1 (a user with no items has no average); m[{i}] = {m[i]!r}")
    return m


def thresholds(m, R, tau=DEFAULT_TAU) -> np.ndarray:
    """T_i = tau R / sqrt(m_i) (derived here, not from the paper): the concentration radius
    of an average of m_i items of scale R, times tau. Decreasing in m_i."""
    m = _counts(m)
    return check_positive(tau, "tau") * check_positive(R, "R") / np.sqrt(m)


def weights(m, cap) -> np.ndarray:
    """w_i = min(m_i, cap) / sum_j min(m_j, cap) (derived here, not from the paper):
    non-negative, summing to 1, non-decreasing in m_i, and no user above weight cap / sum."""
    m = _counts(m)
    cap = check_positive(cap, "cap")
    if cap < 1:
        raise ValueError(f"cap must be >= 1 (a weight below that of a one-item user), got {cap!r}")
    a = np.minimum(m, cap)
    return a / a.sum()


def _noise_factor(epsilon: float, delta: float) -> float:
    """sigma / sensitivity of the classical Gaussian mechanism (DR14 Thm A.1); used only
    to rank caps in ``choose_cap``, never to calibrate noise."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def choose_cap(m, R, epsilon, delta, *, d=1, tau=DEFAULT_TAU, kappa0=DEFAULT_KAPPA0,
               test_share=DEFAULT_TEST_SHARE, candidates=64, support=None) -> float:
    """The cap minimising R^2 sum_i w_i^2 / m_i + d (b noise_factor)^2 over caps at the
    quantiles of the PUBLIC counts m (derived here, not from the paper).

    The first term bounds the variance of the weighted mean of the local averages (items of
    variance <= R^2 per coordinate); the second is the variance of the pass-branch noise
    with b = 2 max_i w_i min(T_i, support) / kappa0 (``proposed_sensitivity``). Only public quantities
    enter, so the choice costs no privacy.
    """
    m = _counts(m)
    R = check_positive(R, "R")
    d, candidates = check_int(d, "d"), check_int(candidates, "candidates", lo=2, hi=10_000)
    b = budget(epsilon, delta, test_share)
    factor = _noise_factor(b["eps_release"], b["delta_release"])
    T = np.minimum(thresholds(m, R, tau), _support(support))
    kappa0 = _kappa0(kappa0)
    caps = np.unique(np.quantile(m, np.linspace(0.0, 1.0, candidates)).round())
    best, best_cap = math.inf, float(caps[-1])
    for cap in caps:                                    # <= `candidates` O(n) passes
        a = np.minimum(m, cap)
        w = a / a.sum()
        c = float(np.max(w * T))
        proxy = R * R * float(np.sum(w * w / m)) + d * (2.0 * c / kappa0 * factor) ** 2
        if proxy < best:
            best, best_cap = proxy, float(cap)
    return best_cap


def _kappa0(kappa0) -> float:
    k = check_positive(kappa0, "kappa0")
    if not k < 1.0:
        raise ValueError(f"kappa0 must lie in (0, 1) (a share of the total weight 1), got {k!r}")
    return k


# --------------------------------------------------------------------------- the estimator
def _problem(y, w, T) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """y (n, d) finite, w (n,) >= 0 with a positive sum, T (n,) > 0."""
    y = check_finite_array(y, "y", ndim=(2,))
    n = y.shape[0]
    w = check_finite_array(w, "w", ndim=(1,))
    T = check_finite_array(T, "T", ndim=(1,))
    if n == 0 or w.shape != (n,) or T.shape != (n,):
        raise ValueError(f"y must hold n >= 1 rows and w, T shape (n,); got y {y.shape}, w {w.shape}, T {T.shape}")
    if (w < 0).any() or not w.sum() > 0:
        raise ValueError("w must be non-negative with a positive sum (weights)")
    if (T <= 0).any():
        i = int(np.argmax(T <= 0))
        raise ValueError(f"T must be > 0 (a Huber threshold); T[{i}] = {T[i]!r}")
    return y, w, T


def _point(s, d: int) -> np.ndarray:
    s = check_finite_array(s, "s", ndim=(0, 1)).reshape(-1)
    if s.shape != (d,):
        raise ValueError(f"s must be a point of R^{d} (shape ({d},)), got shape {s.shape}")
    return s


def huber_loss(s, y, w, T) -> float:
    """F(s) = sum_i w_i phi_i(s - y_i), eq. (2)-(3); y (n, d), s (d,)."""
    y, w, T = _problem(y, w, T)
    r = np.linalg.norm(_point(s, y.shape[1])[None, :] - y, axis=1)
    return _loss(r, w, T)


def _loss(r, w, T) -> float:
    phi = np.where(r <= T, 0.5 * r * r, T * r - 0.5 * T * T)          # eq. (3), r_i = ||s - y_i||
    return float(np.dot(w, phi))


def huber_gradient(s, y, w, T) -> np.ndarray:
    """grad F(s) = sum_i w_i psi_i(s - y_i), psi_i(u) = u min(1, T_i / ||u||); shape (d,)."""
    y, w, T = _problem(y, w, T)
    u = _point(s, y.shape[1])[None, :] - y                              # (n, d)
    r = np.linalg.norm(u, axis=1)
    a = w * T / np.maximum(r, T)                                       # w_i min(1, T_i/||u_i||)
    return a @ u


def solve(y, w, T, *, eta_target) -> tuple[np.ndarray, float]:
    """argmin_s F(s) by damped Newton with majorise-minimise (IRLS) fallback steps; returns
    (s_hat, ||grad F(s_hat)||). Stops when the gradient norm is <= ``eta_target``.

    F is convex and C^1. Hessian where no user sits on its threshold:
    H = sum_quadratic w_i I + sum_linear w_i (T_i / r_i) (I - u_i u_i^T / r_i^2). The IRLS step
    s <- sum a_i y_i / sum a_i, a_i = w_i min(1, T_i / r_i), minimises a quadratic majoriser
    of F, so it never increases F; it is taken whenever the Newton step fails Armijo.
    """
    y, w, T = _problem(y, w, T)
    n, d = y.shape
    eta_target = check_positive(eta_target, "eta_target")
    s = w @ y / w.sum()                                   # start at the weighted mean
    F = _loss(np.linalg.norm(s[None, :] - y, axis=1), w, T)
    for _ in range(_MAX_NEWTON):
        u = s[None, :] - y
        r = np.linalg.norm(u, axis=1)
        lin = r > T
        a = w * T / np.maximum(r, T)                       # w_i min(1, T_i / r_i)
        g = a @ u
        gn = float(np.linalg.norm(g))
        if gn <= eta_target:
            return s, gn
        ul = u[lin] / r[lin, None]
        H = a.sum() * np.eye(d) - (ul * a[lin, None]).T @ ul
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:     # singular H: every user in its linear region (H = 0 in
            step = None                   # d = 1) or collinear ones: the IRLS step below moves instead
        moved = False
        if step is not None and np.all(np.isfinite(step)):
            t, slope = 1.0, float(g @ step)
            for _ in range(40):                               # Armijo backtracking
                cand = s - t * step
                Fc = _loss(np.linalg.norm(cand[None, :] - y, axis=1), w, T)
                if Fc <= F - 1e-4 * t * slope:
                    s, F, moved = cand, Fc, True
                    break
                t *= 0.5
        if not moved:                                         # IRLS (majorise-minimise) step
            cand = a @ y / a.sum()
            Fc = _loss(np.linalg.norm(cand[None, :] - y, axis=1), w, T)
            if Fc >= F and np.array_equal(cand, s):
                break
            s, F = cand, min(F, Fc)
    return s, float(np.linalg.norm(huber_gradient(s, y, w, T)))


def _check_support(dataset, support) -> None:
    if support is None:
        return
    rho = _support(support)
    r = np.abs(dataset.values) if dataset.values.ndim == 1 else np.linalg.norm(dataset.values, axis=1)
    if (r > rho).any():
        i = int(np.argmax(r > rho))
        raise ValueError(f"dataset: item {i} has norm {r[i]!r} > support = {rho!r} (the declared support "
                         "the sensitivity bound assumes); pass support=None to drop the assumption")


def _estimate(dataset, epsilon, delta, R, tau, cap, kappa0, test_share, support=None):
    """(y, w, T, cap, b, e, mu0): the stages up to the certified minimiser."""
    y, m = local_averages(dataset)
    _check_support(dataset, support)
    R = check_positive(R, "R")
    kappa0 = _kappa0(kappa0)
    cap = choose_cap(m, R, epsilon, delta, d=y.shape[1], tau=tau, kappa0=kappa0, test_share=test_share,
                     support=support) if cap is None else check_positive(cap, "cap")
    w, T = weights(m, cap), thresholds(m, R, tau)
    b, _ = proposed_sensitivity(w, T, kappa0, support)
    e = SOLVER_SLACK * b                                  # item 5
    target = e * kappa0 / 2.0
    mu0, eta = solve(y, w, T, eta_target=target)
    if not eta <= target:
        raise RuntimeError(f"solve stopped at gradient norm {eta:.3g} > {target:.3g} (the certificate "
                           "of item 5 of the module docstring); refusing to release")
    return y, w, T, float(cap), b, e, mu0


def statistic(dataset: UserDataset, *, R, epsilon, delta, tau=DEFAULT_TAU, cap=None,
              kappa0=DEFAULT_KAPPA0, test_share=DEFAULT_TEST_SHARE, support=None) -> np.ndarray:
    """mu0 of eq. (2), unclipped and noise-free: (d,) (a 1-element array for scalar items).
    ``cap=None`` uses ``choose_cap`` (which reads epsilon and delta); pass ``cap`` to fix it."""
    budget(epsilon, delta, test_share)
    return _estimate(dataset, epsilon, delta, R, tau, cap, kappa0, test_share, support)[-1]


# --------------------------------------------------------------------------- PTR
def _support(support) -> float:
    return math.inf if support is None else check_positive(support, "support")


def proposed_sensitivity(w, T, kappa0=DEFAULT_KAPPA0, support=None) -> tuple[float, float]:
    """(b, c): c = max_i w_i min(T_i, support) (half of one user's largest change of
    gradient, item 1), b = 2 c / kappa0 (item 2 of the module docstring: the local
    sensitivity when a kappa0 share of the weight sits robustly in the quadratic region)."""
    w = check_finite_array(w, "w", ndim=(1,))
    _, w, T = _problem(np.zeros((w.size, 1)), w, T)
    c = float(np.max(w * np.minimum(T, _support(support))))
    if not c > 0:
        raise ValueError(f"max_i w_i T_i must be > 0, got {c!r}")
    return 2.0 * c / _kappa0(kappa0), c


def ptr_distance(margins, w, *, B, e, kappa0=DEFAULT_KAPPA0, J) -> int:
    """gamma = #{j < J : K((j+1) B + e) - (j+1) w_max > kappa0}, K(t) = sum of w_i with
    margin_i = T_i - ||s_hat - y_i|| >= t (item 3 of the module docstring; sensitivity 1)."""
    margins = check_finite_array(margins, "margins", ndim=(1,))
    w = check_finite_array(w, "w", ndim=(1,))
    if margins.size == 0 or w.shape != margins.shape or (w < 0).any():
        raise ValueError(f"margins and w must be non-empty of one shape, w >= 0; got {margins.shape}, {w.shape}")
    B, e = check_positive(B, "B"), check_nonnegative(e, "e")
    J = check_int(J, "J", lo=1)
    order = np.argsort(margins)                            # ascending
    ms = margins[order]
    suffix = np.concatenate([np.cumsum(w[order][::-1])[::-1], [0.0]])   # suffix[k] = sum w of ms[k:]
    j = np.arange(J)
    K = suffix[np.searchsorted(ms, (j + 1) * B + e, side="left")]       # weight with margin >= t
    ok = K - (j + 1) * float(w.max()) > _kappa0(kappa0)
    return int(np.argmin(ok)) if not ok.all() else J   # the counted j form a prefix


def budget(epsilon, delta, test_share=DEFAULT_TEST_SHARE) -> dict:
    """The split of (epsilon, delta) (derived here): eps_t = share * epsilon for the test,
    eps_r = epsilon - eps_t for the release, delta_t = delta_r = delta / 2; the claim is
    (eps_t + eps_r, delta_t + delta_r) (item 4 of the module docstring)."""
    eps, dl = check_epsilon(epsilon), check_delta(delta)
    if not 0.0 < dl < 1.0:
        raise ValueError(f"delta must lie in (0, 1) (the Gaussian noise and the test need delta > 0), got {dl!r}")
    share = check_positive(test_share, "test_share")
    if not share < 1.0:
        raise ValueError(f"test_share must lie in (0, 1), got {share!r}")
    return {"eps_test": share * eps, "eps_release": eps - share * eps,
            "delta_test": dl / 2, "delta_release": dl / 2}


@dataclass(frozen=True)
class Plan:
    """Everything ``mechanism`` computes before drawing noise (for tests and reports)."""

    mu0: np.ndarray          # (d,) the (approximate) minimiser, unclipped
    clipped: np.ndarray      # (d,) Clip(mu0, R_c)
    w: np.ndarray            # (n,) weights
    T: np.ndarray            # (n,) thresholds
    cap: float
    b: float                 # proposed sensitivity 2c / kappa0, c = max w_i min(T_i, support)
    B: float                 # b + 2e (solver slack)
    e: float
    gamma: int               # the PTR distance (sensitivity 1)
    J: int                   # its cap
    threshold: float         # pass iff gamma + Laplace(1/eps_t) > threshold
    sigma_pass: float
    sigma_fallback: float
    budget: dict


def release_plan(dataset: UserDataset, *, epsilon, delta, R, R_c, tau=DEFAULT_TAU, cap=None,
                 kappa0=DEFAULT_KAPPA0, test_share=DEFAULT_TEST_SHARE, support=None) -> Plan:
    """The noise-free part of the mechanism: weights, mu0, the PTR distance, the noise scales."""
    bud = budget(epsilon, delta, test_share)
    R_c = check_positive(R_c, "R_c")
    y, w, T, cap, b, e, mu0 = _estimate(dataset, epsilon, delta, R, tau, cap, kappa0, test_share, support)
    B = b + 2.0 * e                                                    # item 5
    margins = T - np.linalg.norm(mu0[None, :] - y, axis=1)             # T_i - ||s_hat - y_i||
    L = math.log(1.0 / (2.0 * bud["delta_test"])) / bud["eps_test"]   # item 3
    J = int(math.ceil(L + math.log(0.5 / _PASS_FAIL_FLOOR) / bud["eps_test"]))
    gamma = ptr_distance(margins, w, B=B, e=e, kappa0=kappa0, J=J)
    clipped = mu0 * min(1.0, R_c / max(float(np.linalg.norm(mu0)), np.finfo(float).tiny))  # Clip, eq. (4)
    sigma_pass = gaussian_sigma_analytic(min(B, 2.0 * R_c), bud["eps_release"], bud["delta_release"])
    sigma_fb = gaussian_sigma_analytic(2.0 * R_c, bud["eps_release"], bud["delta_release"])
    check_noise_scale(sigma_pass, clipped, "sigma_pass")
    return Plan(mu0=mu0, clipped=clipped, w=w, T=T, cap=cap, b=b, B=B, e=e, gamma=gamma, J=J,
                threshold=L, sigma_pass=sigma_pass, sigma_fallback=sigma_fb, budget=bud)


def mechanism(dataset: UserDataset, rng, size=None, *, epsilon, delta, R, R_c, tau=DEFAULT_TAU,
              cap=None, kappa0=DEFAULT_KAPPA0, test_share=DEFAULT_TEST_SHARE, support=None) -> np.ndarray:
    """HLM, poster eq. (4): Clip(mu0, R_c) + W, with W calibrated by propose-test-release.

    Shape: () or (size,) for scalar items, (d,) or (size, d) otherwise. Each of the ``size``
    releases draws its own test noise and its own W, so each is (epsilon, delta)-DP on its own
    (``claim``). See the module docstring, "Why this is private".
    """
    rng = check_generator(rng)
    size = check_size(size)
    p = release_plan(dataset, epsilon=epsilon, delta=delta, R=R, R_c=R_c, tau=tau, cap=cap,
                     kappa0=kappa0, test_share=test_share, support=support)
    k = 1 if size is None else size
    Z = rng.laplace(0.0, 1.0 / p.budget["eps_test"], k)               # the test's noise
    passed = p.gamma + Z > p.threshold                                 # item 3
    sigma = np.where(passed, p.sigma_pass, p.sigma_fallback)           # item 4
    out = p.clipped[None, :] + sigma[:, None] * rng.standard_normal((k, p.clipped.size))
    if dataset.values.ndim == 1:
        out = out[:, 0]
    return out[0] if size is None else out


def claim(epsilon, delta) -> ApproxDP:
    """(epsilon, delta)-DP under ``REPLACE_USER_ITEMS`` (module docstring, item 4)."""
    budget(epsilon, delta)                                  # same checks as the mechanism
    return ApproxDP(epsilon, delta)
