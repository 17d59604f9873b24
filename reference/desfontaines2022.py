"""Desfontaines, Voss, Gipson, Mandayam, "Differentially private partition selection",
Proceedings on Privacy Enhancing Technologies (PoPETs) 2022(1); arXiv 2006.03684.

Private GROUP BY over keys that are not known in advance: the set of keys that appear leaks (a
key held by one user appears iff that user is present), so a partition selection mechanism
outputs a random subset of the keys present in the data, (eps, delta)-DP under add/remove-user.

Setting and what is implemented
-------------------------------
A record's partition key is ``dataset.partition_ids[i]``; n_p is the number of DISTINCT users
with a record in partition p (several rows of one user in p count once, §3 of the paper).

- ``keep_probability``: the optimal keep probability pi(n) of the paper's Theorem 1 (κ = 1),
  by its closed form (three regimes, crossovers n1 and n2); ``keep_probability_recursive``:
  the same curve by its recursive definition
  pi(0) = 0, pi(n) = min(e^eps pi(n-1) + delta, 1 - e^-eps (1 - pi(n-1) - delta), 1).
  The tests check the two against each other (docs/papers/desfontaines2022.md, P1).
- ``truncated_geometric_noise``: the "truncated geometric" view: a noise Z on a finite support
  and a threshold t such that P[n + Z >= t] = pi(n) for every n (the paper's name for the
  mechanism; the normative definition is pi itself).
- the pre-threshold p >= 1 of the libraries: pi_p(n) = 0 for n < p, pi(n - p + 1) otherwise.
- users in several partitions (L0 = κ > 1, the paper's extension): after bounding each user to κ
  partitions, run the κ = 1 mechanism with eps' = eps / κ and delta' = delta / κ
  (``delta_split="linear"``, the paper and Google's Go library; the default, being the
  smaller, i.e. the conservative, of the two) or delta' = 1 - (1 - delta)^(1/κ)
  (``delta_split="exact"``, Google's C++ library, so python-dp and PipelineDP).
- the thresholding baselines: Laplace thresholding (keep iff n + Lap(κ/eps) > tau) and Gaussian
  thresholding (keep iff n + N(0, sigma^2) > tau), ``strategy="laplace"`` / ``"gaussian"``.

Relation: add/remove one user with all their records (``RELATION``). Claim: (eps, delta)-DP
(``claim``), for every strategy, κ and pre-threshold.

Stages (docs/design.md §4): ``bound_contributions`` (the weights stage: each user's partitions
limited to κ by uniform sampling) -> ``statistic`` (distinct users per partition, noise-free) ->
``keep_probabilities`` / ``thresholds`` (the noise-scale stage) -> ``select_partitions`` (the
released set of keys) and ``mechanism`` (the same release, as a 0/1 vector over a public list of
candidate partitions, batched for audits).

Numerics. pi(n) is computed in log space where an exponential could overflow (eps up to the
``allow_large_epsilon`` range) and every exponent is clipped at -700, so the closed form never
raises a floating-point warning, even under ``numpy.errstate(all="raise")``; a clipped term is
below 1e-304 in absolute value.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from ._checks import check_epsilon, check_generator, check_int, check_real, check_size
from .claims import ApproxDP
from .data import UserDataset, check_dataset
from .mechanisms import gaussian_sigma_analytic
from .neighbours import ADD_REMOVE_USER

__all__ = [
    "RELATION",
    "STRATEGIES",
    "DELTA_SPLITS",
    "DELTA_MIN",
    "claim",
    "check_params",
    "per_partition_budget",
    "crossovers",
    "keep_probability",
    "keep_probability_recursive",
    "truncated_geometric_noise",
    "laplace_threshold",
    "laplace_keep_probability",
    "gaussian_threshold",
    "gaussian_keep_probability",
    "bound_contributions",
    "statistic",
    "keep_probabilities",
    "thresholds",
    "select_partitions",
    "mechanism",
]

RELATION = ADD_REMOVE_USER  # §2: add or remove one user together with all their records
STRATEGIES = ("optimal", "laplace", "gaussian")
DELTA_SPLITS = ("linear", "exact")
DELTA_MIN = 1e-50  # the smallest delta accepted (``reference._checks.MAGNITUDE``); delta = 0 is impossible (§1)
_EXP_FLOOR = -700.0  # exp(-700) ~ 1e-304 is a normal float: no underflow below it


def _exp(x):
    """exp(x) with x clipped at -700: no underflow warning; a clipped value is < 1e-304."""
    return np.exp(np.maximum(x, _EXP_FLOOR))


def _log_expm1_array(x: np.ndarray) -> np.ndarray:
    """``_log_expm1`` elementwise for an array x > 0."""
    small = x < 1.0
    out = np.empty_like(x)
    out[small] = np.log(np.expm1(x[small]))
    out[~small] = x[~small] + np.log(-np.expm1(-x[~small]))
    return out


def _log1p_exp(x: float) -> float:
    """log(1 + e^x) without overflow or a floating-point warning."""
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def _log_expm1(x: float) -> float:
    """log(e^x - 1) for x > 0 without overflow (x up to 1e50)."""
    return math.log(math.expm1(x)) if x < 1.0 else x + math.log(-math.expm1(-x))


# --------------------------------------------------------------------- parameters
def _check_delta(delta, name: str = "delta") -> float:
    d = check_real(delta, name)
    if not (DELTA_MIN <= d < 1.0):
        raise ValueError(
            f"{name} must lie in [{DELTA_MIN:g}, 1) (partition selection needs delta > 0: with delta = 0 no "
            f"key could ever be released, §1), got {d!r}"
        )
    return d


def check_params(
    epsilon, delta, max_partitions_contributed=1, pre_threshold=1, delta_split="linear", strategy="optimal"
) -> tuple:
    """The public parameters, checked (ValueError / TypeError naming the argument and its bound):
    eps in the range of ``check_epsilon``, delta in [DELTA_MIN, 1), κ and p integers >= 1, and the
    strategy and delta split by name. Laplace thresholding also needs delta' <= 1/2 (its tau)."""
    eps, d = check_epsilon(epsilon), _check_delta(delta)
    kappa = check_int(max_partitions_contributed, "max_partitions_contributed")
    p = check_int(pre_threshold, "pre_threshold")
    if delta_split not in DELTA_SPLITS:
        raise ValueError(f"delta_split must be one of {DELTA_SPLITS}, got {delta_split!r}")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    if strategy == "laplace" and per_partition_budget(eps, d, kappa, delta_split)[1] > 0.5:
        raise ValueError(
            f"delta must be <= 1/2 per partition for Laplace thresholding (tau = 1 - b ln(2 delta')), got delta = "
            f"{d!r} with max_partitions_contributed = {kappa}"
        )
    return eps, d, kappa, p, delta_split, strategy


