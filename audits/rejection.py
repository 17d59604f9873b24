"""Rejection sets and how one is chosen on the selection share (DESIGN §6).

A rejection set S is an event on the output space. The audit counts how often M(D)
and M(D') land in S on the counting share; which S to count is decided here, from the
selection share only, so the counts stay independent of the choice.

- scalar outputs: thresholds {x >= t} and {x <= t} (both tails);
- vector outputs: a direction w learned on the selection share (Fisher's discriminant
  Sigma^{-1}(mu_1 - mu_2), the difference of means, and each coordinate axis for d <= 32),
  then thresholds on <w, x>; and thresholds on two learned non-linear statistics
  (``StatisticThreshold``, issue 8 item 4):
  - the likelihood-ratio statistic of a declared noise family (``noise_family``): for
    noise with density prop. to exp(-||z|| / b) the privacy loss of x is
    (||x - m'|| - ||x - m||) / b, m = E M(D), m' = E M(D'), so by Neyman-Pearson the sets
    {||x - m'|| - ||x - m|| >= t} are the most powerful; the audit estimates m and m' on
    the selection share (means for "l2laplace", coordinate medians, the Laplace MLE, for
    "laplace" with the L1 norm). Gaussian noise needs nothing new: its loss is linear,
    <x, m - m'> / sigma^2 + const, the difference-of-means direction above;
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

Each set is scored in both orderings of the pair ("first over second": p = Pr[M(D) in S],
q = Pr[M(D') in S], and the swap) with ``bounds.projected_bound``, or, for the trade-off
audit of a Gaussian-DP claim (``gdp=True``; scalar and vector outputs), with
``bounds.projected_mu_bound``.

Why a learned statistic keeps the test valid: its parameters (the centres m, m', the
classifier's weights and standardisation) are functions of the selection share alone, so
once they are fixed {s(x) >= t} is a fixed set, exactly like a threshold on a learned
direction, and the counting share counts it afresh. The statistics compete with the
directions for the k sets that reach the counting share; m (the multiplicity) is unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import math

import numpy as np
from scipy import special
from scipy.ndimage import uniform_filter1d

from .bounds import projected_bound, projected_mu_bound
from .ceiling import NOISE_FAMILIES
from .sampling import NO_RELEASE_LABEL, released_floats, released_rows

__all__ = ["Threshold", "StatisticThreshold", "ValueSet", "ValueThreshold", "Candidate", "choose_scalar",
           "choose_continuous", "choose_vector", "choose_discrete"]

_GRID = 2048          # candidate thresholds per direction (quantiles of the pooled selection share)
_MAX_AXES = 32        # coordinate axes tried as projections up to this dimension
_MODEL_Z_SEL = 1e-6   # selection shrinkage (Wilson sds) of model-predicted counts: none to speak of


@dataclass(frozen=True)
class Threshold:
    """{x : <w, x> >= t} (tail "upper") or {x : <w, x> <= t} (tail "lower"); w=None: scalar x.

    ``missing``: the set also holds "no release" (``sampling.NO_RELEASE``; scalar outputs
    only, where the audit codes it as NaN). Without it, "no release" is never a member."""

    tail: str
    t: float
    projection: tuple[float, ...] | None = None
    missing: bool = False

    def project(self, outputs: np.ndarray) -> np.ndarray:
        if self.projection is None:
            return released_floats(outputs)                       # NaN = no release
        x = np.asarray(outputs, dtype=float)
        return x.reshape(x.shape[0], -1) @ np.asarray(self.projection)

    def mask(self, x: np.ndarray) -> np.ndarray:
        """Membership of already-projected scalars x (NaN: no release)."""
        inside = x >= self.t if self.tail == "upper" else x <= self.t
        return inside | np.isnan(x) if self.missing else inside

    def contains(self, outputs) -> np.ndarray:
        return self.mask(self.project(outputs))

    def describe(self) -> str:
        lhs = "x" if self.projection is None else "<w, x>"
        op = ">=" if self.tail == "upper" else "<="
        if math.isinf(self.t):                      # the ends of the families with "no release" (choose_scalar)
            every_x = (self.t < 0) == (self.tail == "upper")
            return {(True, False): "{released}", (True, True): "{every output}",
                    (False, True): "{no release}", (False, False): "{}"}[every_x, self.missing]
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
    - "l1-distance-difference": s(x) = ||x - m2||_1 - ||x - m1||_1, params (m1, m2);
    - "logistic-classifier": s(x) = <w, (z, z^2, ||z||_2)>, z = (x - centre) / spread,
      params (centre, spread, w).
    m1 estimates E M(first), m2 E M(second): s is large on the first side's outputs.
    """

    statistic: str
    params: tuple[tuple[float, ...], ...]
    tail: str
    t: float

    def project(self, outputs: np.ndarray) -> np.ndarray:
        x = np.asarray(outputs, dtype=float)
        return STATISTICS[self.statistic](x.reshape(x.shape[0], -1), *map(np.asarray, self.params))

    def mask(self, x: np.ndarray) -> np.ndarray:
        """Membership of already-computed statistics x."""
        return x >= self.t if self.tail == "upper" else x <= self.t

    def contains(self, outputs) -> np.ndarray:
        return self.mask(self.project(outputs))

    def formula(self) -> str:
        return {"l2-distance-difference": "||x - m2||_2 - ||x - m1||_2",
                "l1-distance-difference": "||x - m2||_1 - ||x - m1||_1",
                "logistic-classifier": "<w, (z, z^2, ||z||)>"}[self.statistic]

    def describe(self) -> str:
        op = ">=" if self.tail == "upper" else "<="
        return f"{{{self.formula()} {op} {self.t:.6g}}} ({self.statistic}, learned on the selection share)"

    def to_dict(self) -> dict:
        names = {"l2-distance-difference": ("m1", "m2"), "l1-distance-difference": ("m1", "m2"),
                 "logistic-classifier": ("centre", "spread", "w")}[self.statistic]
        return {"type": "statistic", "statistic": self.statistic, "formula": self.formula(),
                "params": {k: list(v) for k, v in zip(names, self.params)},
                "tail": self.tail, "t": self.t, "description": self.describe()}


