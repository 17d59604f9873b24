"""Thresholds, and how the best ones are chosen on the selection share (``choose_scalar``;
``rejection.py`` has the overview of the families of sets).

A threshold set is {x >= t} or {x <= t} (both tails) on a scalar output (``Threshold``), on a
projection <w, x> of a vector output (``Threshold`` with a projection) or on a statistic s(x)
learned on the selection share (``StatisticThreshold``, whose formulas are ``STATISTICS``;
the statistics are learned in ``learned.py``). The candidate values of t are quantiles of the
pooled selection share on a logit-spaced grid (``_grid_ranks``), and each family's score curve
is smoothed before its best points are taken (``_smooth``). A declared noise family replaces
the selection share's counts with the counts the fitted family predicts (``_model_counts``).

Each set is scored in both orderings of the pair ("first over second": p = Pr[M(D) in S],
q = Pr[M(D') in S], and the swap) with ``bounds.projected_bound``, or, for the trade-off
audit of a Gaussian-DP claim (``gdp=True``; scalar and vector outputs), with
``bounds.projected_mu_bound``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special
from scipy.ndimage import uniform_filter1d

from userdp.audits.engine.bounds import projected_bound, projected_mu_bound
from userdp.audits.engine.sampling import released_cells, released_floats

__all__ = [
    "Threshold",
    "StatisticThreshold",
    "STATISTICS",
    "Candidate",
    "project_cells",
    "choose_scalar",
]


_GRID = 2048  # candidate thresholds per direction (quantiles of the pooled selection share)
_MODEL_Z_SEL = 1e-6  # selection shrinkage (Wilson sds) of model-predicted counts: none to speak of


@dataclass(frozen=True)
class Threshold:
    """{x : <w, x> >= t} (tail "upper") or {x : <w, x> <= t} (tail "lower"); w=None: scalar x.

    ``missing``: the set also holds "no release" (``sampling.NO_RELEASE``, coded as NaN): for
    a scalar output, the output itself; for a projection of a multi-partition release, any
    cell the projection uses (w_j != 0) that was not released (``project_cells``). Without
    it, "no release" is never a member."""

    tail: str
    t: float
    projection: tuple[float, ...] | None = None
    missing: bool = False

    def project(self, outputs: np.ndarray) -> np.ndarray:
        if self.projection is None:
            return released_floats(outputs)  # NaN = no release
        return project_cells(released_cells(outputs), np.asarray(self.projection))

    def mask(self, x: np.ndarray) -> np.ndarray:
        """Membership of already-projected scalars x (NaN: no release)."""
        inside = x >= self.t if self.tail == "upper" else x <= self.t
        return inside | np.isnan(x) if self.missing else inside

    def contains(self, outputs) -> np.ndarray:
        return self.mask(self.project(outputs))

    def describe(self) -> str:
        lhs = "x" if self.projection is None else "<w, x>"
        op = ">=" if self.tail == "upper" else "<="
        if math.isinf(self.t):  # the ends of the families with "no release" (choose_scalar)
            every_x = (self.t < 0) == (self.tail == "upper")
            return {
                (True, False): "{released}",
                (True, True): "{every output}",
                (False, True): "{no release}",
                (False, False): "{}",
            }[every_x, self.missing]
        return f"{{{lhs} {op} {self.t:.6g}{' or no release' if self.missing else ''}}}"

    def to_dict(self) -> dict:
        d = {"type": "threshold", "tail": self.tail, "t": self.t, "description": self.describe()}
        if self.projection is not None:
            d["projection"] = list(self.projection)
        if self.missing:
            d["no_release"] = True
        return d


@dataclass(frozen=True)
class StatisticThreshold:
    """{x : s(x) >= t} (tail "upper") or {x : s(x) <= t} (tail "lower"), s a statistic whose
    parameters were learned on the selection share (see ``STATISTICS``):

    - "l2-distance-difference": s(x) = ||x - m2||_2 - ||x - m1||_2, params (m1, m2);
    - "l1-distance-difference": s(x) = ||(x - m2) / b||_1 - ||(x - m1) / b||_1, params (m1, m2)
      or (m1, m2, b) (b: per-coordinate scales, default 1);
    - "logistic-classifier": s(x) = <w, (z, z^2, ||z||_2)>, z = (x - centre) / spread,
      params (centre, spread, w);
    - "coordinate-ratio": s(x) = sum_{j in J} w_j clip((x_j - c_j) / h_j, -1, 1), params (J, c, h,
      w): per-coordinate log-likelihood-ratio features and their logistic weights (learned.py);
    - "orthant": s(x) = min_{j in J} (x_j - m2_j) / delta_j, params (J, m2_J, delta_J): {s >= t}
      is the corner set {x_j >= m2_j + t delta_j for every j in J} (<= where delta_j < 0),
      t = 1 its corner at m1 = m2 + delta; {s <= t} is its complement.
    m1 estimates E M(first) (or its median), m2 that of M(second): s is large on the first
    side's outputs. ``missing``: as ``Threshold``'s; the statistic of an output with an
    unreleased cell among those it reads is NaN ("no release").
    """

    statistic: str
    params: tuple[tuple[float, ...], ...]
    tail: str
    t: float
    missing: bool = False
    origin: str = "learned on the selection share"  # or the declared noise model (model_sets.py)

    def project(self, outputs: np.ndarray) -> np.ndarray:
        x = released_cells(outputs)  # (n, d), NaN: cell not released
        params = tuple(map(np.asarray, self.params))
        gaps = np.isnan(x)
        if not gaps.any():
            return STATISTICS[self.statistic](x, *params)
        used = params[0].astype(np.int64) if self.statistic in ("orthant", "coordinate-ratio") else slice(None)
        out = STATISTICS[self.statistic](np.where(gaps, 0.0, x), *params)
        out[gaps[:, used].any(axis=1)] = np.nan
        return out

    def mask(self, x: np.ndarray) -> np.ndarray:
        """Membership of already-computed statistics x (NaN: no release)."""
        inside = x >= self.t if self.tail == "upper" else x <= self.t
        return inside | np.isnan(x) if self.missing else inside

    def contains(self, outputs) -> np.ndarray:
        return self.mask(self.project(outputs))

    def formula(self) -> str:
        if self.statistic == "orthant":
            return "min_{j in J} (x_j - m2_j) / delta_j, J = {" + ", ".join(str(int(j)) for j in self.params[0]) + "}"
        if self.statistic == "coordinate-ratio":
            return f"sum_j w_j clip((x_j - c_j) / h_j, -1, 1) over {len(self.params[0])} coordinates"
        return {
            "l2-distance-difference": "||x - m2||_2 - ||x - m1||_2",
            "l1-distance-difference": "||(x - m2) / b||_1 - ||(x - m1) / b||_1",
            "logistic-classifier": "<w, (z, z^2, ||z||)>",
        }[self.statistic]

    def describe(self) -> str:
        op = ">=" if self.tail == "upper" else "<="
        gap = " or a cell not released" if self.missing else ""
        return f"{{{self.formula()} {op} {self.t:.6g}{gap}}} ({self.statistic}, {self.origin})"

    def to_dict(self) -> dict:
        names = {
            "l2-distance-difference": ("m1", "m2"),
            "l1-distance-difference": ("m1", "m2", "b"),
            "logistic-classifier": ("centre", "spread", "w"),
            "orthant": ("J", "m2", "delta"),
            "coordinate-ratio": ("J", "c", "h", "w"),
        }[self.statistic]
        d = {
            "type": "statistic",
            "statistic": self.statistic,
            "formula": self.formula(),
            "params": {k: list(v) for k, v in zip(names, self.params)},
            "tail": self.tail,
            "t": self.t,
            "description": self.describe(),
            "origin": self.origin,
        }
        if self.missing:
            d["no_release"] = True
        return d


def project_cells(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """<w, x> of each row of x (n, d); NaN where a cell with w_j != 0 is NaN (not released)."""
    gaps = np.isnan(x)
    if not gaps.any():
        return x @ w
    out = np.where(gaps, 0.0, x) @ w
    out[(gaps & (w != 0)).any(axis=1)] = np.nan
    return out


def _l2_difference(x, m1, m2):
    return np.linalg.norm(x - m2, axis=1) - np.linalg.norm(x - m1, axis=1)


def _l1_difference(x, m1, m2, b=None):
    b = 1.0 if b is None else b
    return (np.abs(x - m2) / b).sum(axis=1) - (np.abs(x - m1) / b).sum(axis=1)


def _orthant(x, J, m2, delta):
    return np.min((x[:, J.astype(np.int64)] - m2) / delta, axis=1)


def _coordinate_ratio(x, J, c, h, w):
    return np.clip((x[:, J.astype(np.int64)] - c) / h, -1.0, 1.0) @ w


def _classifier_features(x, centre, spread):
    z = (x - centre) / spread
    return np.hstack([z, z * z, np.linalg.norm(z, axis=1, keepdims=True)])


def _classifier_score(x, centre, spread, w):
    return _classifier_features(x, centre, spread) @ w


STATISTICS = {
    "l2-distance-difference": _l2_difference,
    "l1-distance-difference": _l1_difference,
    "logistic-classifier": _classifier_score,
    "orthant": _orthant,
    "coordinate-ratio": _coordinate_ratio,
}


@dataclass(frozen=True)
class Candidate:
    """A rejection set with its ordering, its score and its selection-share counts."""

    rejection_set: object  # Threshold, StatisticThreshold, or a set of value_sets.py or patterns.py
    first_over_second: bool
    score: float
    selection_counts: tuple[int, int]


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    k = min(k, scores.size)
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    idx = np.argpartition(-scores, k - 1)[:k]
    return idx[np.argsort(-scores[idx])]


SMOOTH = 0.02  # fraction of the (logit-spaced) grid averaged when ranking thresholds


def _grid_ranks(N: int) -> np.ndarray:
    """Ranks of the pooled sample at logit-spaced masses: dense in both tails, where
    small-mass sets live, and one point per ~1/_GRID of mass in the middle. Repeated
    ranks are kept, so an atom keeps as many grid points as its mass earns."""
    lim = np.log(N)  # logit(1/N) ~ -ln N
    u = 1.0 / (1.0 + np.exp(-np.linspace(-lim, lim, _GRID)))
    return np.clip(np.round(u * (N - 1)).astype(np.int64), 0, N - 1)


def _smooth(scores: np.ndarray) -> np.ndarray:
    """Moving average of each family's score curve over SMOOTH of its grid points.

    The selection-share score is a noisy curve; averaging a window before taking the
    argmax stops the choice chasing noise across a flat optimum. (Ranking only.)
    """
    w = max(1, int(SMOOTH * scores.shape[1]))
    if w <= 1:
        return scores
    finite = np.where(np.isfinite(scores), scores, -1e6)
    return uniform_filter1d(finite, size=w, axis=1, mode="nearest")


def _model_counts(a: np.ndarray, b: np.ndarray, grid: np.ndarray, family: str):
    """Expected counts n P(X >= t), n P(X <= t) of a and b at each threshold t under the
    declared location-scale family fitted on the selection share: Gaussian (means, pooled
    standard deviation) or Laplace (medians, pooled mean absolute deviation from them, the
    MLE). In d = 1 the L2-Laplace law is the Laplace law."""
    n = a.shape[0]
    if family == "gaussian":
        la, lb = a.mean(), b.mean()
        s = math.sqrt(0.5 * (a.var(ddof=1) + b.var(ddof=1)))
        sf = lambda t, m: special.ndtr((m - t) / s)  # noqa: E731
    else:
        la, lb = np.median(a), np.median(b)
        s = 0.5 * (np.mean(np.abs(a - la)) + np.mean(np.abs(b - lb)))
        sf = lambda t, m: np.where(  # noqa: E731
            t >= m,
            0.5 * np.exp(-(t - m) / s),  # noqa: E731
            1.0 - 0.5 * np.exp(-(m - t) / s),
        )
    if not s > 0:
        return None
    ge_a, ge_b = n * sf(grid, la), n * sf(grid, lb)
    return ge_a, ge_b, n - ge_a, n - ge_b


def choose_scalar(
    a: np.ndarray,
    b: np.ndarray,
    n_count: int,
    alpha: float,
    delta: float,
    k: int = 1,
    projection=None,
    *,
    gdp: bool = False,
    noise_family: str | None = None,
) -> list[Candidate]:
    """Best k thresholds on scalars a (first) and b (second), both tails, both orderings;
    scored for eps_lb, or for mu_lb when ``gdp`` (then ``delta`` is not used).

    With a declared ``noise_family`` (the outputs are a location plus noise of that family)
    the thresholds are scored with the counts the fitted family predicts (``_model_counts``)
    instead of the selection share's own counts (for a projection of a vector output, only
    when the family is Gaussian, the one family closed under projections): in the far tail, where the (eps, delta)
    optimum of Gaussian noise at small delta lies, a handful of selection hits makes the
    empirical score a noisy curve whose argmax chases luck. The choice still reads the
    selection share only, so the test stays valid whatever the declaration; a wrong one
    costs power. The scores reported are then the model's.

    "No release" (NaN here, ``sampling.NO_RELEASE`` from the mechanism) is in no threshold
    set; when some output is "no release" each set also comes with it added ({x >= t or no
    release}), and t = -inf, +inf give {released} and {no release} themselves. A declared
    noise family does not describe "no release", so its counts are then not used."""
    n = a.shape[0]
    ra, rb = a[~np.isnan(a)], b[~np.isnan(b)]  # released outputs (NaN: no release)
    na, nb = n - ra.size, n - rb.size  # "no release" counts
    sa, sb = np.sort(ra), np.sort(rb)
    pooled = np.sort(np.concatenate([sa, sb]), kind="stable")  # merges two sorted runs
    grid = pooled[_grid_ranks(pooled.size)] if pooled.size else pooled
    if na or nb:  # t = -inf / +inf: {released} and {no release} as ends of the families below
        grid = np.concatenate([[-np.inf], grid, [np.inf]])
    ge_a = sa.size - np.searchsorted(sa, grid, "left")  # (G,) counts of released a >= t
    ge_b = sb.size - np.searchsorted(sb, grid, "left")
    le_a = np.searchsorted(sa, grid, "right")  # (G,) counts of released a <= t
    le_b = np.searchsorted(sb, grid, "right")
    # a projection of i.i.d. Gaussian noise is Gaussian; of Laplace noise it is not
    fits = noise_family is not None and (projection is None or noise_family == "gaussian") and not (na or nb)
    model = _model_counts(a, b, grid, noise_family) if fits else None
    counted = [(ge_a, ge_b), (le_a, le_b)] + ([(ge_a + na, ge_b + nb), (le_a + na, le_b + nb)] if na or nb else [])
    predicted = counted if model is None else [(model[0], model[1]), (model[2], model[3])]
    shapes = [("upper", False), ("lower", False), ("upper", True), ("lower", True)][: len(counted)]  # (tail, missing)
    families = [(tail, fos, missing) for tail, missing in shapes for fos in (True, False)]
    k1 = np.concatenate([x if fos else y for (x, y) in predicted for fos in (True, False)])
    k2 = np.concatenate([y if fos else x for (x, y) in predicted for fos in (True, False)])
    seen = (
        np.concatenate([x if fos else y for (x, y) in counted for fos in (True, False)]),
        np.concatenate([y if fos else x for (x, y) in counted for fos in (True, False)]),
    )
    # Model counts carry no selection noise: no shrinkage on the selection share (z_sel ~ 0),
    # only the counting share's own Wilson interval; empirical counts keep the default shrinkage.
    z = {"z_sel": _MODEL_Z_SEL} if model is not None else {}
    scores = (
        projected_mu_bound(k1, k2, n, n_count, alpha, **z)
        if gdp
        else projected_bound(k1, k2, n, n_count, alpha, delta, **z)
    )
    ranked = _smooth(scores.reshape(len(families), grid.size)).reshape(-1)
    out = []
    for i in _top(ranked, k):
        tail, fos, missing = families[i // grid.size]
        t = float(grid[i % grid.size])
        out.append(
            Candidate(
                Threshold(tail, t, projection, missing), fos, float(scores[i]), (int(seen[0][i]), int(seen[1][i]))
            )
        )  # the observed counts
    return out
