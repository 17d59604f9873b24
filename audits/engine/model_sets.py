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

Why the bound stays valid. The set is a function of the declaration and of the pair (the
noise-free statistic and the scale on D and D'), computed before any output is drawn; it
never reads the audit's samples. So it is a fixed event, and its counts over ALL ``samples``
outputs per side (selection and counting shares) are binomial with the true probabilities
of that event: its CP bounds hold whatever the mechanism really does. A wrong declaration
makes the set a poor one (power lost), never the bound invalid. Multiplicity: the model
sets get the share MODEL_SHARE of alpha, split equally between them (one per confirmed pair
and side, eps and GDP), and the selection-share sets the rest, split as before; the shares
add up to alpha, so the union bound and (weighted) Holm's procedure hold as in harness.py.
"""

from __future__ import annotations

import numpy as np

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
from userdp.audits.engine.thresholds import Candidate, StatisticThreshold, Threshold

__all__ = ["MODEL_SHARE", "MODEL_DRAWS", "MODEL_ORIGIN", "MODEL_SETS_ON", "check_noise_model", "model_candidate"]

MODEL_SHARE = 0.9  # of alpha, for the model sets; the selection-share sets keep the rest
MODEL_DRAWS = 200_000  # Monte Carlo draws of L that choose c where L has no 1-D closed form
MODEL_ORIGIN = "the declared noise model's Neyman-Pearson set"
# tests/planted/auditor.py plants "model sets off" by setting it False
MODEL_SETS_ON = True


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
    score = _score(gdp, n, alpha, delta)
    family = "laplace" if noise.family == "l2laplace" and d == 1 else noise.family
    moved = np.flatnonzero(shift)
    if family == "gaussian" or (family == "laplace" and moved.size == 1):
        size = float(np.linalg.norm(shift))
        u = shift / size  # Laplace: +-e_j; the projection on u is the 1-D law
        value, t = _argbest_1d(family, size, s1, score)
        level = t + float(u @ m2)
        if kind == "continuous":
            s = Threshold("upper", level) if u[0] > 0 else Threshold("lower", -level)
        else:
            s = Threshold("upper", level, tuple(map(float, u)))
    else:
        value, c = _mc_level(family, shift, s1, score)
        if family == "laplace":  # L = sum_j (|x_j - m2_j| - |x_j - m1_j|) / b
            params = (tuple(map(float, m1)), tuple(map(float, m2)), (float(s1),) * d)
            s = StatisticThreshold("l1-distance-difference", params, "upper", c, origin=MODEL_ORIGIN)
        else:  # L = (||x - m2|| - ||x - m1||) / b
            params = (tuple(map(float, m1)), tuple(map(float, m2)))
            s = StatisticThreshold("l2-distance-difference", params, "upper", c * s1, origin=MODEL_ORIGIN)
    return Candidate(s, True, value, (0, 0))
