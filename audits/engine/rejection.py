"""Rejection sets and how one is chosen on the selection share (docs/design.md §6).

A rejection set S is an event on the output space. The audit counts how often M(D)
and M(D') land in S on the counting share; which S to count is decided here, from the
selection share only, so the counts stay independent of the choice.

- scalar outputs: thresholds {x >= t} and {x <= t} (both tails); and atom sets
  (``AtomSet``): the values that repeat on the selection share, which a continuous law never
  does (an exact value released with small probability, a clipped end, a rounding grid),
  ranked by their likelihood ratio, every prefix a candidate, as for discrete outputs. A
  cross-fit between the two halves of the selection share decides whether the atom sets or
  the thresholds go forward (``_atoms_win``). Laplace noise that releases the exact value
  with probability 1e-3 (infinite loss) hides in every threshold set: eps_lb ~0.98 against a
  claim of 1 at 10^5 per side; the atom set {the exact value} reaches ~2.9
  (tests/audits/test_audit_reach.py);
- vector outputs: a direction w learned on the selection share (Fisher's discriminant
  Sigma^{-1}(mu_1 - mu_2), the difference of means, and each coordinate axis for d <= 32,
  above that the 32 coordinates whose median moved or whose spread changed most), then
  thresholds on <w, x>; and thresholds on learned non-linear statistics
  (``StatisticThreshold``):
  - the likelihood-ratio statistic of a declared noise family (``noise_family``): for
    noise with density prop. to exp(-||z|| / b) the privacy loss of x is
    (||x - m'|| - ||x - m||) / b, m = E M(D), m' = E M(D'), so by Neyman-Pearson the sets
    {||x - m'|| - ||x - m|| >= t} are the most powerful; the audit estimates m and m' on
    the selection share (means for "l2laplace"; coordinate medians, the Laplace MLE, for
    "laplace", whose loss sum_j (|x_j - m'_j| - |x_j - m_j|) / b_j weights coordinate j by
    its scale b_j, also learned: the mean absolute deviation from the medians). Gaussian
    noise needs nothing new: its loss is linear, <x, m - m'> / sigma^2 + const, the
    difference-of-means direction above;
  - corner sets (joint sets, ``_orthant_statistics``): for the k coordinates whose medians
    moved most (k = 2, 3, 4, 8), s(x) = min_j (x_j - m'_j) / (m_j - m'_j), whose level sets
    are the orthants {every x_j beyond m'_j + t (m_j - m'_j)}: when independent coordinates
    (partitions, counts) all move, a Laplace loss is flat beyond each centre, so the corner
    at m holds the sum of the coordinates' losses at a large mass, which no projection does
    (two partitions moved by (2, 2) with Laplace(4): 0.95 with it, 0.70 without, at 5 x 10^4);
  - a classifier score for undeclared noise (and as a fallback when the declaration is
    wrong): logistic regression of "came from D" on the features (z, z^2, ||z||), z the
    output standardised on the pooled selection share, fitted by Newton's method with a
    small ridge. Features z^2 and ||z|| see what no projection can: a change of scale,
    one coordinate's noise scaled, the radial profile of L2-Laplace noise;
- discrete outputs (integer codes): the values ranked by their likelihood ratio on the
  selection share and every prefix of that ranking, i.e. single values and unions
  (the Neyman-Pearson sets, Ding et al. 2018); and, when the values are ordered (scalar
  numbers: counts, geometric noise), the threshold sets {x <= t} and {x >= t}
  (``ValueThreshold``). The two families compete on the same selection-share score for the
  k sets that reach the counting share, so m is unchanged. Thresholds matter where the
  likelihood ratio is flat: discrete Laplace noise has ratio e^eps on every x >= 1, so the
  noisy ranking of those values orders them at random and a prefix is an odd set such
  as {2, 20, 5, 3, -1}, while {x >= 1} takes all of them.

- multi-partition outputs (vector rows with cells not released, NaN here,
  ``sampling.py``): the directions and statistics are learned on the rows with every cell
  released and computed on all rows, NaN where a cell they read is missing; each set then
  also comes with "a cell it reads not released" added, and {every cell it reads released}
  and its complement are sets; and the unions of release patterns (``ReleasePatternSet``,
  "released in partitions 0 and 1") are value sets of the rows' patterns.

Each set is scored in both orderings of the pair ("first over second": p = Pr[M(D) in S],
q = Pr[M(D') in S], and the swap) with ``bounds.projected_bound``, or, for the trade-off
audit of a Gaussian-DP claim (``gdp=True``; scalar and vector outputs), with
``bounds.projected_mu_bound``.

Why a learned statistic keeps the test valid: its parameters (the centres m, m', the
classifier's weights and standardisation) are functions of the selection share alone, so
once they are fixed {s(x) >= t} is a fixed set, exactly like a threshold on a learned
direction, and the counting share counts it afresh. The statistics compete with the
directions for the k sets that reach the counting share; m (the multiplicity) is unchanged.
The same holds for atom sets (their values are read off the selection share), corner sets
and release patterns (harness.py, "Why the bound is valid").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import math
import warnings

import numpy as np
from scipy import special
from scipy.ndimage import uniform_filter1d

from userdp.audits.engine.bounds import projected_bound, projected_mu_bound
from userdp.audits.engine.ceiling import NOISE_FAMILIES
from userdp.audits.engine.report import capped_values
from userdp.audits.engine.sampling import NO_RELEASE_LABEL, released_cells, released_floats, released_rows

__all__ = [
    "Threshold",
    "StatisticThreshold",
    "ValueSet",
    "ValueThreshold",
    "AtomSet",
    "ReleasePatternSet",
    "Candidate",
    "choose_scalar",
    "choose_continuous",
    "choose_vector",
    "choose_discrete",
]

_GRID = 2048  # candidate thresholds per direction (quantiles of the pooled selection share)
_MAX_AXES = 32  # coordinate axes tried as projections up to this dimension
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

    def project(self, outputs: np.ndarray) -> np.ndarray:
        x = released_cells(outputs)  # (n, d), NaN: cell not released
        params = tuple(map(np.asarray, self.params))
        gaps = np.isnan(x)
        if not gaps.any():
            return STATISTICS[self.statistic](x, *params)
        used = params[0].astype(np.int64) if self.statistic == "orthant" else slice(None)
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
        return {
            "l2-distance-difference": "||x - m2||_2 - ||x - m1||_2",
            "l1-distance-difference": "||(x - m2) / b||_1 - ||(x - m1) / b||_1",
            "logistic-classifier": "<w, (z, z^2, ||z||)>",
        }[self.statistic]

    def describe(self) -> str:
        op = ">=" if self.tail == "upper" else "<="
        gap = " or a cell not released" if self.missing else ""
        return f"{{{self.formula()} {op} {self.t:.6g}{gap}}} ({self.statistic}, learned on the selection share)"

    def to_dict(self) -> dict:
        names = {
            "l2-distance-difference": ("m1", "m2"),
            "l1-distance-difference": ("m1", "m2", "b"),
            "logistic-classifier": ("centre", "spread", "w"),
            "orthant": ("J", "m2", "delta"),
        }[self.statistic]
        d = {
            "type": "statistic",
            "statistic": self.statistic,
            "formula": self.formula(),
            "params": {k: list(v) for k, v in zip(names, self.params)},
            "tail": self.tail,
            "t": self.t,
            "description": self.describe(),
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
}

# The likelihood-ratio statistic of each declared family: (statistic, centre estimator).
# Gaussian: the loss is linear in x; the difference-of-means direction already tests it.
_FAMILY_STATISTIC = {
    "l2laplace": ("l2-distance-difference", np.mean),
    "laplace": ("l1-distance-difference", np.median),
    "gaussian": None,
}

CLASSIFIER_RIDGE = 1e-3  # L2 penalty per output (features are standardised)
CLASSIFIER_STEPS = 25  # Newton steps at most; stops when the step is below 1e-6


def _fit_classifier(a: np.ndarray, b: np.ndarray):
    """(centre, spread, w): ridge logistic regression of "came from a" on the features of the
    pooled selection outputs a (label 1) and b (label 0), by Newton's method. A coordinate
    that never varies gets spread 1 (its features are 0 and the ridge keeps its weights at
    0); None when no coordinate varies (no classifier can separate the outputs)."""
    x = np.vstack([a, b])
    centre = x.mean(axis=0)
    spread = x.std(axis=0)
    if not np.all(np.isfinite(spread)) or not np.any(spread > 0):
        return None
    spread = np.where(spread > 0, spread, 1.0)
    phi = _classifier_features(x, centre, spread)
    phi = np.hstack([phi, np.ones((phi.shape[0], 1))])  # intercept (not kept: t absorbs it)
    y = np.r_[np.ones(a.shape[0]), np.zeros(b.shape[0])]
    lam = CLASSIFIER_RIDGE * x.shape[0]
    penalty = np.full(phi.shape[1], lam)
    penalty[-1] = 0.0
    w = np.zeros(phi.shape[1])
    for _ in range(CLASSIFIER_STEPS):
        p = 0.5 * (1.0 + np.tanh(0.5 * (phi @ w)))  # sigmoid, overflow-free
        grad = phi.T @ (p - y) + penalty * w
        hess = (phi * (p * (1 - p))[:, None]).T @ phi + np.diag(penalty)
        step = np.linalg.solve(hess + 1e-12 * np.eye(w.size), grad)
        w -= step
        if not np.all(np.isfinite(w)):
            return None
        if np.max(np.abs(step)) < 1e-6:
            break
    return centre, spread, w[:-1]


def _learned_statistics(a: np.ndarray, b: np.ndarray, noise_family: str | None) -> list[tuple[str, tuple]]:
    """(statistic, params) pairs learned on selection outputs a (first) and b (second)."""
    out = []
    spec = _FAMILY_STATISTIC.get(noise_family) if noise_family is not None else None
    if spec is not None:
        name, centre = spec
        m1, m2 = centre(a, axis=0), centre(b, axis=0)
        if np.all(np.isfinite(m1)) and np.all(np.isfinite(m2)):
            params = (tuple(map(float, m1)), tuple(map(float, m2)))
            if name == "l1-distance-difference":
                # Laplace noise of scale b_j on coordinate j: the log-likelihood ratio is
                # sum_j (|x_j - m2_j| - |x_j - m1_j|) / b_j, so each coordinate is weighted by 1/b_j
                # (the MLE of b_j: the mean absolute deviation from the median, pooled over both
                # sides). Unweighted, one coordinate with 10x less noise among 20 counts for 1/20
                # of the sum, and its loss is lost (tests/audits/test_audit_reach.py).
                b_j = 0.5 * (np.abs(a - m1).mean(axis=0) + np.abs(b - m2).mean(axis=0))
                params += (tuple(float(v) if v > 0 else 1.0 for v in b_j),)
            out.append((name, params))
    fit = _fit_classifier(a, b)
    if fit is not None:
        out.append(("logistic-classifier", tuple(tuple(map(float, v)) for v in fit)))
    return out


@dataclass(frozen=True)
class ValueSet:
    """A finite set of output values; ``codes`` index the audit's table of distinct outputs.
    The value ``None`` stands for "no release" (``sampling.NO_RELEASE``)."""

    values: tuple
    codes: tuple[int, ...] = field(repr=False, default=())

    def mask(self, codes: np.ndarray) -> np.ndarray:
        return np.isin(codes, np.asarray(self.codes, dtype=np.int64))

    def contains(self, outputs) -> np.ndarray:
        if any(isinstance(v, tuple) for v in self.values):  # rows: compared cell by cell, NaN = not released
            x = released_cells(outputs)
            gaps = np.isnan(x)
            out = np.zeros(x.shape[0], dtype=bool)
            for v in self.values:
                hit = gaps.all(axis=1) if v is None else ~gaps.all(axis=1)
                for j, c in enumerate(() if v is None else v):
                    hit &= gaps[:, j] if c is None else x[:, j] == c
                out |= hit
            return out
        rows, released = released_rows(outputs)  # (n, k), (n,)
        out = np.zeros(rows.shape[0], dtype=bool)
        for v in self.values:
            out |= ~released if v is None else released & np.all(rows == np.asarray(v), axis=1)
        return out

    def describe(self, limit: int = 8) -> str:
        shown = ", ".join(NO_RELEASE_LABEL if v is None else str(v) for v in self.values[:limit])
        more = f", ... ({len(self.values)} values)" if len(self.values) > limit else ""
        return "{" + shown + more + "}"

    def to_dict(self) -> dict:
        values = [NO_RELEASE_LABEL if v is None else _jsonable(v) for v in self.values]
        return {"type": "values", **capped_values(values), "description": self.describe()}


@dataclass(frozen=True)
class ValueThreshold:
    """{x >= t} (tail "upper") or {x <= t} (tail "lower") on ordered discrete outputs, with
    "no release" as a member when ``missing``; ``values`` and ``codes`` are the members among
    the audit's table of distinct outputs (``None`` = no release)."""

    tail: str
    t: float
    values: tuple = field(repr=False, default=())
    codes: tuple[int, ...] = field(repr=False, default=())
    missing: bool = False

    def mask(self, codes: np.ndarray) -> np.ndarray:
        return np.isin(codes, np.asarray(self.codes, dtype=np.int64))

    def contains(self, outputs) -> np.ndarray:
        return Threshold(self.tail, self.t, None, self.missing).contains(outputs)

    def describe(self) -> str:
        op = ">=" if self.tail == "upper" else "<="
        return f"{{x {op} {self.t:.6g}{' or no release' if self.missing else ''}}}"

    def to_dict(self) -> dict:
        d = {"type": "threshold", "tail": self.tail, "t": self.t, "description": self.describe()}
        if self.missing:
            d["no_release"] = True
        return d


