"""Corpus for Epasto et al. 2020 §3.2, sample limiting at Claim 2's best integer h
(``epasto2020.sample-limiting``).

Written from the paper, independently of reference/epasto2020.py: keep min(h, s_l)
records T of each user, chosen without looking at the values ("arbitrarily selects"),
release (1/n_h) sum_{i in T} y_i + Lap(B h / (eps n_h)), n_h = sum_l min(h, s_l), at the
integer h in [s_1, s_m] minimising Claim 2's v'(h) = sigma^2 / n_h + 2 (B h / (eps n_h))^2
(smaller h on ties), found here by trying every integer. The reference keeps the first h
records; the correct alternatives here keep a uniformly random T drawn afresh for every
release, or the last h. Call shape: ``f(dataset, rng=..., size=..., B=..., epsilon=..., sigma=...)``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from userdp.properties.epasto2020 import ADAPTER

from corpus import CorpusEntry

ALGO = "epasto2020.sample-limiting"


def _groups(dataset) -> dict:
    """user -> its record positions, in record order."""
    g: dict = {}
    for i, u in enumerate(dataset.user_ids.tolist()):
        g.setdefault(u, []).append(i)
    return g


def _check(dataset, B, epsilon, sigma):
    if not epsilon > 0 or not B > 0 or not sigma >= 0:
        raise ValueError(f"need epsilon > 0, B > 0, sigma >= 0; got {epsilon}, {B}, {sigma}")
    y = np.asarray(dataset.values, dtype=float)
    if (y < 0).any() or (y > B).any():
        raise ValueError("values must lie in [0, B]")


@functools.lru_cache(maxsize=64)  # on the sorted sizes: the per-call entries are called 10^5 times
def _best_h_cached(sizes: tuple, sigma, B, eps) -> int:
    return best_h(sizes, sigma, B, eps)


def best_h(sizes, sigma, B, eps) -> int:
    """Claim 2's best integer h, by trying every integer in [s_1, s_m]."""
    best = None
    for h in range(min(sizes), max(sizes) + 1):
        nh = sum(min(h, s) for s in sizes)
        v = sigma**2 / nh + 2 * (B * h / (eps * nh)) ** 2
        if best is None or v < best[0]:
            best = (v, h)
    return best[1]


def _plan(dataset, B, epsilon, sigma, h=None):
    """(groups, h, n_h) for the dataset's public sizes."""
    _check(dataset, B, epsilon, sigma)
    g = _groups(dataset)
    sizes = [len(r) for r in g.values()]
    h = _best_h_cached(tuple(sorted(sizes)), sigma, B, epsilon) if h is None else h
    return g, h, sum(min(h, s) for s in sizes)


# ------------------------------------------------------------ correct alternatives
def random_per_release(dataset, rng, size=None, *, B, epsilon, sigma):
    """Correct: for EVERY release, each user's T is a fresh uniformly random min(h, s_l)-subset
    (random keys, the h smallest), so the `size` releases are independent runs."""
    g, h, nh = _plan(dataset, B, epsilon, sigma)
    k = 1 if size is None else size
    y = np.asarray(dataset.values, dtype=float)
    total = np.zeros(k)
    for recs in g.values():
        if len(recs) <= h:
            total += math.fsum(y[recs].tolist())
        else:
            keys = rng.random((k, len(recs)))
            pick = np.argpartition(keys, h - 1, axis=1)[:, :h]  # a uniform h-subset per release
            total += y[np.asarray(recs)][pick].sum(axis=1)
    out = total / nh + rng.laplace(0.0, B * h / (epsilon * nh), k)
    return out[0] if size is None else out


def _last_h_statistic(dataset, B, epsilon, sigma):
    g, h, nh = _plan(dataset, B, epsilon, sigma)
    return math.fsum(float(dataset.values[i]) for recs in g.values() for i in recs[-h:]) / nh


def _scale(dataset, B, epsilon, sigma):
    _, h, nh = _plan(dataset, B, epsilon, sigma)
    return B * h / (epsilon * nh)


def _last_h_weights(dataset, *, B, epsilon, sigma):
    g, h, nh = _plan(dataset, B, epsilon, sigma)
    c = np.zeros(dataset.n)
    for recs in g.values():
        c[recs[-h:]] = 1.0 / nh
    return c


def _last_h_mechanism(dataset, rng, size=None, *, B, epsilon, sigma):
    return _last_h_statistic(dataset, B, epsilon, sigma) + rng.laplace(0.0, _scale(dataset, B, epsilon, sigma), size)


staged_last_h = ADAPTER(
    "corpus/epasto-sl-staged-last-h",
    weights=_last_h_weights,
    statistic=lambda D, *, B, epsilon, sigma: _last_h_statistic(D, B, epsilon, sigma),
    sensitivity=lambda D, *, B, epsilon, sigma: epsilon * _scale(D, B, epsilon, sigma),
    noise_scale=lambda D, *, B, epsilon, sigma: _scale(D, B, epsilon, sigma),
    mechanism=_last_h_mechanism,
)


