"""The baseline of Zhao et al. 2024: the two-stage winsorized mean estimator (WME).

- P. Zhao, L. Lai, L. Shen, Q. Li, J. Wu, Z. Liu, "A Huber Loss Minimization Approach to
  Mean Estimation under User-level Differential Privacy", NeurIPS 2024, arXiv:2405.13453.
  Our copy is the poster only (docs/papers/zhao2024.md);
  its panel "Two-stage method (WME) [1]" describes the baseline below.
- [1] D. Levy, Z. Sun, K. Amin, S. Kale, A. Kulesza, M. Mohri, A. T. Suresh, "Learning with
  User-Level Privacy", NeurIPS 2021, arXiv:2102.11845 (the WME). The repository has no copy of it, so no algorithm
  or equation number of Levy et al. is cited: the
  structure follows the poster's summary, and every detail the poster does not fix is
  labelled "derived here, not from the paper".
- [DR14] Dwork, Roth, "The Algorithmic Foundations of Differential Privacy", 2014:
  Thm 3.16 (basic composition), Prop. 2.1 (post-processing).
- [BW18] Balle, Wang, ICML 2018, Thm 8 (exact calibration of the Gaussian mechanism).
- [DRS22] Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022: Thm 2.7 (the
  Gaussian mechanism is Delta/sigma-GDP), Cor. 3.3 (composition, also adaptive).

Setting (poster, "Preliminaries"; docs/papers/zhao2024.md). n users; user i holds m_i >= 1 items x in R^d
and y_i is their local average. Relation ``REPLACE_USER_ITEMS``: one user's items change, n
and every m_i stay (so they are public). Declared support, refused when violated (the bin
grid's proof needs it; derived here, not from the paper): |x| <= R for d = 1, and
||x||_2 <= R for d > 1.

The algorithm (poster: "Stage I (Localization) ... Stage II (Refinement) ... Extend to high
dimensionality: Hadamard transform"), for one release:

0. Rotation (d > 1). d' = the next power of two >= d. Draw signs s in {-1, +1}^d' from
   ``rng``; U = H_d' diag(s) / sqrt(d') (H_d' the Sylvester-Hadamard matrix) is orthogonal.
   z_i = U [y_i; 0] (zero-padded), clamped to [-R, R]^d'. For d = 1: d' = 1, z_i = y_i.
1. Radius. tau = R sqrt(2 ln(2/beta) / m_min), m_min = min_i m_i (``wme_radius``).
2. Stage I (``wme_localise``). Per coordinate j, bins [e_k, e_{k+1}), e_k = -R + k tau,
   k = 0..K-1, K = ceil(2R / tau) (the last bin closed at the top); c_jk = #{i : z_ij in
   bin k}. Noisy counts c_jk + N(0, sigma_1^2); k_j = the argmax; interval
   I_j = [e_{k_j} - tau, e_{k_j} + 2 tau] (the chosen bin widened by tau each side).
3. Stage II (``wme_statistic``). s = (1/n) sum_i clip(z_i, I) + N(0, sigma_2^2 I_d'): the
   uniform average (w_i = 1/n, as Levy et al.) of the clipped rotated averages.
4. Release U^T s, first d coordinates (post-processing). ``size`` releases are independent:
   each draws its own signs, stage-I noise and stage-II noise.

Budgets (``wme_budgets``): eps_1 = split eps, eps_2 = eps - eps_1, delta_1 = delta_2 = delta/2.

Why this is private (claim ``ApproxDP(eps, delta)`` and ``GaussianDP(mu)``, ``wme_claim``).

- Public quantities. Under ``RELATION``, n, every m_i and d are the same on both
  neighbours, so tau, K, the grid, d' and both sensitivities below are too. The signs are
  drawn independently of the data; the arguments below hold for every fixed s, and a
  mixture over s (the same on D and D') keeps each (eps, delta(eps)) guarantee, hence
  (eps, delta)-DP and mu-GDP (which is (eps, delta_mu(eps))-DP for all eps, [DRS22, Cor. 2.13]).
- Stage I: the stacked histogram c in R^{d' x K} has L2 sensitivity Delta_1 = sqrt(2 d').
  Replacing user i moves z_i to z'_i; in coordinate j one unit of count leaves bin
  b(z_ij) and enters bin b(z'_ij): ||c - c'||^2 <= sum_j (1^2 + 1^2) = 2 d', with equality
  when every coordinate changes bin. No other user's bin changes. The argmax and the
  intervals are post-processing [DR14, Prop. 2.1]. (Counts, not means: n is public.)
- Stage II, for every fixed box I (it is stage I's output; adaptive composition below).
  Replacing user i changes one term of the mean, clip(z_i, I) -> clip(z'_i, I). Two bounds:
  (a) both lie in I, a box of side 3 tau, so they differ by at most its diagonal
  3 tau sqrt(d') (Levy et al.'s argument: the noise scales with the interval's width);
  (b) clip(., I) is the Euclidean projection onto a convex set, hence 1-Lipschitz, and
  ||z_i - z'_i|| <= 2R (||z|| = ||y|| <= R; the clamp is also such a projection), so they
  differ by at most 2R. So the mean moves by Delta_2 = min(3 tau sqrt(d'), 2R) / n in L2
  (for d = 1 attained: z_i and z'_i at the two ends of I cap [-R, R]). Bound (b) is our
  analysis (derived here, not from the paper; the statistic is unchanged): without it the
  WME would add MORE noise than the plain mean of the support (sensitivity 2R / n)
  whenever 3 tau sqrt(d') > 2R, i.e. m_min < 4.5 d' ln(2/beta): a single one-item user
  in d = 1, or m_min <= 66 at d' = 4, beta = 0.05 (we use no sub-Gaussian gain of the
  rotation, which is what keeps Levy et al.'s diagonal small).
- Noise: sigma_k = Delta_k s_k with s_k = ``gaussian_sigma_analytic(1, eps_k, delta_k)``.
  BW18 Thm 8's delta(sigma) depends on sigma and Delta only through sigma / Delta, so
  sigma_k is exactly (eps_k, delta_k)-calibrated; it equals
  ``gaussian_sigma_analytic(Delta_k, eps_k, delta_k)`` up to that function's tolerance
  (derived here, not from the paper: it makes the claim independent of the data). The
  product is rounded up by 2^-50 relative so that sigma_k / Delta_k >= s_k holds in floats.
- Composition: stage II reads stage I's output, so this is adaptive composition of an
  (eps_1, delta_1)- and an (eps_2, delta_2)-DP mechanism: (eps_1 + eps_2, delta_1 + delta_2) =
  (eps, delta) [DR14, Thm 3.16, which also holds adaptively]. Leaving out delta_1 (a
  planted bug, wme-localisation-delta-not-composed) would under-state delta.
- GDP: stage k is mu_k-GDP with mu_k = Delta_k / sigma_k = 1 / s_k [DRS22, Thm 2.7] for every
  neighbouring pair, and adaptive composition gives mu = sqrt(mu_1^2 + mu_2^2) [DRS22,
  Cor. 3.3] (``wme_gdp_mu``, rounded up by 2^-50). This mu also implies (eps, delta): the
  composition of the two Gaussians is a composition of (eps_k, delta_k)-DP mechanisms, so
  its exact profile is below basic composition (checked in the tests on a grid).
- Floating point: z = U y is clamped to [-R, R] (a no-op in exact arithmetic, since
  ||U y|| = ||y|| <= R) so that the bin grid and the box bounds hold for the computed z.

Choices "derived here, not from the paper" (the poster fixes none of them):

- the support (interval for d = 1, L2 ball for d > 1) and its refusal;
- tau by Hoeffding for items in [-R, R] per coordinate (after the rotation, a coordinate
  <u, x> of an item with ||x|| <= R lies in [-R, R]), with the SMALLEST m_i so that every
  user is covered. This is the weakness the poster criticises ("Limitation 1: Not suitable
  for imbalanced data"): one user with few items widens the interval, and so the stage-II
  noise, for all users. We use no concentration gain of the rotation: a randomly rotated
  coordinate of a vector of norm <= R is sub-Gaussian at scale about R / sqrt(d'), which
  could narrow tau by about sqrt(ln(n d') / d') (as we understand it, the purpose of the
  rotation in Levy et al.; not checked against their text). With our tau the rotation
  changes which points are clipped, not the noise;
- ``beta`` is per user (default ``DEFAULT_BETA`` = 0.05); pass beta / n for all n users
  to concentrate together (a union bound);
- the bin grid anchored at -R with width tau, K = ceil(2R / tau); the interval = chosen
  bin +- tau (width 3 tau); Gaussian (not Laplace) noise on the counts and a noisy argmax;
- the budget split (``split`` of epsilon to stage I, default 1/2; delta halved);
- the Sylvester-Hadamard matrix with zero padding to d' = 2^ceil(log2 d) and sensitivities
  in d' (not d: after the rotation all d' coordinates are non-zero); one rotation per release;
- Delta_2 = min(3 tau sqrt(d'), 2R) / n: the min with 2R (bound (b) above) is ours;
- sigma_k = Delta_k gaussian_sigma_analytic(1, eps_k, delta_k) (see "Noise");
- uniform weights 1/n over users (Levy et al.'s balanced setting; the weights of the HLM
  are in ``zhao2024``).

Stated coverage (derived here, not from the paper; tested in tests/papers/zhao2024/test_zhao2024_wme.py):
if the items are i.i.d. with mean mu, per coordinate (of z, mean U [mu; 0]) the interval
misses mu only if the argmax lands two or more bins from mu's bin, where the true count is
at most F = #{i : |z_ij - mu_j| >= tau} ~ Binomial(n, <= beta) (Hoeffding); the best bin
near mu holds >= (n - F) / 3. So, for every integer f with (n - f)/3 > f,
P(mu_j not in I_j) <= P(Bin(n, beta) > f) + (K - 1) Q(((n - f)/3 - f) / (sqrt(2) sigma_1)),
with Q(x) = 1 - Phi(x); for d > 1, a union bound over the d' coordinates.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ._checks import (
    MAGNITUDE,
    check_delta,
    check_epsilon,
    check_finite_array,
    check_generator,
    check_int,
    check_noise_scale,
    check_positive,
    check_real,
    check_size,
)
from .claims import ApproxDP, Claims, GaussianDP
from .data import UserDataset, check_dataset
from .mechanisms import gaussian_gdp_mu, gaussian_sigma_analytic, safe_norms
from .neighbours import REPLACE_USER_ITEMS

__all__ = [
    "RELATION",
    "DEFAULT_BETA",
    "MAX_D",
    "padded_dimension",
    "fwht",
    "random_signs",
    "rotate",
    "unrotate",
    "wme_radius",
    "wme_histogram",
    "wme_localise",
    "wme_statistic",
    "wme_budgets",
    "wme_sensitivities",
    "wme_noise_scales",
    "wme_gdp_mu",
    "wme_claim",
    "wme_mechanism",
]

RELATION = REPLACE_USER_ITEMS  # poster eq. (1): one user's items differ; n and m_i public
DEFAULT_BETA = 0.05  # derived here, not from the paper: per-user Hoeffding failure
_ROUND_UP = 1.0 + 2.0**-50  # covers two roundings (each <= 2^-53 relative) of a product
_CHUNK = 2**22  # floats per array in one chunk of releases (32 MB)
MAX_D = 2**20  # d <= 2^20: a rotation of n averages holds n x d' floats (d' < 2^21)


# ------------------------------------------------------------------------------ inputs
def _open_unit(value, name: str) -> float:
    """A real in the open interval (0, 1)."""
    v = check_real(value, name)
    if not 0.0 < v < 1.0:
        raise ValueError(f"{name} must lie in (0, 1), got {v!r}")
    return v


def _delta(delta, name: str = "delta") -> float:
    d = check_delta(delta, name)
    if d == 0.0:
        raise ValueError(f"{name} must lie in (0, 1): Gaussian noise needs delta > 0, got 0.0")
    return d


def _min_count(m) -> int:
    """m_min from an int m >= 1 or a non-empty 1-D integer array of the m_i."""
    if isinstance(m, numbers.Integral) and not isinstance(m, (bool, np.bool_)):
        return check_int(m, "m (items per user)")
    a = np.asarray(m) if isinstance(m, (list, tuple, np.ndarray)) else None
    if a is None or a.dtype.kind not in "iu" or a.ndim != 1:
        raise TypeError(
            f"m must be an int or a 1-D integer array of items per user, got {type(m).__name__}"
            + ("" if a is None else f" of dtype {a.dtype}, shape {a.shape}")
        )
    if a.size == 0:
        raise ValueError("m must hold at least one user's item count, got an empty array")
    i = int(np.argmin(a))
    return check_int(int(a[i]), f"m[{i}] (items of user {i}; a user with zero items has no local average)")


def padded_dimension(d) -> int:
    """d' = 2^ceil(log2 d): the Hadamard size the rotation pads d to (d' = 1 for d = 1);
    d in [1, MAX_D]."""
    d = check_int(d, "d", hi=MAX_D)
    return 1 << (d - 1).bit_length()


def _signs(signs, d: int, d_pad: int):
    """None for d = 1 (no rotation); for d > 1 a (d',) or (k, d') array of +-1 (None refused)."""
    if d == 1:
        if signs is not None:
            raise ValueError("signs must be None for d = 1: one coordinate is not rotated")
        return None
    if signs is None:
        raise ValueError(f"signs must be given for d = {d} > 1 (draw them with random_signs(d, rng))")
    s = check_finite_array(signs, "signs", ndim=(1, 2))
    if s.shape[-1] != d_pad:
        raise ValueError(f"signs must have {d_pad} entries per rotation (d' for d = {d}), got shape {s.shape}")
    if s.ndim == 2 and s.shape[0] == 0:
        raise ValueError("signs must hold at least one rotation, got shape (0, d')")
    bad = np.abs(s) != 1.0
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"signs must be +1 or -1; signs[{', '.join(map(str, idx))}] = {s[idx].item()!r}")
    return s


def _local_averages(dataset, R: float) -> np.ndarray:
    """y_i for every user, (n, d), after refusing items outside the declared support."""
    D = check_dataset(dataset)
    v = D.values
    if v.ndim == 1 or v.shape[1] == 1:
        size, what = np.abs(v).reshape(-1), f"|x| <= R = {R!r}"
    else:
        size, what = safe_norms(v), f"||x||_2 <= R = {R!r}"
    bad = size > R
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"dataset values must lie in the declared support {what} (the WME's bin grid "
            f"assumes it; derived here, not from the paper); record {i} has norm {float(size[i])!r}"
        )
    return D.local_averages().reshape(D.m, D.d)


# ---------------------------------------------------------------- the Hadamard rotation
def fwht(x) -> np.ndarray:
    """H_d' x along the last axis (unnormalised Sylvester-Hadamard: H_1 = [1],
    H_2k = [[H_k, H_k], [H_k, -H_k]]); d' a power of two. O(d' log d') per vector, vectorised
    over the leading axes: log2(d') butterfly passes (a, b) -> (a + b, a - b)."""
    a = check_finite_array(x, "x")
    if a.ndim == 0 or a.shape[-1] == 0 or a.shape[-1] & (a.shape[-1] - 1):
        raise ValueError(f"x must have a last axis whose length is a power of two, got shape {a.shape}")
    if a.size and float(np.max(np.abs(a))) > MAGNITUDE[1]:
        raise ValueError(
            f"x entries must have |x| <= {MAGNITUDE[1]:g} (the supported range; sums of d' <= 2^21 of them stay finite)"
        )
    lead, n = a.shape[:-1], a.shape[-1]
    h = 1
    while h < n:  # pass h: pairs (i, i + h) inside blocks of 2h
        blocks = a.reshape(*lead, n // (2 * h), 2, h)
        top, bottom = blocks[..., 0, :], blocks[..., 1, :]
        a = np.stack((top + bottom, top - bottom), axis=-2).reshape(*lead, n)
        h *= 2
    return a.copy() if a is x else a  # d' = 1: never hand back the caller's array


def random_signs(d, rng, size=None) -> np.ndarray:
    """The diagonal of D for U = H D / sqrt(d'): i.i.d. uniform +-1, shape (d',) or (size, d').
    Public randomness, drawn independently of the data."""
    d_pad = padded_dimension(d)
    rng, size = check_generator(rng), check_size(size)
    shape = (d_pad,) if size is None else (size, d_pad)
    return 1.0 - 2.0 * rng.integers(0, 2, size=shape)


def _rotate(Y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """U [y; 0] for rows y of Y (..., n, d) and signs s (..., d') broadcast as (..., 1, d')."""
    d_pad = s.shape[-1]
    pad = np.zeros((*Y.shape[:-1], d_pad))
    pad[..., : Y.shape[-1]] = Y
    return fwht(pad * s[..., None, :]) / math.sqrt(d_pad)


def rotate(x, signs) -> np.ndarray:
    """z = H D [x; 0] / sqrt(d') for x of shape (d,) or (k, d), d > 1; signs (d',) or (k, d')
    (one rotation per row). Orthogonal: ||z|| = ||x||."""
    a = check_finite_array(x, "x", ndim=(1, 2))
    if a.shape[-1] < 2:
        raise ValueError(f"x must have d >= 2 coordinates (d = 1 is not rotated), got shape {a.shape}")
    d = a.shape[-1]
    s = _signs(signs, d, padded_dimension(d))
    if s.ndim == 2 and (a.ndim == 1 or a.shape[0] != s.shape[0]):
        raise ValueError(f"signs of shape {s.shape} need x of shape ({s.shape[0]}, {d}), got {a.shape}")
    return _rotate(a[..., None, :], s)[..., 0, :]


def unrotate(z, signs, d) -> np.ndarray:
    """The first d coordinates of U^T z = D H z / sqrt(d') (U^{-1} = U^T, as H H = d' I);
    z of shape (d',) or (k, d'), signs (d',) or (k, d')."""
    d = check_int(d, "d", lo=2, hi=MAX_D)
    d_pad = padded_dimension(d)
    a = check_finite_array(z, "z", ndim=(1, 2))
    if a.shape[-1] != d_pad:
        raise ValueError(f"z must have d' = {d_pad} coordinates for d = {d}, got shape {a.shape}")
    s = _signs(signs, d, d_pad)
    if s.ndim == 2 and (a.ndim == 1 or a.shape[0] != s.shape[0]):
        raise ValueError(f"signs of shape {s.shape} need z of shape ({s.shape[0]}, {d_pad}), got {a.shape}")
    return (s * fwht(a) / math.sqrt(d_pad))[..., :d]


def _rotated_averages(Y: np.ndarray, s, R: float) -> np.ndarray:
    """z_i clamped to [-R, R], shape (k, n, d'): k = 1 without rotation or for one (d',)
    rotation, k rotations for (k, d') signs. The clamp only removes rounding (||U y|| = ||y||)."""
    if s is None:
        return Y[None]
    Z = _rotate(Y[None], s[None] if s.ndim == 1 else s)
    return np.clip(Z, -R, R, out=Z)


# ---------------------------------------------------------------------------- stage I
def wme_radius(m, R, beta=DEFAULT_BETA) -> float:
    """tau = R sqrt(2 ln(2/beta) / m_min) (Hoeffding; derived here, not from the paper).

    An average of m i.i.d. items in [-R, R] (range 2R) with mean mu has
    P(|y - mu| >= t) <= 2 exp(-2 m t^2 / (2R)^2) = 2 exp(-m t^2 / (2 R^2)); setting this to
    beta gives t = tau at m. ``m`` is an int or the array of every user's m_i: the smallest
    decides, so that every user is covered (the imbalance the poster criticises).
    """
    m_min = _min_count(m)
    R = check_positive(R, "R")
    beta = _open_unit(beta, "beta")
    return R * math.sqrt(2.0 * (math.log(2.0) - math.log(beta)) / m_min)


def _grid_size(R: float, tau: float) -> int:
    """K = ceil(2R / tau) bins of width tau from -R cover [-R, R]."""
    return max(1, math.ceil(2.0 * R / tau))


def _histogram(Z: np.ndarray, R: float, tau: float, K: int) -> np.ndarray:
    """c[r, j, k] = #{i : z_ij of rotation r in bin k}, shape (k_rot, d', K); one bincount."""
    k_rot, _, d_pad = Z.shape
    b = np.floor((Z + R) / tau).astype(np.int64)  # bin [e_k, e_k+1), e_k = -R + k tau
    np.clip(b, 0, K - 1, out=b)  # z = R (= e_K) goes to the last bin
    cell = (np.arange(k_rot)[:, None, None] * d_pad + np.arange(d_pad)) * K + b
    return np.bincount(cell.ravel(), minlength=k_rot * d_pad * K).reshape(k_rot, d_pad, K).astype(float)


def _public(dataset, R, beta):
    """(Y (n, d), d, d', n, tau, K, R) after every check of the data and public parameters."""
    R = check_positive(R, "R")
    Y = _local_averages(dataset, R)
    n, d = Y.shape
    tau = wme_radius(dataset.counts, R, beta)
    return Y, d, padded_dimension(d), n, tau, _grid_size(R, tau), R


def wme_histogram(dataset: UserDataset, R, *, beta=DEFAULT_BETA, signs=None) -> np.ndarray:
    """Stage I's noise-free statistic: the counts c_jk of the (rotated) local averages in the
    K bins of width tau, shape (d', K), or (k, d', K) for (k, d') signs. Each row sums to n.
    L2 sensitivity sqrt(2 d') (module docstring)."""
    Y, d, d_pad, _, tau, K, R = _public(dataset, R, beta)
    s = _signs(signs, d, d_pad)
    c = _histogram(_rotated_averages(Y, s, R), R, tau, K)
    return c[0] if s is None or s.ndim == 1 else c


def _noisy_argmax(counts: np.ndarray, sigma1: float, rng, k: int) -> np.ndarray:
    """The chosen bin per release and coordinate, (k, d'): argmax of counts + N(0, sigma_1^2)."""
    noisy = counts + sigma1 * rng.standard_normal((k, *counts.shape[1:]))
    return np.argmax(noisy, axis=-1)  # ties have probability 0


def _interval(j, tau: float, R: float):
    """The chosen bin widened by tau each side: [e_j - tau, e_j + 2 tau]."""
    return -R + (j - 1) * tau, -R + (j + 2) * tau


def _choose(counts: np.ndarray, sigma1: float, tau: float, R: float, rng, k: int):
    """Noisy argmax per coordinate and the interval [e_k - tau, e_k + 2 tau], each (k, d')."""
    return _interval(_noisy_argmax(counts, sigma1, rng, k), tau, R)


def wme_localise(
    dataset: UserDataset, epsilon, delta, R, rng, size=None, *, beta=DEFAULT_BETA, signs=None
) -> tuple[np.ndarray, np.ndarray]:
    """Stage I: (lo, hi), the intervals I_j in rotated coordinates, each (d',) or (size, d').

    ``epsilon``, ``delta`` are this stage's budget (eps_1, delta_1 of ``wme_budgets``):
    sigma_1 = sqrt(2 d') s_1 (``wme_noise_scales``). ``signs``: None for d = 1; for d > 1 one
    (d',) rotation for every release or a (size, d') array, one per release. Coverage of the
    mean: the bound in the module docstring (derived here, not from the paper).
    """
    Y, d, d_pad, n, tau, K, R = _public(dataset, R, beta)
    s = _signs(signs, d, d_pad)
    eps, dl = check_epsilon(epsilon), _delta(delta)
    rng, size = check_generator(rng), check_size(size)
    k = 1 if size is None else size
    if s is not None and s.ndim == 2 and s.shape[0] != k:
        raise ValueError(f"signs of shape {s.shape} give {s.shape[0]} rotations; size = {size!r} needs {k}")
    sigma1 = _sigma_1(d_pad, n, eps, dl)
    counts = _histogram(_rotated_averages(Y, s, R), R, tau, K)
    lo, hi = [], []
    step = max(1, _CHUNK // (d_pad * K))  # releases per chunk (memory)
    for start in range(0, k, step):
        c = min(step, k - start)
        part = counts if counts.shape[0] == 1 else counts[start : start + c]
        a, b = _choose(part, sigma1, tau, R, rng, c)
        lo.append(a)
        hi.append(b)
    lo, hi = np.concatenate(lo), np.concatenate(hi)
    return (lo[0], hi[0]) if size is None else (lo, hi)


# --------------------------------------------------------------------------- stage II
def wme_statistic(dataset: UserDataset, lo, hi, R, *, signs=None) -> np.ndarray:
    """Stage II's noise-free statistic: (1/n) sum_i clip(z_i, [lo, hi]) in rotated
    coordinates, shape (d',), or (k, d') when lo, hi or signs have k rows (they broadcast).

    The clipping is the algorithm's (visible, per coordinate); the weights are 1/n (Levy et
    al.). Every input is refused rather than clipped: lo <= hi is required.
    """
    R = check_positive(R, "R")
    Y = _local_averages(dataset, R)
    d, d_pad = Y.shape[1], padded_dimension(Y.shape[1])
    s = _signs(signs, d, d_pad)
    lo = check_finite_array(lo, "lo", ndim=(1, 2))
    hi = check_finite_array(hi, "hi", ndim=(1, 2))
    for name, a in (("lo", lo), ("hi", hi)):
        if a.shape[-1] != d_pad:
            raise ValueError(f"{name} must have d' = {d_pad} entries per row (d = {d}), got shape {a.shape}")
    try:
        k_shape = np.broadcast_shapes(lo.shape[:-1], hi.shape[:-1], () if s is None else s.shape[:-1])
    except ValueError:
        raise ValueError(
            f"lo, hi and signs must have the same number of rows, got shapes {lo.shape}, "
            f"{hi.shape}, {None if s is None else s.shape}"
        ) from None
    if (lo > hi).any():
        raise ValueError("lo must be <= hi in every coordinate (an interval), got lo > hi somewhere")
    Z = _rotated_averages(Y, s, R)  # (1 or k, n, d')
    out = _clipped_mean(Z, lo.reshape(-1, d_pad), hi.reshape(-1, d_pad))
    return out.reshape(*k_shape, d_pad)


def _clipped_mean(Z: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """(1/n) sum_i clip(z_i, lo, hi) per row: Z (1 or k, n, d'), lo, hi (1 or k, d') -> (k, d')."""
    return np.clip(Z, lo[:, None, :], hi[:, None, :]).mean(axis=1)


# ------------------------------------------------------------------ budgets and noise
def wme_budgets(epsilon, delta, split=0.5) -> tuple[float, float, float, float]:
    """(eps_1, delta_1, eps_2, delta_2) = (split eps, delta/2, eps - split eps, delta/2);
    basic composition gives back (eps, delta) (derived here, not from the paper)."""
    eps, dl, split = check_epsilon(epsilon), _delta(delta), _open_unit(split, "split")
    eps1 = check_epsilon(split * eps, "epsilon * split (stage I's budget)")
    eps2 = check_epsilon(eps - eps1, "epsilon * (1 - split) (stage II's budget)")
    return eps1, 0.5 * dl, eps2, 0.5 * dl


def _unit_sigma(eps: float, delta: float) -> float:
    """s = the analytic Gaussian sigma for sensitivity 1 [BW18, Thm 8]."""
    return gaussian_sigma_analytic(1.0, eps, delta)


def _scaled_sigma(sensitivity: float, eps: float, delta: float) -> float:
    """Delta * s, rounded up: delta(sigma) of BW18 Thm 8 depends on sigma / Delta only."""
    return sensitivity * _unit_sigma(eps, delta) * _ROUND_UP


def _delta_1(d_pad: int) -> float:
    return math.sqrt(2.0 * d_pad)  # stage I: one unit moves in each of d' rows


def _delta_2(d_pad: int, n: int, tau: float, R: float) -> float:
    return min(3.0 * tau * math.sqrt(d_pad), 2.0 * R) / n  # stage II: box diagonal, or 2R (projection)


def _sigma_1(d_pad: int, n: int, eps1: float, delta1: float) -> float:
    sigma = _scaled_sigma(_delta_1(d_pad), eps1, delta1)
    return check_noise_scale(sigma, float(n), "sigma_1 (stage I)")  # counts are <= n


def _sigma_2(d_pad: int, n: int, tau: float, R: float, eps2: float, delta2: float) -> float:
    sigma = _scaled_sigma(_delta_2(d_pad, n, tau, R), eps2, delta2)
    return check_noise_scale(sigma, R, "sigma_2 (stage II)")  # |clipped mean| <= R (clip of [-R, R] data)


def wme_sensitivities(dataset: UserDataset, R, *, beta=DEFAULT_BETA) -> tuple[float, float]:
    """(Delta_1, Delta_2) = (sqrt(2 d'), min(3 tau sqrt(d'), 2R) / n): the L2 sensitivities of
    the stage-I histogram and the stage-II clipped mean (module docstring)."""
    _, _, d_pad, n, tau, _, R = _public(dataset, R, beta)
    return _delta_1(d_pad), _delta_2(d_pad, n, tau, R)


def wme_noise_scales(dataset: UserDataset, epsilon, delta, R, *, beta=DEFAULT_BETA, split=0.5) -> tuple[float, float]:
    """(sigma_1, sigma_2) = (Delta_1 s_1, Delta_2 s_2), s_k = gaussian_sigma_analytic(1, eps_k, delta_k)."""
    e1, d1, e2, d2 = wme_budgets(epsilon, delta, split)
    _, _, d_pad, n, tau, _, R = _public(dataset, R, beta)
    return _sigma_1(d_pad, n, e1, d1), _sigma_2(d_pad, n, tau, R, e2, d2)


def wme_gdp_mu(epsilon, delta, *, split=0.5) -> float:
    """mu = sqrt(mu_1^2 + mu_2^2), mu_k = 1 / s_k = Delta_k / sigma_k [DRS22, Thm 2.7 and
    Cor. 3.3]; independent of the data (sigma_k scales with Delta_k); rounded up by 2^-50."""
    e1, d1, e2, d2 = wme_budgets(epsilon, delta, split)
    mu1 = gaussian_gdp_mu(1.0, _unit_sigma(e1, d1))
    mu2 = gaussian_gdp_mu(1.0, _unit_sigma(e2, d2))
    return math.hypot(mu1, mu2) * _ROUND_UP


def wme_claim(epsilon, delta, *, split=0.5) -> Claims:
    """Claims(ApproxDP(eps, delta) by basic composition, GaussianDP(mu) exact for the two
    Gaussians), under ``RELATION``. GaussianDP carries the same delta, so its
    ``as_eps_delta`` reports the eps that mu implies there (<= eps, tested)."""
    eps, dl = check_epsilon(epsilon), _delta(delta)
    return Claims(ApproxDP(eps, dl), GaussianDP(wme_gdp_mu(eps, dl, split=split), dl))


# -------------------------------------------------------------------------- the release
def wme_mechanism(
    dataset: UserDataset, epsilon, delta, R, rng, size=None, *, beta=DEFAULT_BETA, split=0.5
) -> np.ndarray:
    """The WME release: shape () or (size,) for scalar values, (d,) or (size, d) otherwise.

    Each release draws its own signs (d > 1), stage-I noise and stage-II noise; releases
    are computed in chunks of at most ~2^22 floats per array (memory), no loop over users
    or bins. (eps, delta)-DP and mu-GDP under ``RELATION`` (``wme_claim``).
    """
    Y, d, d_pad, n, tau, K, R = _public(dataset, R, beta)
    e1, d1, e2, d2 = wme_budgets(epsilon, delta, split)
    rng, size = check_generator(rng), check_size(size)
    sigma1 = _sigma_1(d_pad, n, e1, d1)  # Delta_1 = sqrt(2 d')
    sigma2 = _sigma_2(d_pad, n, tau, R, e2, d2)  # Delta_2 = min(3 tau sqrt(d'), 2R) / n
    k = 1 if size is None else size
    per_release = d_pad * max(K, n)
    step = max(1, _CHUNK // per_release)
    out = np.empty((k, d))
    if d == 1:  # no rotation: one histogram, and the clipped mean of each of the K bins
        counts = _histogram(Y[None], R, tau, K)  # (1, 1, K)
        lo, hi = _interval(np.arange(K)[:, None], tau, R)  # every possible interval, (K, 1)
        means = _clipped_mean(Y[None], lo, hi)  # (K, 1): O(K n) once, not per release
        for start in range(0, k, _CHUNK):
            c = min(_CHUNK, k - start)
            j = _noisy_argmax(counts, sigma1, rng, c)  # stage I, (c, 1)
            out[start : start + c] = means[j[:, 0]] + sigma2 * rng.standard_normal((c, 1))  # stage II
        return _shape(out, dataset, size)
    for start in range(0, k, step):
        c = min(step, k - start)
        s = random_signs(d, rng, c)  # (c, d')  step 0
        Z = _rotated_averages(Y, s, R)  # (c, n, d')
        counts = _histogram(Z, R, tau, K)  # (c, d', K)
        lo, hi = _choose(counts, sigma1, tau, R, rng, c)  # stage I, (c, d')
        z = _clipped_mean(Z, lo, hi)  # stage II, (c, d')
        z += sigma2 * rng.standard_normal((c, d_pad))
        out[start : start + c] = unrotate(z, s, d)  # step 4: U^T z
    return _shape(out, dataset, size)


def _shape(out: np.ndarray, dataset, size) -> np.ndarray:
    if dataset.values.ndim == 1:
        out = out[:, 0]
    return out[0] if size is None else out
