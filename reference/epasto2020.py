"""A. Epasto, M. Mahdian, J. Mao, V. Mirrokni, L. Ren, "Smoothly Bounding User
Contributions in Differential Privacy", NeurIPS 2020 (our copy of the paper gives no
arXiv id). §3: estimating a mean with weighted averaging.

Setting (§3): y_i = beta + xi_i in [0, B], Var(xi_i) = sigma^2; user l owns the records
S_l, s_l = |S_l|; s_1 <= ... <= s_m are the sorted sizes (Lemma 3 reads them sorted).

- Algorithm 1, ``WA_c``: beta_hat = sum_i c_i y_i, then Laplace with scale
  b = B max_l sum_{i in S_l} c_i / eps (Lemma 1); its variance is Lemma 2.
- Lemma 3 / Claim 1: the optimal c is c_i = min(h, s_q) / (s_q n_h), i in S_q, with
  n_h = sum_l min(h, s_l); ``optimal_h`` finds the exact minimiser h* of v(h) on [s_1, s_m].
- §3.2 / Claim 2: sample limiting keeps min(s_l, h) records of each user (integer h) with
  weight 1/n_h; ``best_integer_h`` minimises v'(h) exactly over the integers.
- §3.3 / Theorems 2-3: ``theorem2_instance`` and ``variance_ratio`` (min v' / min v).

Neighbouring relation and claim (read both ways, see "Why this is private"):
``RELATION = REPLACE_USER`` (one user's values change; S_l, hence every s_l, stays
public) and ``CLAIM = PureDP(eps)``. The paper's §2.2 says exactly this ("S_l's are
publicly known"; neighbours are "the same except all data points from a single user").
Under add/remove-user the claim is FALSE for the optimal and sample-limiting weights:
they depend on every s_l, so removing a user changes every weight and the noise scale
itself. That reading is kept as a planted bug (tests/papers/epasto2020/planted.py).

Why this is private (Lemma 1). Fix c (it may depend on the public s_l, sigma, B and eps,
never on the values). If user l's values change inside [0, B] and nobody else's do,
|beta_hat(D) - beta_hat(D')| = |sum_{i in S_l} c_i (y_i - y'_i)| <= B sum_{i in S_l} c_i,
with equality when user l moves from all 0 to all B (c_i >= 0). So the L1 sensitivity
is Delta = B max_l W_l with W_l = sum_{i in S_l} c_i (``wa_sensitivity``), and Laplace
noise of scale Delta / eps is eps-DP (Theorem 1 / DR14 Thm 3.6, ``laplace_mechanism``).
This needs (a) y in [0, B] - refused otherwise, never clipped (``_check_y``); (b) c >= 0
(``_check_c``); (c) c computed from public quantities only (``optimal_weights`` reads
only the counts). Floating point: beta_hat and Delta are computed in double precision;
the usual floating-point attacks on textbook Laplace sampling are out of scope here.
"""

from __future__ import annotations

import numbers

import numpy as np

from ._checks import (
    MAX_INT,
    check_epsilon,
    check_finite_array,
    check_in_interval,
    check_int,
    check_nonnegative,
    check_positive,
    check_real,
)
from .claims import PureDP
from .data import UserDataset, check_dataset
from .mechanisms import laplace_mechanism, laplace_scale
from .neighbours import REPLACE_USER

__all__ = [
    "RELATION",
    "claim",
    "user_weights",
    "wa_statistic",
    "wa_sensitivity",
    "wa_noise_scale",
    "wa_mechanism",
    "wa_variance",
    "n_h",
    "lemma3_weights",
    "v",
    "optimal_h",
    "optimal_weights",
    "optimal_wa_mechanism",
    "sample_limiting_weights",
    "v_prime",
    "best_integer_h",
    "sample_limiting_mechanism",
    "best_sample_limiting_mechanism",
    "theorem2_instance",
    "variance_ratio",
]

RELATION = REPLACE_USER  # §2.2: S_l public; one user's values replaced
SUM_TOL = 1e-9  # |sum c - 1| allowed: pairwise summation of n <= 1e8 terms errs by < 1e-13


def claim(epsilon) -> PureDP:
    """Lemma 1: WA_c is eps-DP under ``RELATION`` for every fixed c >= 0 summing to 1."""
    return PureDP(epsilon)


