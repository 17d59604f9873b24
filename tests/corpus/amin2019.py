"""Corpus for Amin et al. 2019 §3, the capped sum g_T + Lap(T/eps) (``amin2019.capped-sum``).

Every implementation is written here from the paper, independently of reference/amin2019.py,
in the style an outside engineer might use (loops, dicts, other samplers). The mechanism's
call shape is the reference's: ``f(dataset, rng=..., size=..., T=..., epsilon=...)``.
"""
from __future__ import annotations

import math

import numpy as np

from userdp.properties.amin2019 import CapAdapter

from . import CorpusEntry

ALGO = "amin2019.capped-sum"


def _totals(dataset) -> dict:
    totals: dict = {}
    for u, v in zip(dataset.user_ids.tolist(), dataset.values.tolist()):
        totals[u] = totals.get(u, 0.0) + v
    return totals


def _check(T, epsilon):
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon}")
    if not T >= 0:
        raise ValueError(f"T must be >= 0, got {T}")


# ------------------------------------------------------------ correct alternatives
def loop_exponential_difference(dataset, rng, size=None, *, T, epsilon):
    """Correct: a dict of user totals, and Laplace(b) as the difference of two Exp(b)."""
    _check(T, epsilon)
    g = math.fsum(min(t, T) for t in _totals(dataset).values())
    b = T / epsilon
    return g + rng.exponential(b, size) - rng.exponential(b, size)


def _stat_bincount(dataset, T):
    _, inverse = np.unique(dataset.user_ids, return_inverse=True)
    return float(np.minimum(np.bincount(inverse, weights=dataset.values), T).sum())


def _mech_inverse_cdf(dataset, rng, size=None, *, T, epsilon):
    _check(T, epsilon)
    u = rng.uniform(-0.5, 0.5, size)                       # inverse CDF of Laplace(0, b)
    return _stat_bincount(dataset, T) - (T / epsilon) * np.sign(u) * np.log1p(-2 * np.abs(u))


staged_inverse_cdf = CapAdapter(
    "corpus/amin-staged-inverse-cdf", statistic=_stat_bincount, sensitivity=lambda T: T,
    noise_scale=lambda T, epsilon: T / epsilon, mechanism=_mech_inverse_cdf)


# ------------------------------------------------------------ bugs, release only
def per_record_cap(dataset, rng, size=None, *, T, epsilon):
    """BUG (sensitivity): caps each record at T instead of each user's total."""
    _check(T, epsilon)
    return float(np.minimum(dataset.values, T).sum()) + rng.laplace(0.0, T / epsilon, size)


def half_scale(dataset, rng, size=None, *, T, epsilon):
    """BUG (noise scale): Laplace scale T / (2 eps), as if the sensitivity were T/2."""
    _check(T, epsilon)
    g = math.fsum(min(t, T) for t in _totals(dataset).values())
    return g + rng.laplace(0.0, T / (2 * epsilon), size)


def data_chosen_cap(dataset, rng, size=None, *, T, epsilon):
    """BUG (non-private data-dependent choice): ignores the public T and uses eq. 6's optimum,
    the ceil(1/eps)-th largest user total, read exactly from the data."""
    _check(T, epsilon)
    x = sorted(_totals(dataset).values(), reverse=True)
    k = math.ceil(1 / epsilon)
    T = x[k - 1] if k <= len(x) else 0.0
    return math.fsum(min(t, T) for t in x) + rng.laplace(0.0, T / epsilon, size)


def noise_once_per_call(dataset, rng, size=None, *, T, epsilon):
    """BUG (independence): one Laplace draw per call, repeated for all `size` releases."""
    _check(T, epsilon)
    g = math.fsum(min(t, T) for t in _totals(dataset).values())
    return np.full(size, g + rng.laplace(0.0, T / epsilon))


def no_noise_at_eps_zero(dataset, rng, size=None, *, T, epsilon):
    """BUG (domain): "epsilon = 0 means no noise" (the guard the reference has is missing, as
    with lambda = 0 in the PDP-OP authors' code): releases g_T exactly at eps = 0."""
    if not T >= 0:
        raise ValueError("T must be >= 0")
    g = math.fsum(min(t, T) for t in _totals(dataset).values())
    b = T / epsilon if epsilon > 0 else 0.0
    return g + rng.laplace(0.0, 1.0, size) * b


def cap_twice(dataset, rng, size=None, *, T, epsilon):
    """BUG (optimality): caps at T/2 (a "safety margin"): private (sensitivity T/2 < T) but
    not the paper's g_T: the estimate is biased down for every user above T/2."""
    _check(T, epsilon)
    g = math.fsum(min(t, T / 2) for t in _totals(dataset).values())
    return g + rng.laplace(0.0, T / epsilon, size)


