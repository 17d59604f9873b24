"""The certified Huber solver behind HLM (``zhao2024``): the minimiser s* of

    F(s) = sum_i w_i phi_i(s - y_i),   phi_i(u) = ||u||^2 / 2 if ||u|| <= T_i, else T_i ||u|| - T_i^2 / 2

(poster eq. (2)-(3)) in floating point, with a certificate that reads no assumption. Pure
numerics: nothing here is private or random; ``zhao2024`` turns the certificate into privacy.

What it returns. ``_solve`` (public as ``zhao2024.solve``, which checks its inputs) always
returns (it never raises on data): a point s_hat = z + delta
held as two floats per coordinate (z = fl(s_hat), |delta| <= ulp(z) / 2, so s_hat is not
rounded to the float grid near |y|), a RIGOROUS upper bound eta on ||grad F(s_hat)|| (every
rounding of the evaluation included, ``_certify``), rigorous lower bounds on the margins
T_i - ||s_hat - y_i||, and ``certified``:

    CERTIFICATE.  eta < e K(e), K(e) = sum of w_i over users whose margin lower bound is >= e.
    LEMMA C.      If the certificate holds, ||s_hat - s*|| < e.
    Proof. grad F = sum_i w_i psi_i, psi_i(u) = u min(1, T_i/||u||) the projection onto the
    ball of radius T_i: monotone. With v = (s* - s_hat)/||s* - s_hat||, h(t) = <grad F(s_hat
    + t v), v> is non-decreasing, h(0) >= -eta and h(||s* - s_hat||) = 0. A user with margin
    >= e at s_hat stays in its quadratic region on t in [0, e] and adds slope w_i there, so
    h(t) >= -eta + t K(e) on [0, e]; h(e) > 0 if eta < e K(e), so ||s* - s_hat|| < e.  []

Where the certificate is reached (what ``zhao2024`` needs, PROVED here, not assumed). Call D
"(K0, rho)-conditioned" when the users with margin >= rho + 2e + eps_m at s* (``margin_gap``
eps_m) weigh more than K0 (public K0 = kappa0 in (0, 1), sum w = 1), and the public
feasibility check ``feasible`` holds: 8 E_max <= e K0, E_max = ``rounding_bound`` (a bound
on the rounding part of eta, and of one float step of the solver, at such a D).

- d = 1 (``_solve_1d``). grad F is continuous, non-decreasing and piecewise linear in s, with
  breakpoints y_i +- T_i. The solver sorts the 2n breakpoints in the frame of the weighted
  median, finds by bisection over them (direct evaluation, O(n) each) the piece holding the
  root, takes that linear piece's root, repeats in the frame of the rounded root while the
  step exceeds T_max (``PASSES_1D``), and polishes once (``_polish``). THEOREM 1 (d = 1). On
  every (K0, 0)-conditioned D the certificate holds. Proof: at the polished point the true
  gradient is at most 3 E_max (its evaluation, the piece's root formula and the rounding of
  the offsets each cost at most E_max), so eta <= 4 E_max <= e K0 / 2. F is K0-strongly convex
  on the ball of radius 2e around s* (the counted users stay quadratic there), so a point
  with ||grad F|| < K0 e lies within e of s*; then every counted user keeps a margin lower
  bound >= (2e + eps_m) - e - eps_m = e at s_hat, K(e) > K0, and eta < e K(e).  []
- d >= 2. Fast path (``_newton``): damped Newton from the weighted mean, with an exact line
  search along the gradient where a Newton step fails, at most ``NEWTON_STEPS`` steps,
  accepted only if it certifies. Guaranteed
  path: from z0 = the coordinate-wise weighted median, N1 steps of Nesterov's accelerated
  gradient (FISTA, step 1/L, L = sum w: each psi_i is 1-Lipschitz) then N2 steps of gradient
  descent, N1, N2 from public quantities only (``guarantee_steps``). THEOREM 2 (d >= 2,
  K0 >= 1/2). On every (K0, rho)-conditioned D, in exact arithmetic, the guaranteed path ends
  within e K0 / 4 of s*, so the certificate holds. Proof: (i) more than half of the weight
  lies within T_max of s* in every coordinate, so each coordinate's weighted median does and
  ||z0 - s*|| <= sqrt(d) T_max. (ii) On the ball of radius rho around s* the users counted in
  K0 stay quadratic, so F is K0-strongly convex there, and for ||s - s*|| >= rho convexity
  along the ray gives F(s) - F* >= K0 rho^2 / 2: any s with F(s) - F* < K0 rho^2 / 2 is in
  the ball. (iii) FISTA gives F(x_k) - F* <= 2 L ||z0 - s*||^2 / (k + 1)^2 (Beck and Teboulle
  2009, Thm 4.4), below K0 rho^2 / 2 once k + 1 > 2 sqrt(L) sqrt(d) T_max / (sqrt(K0) rho).
  (iv) In the ball, gradient descent with step 1/L contracts ||x - s*|| by sqrt(1 - K0/L)
  (co-coercivity of a 1/L-smooth convex gradient plus strong monotonicity), so N2 =
  ceil(ln(4 rho / (e K0)) / (-ln(1 - K0/L) / 2)) steps reach e K0 / 4; then ||grad F|| <= e K0
  / 4 (1-Lipschitz), eta <= e K0 / 4 + 2 E_max < e K0 / 2, and K(e) > K0 as in Theorem 1.  []
  Rounding: each float step differs from the exact one by at most E_max relative to the
  gradient; the public check 8 E_max <= e K0 keeps that a fraction of the target. The time
  of the guaranteed path is a public bound, but which path certifies (and so the time)
  depends on the data: userdp does not defend timing channels.

Float range. Items are any finite doubles. Far users (a local offset beyond ``FAR`` = 2^1000
in some coordinate) pull with T_i times a direction computed from halved coordinates, so no
difference overflows; their rounding is in eta. No numpy warning is raised on any input
(``np.errstate`` around the whole solve, ``_solve``): a warning would be an output that depends on
the data; an inf or NaN intermediate ends the fast path or leaves the point uncertified.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import check_finite_array, check_int, check_positive

__all__ = [
    "U",
    "FAR",
    "NEWTON_STEPS",
    "PASSES_1D",
    "Solution",
    "rounding_bound",
    "margin_gap",
    "guarantee_steps",
    "feasible",
]  # the solver itself is ``zhao2024.solve`` (which checks its inputs)

U = 2.0**-53  # unit roundoff of float64: |fl(x) - x| <= U |x|
FAR = 2.0**1000  # a local offset beyond this (in some coordinate) is far (see the module docstring)
NEWTON_STEPS = 50  # the fast path's cap (d >= 2); the guaranteed path does not depend on it
_QUIET = dict(over="ignore", invalid="ignore", divide="ignore", under="ignore")


@dataclass(frozen=True)
class Solution:
    z: np.ndarray  # (d,) fl(s_hat)
    delta: np.ndarray  # (d,) s_hat = z + delta exactly
    eta: float  # rigorous upper bound on ||grad F(s_hat)||
    margins: np.ndarray  # (n,) rigorous lower bounds on T_i - ||s_hat - y_i|| (-inf for far users)
    certified: bool  # eta < e K(e): ||s_hat - s*|| < e (Lemma C)
    path: str  # "exact-1d", "newton" or "guaranteed"


# --------------------------------------------------------------------------- public bounds
def _wT(w, T, d) -> tuple[np.ndarray, np.ndarray, int]:
    w = check_finite_array(w, "w", ndim=(1,))
    T = check_finite_array(T, "T", ndim=(1,))
    if w.size == 0 or T.shape != w.shape or (w < 0).any() or not w.sum() > 0 or (T <= 0).any():
        raise ValueError(
            f"w and T must be non-empty of one shape, w >= 0 with a positive sum and T > 0; got "
            f"shapes {w.shape}, {T.shape}"
        )
    return w, T, check_int(d, "d", lo=1)


def rounding_bound(w, T, d: int) -> float:
    """E_max: a bound on the rounding part of eta at a conditioned dataset (module docstring).

    Per user (``_certify``): the offset a_i = s_hat - y_i is computed with error E_i <= U (2.02
    ||a_i|| + 1.02 ||delta||); psi_i is 1-Lipschitz and, outside its ball, (2 T_i / ||a_i||)-
    Lipschitz, so a user near s_hat (||a_i|| <= 2 T_max, ||delta|| <= T_max) errs by <= 5.1 U T_max
    and a far one by <= 10.3 U T_i; evaluating psi_i costs (d + 8) U T_i more; the pairwise sum of
    n terms ceil(log2 n) U sum |terms|, the products and the norm (d + 4) U more."""
    w, T, d = _wT(w, T, d)
    levels = max(1, math.ceil(math.log2(max(2, w.size))))
    wT = math.fsum(w * T)
    return U * (11.0 * math.fsum(w) * float(T.max()) + (d + 14 + levels) * wT) * (1 + 1e-6)


def margin_gap(T, d: int) -> float:
    """eps_m: a bound on (true margin - its lower bound) for any user whose margin lower bound is
    >= 0 at a conditioned dataset (2 x the correction of ``_certify``: (6 d + 58.2) U T_max)."""
    T = check_finite_array(T, "T", ndim=(1,))
    if T.size == 0 or (T <= 0).any():
        raise ValueError(f"T must be non-empty and > 0, got {T!r}")
    d = check_int(d, "d", lo=1)
    return (6 * d + 60) * U * float(np.max(T))


def feasible(w, T, d: int, e: float, kappa0: float) -> bool:
    """The public feasibility check of Theorems 1-2: 8 E_max <= e kappa0 (double precision can
    certify e at this n). Reads only public quantities."""
    e, kappa0 = check_positive(e, "e"), check_positive(kappa0, "kappa0")
    return 8.0 * rounding_bound(w, T, d) <= e * kappa0


def guarantee_steps(w, T, d: int, e: float, kappa0: float, rho: float) -> tuple[int, int]:
    """(N1, N2) of Theorem 2, from public quantities: N1 = floor(2 sqrt(L d) T_max / (sqrt(K0)
    rho)) + 1 FISTA steps, N2 = ceil(ln(4 rho / (e K0)) / (-ln(1 - K0 / L) / 2)) descent steps."""
    w, T, d = _wT(w, T, d)
    e, kappa0, rho = check_positive(e, "e"), check_positive(kappa0, "kappa0"), check_positive(rho, "rho")
    L = math.fsum(w)
    K0 = min(kappa0, L * (1 - 1e-12))
    n1 = math.floor(2.0 * math.sqrt(L * d) * float(np.max(T)) / (math.sqrt(K0) * rho)) + 1
    n2 = math.ceil(math.log(max(4.0 * rho / (e * K0), 1.0 + 1e-12)) / (-0.5 * math.log1p(-K0 / L)))
    return n1, n2


# --------------------------------------------------------------------------- helpers
def _local_averages(values: np.ndarray, dataset) -> np.ndarray:
    """y_i = (1/m_i) sum of user i's items, (n, d), computed on items scaled by 2^-k (k from the
    public counts: 2^k >= max m_i), so no partial sum overflows for any finite items; scaling
    by a power of two is exact above the subnormal range. Each y_i reads only user i's items."""
    k = int(math.ceil(math.log2(float(dataset.counts.max())))) + 1
    x = np.ldexp(values, -k)
    y = np.ldexp(dataset.local_averages(x), k)
    return y[:, None] if y.ndim == 1 else y


