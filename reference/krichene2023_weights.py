"""W. Krichene, P. Jain, S. Song, M. Sundararajan, A. Thakurta, L. Zhang, "Multi-Task
Differential Privacy Under Distribution Skew", ICML 2023 (arXiv:2302.07975v1): the task-user
weights (§4, §5, Appendix B), the sampling baselines (§5, Chien et al. 2021), the private
task counts, the improvement ratios R_0, R_1 (§4) and the Renyi accounting.

Notation (§2.1). Omega in [m] x [n] is the task-user graph: record (i, j) means user j
contributes (x_ij, y_ij) to task i. n_i = |Omega_i| (users of task i), n^j = |Omega^j|
(tasks of user j). A dataset carries one record per pair (``task_ids`` = i, ``user_ids`` = j);
``m`` (the number of tasks) is public and declared by the caller.

Budget (Theorem 3.3, Remark 3.4): with task-user weights w_ij, the algorithms are
(alpha, alpha beta)-RDP for beta = max_j sum_{i in Omega^j} w_ij^2. Every weighting below
returns per-record weights w (one per record, aligned with the dataset) whose per-user
budget sum_i w_ij^2 is <= beta on EVERY graph, with probability 1:

- eq. (11), the optimal task weights omega_i* of problem (10), gamma in {0, 1};
- §5, the mu-family omega_i = n_i^-mu / sqrt(sum_i' n_i'^(1 - 2 mu) / (n beta_bar));
- eq. (12), the per-user clipping w_ij = omega_i min(1, sqrt(beta / sum_{i' in Omega^j} omega_i'^2));
- Appendix C / the authors' code (google-research dp_alternating_minimization): every user normalised to the budget
exactly,
  w_ij = sqrt(beta) omega_i / sqrt(sum_{i' in Omega^j} omega_i'^2);
- uniform weights (mu = 0) and the sampling baselines (k tasks per user, weight sqrt(beta/k):
  Remark 3.5's 0/1 weights rescaled so that the budget is beta rather than k).

Why the weights are private inputs of the right kind. Under add/remove user (§2.2) the
task sizes n_i are private: removing user j lowers n_i for every i in Omega^j, and with
exact counts every omega_i, hence every OTHER user's weights, would move (the sensitivity
argument of Appendix A.1 assumes they do not). So the reference never reads n_i from the
dataset. n_i (and n, the number of users, which also changes under add/remove user) are
either declared public (Assumption 4.1) or replaced by private counts (eq. (18)-(19),
Appendix B, ``private_counts``) whose cost is composed into the total
(``total_rdp``). Then w_ij depends only on public values and on user j's own tasks Omega^j,
and removing user j removes exactly the records (i, j) with their weights w_ij.

Reading chosen where the paper is silent or inconsistent (each said at the line):
- beta_bar = beta / c(n) with c(n) = c log n (§4) has no value for c. ``beta_bar`` is an
  argument, default beta (c(n) = 1): eq. (12) makes the budget hold whatever beta_bar is,
  beta_bar only moves utility.
- Appendix B's under-estimation argument (g decreasing coordinate-wise in the counts) holds
  for eq. (11) (gamma in {0, 1}, i.e. mu in [0, 1/2]); for mu > 1/2 the normaliser
  sum n_i^(1 - 2 mu) DEcreases with the counts and the estimated weights can exceed the exact
  ones (``tests/papers/krichene2023/test_krichene2023.py`` gives a counterexample at mu = 1). The budget still
  holds (eq. (19) clips); only Theorem B.2's "no clipping w.h.p." is lost.
- The private counts (Appendix B states only "s-accurate"): each user contributes to at most
  k of its tasks (a uniform sample when n^j > k, as the authors' ``count_sample``), plus
  N(0, sigma^2) per task. The count vector has L2 sensitivity sqrt(k) under add/remove user.
  The counts are s-accurate with probability >= 1 - p for s = sigma Phi^-1(1 - p / (2m)) when
  no user has more than k tasks; otherwise they are biased down by the sampling.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtri

from ._checks import (
    check_delta,
    check_finite_array,
    check_generator,
    check_int,
    check_nonnegative,
    check_positive,
    check_real,
)
from .claims import ApproxDP, Claims, GaussianDP
from .data import UserDataset, check_dataset
from .mechanisms import DEFAULT_RDP_ORDERS, compose_rdp, gaussian_rdp, rdp_to_dp

__all__ = [
    "graph",
    "check_counts",
    "omega_star",
    "omega_mu",
    "uniform_omega",
    "clip_weights",
    "per_user_weights",
    "user_budgets",
    "adaptive_weights",
    "uniform_sample_weights",
    "tail_sample_weights",
    "private_counts",
    "count_rdp",
    "accuracy_margin",
    "estimated_omega",
    "improvement_ratios",
    "rdp",
    "total_rdp",
    "epsilon",
    "beta_for_epsilon",
    "gdp_mu",
    "claim",
]


# ------------------------------------------------------------------------- the graph Omega
def _positive_delta(delta) -> float:
    d = check_delta(delta)
    if d == 0.0:
        raise ValueError(
            "delta must lie in (0, 1) (a Renyi or Gaussian claim gives (eps, delta) only for delta > 0), got 0.0"
        )
    return d


def graph(dataset: UserDataset, m) -> tuple[np.ndarray, np.ndarray, int]:
    """(task (N,), user position (N,), number of users present) of a multi-task dataset.

    Refuses a dataset without ``task_ids``, a task id >= m (the declared number of tasks),
    and a repeated (task, user) pair (Omega is a set: one record per pair)."""
    D = check_dataset(dataset)
    m = check_int(m, "m (number of tasks)")
    if D.task_ids is None:
        raise ValueError("dataset has no task_ids: a multi-task algorithm needs the task i of every record (i, j)")
    t = np.asarray(D.task_ids)
    if t.max() >= m:
        r = int(np.argmax(t >= m))
        raise ValueError(
            f"task_ids must lie in [0, m) with m = {m} (the declared number of tasks); task_ids[{r}] = {int(t[r])}"
        )
    u = np.asarray(D.user_index)
    key = np.sort(u.astype(np.int64) * m + t)  # one key per (task, user) pair, sorted
    if key.size > 1 and bool(np.any(key[1:] == key[:-1])):  # (np.unique hashes: 10x slower at 10^7)
        raise ValueError("task_ids: the dataset repeats a (task, user) pair; Omega is a set, one record per pair")
    return t, u, D.m


def check_counts(n_counts, m, name: str = "n_counts") -> np.ndarray:
    """Task sizes n_i, shape (m,), each >= 1 (Assumption 4.1: n_i >= 1 for all i), finite."""
    n = check_finite_array(n_counts, name, ndim=(1,))
    m = check_int(m, "m (number of tasks)")
    if n.shape != (m,):
        raise ValueError(f"{name} must have shape (m,) = ({m},) (one n_i per task), got {n.shape}")
    bad = (n < 1) | (n > 1e15)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"{name} must have every n_i in [1, 1e15] (Assumption 4.1: every task has a user); "
            f"{name}[{i}] = {n[i]!r}: a task with no users"
        )
    return n


# ------------------------------------------------------------------------- task weights omega_i
def omega_mu(n_counts, n_users, beta_bar, mu) -> np.ndarray:
    """§5: omega_i = n_i^-mu / sqrt(sum_i' n_i'^(1 - 2 mu) / (n beta_bar)), shape (m,).

    Normalised so that sum_i n_i omega_i^2 = n beta_bar (the constraint of problem (10)).
    mu = (1 + gamma) / 4 is eq. (11); mu = 0 is uniform weights."""
    n = check_counts(n_counts, np.size(n_counts))
    N = float(check_int(n_users, "n_users (n, the declared number of users)"))
    bb = check_positive(beta_bar, "beta_bar")
    mu = check_nonnegative(mu, "mu", hi=10.0)
    scale = math.sqrt(N * bb / math.fsum(n ** (1.0 - 2.0 * mu)))  # §5: sqrt(n beta_bar / sum n^(1-2mu))
    return n**-mu * scale


def omega_star(n_counts, n_users, beta_bar, gamma) -> np.ndarray:
    """eq. (11): omega_i* = n_i^(-(gamma + 1)/4) / sqrt(sum_i' n_i'^((1 - gamma)/2) / (n beta_bar)),
    the solution of problem (10); gamma = 0 (Lipschitz) or 1 (strongly convex)."""
    if isinstance(gamma, bool) or gamma not in (0, 1):
        raise ValueError(f"gamma must be 0 (convex Lipschitz) or 1 (strongly convex), got {gamma!r}")
    return omega_mu(n_counts, n_users, beta_bar, (1 + gamma) / 4)  # eq. (11) = §5 at mu = (1+gamma)/4


def uniform_omega(n_counts, n_users, beta_bar) -> np.ndarray:
    """§4: omega_i^uniform = (n beta_bar / sum_i' n_i')^(1/2) for every task (mu = 0)."""
    return omega_mu(n_counts, n_users, beta_bar, 0.0)


def _record_omega(dataset, omega, m) -> tuple[np.ndarray, np.ndarray, int]:
    t, u, n_present = graph(dataset, m)
    om = check_finite_array(omega, "omega", ndim=(1,))
    if om.shape != (m,) or np.any(om < 0):
        raise ValueError(f"omega must be (m,) = ({m},) task weights >= 0, got shape {om.shape}")
    return om[t], u, n_present


def user_budgets(dataset: UserDataset, w, m) -> np.ndarray:
    """sum_{i in Omega^j} w_ij^2 for every user j (aligned with ``dataset.users``), shape (n,)."""
    _, u, n_present = graph(dataset, m)
    w = check_finite_array(w, "w", ndim=(1,))
    if w.shape != u.shape:
        raise ValueError(f"w must have one weight per record, shape ({u.size},), got {w.shape}")
    return np.bincount(u, weights=w * w, minlength=n_present)


def clip_weights(dataset: UserDataset, omega, beta, m) -> np.ndarray:
    """eq. (12) (and eq. (19) with estimated omega-hat): w_ij = omega_i min(1, sqrt(beta / B_j)),
    B_j = sum_{i' in Omega^j} omega_i'^2; shape (N,), one weight per record.

    Why the budget holds with probability 1: sum_i w_ij^2 = B_j min(1, beta / B_j) <= beta.
    w_ij reads only the public omega and user j's own tasks Omega^j."""
    beta = check_positive(beta, "beta")
    om, u, n_present = _record_omega(dataset, omega, m)
    B = np.bincount(u, weights=om * om, minlength=n_present)  # B_j, (n,)
    factor = np.minimum(1.0, np.sqrt(beta / np.maximum(B, 1e-300)))  # eq. (12); B_j = 0: omega = 0 anyway
    return om * factor[u]  # sum_i w_ij^2 <= beta up to the rounding of a sum (relative ~1e-15 n^j)


def per_user_weights(dataset: UserDataset, omega, beta, m) -> np.ndarray:
    """Appendix C ("the weights are normalized per user"; the authors' code, docs/papers/krichene2023.md):
    w_ij = sqrt(beta) omega_i / sqrt(sum_{i' in Omega^j} omega_i'^2): every user spends exactly
    beta (eq. (12) with beta_bar -> infinity: every user clipped). Shape (N,)."""
    beta = check_positive(beta, "beta")
    om, u, n_present = _record_omega(dataset, omega, m)
    if np.any(om <= 0):
        raise ValueError(
            "omega must be > 0 for per-user normalisation (a user with only zero weights has no direction)"
        )
    B = np.bincount(u, weights=om * om, minlength=n_present)
    return om * np.sqrt(beta / B)[u]


def adaptive_weights(
    dataset: UserDataset, *, m, beta, mu, n_counts, n_users, beta_bar=None, normalise="clip"
) -> np.ndarray:
    """The adaptive weights of §5 from PUBLIC (or privately estimated) task sizes: omega_mu, then
    eq. (12) clipping (``normalise="clip"``, the paper) or per-user normalisation
    (``normalise="per-user"``, Appendix C). beta_bar defaults to beta (c(n) = 1; module docstring)."""
    beta = check_positive(beta, "beta")
    bb = beta if beta_bar is None else check_positive(beta_bar, "beta_bar")
    omega = omega_mu(check_counts(n_counts, check_int(m, "m (number of tasks)")), n_users, bb, mu)
    if normalise == "clip":
        return clip_weights(dataset, omega, beta, m)
    if normalise == "per-user":
        return per_user_weights(dataset, omega, beta, m)
    raise ValueError(f"normalise must be 'clip' (eq. (12)) or 'per-user' (Appendix C), got {normalise!r}")


# ------------------------------------------------------------------------- sampling baselines
def _keep_first_k(u: np.ndarray, key: np.ndarray, k: int) -> np.ndarray:
    """For each user, True on its k records of smallest key (ties: record order)."""
    order = np.lexsort((np.arange(u.size), key, u))  # by user, then key, then record
    us = u[order]
    start = np.r_[0, np.flatnonzero(np.diff(us)) + 1]  # first position of each user
    rank = np.arange(u.size) - np.repeat(start, np.diff(np.r_[start, u.size]))
    keep = np.empty(u.size, dtype=bool)
    keep[order] = rank < k
    return keep


def uniform_sample_weights(dataset: UserDataset, rng, *, m, k, beta) -> np.ndarray:
    """§5 baseline "uniform sampling": each user keeps k of its tasks uniformly at random (all if
    n^j <= k), weight sqrt(beta / k) (Remark 3.5's weight 1, scaled to the budget beta). (N,)."""
    rng = check_generator(rng)
    k = check_int(k, "k (tasks kept per user)")
    beta = check_positive(beta, "beta")
    _, u, _ = graph(dataset, m)
    keep = _keep_first_k(u, rng.random(u.size), k)
    return np.where(keep, math.sqrt(beta / k), 0.0)


def tail_sample_weights(dataset: UserDataset, noisy_counts, *, m, k, beta) -> np.ndarray:
    """Tail-biased sampling (Chien et al. 2021; §5): each user keeps the k tasks with the smallest
    noisy counts (ties: smaller task id), weight sqrt(beta / k). The noisy counts must come from
    ``private_counts`` (and be charged). (N,)."""
    k = check_int(k, "k (tasks kept per user)")
    beta = check_positive(beta, "beta")
    t, u, _ = graph(dataset, m)
    c = check_finite_array(noisy_counts, "noisy_counts", ndim=(1,))
    if c.shape != (m,):
        raise ValueError(f"noisy_counts must have shape ({m},), got {c.shape}")
    rank = np.empty(m)
    rank[np.lexsort((np.arange(m), c))] = np.arange(m)  # by noisy count, then task id
    keep = _keep_first_k(u, rank[t], k)
    return np.where(keep, math.sqrt(beta / k), 0.0)


# ------------------------------------------------------------------------- private counts (App. B)
def private_counts(dataset: UserDataset, rng, *, m, k, sigma) -> np.ndarray:
    """Noisy task counts c_i + N(0, sigma^2), shape (m,): each user contributes 1 to at most k of
    its tasks (a uniform sample when n^j > k). Charge ``count_rdp(orders, k, sigma)``.

    Why this is private: removing user j changes the count vector by a 0/1 vector with at most
    k ones, L2 norm <= sqrt(k); the Gaussian mechanism gives RDP alpha k / (2 sigma^2)
    [Mironov 2017, Cor. 3], mu = sqrt(k) / sigma GDP [Dong, Roth, Su 2022, Thm 2.7]."""
    rng = check_generator(rng)
    k = check_int(k, "k (tasks counted per user)")
    sigma = check_positive(sigma, "sigma (count noise)")
    t, u, _ = graph(dataset, m)
    keep = _keep_first_k(u, rng.random(u.size), k)
    counts = np.bincount(t[keep], minlength=m).astype(float)
    return counts + rng.normal(0.0, sigma, m)


def count_rdp(orders, k, sigma) -> np.ndarray:
    """RDP of ``private_counts``: alpha k / (2 sigma^2) at each order (sensitivity sqrt(k))."""
    return gaussian_rdp(
        orders, math.sqrt(check_int(k, "k (tasks counted per user)")), check_positive(sigma, "sigma (count noise)")
    )


def accuracy_margin(sigma, m, failure) -> float:
    """s with Pr[max_i |N(0, sigma^2)| > s] <= failure: s = sigma Phi^-1(1 - failure / (2m))
    (union bound over the m tasks and both tails)."""
    sigma = check_positive(sigma, "sigma (count noise)")
    m = check_int(m, "m (number of tasks)")
    p = check_real(failure, "failure")
    if not 0.0 < p < 1.0:
        raise ValueError(f"failure must lie in (0, 1), got {p!r}")
    return float(sigma * -ndtri(p / (2.0 * m)))


def estimated_omega(noisy_counts, s, n_users, beta_bar, mu) -> np.ndarray:
    """eq. (18) (and its mu-family form): omega-hat = omega_mu(max(n-hat_i + s, 1)), shape (m,).

    n-hat + s over-estimates n_i when the counts are s-accurate, so omega-hat under-estimates
    omega* for mu <= 1/2 (Theorem B.2's proof; module docstring for mu > 1/2). The floor at 1
    (Assumption 4.1: n_i >= 1) is post-processing of the noisy counts."""
    c = check_finite_array(noisy_counts, "noisy_counts", ndim=(1,))
    s = check_nonnegative(s, "s (count accuracy)")
    return omega_mu(np.maximum(c + s, 1.0), n_users, beta_bar, mu)  # eq. (18): n_i -> n-hat_i + s


# ------------------------------------------------------------------------- §4 ratios
def improvement_ratios(n_counts) -> tuple[float, float]:
    """§4: R_0 = (m sum n_i)^(1/2) / sum n_i^(1/2) and R_1 = (sum 1/n_i)(sum n_i) / m^2, the gains
    of eq. (11) over uniform weights. Both >= 1 (Cauchy-Schwarz), = 1 iff all n_i are equal."""
    n = check_counts(n_counts, np.size(n_counts))
    m = n.size
    R0 = math.sqrt(m * math.fsum(n)) / math.fsum(np.sqrt(n))
    R1 = math.fsum(1.0 / n) * math.fsum(n) / m**2
    return R0, R1


# ------------------------------------------------------------------------- accounting
def rdp(orders, beta, runs=1) -> np.ndarray:
    """Theorems 3.3 / 3.11: one run of Algorithm 1 or 2 at budget beta is (alpha, alpha beta)-RDP;
    ``runs`` runs (Algorithm 3's T steps) compose to (alpha, alpha beta runs) [Mironov 2017, Prop. 1]."""
    beta = check_positive(beta, "beta")
    runs = check_int(runs, "runs")
    return gaussian_rdp(orders, math.sqrt(2.0 * beta * runs), 1.0)  # alpha (2 beta runs) / 2


def total_rdp(orders, beta, *, runs=1, count_k=None, count_sigma=None, count_releases=1) -> np.ndarray:
    """Algorithm 3's total: alpha (beta_0 + runs beta), beta_0 = count_releases k / (2 sigma^2) for the
    private counts (every release of noisy counts is charged; none if count_k is None)."""
    curve = rdp(orders, beta, runs)
    reps = check_int(count_releases, "count_releases")
    if count_k is None and count_sigma is None:
        return curve
    if count_k is None or count_sigma is None:
        raise ValueError("count_k and count_sigma go together (the private counts' k and sigma), got one of them")
    return compose_rdp(curve, *[count_rdp(orders, count_k, count_sigma)] * reps)


def epsilon(
    beta, delta, *, runs=1, count_k=None, count_sigma=None, count_releases=1, orders=DEFAULT_RDP_ORDERS
) -> float:
    """(eps, delta) of the total RDP curve [Canonne, Kamath, Steinke 2020, Prop. 12 via ``rdp_to_dp``]."""
    d = _positive_delta(delta)
    curve = total_rdp(orders, beta, runs=runs, count_k=count_k, count_sigma=count_sigma, count_releases=count_releases)
    return rdp_to_dp(orders, curve, d)


def beta_for_epsilon(
    target_epsilon,
    delta,
    *,
    runs=1,
    count_k=None,
    count_sigma=None,
    count_releases=1,
    orders=DEFAULT_RDP_ORDERS,
    rtol=1e-6,
) -> float:
    """The largest beta with epsilon(beta, ...) <= target_epsilon, by a bracketed root search in
    log beta (brentq) to relative ``rtol`` (default 1e-6), rounded down so the target holds.

    epsilon(beta) is continuous and non-decreasing in beta (every order's RDP increases)."""
    from ._checks import check_epsilon

    eps = check_epsilon(target_epsilon, "target_epsilon")
    d = _positive_delta(delta)
    rtol = check_positive(rtol, "rtol", lo=1e-12, hi=1e-2)
    kw = dict(runs=runs, count_k=count_k, count_sigma=count_sigma, count_releases=count_releases, orders=orders)

    def f(log_b):
        return epsilon(math.exp(log_b), d, **kw) - eps

    lo, hi = math.log(1e-12), math.log(1e6)
    if f(lo) > 0:
        raise ValueError(
            f"target_epsilon = {eps!r} is not reachable at delta = {d!r}: even beta = 1e-12 "
            f"exceeds it (the private counts alone may cost more)"
        )
    if f(hi) <= 0:
        raise ValueError(f"target_epsilon = {eps!r} allows beta > 1e6: outside the supported range")
    root = brentq(f, lo, hi, xtol=rtol / 4, rtol=4 * np.finfo(float).eps)
    b = math.exp(root - rtol / 2)
    for _ in range(100):  # step down until the target holds
        if f(math.log(b)) <= 0:
            return b
        b *= 1.0 - rtol / 4
    raise RuntimeError(f"beta_for_epsilon did not converge (target_epsilon = {eps!r}, delta = {d!r})")


def gdp_mu(beta, *, runs=1, count_k=None, count_sigma=None, count_releases=1) -> float:
    """The exact mu-GDP of the same releases [DRS22, Thm 2.7, Cor. 3.3]: each run releases two
    Gaussians (A and b, or the T gradient steps) whose sensitivity / noise composes to
    mu^2 = 2 beta; the counts add count_releases k / sigma^2. mu^2 / 2 is the RDP coefficient."""
    beta = check_positive(beta, "beta")
    mu2 = 2.0 * beta * check_int(runs, "runs")
    reps = check_int(count_releases, "count_releases")
    if count_k is not None or count_sigma is not None:
        if count_k is None or count_sigma is None:
            raise ValueError("count_k and count_sigma go together, got one of them")
        mu2 += reps * check_int(count_k, "count_k") / check_positive(count_sigma, "count_sigma") ** 2
    return math.sqrt(mu2)


def claim(beta, delta, **kw) -> Claims:
    """The paper's (alpha, alpha beta)-RDP converted to (eps, delta) (``epsilon``), with the exact
    mu-GDP of the same Gaussian releases beside it (``gdp_mu``)."""
    d = _positive_delta(delta)
    orders = kw.pop("orders", DEFAULT_RDP_ORDERS)
    return Claims(ApproxDP(epsilon(beta, d, orders=orders, **kw), d), GaussianDP(gdp_mu(beta, **kw), d))
