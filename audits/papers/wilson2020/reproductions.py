"""Reproduction ``wilson2020-bound``: the bias-variance trade-off in the contribution bound L0
(Wilson et al. 2020, spec §11 claims C1-C3 made quantitative; docs/papers/wilson2020.md).

Setting: COUNT over 20 public partitions, Linf = 1, Laplace, eps = 1. 400 users; user l contributes
one record to each of P_l distinct partitions, P_l heavy-tailed (1 + Zipf-like, capped at 20), seed
2020. For each L0 the exact squared error summed over partitions is

    MSE(L0) = sum_p [ bias_p^2 + sum_{l in p} q_l (1 - q_l) + 2 (L0 / eps)^2 ],  q_l = min(1, L0 / P_l),

(bias_p = E[count_p] - count_p from ``expected_statistic``; the sampling variance: each user keeps
partition p independently of the other users with probability q_l; the Laplace variance 2 b^2,
b = L0 Linf / eps). Claims: the bias falls and the noise rises with L0, the MSE is minimised at an
interior L0 (neither 1 nor the largest P_l), and the Monte Carlo error of ``mechanism`` matches the
closed form (normal intervals).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from userdp.reference import wilson2020 as W
from userdp.reference.data import UserDataset

from userdp.audits.engine.registry import register_reproduction
from userdp.audits.engine.verdicts import ERROR, POWER, claim, decide, exact, normal

__all__ = ["dataset", "exact_mse", "reproduce_bound"]

K, M, SEED, EPS = 20, 400, 2020, 1.0
L0S = (1, 2, 3, 4, 6, 8, 12, 16, 20)
MC_TOLERANCE = 0.15
# mse / closed form has coefficient of variation <= 1 here (a sum of 20 squared errors: measured
# 0.3-0.5); each of the 9 cells bounds it on both sides at ERROR / 18, with power 0.9 overall:
RUNS = math.ceil(((norm.isf(ERROR / (2 * len(L0S))) + norm.isf((1 - POWER ** (1 / len(L0S))) / 2)) / MC_TOLERANCE) ** 2)


def dataset(m: int = M, k: int = K, seed: int = SEED) -> UserDataset:
    """m users, user l in P_l = min(k, ceil(1 / U^0.8)) distinct partitions of 0..k-1 (one record each)."""
    g = np.random.default_rng(seed)
    P = np.minimum(k, np.ceil(1.0 / g.uniform(size=m) ** 0.8)).astype(int)
    parts = [g.choice(k, size=p, replace=False) for p in P]
    return UserDataset.from_arrays(
        np.ones(int(P.sum())), np.repeat(np.arange(m), P), partition_ids=np.concatenate(parts)
    )


def exact_mse(D: UserDataset, L0: int, eps: float = EPS) -> dict:
    """Squared bias, sampling variance and noise variance, summed over the K public partitions."""
    pub = list(range(K))
    truth = W.statistic(D, pub, "count")
    bias = W.expected_statistic(D, pub, "count", L0, 1) - truth
    P = np.bincount(D.user_ids)  # partitions of each user (one record each)
    q = np.minimum(1.0, L0 / P)[D.user_ids]  # (n,): the record's partition kept
    samp = float(np.sum(q * (1 - q)))
    noise = K * 2 * (L0 / eps) ** 2
    return {
        "bias2": float(np.sum(bias**2)),
        "sampling": samp,
        "noise": noise,
        "mse": float(np.sum(bias**2)) + samp + noise,
    }


def reproduce_bound(plot=None, quick: bool = False, progress=None) -> dict:
    """Squared error of COUNT over 20 public partitions vs the bound L0 (bias vs noise)."""
    D = dataset()
    pub = list(range(K))
    truth = W.statistic(D, pub, "count")
    rng = np.random.default_rng(SEED)
    rows = []
    for i, L0 in enumerate(L0S, 1):
        row = {"L0": L0, **exact_mse(D, L0)}
        err = ((W.mechanism(D, pub, "count", L0, 1, EPS, rng, size=RUNS) - truth) ** 2).sum(axis=1)
        row["mc_mse"], row["mc_se"] = float(err.mean()), float(err.std(ddof=1) / math.sqrt(RUNS))
        rows.append(row)
        if progress is not None:
            progress(i, len(L0S), f"L0 = {L0}")
    best = min(rows, key=lambda r: r["mse"])
    claims = decide(
        [
            claim(
                "the bias of the bounded count falls as L0 grows (fewer partitions dropped)",
                exact(
                    "max over L0 steps of bias2(L0 next) - bias2(L0)",
                    max(b["bias2"] - a["bias2"] for a, b in zip(rows, rows[1:])),
                    below=0.0,
                ),
            ),
            claim(
                "the noise grows as L0 grows (L1 sensitivity L0 Linf)",
                exact(
                    "min over L0 steps of noise(next) - noise",
                    min(b["noise"] - a["noise"] for a, b in zip(rows, rows[1:])),
                    above=0.0,
                ),
            ),
            claim(
                "the error is minimised at an interior bound: neither L0 = 1 nor L0 = max P_l",
                [
                    exact("mse(L0 = 1) / min mse", rows[0]["mse"] / best["mse"], above=1.0, strict=True),
                    exact("mse(L0 = 20) / min mse", rows[-1]["mse"] / best["mse"], above=1.0, strict=True),
                ],
                evidence=f"the minimum at L0 = {best['L0']}",
            ),
            claim(
                f"the closed form matches {RUNS} releases of the mechanism (within {MC_TOLERANCE:.0%})",
                [
                    normal(
                        f"L0 = {r['L0']}: mc / exact",
                        r["mc_mse"] / r["mse"],
                        r["mc_se"] / r["mse"],
                        above=1 - MC_TOLERANCE,
                        below=1 + MC_TOLERANCE,
                        n=RUNS,
                    )
                    for r in rows
                ],
            ),
        ]
    )
    return {
        "table": rows,
        "claims": claims,
        "setup": f"{M} users over {K} public partitions, P_l = min({K}, ceil(U^-0.8)), seed {SEED}; COUNT, Linf = 1, "
        f"Laplace, eps = {EPS:g}; mse exact (closed form), mc_mse the mean of {RUNS} releases"
        + ("; --quick is the full run (it takes seconds)" if quick else ""),
    }


register_reproduction("wilson2020-bound", reproduce_bound)
