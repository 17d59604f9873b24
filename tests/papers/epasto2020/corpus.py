"""Corpus for Epasto et al. 2020 §3, optimal weighted averaging (``epasto2020.wa``) and §5,
GWA_C (``epasto2020.gwa``).

Written from the paper, independently of reference/epasto2020*.py. WA: Lemma 3's weights
c_i = min(h, s_q) / (s_q n_h) at Claim 1's minimiser h* of
v(h) = sigma^2 sum_q min(h, s_q)^2 / (s_q n_h^2) + 2 (B h / (eps n_h))^2, and the release
sum_i c_i y_i + Lap(B max_q W_q / eps) (Algorithm 1, Lemma 1). Here h* is found on each interval
between consecutive user sizes (v falls, then rises, on each) as the root of v' by Brent's
root finder, not by the reference's closed form. Call shape: the reference's,
``f(dataset, rng=..., size=..., B=..., epsilon=..., sigma=...)``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.optimize import brentq

from userdp.properties.epasto2020 import ADAPTER

from corpus import CorpusEntry

ALGO = "epasto2020.wa"


def _sizes(dataset) -> dict:
    sizes: dict = {}
    for u in dataset.user_ids.tolist():
        sizes[u] = sizes.get(u, 0) + 1
    return sizes


def _v(h, s, sigma, B, eps):
    mins = [min(h, q) for q in s]
    nh = math.fsum(mins)
    return sigma**2 * math.fsum(m * m / q for m, q in zip(mins, s)) / nh**2 + 2 * (B * h / (eps * nh)) ** 2


def _dv_sign(h, s, sigma, B, eps):
    """The sign of v'(h) inside a piece (no user size strictly between the piece's ends):
    v = N / D^2 with N = sigma^2 sum min(h, s_q)^2 / s_q + 2 (B h / eps)^2 and D = n_h, so
    v' has the sign of N' D - 2 N D', where only users with s_q > h move with h."""
    above = [q for q in s if q > h]
    N = sigma**2 * math.fsum(min(h, q) ** 2 / q for q in s) + 2 * (B * h / eps) ** 2
    dN = sigma**2 * math.fsum(2 * h / q for q in above) + 4 * (B / eps) ** 2 * h
    D = math.fsum(min(h, q) for q in s)
    return dN * D - 2 * N * len(above)


@functools.lru_cache(maxsize=64)
def _h_star_cached(s: tuple, sigma, B, eps) -> float:
    return h_star(s, sigma, B, eps)


def h_star(s, sigma, B, eps) -> float:
    """Claim 1's minimiser over [s_1, s_m], piece by piece: on each piece between consecutive
    user sizes v falls, then rises, so its minimum is an end or the root of v', found by
    Brent's root finder (xtol 1e-15 of the piece; a derivative-free minimiser would stop at
    about sqrt(machine epsilon) = 1.5e-8 relative, above validate's 1e-9 stage tolerance)."""
    u = sorted(set(s))
    if len(u) == 1:
        return float(u[0])
    best = None
    for a, b in zip(u, u[1:]):
        mid = lambda h: _dv_sign(h, s, sigma, B, eps)  # noqa: E731 (the piece's v' sign)
        eps_a, eps_b = a + 1e-12 * (b - a), b - 1e-12 * (b - a)
        cands = [a, b]
        if mid(eps_a) < 0 < mid(eps_b):
            cands.append(brentq(mid, eps_a, eps_b, xtol=1e-15 * b, rtol=4 * np.finfo(float).eps))
        for h in cands:
            val = _v(h, s, sigma, B, eps)
            if best is None or val < best[0] - 1e-15 * abs(val):
                best = (val, h)
    return float(best[1])


def _check(dataset, B, epsilon, sigma):
    if not epsilon > 0 or not B > 0 or not sigma >= 0:
        raise ValueError(f"need epsilon > 0, B > 0, sigma >= 0; got {epsilon}, {B}, {sigma}")
    y = dataset.values
    if (y < 0).any() or (y > B).any():
        raise ValueError("values must lie in [0, B]")


