"""The statistical ceiling of an audit, and its efficiency against it (docs/design.md §6).

An audit's eps_lb can be low for three reasons: the claim is loose, no test can see the
loss at this sample size, or the audit is weak. Tightness (eps_lb / eps) mixes all three.
The ceiling separates them: it is the bound a PERFECT test would reach on the same pair,
with the same samples and confidence. A perfect test knows the best rejection set in
advance, so it spends no samples on selection and tests one hypothesis:

    ceiling = max over sets S of  ln((p_lo(n P_S) - delta) / q_hi(n Q_S)),

where P_S = Pr[M(D) in S], Q_S = Pr[M(D') in S] are EXACT, n is the audit's samples per
side, and p_lo / q_hi are the one-sided Clopper-Pearson bounds at level alpha/2 each
(alpha = 1 - confidence), evaluated at the expected counts n P_S, n Q_S (a plug-in: the
expectation of the bound at a fixed set differs from it by O(1/count); ``tests/audits/
test_ceiling.py`` measures the gap by simulation). For a Gaussian-DP claim the same plug-in
gives the mu ceiling, Phi^-1(1 - FPR_hi) - Phi^-1(FNR_hi) with FPR = Q_S, FNR = 1 - P_S.
efficiency = eps_lb / ceiling (or mu_lb / mu ceiling).

Only the Neyman-Pearson sets {x : L(x) >= c} (L the privacy-loss function ln p_D / p_D')
need to be searched: for every size P_S they have the smallest Q_S, and the plug-in bound
is increasing in P_S and decreasing in Q_S. The sets are exact where the loss has a
closed form and by Monte Carlo elsewhere:

- scalar Laplace(b) or Gaussian(sigma) noise, and i.i.d. Gaussian noise in any dimension
  (the loss depends on x only through <x, shift>, a 1-D Gaussian with mean shift ||shift||_2),
  and i.i.d. Laplace noise whose shift has one nonzero coordinate: thresholds on that
  coordinate, P and Q from the closed-form survival functions;
- L2-Laplace noise (density prop. to exp(-||z||_2 / b)) in d >= 2, and i.i.d. Laplace
  with a shift on several coordinates: N draws X ~ M(D); P(c) = #{L >= c} / N and
  Q(c) = (1/N) sum_{L_i >= c} e^{-L_i} (importance weighting: dP_D'/dP_D = e^{-L},
  exact in expectation). The standard error of the ceiling is estimated from 8 batches.

The entry declares its noise with ``NoiseModel`` (``AuditSetup.noise``): the release is
statistic(D) + Z with Z from ``family`` at ``scale(D)``. The ceiling is taken over all the
entry's candidate pairs (the perfect test also knows the best pair).

Estimated ceilings (``fit_noise``, ``estimated_ceiling``). Without a declaration, a release
of independent coordinates with Laplace or Gaussian noise still has a ceiling, and it can be
estimated from outputs: per coordinate j and side, the location (Laplace: the median, its
MLE; Gaussian: the mean) and one scale shared by the two sides (Laplace: the mean absolute
deviation from the side's median; Gaussian: the pooled standard deviation). The fit is
tested before it is used: the outputs of each side are split in two halves; the first half
fits, and on the second half each coordinate's residuals (x_j - location) / scale are tested
against the standard law with Kolmogorov-Smirnov (2 d tests per family, Bonferroni), and
the coordinates' pairwise rank correlations (Spearman, normal approximation; d (d - 1) / 2
tests, Bonferroni).
Each family is tested at FIT_LEVEL / 2 (both together at FIT_LEVEL); a family that fails
is not used, and when both fail (uniform noise, a mixture, a change of scale between the
sides, correlated coordinates) nothing is estimated. The test half's residuals use
parameters fitted on the other half, so they are independent of the test; the fitted law
is still off the true one by its O(1 / sqrt(n)) estimation error, which the KS test at
FIT_DRAWS outputs does not resolve (its false-refusal rate is measured in
``tests/audits/test_ceiling.py``). Then, as for a declaration, the ceiling of the fitted
model: each coordinate divided by its scale (the privacy loss is invariant under that
bijection) is i.i.d. noise of scale 1 moved by (location_first - location_second) / scale,
with the locations and scales refitted on all the draws. It is an estimate (its error is
that of the locations), reported as such and never used for a verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from scipy import stats
from scipy.special import ndtr, ndtri

from userdp.reference._checks import check_delta, check_finite_array, check_int, check_positive, check_real

__all__ = [
    "NOISE_FAMILIES",
    "NoiseModel",
    "Ceiling",
    "ceiling",
    "plugin_epsilon_bound",
    "plugin_mu_bound",
    "FIT_DRAWS",
    "FIT_LEVEL",
    "fit_noise",
    "estimated_ceiling",
]

NOISE_FAMILIES = ("laplace", "gaussian", "l2laplace")
MC_DRAWS = 4_000_000  # Monte Carlo draws of the privacy-loss variable (8 batches)
MC_BATCHES = 8
MC_SEED = 20231  # fixed: the ceiling is a number, not a random variable
_GRID = 4001  # sets on the 1-D closed-form grid before refinement
FIT_DRAWS = 20_000  # outputs per side an estimated ceiling is fitted on, at most
FIT_MIN = 10_000  # and at least: below, the fit's tests cannot tell uniform noise from Gaussian
FIT_LEVEL = 0.01  # family-wise level of the goodness-of-fit tests of the two families together
FIT_FAMILIES = ("laplace", "gaussian")
FIT_SHARE = 0.75  # of the fit's outputs that fit the parameters; the rest test the fit
FIT_Z = 4.0  # standard errors of the fitted parameters allowed for in the KS test (_fit_slack)


@dataclass(frozen=True)
class NoiseModel:
    """The release is ``statistic(D) + Z``, Z from ``family`` with parameter ``scale(D)``.

    family: "laplace" (i.i.d. Laplace(0, scale) per coordinate), "gaussian" (i.i.d.
        N(0, scale^2) per coordinate), "l2laplace" (density prop. to exp(-||z||_2 / scale)).
    statistic: the noise-free statistic stage, dataset -> float or (d,) array.
    scale: a positive float, or dataset -> float when it is computed from public parts of D.
    """

    family: str
    statistic: Callable[[Any], Any]
    scale: Any

    def __post_init__(self):
        if self.family not in NOISE_FAMILIES:
            raise ValueError(f"noise family must be one of {NOISE_FAMILIES}, got {self.family!r}")
        if not callable(self.statistic):
            raise TypeError(
                f"noise statistic must be callable as statistic(dataset), got {type(self.statistic).__name__}"
            )
        if not callable(self.scale):
            check_positive(self.scale, "noise scale")

    def locate(self, dataset) -> tuple[np.ndarray, float]:
        """(statistic(D) as a (d,) array, the noise scale at D)."""
        value = self.statistic(dataset)
        try:
            loc = np.atleast_1d(np.asarray(value, dtype=float))
        except (TypeError, ValueError):
            raise TypeError(f"noise statistic must return real numbers on this dataset, got {value!r:.80}") from None
        if loc.ndim != 1 or not np.all(np.isfinite(loc)):
            raise ValueError(
                f"noise statistic must return a finite scalar or (d,) vector on this dataset, got {loc!r:.80}"
            )
        s = self.scale(dataset) if callable(self.scale) else self.scale
        return loc, check_positive(s, "noise scale")


def _check_pairs(pairs) -> list:
    if pairs is None or isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__iter__"):
        raise TypeError(f"pairs must be a list of pairs (objects with .first and .second), got {type(pairs).__name__}")
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs must hold at least one pair")
    for i, p in enumerate(pairs):
        if not (hasattr(p, "first") and hasattr(p, "second")):
            raise TypeError(f"pairs[{i}] must have .first and .second, got {type(p).__name__}")
    return pairs


@dataclass(frozen=True)
class Ceiling:
    """The perfect test's plug-in bounds on the entry's best pair."""

    epsilon: float  # eps ceiling (of the primary claim's eps, delta test)
    mu: float | None  # mu ceiling, for a Gaussian-DP claim
    pair_index: int  # the pair where the eps ceiling is reached
    method: str  # "closed form" or "Monte Carlo, N draws (seed)"
    standard_error: float  # of the eps ceiling (0 for closed forms)

    def to_dict(self) -> dict:
        return {
            "epsilon": self.epsilon,
            "mu": self.mu,
            "pair_index": self.pair_index,
            "method": self.method,
            "standard_error": self.standard_error,
        }


# ------------------------------------------------------------------ the plug-in bounds
def _cp_lower(k, n: int, a: float) -> np.ndarray:
    """One-sided Clopper-Pearson lower bound at level a, for real-valued (expected) counts k."""
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        lo = stats.beta.ppf(a, np.maximum(k, 1e-300), n - k + 1.0)
    return np.where(k > 0, lo, 0.0)


def _cp_upper(k, n: int, a: float) -> np.ndarray:
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        hi = stats.beta.ppf(1.0 - a, k + 1.0, np.maximum(n - k, 1e-300))
    return np.where(k < n, hi, 1.0)


def _check_level(alpha, name: str) -> float:
    a = check_real(alpha, name)
    if not 0.0 < a < 1.0:
        raise ValueError(f"{name} must lie in (0, 1), got {a!r}")
    return a


def _check_pq(P, Q, n, alpha):
    """Probabilities P, Q (same shape, in [0, 1]), n >= 1 samples, alpha in (0, 1)."""
    P, Q = check_finite_array(P, "P"), check_finite_array(Q, "Q")
    if P.shape != Q.shape:
        raise ValueError(f"P and Q must have the same shape, got {P.shape} and {Q.shape}")
    for name, x in (("P", P), ("Q", Q)):
        if x.size and (x.min() < 0.0 or x.max() > 1.0):
            raise ValueError(f"{name} must hold probabilities in [0, 1], got range [{x.min()!r}, {x.max()!r}]")
    return P, Q, check_int(n, "n", lo=1, hi=2**62), _check_level(alpha, "alpha")


def plugin_epsilon_bound(P, Q, n: int, alpha: float, delta: float = 0.0) -> np.ndarray:
    """ln((p_lo - delta) / q_hi) at counts n P and n Q (``bounds.epsilon_lower_bound``'s
    formula with real counts; -inf where p_lo <= delta)."""
    P, Q, n, alpha = _check_pq(P, Q, n, alpha)
    delta = check_delta(delta)
    return _plugin_eps(P, Q, n, alpha, delta)


def _plugin_eps(P, Q, n, alpha, delta):
    p_lo, q_hi = _cp_lower(n * np.asarray(P), n, alpha / 2), _cp_upper(n * np.asarray(Q), n, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(p_lo - delta) - np.log(q_hi)
    return np.where((p_lo > delta) & np.isfinite(out), out, -np.inf)


def plugin_mu_bound(P, Q, n: int, alpha: float) -> np.ndarray:
    """Phi^-1(1 - FPR_hi) - Phi^-1(FNR_hi) with FPR = Q, FNR = 1 - P (``bounds.mu_lower_bound``)."""
    return _plugin_mu(*_check_pq(P, Q, n, alpha))


def _plugin_mu(P, Q, n, alpha):
    fpr_hi = _cp_upper(n * np.asarray(Q), n, alpha / 2)
    fnr_hi = _cp_upper(n * (1.0 - np.asarray(P)), n, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -ndtri(fpr_hi) - ndtri(fnr_hi)
    return np.where(np.isfinite(out), out, -np.inf)


# ------------------------------------------------------------------ Neyman-Pearson curves
def _laplace_sf(z: np.ndarray) -> np.ndarray:
    """Pr[Lap(0, 1) >= z]."""
    return np.where(z >= 0, 0.5 * np.exp(-np.abs(z)), 1.0 - 0.5 * np.exp(-np.abs(z)))


def _curve_1d(family: str, shift: float, scale: float, t: np.ndarray):
    """(P, Q) of {x >= t} for x = noise + shift (favoured) and x = noise (other)."""
    if family == "gaussian":
        return ndtr((shift - t) / scale), ndtr(-t / scale)
    return _laplace_sf((t - shift) / scale), _laplace_sf(t / scale)


def _best_1d(family: str, shift: float, scale: float, score) -> float:
    """max over thresholds t of score(P(t), Q(t)): a grid spanning both tails, then refined."""
    if shift == 0.0:
        return -np.inf if score is None else float(np.max(score(np.array([0.5]), np.array([0.5]))))
    return _argbest_1d(family, shift, scale, score)[0]


def _argbest_1d(family: str, shift: float, scale: float, score) -> tuple[float, float]:
    """(max over t of score(P(t), Q(t)), the t where it is reached), shift > 0: a grid
    spanning both tails, then refined around the grid's best point."""
    span = 45.0 * scale if family == "laplace" else 12.0 * scale
    t = np.linspace(-span, shift + span, _GRID)
    vals = score(*_curve_1d(family, shift, scale, t))
    i = int(np.argmax(vals))
    lo, hi = t[max(i - 1, 0)], t[min(i + 1, t.size - 1)]
    fine = np.linspace(lo, hi, 2001)
    fine_vals = score(*_curve_1d(family, shift, scale, fine))
    j = int(np.argmax(fine_vals))
    return (float(fine_vals[j]), float(fine[j])) if fine_vals[j] > vals[i] else (float(vals[i]), float(t[i]))


