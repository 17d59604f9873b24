"""Benchmark: the Laplace primitive costs at most 1.5x a bare ``rng.laplace``.

Timed with interleaved perf_counter loops, not the ``benchmark`` fixture: the default
addopts pass --benchmark-skip, which would skip a fixture-based test even under
--benchmark-enable. The marker alone keeps this out of the default run. Run with:
    python -m pytest tests/benchmarks/test_bench_mechanisms.py -m benchmark --benchmark-enable -p no:randomly -s
"""
from __future__ import annotations

import time

import numpy as np
import pytest

from userdp.reference.mechanisms import laplace_mechanism

pytestmark = pytest.mark.benchmark

N = 10**7
ROUNDS = 7
MAX_RATIO = 1.5


def _best_times(rng):
    """Min over ROUNDS of each, interleaved so both see the same machine state."""
    ours, bare = [], []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        laplace_mechanism(0.0, 1.0, 1.0, rng, size=N)
        ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        rng.laplace(0.0, 1.0, N)
        bare.append(time.perf_counter() - t)
    return min(ours), min(bare)


def test_laplace_mechanism_overhead():
    rng = np.random.default_rng(0)
    ours, bare = _best_times(rng)
    ratio = ours / bare
    print(f"\nlaplace_mechanism {ours*1e3:.1f} ms vs rng.laplace {bare*1e3:.1f} ms for 10^7: ratio {ratio:.3f}")
    assert ratio <= MAX_RATIO, f"laplace_mechanism is {ratio:.2f}x a bare rng.laplace (limit {MAX_RATIO})"
