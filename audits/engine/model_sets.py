"""The perfect test's sets, where the setup declares its noise (docs/design.md §6, "Audits").

A setup that declares its noise (``ceiling.NoiseModel``: the release is statistic(D) + Z, Z
of a known family at a known scale) tells the audit the exact privacy-loss function of each
pair, L(x) = ln p_D(x) / p_D'(x). By Neyman-Pearson the sets {L >= c} are the most powerful
(for each Pr[M(D') in S] they have the largest Pr[M(D) in S]), and the level c that gives
the best bound at the audit's sample size and level is computed from the model alone, as
the ceiling computes it (``ceiling.py``): the set is the ceiling's own set. So the audit
tests the perfect test's set besides the sets it chooses on its selection share:

- i.i.d. Gaussian noise (any dimension), scalar Laplace noise, and i.i.d. Laplace noise whose
  shift has one nonzero coordinate: L is increasing in y = <x - m', u>, u the unit shift
  (m = statistic(D), m' = statistic(D')), so the set is a threshold on the projection on u,
  {<u, x> >= t + <u, m'>}, t at the closed-form optimum (``ceiling._argbest_1d``);
- L2-Laplace noise in d >= 2 and i.i.d. Laplace with several coordinates moved: L is the
  statistic ||x - m'|| - ||x - m|| (over the scale) or sum_j (|x_j - m'_j| - |x_j - m_j|) / b,
  and c is the best level on MODEL_DRAWS Monte Carlo draws of L under D, with the
  importance weights e^{-L} for D' (``ceiling._mc_curves``'s estimator, a fixed seed).

Both orderings pooled (the eps side). Differential privacy bounds both orderings, so for the
set S (favouring D) and its mirror S' (the Neyman-Pearson set of the other ordering, {L <= -c},
favouring D'), P_D(S) <= e^eps P_D'(S) + delta and P_D'(S') <= e^eps P_D(S') + delta add up to

    p = (P_D(S) + P_D'(S')) / 2 <= e^eps (P_D'(S) + P_D(S')) / 2 + delta = e^eps q + delta.

p is the mean of the 2n independent indicators [M(D)_i in S], [M(D')_i in S'] (K1 of them
hit), q that of [M(D')_i in S], [M(D)_i in S'] (K2), so the audit tests one hypothesis on
2n outputs per side instead of n: for the symmetric families declared here P_D(S) =
P_D'(S'), and the pooled test sees twice the outputs of the perfect test of one set, whose
ceiling it can pass (zhao2024.hlm at `audit --all`'s level: efficiency above 0.95 at all but
~0.1% of seeds, against ~10% for one set; docs/audit.md). The indicators of one count are
independent but not identically distributed (K1 is a sum of two binomials), so the bounds
are Hoeffding's (1963, Theorem 1, the relative-entropy form), which holds for any independent
[0, 1] variables with mean p: Pr[K1 >= k] <= exp(-2n KL(k / 2n || p)) for k / 2n >= p, and
the same for the lower tail; p_lo and q_hi are those bounds inverted at level alpha/2 each
(``kl_lower``, ``kl_upper``); K1 and K2 read the same outputs, which the union bound over the
two one-sided bounds allows. Clopper-Pearson is not used there: it is exact for a binomial,
and a sum of two binomials with different p's is not one. The level c is the one whose pooled
bound at the expected counts 2n P, 2n Q is best. The GDP side keeps the set of one ordering.

Why the bound stays valid. The set is a function of the declaration and of the pair (the
noise-free statistic and the scale on D and D'), computed before any output is drawn; it
never reads the audit's samples. So it is a fixed event, and its counts over ALL ``samples``
outputs per side (selection and counting shares) are binomial with the true probabilities
of that event: its CP bounds (the pooled sets': Hoeffding's) hold whatever the mechanism
really does. A wrong declaration makes the set a poor one (power lost), never the bound
invalid. Multiplicity: the model
sets get the share MODEL_SHARE of alpha, split equally between them (one per confirmed pair
and side, eps and GDP), and the selection-share sets the rest, split as before; the shares
add up to alpha, so the union bound and (weighted) Holm's procedure hold as in harness.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import xlogy

from userdp.audits.engine.ceiling import (
    _GRID,
    MC_SEED,
    NoiseModel,
    _argbest_1d,
    _draw,
    _log_density,
    _plugin_eps,
    _plugin_mu,
)
from userdp.audits.engine.bounds import P_VALUE_FLOOR, _count_of, _level
from userdp.audits.engine.sampling import released_cells, released_floats
from userdp.audits.engine.thresholds import Candidate, StatisticThreshold, Threshold
from userdp.reference._checks import check_delta, check_finite_array, check_int, check_nonnegative

__all__ = [
    "MODEL_SHARE",
    "MODEL_DRAWS",
    "MODEL_ORIGIN",
    "MODEL_SETS_ON",
    "POOLED_ON",
    "PooledModelSet",
    "check_noise_model",
    "model_candidate",
    "kl_lower",
    "kl_upper",
    "pooled_epsilon_bound",
    "pooled_p_value",
]

MODEL_SHARE = 0.9  # of alpha, for the model sets; the selection-share sets keep the rest
MODEL_DRAWS = 200_000  # Monte Carlo draws of L that choose c where L has no 1-D closed form
MODEL_ORIGIN = "the declared noise model's Neyman-Pearson set"
# tests/planted/auditor.py plants "model sets off" by setting it False
MODEL_SETS_ON = True
POOLED_ON = True  # False: the eps side's model set tests one ordering on n outputs (the figure before)
_KL_STEPS = 80  # bisection steps of the relative-entropy bounds (2^-80 of the interval)


# ------------------------------------------------------------------ Hoeffding's bounds
def _kl(x, p):
    """KL(Bernoulli(x) || Bernoulli(p)), elementwise (0 log 0 = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return xlogy(x, x / p) + xlogy(1.0 - x, (1.0 - x) / (1.0 - p))


def _kl_counts(k, n, a) -> tuple[np.ndarray, int, float]:
    """(k, n, a) checked: k (a number or an array) the sums of n independent [0, 1] variables, so
    reals in [0, n] (expected counts included), n >= 1, a in (0, 1]."""
    n = check_int(n, "n", lo=1, hi=2**62)
    a = _level(a, "a", hi=1.0)
    k = check_finite_array(k, "k")
    if ((k < 0) | (k > n)).any():
        raise ValueError(f"k must lie in [0, n = {n}], got {k.ravel()[(k < 0) | (k > n)][:5].tolist()!r}")
    return k, n, a


def _kl_invert(k, n: int, a: float, upper: bool) -> np.ndarray:
    k, n, a = _kl_counts(k, n, a)
    x = k / n
    budget = math.log(1.0 / a) / n
    lo, hi = (x.copy(), np.ones_like(x)) if upper else (np.zeros_like(x), x.copy())
    for _ in range(_KL_STEPS):  # the KL divergence grows as p leaves x: bisection on its level set
        mid = 0.5 * (lo + hi)
        inside = _kl(x, mid) <= budget
        if upper:
            lo, hi = np.where(inside, mid, lo), np.where(inside, hi, mid)
        else:
            lo, hi = np.where(inside, lo, mid), np.where(inside, mid, hi)
    return lo if upper else hi  # the conservative end of the last interval


def kl_lower(k, n: int, a: float) -> np.ndarray:
    """Hoeffding's (1963, Theorem 1) lower confidence bound at level a on the mean p of n
    independent [0, 1] variables summing to k: min {p : n KL(k/n || p) <= ln(1/a)} (0 at k = 0)."""
    return _kl_invert(k, n, a, upper=False)


def kl_upper(k, n: int, a: float) -> np.ndarray:
    """The upper bound: max {p : n KL(k/n || p) <= ln(1/a)} (1 at k = n)."""
    return _kl_invert(k, n, a, upper=True)


def _pooled_eps(k1, k2, n: int, alpha: float, delta: float) -> np.ndarray:
    alpha, delta = _level(alpha, "alpha", hi=1.0), check_delta(delta)
    p_lo, q_hi = kl_lower(k1, n, alpha / 2), kl_upper(k2, n, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(p_lo - delta) - np.log(q_hi)
    return np.where((p_lo > delta) & np.isfinite(out), out, -np.inf)


def pooled_epsilon_bound(k1: int, k2: int, n: int, alpha: float, delta: float = 0.0) -> float:
    """ln((p_lo - delta) / q_hi) with Hoeffding's bounds at level alpha/2 each, k1 and k2 of n
    pooled indicators (module docstring); -inf when p_lo <= delta."""
    k1, n = _count_of(k1, n, "k1")
    k2, _ = _count_of(k2, n, "k2")
    return float(_pooled_eps(k1, k2, n, alpha, delta))


def pooled_p_value(k1: int, k2: int, n: int, epsilon: float, delta: float = 0.0) -> float:
    """The smallest level at which ``pooled_epsilon_bound`` exceeds epsilon (P_VALUE_FLOOR at
    least; 1.0 if never): the p-value of H0 p <= e^eps q + delta, as ``bounds.p_value`` is for
    the Clopper-Pearson bound, so that Holm's verdict and eps_lb > eps agree."""
    epsilon, delta = check_nonnegative(epsilon, "epsilon"), check_delta(delta)
    k1, n = _count_of(k1, n, "k1")
    k2, _ = _count_of(k2, n, "k2")
    if pooled_epsilon_bound(k1, k2, n, 1.0 - 1e-12, delta) <= epsilon:
        return 1.0
    if pooled_epsilon_bound(k1, k2, n, P_VALUE_FLOOR, delta) > epsilon:
        return P_VALUE_FLOOR
    f = lambda log_a: pooled_epsilon_bound(k1, k2, n, math.exp(log_a), delta) - epsilon  # noqa: E731
    return math.exp(brentq(f, math.log(P_VALUE_FLOOR), math.log(1.0 - 1e-12), xtol=1e-10, rtol=1e-12))


@dataclass(frozen=True)
class PooledModelSet:
    """The declared model's set S (favouring the first dataset) on M(first)'s outputs and its
    mirror S' (favouring the second) on M(second)'s, as one hypothesis on 2n outputs per side
    (module docstring): K1 = #{M(first) in S} + #{M(second) in S'}, K2 = #{M(second) in S} +
    #{M(first) in S'}."""

    first: object  # Threshold or StatisticThreshold: S
    second: object  # S'
    origin: str = MODEL_ORIGIN

    def _hits(self, s, kind: str, x: np.ndarray) -> int:
        projected = kind == "vector" or isinstance(s, StatisticThreshold)
        return int(np.count_nonzero(s.mask(s.project(x) if projected else released_floats(x))))

    def counts(self, kind: str, a: np.ndarray, b: np.ndarray) -> tuple[int, int]:
        """(K1, K2) on outputs a of M(first) and b of M(second), each of 2 len(a) indicators."""
        a, b = (released_cells(x) for x in (a, b)) if kind == "vector" else (a, b)
        return (
            self._hits(self.first, kind, a) + self._hits(self.second, kind, b),
            self._hits(self.first, kind, b) + self._hits(self.second, kind, a),
        )

    def describe(self) -> str:
        return (
            f"{self.first.describe()} on M(first) and its mirror {self.second.describe()} on M(second), "
            f"both orderings pooled ({self.origin})"
        )

    def to_dict(self) -> dict:
        return {
            "type": "pooled",
            "first": self.first.to_dict(),
            "second": self.second.to_dict(),
            "description": self.describe(),
            "origin": self.origin,
        }


def check_noise_model(noise_model) -> NoiseModel | None:
    """None or a ``ceiling.NoiseModel``."""
    if noise_model is not None and not isinstance(noise_model, NoiseModel):
        raise TypeError(
            f"noise_model must be None or a userdp.audits.engine.ceiling.NoiseModel, got {type(noise_model).__name__}"
        )
    return noise_model


def _score(gdp: bool, n: int, alpha: float, delta: float):
    if gdp:
        return lambda P, Q: _plugin_mu(P, Q, n, alpha)
    return lambda P, Q: _plugin_eps(P, Q, n, alpha, delta)


def _mc_ranks(N: int) -> np.ndarray:
    """_GRID ranks in 1..N, logit-spaced (dense in the tails, where the (eps, delta) sets are)."""
    u = 1.0 / (1.0 + np.exp(-np.linspace(-np.log(N), np.log(N), _GRID)))
    return np.unique(np.clip(np.round(u * N).astype(np.int64), 1, N))


def _mc_level(family: str, shift: np.ndarray, scale: float, score) -> tuple[float, float]:
    """(best score, the level c of L where it is reached) over the sets {L >= c}, on
    MODEL_DRAWS draws under D: P(c) = #{L >= c} / N, Q(c) = sum_{L_i >= c} e^{-L_i} / N."""
    rng = np.random.default_rng(MC_SEED)
    z = _draw(family, scale, shift.size, rng, MODEL_DRAWS)  # X - statistic(D) under D
    L = np.sort(_log_density(family, z, scale) - _log_density(family, z + shift, scale))[::-1]
    N = L.size
    Q = np.minimum(np.cumsum(np.exp(-L)) / N, 1.0)
    ranks = _mc_ranks(N)  # the sets {L >= L_(r)} at logit-spaced ranks r (1-based)
    last = np.r_[L[1:] != L[:-1], True][ranks - 1]  # a set {L >= c} holds every draw at level c
    vals = np.where(last, score(ranks / N, Q[ranks - 1]), -np.inf)
    i = int(np.argmax(vals))
    return float(vals[i]), float(L[ranks[i] - 1])


def model_candidate(
    noise: NoiseModel, pair, kind: str, d: int, n: int, alpha: float, delta: float, *, gdp: bool = False
) -> Candidate | None:
    """The declared model's best set for ``pair`` at n outputs per side and level alpha (its
    own share), ordering "first over second"; scored for eps_lb, or for mu_lb when ``gdp``.
    None when the model sees no loss on the pair (the same statistic on both sides) or two
    noise scales (no single Neyman-Pearson family). kind: "continuous" (d = 1) or "vector"
    (d coordinates); a declared statistic of another size is a ValueError naming noise_model."""
    m1, s1 = noise.locate(pair.first)
    m2, s2 = noise.locate(pair.second)
    if m1.size != d or m2.size != d:
        shape = () if kind == "continuous" else (d,)
        raise ValueError(
            f"noise_model: the declared statistic has shape {m1.shape}, the mechanism's output shape {shape} "
            "per release"
        )
    shift = m1 - m2
    if not np.any(shift) or not np.isclose(s1, s2, rtol=1e-12, atol=0.0):
        return None
    pooled = POOLED_ON and not gdp
    score = (
        (lambda P, Q: _pooled_eps(2 * n * P, 2 * n * Q, 2 * n, alpha, delta))
        if pooled
        else _score(gdp, n, alpha, delta)
    )
    family = "laplace" if noise.family == "l2laplace" and d == 1 else noise.family
    moved = np.flatnonzero(shift)
    if family == "gaussian" or (family == "laplace" and moved.size == 1):
        size = float(np.linalg.norm(shift))
        u = shift / size  # Laplace: +-e_j; the projection on u is the 1-D law
        value, t = _argbest_1d(family, size, s1, score)
        level = t + float(u @ m2)
        mirror = float(u @ (m1 + m2)) - level  # S' = {<u, x> <= <u, m1 + m2> - level}: S about the midpoint
        if kind == "continuous":
            s = Threshold("upper", level) if u[0] > 0 else Threshold("lower", -level)
            s2 = Threshold("lower", mirror) if u[0] > 0 else Threshold("upper", -mirror)
        else:
            s = Threshold("upper", level, tuple(map(float, u)))
            s2 = Threshold("lower", mirror, tuple(map(float, u)))
    else:
        value, c = _mc_level(family, shift, s1, score)
        if family == "laplace":  # L = sum_j (|x_j - m2_j| - |x_j - m1_j|) / b
            params = (tuple(map(float, m1)), tuple(map(float, m2)), (float(s1),) * d)
            name, level = "l1-distance-difference", c
        else:  # L = (||x - m2|| - ||x - m1||) / b
            params = (tuple(map(float, m1)), tuple(map(float, m2)))
            name, level = "l2-distance-difference", c * s1
        s = StatisticThreshold(name, params, "upper", level, origin=MODEL_ORIGIN)
        s2 = StatisticThreshold(name, params, "lower", -level, origin=MODEL_ORIGIN)  # {L <= -c}: favours D'
    return Candidate(PooledModelSet(s, s2) if pooled else s, True, value, (0, 0))