def claim(epsilon, delta) -> ApproxDP:
    """Every strategy here is (eps, delta)-DP under add/remove-user (Theorem 1 and §4 of the paper)."""
    return ApproxDP(check_epsilon(epsilon), _check_delta(delta))


def per_partition_budget(epsilon, delta, max_partitions_contributed=1, delta_split="linear") -> tuple[float, float]:
    """(eps', delta') of each partition's decision when a user is in at most κ partitions (§4).

    eps' = eps / κ; delta' = delta / κ ("linear": the paper, Go) or 1 - (1 - delta)^(1/κ) ("exact": the
    C++ library; the exact composition of κ independent (eps', delta') decisions is
    (κ eps', 1 - (1 - delta')^κ)). delta / κ <= 1 - (1 - delta)^(1/κ), so "linear" is the conservative
    default. Why this is private: a user changes at most κ partitions' counts, each by one, and the
    decisions are independent given the counts: basic composition over those κ decisions.
    """
    eps, d = check_epsilon(epsilon), _check_delta(delta)
    kappa = check_int(max_partitions_contributed, "max_partitions_contributed")
    if delta_split not in DELTA_SPLITS:
        raise ValueError(f"delta_split must be one of {DELTA_SPLITS}, got {delta_split!r}")
    if delta_split == "linear":
        return eps / kappa, d / kappa  # §4 [paper; Go pδ := δ/l0Sensitivity]
    return eps / kappa, -math.expm1(math.log1p(-d) / kappa)  # §4 [C++ CalculateAdjustedDelta]


