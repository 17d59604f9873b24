"""Speed of the audit (issue 3): auditing vectorised Laplace at 1e6 per side must take at
most 2x drawing the 2e6 Laplace variates alone, measured in the same run.

Run: python -m pytest tests/benchmarks/test_bench_audit.py -m benchmark -s
"""
import time

import numpy as np
import pytest

from userdp.audits import audit
from userdp.reference.claims import PureDP

pytestmark = pytest.mark.benchmark

N = 10**6


def lap(D, rng, size):
    return D + rng.laplace(0.0, 1.0, size)


def _best(f, repeat=7):
    times = []
    for i in range(repeat):
        t = time.perf_counter()
        f(i)
        times.append(time.perf_counter() - t)
    return min(times)


def test_audit_speed_vs_drawing():
    def draw(i):
        rng = np.random.default_rng(i)
        rng.laplace(0.0, 1.0, N)
        rng.laplace(0.0, 1.0, N)

    def run(i):
        audit(lap, (0.0, 1.0), PureDP(1.0), samples=N, seed=i)

    run(99)  # warm up imports and caches
    t_draw, t_audit = _best(draw), _best(run)
    ratio = t_audit / t_draw
    print(f"\naudit {t_audit * 1e3:.1f} ms, draw {t_draw * 1e3:.1f} ms, ratio {ratio:.2f}")
    assert ratio <= 2.0