# ----------------------------------------------------------------------------- inputs
def _check_B(B) -> float:
    return check_positive(B, "B")


def _check_sigma(sigma, B: float) -> float:
    """sigma >= 0 is public (the paper treats it as known). Default B/2: the largest
    standard deviation a [0, B]-valued variable can have (Popoviciu's inequality)."""
    if sigma is None:
        return B / 2.0
    return check_nonnegative(sigma, "sigma")


def _check_y(dataset: UserDataset, B: float) -> np.ndarray:
    """y_i in [0, B] (§3); out-of-range data is refused, not clipped."""
    check_dataset(dataset)
    if dataset.values.ndim != 1:
        raise ValueError(f"dataset.values must be scalar y_i (shape (n,)), got {dataset.values.shape}")
    return check_in_interval(dataset.values, 0.0, B, "dataset.values")


def _check_c(c, n: int) -> np.ndarray:
    """Algorithm 1's parameters: c_i >= 0 and sum_i c_i = 1 (up to ``SUM_TOL``)."""
    c = check_finite_array(c, "c", ndim=(1,))
    if c.shape != (n,):
        raise ValueError(f"c must have shape ({n},) (one weight per record), got {c.shape}")
    if (c < 0).any():
        i = int(np.argmax(c < 0))
        raise ValueError(f"c must be non-negative (Algorithm 1); c[{i}] = {c[i]!r}")
    total = float(c.sum())
    if abs(total - 1.0) > SUM_TOL:
        raise ValueError(f"c must sum to 1 (Algorithm 1), got sum(c) = {total!r}")
    return c


# A counts array is expanded to one weight per record (user 0's s_0 records first, ...):
# that layout must fit in memory (8 GB of doubles).
MAX_LAYOUT = 10**9


def _counts(dataset_or_counts) -> np.ndarray:
    """s (m,): a dataset's user sizes, or a counts array of integers in [1, MAX_INT]."""
    if isinstance(dataset_or_counts, UserDataset):
        return dataset_or_counts.counts
    s = np.asarray(dataset_or_counts)
    if s.dtype.kind not in "iu" or s.ndim != 1:
        raise TypeError(
            f"counts must be a UserDataset or a 1-D integer array of s_l, "
            f"got {type(dataset_or_counts).__name__} of dtype {s.dtype}, shape {s.shape}"
        )
    if s.size == 0:
        raise ValueError("counts must hold at least one user size s_l, got an empty array")
    bad = (s < 1) | (s > MAX_INT)
    if bad.any():
        l = int(np.argmax(bad))
        raise ValueError(
            f"counts must be integers in [1, {MAX_INT}] (an empty user owns no record); counts[{l}] = {s[l]!r}"
        )
    return s.astype(np.int64)


def _user_index(dataset_or_counts, s: np.ndarray) -> np.ndarray:
    """Each record's user position l, (n,); a counts array lays records out user by user."""
    if isinstance(dataset_or_counts, UserDataset):
        return dataset_or_counts.user_index
    n = int(s.sum())
    if n > MAX_LAYOUT:
        raise ValueError(
            f"counts sum to {n} records; weights for a counts array are built in memory, "
            f"at most MAX_LAYOUT = {MAX_LAYOUT} records"
        )
    return np.repeat(np.arange(s.size), s)


def _public_inputs(counts, sigma, B, epsilon) -> tuple[np.ndarray, float, float, float]:
    """(s, sigma, B, eps) checked: the public quantities v, v' and their minimisers read."""
    s = _counts(counts)
    B = _check_B(B)
    return s, _check_sigma(sigma, B), B, check_epsilon(epsilon)


def _h_array(h) -> np.ndarray:
    """h for v and v': a real or an array of reals in [1e-50, 1e50] (min(h, s_l) needs h > 0)."""
    a = check_finite_array(h, "h")
    bad = (a < 1e-50) | (a > 1e50)
    if bad.any():
        raise ValueError(f"h must lie in [1e-50, 1e50] (the supported range), got {a.flat[int(np.argmax(bad))]!r}")
    return a