def _norms(a: np.ndarray) -> np.ndarray:
    """Row norms of (n, d) without overflow or underflow (scaled by the row's largest entry)."""
    if a.shape[1] == 1:
        return np.abs(a[:, 0])
    top = np.max(np.abs(a), axis=1)
    with np.errstate(**_QUIET):
        safe = np.where(top > 0, top, 1.0)
        r = top * np.sqrt(np.sum((a / safe[:, None]) ** 2, axis=1))
    return np.where(np.isfinite(top), r, np.inf)


def _pairwise_sum(t: np.ndarray) -> tuple[np.ndarray, int]:
    """(sum over axis 0, levels): an explicit pairwise tree, so |error| <= levels U (1 + U)^levels
    sum |t_i| per coordinate (Higham 2002, eq. 4.6), whatever numpy's own summation does."""
    levels = 0
    while t.shape[0] > 1:
        if t.shape[0] % 2:
            t = np.concatenate([t, np.zeros((1,) + t.shape[1:])])
        t = t[0::2] + t[1::2]
        levels += 1
    return t[0], levels


def _weighted_median(x: np.ndarray, w: np.ndarray) -> float:
    """The smallest x_i whose cumulative weight (x sorted) reaches half the total."""
    order = np.argsort(x, kind="stable")
    cw = np.cumsum(w[order])
    return float(x[order[min(int(np.searchsorted(cw, 0.5 * cw[-1])), x.size - 1)]])


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(s, r) with s = fl(a + b) and a + b = s + r exactly (Knuth's TwoSum; finite s)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@dataclass(frozen=True)
class _Frame:
    """Local offsets u_i = fl(z - y_i) around a float centre z; far rows as fixed directions."""

    z: np.ndarray  # (d,)
    u: np.ndarray  # (n, d); far rows hold 0 (unused)
    far: np.ndarray  # (n,) bool
    direction: np.ndarray  # (n, d) unit vectors (z - y_i)/||z - y_i|| on far rows, else 0
    half_norm: np.ndarray  # (n,) ||(z - y_i)/2|| on far rows (>= FAR/2), else inf


def _frame(y: np.ndarray, z: np.ndarray) -> _Frame:
    with np.errstate(**_QUIET):
        u = z[None, :] - y
        far = ~np.all(np.isfinite(u) & (np.abs(u) <= FAR), axis=1)
        direction = np.zeros_like(u)
        half = np.full(y.shape[0], np.inf)
        if far.any():
            v = 0.5 * z[None, :] - 0.5 * y[far]  # finite: |z/2|, |y/2| <= max / 2
            half[far] = _norms(v)
            direction[far] = v / half[far][:, None]
        u = np.where(far[:, None], 0.0, u)
    return _Frame(z, u, far, direction, half)


def _psi(fr: _Frame, delta: np.ndarray, T: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, r, psi): a = fl(u + delta), r = ||a||, psi_i = a_i min(1, T_i / r_i) (far: T_i direction_i)."""
    with np.errstate(**_QUIET):
        a = fr.u + delta[None, :]
        r = _norms(a)
        psi = a * (T / np.maximum(r, T))[:, None]
    r = np.where(fr.far, np.inf, r)
    psi = np.where(fr.far[:, None], T[:, None] * fr.direction, psi)
    return a, r, psi


def _grad(fr: _Frame, delta: np.ndarray, w: np.ndarray, T: np.ndarray) -> np.ndarray:
    return w @ _psi(fr, delta, T)[2]


# --------------------------------------------------------------------------- the certificate
def _certify(y, w, T, z, delta, e: float, path: str) -> Solution:
    """Recentre s_hat = z + delta on fl(s_hat), then bound ||grad F(s_hat)|| and the margins
    with every rounding included (the error terms are those of ``rounding_bound``)."""
    d = y.shape[1]
    with np.errstate(**_QUIET):
        z1, dl = _two_sum(z, delta)
    if not np.all(np.isfinite(z1)):
        return Solution(z, delta, math.inf, np.full(y.shape[0], -math.inf), False, path)
    fr = _frame(y, z1)
    a, r, psi = _psi(fr, dl, T)
    nd = float(_norms(dl[None, :])[0])
    with np.errstate(**_QUIET):
        E = U * (2.02 * r + 1.02 * nd)  # ||a_hat_i - a_i||
        outside = r * (1 - (d + 5) * U) - E > T  # a_hat_i and a_i both outside the ball
        if d == 1:
            lip = np.where(outside, 0.0, 1.0)  # psi = T sign(a): exact outside
        else:
            lip = np.where(outside, np.minimum(1.0, 2 * T / (r * (1 - (d + 5) * U))), 1.0)
        err = lip * E + (d + 8) * U * np.minimum(r, T)
        far_err = T * (2 * nd / np.maximum(2 * fr.half_norm - nd, 1e-300) + (d + 9) * U)
        err = np.where(fr.far, far_err if d > 1 else 0.0, err)
        g, levels = _pairwise_sum(w[:, None] * psi)
        wpsi = w * np.minimum(np.where(fr.far, T, r), T)  # ||w_i psi_i||
        gn = float(_norms(g[None, :])[0])
        rounding = math.fsum(w * err) + (U + levels * U * (1 + U) ** levels) * math.fsum(wpsi) + U * gn
        eta = gn * (1 + (d + 4) * U) + rounding * (1 + 4 * U)
        corr = E + (d + 8) * U * (r + T)
        margins = np.where(fr.far | ~np.isfinite(r), -np.inf, (T - r) - corr)
    margins = np.where(np.isnan(margins), -np.inf, margins)  # a NaN bound is no margin
    K = math.fsum(w[margins >= e])
    ok = bool(math.isfinite(eta) and eta < e * K * (1 - 4 * U))  # NaN or inf eta: uncertified
    return Solution(z1, dl, float(eta), margins, ok, path)


# --------------------------------------------------------------------------- d = 1: exact
PASSES_1D = 80  # public cap on the recentred passes of ``_solve_1d`` (see there)


def _piece_root(y, w, T, z: np.ndarray) -> float:
    """In the frame of z: the root t of g(t) = sum_i w_i clip(u_i + t, -T_i, T_i), u_i = fl(z - y_i),
    continuous, non-decreasing and linear between the sorted breakpoints -u_i -+ T_i. Bisection
    over the breakpoints (direct evaluation, O(n) each) finds the piece, whose root is exact."""
    fr = _frame(y, z)
    u = fr.u[:, 0].copy()
    u[fr.far] = np.copysign(np.inf, fr.direction[fr.far, 0])  # far: +-inf offsets
    with np.errstate(**_QUIET):
        bp = np.sort(np.concatenate([-u - T, -u + T]))  # user i is quadratic on [-u_i - T_i, -u_i + T_i]
    bp = bp[np.isfinite(bp)]  # the median's own user is near: bp has >= 2

    def g(t: float) -> float:
        with np.errstate(**_QUIET):
            return float(w @ np.clip(u + t, -T, T))

    a, b = 0, bp.size - 1  # g(bp[0]) <= 0 <= g(bp[-1])
    while b - a > 1:
        mid = (a + b) // 2
        if g(bp[mid]) <= 0:
            a = mid
        else:
            b = mid
    lo, hi = float(bp[a]), float(bp[b])
    with np.errstate(**_QUIET):
        S = math.fsum(w[(-u - T <= lo) & (-u + T >= hi)])  # slope on the piece [lo, hi]
        t = lo - g(lo) / S if S > 0 else 0.5 * lo + 0.5 * hi  # S = 0: a flat piece (no unique root)
    return min(max(t, lo), hi)


def _solve_1d(y, w, T) -> tuple[np.ndarray, np.ndarray]:
    """(z, t): the root of grad F, found in the frame of the weighted median, then again in the
    frame of each rounded root until |t| <= T_max (at most ``PASSES_1D`` passes). A pass in the
    frame z errs by about U |z - s*| / (weight in the quadratic region) (the offsets' rounding),
    so each pass shrinks the distance of the frame to s* by a factor ~U / kappa0: one pass when
    the weighted median lies within T_max of s*, as at every (kappa0 >= 1/2)-conditioned D."""
    z = np.array([_weighted_median(y[:, 0], w)])
    top = float(np.max(T))
    t = _piece_root(y, w, T, z)
    for _ in range(PASSES_1D - 1):
        if abs(t) <= top:
            break
        with np.errstate(**_QUIET):
            z1 = z + t
        if not np.all(np.isfinite(z1)):
            break
        z = z1
        t = _piece_root(y, w, T, z)
    return z, np.array([t])


def _polish(y, w, T, z, delta) -> tuple[np.ndarray, np.ndarray]:
    """One Newton step in the frame of fl(z + delta) (exact on a linear piece in d = 1), kept
    only if it lowers the computed ||grad F||: it removes what rounding z + delta to one float
    per coordinate, and the piece's root formula, left of the gradient."""
    with np.errstate(**_QUIET):
        z1, dl = _two_sum(z, delta)
    if not np.all(np.isfinite(z1)):
        return z, delta
    fr = _frame(y, z1)
    a, r, psi = _psi(fr, dl, T)
    g = w @ psi
    try:
        step = np.linalg.solve(_hessian(a, r, w, T, ~fr.far & (r < T), fr.far), g)
    except np.linalg.LinAlgError:
        return z1, dl
    if not np.all(np.isfinite(step)):
        return z1, dl
    before, after = _norms(g[None, :])[0], _norms(_grad(fr, dl - step, w, T)[None, :])[0]
    return (z1, dl - step) if after < before else (z1, dl)


def _hessian(a, r, w, T, quad, far) -> np.ndarray:
    """sum_quadratic w_i I + sum_linear w_i (T_i / r_i)(I - a_i a_i^T / r_i^2) (far users: ~0)."""
    d = a.shape[1]
    lin = ~quad & ~far
    with np.errstate(**_QUIET):
        ul = a[lin] / r[lin, None]
        c = w[lin] * T[lin] / r[lin]
    return (math.fsum(w[quad]) + math.fsum(c)) * np.eye(d) - (ul * c[:, None]).T @ ul


# --------------------------------------------------------------------------- d >= 2
def _loss(fr: _Frame, delta, w, T) -> float:
    """F up to a constant (far users: linear in delta, the constant T_i ||u_i|| dropped)."""
    a, r, _ = _psi(fr, delta, T)
    near = ~fr.far
    with np.errstate(**_QUIET):
        phi = np.where(r[near] <= T[near], 0.5 * r[near] ** 2, T[near] * r[near] - 0.5 * T[near] ** 2)
        lin = T[fr.far] * (fr.direction[fr.far] @ delta)
    return float(w[near] @ phi + w[fr.far] @ lin)


def _line_search(fr: _Frame, dl, p, w, T) -> float:
    """t >= 0 minimising F(delta - t p), p = grad F(delta): F is convex along the line, so its
    slope -<grad F(delta - t p), p> is non-decreasing; doubling brackets the sign change and
    bisection narrows it to 0.1% (at most ~1100 doublings in the float range, 60 halvings)."""

    def slope(t: float) -> float:
        return -float(_grad(fr, dl - t * p, w, T) @ p)

    lo, hi = 0.0, 1.0 / math.fsum(w)
    while slope(hi) < 0 and hi < 1e300:
        lo, hi = hi, 2.0 * hi
    for _ in range(60):
        if hi - lo <= 1e-3 * hi:
            break
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if slope(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)


def _newton(y, w, T, target: float) -> tuple[np.ndarray, np.ndarray]:
    """The fast path: damped Newton from the weighted mean (the coordinate-wise weighted median
    when the mean lies far from some average, where its frame would lose them), with an exact
    line search along the gradient whenever the Newton step fails Armijo (a singular or
    misleading Hessian: every user linear, or collinear ones)."""
    d = y.shape[1]
    with np.errstate(**_QUIET):
        z = (w @ y) / math.fsum(w)
    fr = _frame(y, z) if np.all(np.isfinite(z)) else None
    if fr is None or fr.far.any():
        fr = _frame(y, np.array([_weighted_median(y[:, j], w) for j in range(d)]))
    dl = np.zeros(d)
    F = _loss(fr, dl, w, T)
    for _ in range(NEWTON_STEPS):
        a, r, psi = _psi(fr, dl, T)
        g = w @ psi
        if not (math.isfinite(F) and np.all(np.isfinite(g))):
            break  # an overflowed loss or gradient (items near the float maximum): leave it to _certify
        if float(_norms(g[None, :])[0]) <= target:
            break
        moved = False
        try:
            step = np.linalg.solve(_hessian(a, r, w, T, ~fr.far & (r <= T), fr.far), g)
        except np.linalg.LinAlgError:
            step = None
        if step is not None and np.all(np.isfinite(step)) and float(g @ step) > 0:
            t, slope = 1.0, float(g @ step)
            for _ in range(40):  # Armijo backtracking
                Fc = _loss(fr, dl - t * step, w, T)
                if Fc <= F - 1e-4 * t * slope:
                    dl, F, moved = dl - t * step, Fc, True
                    break
                t *= 0.5
        if not moved:  # exact line search along -g
            cand = dl - _line_search(fr, dl, g, w, T) * g
            Fc = _loss(fr, cand, w, T)
            if not (np.all(np.isfinite(cand)) and Fc < F):
                break
            dl, F = cand, Fc
    return fr.z, dl


def _guaranteed(y, w, T, target: float, kappa0: float, rho: float, n1: int, n2: int) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 2's path: FISTA for n1 steps, then gradient descent for n2, from the coordinate-wise
    weighted median; stops once ||grad|| <= target. Every 16 FISTA steps it also stops when the
    dataset is PROVABLY not conditioned (so no conditioned dataset is cut short): at a
    conditioned D, F(x_k) - F* <= eps_k = 2 L R0^2 / (k + 1)^2 (R0 = sqrt(d) T_max), and F grows
    at least like K0 rho (t - rho / 2) at distance t >= rho from s* (quadratically inside), so
    ||x_k - s*|| <= D_k = sqrt(2 eps_k / K0) if eps_k < K0 rho^2 / 2, else rho / 2 + eps_k / (K0 rho).
    Then the users within T_i - rho + D_k of x_k weigh more than K0, and, inside the ball,
    ||grad F(x_k)|| <= D_k (1-Lipschitz); either failing (with a rounding slack) proves that D
    is not conditioned."""
    d = y.shape[1]
    z0 = np.array([_weighted_median(y[:, j], w) for j in range(d)])
    fr = _frame(y, z0)
    L = math.fsum(w)
    R0 = math.sqrt(d) * float(np.max(T))
    slack = 2.0 * rounding_bound(w, T, d)
    gap = margin_gap(T, d)
    x = x_prev = np.zeros(d)
    t = 1.0
    for k in range(n1):  # Beck and Teboulle 2009, FISTA (no prox)
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        v = x + ((t - 1.0) / t_next) * (x - x_prev) if k else x
        x_prev, x, t = x, v - _grad(fr, v, w, T) / L, t_next
        if k % 16 != 15:
            continue
        _, r, psi = _psi(fr, x, T)
        gn = float(_norms((w @ psi)[None, :])[0])
        if gn <= target:
            return z0, x
        eps_k = 2.0 * L * R0 * R0 / (k + 2) ** 2  # after k + 1 steps
        inside = eps_k < 0.5 * kappa0 * rho * rho
        Dk = (math.sqrt(2.0 * eps_k / kappa0) if inside else 0.5 * rho + eps_k / (kappa0 * rho)) * (1 + 1e-9)
        if (inside and gn > Dk + slack) or math.fsum(w[r <= T - rho + Dk + gap]) <= kappa0:
            return z0, x  # not conditioned: nothing to guarantee
    for _ in range(n2):  # gradient descent, step 1/L
        g = _grad(fr, x, w, T)
        if float(_norms(g[None, :])[0]) <= target:
            break
        x = x - g / L
    return z0, x


# --------------------------------------------------------------------------- the solver
def _solve(y, w, T, *, e: float, kappa0: float, rho: float) -> Solution:
    """argmin_s F(s), certified to accuracy e when possible (module docstring). y (n, d) finite,
    w (n,) >= 0 with sum > 0, T (n,) > 0; e, kappa0, rho > 0 are the public accuracy, weight
    share and strong-convexity radius of Theorems 1-2. Never raises or warns on the data.

    The whole solve runs under ``np.errstate`` with every floating-point warning off (``_QUIET``):
    at items near the float maximum an intermediate of the fast path (the loss, a Newton step) may
    overflow to inf or become NaN, and a numpy warning there would be an output that depends on the
    data. Such intermediates are handled explicitly, not hidden: a non-finite loss, step or point
    ends the fast path (``_newton``), and a non-finite point or bound is uncertified (``_certify``),
    which the release turns into gamma = 0 whatever the data (zhao2024, item 3), so the only
    observable effect of an overflow is the one the privacy proof already covers."""
    with np.errstate(**_QUIET):
        return _solve_paths(y, w, T, e=e, kappa0=kappa0, rho=rho)


def _solve_paths(y, w, T, *, e: float, kappa0: float, rho: float) -> Solution:
    """``_solve``'s paths (d = 1: exact; d >= 2: Newton, then the guaranteed path if uncertified)."""
    d = y.shape[1]
    target = 0.25 * e * kappa0
    if d == 1:
        z, dl = _solve_1d(y, w, T)
        z, dl = _polish(y, w, T, z, dl)
        return _certify(y, w, T, z, dl, e, "exact-1d")
    z, dl = _newton(y, w, T, target)
    z, dl = _polish(y, w, T, z, dl)
    sol = _certify(y, w, T, z, dl, e, "newton")
    if sol.certified:
        return sol
    n1, n2 = guarantee_steps(w, T, d, e, kappa0, rho)
    z, dl = _guaranteed(y, w, T, target, kappa0, rho, n1, n2)
    return _certify(y, w, T, z, dl, e, "guaranteed")