# ------------------------------------------------------------ bugs, release only
def _first_h(dataset, rng, size, B, epsilon, sigma, h=None, scale=None):
    g, h, nh = _plan(dataset, B, epsilon, sigma, h)
    beta = math.fsum(float(dataset.values[i]) for recs in g.values() for i in recs[:h]) / nh
    return beta + rng.laplace(0.0, (scale or (lambda h, nh: B * h / (epsilon * nh)))(h, nh), size)


def record_level_noise(dataset, rng, size=None, *, B, epsilon, sigma):
    """BUG (sensitivity): Lap(B / (eps n_h)), one record's weight, not a user's h / n_h."""
    return _first_h(dataset, rng, size, B, epsilon, sigma, scale=lambda h, nh: B / (epsilon * nh))


def no_limiting(dataset, rng, size=None, *, B, epsilon, sigma):
    """BUG (optimality): h = s_m (every record kept), the plain mean with a user-level noise
    B s_m / (eps n): private, not Claim 2's h (3 on the Zipf data at eps = 1)."""
    return _first_h(dataset, rng, size, B, epsilon, sigma, h=max(len(r) for r in _groups(dataset).values()))


def random_T_once_per_call(dataset, rng, size=None, *, B, epsilon, sigma):
    """BUG (independence): one random T per call, shared by its `size` releases (only the
    noise is drawn per release): they are not independent runs of the algorithm."""
    g, h, nh = _plan(dataset, B, epsilon, sigma)
    beta = (
        math.fsum(
            float(dataset.values[i])
            for recs in g.values()
            for i in (recs if len(recs) <= h else rng.choice(recs, h, replace=False))
        )
        / nh
    )
    return beta + rng.laplace(0.0, B * h / (epsilon * nh), size)


def one_release_first_h(dataset, rng, *, B, epsilon, sigma):
    """Correct: one release per call, the first h records of each user, values clipped into [0, B]
    (input policy clip)."""
    D = dataset.with_fields(values=np.clip(dataset.values, 0.0, B))
    return float(_first_h(D, rng, None, B, epsilon, sigma))


def h_plus_one(dataset, rng, size=None, *, B, epsilon, sigma):
    """BUG (optimality, small): h = Claim 2's h + 1 (an off-by-one in the integer search): private,
    a slightly larger variance and another statistic."""
    g, h, nh = _plan(dataset, B, epsilon, sigma)
    return _first_h(dataset, rng, size, B, epsilon, sigma, h=min(h + 1, max(len(r) for r in g.values())))


def noise_ninety_six_percent(dataset, rng, size=None, *, B, epsilon, sigma):
    """BUG (noise scale, small): Lap(0.96 B h / (eps n_h))."""
    return _first_h(dataset, rng, size, B, epsilon, sigma, scale=lambda h, nh: 0.96 * B * h / (epsilon * nh))


M = "papers.epasto2020.corpus_sl"
CORPUS = [
    CorpusEntry(
        "epasto2020/sl-random-per-release",
        ALGO,
        f"{M}:random_per_release",
        "none",
        "pass",
        "none: a uniformly random T for every release, h by trying every integer",
        "correct alternative",
    ),
    CorpusEntry(
        "epasto2020/sl-staged-last-h",
        ALGO,
        f"{M}:staged_last_h",
        "none",
        "pass",
        "none: the last h records of each user, with weights, statistic, sensitivity and noise scale exposed",
        "correct alternative",
        exposes="stages",
    ),
    CorpusEntry(
        "epasto2020/sl-record-level-noise",
        ALGO,
        f"{M}:record_level_noise",
        "sensitivity",
        "privacy violation",
        "noise for one record, B / (eps n_h): true loss h eps = 3 at eps = 1 on the "
        "Zipf data, 4 x 4 = 16 against 4 on the skewed data",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/sl-no-limiting",
        ALGO,
        f"{M}:no_limiting",
        "optimality",
        "deviation from reference",
        "h = s_m = 50 instead of Claim 2's h = 3 at eps = 1: private, a larger variance",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/sl-random-T-once-per-call",
        ALGO,
        f"{M}:random_T_once_per_call",
        "independence",
        "not independent",
        "the random T is shared by the releases of one call",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/sl-one-release-first-h",
        ALGO,
        f"{M}:one_release_first_h",
        "none",
        "pass",
        "none: one release per call, the first h records, values clipped into [0, B] (policy clip, inferred)",
        "correct alternative",
    ),
    CorpusEntry(
        "epasto2020/sl-h-plus-one",
        ALGO,
        f"{M}:h_plus_one",
        "optimality",
        "deviation from reference",
        "h one above Claim 2's: private, not the minimum-variance h",
        "planted",
        small=True,
    ),
    CorpusEntry(
        "epasto2020/sl-noise-ninety-six-percent",
        ALGO,
        f"{M}:noise_ninety_six_percent",
        "noise scale",
        "privacy violation",
        "Laplace scale 0.96 B h / (eps n_h): true loss eps / 0.96 = 1.042 eps",
        "planted",
        small=True,
    ),
]
