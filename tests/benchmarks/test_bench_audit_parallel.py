"""Auditing a mechanism without a batch API (issue 12 item 3), each figure measured in one run:

- the audit's cost per release is at most 1.3x the bare call in a Python loop (workers=1);
- ``workers=2`` on this 2-core machine is at least 1.7x faster than ``workers=1``, with the
  identical result.

The mechanism is a library-style release, one per call: clip each record, sum in Python,
add Laplace noise (about 5 us per call here; the libraries of issue 12 take 300-500 us, so
any fixed cost of the audit weighs less on them than here).

Run: python -m pytest tests/benchmarks/test_bench_audit_parallel.py -m benchmark -s
"""
import time

import numpy as np
import pytest

from userdp.audits import audit
from userdp.reference.claims import PureDP

pytestmark = pytest.mark.benchmark

N = 100_000                                             # releases per side
DATA = [0.25 * (i % 5) for i in range(40)]
PAIR = (DATA, DATA[:-1] + [0.0])                 # one record changed from 1 to 0: sensitivity 1


def bounded_sum(D, rng):
    s = 0.0
    for x in D:
        s += min(max(x, 0.0), 1.0)
    return s + rng.laplace(0.0, 1.0)


def _best(f, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def _bare():
    rng = np.random.default_rng(0)
    for D in PAIR:
        for _ in range(N):
            bounded_sum(D, rng)


def _audit(workers):
    return lambda: audit(bounded_sum, PAIR, PureDP(1.0), samples=N, seed=0, workers=workers)


def test_overhead_per_release_at_most_1_3x_the_bare_loop():
    _audit(1)()                                          # warm up imports and caches
    t_bare, _ = _best(_bare)
    t_audit, r = _best(_audit(1))
    ratio = t_audit / t_bare
    print(f"\nbare loop {t_bare / (2 * N) * 1e6:.2f} us per release, audit {t_audit / (2 * N) * 1e6:.2f} us "
          f"per release: ratio {ratio:.3f} (eps_lb {r.epsilon_lower_bound:.4f})")
    assert ratio <= 1.3


def test_two_workers_at_least_1_7x_faster_with_the_same_result():
    _audit(2)()                                          # warm up
    t1, r1 = _best(_audit(1))
    t2, r2 = _best(_audit(2))
    speedup = t1 / t2
    print(f"\nworkers=1 {t1:.2f} s, workers=2 {t2:.2f} s: speedup {speedup:.2f}; eps_lb {r1.epsilon_lower_bound:.4f} "
          f"and {r2.epsilon_lower_bound:.4f}")
    assert (r1.epsilon_lower_bound, r1.witness.counts) == (r2.epsilon_lower_bound, r2.witness.counts)
    assert r1.witness.rejection_set == r2.witness.rejection_set
    assert speedup >= 1.7