def _weights(dataset, B, epsilon, sigma, h=None, normalise=True):
    sizes = _sizes(dataset)
    if h is None:
        # cached on the sorted sizes: the one-release-per-call entries are called 10^5 times
        h = _h_star_cached(tuple(sorted(sizes.values())), sigma, B, epsilon)
    nh = math.fsum(min(h, q) for q in sizes.values()) if normalise else 1.0
    return np.array([min(h, sizes[u]) / (sizes[u] * nh) for u in dataset.user_ids.tolist()])


def _release(dataset, rng, size, c, B, epsilon, sampler="laplace", user_weight=None):
    beta = math.fsum((c * dataset.values).tolist())
    W = {}
    for u, ci in zip(dataset.user_ids.tolist(), c.tolist()):
        W[u] = W.get(u, 0.0) + ci
    b = B * (max(W.values()) if user_weight is None else user_weight(W, c)) / epsilon
    if sampler == "inverse-cdf":
        q = rng.uniform(-0.5, 0.5, size)
        return beta - b * np.sign(q) * np.log1p(-2 * np.abs(q))
    return beta + rng.laplace(0.0, b, size)


# ------------------------------------------------------------ correct alternatives
def loop_brent_inverse_cdf(dataset, rng, size=None, *, B, epsilon, sigma):
    """Correct: dict loops, h* as the root of v' (Brent) on each piece, an inverse-CDF Laplace sampler."""
    _check(dataset, B, epsilon, sigma)
    return _release(dataset, rng, size, _weights(dataset, B, epsilon, sigma), B, epsilon, sampler="inverse-cdf")


def _stage(fn):
    return lambda dataset, *, B, epsilon, sigma: fn(dataset, B, epsilon, sigma)


def _w(dataset, B, epsilon, sigma):
    _check(dataset, B, epsilon, sigma)
    return _weights(dataset, B, epsilon, sigma)


def _stat(dataset, B, epsilon, sigma):
    return math.fsum((_w(dataset, B, epsilon, sigma) * dataset.values).tolist())


def _maxW(dataset, c):
    W = {}
    for u, ci in zip(dataset.user_ids.tolist(), c.tolist()):
        W[u] = W.get(u, 0.0) + ci
    return max(W.values())


staged_loop = ADAPTER(
    "corpus/epasto-wa-staged-loop",
    weights=_stage(_w),
    statistic=_stage(_stat),
    sensitivity=_stage(lambda D, B, e, s: B * _maxW(D, _w(D, B, e, s))),
    noise_scale=_stage(lambda D, B, e, s: B * _maxW(D, _w(D, B, e, s)) / e),
    mechanism=loop_brent_inverse_cdf,
)


# ------------------------------------------------------------ bugs, release only
def unnormalised_weights(dataset, rng, size=None, *, B, epsilon, sigma):
    """BUG (normalisation): c_i = min(h, s_q) / s_q, without the 1/n_h: every release (and its
    noise) is n_h times the paper's."""
    _check(dataset, B, epsilon, sigma)
    return _release(dataset, rng, size, _weights(dataset, B, epsilon, sigma, normalise=False), B, epsilon)


def median_h(dataset, rng, size=None, *, B, epsilon, sigma):
    """BUG (optimality): h = the median user size instead of Claim 1's h*."""
    _check(dataset, B, epsilon, sigma)
    h = float(np.median(list(_sizes(dataset).values())))
    return _release(dataset, rng, size, _weights(dataset, B, epsilon, sigma, h=h), B, epsilon)


def mean_user_weight_noise(dataset, rng, size=None, *, B, epsilon, sigma):
    """BUG (sensitivity): noise for the MEAN user weight B/m instead of B max_q W_q (Lemma 1)."""
    _check(dataset, B, epsilon, sigma)
    return _release(
        dataset, rng, size, _weights(dataset, B, epsilon, sigma), B, epsilon, user_weight=lambda W, c: 1.0 / len(W)
    )