def _log_density(family: str, z: np.ndarray, scale: float) -> np.ndarray:
    """ln density of the noise at z (n, d), up to a constant shared by both sides."""
    if family == "gaussian":
        return -0.5 * np.sum(z * z, axis=1) / scale**2
    if family == "laplace":
        return -np.sum(np.abs(z), axis=1) / scale
    return -np.linalg.norm(z, axis=1) / scale


def _draw(family: str, scale: float, d: int, rng, n: int) -> np.ndarray:
    if family == "gaussian":
        return rng.normal(0.0, scale, (n, d))
    if family == "laplace":
        return rng.laplace(0.0, scale, (n, d))
    from userdp.reference.mechanisms import l2_laplace_noise

    return l2_laplace_noise(1.0 / scale, d, rng, n)


def _mc_curves(family: str, shift: np.ndarray, scale: float, draws: int, batches: int, seed: int):
    """Per batch: (P, Q) of the sets {L >= c} at logit-spaced ranks, with the favoured side D."""
    rng = np.random.default_rng(seed)
    per = draws // batches
    ranks = np.unique(
        np.round(per / (1.0 + np.exp(-np.linspace(-math.log(per), math.log(per), _GRID)))).astype(np.int64)
    )
    ranks = ranks[(ranks >= 1) & (ranks <= per)]
    out = []
    for _ in range(batches):
        z = _draw(family, scale, shift.size, rng, per)  # X - stat(D) under D
        L = _log_density(family, z, scale) - _log_density(family, z + shift, scale)  # ln p_D / p_D'(X = stat(D) + z)
        order = np.argsort(-L, kind="stable")
        w = np.cumsum(np.exp(-L[order]))  # sum of dP_D'/dP_D
        out.append((ranks / per, np.minimum(w[ranks - 1] / per, 1.0)))  # Q <= 1 (MC noise can pass it)
    return out


