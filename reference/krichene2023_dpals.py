"""Krichene et al. 2023 (arXiv:2302.07975v1): Algorithm 3 (alternating minimisation for
private matrix completion, the DPALS family of Chien et al. 2021, Appendix D.1) with
Algorithm 1 as the private item update, and the synthetic problems of Appendix C and of the
head/tail study (§5, Figure 4, in the spirit of, on synthetic data).

Algorithm 3. Items are tasks: theta_i = u_i (item embedding), features x_ij = v_j (the user
embedding), labels y_ij (ratings). For t = 1..T:

    V^(t) = argmin_V sum_{(i,j)} (<u_i, v_j> - y_ij)^2 + lambda ||v_j||^2      (line 4, exact, per user)
    U^(t) = Algorithm 1 on features v_j^(t), labels y_ij, weights w             (line 5, private)

Why this is private (Appendix D.1, Remark D.1). v_j^(t) depends only on the released U^(t-1)
and on user j's own ratings, so in step t user j's records are (x_ij = v_j^(t), y_ij): removing
user j removes exactly those records, and Algorithm 1's sensitivity argument applies
(Theorem 3.3: (alpha, alpha beta)-RDP per step, after line 2's clipping of v_j and y_ij).
U^(0) is drawn from a public distribution. The T steps compose adaptively to
(alpha, alpha T beta) [Mironov 2017, Prop. 1]; with private counts (beta_0) the total is
(alpha, alpha (beta_0 + T beta)) (``krichene2023_weights.total_rdp``). Only U is released;
the predictions for user j use v_j computed from U and user j's data (the billboard model).
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import check_finite_array, check_generator, check_int, check_nonnegative, check_positive, check_real
from .data import UserDataset, check_dataset
from . import krichene2023 as K
from .krichene2023_weights import check_counts

__all__ = [
    "power_law_graph",
    "appendix_c_problem",
    "low_rank_problem",
    "split",
    "task_rmse",
    "user_embeddings",
    "dpals",
    "factor_rmse",
    "bucket_rmse",
]


def power_law_graph(rng, *, m, n_users, a, tasks_per_user) -> tuple[np.ndarray, np.ndarray]:
    """Appendix C: q_i with pdf a q^(a-1) on [0, 1] (q = U^(1/a)), rescaled to sum to
    ``tasks_per_user``, then each pair (i, j) in Omega independently with probability min(q_i, 1).
    Returns (tasks, users), sorted by user then task."""
    rng = check_generator(rng)
    m, n = check_int(m, "m (number of tasks)", hi=10**5), check_int(n_users, "n_users", hi=10**7)
    if m * n > 10**9:
        raise ValueError(f"m * n_users must be <= 1e9 (the membership draws), got m = {m}, n_users = {n}")
    a = check_positive(a, "a (power law)")
    k = check_positive(tasks_per_user, "tasks_per_user")
    q = rng.random(m) ** (1.0 / a)  # inverse cdf of a x^(a-1)
    q = np.minimum(k * q / q.sum(), 1.0)
    member = rng.random((n, m)) < q  # (n, m)
    users, tasks = np.nonzero(member)
    return tasks, users


def appendix_c_problem(rng, *, m=100, n_users=10_000, d=5, a=1.0, tasks_per_user=20, sigma_F=1e-3):
    """Appendix C: u_j, theta_i ~ N(0, I_d) projected to the unit ball, x_ij = u_j,
    y_ij = <u_j, theta_i> + N(0, sigma_F^2). Returns (dataset, theta (m, d))."""
    rng = check_generator(rng)
    d = check_int(d, "d", hi=10**4)
    sigma_F = check_nonnegative(sigma_F, "sigma_F")
    tasks, users = power_law_graph(rng, m=m, n_users=n_users, a=a, tasks_per_user=tasks_per_user)
    ball = lambda z: z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1.0)  # noqa: E731
    u = ball(rng.standard_normal((n_users, d)))
    theta = ball(rng.standard_normal((m, d)))
    x = u[users]
    y = np.einsum("nd,nd->n", x, theta[tasks]) + sigma_F * rng.standard_normal(tasks.size)
    return UserDataset(x, users, labels=y, task_ids=tasks), theta


def low_rank_problem(rng, *, m, n_users, rank, a, tasks_per_user, noise):
    """A synthetic recommendation problem: U* (m, rank), V* (n, rank) with N(0, I / sqrt(rank))
    rows, ratings y_ij = <u_i*, v_j*> + N(0, noise^2) on a power-law graph. values are V*'s
    rows (not used by Algorithm 3, which learns V). Returns (dataset, U*)."""
    rng = check_generator(rng)
    rank = check_int(rank, "rank", hi=10**4)
    noise = check_nonnegative(noise, "noise")
    tasks, users = power_law_graph(rng, m=m, n_users=n_users, a=a, tasks_per_user=tasks_per_user)
    U = rng.standard_normal((m, rank)) / rank**0.25
    V = rng.standard_normal((n_users, rank)) / rank**0.25
    y = np.einsum("nd,nd->n", U[tasks], V[users]) + noise * rng.standard_normal(tasks.size)
    return UserDataset(V[users], users, labels=y, task_ids=tasks), U


def split(dataset: UserDataset, rng, test_fraction=0.2) -> tuple[UserDataset, UserDataset]:
    """A random split of the records (pairs) into train and test (Appendix C: 80/20)."""
    D, rng = check_dataset(dataset), check_generator(rng)
    f = check_real(test_fraction, "test_fraction")
    if not 0.0 < f < 1.0:
        raise ValueError(f"test_fraction must lie in (0, 1), got {test_fraction!r}")
    test = rng.random(D.n) < f
    return D.take(np.flatnonzero(~test)), D.take(np.flatnonzero(test))


def task_rmse(theta, dataset: UserDataset, *, m) -> float:
    """sqrt(mean_{(i,j)} (<x_ij, theta_i> - y_ij)^2) of a multi-task regression (Appendix C)."""
    x, y, t, _ = K.check_data(dataset, m)
    th = check_finite_array(theta, "theta", ndim=(2,))
    if th.shape != (m, x.shape[1]):
        raise ValueError(f"theta must be (m, d) = ({m}, {x.shape[1]}), got {th.shape}")
    return float(np.sqrt(np.mean((np.einsum("nd,nd->n", x, th[t]) - y) ** 2)))


def user_embeddings(dataset: UserDataset, U, *, m, Lambda) -> tuple[np.ndarray, np.ndarray]:
    """Line 4: v_j = argmin_v sum_{i in Omega^j} (<u_i, v> - y_ij)^2 + lambda ||v||^2 for every user,
    batched. Returns (users (n,), V (n, d)) aligned with ``dataset.users``."""
    _, y, t, u = K.check_data(dataset, m)
    U = check_finite_array(U, "U", ndim=(2,))
    if U.shape[0] != m:
        raise ValueError(f"U must be (m, d) with m = {m}, got {U.shape}")
    lam = check_positive(Lambda, "Lambda")
    d = U.shape[1]
    n = dataset.m
    Ur = U[t]  # (N, d)
    M = np.zeros((n, d * d))
    np.add.at(M, u, (Ur[:, :, None] * Ur[:, None, :]).reshape(-1, d * d))
    M = M.reshape(n, d, d) + lam * np.eye(d)
    r = np.zeros((n, d))
    np.add.at(r, u, y[:, None] * Ur)
    return dataset.users, np.linalg.solve(M, r[..., None])[..., 0]


def dpals(train: UserDataset, w, rng, *, m, rank, steps, Gamma_x, Gamma_star, Lambda, item_Lambda=None) -> np.ndarray:
    """Algorithm 3 with Algorithm 1 as line 5, weights w (one per record, public inputs only);
    returns U^(T) (m, rank). (alpha, alpha steps beta)-RDP for beta = the weights' budget."""
    rng = check_generator(rng)
    rank, steps = check_int(rank, "rank", hi=1000), check_int(steps, "steps", hi=1000)
    K.check_data(train, m)
    check_positive(Lambda, "Lambda")
    if item_Lambda is not None:
        il = check_finite_array(item_Lambda, "item_Lambda", ndim=(0, 1))
        if np.any(il < 0):
            raise ValueError(f"item_Lambda must be >= 0 (public), got {item_Lambda!r}")
    lam_items = Lambda if item_Lambda is None else item_Lambda
    U = rng.standard_normal((m, rank)) / math.sqrt(rank)  # U^(0): public distribution
    ids = train.users
    for _ in range(steps):
        users, V = user_embeddings(train, U, m=m, Lambda=Lambda)  # line 4
        x = V[np.searchsorted(ids, train.user_ids)]  # x_ij = v_j
        step = train.with_fields(values=x)
        U = K.ssp_mechanism(step, w, rng, m=m, Gamma_x=Gamma_x, Gamma_star=Gamma_star, Lambda=lam_items)  # line 5
    return U