def _l2_difference(x, m1, m2):
    return np.linalg.norm(x - m2, axis=1) - np.linalg.norm(x - m1, axis=1)


def _l1_difference(x, m1, m2):
    return np.abs(x - m2).sum(axis=1) - np.abs(x - m1).sum(axis=1)


def _classifier_features(x, centre, spread):
    z = (x - centre) / spread
    return np.hstack([z, z * z, np.linalg.norm(z, axis=1, keepdims=True)])


def _classifier_score(x, centre, spread, w):
    return _classifier_features(x, centre, spread) @ w


STATISTICS = {"l2-distance-difference": _l2_difference, "l1-distance-difference": _l1_difference,
              "logistic-classifier": _classifier_score}

# The likelihood-ratio statistic of each declared family: (statistic, centre estimator).
# Gaussian: the loss is linear in x; the difference-of-means direction already tests it.
_FAMILY_STATISTIC = {"l2laplace": ("l2-distance-difference", np.mean),
                     "laplace": ("l1-distance-difference", np.median),
                     "gaussian": None}

CLASSIFIER_RIDGE = 1e-3       # L2 penalty per output (features are standardised)
CLASSIFIER_STEPS = 25         # Newton steps at most; stops when the step is below 1e-6


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
    phi = np.hstack([phi, np.ones((phi.shape[0], 1))])              # intercept (not kept: t absorbs it)
    y = np.r_[np.ones(a.shape[0]), np.zeros(b.shape[0])]
    lam = CLASSIFIER_RIDGE * x.shape[0]
    penalty = np.full(phi.shape[1], lam)
    penalty[-1] = 0.0
    w = np.zeros(phi.shape[1])
    for _ in range(CLASSIFIER_STEPS):
        p = 0.5 * (1.0 + np.tanh(0.5 * (phi @ w)))                  # sigmoid, overflow-free
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
            out.append((name, (tuple(map(float, m1)), tuple(map(float, m2)))))
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
        rows, released = released_rows(outputs)                  # (n, k), (n,)
        out = np.zeros(rows.shape[0], dtype=bool)
        for v in self.values:
            out |= ~released if v is None else released & np.all(rows == np.asarray(v), axis=1)
        return out

    def describe(self, limit: int = 8) -> str:
        shown = ", ".join(NO_RELEASE_LABEL if v is None else str(v) for v in self.values[:limit])
        more = f", ... ({len(self.values)} values)" if len(self.values) > limit else ""
        return "{" + shown + more + "}"

    def to_dict(self) -> dict:
        return {"type": "values", "values": [NO_RELEASE_LABEL if v is None else _jsonable(v) for v in self.values],
                "description": self.describe()}


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