def _check_h(h, s: np.ndarray, *, integer: bool = False) -> float:
    """Lemma 3: s_1 <= h <= s_m (integer h for sample limiting, §3.2)."""
    if integer and (isinstance(h, bool) or not isinstance(h, numbers.Integral)):
        raise TypeError(
            f"h must be an int for sample limiting (§3.2: an integer threshold), got {type(h).__name__} {h!r}"
        )
    v = check_real(h, "h")
    lo, hi = int(s.min()), int(s.max())
    if not (lo <= v <= hi):
        raise ValueError(f"h must lie in [s_1, s_m] = [{lo}, {hi}] (Lemma 3), got {h!r}")
    if integer and v != int(v):
        raise ValueError(f"h must be an integer for sample limiting (§3.2), got {h!r}")
    return v


# ------------------------------------------------------------- Algorithm 1 (WA_c) stages
def user_weights(dataset: UserDataset, c) -> np.ndarray:
    """W_l = sum_{i in S_l} c_i for every user l, shape (m,)."""
    c = _check_c(c, check_dataset(dataset).n)
    return dataset.user_sums(c)


def wa_statistic(dataset: UserDataset, c, B) -> float:
    """Algorithm 1 line 1: beta_hat = c_1 y_1 + ... + c_n y_n (noise-free)."""
    y = _check_y(dataset, _check_B(B))
    return float(_check_c(c, dataset.n) @ y)


def wa_sensitivity(dataset: UserDataset, c, B) -> float:
    """Lemma 1: Delta = B * max_l sum_{i in S_l} c_i (L1, under ``RELATION``)."""
    return _check_B(B) * float(user_weights(dataset, c).max())


def wa_noise_scale(dataset: UserDataset, c, B, epsilon) -> float:
    """Algorithm 1 line 2: b = B * max_l sum_{i in S_l} c_i / eps."""
    return laplace_scale(wa_sensitivity(dataset, c, B), check_epsilon(epsilon))


def wa_mechanism(dataset: UserDataset, rng, size=None, *, c, B, epsilon) -> np.ndarray:
    """Algorithm 1: beta_tilde = beta_hat + Lap(b); shape () or (size,)."""
    beta_hat = wa_statistic(dataset, c, B)
    return laplace_mechanism(beta_hat, wa_sensitivity(dataset, c, B), epsilon, rng, size)


def wa_variance(dataset: UserDataset, c, sigma, B, epsilon) -> float:
    """Lemma 2: Var(beta_tilde) = sigma^2 sum_i c_i^2 + 2 (B max_l W_l / eps)^2."""
    c = _check_c(c, check_dataset(dataset).n)
    sigma = _check_sigma(sigma, _check_B(B))
    return sigma**2 * float(c @ c) + 2.0 * wa_noise_scale(dataset, c, B, epsilon) ** 2


# ----------------------------------------------------- Lemma 3 / Claim 1: optimal weights
def n_h(counts, h) -> float:
    """n_h = sum_{l=1}^m min(h, s_l) (defined after Lemma 3), for a real h in [1e-50, 1e50]."""
    s = _counts(counts)
    return float(np.minimum(check_positive(h, "h"), s).sum())


def lemma3_weights(dataset_or_counts, h) -> np.ndarray:
    """Lemma 3: c_i = min(h, s_q) / (s_q n_h) for each record i of user q; shape (n,)."""
    s = _counts(dataset_or_counts)
    h = _check_h(h, s)
    per_user = np.minimum(h, s) / (s * np.minimum(h, s).sum())  # (m,)  Lemma 3
    return per_user[_user_index(dataset_or_counts, s)]  # (n,)


def v(counts, h, sigma, B, epsilon) -> np.ndarray:
    """Claim 1: v(h) = sigma^2 sum_l s_l (min(h, s_l) / (n_h s_l))^2 + 2 (B h / (eps n_h))^2.

    Evaluated straight from the definition (O(m) per h; ``h`` may be an array): this is the
    oracle that ``optimal_h``'s closed form is tested against.
    """
    s, sigma, B, eps = _public_inputs(counts, sigma, B, epsilon)
    h = _h_array(h)[..., None]  # (..., 1)
    mins = np.minimum(h, s)  # (..., m)
    nh = mins.sum(axis=-1)  # (...,)  n_h
    var = sigma**2 * (s * (mins / (nh[..., None] * s)) ** 2).sum(axis=-1)
    return var + 2.0 * (B * h[..., 0] / (eps * nh)) ** 2


