"""Amin, Kulesza, Munoz Medina, Vassilvitskii, "Bounding User Contributions: A
Bias-Variance Trade-off in Differential Privacy", Proceedings of the 36th International
Conference on Machine Learning (ICML 2019), PMLR 97 (the paper's header; pages 263-271 from
Epasto et al.'s bibliography entry [AKMV19]; our copy states no arXiv id). §3, "A Simple Example".

The capped sum of §3 and the cap that minimises its error bound (eq. 5-6).

Setting and what is implemented
-------------------------------
The paper's §3 has one non-negative value x_i per user. Users here may own many
records, so **the contribution x_l of user l is the user's total** sum_{i in S_l} x_i,
and the cap is applied to that total, once per user:

    g_T(S) = sum_l min(x_l, T),      x_l = sum_{i in S_l} x_i >= 0.          (§3)

With one record per user this is the paper's g_T exactly. Capping each *record* at T
instead would let a user with s_l records move g_T by s_l * T (planted bug
``cap-per-record`` in tests/papers/amin2019/planted.py).

Relation: add/remove one user (Def. 1), ``RELATION``. Claim: pure eps-DP, ``claim``.

Stages (docs/design.md §4): ``user_totals`` -> ``statistic`` (noise-free g_T) ->
``sensitivity`` / ``noise_scale`` -> ``mechanism``. The cap:

- ``optimal_cap_nonprivate``: the exact minimiser of eq. 5, the ceil(1/eps)-th largest
  user total. **Not private**: it reads the data exactly. Releasing g_T + Lap(T/eps)
  with this T is not eps-DP (the audit shows it; planted bug ``data-chosen-cap``).
- ``private_cap`` / ``private_cap_mechanism``: T from an exponential-mechanism quantile
  (Smith 2011 style) over a public range [0, U], then the capped sum; the budget is
  eps = eps_cap + eps_sum by basic composition.

Floating point: the Laplace noise is numpy's float sampler; the floating-point attacks
on textbook Laplace (Mironov 2012) are out of scope of this reference, as elsewhere here.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ._checks import (
    MAGNITUDE,
    check_epsilon,
    check_finite_array,
    check_generator,
    check_nonnegative,
    check_positive,
    check_size,
)
from .claims import PureDP
from .data import UserDataset, check_dataset
from .mechanisms import clip_interval, laplace_mechanism, laplace_scale
from .neighbours import ADD_REMOVE_USER

__all__ = [
    "RELATION",
    "claim",
    "user_totals",
    "statistic",
    "sensitivity",
    "noise_scale",
    "mechanism",
    "error_bound",
    "optimal_rank",
    "optimal_cap_nonprivate",
    "capped_sums",
    "private_cap",
    "private_cap_claim",
    "private_cap_mechanism",
]

RELATION = ADD_REMOVE_USER  # Def. 1: S ~ S' iff one is the other minus one user's data


def claim(epsilon) -> PureDP:
    """The capped sum with a public cap T is eps-DP under add/remove-user (Def. 2, 4)."""
    return PureDP(check_epsilon(epsilon))


# ------------------------------------------------------------------------ stages
def user_totals(dataset: UserDataset) -> np.ndarray:
    """x_l = sum_{i in S_l} x_i, the contribution of each user, shape (m,).

    §3 assumes non-negative contributions; a negative record value is refused (naming
    its index), never clipped: min(x_l, T) is not a cap for a negative total.
    """
    _check_values(dataset)
    return dataset.user_sums()  # (m,); may overflow to inf for records near the float maximum


def _check_values(dataset: UserDataset) -> np.ndarray:
    """The records x_i (n,), checked: scalar per record and >= 0 (§3's domain)."""
    check_dataset(dataset)
    if dataset.values.ndim != 1:
        raise ValueError(
            f"dataset.values must be scalar per record (shape (n,)) for §3's sum, got shape {dataset.values.shape}"
        )
    neg = dataset.values < 0
    if neg.any():
        i = int(np.argmax(neg))
        raise ValueError(
            f"dataset.values must be >= 0 (§3: non-negative contributions); values[{i}] = {float(dataset.values[i])!r}"
        )
    return dataset.values


def _totals_capped_at(dataset: UserDataset, T: float) -> np.ndarray:
    """min(x_l, T) for every user, (m,), summed from the records clipped to [0, T] first, so that no
    total overflows (the domain x_i >= 0 is unbounded: two records of 1.7e308 sum to inf).

    Exact, not an approximation: the records are >= 0, so if every record of user l is < T the
    clipped records are the records themselves (the same float sum, bit for bit), and if one
    record is >= T both sums are >= T (a float sum of non-negative terms is at least each term:
    rounding is monotone), so both minima are T. Hence min(sum_i min(x_i, T), T) = min(x_l, T)
    in floats, and the sum of at most n records each <= T <= 1e50 (``MAGNITUDE``) is finite."""
    x = _check_values(dataset)
    return np.minimum(dataset.user_sums(np.minimum(x, T)), T)  # (m,)


def _cap(T, name: str = "T") -> float:
    return check_positive(T, name)  # T = 0 would release the constant 0 with zero noise


def statistic(dataset: UserDataset, T) -> float:
    """g_T(S) = sum_l min(x_l, T), noise-free (§3). The cap is visible: clip to [0, T]."""
    T = _cap(T)
    x = _totals_capped_at(dataset, T)  # (m,): min(x_l, T), no overflow (records clipped first)
    return float(np.sum(clip_interval(x, 0.0, T)))  # §3: g_T = sum min(x_l, T)


def sensitivity(T) -> float:
    """Delta_{g_T} = T under add/remove-user (eq. 2).

    Why: adding or removing user l changes g_T by exactly min(x_l, T) in [0, T], and a
    user with total >= T attains T.
    """
    return _cap(T)  # eq. 2: max |g_T(S) - g_T(S')| = T


def noise_scale(T, epsilon) -> float:
    """b = Delta_{g_T} / eps = T / eps (Def. 4 with eq. 2)."""
    return laplace_scale(sensitivity(T), epsilon)  # Def. 4: scale Delta_f / eps


def mechanism(dataset: UserDataset, T, epsilon, rng, size=None) -> np.ndarray:
    """Lap_{g_T, eps}(S) = g_T(S) + Lap(T / eps); shape () or (size,).

    Why this is private: ``sensitivity`` shows |g_T(S) - g_T(S')| <= T for every
    add/remove-user pair (the user's *total* is capped once, in ``statistic``), and the
    Laplace mechanism with scale T/eps is then eps-DP (Def. 4). T must be public: chosen
    without looking at the data (see ``optimal_cap_nonprivate`` for why). Total on the whole
    domain x_i >= 0: the user totals are summed from records clipped to T (``_totals_capped_at``,
    exactly min(x_l, T)), so no total overflows and no dataset makes it raise or warn; a refusal
    reads only T, epsilon, size and the shape and sign of the records (the declared domain).
    """
    g_T = statistic(dataset, T)
    return laplace_mechanism(g_T, sensitivity(T), epsilon, rng, size=size)


# ------------------------------------------------------------------ the optimal cap
def error_bound(x, T, epsilon) -> float:
    """Eq. 5: E|g_hat - g(S)| <= T/eps + sum_l max(0, x_l - T)  (variance + bias).

    ``x``: the user totals x_l >= 0 (non-empty, as ``user_totals`` returns them); ``T`` >= 0
    (T = 0 is the degenerate minimiser ``optimal_cap_nonprivate`` returns when ceil(1/eps) > m:
    release nothing, error = the whole sum).
    """
    x = check_finite_array(x, "x", ndim=(1,))
    if x.size == 0:
        raise ValueError("x (the user totals) must be non-empty")
    if (x < 0).any():
        i = int(np.argmax(x < 0))
        raise ValueError(f"x must be >= 0 (§3: non-negative contributions); x[{i}] = {float(x[i])!r}")
    T = check_nonnegative(T, "T")
    return T / check_epsilon(epsilon) + float(np.sum(np.maximum(0.0, x - T)))  # eq. 5


def optimal_rank(epsilon) -> int:
    """k = ceil(1/eps), computed exactly on the float eps (Fraction: no rounding of 1/eps)."""
    eps = check_epsilon(epsilon)
    return math.ceil(1 / Fraction(eps))  # eq. 6 -> ceil(1/eps)-th largest


def optimal_cap_nonprivate(dataset: UserDataset, epsilon) -> float:
    """NOT PRIVATE. T* = the ceil(1/eps)-th largest user total x_l (eq. 5-6).

    Derivation: eq. 5 is convex in T with sub-derivative 1/eps - |{l : x_l > T}| (eq. 6).
    Let k = ceil(1/eps) and x_(1) >= x_(2) >= ... the totals sorted with ties repeated.
    At T = x_(k): |{x_l > T}| <= k - 1 < 1/eps <= k <= |{x_l >= T}|, so 0 lies in the
    sub-differential [1/eps - |{x_l >= T}|, 1/eps - |{x_l > T}|] and x_(k) is a minimiser.
    Ties need no special case. When 1/eps is an integer every T in [x_(k+1), x_(k)]
    minimises eq. 5; the paper's x_(k) is the largest of them. When k > m the slope is
    positive on T >= 0 and the minimiser is T = 0 (returned; nothing useful to release).

    This reads the data exactly, so g_T + Lap(T/eps) with this T is NOT eps-DP (the
    audit of planted bug ``data-chosen-cap`` shows it). Use ``private_cap`` instead.
    """
    k = optimal_rank(epsilon)
    x = user_totals(dataset)  # (m,)
    if k > x.size:
        return 0.0
    return float(np.partition(x, x.size - k)[x.size - k])  # k-th largest, O(m)


# ------------------------------------------------------------- the private cap
def capped_sums(dataset: UserDataset, T) -> np.ndarray:
    """g_T for an array of caps T >= 0 at once: sum_{x_l <= T} x_l + T |{l : x_l > T}|.

    The same quantity as ``statistic`` (§3), vectorised over T by one sort of the totals.
    """
    T = check_finite_array(T, "T", ndim=(0, 1))
    bad = (T < 0) | (T > MAGNITUDE[1]) | ((T > 0) & (T < MAGNITUDE[0]))
    if bad.any():
        raise ValueError(
            f"T (the caps) must be 0 or lie in [{MAGNITUDE[0]:g}, {MAGNITUDE[1]:g}], "
            f"got {float(T.flat[int(np.argmax(bad))])!r}"
        )
    return _capped_sums(np.sort(user_totals(dataset)), T)


def _capped_sums(xs: np.ndarray, T: np.ndarray) -> np.ndarray:
    """``capped_sums`` from the user totals sorted ascending, ``xs`` (m,)."""
    below = np.searchsorted(xs, T, side="right")  # |{x_l <= T}|
    prefix = np.r_[0.0, np.cumsum(xs)]  # (m+1,)
    return prefix[below] + T * (xs.size - below)  # sum min(x_l, T)


def _cap_intervals(xs: np.ndarray, U: float, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The EM's intervals of [0, U] and their utilities u = -| |{x_l > T}| - k |; ``xs`` sorted ascending.

    The breakpoints are 0, the distinct totals in (0, U), and U. On the interval starting at a
    total x_(i) that is the last of its run of equal totals (sorted position i), |{x_l > T}| =
    m - (i + 1); on the first one, starting at 0, it is m - |{x_l <= 0}|. One pass, no search.
    """
    i0, i1 = np.searchsorted(xs, 0.0, side="right"), np.searchsorted(xs, U, side="left")  # xs[i0:i1] in (0, U)
    last = i0 + np.flatnonzero(np.diff(xs[i0:i1], append=np.inf))  # last position of each distinct total
    lo, hi = np.r_[0.0, xs[last]], np.r_[xs[last], U]  # (J,) intervals [lo, hi]
    above = xs.size - np.r_[i0, last + 1]  # |{x_l > T}|, T in (lo, hi)
    return lo, hi, -np.abs(above - k).astype(float)


def private_cap(dataset: UserDataset, epsilon_cap, epsilon_sum, U, rng, size=None) -> np.ndarray:
    """T ~ exponential mechanism on [0, U] aiming at the ceil(1/eps_sum)-th largest total.

    Utility u(S, T) = -| |{l : x_l > T}| - k | with k = ceil(1/eps_sum) (eq. 6: the slope
    of the eq. 5 bound for the *sum's* eps is 1/eps_sum - |{x_l > T}|). Density
    proportional to exp(eps_cap u(S, T) / 2) on [0, U] (McSherry-Talwar 2007; Smith 2011's
    quantile sampler): pick interval j with probability prop. to (hi_j - lo_j) exp(eps_cap u_j / 2),
    then T uniform in it. Totals above U are not clipped; they count as above every T.

    Why this is private: adding or removing one user changes |{x_l > T}| by 0 or 1 for
    every T, so u has sensitivity 1 and the exponential mechanism with exp(eps u / 2)
    is eps_cap-DP. u is not monotone in the data (it rises for some T and falls for
    others), so the factor 1/2 is needed; exp(eps u) is the planted bug ``em-no-half``.
    """
    e_cap = check_epsilon(epsilon_cap, "epsilon_cap")
    k = optimal_rank(check_epsilon(epsilon_sum, "epsilon_sum"))
    U, rng, n_out = check_positive(U, "U"), check_generator(rng), check_size(size)
    xs = np.sort(_totals_capped_at(dataset, U))  # (m,): min(x_l, U), no overflow (``_draw_caps`` says why)
    T = _draw_caps(xs, e_cap, k, U, rng, 1 if n_out is None else n_out)
    return T[0] if n_out is None else T


def _draw_caps(xs: np.ndarray, e_cap: float, k: int, U: float, rng, n_out: int) -> np.ndarray:
    """``private_cap``'s n_out draws of T (n_out,), from the user totals sorted ascending, ``xs``.

    ``xs`` may be the totals capped at U, min(x_l, U) (what the callers pass, so that no total
    overflows): the draw reads only the totals in (0, U) and how many are >= U (``_cap_intervals``),
    and capping at U changes neither, so the distribution of T, and so the privacy argument, is that
    of the uncapped totals."""
    lo, hi, u = _cap_intervals(xs, U, k)
    logw = np.log(hi - lo) + e_cap * u / 2.0  # McSherry-Talwar: exp(eps u / 2)
    p = np.exp(logw - logw.max())
    j = rng.choice(lo.size, size=n_out, p=p / p.sum())
    return rng.uniform(lo[j], hi[j])  # (n_out,)


def private_cap_claim(epsilon_cap, epsilon_sum) -> PureDP:
    """Basic composition: eps = eps_cap + eps_sum (Dwork-Roth 2014, Thm 3.16 states it for
    mechanisms run side by side; here the sum's scale depends on the released T, which the
    adaptive version covers: the sum is eps_sum-DP for every fixed T, so the joint density
    ratio is at most e^eps_cap e^eps_sum pointwise)."""
    return PureDP(check_epsilon(epsilon_cap, "epsilon_cap") + check_epsilon(epsilon_sum, "epsilon_sum"))


def private_cap_mechanism(dataset: UserDataset, epsilon_cap, epsilon_sum, U, rng, size=None) -> np.ndarray:
    """Release (T, g_T(S) + Lap(T / eps_sum)) with T from ``private_cap``; shape (2,) or (size, 2).

    Both T and the sum are released (T is needed to read the sum's bias). Why this is
    private: T is eps_cap-DP (``private_cap``); for every fixed T the sum is
    eps_sum-DP (``mechanism``); adaptive basic composition gives eps_cap + eps_sum.
    """
    e_cap, e_sum = check_epsilon(epsilon_cap, "epsilon_cap"), check_epsilon(epsilon_sum, "epsilon_sum")
    U, rng, n_out = check_positive(U, "U"), check_generator(rng), check_size(size)
    # (m,) min(x_l, U), ascending: once, for T and for g_T. Capped at U, the public upper end of
    # every T, so no total overflows: g_T for T <= U is sum_l min(x_l, T) = sum_l min(min(x_l, U), T)
    xs = np.sort(_totals_capped_at(dataset, U))
    T = _draw_caps(xs, e_cap, optimal_rank(e_sum), U, rng, 1 if n_out is None else n_out)  # private_cap
    g_T = _capped_sums(xs, T)  # §3, one g_T per draw (capped_sums)
    noisy = rng.laplace(g_T, T / e_sum)  # Def. 4: Lap(T / eps_sum)
    out = np.stack([T, noisy], axis=-1)  # (size, 2)
    return out[0] if size is None else out