@dataclass(frozen=True)
class ReleasePatternSet:
    """{x : the set of x's released cells is one of ``patterns``}, for a multi-partition release
    (``sampling.py``): each pattern lists the cells (partitions) released, e.g. ((0, 1),) is
    "released in both partitions 0 and 1, and no other". Chosen among the patterns' unions
    by their likelihood ratio on the selection share (``choose_vector``)."""

    patterns: tuple[tuple[int, ...], ...]

    @property
    def values(self) -> tuple:
        return self.patterns

    def project(self, outputs) -> np.ndarray:
        """Each output's pattern as an integer code: bit j set when cell j is released."""
        return _pattern_codes(~np.isnan(released_cells(outputs)))

    def mask(self, codes: np.ndarray) -> np.ndarray:
        return np.isin(codes, np.asarray([sum(1 << j for j in p) for p in self.patterns], dtype=np.int64))

    def contains(self, outputs) -> np.ndarray:
        return self.mask(self.project(outputs))

    def describe(self, limit: int = 8) -> str:
        shown = " or ".join("{" + ", ".join(map(str, p)) + "}" for p in self.patterns[:limit])
        more = f" or ... ({len(self.patterns)} patterns)" if len(self.patterns) > limit else ""
        return f"{{released cells are {shown}{more}}}"

    def to_dict(self) -> dict:
        return {
            "type": "release-pattern",
            **capped_values([list(p) for p in self.patterns]),
            "description": self.describe(),
        }


