"""Benchmarks of the Krichene et al. 2023 reference:

(a) adaptive weights (mu-family omega from public counts + eq. (12) clipping) on |Omega| = 10^7
    records, 10^6 users, 10^4 tasks: at most 5x ``np.unique`` on the user ids (the issue's bound).
    The dataset's per-user index is built with the dataset, outside the timer (as every benchmark
    here builds the ``UserDataset`` outside); the weights' own work (the (task, user) uniqueness
    check, omega, the per-user budgets B_j, the clipping) is inside.
(b) one SSP release for m = 10^4 tasks, d = 16, 10^5 records: the time per release and where it
    goes (the noise-free statistic, the symmetric noise, the batched PSD projection and
    pseudo-inverse); the solve is compared with a bare batched ``np.linalg.eigh`` of the same
    stack (at most 2x: the pseudo-inverse adds two batched products).

Timed with interleaved perf_counter loops, min over rounds (tests/benchmarks/test_bench_mechanisms.py).
Run with: python -m pytest tests/benchmarks/test_krichene2023_bench.py -m benchmark -s
"""
from __future__ import annotations

import time

import numpy as np
import pytest
from bench_timing import interleaved  # tests/benchmarks/ is on sys.path (pytest rootdir insertion)

from userdp.reference import krichene2023 as K
from userdp.reference import krichene2023_weights as W
from userdp.reference.data import UserDataset

pytestmark = pytest.mark.benchmark

ROUNDS = 3


def _graph(n_records, n_users, m, d, rng):
    """Distinct (task, user) pairs: user j takes tasks (j + k * step) mod m, k = 0.., so no pair repeats."""
    per = n_records // n_users
    users = np.repeat(np.arange(n_users), per)
    tasks = (users + np.tile(np.arange(per), n_users) * 7919) % m
    return UserDataset(rng.standard_normal((users.size, d)), users, labels=rng.standard_normal(users.size),
                       task_ids=tasks)


def test_adaptive_weights_vs_unique_user_ids():
    rng = np.random.default_rng(0)
    m = 10**4
    D = _graph(10**7, 10**6, m, 1, rng)
    D.user_index                                            # the dataset's index: built with the dataset
    n = np.bincount(D.task_ids, minlength=m).astype(float)  # declared public here
    ids = D.user_ids

    ours, floor = interleaved(lambda: W.adaptive_weights(D, m=m, beta=1.0, mu=0.25, n_counts=n, n_users=10**6),
                              lambda: np.unique(ids), rounds=ROUNDS)
    ratio = ours / floor
    print(f"\nadaptive weights + eq. (12), |Omega| = 10^7: {ours:.2f} s vs np.unique(user_ids) {floor:.2f} s: "
          f"ratio {ratio:.2f}")
    assert ratio <= 5.0


def test_ssp_release_m_1e4_d_16():
    rng = np.random.default_rng(1)
    m, d = 10**4, 16
    D = _graph(10**5, 10**4, m, d, rng)
    w = np.full(D.n, 0.1)
    kw = dict(m=m, Gamma_x=1.0, Gamma_star=1.0)
    t = time.perf_counter()
    A, b = K.statistic(D, w, **kw)
    t_stat = time.perf_counter() - t
    t = time.perf_counter()
    A_hat, b_hat = K.ssp_release(D, w, rng, **kw)
    t_release = time.perf_counter() - t
    M = A_hat + np.eye(d)
    ours, floor = interleaved(lambda: K.solve(A_hat, b_hat, 1.0), lambda: np.linalg.eigh(M), rounds=ROUNDS)
    total = t_release + ours
    print(f"\nSSP m = 10^4, d = 16, 10^5 records: one release {total * 1e3:.0f} ms = statistic {t_stat * 1e3:.0f} ms "
          f"+ noise {(t_release - t_stat) * 1e3:.0f} ms + PSD pseudo-inverse solve {ours * 1e3:.0f} ms "
          f"(bare batched eigh {floor * 1e3:.0f} ms, ratio {ours / floor:.2f})")
    assert ours / floor <= 2.0