def _pair_ceiling(
    noise: NoiseModel, first, second, n: int, alpha: float, delta: float, gdp: bool, draws: int, seed: int
):
    """(eps ceiling, mu ceiling or None, method, standard error) on one pair."""
    m1, s1 = noise.locate(first)
    m2, s2 = noise.locate(second)
    if m1.shape != m2.shape:
        raise ValueError(f"noise statistic has shape {m1.shape} on the first dataset and {m2.shape} on the second")
    if not math.isclose(s1, s2, rel_tol=1e-12):
        raise ValueError(
            f"noise scale differs between the pair's datasets ({s1!r} vs {s2!r}): "
            "the ceiling is computed for an additive release with one noise scale"
        )
    shift = m1 - m2
    eps_score = lambda P, Q: _plugin_eps(P, Q, n, alpha, delta)  # noqa: E731
    mu_score = lambda P, Q: _plugin_mu(P, Q, n, alpha)  # noqa: E731
    nonzero = np.flatnonzero(shift)
    family = noise.family
    if family == "l2laplace" and shift.size == 1:
        family = "laplace"  # in d = 1 the L2-Laplace is Laplace
    if family == "gaussian" or (family == "laplace" and nonzero.size <= 1):
        size = float(np.linalg.norm(shift)) if family == "gaussian" else float(np.abs(shift).sum())
        eps = _best_1d(family, size, s1, eps_score)
        mu = _best_1d(family, size, s1, mu_score) if gdp else None
        return eps, mu, "closed form", 0.0
    curves = _mc_curves(family, shift, s1, draws, MC_BATCHES, seed)
    P = np.concatenate([c[0] for c in curves])
    Q = np.concatenate([c[1] for c in curves])
    eps_b = [float(np.max(eps_score(*c))) for c in curves]
    mu_b = [float(np.max(mu_score(*c))) for c in curves] if gdp else None
    # the ceiling: the mean over batches of each batch's best (each batch a valid MC estimate)
    eps = float(np.mean(eps_b)) if np.all(np.isfinite(eps_b)) else float(np.max(eps_score(P, Q)))
    se = float(np.std(eps_b, ddof=1) / math.sqrt(len(eps_b))) if np.all(np.isfinite(eps_b)) else math.nan
    mu = float(np.mean(mu_b)) if gdp else None
    return eps, mu, f"Monte Carlo, {draws} draws (seed {seed})", se