PATTERN_MAX_CELLS = 62  # release patterns are int64 bit masks


def _pattern_codes(released: np.ndarray) -> np.ndarray:
    """(n,) int64 bit masks of the released cells of (n, d) booleans, d <= PATTERN_MAX_CELLS."""
    return released.astype(np.int64) @ (np.int64(1) << np.arange(released.shape[1], dtype=np.int64))


def _pattern_candidates(a, b, n_count: int, alpha: float, delta: float, k: int) -> list:
    """The k best unions of release patterns (``ReleasePatternSet``): the value-set test of
    ``choose_discrete`` on each output's pattern of released cells."""
    codes_a, codes_b = _pattern_codes(~np.isnan(a)), _pattern_codes(~np.isnan(b))
    seen, inv = np.unique(np.r_[codes_a, codes_b], return_inverse=True)
    if seen.size < 2:
        return []
    d = a.shape[1]
    values = [tuple(j for j in range(d) if int(c) >> j & 1) for c in seen]
    n = codes_a.size
    out = []
    for c in choose_discrete(inv[:n], inv[n:], values, n_count, alpha, delta, k, ordered=False):
        out.append(replace(c, rejection_set=ReleasePatternSet(c.rejection_set.values)))
    return out


def _jsonable(v):
    if isinstance(v, tuple):
        return [_jsonable(u) for u in v]
    return v.item() if isinstance(v, np.generic) else v