# -------------------------------------------------------------- the optimal curve
def crossovers(epsilon, delta) -> tuple[float, float]:
    """(n1, n2) of the closed form (§3.2), as floats (they may exceed any int for tiny eps):

        n1 = 1 + floor( ln(1 + tanh(eps/2) (1/delta - 1)) / eps )
        n2 = n1 + floor( ln(1 + (e^eps - 1)/delta (1 - pi(n1))) / eps )

    pi grows by the keep bound up to n1, approaches 1 by the drop bound up to n2, and is 1 beyond.
    """
    eps, d = check_epsilon(epsilon), _check_delta(delta)
    return _crossovers(eps, d)[:2]


def _crossovers(eps: float, d: float) -> tuple[float, float, float, float]:
    """(n1, n2, pi(n1), log c) with c = delta / (e^eps - 1), all finite for every eps, delta in range."""
    n1 = 1.0 + math.floor(math.log1p(math.tanh(eps / 2.0) * (1.0 / d - 1.0)) / eps)  # §3.2
    pi_n1 = float(_exp(min(math.log(d) + (_log_expm1(n1 * eps) - _log_expm1(eps)), 0.0)))  # regime 1 at n1
    log_c = math.log(d) - _log_expm1(eps)  # c = delta / (e^eps - 1)
    slack = 1.0 - pi_n1
    if slack <= 0.0:
        return n1, n1, pi_n1, log_c
    # ln(1 + (1 - pi(n1)) / c), as logaddexp: no overflow for large eps
    n2 = n1 + math.floor(_log1p_exp(math.log(slack) - log_c) / eps)  # §3.2
    return n1, n2, pi_n1, log_c


def _counts(n, name: str = "n") -> np.ndarray:
    """User counts: integers >= 0 (§9.3: integers only), as a float array of the same shape."""
    a = np.asarray(n)
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.integer) or a.dtype == object):
        raise TypeError(f"{name} must be an integer or an array of integers (distinct user counts), got {a.dtype}")
    if a.dtype == object:
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in a.flat):
            raise TypeError(f"{name} must be an integer or an array of integers (distinct user counts)")
    if (a < 0).any():
        raise ValueError(f"{name} must be >= 0 (a count of users), got {a.flat[int(np.argmax(a < 0))]!r}")
    return a.astype(float)


def _pi(n: np.ndarray, eps: float, d: float) -> np.ndarray:
    """The closed form of pi (κ = 1, no pre-threshold) at float counts n >= 0, (any shape)."""
    n1, n2, pi_n1, log_c = _crossovers(eps, d)
    pos = np.where(n > 0, n, 1.0)  # n = 0 is masked below (log(e^0 - 1) = -inf)
    # regime 1: delta (e^{n eps} - 1) / (e^eps - 1), in logs, capped at 1 where it is not used (n > n1)
    grow = _exp(np.minimum(math.log(d) + (_log_expm1_array(pos * eps) - _log_expm1(eps)), 0.0))
    j = np.maximum(n - n1, 1.0) * eps  # j = (n - n1) eps, for n > n1 (n <= n1 is masked below)
    # regime 2: 1 - pi(n) = (1 - pi(n1)) e^{-j} - c (1 - e^{-j}), each term in logs
    first = _exp(math.log(1.0 - pi_n1) - j) if pi_n1 < 1.0 else np.zeros_like(j)
    drop = first - _exp(log_c + np.log(-np.expm1(-j)))
    out = np.where(n <= n1, grow, np.minimum(1.0, 1.0 - drop))
    out = np.where(n > n2, 1.0, out)  # regime 3: saturation
    return np.where(n == 0, 0.0, np.clip(out, 0.0, 1.0))  # pi(0) = 0: a key with no users is not in the data


def _shift(n: np.ndarray, p: int) -> np.ndarray:
    """Pre-threshold p: pi_p(n) = pi(n - p + 1) for n >= p, else pi(0) = 0."""
    return np.where(n >= p, n - (p - 1), 0.0)