def _pieces(s: np.ndarray):
    """Sorted distinct sizes u_0 < ... < u_{J-1} and, for h in piece [u_j, u_{j+1}],
    A_j = sum_{s_l <= u_j} s_l, r_j = #{s_l > u_j}, R_j = sum_{s_l > u_j} 1/s_l, so that
    n_h = A_j + r_j h and sum_l min(h, s_l)^2 / s_l = A_j + R_j h^2. Suffix sums, not
    differences, keep r_j and R_j free of cancellation. O(m log m) for the sort."""
    u, mult = np.unique(s, return_counts=True)  # (J,), (J,)
    A = np.cumsum(u * mult.astype(float))[:-1]  # (J-1,)
    r = np.cumsum(mult[::-1])[::-1][1:].astype(float)  # (J-1,)
    R = np.cumsum((mult / u)[::-1])[::-1][1:]  # (J-1,)
    return u.astype(float), A, r, R


def optimal_h(counts, sigma, B, epsilon) -> float:
    """The exact minimiser h* of Claim 1's v(h) over [s_1, s_m].

    Derivation. On a piece h in [u_j, u_{j+1}] (``_pieces``), with K = 2 B^2 / eps^2 and
    P = sigma^2 R + K,
        v(h) = (sigma^2 A + P h^2) / (A + r h)^2,
        v'(h) = 2 A (P h - r sigma^2) / (A + r h)^3.
    A >= s_1 > 0, so v falls up to h0 = r sigma^2 / P and rises after it: the piece's
    minimiser is h0 clipped to [u_j, u_{j+1}] (h0 = 0 when r = 0 or sigma = 0: the left
    end). v is continuous, so h* is the best of the J-1 piece minimisers; one vectorized
    pass, no grid, no loop. Ties go to the smaller h. If all s_l are equal, h* = s_1.
    """
    s, sigma, B, eps = _public_inputs(counts, sigma, B, epsilon)
    u, A, r, R = _pieces(s)
    if u.size == 1:
        return float(u[0])
    K = 2.0 * B**2 / eps**2
    P = sigma**2 * R + K  # > 0 since K > 0
    h = np.clip(r * sigma**2 / P, u[:-1], u[1:])  # piece minimisers
    vals = (sigma**2 * A + P * h**2) / (A + r * h) ** 2  # Claim 1 on each piece
    return float(h[np.argmin(vals)])


def optimal_weights(dataset_or_counts, epsilon, B, *, sigma=None) -> tuple[np.ndarray, float]:
    """(c, h*): Lemma 3's weights at the exact minimiser of v (Claim 1); c has shape (n,).

    Reads only the counts s_l (public under ``RELATION``) and the public sigma, B, eps.
    For a counts array, records are laid out user by user (user 0's s_0 records first).
    """
    s = _counts(dataset_or_counts)
    h = optimal_h(s, sigma, B, epsilon)
    return lemma3_weights(dataset_or_counts, h), h


def optimal_wa_mechanism(dataset: UserDataset, rng, size=None, *, epsilon, B, sigma=None) -> np.ndarray:
    """WA_c with c = ``optimal_weights`` (Lemma 3 at h*)."""
    c, _ = optimal_weights(check_dataset(dataset), epsilon, B, sigma=sigma)
    return wa_mechanism(dataset, rng, size, c=c, B=B, epsilon=epsilon)


# ------------------------------------------------------- §3.2 / Claim 2: sample limiting
def sample_limiting_weights(dataset_or_counts, h) -> np.ndarray:
    """c_i = 1[i in T] / n_h (§3.2), T = the first min(s_l, h) records of each user in
    record order (the paper's "arbitrarily selects"; any value-independent rule works)."""
    s = _counts(dataset_or_counts)
    user_index = _user_index(dataset_or_counts, s)
    h = _check_h(h, s, integer=True)
    if isinstance(dataset_or_counts, UserDataset):
        order, offsets = dataset_or_counts.record_order
    else:
        order, offsets = np.arange(user_index.size), np.r_[0, np.cumsum(s)]
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size) - np.repeat(offsets[:-1], s)  # position within S_l
    keep = rank < h  # i in T
    return keep / float(np.minimum(h, s).sum())  # 1[i in T] / n_h


def v_prime(counts, h, sigma, B, epsilon) -> np.ndarray:
    """Claim 2: v'(h) = sigma^2 / n_h + 2 (B h / (eps n_h))^2 (``h`` may be an array)."""
    s, sigma, B, eps = _public_inputs(counts, sigma, B, epsilon)
    h = _h_array(h)
    nh = np.minimum(h[..., None], s).sum(axis=-1)
    return sigma**2 / nh + 2.0 * (B * h / (eps * nh)) ** 2