@dataclass(frozen=True)
class AtomSet:
    """{x : x in values}: a finite set of output values of a CONTINUOUS output, tested by exact
    equality (``choose_continuous``, "Atoms"). A continuous law puts no mass on any finite set,
    so a value that repeats is an atom of the mechanism (an exact value released with positive
    probability, a clipped end, a rounded grid); "no release" (NaN) is never a member."""

    values: tuple[float, ...]

    def mask(self, x: np.ndarray) -> np.ndarray:
        """Membership of scalars x (NaN: no release, never a member)."""
        return np.isin(x, np.asarray(self.values, dtype=float))

    def contains(self, outputs) -> np.ndarray:
        return self.mask(released_floats(outputs))

    def describe(self, limit: int = 8) -> str:
        shown = ", ".join(f"{v:.17g}" for v in self.values[:limit])
        more = f", ... ({len(self.values)} values)" if len(self.values) > limit else ""
        return "{x in {" + shown + more + "}} (atoms: values that repeat, learned on the selection share)"

    def to_dict(self) -> dict:
        return {"type": "atoms", **capped_values([float(v) for v in self.values]), "description": self.describe()}


@dataclass(frozen=True)
class Candidate:
    """A rejection set with its ordering, its score and its selection-share counts."""

    rejection_set: Threshold | ValueSet
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


def choose_continuous(
    a: np.ndarray,
    b: np.ndarray,
    n_count: int,
    alpha: float,
    delta: float,
    k: int = 1,
    *,
    gdp: bool = False,
    noise_family: str | None = None,
) -> list[Candidate]:
    """Scalar outputs: the thresholds of ``choose_scalar`` and thresholds on the logistic
    classifier statistic s(x) = <w, (z, z^2, |z|)> fitted on the selection share.

    Thresholds are the likelihood-ratio sets only when the ratio is monotone in x (a shift of
    the location). When the neighbours change the *spread* (noise scaled by a private n, as
    in diffprivlib's ``tools.mean`` under add/remove-record, or a clipped output whose atoms
    move), the Neyman-Pearson sets are intervals {|x - c| <= r} or their complements, which no
    threshold contains; the quadratic statistic's level sets are exactly those. Both compete
    for the k sets on the selection-share score (the statistic is fitted on the first
    SCALAR_FIT_MAX selection outputs of each side, its thresholds chosen on all of them).
    Outputs with "no release" keep the thresholds alone (their NaN has no place in the
    classifier's features).

    Atoms: when some released value repeats on the selection share (``_atoms``), the atom
    sets (prefixes of the atoms' likelihood-ratio ranking, ``AtomSet``) are built too, and a
    cross-fit (``_atoms_win``) decides whether they or the sets above go forward (the atom
    sets first, then the others, up to k); the atom candidates' score is then the
    cross-fit's held-out score. Not for the trade-off audit (``gdp``)."""
    cands = _continuous_sets(a, b, n_count, alpha, delta, k, gdp=gdp, noise_family=noise_family)
    atoms = None if gdp else _atoms(a, b)
    if atoms is None or not ATOMS_ON:
        return cands
    won, score = _atoms_win(a, b, atoms, n_count, alpha, delta, noise_family)
    if not won:
        return cands
    found = [
        replace(c, score=min(c.score, score) if i else score)
        for i, c in enumerate(_best(_atom_families(a, b, atoms), a.shape[0], n_count, alpha, delta, k))
    ]
    return (found + cands)[:k]


def _continuous_sets(
    a, b, n_count: int, alpha: float, delta: float, k: int, *, gdp: bool = False, noise_family: str | None = None
) -> list[Candidate]:
    """The thresholds and the classifier statistic's thresholds (``choose_continuous``)."""
    cands = choose_scalar(a, b, n_count, alpha, delta, k, gdp=gdp, noise_family=noise_family)
    if np.isnan(a).any() or np.isnan(b).any():
        return cands
    fa, fb = a[:SCALAR_FIT_MAX, None], b[:SCALAR_FIT_MAX, None]  # i.i.d.: the first ones are a sample
    fit = _fit_classifier(fa, fb)
    if fit is not None and not _monotone(fit, np.r_[fa[:, 0], fb[:, 0]]):
        s = StatisticThreshold("logistic-classifier", tuple(tuple(map(float, v)) for v in fit), "upper", 0.0)
        for c in choose_scalar(s.project(a), s.project(b), n_count, alpha, delta, k, gdp=gdp):
            t = c.rejection_set
            cands.append(replace(c, rejection_set=replace(s, tail=t.tail, t=t.t)))
    cands.sort(key=lambda c: -c.score)
    return cands[:k]