def _jsonable(v):
    if isinstance(v, tuple):
        return [_jsonable(u) for u in v]
    return v.item() if isinstance(v, np.generic) else v


@dataclass(frozen=True)
class Candidate:
    """A rejection set with its ordering, its score and its selection-share counts."""

    rejection_set: Threshold | ValueSet
    first_over_second: bool
    score: float
    selection_counts: tuple[int, int]


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    k = min(k, scores.size)
    idx = np.argpartition(-scores, k - 1)[:k]
    return idx[np.argsort(-scores[idx])]


SMOOTH = 0.02  # fraction of the (logit-spaced) grid averaged when ranking thresholds


def _grid_ranks(N: int) -> np.ndarray:
    """Ranks of the pooled sample at logit-spaced masses: dense in both tails, where
    small-mass sets live, and one point per ~1/_GRID of mass in the middle. Repeated
    ranks are kept, so an atom keeps as many grid points as its mass earns."""
    lim = np.log(N)                                   # logit(1/N) ~ -ln N
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
        sf = lambda t, m: special.ndtr((m - t) / s)                                  # noqa: E731
    else:
        la, lb = np.median(a), np.median(b)
        s = 0.5 * (np.mean(np.abs(a - la)) + np.mean(np.abs(b - lb)))
        sf = lambda t, m: np.where(t >= m, 0.5 * np.exp(-(t - m) / s),              # noqa: E731
                                   1.0 - 0.5 * np.exp(-(m - t) / s))
    if not s > 0:
        return None
    ge_a, ge_b = n * sf(grid, la), n * sf(grid, lb)
    return ge_a, ge_b, n - ge_a, n - ge_b