def ceiling(
    noise: NoiseModel,
    pairs,
    *,
    samples: int,
    confidence: float,
    delta: float = 0.0,
    gdp: bool = False,
    output_shape: tuple | None = None,
    draws: int = MC_DRAWS,
    seed: int = MC_SEED,
) -> Ceiling:
    """The perfect test's plug-in eps ceiling (and mu ceiling when ``gdp``) over ``pairs``
    (objects with .first and .second), at ``samples`` per side and ``confidence``.

    output_shape: the mechanism's output shape per release (``()`` or ``(d,)``), if known;
    the noise statistic must match it (else ValueError naming ``noise``).
    """
    if not isinstance(noise, NoiseModel):
        raise TypeError(f"noise must be a NoiseModel, got {type(noise).__name__}")
    samples = check_int(samples, "samples", lo=1, hi=2**62)
    confidence = _check_level(confidence, "confidence")
    delta = check_delta(delta)
    if not isinstance(gdp, bool):
        raise TypeError(f"gdp must be a bool, got {type(gdp).__name__} {gdp!r}")
    draws = check_int(draws, "draws", lo=MC_BATCHES * 100, hi=10**8)
    seed = check_int(seed, "seed", lo=0, hi=2**63 - 1)
    pairs = _check_pairs(pairs)
    if output_shape is not None and (
        not isinstance(output_shape, tuple)
        or len(output_shape) > 1
        or not all(isinstance(k, (int, np.integer)) and k >= 1 for k in output_shape)
    ):
        raise ValueError(f"output_shape must be None, () or (d,) with d >= 1, got {output_shape!r}")
    best = None
    for i, p in enumerate(pairs):
        if output_shape is not None:
            loc, _ = noise.locate(p.first)
            want = (1,) if tuple(output_shape) == () else tuple(output_shape)
            if loc.shape != want:
                raise ValueError(
                    f"noise: the declared statistic has shape {loc.shape}, but the mechanism's "
                    f"output has shape {tuple(output_shape)} per release"
                )
        eps, mu, method, se = _pair_ceiling(
            noise, p.first, p.second, samples, 1.0 - confidence, delta, gdp, draws, seed
        )
        if best is None or eps > best.epsilon:
            best = Ceiling(eps, best.mu if best is not None else None, i, method, se)
        if gdp and (best.mu is None or mu > best.mu):
            best = Ceiling(best.epsilon, mu, best.pair_index, best.method, best.standard_error)
    return best