def keep_probability(n, epsilon, delta, max_partitions_contributed=1, delta_split="linear", pre_threshold=1):
    """pi(n) of the optimal mechanism (Theorem 1, closed form §3.2) at the per-partition budget of §4,
    with pre-threshold p (§3.4); same shape as ``n`` (a float for a scalar).

    Why this is private: for every n >= 0, pi(n+1) <= e^eps' pi(n) + delta' (keep event) and
    1 - pi(n) <= e^eps' (1 - pi(n+1)) + delta' (drop event), with pi(0) = 0: each regime is the largest
    value one of these bounds allows (§3.1), and pi is non-decreasing, so the removal inequalities hold
    too. The partitions' decisions are independent, and a user moves at most κ counts by one.
    """
    eps, d, kappa, p, split, _ = check_params(epsilon, delta, max_partitions_contributed, pre_threshold, delta_split)
    n_arr = _counts(n)
    e1, d1 = per_partition_budget(eps, d, kappa, split)
    out = _pi(_shift(n_arr, p), e1, d1)
    return float(out) if out.ndim == 0 else out


def keep_probability_recursive(
    n_max, epsilon, delta, max_partitions_contributed=1, delta_split="linear", pre_threshold=1
) -> np.ndarray:
    """pi(0), ..., pi(n_max) by the recursive definition (§3.1), one step at a time, shape (n_max + 1,):

        pi(0) = 0,  pi(n) = min(e^eps pi(n-1) + delta, 1 - e^-eps (1 - pi(n-1) - delta), 1).

    e^eps is taken as e^min(eps, 700): beyond, e^eps pi(n-1) >= e^700 delta > 1 for every pi(n-1) >= delta,
    and at pi(n-1) = 0 the term is delta whatever e^eps is, so the minimum is unchanged.
    """
    eps, d, kappa, p, split, _ = check_params(epsilon, delta, max_partitions_contributed, pre_threshold, delta_split)
    n_max = check_int(n_max, "n_max", lo=0, hi=10**7)
    e1, d1 = per_partition_budget(eps, d, kappa, split)
    up, down, gap = math.exp(min(e1, 700.0)), math.exp(-e1), -math.expm1(-e1)
    pi = [0.0]
    for _ in range(n_max):
        prev = pi[-1]
        # §3.1; the drop term 1 - e^-eps (1 - pi - delta) written as (1 - e^-eps) + e^-eps (pi + delta), which
        # does not cancel to 0 when eps and pi are below the float resolution of 1
        pi.append(min(up * prev + d1, gap + down * (prev + d1), 1.0))
    base = np.array(pi)
    return np.array([base[n - p + 1] if n >= p else 0.0 for n in range(n_max + 1)])


def truncated_geometric_noise(epsilon, delta, max_partitions_contributed=1, delta_split="linear"):
    """The truncated-geometric view (§3.3): (support, pmf, t) with P[n + Z >= t] = pi(n) for every n >= 0.

    Z = t - m where m in {1, ..., n2 + 1} has mass pi(m) - pi(m - 1): then n + Z >= t iff m <= n, whose
    probability is pi(n). t = ceil((n2 + 2) / 2) centres the support on 0. The masses rise by e^eps' up to
    m = n1 and fall by e^-eps' (less a constant) beyond: a two-sided geometric truncated to a finite range,
    which is where the paper's name comes from. Needs n2 <= 10^6 (the support is listed).
    """
    eps, d, kappa, _, split, _ = check_params(epsilon, delta, max_partitions_contributed, 1, delta_split)
    e1, d1 = per_partition_budget(eps, d, kappa, split)
    n2 = _crossovers(e1, d1)[1]
    if n2 > 10**6:
        raise ValueError(f"the truncated-geometric support has n2 + 1 = {n2 + 1:g} points (> 10^6) at this budget")
    m = np.arange(int(n2) + 2, dtype=float)  # 0 .. n2 + 1
    pmf = np.diff(_pi(m, e1, d1))  # (n2 + 1,): masses of m = 1 .. n2 + 1
    t = int(math.ceil((n2 + 2) / 2))
    return t - m[1:], pmf, t