def record_weight_noise(dataset, rng, size=None, *, B, epsilon, sigma):
    """BUG (sensitivity): noise for one record's weight max_i c_i, not one user's total W_q."""
    _check(dataset, B, epsilon, sigma)
    return _release(
        dataset, rng, size, _weights(dataset, B, epsilon, sigma), B, epsilon, user_weight=lambda W, c: float(c.max())
    )


def noise_once_per_call(dataset, rng, size=None, *, B, epsilon, sigma):
    """BUG (independence): one Laplace draw per call, shared by its `size` releases."""
    _check(dataset, B, epsilon, sigma)
    one = _release(dataset, rng, None, _weights(dataset, B, epsilon, sigma), B, epsilon)
    return np.full(size, float(one))


def clips_values(dataset, rng, size=None, *, B, epsilon, sigma):
    """Correct (input policy clip): values outside [0, B] clipped into it, as diffprivlib's bounded
    tools do: the paper's algorithm on the projected data (private: every user still moves the
    release by at most B W_q)."""
    if not epsilon > 0 or not B > 0:
        raise ValueError("epsilon and B must be > 0")
    D = dataset.with_fields(values=np.clip(dataset.values, 0.0, B))
    return _release(D, rng, size, _weights(D, B, epsilon, sigma), B, epsilon)


def one_release_eps(dataset, rng, B, eps, sigma):
    """Correct: one release per call, the parameter named eps, Laplace as a difference of exponentials."""
    _check(dataset, B, eps, sigma)
    c = _weights(dataset, B, eps, sigma)
    beta = math.fsum((c * dataset.values).tolist())
    b = B * _maxW(dataset, c) / eps
    return beta + rng.exponential(b) - rng.exponential(b)


def clips_to_two_B(dataset, rng, size=None, *, B, epsilon, sigma):
    """BUG (domain; declared --inputs clip): clips values to [0, 2B] ("some headroom") while the noise
    covers B: a user moving from 0 to 2B moves the release by twice what the noise covers."""
    if not epsilon > 0 or not B > 0:
        raise ValueError("epsilon and B must be > 0")
    D = dataset.with_fields(values=np.clip(dataset.values, 0.0, 2 * B))
    return _release(D, rng, size, _weights(D, B, epsilon, sigma), B, epsilon)


def five_percent_less_noise(dataset, rng, size=None, *, B, epsilon, sigma):
    """BUG (noise scale, small): Laplace scale 0.95 B max W_q / eps."""
    _check(dataset, B, epsilon, sigma)
    c = _weights(dataset, B, epsilon, sigma)
    return _release(dataset, rng, size, c, B, epsilon, user_weight=lambda W, c: 0.95 * max(W.values()))


def noise_for_B_one(dataset, rng, size=None, *, B, epsilon, sigma):
    """BUG (parameter regime): the noise is calibrated as if B = 1 (max W_q / eps): right at B = 1, the
    value of every fixed case, too small for B > 1."""
    _check(dataset, B, epsilon, sigma)
    c = _weights(dataset, B, epsilon, sigma)
    return _release(dataset, rng, size, c, B, epsilon, user_weight=lambda W, c: max(W.values()) / B)


def sigma_ignored(dataset, rng, size=None, *, B, epsilon, sigma):
    """BUG (parameter regime): h* computed at the default sigma = B / 2 whatever sigma is given: right
    where sigma = B/2 (every fixed case), private but not Claim 1's weights elsewhere."""
    _check(dataset, B, epsilon, sigma)
    return _release(dataset, rng, size, _weights(dataset, B, epsilon, B / 2), B, epsilon)


