"""The statistics the checks of ``userdp validate`` share: the two-sample Kolmogorov-Smirnov distance
with its distribution-free DKW p-value, Bonferroni critical values, fixed random projections, the
sample excess kurtosis (which decides where a z test may run), the quantised sample counts, the
confidence interval of a spread ratio and the coordinates equal in every release (the structure
test). Holm's procedure is the engine's (``audits/engine/harness.py``, ``holm``).

``STRUCTURE_RTOL``: the tolerance of "equal" coordinates.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

__all__ = [
    "ks_distance",
    "ks_pvalue",
    "ks_threshold",
    "z_critical",
    "projections",
    "excess_kurtosis",
    "quantised",
    "ratio_interval",
    "STRUCTURE_RTOL",
    "close",
    "equal_pairs",
]


def ks_distance(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The two-sample KS distance sup_t |F_x(t) - F_y(t)| and where it is attained."""
    xs, ys = np.sort(x), np.sort(y)
    grid = np.concatenate([xs, ys])
    d = np.abs(np.searchsorted(xs, grid, side="right") / xs.size - np.searchsorted(ys, grid, side="right") / ys.size)
    i = int(np.argmax(d))
    return float(d[i]), float(grid[i])


def ks_pvalue(d: float, n: int, m: int) -> float:
    """P(KS distance >= d) for two samples of one law, sizes n and m: the DKW bound (run.py's docstring)."""
    return min(1.0, 4.0 * math.exp(-2.0 * d * d * n * m / (math.sqrt(n) + math.sqrt(m)) ** 2))


def ks_threshold(n: int, alpha: float, m: int | None = None) -> float:
    """The distance whose DKW p-value is alpha (equal sizes by default)."""
    m = n if m is None else m
    return math.sqrt(math.log(4.0 / alpha) * (math.sqrt(n) + math.sqrt(m)) ** 2 / (2.0 * n * m))


def z_critical(alpha: float, tests: int) -> float:
    """Two-sided Bonferroni critical value for ``tests`` tests at family level alpha."""
    return float(stats.norm.isf(alpha / (2 * max(1, tests))))


_PROJECTIONS = {}


def projections(k: int) -> np.ndarray:
    """Two fixed random unit directions in R^k (seeded by k): a joint difference shows in them."""
    if k not in _PROJECTIONS:
        g = np.random.default_rng([1729, k]).standard_normal((k, 2))
        _PROJECTIONS[k] = g / np.linalg.norm(g, axis=0)
    return _PROJECTIONS[k]


def excess_kurtosis(x: np.ndarray) -> float:
    """The sample excess kurtosis E[(x - mean)^4] / var^2 - 3 (0 for a constant)."""
    c = x - np.mean(x)
    v = float(np.mean(c * c))
    return float(np.mean(c**4)) / (v * v) - 3.0 if v > 0 else 0.0


def quantised(n: int, lo: int, hi: int) -> int:
    """n rounded DOWN to lo x a power of 2, within [lo, hi]: a count chosen from timings falls on a few
    values only, so that a run's sample sizes rarely change with the machine's load (the report gives
    them, for --samples and --audit-samples to reproduce a run exactly)."""
    if n >= hi:
        return hi
    k = lo
    while 2 * k <= n:
        k *= 2
    return min(hi, k)


def ratio_interval(ratio: float, lse: float, z: float) -> list:
    """The interval ratio x exp(+-z lse) of a ratio whose log has standard error lse."""
    if ratio <= 0:
        return [0.0, 0.0]
    return [ratio * math.exp(-z * lse), ratio * math.exp(z * lse)]


STRUCTURE_RTOL = 1e-9  # "equal" coordinates: |x_i - x_j| <= 1e-9 max(1, |x_i|) (rounding of a sum in
# another order is ~1e-15 relative; a coordinate with its own noise differs by O(1))


def close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise: a and b equal to ``STRUCTURE_RTOL``."""
    return np.abs(a - b) <= STRUCTURE_RTOL * np.maximum(1.0, np.abs(a))


def equal_pairs(X: np.ndarray) -> list[tuple[int, int]]:
    """Pairs (i, j), i < j, of non-constant coordinates equal (to ``STRUCTURE_RTOL``) in every row of X."""
    k = X.shape[1]
    if k < 2 or X.shape[0] < 2:
        return []
    head = X[: min(1000, X.shape[0])]
    varies = np.ptp(X, axis=0) > 0
    out = []
    for i in range(k - 1):
        if not varies[i]:
            continue
        same = np.all(close(head[:, i : i + 1], head[:, i + 1 :]), axis=0)
        for j in np.flatnonzero(same) + i + 1:
            if varies[j] and bool(np.all(close(X[:, i], X[:, j]))):
                out.append((i, int(j)))
    return out
