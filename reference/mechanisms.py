"""Noise primitives and privacy accounting shared by every paper module.

Sources (cited at the line below):

- [DR14] C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
  FnT-TCS 9(3-4), 2014. Def. 3.3 / Thm 3.6 (Laplace mechanism); App. A, Thm A.1
  (classical Gaussian mechanism).
- [BW18] B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential
  Privacy: Analytical Calibration and Optimal Denoising", ICML 2018, arXiv:1805.06530v2.
  Thm 8 (exact (eps, delta) condition of the Gaussian mechanism).
- [M17] I. Mironov, "Renyi Differential Privacy", CSF 2017, arXiv:1702.07476v3.
  Prop. 1 (composition), Prop. 3 (RDP -> (eps, delta)), Prop. 7 (Renyi divergence of two Gaussians) and Cor. 3
  (Gaussian mechanism).
- [CKS20] C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential
  Privacy", NeurIPS 2020, arXiv:2004.00010v4, Prop. 12 (tighter RDP -> (eps, delta)),
  as implemented in dp_accounting's ``rdp_privacy_accountant.compute_epsilon``.
- [DRS22] J. Dong, A. Roth, W. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 84(1),
  2022, arXiv:1905.02383v3. Thm 2.7 (the Gaussian mechanism is Delta/sigma-GDP), Cor. 3.3
  (composition); the claim is ``claims.GaussianDP``.
- The l2-Laplace ("exp(-eta ||z||_2)") noise of Acharya et al. 2024 (PDP-OP); the
  sampler matches the authors' public code (github krishnacharya/pp-ridge; docs/papers/acharya2024.md).

Conventions: randomness only from an explicit ``numpy.random.Generator``; ``size=None``
is one release, ``size=m`` stacks m independent releases on axis 0. Each stacked
release carries the stated guarantee on its own; releasing all m of them composes.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from ._checks import (
    MAGNITUDE,
    check_delta,
    check_epsilon,
    check_finite_array,
    check_generator,
    check_int,
    check_noise_scale,
    check_nonnegative,
    check_positive,
    check_sensitivity,
    check_size,
)

__all__ = [
    "DEFAULT_RDP_ORDERS",
    "laplace_scale",
    "laplace_mechanism",
    "gaussian_sigma_classical",
    "gaussian_sigma_analytic",
    "gaussian_mechanism",
    "gaussian_gdp_mu",
    "l2_laplace_noise",
    "l2_laplace_mechanism",
    "clip_interval",
    "clip_l2",
    "safe_norms",
    "gaussian_rdp",
    "compose_rdp",
    "rdp_to_dp",
    "rdp_delta",
]

_MAX_ELEMENTS = 10**9  # noise values drawn by one call (8 GB of doubles)

# The orders used by the Krichene et al. 2023 authors' accounting code (google-research,
# dp_alternating_minimization; docs/papers/krichene2023.md).
DEFAULT_RDP_ORDERS = np.concatenate([np.linspace(1.1, 10.9, 99), np.arange(11, 64)])


def _release_shape(size, value_shape: tuple) -> tuple:
    """() or (k,) for one release; (size,) or (size, k) for ``size`` releases."""
    size = check_size(size)
    return value_shape if size is None else (size, *value_shape)


def _value(value) -> tuple[float | np.ndarray, tuple]:
    """A finite scalar or (k,) value, as a numpy `loc` (a float when scalar: fast path)."""
    v = check_finite_array(value, "value", ndim=(0, 1))
    return (float(v) if v.ndim == 0 else v), v.shape


def _positive_delta(delta) -> float:
    d = check_delta(delta)
    if d == 0.0:
        raise ValueError("delta must lie in (0, 1) here (delta = 0 needs infinite noise), got 0.0")
    return d


# ----------------------------------------------------------------------------- Laplace
def laplace_scale(sensitivity, epsilon) -> float:
    """b = Delta_1 / eps  [DR14, Def. 3.3 / Thm 3.6]; Delta_1 is the L1 sensitivity."""
    return check_noise_scale(check_sensitivity(sensitivity) / check_epsilon(epsilon), name="Laplace scale")


def laplace_mechanism(value, sensitivity, epsilon, rng, size=None) -> np.ndarray:
    """value + Lap(0, b)^k with b = Delta_1 / eps; shape () / (k,) or (size,) / (size, k).

    Why this is private [DR14, Thm 3.6]: if ||f(D) - f(D')||_1 <= Delta_1, the density
    ratio at any output x is exp((||x - f(D')||_1 - ||x - f(D)||_1) / b)
    <= exp(Delta_1 / b) = e^eps by the triangle inequality; ``laplace_scale`` sets b.
    """
    b = laplace_scale(sensitivity, epsilon)
    loc, shape = _value(value)
    check_noise_scale(b, loc, "Laplace scale")  # the noise must be able to move the float
    rng = check_generator(rng)
    # Draw with loc=value (numpy broadcasts it): no second pass over the output.
    return np.asarray(rng.laplace(loc, b, _release_shape(size, shape)))


# ---------------------------------------------------------------------------- Gaussian
def gaussian_sigma_classical(sensitivity, epsilon, delta) -> float:
    """sigma = Delta_2 sqrt(2 ln(1.25/delta)) / eps, valid for 0 < eps < 1  [DR14, Thm A.1]."""
    eps = check_epsilon(epsilon)
    if eps >= 1.0:
        raise ValueError(f"epsilon must be < 1 for the classical Gaussian bound (DR14 Thm A.1), got {eps!r}")
    d = _positive_delta(delta)
    return check_sensitivity(sensitivity) * math.sqrt(2.0 * math.log(1.25 / d)) / eps


def _log_gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """log delta(sigma), [BW18, Thm 8]:
    delta(sigma) = Phi(Delta/(2 sigma) - eps sigma/Delta) - e^eps Phi(-Delta/(2 sigma) - eps sigma/Delta).

    Both terms are formed in log space (log_ndtr) and subtracted as
    p * (1 - q/p) = exp(log p) * -expm1(log q - log p), so tiny deltas keep their digits.
    """
    u, v = sensitivity / (2.0 * sigma), epsilon * sigma / sensitivity
    log_p = float(log_ndtr(u - v))
    log_q = epsilon + float(log_ndtr(-u - v))
    if log_q >= log_p:  # only by rounding, far in the tail: delta(sigma) = 0 there
        return -math.inf
    return log_p + math.log(-math.expm1(log_q - log_p))


# Doublings allowed when bracketing sigma: 2^400 ~ 1e120 spans MAGNITUDE's 1e100 ratios.
_BRACKET_STEPS = 400


def gaussian_sigma_analytic(sensitivity, epsilon, delta, tol=1e-12) -> float:
    """The smallest sigma with delta(sigma) <= delta  [BW18, Thm 8], any eps > 0.

    delta(sigma) decreases in sigma, so we root-find log delta(e^s) = log delta in
    s = log sigma with ``brentq`` (``tol`` is the relative tolerance on sigma), then round
    up: the returned sigma satisfies delta(sigma) <= delta as computed here. ``tol`` lies in
    [1e-15, 1e-2]; every loop is bounded (RuntimeError naming the inputs if one runs out).

    Why this is private: [BW18, Thm 8] says N(0, sigma^2 I) noise on an L2-sensitivity
    Delta query is (eps, delta)-DP iff delta(sigma) <= delta, which the loop below enforces.
    """
    Delta, eps, d = check_sensitivity(sensitivity), check_epsilon(epsilon), _positive_delta(delta)
    tol = check_positive(tol, "tol", lo=1e-15, hi=1e-2)
    log_d = math.log(d)

    def f(s):  # decreasing in s; root at the analytic sigma
        return _log_gaussian_delta(math.exp(s), Delta, eps) - log_d

    # DR14's guess, in logs so that no intermediate overflows: finite for every input in range.
    s_hi = math.log(Delta) - math.log(eps) + 0.5 * math.log(2.0 * math.log(1.25 / d))
    s_lo = s_hi
    for _ in range(_BRACKET_STEPS):  # sigma doubles: delta(sigma) -> 0
        if f(s_hi) <= 0:
            break
        s_hi += math.log(2.0)
    else:
        raise RuntimeError(
            f"gaussian_sigma_analytic: no sigma with delta(sigma) <= delta = {d!r} found "
            f"below {math.exp(s_hi):.3g} (sensitivity={Delta!r}, epsilon={eps!r})"
        )
    for _ in range(_BRACKET_STEPS):  # sigma halves: delta(sigma) -> 1 > delta
        if f(s_lo) > 0:
            break
        s_lo -= math.log(2.0)
    else:
        raise RuntimeError(
            f"gaussian_sigma_analytic: delta(sigma) <= delta = {d!r} even at sigma = "
            f"{math.exp(s_lo):.3g} (sensitivity={Delta!r}, epsilon={eps!r})"
        )
    s = brentq(f, s_lo, s_hi, xtol=tol / 4)
    sigma = math.exp(min(s + tol / 2, s_hi))  # |s - s*| <= tol/4 + rounding: step above s*
    for _ in range(1000):  # guard against rounding in f at the root
        if f(math.log(sigma)) <= 0:
            return check_noise_scale(sigma, name="sigma")
        sigma *= 1.0 + tol
    raise RuntimeError(f"analytic Gaussian calibration did not converge (sigma={sigma!r})")


def gaussian_mechanism(value, sigma, rng, size=None) -> np.ndarray:
    """value + N(0, sigma^2 I); shape () / (k,) or (size,) / (size, k).

    Why this is private: with L2 sensitivity Delta, sigma from ``gaussian_sigma_classical``
    [DR14, Thm A.1] or ``gaussian_sigma_analytic`` [BW18, Thm 8] gives (eps, delta)-DP;
    ``gaussian_rdp`` gives its Renyi curve [M17, Prop. 7 / Cor. 3], and ``gaussian_gdp_mu``
    its exact Gaussian-DP parameter mu = Delta / sigma [DRS22, Thm 2.7].
    """
    sigma = check_positive(sigma, "sigma")
    loc, shape = _value(value)
    check_noise_scale(sigma, loc, "sigma")
    rng = check_generator(rng)
    return np.asarray(rng.normal(loc, sigma, _release_shape(size, shape)))


def gaussian_gdp_mu(sensitivity, sigma) -> float:
    """mu = Delta_2 / sigma: ``gaussian_mechanism`` with noise sigma on a query of L2
    sensitivity Delta_2 is mu-GDP, and no smaller mu holds [DRS22, Thm 2.7].

    Derivation. Let v = f(D) - f(D'), ||v||_2 <= Delta_2. Testing N(f(D), sigma^2 I) against
    N(f(D'), sigma^2 I) is, after subtracting f(D'), rotating v onto the first axis and dividing
    by sigma (bijections, so the trade-off function is unchanged), testing N(0, I) against
    N(||v||/sigma e_1, I); the other coordinates are identical N(0, 1) noise and carry no
    information, so the trade-off function is T(N(0, 1), N(||v||/sigma, 1)) = G_{||v||/sigma}
    (Neyman-Pearson: the optimal test thresholds x_1). G_m decreases in m, so every
    neighbouring pair is above G_{Delta_2 / sigma}: mu = Delta_2 / sigma-GDP. A pair with
    ||v|| = Delta_2 attains the curve, so the mu is exact.
    """
    return check_sensitivity(sensitivity) / check_positive(sigma, "sigma")


# --------------------------------------------------------------------- l2-Laplace (K-norm)
def l2_laplace_noise(eta, d, rng, size=None) -> np.ndarray:
    """z in R^d with density proportional to exp(-eta ||z||_2); shape (d,) or (size, d).

    In polar coordinates z = r u (r >= 0, u on the sphere S^{d-1}), dz = r^{d-1} dr du, so
    the density factorises as [r^{d-1} exp(-eta r)] x [uniform in u]: the radius is
    Gamma(shape=d, rate=eta) (numpy scale = 1/eta), independent of a uniform direction,
    and Z/||Z|| with Z ~ N(0, I_d) is uniform on S^{d-1} by rotation invariance.
    """
    eta = check_positive(eta, "eta")
    d = check_int(d, "d")
    rng = check_generator(rng)
    m = 1 if check_size(size) is None else size
    if m * d > _MAX_ELEMENTS:
        raise ValueError(
            f"size * d must be <= {_MAX_ELEMENTS:g} (one call's noise in memory), got size={size!r}, d={d}"
        )
    r = rng.gamma(shape=d, scale=1.0 / eta, size=m)  # (m,)  radius
    z = rng.standard_normal((m, d))  # (m, d)
    z *= (r / np.linalg.norm(z, axis=1))[:, None]  # r * Z/||Z||
    return z[0] if size is None else z


def l2_laplace_mechanism(value, eta, rng, size=None) -> np.ndarray:
    """value + z with z ~ exp(-eta ||z||_2) for a (d,) vector value; shape (d,) or (size, d).

    Why this is private: if ||f(D) - f(D')||_2 <= Delta_2, the density ratio at x is
    exp(eta (||x - f(D')||_2 - ||x - f(D)||_2)) <= exp(eta Delta_2) by the triangle
    inequality, so the release is (eta Delta_2)-DP (Acharya et al. 2024 set eta Delta_i = eps_i).
    """
    v = check_finite_array(value, "value", ndim=(1,))
    if v.size == 0:
        raise ValueError("value must hold at least one coordinate, got shape (0,)")
    check_noise_scale(1.0 / check_positive(eta, "eta"), v, "1/eta (the L2-Laplace scale)")
    noise = l2_laplace_noise(eta, v.shape[0], rng, size)
    noise += v
    return noise


# ------------------------------------------------------------------------------ clipping
def clip_interval(x, lo, hi) -> np.ndarray:
    """min(max(x, lo), hi) elementwise; requires lo < hi."""
    lo, hi = float(check_finite_array(lo, "lo", ndim=(0,))), float(check_finite_array(hi, "hi", ndim=(0,)))
    if not lo < hi:
        raise ValueError(f"clip_interval needs lo < hi, got lo={lo!r}, hi={hi!r}")
    return np.clip(check_finite_array(x, "x"), lo, hi)


def safe_norms(a, keepdims: bool = False) -> np.ndarray:
    """||a||_2 along the last axis of a finite array, with no overflow and no numpy warning.

    Where ``np.linalg.norm`` is finite its value is returned unchanged (so results on ordinary
    data are bit for bit those of ``np.linalg.norm``); a row whose squares overflow (an entry
    beyond ~1.3e154) is normed on the row scaled by its largest magnitude, top * ||a / top||,
    which is finite up to the float maximum times sqrt(d) (then inf, the true norm's rounding).
    A warning here would be an output that depends on the records, so none is raised.
    ``a``: a finite (d,), (n, d) or (s, n, d) array.
    """
    a = check_finite_array(a, "a", ndim=(1, 2, 3))
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        norms = np.linalg.norm(a, axis=-1, keepdims=True)
        big = ~np.isfinite(norms)
        if big.any():
            top = np.max(np.abs(a), axis=-1, keepdims=True)
            scaled = top * np.linalg.norm(a / np.where(top > 0, top, 1.0), axis=-1, keepdims=True)
            norms = np.where(big, scaled, norms)
    return norms if keepdims else norms[..., 0]


def clip_l2(x, radius) -> np.ndarray:
    """x * min(1, radius / ||x||_2) per row of an (n, d) array, or for a (d,) vector.

    Rows already inside the ball are returned unchanged; clipped rows have norm radius up
    to one rounding (relative ~1e-16). Total on finite input: the norms are ``safe_norms``
    (no overflow warning for rows near the float maximum).
    """
    radius = check_positive(radius, "radius")
    a = check_finite_array(x, "x", ndim=(1, 2))
    norms = safe_norms(a, keepdims=True)  # (n, 1) or (1,)
    with np.errstate(under="ignore"):
        return a * (radius / np.maximum(norms, radius))  # factor 1 when norm <= radius


# --------------------------------------------------------------------------- Renyi DP
def _orders(orders) -> np.ndarray:
    a = check_finite_array(orders, "orders", ndim=(1,))
    if a.size == 0:
        raise ValueError("orders must be non-empty")
    bad = (a <= 1.0) | (a > MAGNITUDE[1])
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"orders must lie in (1, {MAGNITUDE[1]:g}] (Renyi order alpha); orders[{i}] = {a[i].item()!r}")
    return a


def _rdp(rdp, n: int, name: str = "rdp") -> np.ndarray:
    raw = np.asarray(rdp)
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers (an int or float array), got dtype {raw.dtype}")
    r = raw.astype(float)
    if r.ndim != 1 or r.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},) like orders, got {r.shape}")
    bad = np.isnan(r) | (r < 0)  # +inf is allowed: no guarantee at that order
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name} must be >= 0 (and not NaN); {name}[{i}] = {r[i].item()!r}")
    return r


def gaussian_rdp(orders, sensitivity, sigma) -> np.ndarray:
    """rho(alpha) = alpha Delta^2 / (2 sigma^2)  [M17, Prop. 7 / Cor. 3]."""
    a = _orders(orders)
    return a * check_sensitivity(sensitivity) ** 2 / (2.0 * check_positive(sigma, "sigma") ** 2)


def compose_rdp(*rdp_curves) -> np.ndarray:
    """rho(alpha) = sum_j rho_j(alpha) at each order  [M17, Prop. 1]; same orders for all."""
    if not rdp_curves:
        raise ValueError("rdp_curves must hold at least one RDP curve (compose_rdp(curve, ...))")
    first = np.asarray(rdp_curves[0])
    if first.ndim != 1:
        raise ValueError(f"rdp_curves[0] must be a 1-D array (one value per order), got shape {first.shape}")
    curves = [_rdp(c, first.shape[0], f"rdp_curves[{j}]") for j, c in enumerate(rdp_curves)]
    return np.sum(curves, axis=0)


def rdp_to_dp(orders, rdp, delta, *, method="cks2020") -> float:
    """eps = min over alpha of the (alpha, rho) -> (eps, delta) conversion.

    - "mironov2017" [M17, Prop. 3]: eps = rho + log(1/delta) / (alpha - 1).
    - "cks2020" [CKS20, Prop. 12]: eps = rho + log1p(-1/alpha) - log(delta alpha)/(alpha - 1).
      As dp_accounting's ``compute_epsilon`` (v0.6) does, an order with
      delta^2 + expm1(-rho) > 0 gives eps = 0 (TV <= sqrt(1 - e^{-KL}) <= delta, by the
      Bretagnolle-Huber inequality and KL <= D_alpha), and the result is clipped below
      at 0. Unlike dp_accounting we also use orders in (1, 1.01], where Prop. 12 holds but
      dp_accounting returns inf; on DEFAULT_RDP_ORDERS the two agree.
    cks2020 <= mironov2017 at every order: their difference is log(1-1/alpha) - log(alpha)/(alpha-1) < 0.
    """
    a = _orders(orders)
    r = _rdp(rdp, a.shape[0])
    d = _positive_delta(delta)
    if method == "mironov2017":
        return float(np.min(r + math.log(1.0 / d) / (a - 1.0)))
    if method != "cks2020":
        raise ValueError(f"method must be 'cks2020' or 'mironov2017', got {method!r}")
    eps = r + np.log1p(-1.0 / a) - np.log(d * a) / (a - 1.0)
    eps = np.where(d**2 + np.expm1(-r) > 0, 0.0, eps)  # KL shortcut, as dp_accounting
    return max(0.0, float(np.min(eps)))


def rdp_delta(orders, rdp, epsilon, *, method="cks2020") -> float:
    """delta = min over alpha of the inverse conversion, capped at 1.

    - "mironov2017" [M17, Prop. 3]: log delta = (alpha - 1)(rho - eps).
    - "cks2020" [CKS20, Prop. 12]: log delta = (alpha-1)(rho - eps + log1p(-1/alpha)) - log(alpha),
      and, as dp_accounting's ``compute_delta``, at most 0.5 log1p(-e^{-rho}) (the KL bound).
    """
    a = _orders(orders)
    r = _rdp(rdp, a.shape[0])
    eps = check_nonnegative(epsilon, "epsilon")  # an accounting query: any eps >= 0, no cap
    if method == "mironov2017":
        log_delta = (a - 1.0) * (r - eps)
    elif method == "cks2020":
        log_delta = (a - 1.0) * (r - eps + np.log1p(-1.0 / a)) - np.log(a)
        with np.errstate(divide="ignore"):  # rho = 0 gives log(0) = -inf
            log_delta = np.minimum(log_delta, 0.5 * np.log1p(-np.exp(-r)))
    else:
        raise ValueError(f"method must be 'cks2020' or 'mironov2017', got {method!r}")
    return min(1.0, math.exp(float(np.min(log_delta))))
