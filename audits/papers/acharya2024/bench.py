"""The benchmark rows of acharya2024 (``userdp bench``; ``audits/bench/run.py`` runs them, the
records are ``audits/engine/benchmark.py``). Each builder makes the inputs for a size n outside
every timer and returns a ``Case``: our call and the baseline's (the simplest numpy code doing
the part of the work nothing can avoid)."""

from __future__ import annotations


import numpy as np

import userdp.audits
from userdp.audits.papers.acharya2024.audits import _pdp_setup
from userdp.reference import acharya2024 as A
from userdp.reference.data import UserDataset
from userdp.audits.engine.benchmark import Benchmark, Case, dataset_bytes, pow10

__all__ = ["BENCHMARKS"]


LAMBDA = 100.0


def _acharya_dataset(n: int, d: int, rng):
    return UserDataset(
        rng.random((n, d)), np.arange(n), labels=rng.uniform(-1, 1, n), epsilons=rng.uniform(0.01, 1.0, n)
    )


def acharya_fit_release(n: int) -> Case:
    rng = np.random.default_rng(0)
    D = _acharya_dataset(n, 30, rng)
    X, y, eps = D.values, D.labels, D.epsilons

    def bare():
        w = eps / eps.sum()
        M = (X * w[:, None]).T @ X  # X^T diag(w) X, (d, d)
        M[np.diag_indices_from(M)] += LAMBDA
        return np.linalg.solve(M, X.T @ (w * y))

    return Case(ours=lambda: A.mechanism(D, rng, Lambda=LAMBDA), baseline=bare, input_bytes=dataset_bytes(D))


def _acharya_draws(N: int, n: int, d: int) -> Case:
    rng = np.random.default_rng(1)
    D = _acharya_dataset(n, d, rng)
    eta = A.eta(D, LAMBDA)

    def bare():
        r = rng.gamma(shape=d, scale=1.0 / eta, size=N)  # radius
        z = rng.standard_normal((N, d))
        z *= (r / np.linalg.norm(z, axis=1))[:, None]  # r Z / ||Z||
        return z

    return Case(ours=lambda: A.mechanism(D, rng, N, Lambda=LAMBDA), baseline=bare, input_bytes=8 * N * d)


def acharya_draws_d2(N: int) -> Case:
    return _acharya_draws(N, 8, 2)


def acharya_draws_d30(N: int) -> Case:
    return _acharya_draws(N, 80, 30)


def audit_pdp_op_d30(N: int) -> Case:
    """One pair of the d = 30 PDP-OP audit (the most lenient record at the corner, lambda 1000)."""
    setup = _pdp_setup(30, 1000.0)
    pair = setup.pairs[-1]
    seeds = iter(range(10**6))
    rng = np.random.default_rng(0)
    out = {}

    def ours():
        out["r"] = userdp.audits.audit(
            setup.mechanism, [pair], setup.claim, samples=N, seed=next(seeds), output="vector", noise_family="l2laplace"
        )

    def draw():
        setup.mechanism(pair.first, rng, N)
        setup.mechanism(pair.second, rng, N)

    case = Case(ours=ours, baseline=draw, input_bytes=2 * 8 * 30 * N)

    def check():
        r = out["r"]
        case.note = f"eps_lb {r.epsilon_lower_bound:.3f} of eps_i = {setup.claim.epsilons[pair.unit]:g}"
        return None if r.verdict == "no violation found" else "a correct mechanism was flagged"

    case.check = check
    return case


BENCHMARKS = [
    Benchmark(
        "acharya2024.fit-release",
        "PDP-OP fit + release",
        "X^T diag(w) X + np.linalg.solve",
        2.0,
        acharya_fit_release,
        10**6,
        lambda n: f"n = {pow10(n)}, d = 30",
        scaling=(10**4, 10**5, 10**6),
        quick_scaling=(10**3, 10**4, 10**5),
        complexity="n d^2",
        copies=3.0,
        need=lambda n: 8 * 30 * 6 * n,
    ),
    Benchmark(
        "acharya2024.draws-d2",
        "PDP-OP releases (n = 8, d = 2)",
        "L2-Laplace vectors",
        2.0,
        acharya_draws_d2,
        10**6,
        lambda n: f"{pow10(n)} releases",
        need=lambda n: 8 * 2 * 8 * n,
    ),
    Benchmark(
        "acharya2024.draws-d30",
        "PDP-OP releases (n = 80, d = 30)",
        "L2-Laplace vectors",
        2.0,
        acharya_draws_d30,
        10**6,
        lambda n: f"{pow10(n)} releases",
        need=lambda n: 8 * 30 * 8 * n,
    ),
    Benchmark(
        "audit.pdp-op-d30",
        "audit of PDP-OP, d = 30 (vector)",
        "drawing the 2 N releases",
        3.0,
        audit_pdp_op_d30,
        10**5,
        lambda n: f"N = {pow10(n)} per side",
        rounds=3,
        need=lambda n: 30 * 8 * 20 * n,
    ),
]