# ------------------------------------------------------------------ estimated ceilings
@dataclass(frozen=True)
class NoiseFit:
    """The noise family fitted on outputs of a pair's two sides (``fit_noise``), or why none fits."""

    family: str | None  # "laplace" or "gaussian"; None: no family passed its tests
    location_first: tuple = ()  # per coordinate
    location_second: tuple = ()
    scale: tuple = ()  # per coordinate, shared by the two sides
    p_value: float = 0.0  # the chosen family's smallest Bonferroni-adjusted p-value (its tests passed)
    draws: int = 0  # outputs per side
    refusal: str | None = None  # why nothing was estimated

    def to_dict(self) -> dict:
        return {
            "family": self.family,
            "location_first": list(self.location_first),
            "location_second": list(self.location_second),
            "scale": list(self.scale),
            "p_value": self.p_value,
            "draws": self.draws,
            "refusal": self.refusal,
        }


def _fit(family: str, a: np.ndarray, b: np.ndarray):
    """(location of a, location of b, shared scale), per coordinate."""
    if family == "laplace":
        la, lb = np.median(a, axis=0), np.median(b, axis=0)
        s = 0.5 * (np.abs(a - la).mean(axis=0) + np.abs(b - lb).mean(axis=0))
    else:
        la, lb = a.mean(axis=0), b.mean(axis=0)
        s = np.sqrt(0.5 * (a.var(axis=0, ddof=1) + b.var(axis=0, ddof=1)))
    return la, lb, s