M = "papers.epasto2020.corpus"
CORPUS = [
    CorpusEntry(
        "epasto2020/wa-loop-brent-inverse-cdf",
        ALGO,
        f"{M}:loop_brent_inverse_cdf",
        "none",
        "pass",
        "none: dict loops, h* as the root of v' by Brent per piece, inverse-CDF Laplace",
        "correct alternative",
    ),
    CorpusEntry(
        "epasto2020/wa-staged-loop",
        ALGO,
        f"{M}:staged_loop",
        "none",
        "pass",
        "none: the same, with its weights, statistic, sensitivity and noise scale exposed",
        "correct alternative",
        exposes="stages",
    ),
    CorpusEntry(
        "epasto2020/wa-unnormalised-weights",
        ALGO,
        f"{M}:unnormalised_weights",
        "normalisation",
        "deviation from reference",
        "the statistic and its noise are n_h times WA_c's: private (the loss "
        "is scale-free) but not the paper's estimate",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/wa-median-h",
        ALGO,
        f"{M}:median_h",
        "optimality",
        "deviation from reference",
        "h = median user size (2 on the Zipf data) instead of h* = 43.1 at eps = 50: private (Lemma 1 "
        "holds for any h), not Claim 1's minimum-variance weights",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/wa-mean-user-weight-noise",
        ALGO,
        f"{M}:mean_user_weight_noise",
        "sensitivity",
        "privacy violation",
        "noise for B/m, not B max W_q: true loss m max W_q eps = 3.686 x 4 = 14.7 "
        "against 4 on the skewed design (1.01 x on the registry's data, which hides it)",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/wa-record-weight-noise",
        ALGO,
        f"{M}:record_weight_noise",
        "sensitivity",
        "privacy violation",
        "noise for the largest record weight: a heavy user of s_q records moves "
        "the release by up to s_q times that: true loss up to 20 x eps on the skewed design",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/wa-noise-once-per-call",
        ALGO,
        f"{M}:noise_once_per_call",
        "independence",
        "not independent",
        "one noise draw repeated for the `size` releases of a call",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/wa-clips-values",
        ALGO,
        f"{M}:clips_values",
        "none",
        "pass",
        "none: values outside [0, B] clipped into it (policy clip, inferred), as diffprivlib does",
        "correct alternative",
    ),
    CorpusEntry(
        "epasto2020/wa-one-release-eps",
        ALGO,
        f"{M}:one_release_eps",
        "none",
        "pass",
        "none: one release per call, parameter eps (--param-map epsilon=eps)",
        "correct alternative",
        param_map=(("epsilon", "eps"),),
    ),
    CorpusEntry(
        "epasto2020/wa-clips-refuse-declared",
        ALGO,
        f"{M}:clips_values",
        "domain",
        "invariant violation",
        "declared --inputs refuse, but a value 2B is clipped and released",
        "planted",
        inputs="refuse",
    ),
    CorpusEntry(
        "epasto2020/wa-clips-to-two-B",
        ALGO,
        f"{M}:clips_to_two_B",
        "domain",
        "privacy violation",
        "declared --inputs clip, clips to [0, 2B] with noise for B: a user at 2B moves the release twice "
        "what the noise covers (loss 2 eps)",
        "planted",
        inputs="clip",
    ),
    CorpusEntry(
        "epasto2020/wa-five-percent-less-noise",
        ALGO,
        f"{M}:five_percent_less_noise",
        "noise scale",
        "privacy violation",
        "Laplace scale 0.95 B max W_q / eps: true loss 1.053 eps",
        "planted",
        small=True,
    ),
    CorpusEntry(
        "epasto2020/wa-noise-for-B-one",
        ALGO,
        f"{M}:noise_for_B_one",
        "parameter regime",
        "privacy violation",
        "noise for B = 1 whatever B: at B = 3 (a generated case) the loss is 3 eps",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/wa-sigma-ignored",
        ALGO,
        f"{M}:sigma_ignored",
        "parameter regime",
        "deviation from reference",
        "h* at sigma = B/2 whatever sigma: private, other weights where sigma "
        "differs (a generated case: sigma = 0.4, B = 3)",
        "planted",
    ),
]
