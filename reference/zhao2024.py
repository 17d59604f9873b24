"""P. Zhao, L. Lai, L. Shen, Q. Li, J. Wu, Z. Liu, "A Huber Loss Minimization Approach to
Mean Estimation under User-Level Differential Privacy", NeurIPS 2024, arXiv:2405.13453.
We have ONLY THE POSTER (no full text or code could be found; docs/papers/zhao2024.md): eq. (1) (user-level (eps,
delta)-DP, "differ in items
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
eq. (4) is calibrated; we use propose-test-release, Dwork and Lei 2009, STOC, §3). The item
counts m_i are PUBLIC (the relation keeps them, and the weights and thresholds read them):
a deployment that treats them as private must not use this mechanism as it stands.

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
3. Test: a distance to unsafety of sensitivity 1, computed from the solver's point s_hat and
   its certificate (item 5). Let m_i be the margin lower bounds at s_hat (rigorous: every
   rounding included), K(D, t) = sum of w_i with m_i >= t, w_max = max_i w_i, and
       B = (b + 2e + eps_m)(1 + 4 (J + 2) u),  shift = e + rho0,  t_j = fl((j + 1) B + shift),
       gamma(D) = #{ j in {0, ..., J-1} : K(D, t_j) - (j+1) w_max > kappa0 }  if D is CERTIFIED,
       gamma(D) = 0                                                           otherwise,
   with e the certified accuracy, eps_m the public margin gap (item 5), u = 2^-53 (the factor
   keeps the computed t_j at least b + 2e + eps_m apart in exact arithmetic), rho0 = 0 in
   d = 1 and rho0 = B in d >= 2 (item 5). Each comparison is decided exactly: the sign of
   sum K - (j+1) w_max - kappa0 is the sign of its correctly rounded fsum.
   (a) gamma(D) >= 1 implies D safe: D is certified, so ||s_hat - s*|| < e, and the users
       counted at t_0 >= b + e have true margin >= b at s*: kappa_b(D) >= K(D, t_0) - w_max > kappa0.
   (b) gamma has sensitivity 1: if gamma(D) >= 1, D is safe, so ||s*(D') - s*(D)|| <= b, and
       D' is certified (item 5), so ||s_hat(D') - s_hat(D)|| <= b + 2e. A user i != k loses at
       most that much true margin, and its lower bound lies within eps_m of the truth at both
       sides, so m_i(D') >= m_i(D) - B: every user counted in K(D, t_{j+1}) is counted in
       K(D', t_j), and K(D', t_j) - (j+1) w_max >= K(D, t_{j+1}) - (j+2) w_max: each j+1
       counted for D gives j counted for D', gamma(D') >= gamma(D) - 1 (trivial if gamma(D) = 0;
       swap D and D' for the other side). The counted j form a prefix {0..gamma-1} because
       K(D, .) decreases and (j+1) w_max increases. Capping at J keeps sensitivity 1.
   The test passes when gamma(D) + Z > L, Z ~ Laplace(1/eps_t), L = ln(1/(2 delta_t)) / eps_t
   (``mechanism``). It is eps_t-DP (gamma has sensitivity 1); if gamma(D) = 0 it passes with
   probability P(Z > L) = exp(-eps_t L) / 2 = delta_t (``tests/papers/zhao2024/test_zhao2024.py`` checks it).
4. Release (poster eq. (4)): pass -> Clip(s_hat, R_c) + N(0, sigma_p^2 I), sigma_p calibrated
   to L2 sensitivity min(B + 2 r_c, 2 (R_c + r_c)) at (eps_r, delta_r) (analytic Gaussian, Balle
   and Wang 2018); fail -> the GLOBAL FALLBACK Clip(s_hat, R_c) + N(0, sigma_f^2 I), sigma_f
   calibrated to 2 (R_c + r_c), the sensitivity of a point clipped to the ball of radius R_c
   on ANY pair (so the mechanism is private on every dataset, certified or not). Clip is the
   projection onto that ball: 1-Lipschitz, so it never increases a sensitivity; r_c =
   (2 sqrt(d) + d + 6) u R_c bounds the rounding of the clipped point (``clip``).
   Case analysis for neighbours D, D': if gamma(D) >= 1 or gamma(D') >= 1, both are certified
   (item 5) and the pass branch is (eps_r, delta_r) for this pair, the fail branch always is,
   and the test is eps_t-DP: adaptive composition gives (eps_t + eps_r, delta_r). If gamma(D)
   = gamma(D') = 0, both pass with probability <= delta_t; the fail branch composes as before:
   (eps_t + eps_r, delta_r + delta_t). CLAIM: (epsilon, delta)-DP with epsilon = eps_t + eps_r
   and delta = delta_t + delta_r; by default eps_t = epsilon / 4, delta_t = delta_r = delta / 2
   (``budget``).
5. The solver and its certificate (``zhao2024_solver``; nothing here is assumed to succeed).
   ``solve`` always returns a point s_hat with a rigorous bound eta >= ||grad F(s_hat)|| and is
   CERTIFIED when eta < e K(D, e), e = SOLVER_SLACK * b; then ||s_hat - s*|| < e (its Lemma C).
   An uncertified dataset gets gamma = 0 (item 3), so its release is the fallback w.p. >= 1 -
   delta_t: never an exception. What (b) and item 4 need is that D' IS certified whenever a
   neighbour D has gamma(D) >= 1. Then the users counted at t_0 for D (weight > kappa0 + w_max)
   have, at s*(D'), true margin >= t_0 - e - b >= rho0 + 2e + eps_m, so D' is "(kappa0, rho0)-
   conditioned" and the solver's Theorem 1 (d = 1: the exact root of the piecewise-linear
   gradient) or Theorem 2 (d >= 2: a public number of accelerated-gradient steps from the
   coordinate-wise weighted median; it needs kappa0 >= 1/2, checked, and the strong-convexity
   radius rho0 = B, which is why d >= 2 shifts the thresholds by one B more) certifies it,
   provided the PUBLIC feasibility check 8 E_max <= e kappa0 holds (double precision can
   certify e with these weights; checked on the parameters before any record is read, and
   refused with a ValueError that names n and the cap). Float range: any finite items (the
   local averages are summed on items scaled by 2^-k, k from the public counts; far users
   pull along directions computed from halved coordinates), and no numpy warning is raised.

The cost: sorting the 2n breakpoints (d = 1) or a few Newton steps of O(n d^2) (d >= 2), and
one sort of the n margins for gamma (O(n log n), not quadratic in n).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import (
    check_delta,
    check_epsilon,
    check_finite_array,
    check_generator,
    check_int,
    check_noise_scale,
    check_nonnegative,
    check_positive,
    check_size,
)
from .claims import ApproxDP
from .data import UserDataset, check_dataset
from .mechanisms import gaussian_sigma_analytic
from . import zhao2024_solver as S

__all__ = [
    "DEFAULT_TAU",
    "DEFAULT_KAPPA0",
    "DEFAULT_TEST_SHARE",
    "SOLVER_SLACK",
    "local_averages",
    "thresholds",
    "weights",
    "choose_cap",
    "huber_loss",
    "huber_gradient",
    "solve",
    "statistic",
    "proposed_sensitivity",
    "ptr_distance",
    "budget",
    "clip",
    "Plan",
    "release_plan",
    "mechanism",
    "claim",
]

DEFAULT_TAU = 2.0  # T_i = tau R / sqrt(m_i)          (derived here, not from the paper)
DEFAULT_KAPPA0 = 0.5  # proposed weight share in the quadratic region (derived here)
DEFAULT_TEST_SHARE = 0.25  # eps_t = share * epsilon; delta split in halves (derived here)
SOLVER_SLACK = 1e-6  # e = SOLVER_SLACK * b: certified distance of s_hat to the minimiser
_PASS_FAIL_FLOOR = 1e-12  # J makes P(fail | gamma = J) <= this (the cap only bounds the work)


# --------------------------------------------------------------------------- inputs
def local_averages(dataset: UserDataset) -> tuple[np.ndarray, np.ndarray]:
    """(y, m): the local averages y_i as an (n, d) array (d = 1 for scalar items) and the
    item counts m_i, (n,), in the dataset's user order. Finite for any finite items (summed on
    items scaled by a power of two read from the public counts, ``zhao2024_solver``)."""
    check_dataset(dataset)
    return S._local_averages(dataset.values, dataset), dataset.counts.astype(float)


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


def choose_cap(
    m,
    R,
    epsilon,
    delta,
    *,
    d=1,
    tau=DEFAULT_TAU,
    kappa0=DEFAULT_KAPPA0,
    test_share=DEFAULT_TEST_SHARE,
    candidates=64,
    support=None,
) -> float:
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
    for cap in caps:  # <= `candidates` O(n) passes
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
    phi = np.where(r <= T, 0.5 * r * r, T * r - 0.5 * T * T)  # eq. (3), r_i = ||s - y_i||
    return float(np.dot(w, phi))


def huber_gradient(s, y, w, T) -> np.ndarray:
    """grad F(s) = sum_i w_i psi_i(s - y_i), psi_i(u) = u min(1, T_i / ||u||); shape (d,)."""
    y, w, T = _problem(y, w, T)
    u = _point(s, y.shape[1])[None, :] - y  # (n, d)
    r = np.linalg.norm(u, axis=1)
    a = w * T / np.maximum(r, T)  # w_i min(1, T_i/||u_i||)
    return a @ u


def solve(y, w, T, *, e, kappa0=DEFAULT_KAPPA0, rho) -> S.Solution:
    """argmin_s F(s) with its certificate (item 5; ``zhao2024_solver.solve``): a ``Solution``
    with s_hat = z + delta, a rigorous bound eta on ||grad F(s_hat)||, lower bounds on the
    margins, and ``certified`` (eta < e K(e), so ||s_hat - s*|| < e). Never raises on the
    data: an uncertified point is a result, not an error. ``rho`` is the strong-convexity
    radius of the guaranteed path in d >= 2 (unused in d = 1)."""
    y, w, T = _problem(y, w, T)
    return S._solve(y, w, T, e=check_positive(e, "e"), kappa0=_kappa0(kappa0), rho=check_positive(rho, "rho"))


def _check_support(dataset, support) -> None:
    """The declared support is the domain: items outside it are refused (the sensitivity bound
    assumes them inside). Without a declared support every finite item is in the domain."""
    if support is None:
        return
    rho = _support(support)
    v = dataset.values
    r = S._norms(v[:, None] if v.ndim == 1 else v)
    if (r > rho).any():
        i = int(np.argmax(r > rho))
        raise ValueError(
            f"dataset: item {i} has norm {r[i]!r} > support = {rho!r} (the declared support "
            "the sensitivity bound assumes); pass support=None to drop the assumption"
        )


@dataclass(frozen=True)
class _Public:
    """What the mechanism computes from PUBLIC inputs only (m, d, the parameters), before it
    reads a record; every refusal of the mechanism happens here (or in the domain checks)."""

    w: np.ndarray
    T: np.ndarray
    cap: float
    b: float
    e: float
    eps_margin: float
    B: float
    shift: float
    rho0: float
    J: int
    threshold: float
    r_c: float  # the noise fields are nan when R_c is None (``statistic``)
    sigma_pass: float
    sigma_fallback: float
    budget: dict


def _public(dataset, *, epsilon, delta, R, R_c, tau, cap, kappa0, test_share, support) -> _Public:
    bud = budget(epsilon, delta, test_share)
    check_dataset(dataset)
    R, kappa0 = check_positive(R, "R"), _kappa0(kappa0)
    R_c = None if R_c is None else check_positive(R_c, "R_c")
    d = 1 if dataset.values.ndim == 1 else dataset.values.shape[1]
    if d >= 2 and kappa0 < 0.5:
        raise ValueError(
            f"kappa0 must be >= 1/2 for vector items (d = {d}): the guaranteed solver starts "
            f"from the weighted median (module docstring, item 5), got {kappa0!r}"
        )
    m = dataset.counts.astype(float)
    cap = (
        choose_cap(m, R, epsilon, delta, d=d, tau=tau, kappa0=kappa0, test_share=test_share, support=support)
        if cap is None
        else check_positive(cap, "cap")
    )
    w, T = weights(m, cap), thresholds(m, R, tau)
    b, _ = proposed_sensitivity(w, T, kappa0, support)
    e = SOLVER_SLACK * b  # item 5
    if not S.feasible(w, T, d, e, kappa0):
        raise ValueError(
            f"double precision cannot certify the solver's accuracy e = {e:.3g} for these "
            f"{m.size} users (8 x the rounding bound {S.rounding_bound(w, T, d):.3g} > e kappa0; "
            f"module docstring, item 5): lower the cap ({cap:g}) or the number of users"
        )
    L = math.log(1.0 / (2.0 * bud["delta_test"])) / bud["eps_test"]  # item 3
    J = int(math.ceil(L + math.log(0.5 / _PASS_FAIL_FLOOR) / bud["eps_test"]))
    eps_m = S.margin_gap(T, d)
    B = (b + 2.0 * e + eps_m) * (1.0 + 4.0 * (J + 2) * S.U)  # item 3
    rho0 = 0.0 if d == 1 else B  # item 5
    r_c = sigma_pass = sigma_fb = math.nan
    if R_c is not None:
        r_c = (2.0 * math.sqrt(d) + d + 6.0) * S.U * R_c  # item 4: rounding of Clip
        sigma_pass = gaussian_sigma_analytic(
            min(B + 2.0 * r_c, 2.0 * (R_c + r_c)), bud["eps_release"], bud["delta_release"]
        )
        sigma_fb = gaussian_sigma_analytic(2.0 * (R_c + r_c), bud["eps_release"], bud["delta_release"])
        check_noise_scale(sigma_pass, R_c + r_c, "sigma_pass")  # |Clip| <= R_c + r_c: public
    return _Public(
        w=w,
        T=T,
        cap=float(cap),
        b=b,
        e=e,
        eps_margin=eps_m,
        B=B,
        shift=e + rho0,
        rho0=rho0,
        J=J,
        threshold=L,
        r_c=r_c,
        sigma_pass=sigma_pass,
        sigma_fallback=sigma_fb,
        budget=bud,
    )


def _estimate(dataset, pub: _Public, kappa0, support) -> tuple[np.ndarray, S.Solution]:
    """(y, solution): the local averages and the certified minimiser (item 5). Reads records."""
    _check_support(dataset, support)
    y, _ = local_averages(dataset)
    return y, S._solve(y, pub.w, pub.T, e=pub.e, kappa0=kappa0, rho=max(pub.rho0, pub.e))


def statistic(
    dataset: UserDataset,
    *,
    R,
    epsilon,
    delta,
    tau=DEFAULT_TAU,
    cap=None,
    kappa0=DEFAULT_KAPPA0,
    test_share=DEFAULT_TEST_SHARE,
    support=None,
) -> np.ndarray:
    """mu0 of eq. (2), unclipped and noise-free: (d,) (a 1-element array for scalar items), the
    solver's point rounded to one float per coordinate (certified or not: ``release_plan``
    says which). ``cap=None`` uses ``choose_cap`` (which reads epsilon and delta)."""
    pub = _public(
        dataset,
        epsilon=epsilon,
        delta=delta,
        R=R,
        R_c=None,
        tau=tau,
        cap=cap,
        kappa0=kappa0,
        test_share=test_share,
        support=support,
    )
    return _estimate(dataset, pub, _kappa0(kappa0), support)[1].z


def clip(v, R_c) -> np.ndarray:
    """Clip(v, R_c), the projection onto the ball of radius R_c around 0 (eq. (4)), computed on
    v scaled by its largest entry: no overflow, no warning, for any finite v. Its rounding is at
    most r_c = (2 sqrt(d) + d + 6) u R_c from the exact projection (module docstring, item 4)."""
    v = check_finite_array(v, "v", ndim=(1,))
    R_c = check_positive(R_c, "R_c")
    top = float(np.max(np.abs(v))) if v.size else 0.0
    if top == 0.0:
        return v.copy()
    unit = v / top  # entries in [-1, 1]
    r = float(np.sqrt(unit @ unit))
    return v.copy() if top * r <= R_c else unit * (R_c / r)


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


def ptr_distance(margins, w, *, B, shift, kappa0=DEFAULT_KAPPA0, J) -> int:
    """gamma = #{j < J : K(t_j) - (j+1) w_max > kappa0}, t_j = fl((j+1) B + shift), K(t) = sum of
    w_i with margin_i >= t (item 3 of the module docstring; sensitivity 1). Margins may be -inf
    (far users). Every comparison is exact: where the rounded sum is within its rounding bound
    of 0, the sign of the correctly rounded ``math.fsum`` of the counted weights, -w_max (j+1)
    times and -kappa0 (the sign of the exact sum) decides; the counted j form a prefix."""
    raw = np.asarray(margins)
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"margins must hold real numbers, got dtype {raw.dtype}")
    margins = raw.astype(float, copy=False)
    if margins.ndim != 1 or np.isnan(margins).any() or (margins == np.inf).any():
        raise ValueError("margins must be a 1-d array of real numbers or -inf (no NaN, no +inf)")
    w = check_finite_array(w, "w", ndim=(1,))
    if margins.size == 0 or w.shape != margins.shape or (w < 0).any():
        raise ValueError(f"margins and w must be non-empty of one shape, w >= 0; got {margins.shape}, {w.shape}")
    B, shift = check_positive(B, "B"), check_nonnegative(shift, "shift")
    J = check_int(J, "J", lo=1)
    kappa0 = _kappa0(kappa0)
    order = np.argsort(margins, kind="stable")  # ascending
    ms, ws = margins[order], w[order]
    w_max = float(w.max())
    j = np.arange(J)
    t = (j + 1.0) * B + shift  # t_j, non-decreasing
    k = np.searchsorted(ms, t, side="left")  # ms[k_j:] have margin >= t_j
    suffix = np.concatenate([np.cumsum(ws[::-1])[::-1], [0.0]])  # suffix[k] = sum of ws[k:], rounded
    value = suffix[k] - (j + 1) * w_max - kappa0
    # |rounding of value| <= (n + J + 3) u (sum w + (j + 1) w_max + kappa0) (sequential sums,
    # Higham 2002, eq. 4.4); where |value| is below it, decide the sign exactly (math.fsum).
    slack = 1.01 * (w.size + J + 3) * 2.0**-53 * (float(np.sum(w)) + (j + 1) * w_max + kappa0)
    ok = value > 0
    for i in np.flatnonzero(np.abs(value) <= slack):
        ok[i] = math.fsum(ws[int(k[i]) :].tolist() + [-w_max] * (int(i) + 1) + [-kappa0]) > 0.0
    return int(np.argmin(ok)) if not ok.all() else J  # the counted j form a prefix


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
    return {"eps_test": share * eps, "eps_release": eps - share * eps, "delta_test": dl / 2, "delta_release": dl / 2}


@dataclass(frozen=True)
class Plan:
    """Everything ``mechanism`` computes before drawing noise (for tests and reports)."""

    mu0: np.ndarray  # (d,) the solver's point s_hat rounded (z), unclipped
    clipped: np.ndarray  # (d,) Clip(mu0, R_c)
    w: np.ndarray  # (n,) weights
    T: np.ndarray  # (n,) thresholds
    cap: float
    b: float  # proposed sensitivity 2c / kappa0, c = max w_i min(T_i, support)
    B: float  # (b + 2e + eps_margin)(1 + 4 (J + 2) u): the sensitivity of s_hat (item 3)
    e: float  # the certified accuracy SOLVER_SLACK * b
    eps_margin: float  # public bound on a margin's rounding gap (item 5)
    shift: float  # the thresholds' shift e + rho0 (item 3)
    certified: bool  # the solver's certificate (item 5); False forces gamma = 0
    eta: float  # the certificate's bound on ||grad F(s_hat)||
    gamma: int  # the PTR distance (sensitivity 1)
    J: int  # its cap
    threshold: float  # pass iff gamma + Laplace(1/eps_t) > threshold
    r_c: float  # rounding bound of Clip (item 4)
    sigma_pass: float
    sigma_fallback: float
    budget: dict


def release_plan(
    dataset: UserDataset,
    *,
    epsilon,
    delta,
    R,
    R_c,
    tau=DEFAULT_TAU,
    cap=None,
    kappa0=DEFAULT_KAPPA0,
    test_share=DEFAULT_TEST_SHARE,
    support=None,
) -> Plan:
    """The noise-free part of the mechanism: weights, mu0, the PTR distance, the noise scales.
    Total: every refusal reads public inputs only (``_Public``) or the declared support; no
    dataset in the domain makes it raise or warn (module docstring, item 5)."""
    pub = _public(
        dataset,
        epsilon=epsilon,
        delta=delta,
        R=R,
        R_c=R_c,
        tau=tau,
        cap=cap,
        kappa0=kappa0,
        test_share=test_share,
        support=support,
    )
    kappa0 = _kappa0(kappa0)
    _, sol = _estimate(dataset, pub, kappa0, support)
    gamma = (
        ptr_distance(sol.margins, pub.w, B=pub.B, shift=pub.shift, kappa0=kappa0, J=pub.J) if sol.certified else 0
    )  # item 3: uncertified -> 0
    return Plan(
        mu0=sol.z,
        clipped=clip(sol.z, R_c),
        w=pub.w,
        T=pub.T,
        cap=pub.cap,
        b=pub.b,
        B=pub.B,
        e=pub.e,
        eps_margin=pub.eps_margin,
        shift=pub.shift,
        certified=sol.certified,
        eta=sol.eta,
        gamma=gamma,
        J=pub.J,
        threshold=pub.threshold,
        r_c=pub.r_c,
        sigma_pass=pub.sigma_pass,
        sigma_fallback=pub.sigma_fallback,
        budget=pub.budget,
    )


def mechanism(
    dataset: UserDataset,
    rng,
    size=None,
    *,
    epsilon,
    delta,
    R,
    R_c,
    tau=DEFAULT_TAU,
    cap=None,
    kappa0=DEFAULT_KAPPA0,
    test_share=DEFAULT_TEST_SHARE,
    support=None,
) -> np.ndarray:
    """HLM, poster eq. (4): Clip(mu0, R_c) + W, with W calibrated by propose-test-release.

    Shape: () or (size,) for scalar items, (d,) or (size, d) otherwise. Each of the ``size``
    releases draws its own test noise and its own W, so each is (epsilon, delta)-DP on its own
    (``claim``). See the module docstring, "Why this is private".
    """
    rng = check_generator(rng)
    size = check_size(size)
    p = release_plan(
        dataset,
        epsilon=epsilon,
        delta=delta,
        R=R,
        R_c=R_c,
        tau=tau,
        cap=cap,
        kappa0=kappa0,
        test_share=test_share,
        support=support,
    )
    k = 1 if size is None else size
    Z = rng.laplace(0.0, 1.0 / p.budget["eps_test"], k)  # the test's noise
    passed = p.gamma + Z > p.threshold  # item 3
    sigma = np.where(passed, p.sigma_pass, p.sigma_fallback)  # item 4
    out = p.clipped[None, :] + sigma[:, None] * rng.standard_normal((k, p.clipped.size))
    if dataset.values.ndim == 1:
        out = out[:, 0]
    return out[0] if size is None else out


def claim(epsilon, delta) -> ApproxDP:
    """(epsilon, delta)-DP under ``REPLACE_USER_ITEMS``: one user's items change, and the item
    counts m_i are PUBLIC (kept by the relation, read by the weights and thresholds; module
    docstring, items 1 and 4)."""
    budget(epsilon, delta)  # same checks as the mechanism
    return ApproxDP(epsilon, delta)