def _fit_slack(family: str, n: int) -> float:
    """A bound, exceeded with probability < 1e-4 per coordinate (normal approximation at FIT_Z
    standard errors), on sup_x |F_fitted(x) - F_true(x)| of one coordinate's standardised law
    when its location and scale were fitted on n outputs per side: sup f |d loc| + sup |x f(x)|
    |d scale| with the standardised density f (Laplace: 1/2 and 1/(2e), the median's and the
    mean absolute deviation's standard errors 1/sqrt(n) and 1/sqrt(2n); Gaussian: 1/sqrt(2 pi)
    and phi(1), the mean's and the pooled standard deviation's 1/sqrt(n) and 1/sqrt(4n)). The KS
    distance is reduced by it before it is tested, so that the fitted law's own error is not
    read as a misfit."""
    if family == "laplace":
        return FIT_Z * (0.5 / math.sqrt(n) + 0.5 / math.e / math.sqrt(2 * n))
    return FIT_Z * (1 / math.sqrt(2 * math.pi * n) + float(stats.norm.pdf(1.0)) / math.sqrt(4 * n))


def _fit_p_value(family: str, a: np.ndarray, b: np.ndarray) -> tuple[float, str]:
    """(smallest Bonferroni-adjusted p-value of the family's tests, the test that gave it):
    fitted on the first FIT_SHARE of each side, Kolmogorov-Smirnov per coordinate on the rest's
    residuals (both sides pooled), and Spearman's rank correlation of each pair of coordinates (module docstring)."""
    h = int(a.shape[0] * FIT_SHARE)
    la, lb, s = _fit(family, a[:h], b[:h])
    if not np.all(s > 0):
        return 0.0, "a coordinate that does not vary"
    law = stats.laplace if family == "laplace" else stats.norm
    z = np.vstack([(a[h:] - la) / s, (b[h:] - lb) / s])
    d = a.shape[1]
    slack = _fit_slack(family, h)
    distance = [stats.kstest(z[:, j], law.cdf).statistic for j in range(d)]
    ks = [float(stats.kstwo.sf(max(D - slack, 0.0), z.shape[0])) for D in distance]
    worst, why = min(ks) * d, "Kolmogorov-Smirnov"
    if d >= 2:
        # Spearman's rank correlation: distribution-free under independence (Pearson's r of
        # Laplace residuals has tails far from normal at the Bonferroni level)
        ranks = np.argsort(np.argsort(z, axis=0), axis=0).astype(float)
        rho = np.corrcoef(ranks, rowvar=False)[np.triu_indices(d, 1)]
        corr = float(2 * stats.norm.sf(np.max(np.abs(rho)) * math.sqrt(z.shape[0] - 1))) * rho.size
        if corr < worst:
            worst, why = corr, "correlated coordinates (Spearman)"
    return min(worst, 1.0), why