def choose_scalar(a: np.ndarray, b: np.ndarray, n_count: int, alpha: float, delta: float,
                  k: int = 1, projection=None, *, gdp: bool = False,
                  noise_family: str | None = None) -> list[Candidate]:
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
    ra, rb = a[~np.isnan(a)], b[~np.isnan(b)]                       # released outputs (NaN: no release)
    na, nb = n - ra.size, n - rb.size                                # "no release" counts
    sa, sb = np.sort(ra), np.sort(rb)
    pooled = np.sort(np.concatenate([sa, sb]), kind="stable")     # merges two sorted runs
    grid = pooled[_grid_ranks(pooled.size)] if pooled.size else pooled
    if na or nb:    # t = -inf / +inf: {released} and {no release} as ends of the families below
        grid = np.concatenate([[-np.inf], grid, [np.inf]])
    ge_a = sa.size - np.searchsorted(sa, grid, "left")               # (G,) counts of released a >= t
    ge_b = sb.size - np.searchsorted(sb, grid, "left")
    le_a = np.searchsorted(sa, grid, "right")                        # (G,) counts of released a <= t
    le_b = np.searchsorted(sb, grid, "right")
    # a projection of i.i.d. Gaussian noise is Gaussian; of Laplace noise it is not
    fits = noise_family is not None and (projection is None or noise_family == "gaussian") and not (na or nb)
    model = _model_counts(a, b, grid, noise_family) if fits else None
    counted = [(ge_a, ge_b), (le_a, le_b)] + ([(ge_a + na, ge_b + nb), (le_a + na, le_b + nb)] if na or nb else [])
    predicted = counted if model is None else [(model[0], model[1]), (model[2], model[3])]
    shapes = [("upper", False), ("lower", False), ("upper", True), ("lower", True)][:len(counted)]   # (tail, missing)
    families = [(tail, fos, missing) for tail, missing in shapes for fos in (True, False)]
    k1 = np.concatenate([x if fos else y for (x, y) in predicted for fos in (True, False)])
    k2 = np.concatenate([y if fos else x for (x, y) in predicted for fos in (True, False)])
    seen = (np.concatenate([x if fos else y for (x, y) in counted for fos in (True, False)]),
            np.concatenate([y if fos else x for (x, y) in counted for fos in (True, False)]))
    # Model counts carry no selection noise: no shrinkage on the selection share (z_sel ~ 0),
    # only the counting share's own Wilson interval; empirical counts keep the default shrinkage.
    z = {"z_sel": _MODEL_Z_SEL} if model is not None else {}
    scores = (projected_mu_bound(k1, k2, n, n_count, alpha, **z) if gdp
              else projected_bound(k1, k2, n, n_count, alpha, delta, **z))
    ranked = _smooth(scores.reshape(len(families), grid.size)).reshape(-1)
    out = []
    for i in _top(ranked, k):
        tail, fos, missing = families[i // grid.size]
        t = float(grid[i % grid.size])
        out.append(Candidate(Threshold(tail, t, projection, missing), fos, float(scores[i]),
                             (int(seen[0][i]), int(seen[1][i]))))                 # the observed counts
    return out


def choose_continuous(a: np.ndarray, b: np.ndarray, n_count: int, alpha: float, delta: float,
                      k: int = 1, *, gdp: bool = False, noise_family: str | None = None) -> list[Candidate]:
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
    classifier's features)."""
    cands = choose_scalar(a, b, n_count, alpha, delta, k, gdp=gdp, noise_family=noise_family)
    if np.isnan(a).any() or np.isnan(b).any():
        return cands
    fa, fb = a[:SCALAR_FIT_MAX, None], b[:SCALAR_FIT_MAX, None]     # i.i.d.: the first ones are a sample
    fit = _fit_classifier(fa, fb)
    if fit is not None and not _monotone(fit, np.r_[fa[:, 0], fb[:, 0]]):
        s = StatisticThreshold("logistic-classifier", tuple(tuple(map(float, v)) for v in fit), "upper", 0.0)
        for c in choose_scalar(s.project(a), s.project(b), n_count, alpha, delta, k, gdp=gdp):
            t = c.rejection_set
            cands.append(replace(c, rejection_set=replace(s, tail=t.tail, t=t.t)))
    cands.sort(key=lambda c: -c.score)
    return cands[:k]


SCALAR_FIT_MAX = 10_000           # selection outputs per side the scalar classifier is fitted on (its 3
                                  # weights need few; at 10^5 per side the fit cost 53 ms, more than the audit)
MONOTONE_RANGE = (0.005, 0.995)   # the quantiles of the selection outputs where _monotone looks


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
    """Fisher's direction, the difference of means, and the axes (d <= 32)."""
    d = a.shape[1]
    diff = a.mean(axis=0) - b.mean(axis=0)                            # (d,)
    cov = 0.5 * (np.cov(a, rowvar=False).reshape(d, d) + np.cov(b, rowvar=False).reshape(d, d))
    ridge = 1e-9 * max(float(np.trace(cov)) / d, 1e-300)
    dirs = [np.linalg.solve(cov + ridge * np.eye(d), diff), diff]
    if d <= _MAX_AXES:
        dirs.extend(np.eye(d))
    return [w / np.linalg.norm(w) for w in dirs if np.all(np.isfinite(w)) and np.linalg.norm(w) > 0]


def check_noise_family(noise_family) -> str | None:
    """None or one of ``ceiling.NOISE_FAMILIES``."""
    if noise_family is not None and noise_family not in NOISE_FAMILIES:
        raise ValueError(f"noise_family must be None or one of {NOISE_FAMILIES}, got {noise_family!r}")
    return noise_family


def choose_vector(a: np.ndarray, b: np.ndarray, n_count: int, alpha: float, delta: float,
                  k: int = 1, *, gdp: bool = False, noise_family: str | None = None) -> list[Candidate]:
    """Learn directions and statistics on the selection share (a, b: (n, d)), then thresholds
    on each; ``noise_family`` adds that family's likelihood-ratio statistic."""
    check_noise_family(noise_family)
    cands = []
    for w in _directions(a, b):
        cands += choose_scalar(a @ w, b @ w, n_count, alpha, delta, k, projection=tuple(map(float, w)), gdp=gdp,
                               noise_family=noise_family)
    for name, params in _learned_statistics(a, b, noise_family):
        s = StatisticThreshold(name, params, "upper", 0.0)
        for c in choose_scalar(s.project(a), s.project(b), n_count, alpha, delta, k, gdp=gdp):
            t = c.rejection_set
            cands.append(replace(c, rejection_set=replace(s, tail=t.tail, t=t.t)))
    cands.sort(key=lambda c: -c.score)
    return cands[:k]


def _ordered(values: list) -> np.ndarray | None:
    """The codes of the released values, ascending in value, when those are ordered scalars
    (numbers); None otherwise (tuples of a vector output, or nothing released)."""
    released = [j for j, v in enumerate(values) if v is not None]
    if not released or not all(isinstance(values[j], (int, float, bool, np.number)) for j in released):
        return None
    num = np.array([float(values[j]) for j in released])
    return np.asarray(released, dtype=np.int64)[np.argsort(num, kind="stable")]


def choose_discrete(a: np.ndarray, b: np.ndarray, values: list, n_count: int, alpha: float,
                    delta: float, k: int = 1, *, ordered: bool = True) -> list[Candidate]:
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
    count = lambda x: np.bincount(x, minlength=m)                                             # noqa: E731
    thresholds = _threshold_families(count(a), count(b), ordered, values)
    h = a.shape[0] // 2
    halves = ((a[:h], b[:h]), (a[h:2 * h], b[h:2 * h]))
    total = {"values": 0.0, "thresholds": 0.0}
    for (pa, pb), (sa, sb) in (halves, halves[::-1]):                  # propose on one half, score on the other
        proposals = {"values": _discrete_families(pa, pb, values),
                     "thresholds": _threshold_families(count(pa), count(pb), ordered, values)}
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
    ca = np.bincount(a, minlength=m).astype(float)                   # (C,)
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
            out.append((fos, lambda r, o=ordered, at=at, ms=missing: _value_threshold(values, "lower", o, at[r], ms),
                        x0 + np.cumsum(xo)[at], y0 + np.cumsum(yo)[at]))                           # {x <= t}
            out.append((fos, lambda r, o=ordered, at=at, ms=missing: _value_threshold(values, "upper", o, at[r], ms),
                        x0 + np.cumsum(xo[::-1])[::-1][at], y0 + np.cumsum(yo[::-1])[::-1][at]))   # {x >= t}
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
        out.append(Candidate(build(int(i) - (int(ends[j - 1]) if j else 0)), fos, float(scores[i]),
                             (int(k1[i]), int(k2[i]))))
    return out


def _value_set(values: list, codes: np.ndarray) -> ValueSet:
    return ValueSet(tuple(values[c] for c in codes), tuple(int(c) for c in codes))


def _value_threshold(values: list, tail: str, ordered: np.ndarray, p: int, missing: bool = False) -> ValueThreshold:
    """{x <= values[ordered[p]]} ("lower") or {x >= values[ordered[p]]} ("upper"), with "no
    release" added when ``missing``."""
    codes = list(ordered[: p + 1] if tail == "lower" else ordered[p:])
    if missing:
        codes.append(values.index(None))
    return ValueThreshold(tail, float(values[ordered[p]]), tuple(values[c] for c in codes),
                          tuple(int(c) for c in codes), missing)
