"""The benchmark rows of krichene2023 (``userdp bench``; ``audits/bench/run.py`` runs them, the
records are ``audits/engine/benchmark.py``). Each builder makes the inputs for a size n outside
every timer and returns a ``Case``: our call and the baseline's (the simplest numpy code doing
the part of the work nothing can avoid)."""

from __future__ import annotations

import time

import numpy as np

from userdp.reference import krichene2023 as K
from userdp.reference import krichene2023_weights as W
from userdp.reference.data import UserDataset
from userdp.audits.engine.benchmark import Benchmark, Case, TEN_SCALING, dataset_bytes, pow10

__all__ = ["BENCHMARKS"]


def _krichene_graph(n_records: int, n_users: int, m: int, d: int, rng):
    """Distinct (task, user) pairs: user j takes tasks (j + k * 7919) mod m, k = 0, 1, ..."""

    per = n_records // n_users
    users = np.repeat(np.arange(n_users), per)
    tasks = (users + np.tile(np.arange(per), n_users) * 7919) % m
    return UserDataset(
        rng.standard_normal((users.size, d)), users, labels=rng.standard_normal(users.size), task_ids=tasks
    )


def krichene_adaptive_weights(n: int) -> Case:
    n_users = max(n // 10, 1)
    m = min(10**4, n_users)  # every task has a user (Assumption 4.1): user j takes task j
    D = _krichene_graph(n, n_users, m, 1, np.random.default_rng(0))
    D.user_index  # the dataset's index: built with the dataset
    counts = np.bincount(D.task_ids, minlength=m).astype(float)  # declared public here
    ids = D.user_ids
    return Case(
        ours=lambda: W.adaptive_weights(D, m=m, beta=1.0, mu=0.25, n_counts=counts, n_users=n_users),
        baseline=lambda: np.unique(ids),
        input_bytes=dataset_bytes(D),
        note=f"{m} tasks, {n_users} users",
    )


def krichene_ssp_solve(m: int) -> Case:
    """Algorithm 1's solve for m tasks, d = 16 (10 records per task) against a bare batched eigh."""
    rng = np.random.default_rng(1)
    d = 16
    D = _krichene_graph(10 * m, m, m, d, rng)
    w = np.full(D.n, 0.1)
    kw = dict(m=m, Gamma_x=1.0, Gamma_star=1.0)
    t = time.perf_counter()
    A_hat, b_hat = K.ssp_release(D, w, rng, **kw)
    t_release = time.perf_counter() - t
    M = A_hat + np.eye(d)
    return Case(
        ours=lambda: K.solve(A_hat, b_hat, 1.0),
        baseline=lambda: np.linalg.eigh(M),
        input_bytes=A_hat.nbytes + b_hat.nbytes,
        note=f"the release before it (statistic + noise, untimed here): {t_release * 1e3:.0f} ms",
    )


BENCHMARKS = [
    Benchmark(
        "krichene2023.adaptive-weights",
        "Krichene adaptive weights + eq. (12)",
        "np.unique(ids)",
        5.0,
        krichene_adaptive_weights,
        10**7,
        lambda n: f"{pow10(n)} (task, user) pairs",
        rounds=3,
        **TEN_SCALING,
        complexity="n log n (sort of the pairs)",
        copies=3.0,
        need=lambda n: 150 * n,
    ),
    Benchmark(
        "krichene2023.ssp-solve",
        "Krichene SSP solve (PSD projection, pinv)",
        "batched np.linalg.eigh",
        2.0,
        krichene_ssp_solve,
        10**4,
        lambda n: f"m = {pow10(n)} tasks, d = 16",
        rounds=3,
        need=lambda n: 20 * 16 * 16 * 8 * n,
    ),
]
