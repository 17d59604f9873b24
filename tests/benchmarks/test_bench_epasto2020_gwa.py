"""Benchmark: the certified optimal GWA C at n = 3000, d = 10 (issue 4, "Figures").

Reports the wall time of ``optimal_C`` and its certificate (relative duality gap) on two
§6-like instances: Zipf(1.5) user sizes (few, very heavy users) and Zipf(3) (many small
users), each at a moderate (kappa/sigma^2 ~ 1e1) and at the §6 noise ratio (B ~ 10^3,
sigma = 20, kappa/sigma^2 ~ 1e5). The only assertion is the certificate (gap <= 1e-6);
times are printed. Run with:
    OPENBLAS_NUM_THREADS=1 python -m pytest tests/benchmarks/test_bench_epasto2020_gwa.py -m benchmark --benchmark-enable -s
(OpenBLAS threads on this 2-core machine slow the many small solves several-fold.)
"""
from __future__ import annotations

import time

import numpy as np
import pytest

from userdp.reference import epasto2020_gwa as G
from userdp.reference.data import UserDataset
from userdp.audits.registry.epasto2020_gwa import zipf_user_ids

pytestmark = pytest.mark.benchmark


@pytest.mark.parametrize("alpha", [1.5, 3.0])
@pytest.mark.parametrize("B,sigma", [(10.0, 1.0), (1000.0, 20.0)])
def test_optimal_C_n3000_d10(alpha, B, sigma):
    rng = np.random.default_rng(3000)
    D = UserDataset(rng.standard_normal((3000, 10)), zipf_user_ids(3000, alpha, rng),
                    labels=rng.uniform(0, B, 3000))
    t = time.perf_counter()
    opt = G.optimal_C(D, B, 1.0, sigma)
    dt = time.perf_counter() - t
    print(f"\noptimal_C n=3000 d=10 m={D.m} s_m={D.counts.max()} alpha={alpha} B={B} sigma={sigma}: "
          f"{dt:.2f} s, {opt.iterations} Newton iterations, relative duality gap {opt.gap:.2e}, "
          f"max|CX-I| {np.abs(opt.C @ G.features(D) - np.eye(10)).max():.1e}")
    assert opt.gap <= 1e-6
