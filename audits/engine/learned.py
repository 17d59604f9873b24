"""Vector projections and learned statistics: the directions, coordinate axes and non-linear
statistics learned on the selection share, whose thresholds ``rejection.choose_vector`` (and,
for the classifier of a scalar output, ``rejection.choose_continuous``) then chooses
(``rejection.py`` has the overview of the families of sets).

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
  - per-coordinate density-ratio features for undeclared noise (``_ratio_statistic``,
    "coordinate-ratio"), a classifier in the manner of DP-Sniper (Bichsel et al. 2021) whose
    features are shaped like each coordinate's log-likelihood ratio: for independent
    coordinates the privacy loss is a sum over coordinates, sum_j l_j(x_j), and for
    location noise with tails at least as heavy as Laplace's each l_j is a ramp, flat beyond
    the two sides' centres: (|x_j - m'_j| - |x_j - m_j|) / b_j = (|m_j - m'_j| / b_j)
    clip((x_j - c_j) / h_j, -1, 1), c_j the midpoint of the centres and h_j half their
    distance. The features are those ramps (centres: the two sides' medians on the
    selection share), and logistic regression of "came from D" on them learns the weights
    |m_j - m'_j| / b_j, so no family or scale need be declared. It finds 20 counts with
    Laplace(20) where one count's noise is 10x too small (loss 1.45), which the
    classifier above sees only through that one coordinate's spread (docs/audit.md);

The parameters learned here are functions of the selection share alone, so the sets they
define are fixed before the counting share is read (rejection.py, "Why a learned statistic
keeps the test valid").
"""

from __future__ import annotations

import warnings

import numpy as np

from userdp.audits.engine.thresholds import _classifier_features

__all__ = [
    "CLASSIFIER_RIDGE",
    "CLASSIFIER_STEPS",
    "SCALAR_FIT_MAX",
    "MONOTONE_RANGE",
    "ORTHANT_SIZES",
]


_MAX_AXES = 32  # coordinate axes tried as projections up to this dimension
# tests/planted/auditor.py plants "coordinate ratio off" by setting it False
RATIO_ON = True


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
    w = _logistic(phi, np.r_[np.ones(a.shape[0]), np.zeros(b.shape[0])])
    return None if w is None else (centre, spread, w)


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
    ratio = _ratio_statistic(a, b) if RATIO_ON and a.shape[1] >= 2 else None
    if ratio is not None:
        out.append(("coordinate-ratio", ratio))
    return out


def _logistic(phi: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """Ridge logistic regression of y on the features phi (n, k) and an intercept, by Newton's
    method (CLASSIFIER_RIDGE per output, CLASSIFIER_STEPS at most); the k weights (the
    intercept dropped: a threshold absorbs it), or None if the fit diverges."""
    phi = np.hstack([phi, np.ones((phi.shape[0], 1))])
    penalty = np.full(phi.shape[1], CLASSIFIER_RIDGE * phi.shape[0])
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
    return w[:-1]


def _ratio_statistic(a: np.ndarray, b: np.ndarray) -> tuple | None:
    """params (J, c, h, w) of "coordinate-ratio", s(x) = sum_{j in J} w_j clip((x_j - c_j) / h_j,
    -1, 1) (module docstring), fitted on the selection outputs a (first) and b (second) with
    every cell released: J the coordinates ``_axes`` tries (all of them up to d = 32), c_j the
    midpoint of the two sides' medians, h_j half their distance (at least 1e-6 of the pooled
    spread: a step), w the logistic weights. None when no coordinate varies."""
    J = _axes(a, b)
    m1, m2 = np.median(a[:, J], axis=0), np.median(b[:, J], axis=0)
    spread = np.vstack([a[:, J], b[:, J]]).std(axis=0)
    keep = np.isfinite(spread) & (spread > 0) & np.isfinite(m1) & np.isfinite(m2)
    if not keep.any():
        return None
    J, m1, m2, spread = J[keep], m1[keep], m2[keep], spread[keep]
    c = 0.5 * (m1 + m2)
    h = np.maximum(0.5 * np.abs(m1 - m2), 1e-6 * spread)
    x = np.vstack([a[:, J], b[:, J]])
    w = _logistic(np.clip((x - c) / h, -1.0, 1.0), np.r_[np.ones(a.shape[0]), np.zeros(b.shape[0])])
    if w is None or not np.any(w):
        return None
    return tuple(tuple(map(float, v)) for v in (J, c, h, w))


SCALAR_FIT_MAX = 10_000  # selection outputs per side the scalar classifier is fitted on (its 3
# weights need few; at 10^5 per side the fit cost more than the audit; measured:
# docs/performance.md, "audits/engine/learned.py")
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
