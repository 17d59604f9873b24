"""The benchmark rows of zhao2024 (``userdp bench``; ``audits/bench/run.py`` runs them, the
records are ``audits/engine/benchmark.py``). Each builder makes the inputs for a size n outside
every timer and returns a ``Case``: our call and the baseline's (the simplest numpy code doing
the part of the work nothing can avoid)."""

from __future__ import annotations


import numpy as np

from userdp.reference import zhao2024 as Z
from userdp.reference.data import UserDataset
from userdp.audits.engine.benchmark import Benchmark, Case, dataset_bytes, pow10

__all__ = ["BENCHMARKS"]


HLM_PARAMS = dict(epsilon=1.0, delta=1e-5, R=1.0, R_c=1.0)


def zhao_hlm(n: int, items: str = "uniform") -> Case:
    """HLM on n users with 1-20 items each (d = 10) against the weighted mean of the local averages.

    Uniform items: every user sits in its quadratic region and the solve ends at its start.
    Student-t items (2.5 degrees of freedom): outliers in the linear region make Newton iterate."""
    rng = np.random.default_rng(0)
    d = 10
    ids = np.repeat(np.arange(n), rng.integers(1, 21, n))
    x = rng.uniform(-1, 1, (ids.size, d)) if items == "uniform" else rng.standard_t(2.5, (ids.size, d))
    D = UserDataset(x / np.sqrt(d), ids)
    cap = Z.release_plan(D, **HLM_PARAMS).cap  # warms the dataset's per-user grouping for both sides

    def bare():
        y = D.local_averages()
        a = np.minimum(D.counts, cap)
        return (a / a.sum()) @ y

    return Case(
        ours=lambda: Z.mechanism(D, rng, **HLM_PARAMS),
        baseline=bare,
        input_bytes=dataset_bytes(D),
        note=f"{ids.size} items",
    )


def zhao_hlm_student_t(n: int) -> Case:
    return zhao_hlm(n, "student-t 2.5")


def zhao_ptr(n: int) -> Case:
    rng = np.random.default_rng(1)
    margins, w = rng.uniform(0, 1, n), np.full(n, 1.0 / n)
    return Case(ours=lambda: Z.ptr_distance(margins, w, B=1e-3, shift=0.0, kappa0=0.5, J=154), input_bytes=16 * n)


BENCHMARKS = [
    Benchmark(
        "zhao2024.hlm",
        "HLM estimate + release (uniform items)",
        "weighted mean of local averages",
        20.0,
        zhao_hlm,
        10**5,
        lambda n: f"{pow10(n)} users, d = 10",
        scaling=(10**3, 10**4, 10**5),
        complexity="n log n (the PTR sort)",
        copies=3.0,
        need=lambda n: 10 * 10 * 8 * 10 * n,
    ),
    Benchmark(
        "zhao2024.hlm-student-t",
        "HLM estimate + release (student-t items)",
        "weighted mean of local averages",
        20.0,
        zhao_hlm_student_t,
        10**5,
        lambda n: f"{pow10(n)} users, d = 10",
        need=lambda n: 10 * 10 * 8 * 10 * n,
    ),
    Benchmark(
        "zhao2024.ptr",
        "HLM's propose-test-release step",
        None,
        None,
        zhao_ptr,
        10**6,
        lambda n: f"n = {pow10(n)}",
        scaling=(10**4, 10**5, 10**6),
        complexity="n log n (one sort)",
        need=lambda n: 64 * n,
    ),
]