# ------------------------------------------------------------ bugs, with stages
def _stat_per_record(dataset, T):
    return float(np.minimum(dataset.values, T).sum())


staged_per_record_cap = CapAdapter(
    "corpus/amin-staged-per-record-cap", statistic=_stat_per_record, sensitivity=lambda T: T,
    noise_scale=lambda T, epsilon: T / epsilon,
    mechanism=lambda dataset, rng, size=None, *, T, epsilon:
        _stat_per_record(dataset, T) + rng.laplace(0.0, T / epsilon, size))


def _optimal_cap_off_by_one(dataset, epsilon):
    x = sorted(_totals(dataset).values(), reverse=True)
    k = math.ceil(1 / epsilon)
    return x[k] if k < len(x) else 0.0                     # BUG: the (k+1)-th largest


staged_optimal_cap_off_by_one = CapAdapter(
    "corpus/amin-staged-optimal-cap-off-by-one", statistic=_stat_bincount, sensitivity=lambda T: T,
    noise_scale=lambda T, epsilon: T / epsilon, optimal_cap=_optimal_cap_off_by_one, mechanism=_mech_inverse_cdf)

staged_disagreeing = CapAdapter(
    "corpus/amin-staged-disagreeing", statistic=lambda dataset, T: _stat_bincount(dataset, 2 * T),
    sensitivity=lambda T: T, noise_scale=lambda T, epsilon: T / epsilon, mechanism=_mech_inverse_cdf)


M = "corpus.amin2019"
CORPUS = [
    CorpusEntry("amin2019/loop-exponential-difference", ALGO, f"{M}:loop_exponential_difference", "none", "pass",
                "none: a dict of totals and Lap(b) = Exp(b) - Exp(b)", "correct alternative"),
    CorpusEntry("amin2019/staged-inverse-cdf", ALGO, f"{M}:staged_inverse_cdf", "none", "pass",
                "none: bincount totals and an inverse-CDF Laplace sampler, all stages", "correct alternative",
                exposes="stages"),
    CorpusEntry("amin2019/per-record-cap", ALGO, f"{M}:per_record_cap", "sensitivity", "privacy violation",
                "a user with r records at T moves the sum by rT: claimed eps, true r eps (4 eps on the audit's "
                "4-record user; unbounded in r)", "planted"),
    CorpusEntry("amin2019/staged-per-record-cap", ALGO, f"{M}:staged_per_record_cap", "sensitivity",
                "privacy violation", "as per-record-cap, with its stages exposed (the properties fail too)",
                "planted", exposes="stages"),
    CorpusEntry("amin2019/half-scale", ALGO, f"{M}:half_scale", "noise scale", "privacy violation",
                "Laplace scale T/(2 eps): claimed eps, true 2 eps", "planted"),
    CorpusEntry("amin2019/data-chosen-cap", ALGO, f"{M}:data_chosen_cap", "non-private data-dependent choice",
                "privacy violation", "T = eq. 6's optimum read from the data: the release's scale reveals it; "
                "true loss unbounded in general (the registry's planted amin2019.data-chosen-cap)", "planted"),
    CorpusEntry("amin2019/noise-once-per-call", ALGO, f"{M}:noise_once_per_call", "independence",
                "not independent", "the `size` releases of one call are one release repeated: an audit of "
                "them reads the noise as absent", "planted"),
    CorpusEntry("amin2019/no-noise-at-eps-zero", ALGO, f"{M}:no_noise_at_eps_zero", "domain",
                "invariant violation", "eps = 0 releases g_T without noise: infinite loss where the paper "
                "excludes the input", "planted"),
    CorpusEntry("amin2019/cap-at-half-T", ALGO, f"{M}:cap_twice", "optimality", "deviation from reference",
                "private (sensitivity T/2), but the sum is g_{T/2}, not g_T: biased for users above T/2",
                "planted"),
    CorpusEntry("amin2019/staged-optimal-cap-off-by-one", ALGO, f"{M}:staged_optimal_cap_off_by_one",
                "optimality", "invariant violation", "eq. 6's cap read one rank too low: the (k+1)-th largest "
                "total; the release (public T) is correct", "planted", exposes="stages"),
    CorpusEntry("amin2019/staged-disagreeing", ALGO, f"{M}:staged_disagreeing", "sensitivity",
                "invariant violation", "its statistic stage caps at 2T while its mechanism caps at T: stages "
                "that disagree (the statistic differs from the reference's, and from the releases' mean)",
                "planted", exposes="stages"),
]