# ------------------------------------------------------------ thresholding baselines
def laplace_threshold(epsilon, delta, max_partitions_contributed=1, delta_split="linear") -> tuple[float, float]:
    """(b, tau) of Laplace thresholding (§5): b = κ / eps, tau = 1 - b ln(2 delta'), delta' per §4.

    Why this is private: the counts have L1 sensitivity κ, so n + Lap(κ/eps) is eps-DP on the
    partitions both neighbours hold; a partition only one holds has n = 1 there and is kept with
    probability 1/2 exp((1 - tau)/b) = delta', so the at most κ such partitions add delta.
    """
    eps, d, kappa, _, split, _ = check_params(epsilon, delta, max_partitions_contributed, 1, delta_split, "laplace")
    b = kappa / eps  # §5: L1 sensitivity κ
    return b, 1.0 - b * math.log(2.0 * per_partition_budget(eps, d, kappa, split)[1])


def laplace_keep_probability(n, epsilon, delta, max_partitions_contributed=1, delta_split="linear", pre_threshold=1):
    """p_L(n) = P[n + Lap(b) > tau] (§5); p_L(0) = 0 (an absent key is never output)."""
    b, tau = laplace_threshold(epsilon, delta, max_partitions_contributed, delta_split)
    n_arr = _shift(_counts(n), check_int(pre_threshold, "pre_threshold"))
    z = (n_arr - tau) / b
    out = np.where(z >= 0, -0.5 * np.expm1(-np.abs(z)) + 0.5, 0.5 * _exp(-np.abs(z)))  # Laplace survival
    out = np.where(n_arr == 0, 0.0, out)
    return float(out) if out.ndim == 0 else out


def gaussian_threshold(epsilon, delta, max_partitions_contributed=1, delta_split="linear") -> tuple[float, float]:
    """(sigma, tau) of Gaussian thresholding (§5, Google's GaussianPartitionSelection): half of delta for the
    noise, sigma = analytic Gaussian(eps, delta/2, L2 = sqrt(κ)); the other half for new partitions,
    tau = 1 + sigma Phi^-1(1 - delta'_t) with delta'_t the §4 split of delta/2 over κ.

    Why this is private: the counts have L2 sensitivity sqrt(κ), so the noise is (eps, delta/2)-DP on the
    partitions both neighbours hold; each of the at most κ partitions only one holds (n = 1) passes tau
    with probability delta'_t, together at most delta/2.
    """
    eps, d, kappa, _, split, _ = check_params(epsilon, delta, max_partitions_contributed, 1, delta_split)
    sigma = gaussian_sigma_analytic(math.sqrt(kappa), eps, d / 2.0)
    d_t = per_partition_budget(eps, d / 2.0, kappa, split)[1]
    return sigma, 1.0 + sigma * float(norm.isf(d_t))


def gaussian_keep_probability(n, epsilon, delta, max_partitions_contributed=1, delta_split="linear", pre_threshold=1):
    """p_G(n) = P[n + N(0, sigma^2) > tau] (§5); p_G(0) = 0."""
    sigma, tau = gaussian_threshold(epsilon, delta, max_partitions_contributed, delta_split)
    n_arr = _shift(_counts(n), check_int(pre_threshold, "pre_threshold"))
    out = np.where(n_arr == 0, 0.0, norm.sf((tau - n_arr) / sigma))
    return float(out) if out.ndim == 0 else out


# ------------------------------------------------------------------------ stages
def _partitioned(dataset) -> UserDataset:
    check_dataset(dataset)
    if dataset.partition_ids is None:
        raise ValueError("dataset.partition_ids must be set: partition selection needs each record's partition key")
    return dataset


