"""userdp's auditor and StatDP side by side: same mechanisms, same neighbouring inputs, same
number of outputs per side. Not a test and not a dependency: StatDP (PyPI ``pystatdp``, the
OpenMined fork of Ding et al. 2018's detector) needs numba, so it runs in its own venv:

    python3 -m venv /tmp/statdp && /tmp/statdp/bin/pip install pystatdp -e .
    /tmp/statdp/bin/python tests/benchmarks/statdp_side_by_side.py [--samples N]

The two answer different questions. StatDP tests H0 "the mechanism is eps0-DP" for each
eps0 it is given and returns a p-value; its lower bound is read here as the largest eps0 on
a grid with p < 0.05 (no correction for scanning the grid: this favours StatDP). userdp
returns eps_lb, a lower bound on the true eps at 95% confidence, in one run. The
mechanisms make one release per call (StatDP's interface): the scalar output q[0] + Lap(b)
on D1 = [0], D2 = [1] (sensitivity 1), correct (b = 1/eps, true eps 1) and with the
planted bug b = 1/(2 eps) (true eps 2, claimed 1). StatDP's samples: ``event_iterations``
= ``detect_iterations`` = N per side for each eps0; userdp's: ``samples`` = N per side
(its 10% selection share included), on 2 worker processes as StatDP's pool uses.
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np

EPS = 1.0


def laplace_correct(queries, epsilon):
    return float(queries[0] + np.random.laplace(0.0, 1.0 / epsilon))


def laplace_half_noise(queries, epsilon):  # planted bug: true eps = 2 epsilon
    return float(queries[0] + np.random.laplace(0.0, 1.0 / (2 * epsilon)))


def _userdp_mech(fn):
    def mech(D, rng):  # one release per call, from userdp's stream
        return float(D[0] + rng.laplace(0.0, (1.0 if fn is laplace_correct else 0.5) / EPS))

    return mech


def run_statdp(fn, grid, N):
    from pystatdp import pystatdp

    t = time.perf_counter()
    res = pystatdp().detect_counterexample(
        fn,
        grid,
        default_kwargs={"epsilon": EPS},
        databases=(np.array([0.0]), np.array([1.0])),
        event_iterations=N,
        detect_iterations=N,
        cores=2,
        quiet=True,
        loglevel=logging.WARNING,
    )
    secs = time.perf_counter() - t
    rejected = [e for e, p, *_ in res if p < 0.05]
    return max(rejected, default=0.0), secs, [(float(e), round(p, 4)) for e, p, *_ in res]


def run_userdp(fn, N, seed=0):
    from userdp.audits import audit
    from userdp.reference.claims import PureDP

    t = time.perf_counter()
    r = audit(_userdp_mech(fn), ([0.0], [1.0]), PureDP(EPS), samples=N, seed=seed, workers=2)
    return r.epsilon_lower_bound, time.perf_counter() - t, r.verdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=100_000)
    N = ap.parse_args().samples
    grids = {
        laplace_correct: tuple(np.round(np.arange(0.70, 1.0001, 0.05), 2)),
        laplace_half_noise: tuple(np.round(np.arange(1.50, 2.0001, 0.05), 2)),
    }
    print(f"N = {N:,} outputs per side; claim eps = {EPS}")
    for fn, grid in grids.items():
        lb_s, t_s, ps = run_statdp(fn, grid, N)
        lb_u, t_u, verdict = run_userdp(fn, N)
        print(
            f"{fn.__name__}: StatDP largest eps0 rejected {lb_s:.2f} over {len(grid)} eps0 in {t_s:.1f} s "
            f"({t_s / len(grid):.1f} s per eps0); p-values {ps}"
        )
        print(f"{fn.__name__}: userdp eps_lb {lb_u:.4f} ({verdict}) in {t_u:.1f} s")


if __name__ == "__main__":
    main()