def best_integer_h(counts, sigma, B, epsilon) -> int:
    """The integer h in [s_1, s_m] minimising Claim 2's v'(h), exactly.

    On a piece [u_j, u_{j+1}] (integer ends), n_h = A + r h and
        d/dh v'(h) = [h (2 K A - sigma^2 r^2) - sigma^2 r A] / (A + r h)^3.
    If 2 K A > sigma^2 r^2, v' falls up to h0 = sigma^2 r A / (2 K A - sigma^2 r^2) and
    rises after it, so the best integer is floor(h0) or ceil(h0), clipped to the piece;
    otherwise v' falls on the whole piece and the right end wins. Ties: smaller h.
    """
    s, sigma, B, eps = _public_inputs(counts, sigma, B, epsilon)
    u, A, r, _ = _pieces(s)
    if u.size == 1:
        return int(u[0])
    K = 2.0 * B**2 / eps**2
    a = 2.0 * K * A - sigma**2 * r**2
    with np.errstate(divide="ignore"):
        h0 = np.where(a > 0, sigma**2 * r * A / np.where(a > 0, a, 1.0), np.inf)
    lo, hi = u[:-1, None], u[1:, None]
    cand = np.clip(np.stack([np.floor(h0), np.ceil(h0)], axis=1), lo, hi)  # (J-1, 2)
    nh = A[:, None] + r[:, None] * cand
    vals = sigma**2 / nh + K * cand**2 / nh**2  # Claim 2
    flat = np.lexsort((cand.ravel(), vals.ravel()))[0]
    return int(cand.ravel()[flat])


def sample_limiting_mechanism(dataset: UserDataset, rng, size=None, *, h, B, epsilon) -> np.ndarray:
    """§3.2: (1/n_h) sum_{i in T} y_i + Lap(B h / (eps n_h)) = WA_c with c = 1[i in T]/n_h."""
    c = sample_limiting_weights(dataset, h)
    return wa_mechanism(dataset, rng, size, c=c, B=B, epsilon=epsilon)


def best_sample_limiting_mechanism(dataset: UserDataset, rng, size=None, *, epsilon, B, sigma=None):
    """Sample limiting at ``best_integer_h`` (chosen from the public counts only)."""
    h = best_integer_h(check_dataset(dataset).counts, sigma, B, epsilon)
    return sample_limiting_mechanism(dataset, rng, size, h=h, B=B, epsilon=epsilon)


# ----------------------------------------------------------------- §3.3: Theorems 2 and 3
def theorem2_instance(g: int) -> dict:
    """An instance meeting Theorem 2's bounds (constructed here; the paper's own instance
    is in its supplementary material, which our copy lacks).

    g users with one record and one user with g^2 + 1 records; 2 B^2 / (eps^2 sigma^2) = 1/g.
    With K' = 1/g (variances in units of sigma^2):
    - WA at h = g: n_h = 2g, v(g)/sigma^2 = (g + g^2/(g^2+1) + g) / (4 g^2) < (2g+1)/(4g^2);
    - sample limiting: v'(h)/sigma^2 = (g + h + h^2/g)/(g + h)^2 for h <= g^2 + 1, whose
      derivative has the sign of h - g, so min_h v' = v'(g) = 3g/(4g^2) = 3/(4g).
    y in [0, B] forces sigma <= B/2, so we take B = 1, sigma = 1/2, eps = sqrt(8 g).
    """
    g = check_int(g, "g", lo=1, hi=312)  # eps = sqrt(8 g) <= 50, the supported epsilon range
    counts = np.r_[np.ones(g, dtype=np.int64), g * g + 1]
    return {"counts": counts, "sigma": 0.5, "B": 1.0, "epsilon": float(np.sqrt(8.0 * g))}


def variance_ratio(counts, sigma, B, epsilon) -> float:
    """min over integer h of v'(h) / min over real h of v(h) (Theorem 3: in [1, 4])."""
    best_sl = v_prime(counts, best_integer_h(counts, sigma, B, epsilon), sigma, B, epsilon)
    best_wa = v(counts, optimal_h(counts, sigma, B, epsilon), sigma, B, epsilon)
    return float(best_sl / best_wa)
