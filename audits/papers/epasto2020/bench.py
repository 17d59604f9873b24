"""The benchmark rows of epasto2020 (``userdp bench``; ``audits/bench/run.py`` runs them, the
records are ``audits/engine/benchmark.py``). Each builder makes the inputs for a size n outside
every timer and returns a ``Case``: our call and the baseline's (the simplest numpy code doing
the part of the work nothing can avoid)."""

from __future__ import annotations


import numpy as np

from userdp.audits.papers.epasto2020.audits_gwa import synthetic_instance
from userdp.audits.papers.epasto2020.audits_gwa import zipf_user_ids
from userdp.reference import epasto2020_gwa as G
from userdp.reference.data import UserDataset
from userdp.reference import epasto2020 as EW
from userdp.audits.engine.benchmark import Benchmark, Case, TEN_SCALING, dataset_bytes, pow10, records_text

__all__ = ["BENCHMARKS"]


def epasto_optimal_weights(n: int) -> Case:

    rng = np.random.default_rng(0)
    ids, values = rng.integers(0, max(n // 10, 1), n), np.zeros(n)
    state, out = {}, {}

    def fresh():
        state["D"] = UserDataset(values, ids)  # the per-user structure is part of the work

    def ours():
        out["c"], out["h"] = EW.optimal_weights(state["D"], 1.0, 1.0)
        return out["c"]

    def check():
        c = out["c"]
        return None if c.shape == (n,) and abs(c.sum() - 1) < 1e-9 else f"c has shape {c.shape}, sum {c.sum()!r}"

    fresh()
    return Case(
        ours=ours,
        baseline=lambda: np.unique(state["D"].user_ids, return_counts=True),
        fresh=fresh,
        check=check,
        input_bytes=ids.nbytes + values.nbytes,
        note=f"m = {state['D'].m} users",
    )


def epasto_gwa_optimal_C(n: int, alpha: float = 1.5) -> Case:
    """The §6 instance (Zipf(alpha) users, make_regression with 9 features + intercept: d = 10)."""
    D, _, B, sigma = synthetic_instance(n, np.random.default_rng(0), alpha=alpha, d=9)
    X, y, out = G.features(D), D.labels, {}
    case = Case(
        ours=lambda: out.__setitem__("opt", G.optimal_C(D, B, 1.0, sigma)),
        baseline=lambda: np.linalg.lstsq(X, y, rcond=None),
        input_bytes=dataset_bytes(D),
    )

    def check():
        opt = out["opt"]
        case.note = (
            f"m = {D.m} users, working set {opt.working_set:,} of {D.n:,} records, "
            f"{opt.iterations} Newton iterations, duality gap {opt.gap:.1e}"
        )
        return None if opt.gap <= 1e-6 else f"duality gap {opt.gap:.2e} > 1e-6"

    case.check = check
    return case


GWA_INSTANCES = ((1.5, 10.0, 1.0), (3.0, 10.0, 1.0), (1.5, 1000.0, 20.0), (3.0, 1000.0, 20.0))  # (alpha, B, sigma)


def epasto_gwa_instances(n: int) -> Case:
    """The four GWA benchmark instances: X standard normal (d = 10), Zipf(alpha) users (1.5: few heavy
    users; 3: many small ones), labels U(0, B); a moderate noise ratio (B = 10, sigma = 1) and
    the §6 one (B = 1000, sigma = 20, kappa / sigma^2 ~ 1e5). Each C must be certified."""
    rng = np.random.default_rng(n)
    data = []
    for alpha, B, sigma in GWA_INSTANCES:
        data.append(
            (
                UserDataset(rng.standard_normal((n, 10)), zipf_user_ids(n, alpha, rng), labels=rng.uniform(0, B, n)),
                B,
                sigma,
            )
        )
    out = []

    def ours():
        out[:] = [G.optimal_C(D, B, 1.0, sigma) for D, B, sigma in data]

    def bare():
        for D, _, _ in data:
            np.linalg.lstsq(D.values, D.labels, rcond=None)

    case = Case(ours=ours, baseline=bare, input_bytes=sum(dataset_bytes(D) for D, _, _ in data))

    def check():
        case.note = "; ".join(
            f"alpha {a:g}, B {B:g}, sigma {s:g}: m = {D.m}, working set {o.working_set:,}, "
            f"{o.iterations} Newton iterations, gap {o.gap:.1e}, "
            f"max|CX - I| {np.abs(o.C @ G.features(D) - np.eye(10)).max():.1e}"
            for (a, B, s), (D, _, _), o in zip(GWA_INSTANCES, data, out)
        )
        bad = [
            f"alpha {a:g}, B {B:g}: gap {o.gap:.2e}" for (a, B, _), o in zip(GWA_INSTANCES, out) if not o.gap <= 1e-6
        ]
        return None if not bad else "certificate above 1e-6: " + "; ".join(bad)

    case.check = check
    return case


BENCHMARKS = [
    Benchmark(
        "epasto2020.optimal-weights",
        "Epasto optimal WA weights (exact h*)",
        "np.unique(ids, return_counts=True)",
        5.0,
        epasto_optimal_weights,
        10**7,
        records_text,
        rounds=3,
        **TEN_SCALING,
        complexity="n log n (one sort)",
        copies=3.0,
        need=lambda n: 140 * n,
    ),
    Benchmark(
        "epasto2020-gwa.optimal-C",
        "Epasto optimal GWA C (certified)",
        "one np.linalg.lstsq",
        50.0,
        # the target's size in --quick too (0.3 s a call since the working set): at n = 10^4
        # one lstsq takes under 1 ms while the Newton steps, on a working set, do not shrink with n
        epasto_gwa_optimal_C,
        10**5,
        lambda n: f"n = {pow10(n)}, d = 10 (§6)",
        rounds=3,
        scaling=(10**3, 10**4, 10**5),
        complexity="Newton steps x |T| d^3, + n d^2",
        min_size=20,
        scaling_note=(
            "not a complexity: the Newton steps run on a working set of records whose size, "
            "like the number of steps, depends on the instance more than on n (per size below); "
            "only a few passes (the OLS start, the violator check, the certificate) touch all n "
            "records"
        ),
        need=lambda n: 4000 * n,
    ),
    Benchmark(
        "epasto2020-gwa.instances",
        "Epasto optimal GWA C, 4 instances",
        "4 np.linalg.lstsq",
        None,
        epasto_gwa_instances,
        3000,
        lambda n: f"4 x n = {n:,}, d = 10",
        rounds=1,
        quick_rounds=1,
        warmup=False,
        min_size=50,
        need=lambda n: 4 * 4000 * n,
    ),
]
