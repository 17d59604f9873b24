"""Benchmarks of the Zhao et al. 2024 reference (HLM):

(a) estimate + release, n = 10^5 users, d = 10 (1.05 x 10^6 items, 1-20 per user):
    ``mechanism(D, rng, ...)`` (local averages, the cap from the public counts, the certified
    Newton solve, the PTR distance, the noise) against the weighted mean of the local averages
    (``D.local_averages()``, w_i = min(m_i, cap) / sum, one matrix-vector product): at most 20x;
(b) the propose-test-release step alone (``ptr_distance``: one sort of the n margins, then J
    binary searches) at n = 10^4, 10^5, 10^6: its log-log slope against n must be below 1.3
    (O(n log n); a quadratic step would give 2).

The per-user grouping of the dataset is cached by ``UserDataset`` and warmed up for both
sides. Timed with interleaved perf_counter loops, min over rounds, as test_bench_mechanisms.py
explains. Run with:
    python -m pytest tests/benchmarks/test_zhao2024_bench.py -m benchmark -s
"""
from __future__ import annotations

import time

import numpy as np
import pytest
from bench_timing import interleaved  # tests/benchmarks/ is on sys.path (pytest rootdir insertion)

from userdp.reference import zhao2024 as Z
from userdp.reference.data import UserDataset

pytestmark = pytest.mark.benchmark

ROUNDS = 5
PARAMS = dict(epsilon=1.0, delta=1e-5, R=1.0, R_c=1.0)


@pytest.mark.parametrize("items", ["uniform", "student-t 2.5"])
def test_hlm_vs_weighted_mean_of_local_averages(items):
    # Uniform items: every user sits in its quadratic region and the solve ends at its start
    # (the weighted mean). Student-t items (2.5 degrees of freedom, heavy tails): outliers
    # in the linear region make the Newton steps iterate.
    rng = np.random.default_rng(0)
    n, d = 10**5, 10
    m = rng.integers(1, 21, n)
    ids = np.repeat(np.arange(n), m)
    x = rng.uniform(-1, 1, (ids.size, d)) if items == "uniform" else rng.standard_t(2.5, (ids.size, d))
    D = UserDataset(x / np.sqrt(d), ids)
    cap = Z.release_plan(D, **PARAMS).cap

    def bare():
        y = D.local_averages()
        a = np.minimum(D.counts, cap)
        return (a / a.sum()) @ y

    ours, floor = interleaved(lambda: Z.mechanism(D, rng, **PARAMS), bare)
    print(f"\nHLM ({items}) n = {n}, d = {d} ({ids.size} items): {ours * 1e3:.1f} ms vs weighted mean "
          f"{floor * 1e3:.1f} ms: {ours / floor:.2f}x (target <= 20x)")
    assert ours <= 20 * floor


def test_ptr_step_is_n_log_n():
    rng = np.random.default_rng(1)
    sizes, times = (10**4, 10**5, 10**6), []
    for n in sizes:
        margins, w = rng.uniform(0, 1, n), np.full(n, 1.0 / n)

        def step():
            return Z.ptr_distance(margins, w, B=1e-3, e=0.0, kappa0=0.5, J=154)

        step()
        ts = []
        for _ in range(ROUNDS):
            t = time.perf_counter()
            step()
            ts.append(time.perf_counter() - t)
        times.append(min(ts))
    slope = float(np.polyfit(np.log(sizes), np.log(times), 1)[0])
    print("\nPTR distance: " + ", ".join(f"n = {n}: {t * 1e3:.2f} ms" for n, t in zip(sizes, times))
          + f"; log-log slope {slope:.2f}")
    assert slope < 1.3