def factor_rmse(U, train: UserDataset, test: UserDataset, *, m, Lambda) -> tuple[float, np.ndarray]:
    """(RMSE on test, squared errors per test record): v_j from U and user j's train data (Remark
    D.1); a test user with no train record gets v_j = 0."""
    users, V = user_embeddings(train, U, m=m, Lambda=Lambda)
    _, y, t, _ = K.check_data(test, m)
    pos = np.searchsorted(users, test.user_ids)
    known = (pos < users.size) & (users[np.minimum(pos, users.size - 1)] == test.user_ids)
    Vt = np.where(known[:, None], V[np.minimum(pos, users.size - 1)], 0.0)
    err = (np.einsum("nd,nd->n", np.asarray(U)[t], Vt) - y) ** 2
    return float(np.sqrt(err.mean())), err


def bucket_rmse(sq_err, test: UserDataset, n_counts, *, m, buckets=5) -> np.ndarray:
    """RMSE per bucket of tasks sorted by increasing n_i, equal numbers of tasks per bucket (§5,
    Figure 4); shape (buckets,)."""
    _, _, t, _ = K.check_data(test, m)
    e = check_finite_array(sq_err, "sq_err", ndim=(1,))
    n = check_counts(n_counts, m)
    if e.shape != t.shape or np.any(e < 0):
        raise ValueError(f"sq_err must be (N_test,) = ({t.size},) squared errors >= 0, got shape {e.shape}")
    b = check_int(buckets, "buckets", hi=m)
    order = np.argsort(n, kind="stable")
    which = np.empty(m, dtype=int)
    which[order] = np.arange(m) * b // m
    s = np.bincount(which[t], weights=e, minlength=b)
    c = np.bincount(which[t], minlength=b)
    return np.sqrt(s / np.maximum(c, 1))