def _user_partitions(dataset: UserDataset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (user index, partition key) pairs, sorted by user then key: (u, p), each (q,), and for
    each record the index of its pair, (n,)."""
    pairs, row_pair = np.unique(
        np.stack([dataset.user_index, dataset.partition_ids], axis=1), axis=0, return_inverse=True
    )  # (q, 2), (n,)
    return pairs[:, 0], pairs[:, 1], row_pair.reshape(-1)


def bound_contributions(dataset: UserDataset, max_partitions_contributed, rng) -> UserDataset:
    """The records of each user in at most κ of their partitions, chosen uniformly at random (without
    replacement, independently per user, from ``rng``) among the user's distinct partitions.

    The choice reads only which partitions a user is in, never the values (§4: cross-partition bounding
    must come before counting; selecting on unbounded counts is the known bug of §10.2).
    """
    kappa = check_int(max_partitions_contributed, "max_partitions_contributed")
    rng = check_generator(rng)
    D = _partitioned(dataset)
    u, _, row_pair = _user_partitions(D)
    kept = _sample_memberships(u, kappa, rng, 1)[0]  # (q,) bool: the (user, partition) pairs kept
    return D.take(np.flatnonzero(kept[row_pair]))  # every record of a kept pair, in record order


def _sample_memberships(u: np.ndarray, kappa: int, rng, size: int) -> np.ndarray:
    """(size, q) bool: for each draw, the memberships kept, at most κ per user, uniform among the user's.

    A user with d <= κ memberships keeps all; one with d > κ keeps the κ of smallest uniform key
    (a uniformly random κ-subset, independently per draw and per user)."""
    q = u.size
    out = np.ones((size, q), dtype=bool)
    starts = np.flatnonzero(np.r_[True, u[1:] != u[:-1]])
    ends = np.r_[starts[1:], q]
    for s, e in zip(starts, ends):
        if e - s > kappa:
            keys = rng.random((size, e - s))
            rank = np.argsort(np.argsort(keys, axis=1), axis=1)
            out[:, s:e] = rank < kappa
    return out


def statistic(dataset: UserDataset) -> tuple[np.ndarray, np.ndarray]:
    """(keys, n): the partition keys present, sorted, and n_p = the number of distinct users in each (§1).

    Apply it to ``bound_contributions``' output: the counts must be taken after bounding (§9.2)."""
    D = _partitioned(dataset)
    p = _user_partitions(D)[1]
    keys, n = np.unique(p, return_counts=True)
    return keys, n


def keep_probabilities(
    n, epsilon, delta, *, max_partitions_contributed=1, delta_split="linear", pre_threshold=1, strategy="optimal"
):
    """The keep probability of each count under ``strategy`` (the noise-scale stage): pi, p_L or p_G."""
    check_params(epsilon, delta, max_partitions_contributed, pre_threshold, delta_split, strategy)
    f = {"optimal": keep_probability, "laplace": laplace_keep_probability, "gaussian": gaussian_keep_probability}
    return f[strategy](n, epsilon, delta, max_partitions_contributed, delta_split, pre_threshold)


def thresholds(epsilon, delta, *, max_partitions_contributed=1, delta_split="linear", strategy="optimal") -> dict:
    """The calibration of ``strategy``: per-partition (eps', delta') and n1, n2 for the optimal curve;
    b and tau (Laplace) or sigma and tau (Gaussian) for the baselines."""
    eps, d, kappa, _, split, strat = check_params(epsilon, delta, max_partitions_contributed, 1, delta_split, strategy)
    e1, d1 = per_partition_budget(eps, d, kappa, split)
    if strat == "optimal":
        n1, n2 = crossovers(e1, d1)
        return {"epsilon_partition": e1, "delta_partition": d1, "n1": n1, "n2": n2}
    if strat == "laplace":
        b, tau = laplace_threshold(eps, d, kappa, split)
        return {"b": b, "tau": tau}
    sigma, tau = gaussian_threshold(eps, d, kappa, split)
    return {"sigma": sigma, "tau": tau}


def _counts_per_draw(D: UserDataset, kappa: int, rng, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys, (size, K) counts): the distinct users per partition after a fresh κ-bounding in each draw.

    Every membership counts, less those a user over κ drops in that draw (``_sample_memberships``)."""
    u, p, _ = _user_partitions(D)
    keys, col = np.unique(p, return_inverse=True)
    counts = np.tile(np.bincount(col, minlength=keys.size), (size, 1))  # (size, K): before bounding
    d = np.bincount(u)[u]  # (q,) the number of partitions of each membership's user
    over = np.flatnonzero(d > kappa)  # memberships of users over κ: the only ones sampling may drop
    if over.size:
        dropped = ~_sample_memberships(u[over], kappa, rng, size)  # (size, |over|)
        rows, cols = np.nonzero(dropped)
        np.subtract.at(counts, (rows, col[over][cols]), 1)
    return keys, counts


def _keep(counts: np.ndarray, eps, d, kappa, split, p, strategy, rng) -> np.ndarray:
    """(size, K) bool decisions from (size, K) counts. Optimal: U < pi(n), U uniform on [0, 1) (so pi = 0
    is never kept, pi = 1 always); thresholding: the noisy count n + noise compared with tau."""
    n = _shift(counts.astype(float), p)
    if strategy == "optimal":
        e1, d1 = per_partition_budget(eps, d, kappa, split)
        return rng.random(counts.shape) < _pi(n, e1, d1)  # Bernoulli(pi(n)), §3.3
    if strategy == "laplace":
        b, tau = laplace_threshold(eps, d, kappa, split)
        return (n > 0) & (n + rng.laplace(0.0, b, counts.shape) > tau)  # §5
    sigma, tau = gaussian_threshold(eps, d, kappa, split)
    return (n > 0) & (n + rng.normal(0.0, sigma, counts.shape) > tau)  # §5


def select_partitions(
    dataset: UserDataset,
    epsilon,
    delta,
    rng,
    *,
    max_partitions_contributed=1,
    delta_split="linear",
    pre_threshold=1,
    strategy="optimal",
) -> np.ndarray:
    """The released set: the kept partition keys, sorted, (k,). One release.

    Why this is private: after ``bound_contributions`` a user is in at most κ partitions and moves each
    one's distinct-user count by at most 1; each partition is kept independently with a probability
    that depends only on its count and satisfies the (eps', delta') inequalities (``keep_probability``,
    ``laplace_threshold``, ``gaussian_threshold``), and partitions with no users are never output. Basic
    composition over the κ partitions a user touches gives (eps, delta) (§4). All parameters are checked
    before a record is read.
    """
    return _release(
        dataset,
        epsilon,
        delta,
        rng,
        None,
        max_partitions_contributed,
        delta_split,
        pre_threshold,
        strategy,
        keys_only=True,
    )


def mechanism(
    dataset: UserDataset,
    epsilon,
    delta,
    rng,
    size=None,
    *,
    partitions,
    max_partitions_contributed=1,
    delta_split="linear",
    pre_threshold=1,
    strategy="optimal",
) -> np.ndarray:
    """The release as 0/1 over the public candidate keys ``partitions`` (in their order): shape (k,) or
    (size, k), int8; 1 = the key is in the released set. Partitions absent from the data are always 0.

    Keys present in the data but not in ``partitions`` are not shown: the vector is a public projection
    (post-processing) of ``select_partitions``' set, which is (eps, delta)-DP (see there).
    """
    return _release(
        dataset,
        epsilon,
        delta,
        rng,
        size,
        max_partitions_contributed,
        delta_split,
        pre_threshold,
        strategy,
        partitions=partitions,
    )


def _candidates(partitions) -> np.ndarray:
    a = np.asarray(partitions)
    if a.ndim != 1 or a.size == 0 or not np.issubdtype(a.dtype, np.integer) or (a < 0).any():
        raise ValueError(f"partitions must be a non-empty 1-d sequence of partition keys (integers >= 0), got {a!r}")
    if np.unique(a).size != a.size:
        raise ValueError("partitions must not repeat a key")
    return a


def _release(dataset, epsilon, delta, rng, size, kappa, split, p, strategy, partitions=None, keys_only=False):
    eps, d, kappa, p, split, strategy = check_params(epsilon, delta, kappa, p, split, strategy)
    rng, n_out = check_generator(rng), check_size(size)
    cand = None if keys_only else _candidates(partitions)
    D = _partitioned(dataset)  # the first read of the data: every public input is checked above
    keys, counts = _counts_per_draw(D, kappa, rng, 1 if n_out is None else n_out)
    kept = _keep(counts, eps, d, kappa, split, p, strategy, rng)  # (size, K)
    if keys_only:
        return keys[kept[0]]
    pos = {int(k): j for j, k in enumerate(keys.tolist())}
    out = np.zeros((kept.shape[0], cand.size), dtype=np.int8)
    for i, k in enumerate(cand.tolist()):
        if k in pos:
            out[:, i] = kept[:, pos[k]]
    return out[0] if n_out is None else out
