"""The benchmark rows of amin2019 (``userdp bench``; ``audits/bench/run.py`` runs them, the
records are ``audits/engine/benchmark.py``). Each builder makes the inputs for a size n outside
every timer and returns a ``Case``: our call and the baseline's (the simplest numpy code doing
the part of the work nothing can avoid)."""

from __future__ import annotations


import numpy as np

from userdp.reference import amin2019 as A
from userdp.reference.data import UserDataset
from userdp.audits.engine.benchmark import Benchmark, Case, TEN_SCALING, dataset_bytes, records_text

__all__ = ["BENCHMARKS"]


def amin_private_cap_sum(n: int) -> Case:

    rng = np.random.default_rng(0)
    D = UserDataset(rng.uniform(0.0, 1.0, n), rng.integers(0, max(n // 10, 1), n))
    D.user_index  # the dataset's index: built with the dataset
    ids, x = D.user_ids, D.values
    return Case(
        ours=lambda: A.private_cap_mechanism(D, 0.5, 0.5, 100.0, rng),
        baseline=lambda: np.bincount(ids, weights=x),
        input_bytes=dataset_bytes(D),
        note=f"m = {D.m} users, eps_cap = eps_sum = 0.5, U = 100",
    )


BENCHMARKS = [
    Benchmark(
        "amin2019.private-cap-sum",
        "Amin capped sum, private cap",
        "np.bincount(ids, weights=x)",
        3.0,
        amin_private_cap_sum,
        10**7,
        records_text,
        **TEN_SCALING,
        complexity="n + m log m (sort of the user totals)",
        copies=3.0,
        need=lambda n: 80 * n,
    ),
]