def fit_noise(a, b, level: float = FIT_LEVEL) -> NoiseFit:
    """The Laplace or Gaussian noise fitted per coordinate on outputs a (first side) and b
    (second side), (n,) or (n, d) finite floats, n >= FIT_MIN / 2 (module docstring), or a
    ``NoiseFit`` with family None and the refusal when neither family passes its tests at
    ``level`` / 2."""
    a, b = check_finite_array(a, "a"), check_finite_array(b, "b")
    a, b = a.reshape(a.shape[0], -1), b.reshape(b.shape[0], -1)
    if a.shape != b.shape or a.shape[0] < 100:
        raise ValueError(f"a and b must have the same shape with >= 100 rows, got {a.shape}, {b.shape}")
    level = _check_level(level, "level")
    tried = {f: _fit_p_value(f, a, b) for f in FIT_FAMILIES}
    passed = [f for f in FIT_FAMILIES if tried[f][0] > level / len(FIT_FAMILIES)]
    if not passed:
        why = "; ".join(f"{f}: {tried[f][1]} p = {tried[f][0]:.2g}" for f in FIT_FAMILIES)
        return NoiseFit(None, draws=a.shape[0], refusal=f"neither family fits ({why}, each tested at {level / 2:g})")
    family = max(passed, key=lambda f: tried[f][0])
    la, lb, s = _fit(family, a, b)
    located = (tuple(map(float, la)), tuple(map(float, lb)), tuple(map(float, s)))
    return NoiseFit(family, *located, tried[family][0], a.shape[0])


def estimated_ceiling(
    fit: NoiseFit, *, samples: int, confidence: float, delta: float = 0.0, gdp: bool = False, draws: int = MC_DRAWS
) -> Ceiling | None:
    """The ceiling of the fitted model (``fit_noise``) at ``samples`` per side and ``confidence``:
    each coordinate divided by its fitted scale, i.i.d. noise of scale 1 moved by the locations'
    difference; None when nothing was fitted."""
    if not isinstance(fit, NoiseFit):
        raise TypeError(f"fit must be a NoiseFit (from fit_noise), got {type(fit).__name__}")
    if fit.family is None:
        return None
    s = np.asarray(fit.scale)
    where = {0: np.asarray(fit.location_first) / s, 1: np.asarray(fit.location_second) / s}

    @dataclass(frozen=True)
    class _Pair:
        first: int = 0
        second: int = 1

    model = NoiseModel(fit.family, where.__getitem__, 1.0)
    return ceiling(model, [_Pair()], samples=samples, confidence=confidence, delta=delta, gdp=gdp, draws=draws)