# ------------------------------------------------------------------ atoms of continuous outputs
ATOMS_ON = True  # tests/planted/auditor.py plants "atoms off" by setting it False
ATOM_MAX = 100_000  # distinct repeated values kept (the most frequent): a rounded output has many


def _atoms(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """The released values that occur at least twice in the pooled selection share, ascending
    (None if there are none). Under a continuous law two outputs are equal with probability 0,
    so each is an atom of the mechanism: a value released with positive probability (an exact
    answer, a clipped end, a point of a rounding grid)."""
    x = np.concatenate([a, b])
    x = np.sort(x[~np.isnan(x)])
    eq = x[1:] == x[:-1]
    if not eq.any():
        return None
    values, counts = np.unique(x[1:][eq], return_counts=True)
    if values.size > ATOM_MAX:
        values = np.sort(values[np.argsort(-counts, kind="stable")[:ATOM_MAX]])
    return values


def _atom_codes(x: np.ndarray, atoms: np.ndarray) -> np.ndarray:
    """Index of each x among ``atoms``; ``atoms.size`` (the "rest" code) for every other x."""
    i = np.minimum(np.searchsorted(atoms, x), atoms.size - 1)
    return np.where(atoms[i] == x, i, atoms.size)


def _atom_families(a: np.ndarray, b: np.ndarray, atoms: np.ndarray) -> list:
    """``_discrete_families`` over the atoms: prefixes of their likelihood-ratio ranking on a
    (first) and b (second), both orderings; the outputs that are no atom belong to no set."""
    m = atoms.size
    ca = np.bincount(_atom_codes(a, atoms), minlength=m + 1)[:m].astype(float)
    cb = np.bincount(_atom_codes(b, atoms), minlength=m + 1)[:m].astype(float)
    seen = np.flatnonzero(ca + cb > 0)
    out = []
    for fos, (x, y) in ((True, (ca, cb)), (False, (cb, ca))):
        order = seen[np.argsort(-((x[seen] + 0.5) / (y[seen] + 0.5)), kind="stable")]
        out.append(
            (
                fos,
                lambda r, o=order: AtomSet(tuple(float(v) for v in atoms[o[: r + 1]])),
                np.cumsum(x[order]),
                np.cumsum(y[order]),
            )
        )
    return out


def _atoms_win(a, b, atoms, n_count: int, alpha: float, delta: float, noise_family) -> tuple[bool, float]:
    """(whether the atom sets beat the thresholds, the atoms' held-out score), by cross-fitting
    as in ``choose_discrete``: on each half of the selection share each family proposes its
    best set, and the other half scores both proposals with plain plug-in counts (no
    shrinkage: the proposals are fixed before that half is read, so there is no winner's
    curse to correct, and a zero count on the other side, which the Wilson shrinkage would
    inflate to ~2/n, is the whole signal of an atom). Each family proposes its best set in
    each ordering of the pair (the atoms of the two sides are two sets, and a half may hold
    one side's atoms only) and counts the larger held-out score, floored at 0 as the audit
    floors eps_lb. Reads the selection share only."""
    h = a.shape[0] // 2
    if h < 2:
        return False, -np.inf
    halves = ((a[:h], b[:h]), (a[h : 2 * h], b[h : 2 * h]))
    total = {"atoms": 0.0, "thresholds": 0.0}
    for (pa, pb), (sa, sb) in (halves, halves[::-1]):  # propose on one half, score on the other
        proposals = {
            "atoms": [c for fam in _atom_families(pa, pb, atoms) for c in _best([fam], h, n_count, alpha, delta, 1)],
            "thresholds": choose_scalar(pa, pb, n_count, alpha, delta, 8, noise_family=noise_family),
        }
        for name, found in proposals.items():
            best = 0.0  # as the audit reports max(eps_lb, 0): no evidence scores 0
            for fos in (True, False):  # each family's best set in each ordering of the pair
                c = next((c for c in found if c.first_over_second == fos), None)
                if c is None:
                    continue
                ka, kb = (int(np.count_nonzero(c.rejection_set.mask(x))) for x in (sa, sb))
                k1, k2 = (ka, kb) if fos else (kb, ka)
                best = max(
                    best,
                    float(
                        projected_bound(np.array([k1]), np.array([k2]), h, n_count, alpha, delta, z_sel=_MODEL_Z_SEL)[0]
                    ),
                )
            total[name] += best
    return bool(total["atoms"] > total["thresholds"]), total["atoms"] / 2


SCALAR_FIT_MAX = 10_000  # selection outputs per side the scalar classifier is fitted on (its 3
# weights need few; at 10^5 per side the fit cost 53 ms, more than the audit)
MONOTONE_RANGE = (0.005, 0.995)  # the quantiles of the selection outputs where _monotone looks


def _monotone(fit, x: np.ndarray) -> bool:
    """Whether the scalar classifier s(x) = w1 z + w2 z^2 + w3 |z| is monotone over the bulk of
    the selection outputs x (between the MONOTONE_RANGE quantiles); then its level sets are
    thresholds there, which ``choose_scalar`` already tries, and the statistic would add only a
    harder-to-read witness that differs from a threshold in the outer 1% (where a quadratic
    fitted to a location shift always turns). Its derivative w1 + 2 w2 z + w3 sign(z) is
    linear on each side of z = 0, so its signs at the ends of the range and on both sides of
    0 decide."""
    centre, spread, (w1, w2, w3) = fit[0][0], fit[1][0], fit[2]
    z = (np.quantile(x, MONOTONE_RANGE) - centre) / spread
    ends = [w1 + 2 * w2 * z[0] - w3 * np.sign(-z[0]), w1 + 2 * w2 * z[1] + w3 * np.sign(z[1])]
    slopes = np.array(ends + [w1 - w3, w1 + w3] if z[0] < 0 < z[1] else ends)
    return bool((slopes >= 0).all() or (slopes <= 0).all())


def _directions(a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    """Fisher's direction and the difference of means (a, b: rows with every cell released)."""
    d = a.shape[1]
    if a.shape[0] < 2 or b.shape[0] < 2:
        return []
    diff = a.mean(axis=0) - b.mean(axis=0)  # (d,)
    cov = 0.5 * (np.cov(a, rowvar=False).reshape(d, d) + np.cov(b, rowvar=False).reshape(d, d))
    ridge = 1e-9 * max(float(np.trace(cov)) / d, 1e-300)
    dirs = [np.linalg.solve(cov + ridge * np.eye(d), diff), diff]
    return [w / np.linalg.norm(w) for w in dirs if np.all(np.isfinite(w)) and np.linalg.norm(w) > 0]


def _column_stats(a: np.ndarray, b: np.ndarray):
    """Per coordinate: medians m1 (a) and m2 (b) and mean absolute deviations s1, s2 from them,
    over the released cells (NaN where a side released none)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a column with no released cell
        m1, m2 = np.nanmedian(a, axis=0), np.nanmedian(b, axis=0)
        s1, s2 = np.nanmean(np.abs(a - m1), axis=0), np.nanmean(np.abs(b - m2), axis=0)
    return m1, m2, s1, s2


def _axes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The coordinates whose axes are tried as projections: all of them up to d = _MAX_AXES;
    above, the _MAX_AXES / 2 with the largest shift of the median in units of the spread and
    the _MAX_AXES / 2 with the largest ratio of spreads |ln(s1 / s2)| (one coordinate with its
    own bug among hundreds: a shift, or noise scaled), chosen on the selection share."""
    d = a.shape[1]
    if d <= _MAX_AXES:
        return np.arange(d)
    m1, m2, s1, s2 = _column_stats(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.abs(m1 - m2) / (0.5 * (s1 + s2))
        spread = np.abs(np.log(s1 / s2))
    shift, spread = (np.where(np.isnan(v), -np.inf, v) for v in (shift, spread))
    half = _MAX_AXES // 2
    return np.union1d(np.argsort(-shift, kind="stable")[:half], np.argsort(-spread, kind="stable")[:half])


ORTHANT_SIZES = (2, 3, 4, 8)  # |J| of the corner sets tried: the coordinates with the largest shifts


def _orthant_statistics(a: np.ndarray, b: np.ndarray) -> list[tuple[str, tuple]]:
    """Corner sets around a learned point (``StatisticThreshold`` "orthant"): for J the k
    coordinates whose medians moved most in units of their spread (k in ORTHANT_SIZES),
    s(x) = min_{j in J} (x_j - m2_j) / delta_j, delta = m1 - m2 (medians of the two sides).

    Why: when the coordinates are independent (one partition each, one count each) and a
    user moves several of them, the privacy loss adds over coordinates, and for Laplace noise
    it is flat (= its maximum) beyond each side's centre, so the set where EVERY coordinate is
    beyond m1 has the whole loss at a large mass: two partitions with a (2, 2) shift and
    Laplace(4) each have loss 1, and the quadrant {x1 >= 2, x2 >= 2} has mass 0.25 against
    0.25 / e, while any single coordinate or projection reaches less. The level sets of s are
    those corners moved along the line from m2 through m1, which the threshold grid scans."""
    if a.shape[1] < 2:
        return []
    m1, m2, s1, s2 = _column_stats(a, b)
    delta = m1 - m2
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(delta) / (0.5 * (s1 + s2))  # inf: a deterministic shift
    ok = np.flatnonzero(np.isfinite(delta) & (delta != 0) & ~np.isnan(z))
    ranked = ok[np.argsort(-z[ok], kind="stable")]
    out = []
    for k in ORTHANT_SIZES:
        if k <= ranked.size:
            J = np.sort(ranked[:k])
            out.append(("orthant", (tuple(map(float, J)), tuple(map(float, m2[J])), tuple(map(float, delta[J])))))
    return out


def check_noise_family(noise_family) -> str | None:
    """None or one of ``ceiling.NOISE_FAMILIES``."""
    if noise_family is not None and noise_family not in NOISE_FAMILIES:
        raise ValueError(f"noise_family must be None or one of {NOISE_FAMILIES}, got {noise_family!r}")
    return noise_family


def choose_vector(
    a: np.ndarray,
    b: np.ndarray,
    n_count: int,
    alpha: float,
    delta: float,
    k: int = 1,
    *,
    gdp: bool = False,
    noise_family: str | None = None,
) -> list[Candidate]:
    """Learn directions and statistics on the selection share (a, b: (n, d)), then thresholds
    on each (``_vector_families``); ``noise_family`` adds that family's likelihood-ratio
    statistic. A multi-partition release (NaN: a cell not released) also gets the unions of
    release patterns (``ReleasePatternSet``: "released in both partitions", ...). Every
    family competes for the k sets on its selection-share score."""
    check_noise_family(noise_family)
    cands = [
        c
        for _, tmpl in _vector_families(a, b, noise_family)
        for c in _family_candidates(tmpl, a, b, n_count, alpha, delta, k, gdp, noise_family)
    ]
    if not gdp and a.shape[1] <= PATTERN_MAX_CELLS and (np.isnan(a).any() or np.isnan(b).any()):
        cands += _pattern_candidates(a, b, n_count, alpha, delta, k)  # which partitions were released
    cands.sort(key=lambda c: -c.score)
    return cands[:k]


def _vector_families(a: np.ndarray, b: np.ndarray, noise_family: str | None) -> list[tuple[tuple, object]]:
    """(key, set template) of every family learned on a, b: the directions (on the rows with
    every cell released), the axes, the learned statistics and the corner sets; a template
    is a Threshold (a projection) or a StatisticThreshold with t = 0, its threshold to be
    chosen. The key names the family."""
    d = a.shape[1]
    full_a, full_b = a[~np.isnan(a).any(axis=1)], b[~np.isnan(b).any(axis=1)]  # every cell released
    out = [
        (("direction", i), Threshold("upper", 0.0, tuple(map(float, w))))
        for i, w in enumerate(_directions(full_a, full_b))
    ]
    out += [(("axis", int(j)), Threshold("upper", 0.0, tuple(map(float, np.eye(d)[j])))) for j in _axes(a, b)]
    learned = _learned_statistics(full_a, full_b, noise_family) if min(full_a.shape[0], full_b.shape[0]) >= 2 else []
    out += [(("statistic", name), StatisticThreshold(name, params, "upper", 0.0)) for name, params in learned]
    out += [
        (("orthant", len(params[0])), StatisticThreshold(name, params, "upper", 0.0))
        for name, params in _orthant_statistics(a, b)
    ]
    return out


def _family_candidates(
    tmpl, a, b, n_count: int, alpha: float, delta: float, k: int, gdp: bool, noise_family: str | None
) -> list[Candidate]:
    """The k best thresholds of one family on a, b, as candidates of its set type."""
    if isinstance(tmpl, Threshold):
        w = np.asarray(tmpl.projection)
        return choose_scalar(
            project_cells(a, w),
            project_cells(b, w),
            n_count,
            alpha,
            delta,
            k,
            projection=tmpl.projection,
            gdp=gdp,
            noise_family=noise_family,
        )
    out = []
    for c in choose_scalar(tmpl.project(a), tmpl.project(b), n_count, alpha, delta, k, gdp=gdp):
        t = c.rejection_set
        out.append(replace(c, rejection_set=replace(tmpl, tail=t.tail, t=t.t, missing=t.missing)))
    return out


def _ordered(values: list) -> np.ndarray | None:
    """The codes of the released values, ascending in value, when those are ordered scalars
    (numbers); None otherwise (tuples of a vector output, or nothing released)."""
    released = [j for j, v in enumerate(values) if v is not None]
    if not released or not all(isinstance(values[j], (int, float, bool, np.number)) for j in released):
        return None
    num = np.array([float(values[j]) for j in released])
    return np.asarray(released, dtype=np.int64)[np.argsort(num, kind="stable")]


def choose_discrete(
    a: np.ndarray,
    b: np.ndarray,
    values: list,
    n_count: int,
    alpha: float,
    delta: float,
    k: int = 1,
    *,
    ordered: bool = True,
) -> list[Candidate]:
    """The k best prefixes of the likelihood-ratio ranking of the codes a, b (int arrays;
    values[c] = output), or, for ordered values, the k best thresholds {x <= t}, {x >= t} (t a
    value seen on the selection share) when the thresholds win the family comparison below;
    each set in both orderings of the pair.

    The comparison is cross-fitted: a set scored on the counts that chose it looks better than
    it is (the values whose ratio the noise inflated come first, and the best of many noisy
    scores is biased up), and the value sets, far more numerous, gain most from that. So the
    selection share is cut in two halves; on each, each family proposes its best set, and the
    other half scores the two proposals (one set each: no maximum, no bias). The family with
    the larger total over the two folds wins, and its candidates are then built on the whole
    selection share, as before. Every step reads the selection share only.

    ``ordered=False`` (output kind "categorical": labels whose order means nothing) keeps the
    value sets alone. "No release" (the value ``None``) is one more value for the value sets;
    each threshold also comes with it added ({x >= t or no release})."""
    m = len(values)
    value_sets = _discrete_families(a, b, values)
    ordered = _ordered(values) if ordered else None
    if ordered is None or a.shape[0] < 4:
        return _best(value_sets, a.shape[0], n_count, alpha, delta, k)
    count = lambda x: np.bincount(x, minlength=m)  # noqa: E731
    thresholds = _threshold_families(count(a), count(b), ordered, values)
    h = a.shape[0] // 2
    halves = ((a[:h], b[:h]), (a[h : 2 * h], b[h : 2 * h]))
    total = {"values": 0.0, "thresholds": 0.0}
    for (pa, pb), (sa, sb) in (halves, halves[::-1]):  # propose on one half, score on the other
        proposals = {
            "values": _discrete_families(pa, pb, values),
            "thresholds": _threshold_families(count(pa), count(pb), ordered, values),
        }
        for name, fams in proposals.items():
            c = _best(fams, h, n_count, alpha, delta, 1)[0]
            inside = c.rejection_set.mask
            ka, kb = int(np.count_nonzero(inside(sa))), int(np.count_nonzero(inside(sb)))
            k1, k2 = (ka, kb) if c.first_over_second else (kb, ka)
            total[name] += float(projected_bound(np.array([k1]), np.array([k2]), h, n_count, alpha, delta)[0])
    winner = thresholds if total["thresholds"] > total["values"] else value_sets
    return _best(winner, a.shape[0], n_count, alpha, delta, k)


def _discrete_families(a, b, values: list) -> list:
    """(first over second, set builder from a position r, k1, k2) for the prefixes of the
    likelihood-ratio ranking of the codes a (first) and b (second), values[c] = output."""
    m = len(values)
    ca = np.bincount(a, minlength=m).astype(float)  # (C,)
    cb = np.bincount(b, minlength=m).astype(float)
    seen = np.flatnonzero(ca + cb > 0)
    out = []
    for fos, (x, y) in ((True, (ca, cb)), (False, (cb, ca))):
        order = seen[np.argsort(-((x[seen] + 0.5) / (y[seen] + 0.5)), kind="stable")]
        out.append((fos, lambda r, o=order: _value_set(values, o[: r + 1]), np.cumsum(x[order]), np.cumsum(y[order])))
    return out


def _threshold_families(ca, cb, ordered: np.ndarray, values: list) -> list:
    """As ``_discrete_families`` for {x <= t} and {x >= t}, t each value with a count, and,
    when "no release" (the value None) occurs, the same sets with it added."""
    at = np.flatnonzero((ca + cb)[ordered] > 0)
    none = [j for j, v in enumerate(values) if v is None]
    with_missing = (False, True) if none and ca[none[0]] + cb[none[0]] > 0 else (False,)
    out = []
    for missing in with_missing:
        for fos, (x, y) in ((True, (ca, cb)), (False, (cb, ca))):
            xo, yo = x[ordered].astype(float), y[ordered].astype(float)
            x0, y0 = (float(x[none[0]]), float(y[none[0]])) if missing else (0.0, 0.0)
            out.append(
                (
                    fos,
                    lambda r, o=ordered, at=at, ms=missing: _value_threshold(values, "lower", o, at[r], ms),
                    x0 + np.cumsum(xo)[at],
                    y0 + np.cumsum(yo)[at],
                )
            )  # {x <= t}
            out.append(
                (
                    fos,
                    lambda r, o=ordered, at=at, ms=missing: _value_threshold(values, "upper", o, at[r], ms),
                    x0 + np.cumsum(xo[::-1])[::-1][at],
                    y0 + np.cumsum(yo[::-1])[::-1][at],
                )
            )  # {x >= t}
    return out


def _best(families: list, n_sel: int, n_count: int, alpha: float, delta: float, k: int) -> list[Candidate]:
    """The k best sets of ``families`` (see ``_discrete_families``) by their projected bound."""
    k1 = np.concatenate([f[2] for f in families])
    k2 = np.concatenate([f[3] for f in families])
    ends = np.cumsum([f[2].size for f in families])
    scores = projected_bound(k1, k2, n_sel, n_count, alpha, delta)
    out = []
    for i in _top(scores, k):
        j = int(np.searchsorted(ends, i, side="right"))
        fos, build = families[j][:2]
        out.append(
            Candidate(build(int(i) - (int(ends[j - 1]) if j else 0)), fos, float(scores[i]), (int(k1[i]), int(k2[i])))
        )
    return out


def _value_set(values: list, codes: np.ndarray) -> ValueSet:
    return ValueSet(tuple(values[c] for c in codes), tuple(int(c) for c in codes))


def _value_threshold(values: list, tail: str, ordered: np.ndarray, p: int, missing: bool = False) -> ValueThreshold:
    """{x <= values[ordered[p]]} ("lower") or {x >= values[ordered[p]]} ("upper"), with "no
    release" added when ``missing``."""
    codes = list(ordered[: p + 1] if tail == "lower" else ordered[p:])
    if missing:
        codes.append(values.index(None))
    return ValueThreshold(
        tail, float(values[ordered[p]]), tuple(values[c] for c in codes), tuple(int(c) for c in codes), missing
    )
