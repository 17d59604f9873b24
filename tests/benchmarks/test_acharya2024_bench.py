"""Benchmarks of the Acharya et al. 2024 reference (PDP-OP), each at most 2x its bare-numpy floor:

(a) fit + release, n = 10^6 records, d = 30: ``mechanism(D, rng, Lambda=...)`` (validation of
    X, y, eps twice, the weighted ridge solve, eta, one L2-Laplace draw) against forming
    X^T diag(w) X + lambda I and X^T (w y) and solving with ``np.linalg.solve``;
(b) an audit's draw: 10^6 releases of ``mechanism`` on a small dataset (d = 2 as the
    registered ``acharya2024.pdp-op-d2``, and d = 30 as the synthetic §4 data) against drawing
    10^6 L2-Laplace vectors alone (Gamma(d, 1/eta) radius times a normalised Gaussian).

Building the ``UserDataset`` (copying and validating the arrays) is outside the timer.
Timed with interleaved perf_counter loops, min over rounds, as test_bench_mechanisms.py
explains (the marker keeps these out of the default run). Run with:
    python -m pytest tests/benchmarks/test_acharya2024_bench.py -m benchmark -s
"""
from __future__ import annotations

import numpy as np
import pytest
from bench_timing import interleaved  # tests/benchmarks/ is on sys.path (pytest rootdir insertion)

from userdp.reference import acharya2024 as A
from userdp.reference.data import UserDataset

pytestmark = pytest.mark.benchmark

MAX_RATIO = 2.0
LAMBDA = 100.0


def _dataset(n, d, rng) -> UserDataset:
    return UserDataset(rng.random((n, d)), np.arange(n), labels=rng.uniform(-1, 1, n),
                       epsilons=rng.uniform(0.01, 1.0, n))


def test_fit_and_release_vs_weighted_solve():
    rng = np.random.default_rng(0)
    D = _dataset(10**6, 30, rng)
    X, y, eps = D.values, D.labels, D.epsilons

    def bare():
        w = eps / eps.sum()
        M = (X * w[:, None]).T @ X                      # X^T diag(w) X, (d, d)
        M[np.diag_indices_from(M)] += LAMBDA
        return np.linalg.solve(M, X.T @ (w * y))

    ours, floor = interleaved(lambda: A.mechanism(D, rng, Lambda=LAMBDA), bare)
    ratio = ours / floor
    print(f"\nPDP-OP fit+release n=10^6 d=30: {ours * 1e3:.0f} ms vs weighted solve {floor * 1e3:.0f} ms: "
          f"ratio {ratio:.2f}")
    assert ratio <= MAX_RATIO


@pytest.mark.parametrize("n,d", [(8, 2), (80, 30)])
def test_audit_draw_vs_l2_laplace_vectors(n, d):
    rng = np.random.default_rng(1)
    D = _dataset(n, d, rng)
    eta, N = A.eta(D, LAMBDA), 10**6

    def bare():
        r = rng.gamma(shape=d, scale=1.0 / eta, size=N)            # radius
        z = rng.standard_normal((N, d))
        z *= (r / np.linalg.norm(z, axis=1))[:, None]                # r Z / ||Z||
        return z

    ours, floor = interleaved(lambda: A.mechanism(D, rng, N, Lambda=LAMBDA), bare)
    ratio = ours / floor
    print(f"\nPDP-OP 10^6 releases n={n} d={d}: {ours * 1e3:.0f} ms vs L2-Laplace vectors {floor * 1e3:.0f} ms: "
          f"ratio {ratio:.2f}")
    assert ratio <= MAX_RATIO
