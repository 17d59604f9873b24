"""Corpus for Desfontaines et al. 2022: the optimal partition selection (``desfontaines2022.optimal``).
"spec §N" is a point of docs/papers/desfontaines2022.md, "The specification, by section".

Every implementation is written here from the paper and from the public descriptions of the upstream bugs
(each entry names its source), independently of reference/desfontaines2022.py and without any code of
those projects, in the three call shapes: batched ``f(dataset, rng, size, *, epsilon, delta,
max_partitions_contributed, partitions)``, one release per call, and an Adapter with stages. The release
is 0/1 over the candidate keys ``partitions``.
"""

from __future__ import annotations

import math

import numpy as np

from userdp.properties.desfontaines2022 import SelectionAdapter

from corpus import CorpusEntry

ALGO = "desfontaines2022.optimal"


# ------------------------------------------------------------------ building blocks (from the paper)
def _check(epsilon, delta, k):
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if not (isinstance(k, int) and k >= 1):
        raise ValueError(f"max_partitions_contributed must be an int >= 1, got {k}")


def _memberships(dataset) -> dict:
    """{user: sorted list of its distinct partitions}."""
    out: dict = {}
    for u, p in zip(dataset.user_ids.tolist(), dataset.partition_ids.tolist()):
        out.setdefault(u, set()).add(p)
    return {u: sorted(s) for u, s in out.items()}


def _bounded_counts(dataset, k, rng, size, key=lambda p: p) -> tuple[list, np.ndarray]:
    """(partitions, (size, K) distinct users) after each user keeps k of its groups uniformly at random, in each of
    ``size`` draws; ``key`` maps a partition to the group the bound is counted on (the identity: the partition)."""
    members = _memberships(dataset)
    parts = sorted({p for ps in members.values() for p in ps})
    col = {p: j for j, p in enumerate(parts)}
    counts = np.zeros((size, len(parts)), dtype=np.int64)
    for ps in members.values():
        groups = sorted({key(p) for p in ps})
        if len(groups) <= k:
            keep = np.ones((size, len(groups)), dtype=bool)
        else:  # a uniformly random k-subset per draw: the k smallest of independent uniforms
            keep = np.argsort(np.argsort(rng.random((size, len(groups))), axis=1), axis=1) < k
        for g_i, g in enumerate(groups):
            for p in ps:
                if key(p) == g:
                    counts[:, col[p]] += keep[:, g_i]
    return parts, counts


def _pi(n: int, eps: float, delta: float) -> float:
    """The §3.1 recursion, from scratch."""
    x = 0.0
    for _ in range(n):
        x = min(math.exp(eps) * x + delta, 1 - math.exp(-eps) * (1 - x - delta), 1.0)
    return x


def _curve(n_max: int, eps: float, delta: float) -> np.ndarray:
    return np.array([_pi(n, eps, delta) for n in range(n_max + 1)])


def _spread(parts, kept, partitions) -> np.ndarray:
    """(size, len(partitions)) 0/1: the decisions ``kept`` (size, K) of ``parts`` placed over the candidates."""
    out = np.zeros((kept.shape[0], len(partitions)), dtype=np.int8)
    for i, p in enumerate(partitions):
        if p in parts:
            out[:, i] = kept[:, parts.index(p)]
    return out


def _release(parts, counts, partitions, prob, rng) -> np.ndarray:
    """Each present partition kept with probability prob[its count], independently."""
    return _spread(parts, rng.random(counts.shape) < prob[counts], partitions)


def _batched(many):
    """A batched target from ``many(dataset, rng, size, epsilon, delta, k, partitions) -> (size, k)``."""

    def f(dataset, rng, size=None, *, epsilon, delta, max_partitions_contributed, partitions):
        _check(epsilon, delta, max_partitions_contributed)
        k, cand = max_partitions_contributed, list(partitions)
        out = many(dataset, rng, 1 if size is None else size, epsilon, delta, k, cand)
        return out[0] if size is None else out

    return f


# ------------------------------------------------------------------ correct alternatives
def _recursion_bernoulli(dataset, rng, size, epsilon, delta, k, partitions):
    parts, counts = _bounded_counts(dataset, k, rng, size)
    return _release(parts, counts, partitions, _curve(int(counts.max()), epsilon / k, delta / k), rng)


recursion_bernoulli = _batched(_recursion_bernoulli)


def _closed_form(n, eps, delta):
    """§3.2's three regimes, from the paper's crossovers."""
    if n <= 0:
        return 0.0
    n1 = 1 + math.floor(math.log(1 + math.tanh(eps / 2) * (1 / delta - 1)) / eps)
    grow = lambda m: delta * math.expm1(m * eps) / math.expm1(eps)  # noqa: E731
    if n <= n1:
        return grow(n)
    c = delta / math.expm1(eps)
    return min(1.0, 1 + c - math.exp(-(n - n1) * eps) * (1 - grow(n1) + c))


def geometric_threshold_one(dataset, rng, *, epsilon, delta, max_partitions_contributed, partitions):
    """Correct, one release per call: the truncated-geometric view, noise Z with P[n + Z >= t] = pi(n), drawn by
    inverse CDF over the closed form's increments, compared with the threshold."""
    k = max_partitions_contributed
    _check(epsilon, delta, k)
    eps, d = epsilon / k, delta / k
    parts, counts = _bounded_counts(dataset, k, rng, 1)
    cdf = [0.0]
    while cdf[-1] < 1.0 and len(cdf) < 10**5:
        cdf.append(_closed_form(len(cdf), eps, d))  # P[M <= m] = pi(m), M = t - Z
    m = np.searchsorted(np.array(cdf), rng.random(len(parts)), side="right")  # one M per partition
    return _spread(parts, (m <= counts[0])[None, :], list(partitions))[0]  # n + Z >= t  iff  M <= n


def _stage_weights(dataset, max_partitions_contributed, rng):
    keep = []
    for u, parts in _memberships(dataset).items():
        chosen = set(rng.choice(parts, size=min(len(parts), max_partitions_contributed), replace=False).tolist())
        keep += [i for i in np.flatnonzero(dataset.user_ids == u).tolist() if dataset.partition_ids[i] in chosen]
    return dataset.take(np.array(sorted(keep)))


def _stage_statistic(dataset):
    c: dict = {}
    for _, p in {(u, p) for u, p in zip(dataset.user_ids.tolist(), dataset.partition_ids.tolist())}:
        c[p] = c.get(p, 0) + 1
    keys = sorted(c)
    return np.array(keys), np.array([c[p] for p in keys])


def _stage_keep(n, epsilon, delta, max_partitions_contributed=1):
    k = max_partitions_contributed
    return np.array([_closed_form(int(v), epsilon / k, delta / k) for v in np.ravel(n)]).reshape(np.shape(n))


def _stage_many(dataset, rng, size, epsilon, delta, k, partitions):
    parts, counts = _bounded_counts(dataset, k, rng, size)
    return _release(parts, counts, partitions, _stage_keep(np.arange(int(counts.max()) + 1), epsilon, delta, k), rng)


staged_closed_form = SelectionAdapter(
    "corpus/desfontaines-staged-closed-form",
    weights=_stage_weights,
    statistic=_stage_statistic,
    keep_probability=_stage_keep,
    mechanism=_batched(_stage_many),
)


# ------------------------------------------------------------------ upstream bugs, from their public descriptions
def _laplace_tau_gaussian_noise(dataset, rng, size, epsilon, delta, k, partitions):
    """BUG (opendp/smartnoise-sdk issue 204): tau computed for Laplace noise (1 - b ln(2 delta / k), b = k / eps),
    noise drawn from a Gaussian calibrated by the classical (eps, delta) formula: a new partition (n = 1)
    passes tau with probability far above delta."""
    parts, counts = _bounded_counts(dataset, k, rng, size)
    b = k / epsilon
    tau = 1 - b * math.log(2 * delta / k)
    sigma = math.sqrt(2 * math.log(1.25 / delta)) * math.sqrt(k) / epsilon  # the Gaussian mechanism's sigma
    return _spread(parts, counts + rng.normal(0.0, sigma, counts.shape) > tau, partitions)


laplace_tau_gaussian_noise = _batched(_laplace_tau_gaussian_noise)


def _select_before_bounding(dataset, rng, size, epsilon, delta, k, partitions):
    """BUG (google/differential-privacy PR 84, Privacy on Beam DistinctPerKey): the distinct users are counted on
    the unbounded data, then selected with eps / k, delta / k: a user in more than k partitions moves them all."""
    parts, counts = _bounded_counts(dataset, 2**31, rng, size)  # no cross-partition bounding before the count
    return _release(parts, counts, partitions, _curve(int(counts.max()), epsilon / k, delta / k), rng)


select_before_bounding = _batched(_select_before_bounding)


def _stale_bound_after_rekey(dataset, rng, size, epsilon, delta, k, partitions):
    """BUG (opendp/opendp issue 2949: a per-group bound kept after the grouping key changed): the k-bound is
    enforced on a coarser key (partition // 2) than the one selected on, so a user keeps up to 2k partitions
    while the budget is split over k."""
    parts, counts = _bounded_counts(dataset, k, rng, size, key=lambda p: p // 2)
    return _release(parts, counts, partitions, _curve(int(counts.max()), epsilon / k, delta / k), rng)


stale_bound_after_rekey = _batched(_stale_bound_after_rekey)


def _kappa_one_budget(dataset, rng, size, epsilon, delta, k, partitions):
    """BUG (opendp/smartnoise-sdk issue 568: a threshold computed as if each user were in one partition when
    users are in several): users are bounded to k partitions, but each partition gets the whole (eps, delta)."""
    parts, counts = _bounded_counts(dataset, k, rng, size)
    return _release(parts, counts, partitions, _curve(int(counts.max()), epsilon, delta), rng)


kappa_one_budget = _batched(_kappa_one_budget)


def _delta_not_split(dataset, rng, size, epsilon, delta, k, partitions):
    """BUG (planted, spec §10.5; no upstream report): eps split over k, delta not."""
    parts, counts = _bounded_counts(dataset, k, rng, size)
    return _release(parts, counts, partitions, _curve(int(counts.max()), epsilon / k, delta), rng)


delta_not_split = _batched(_delta_not_split)


def _absent_keys_kept(dataset, rng, size, epsilon, delta, k, partitions):
    """BUG (planted, pi(0) > 0): every candidate key absent from the data is output with probability delta / k."""
    parts, counts = _bounded_counts(dataset, k, rng, size)
    out = _release(parts, counts, partitions, _curve(int(counts.max()), epsilon / k, delta / k), rng)
    absent = [i for i, p in enumerate(partitions) if p not in parts]
    out[:, absent] = rng.random((size, len(absent))) < delta / k
    return out


absent_keys_kept = _batched(_absent_keys_kept)


def one_uniform_per_call(dataset, rng, size=None, *, epsilon, delta, max_partitions_contributed, partitions):
    """BUG (independence): one draw of the bounding and the decisions per call, shared by all ``size`` releases."""
    k = max_partitions_contributed
    _check(epsilon, delta, k)
    parts, counts = _bounded_counts(dataset, k, rng, 1)
    row = _release(parts, counts, list(partitions), _curve(int(counts.max()), epsilon / k, delta / k), rng)[0]
    return row if size is None else np.tile(row, (size, 1))


def _count_rows(dataset, rng, size, epsilon, delta, k, partitions):
    """BUG (planted, §1: rows counted, not distinct users): a user's extra rows in a kept partition count too."""
    parts, counts = _bounded_counts(dataset, k, rng, size)
    rows: dict = {}
    for u, p in zip(dataset.user_ids.tolist(), dataset.partition_ids.tolist()):
        rows[(u, p)] = rows.get((u, p), 0) + 1
    extra = np.zeros(len(parts), dtype=np.int64)  # rows beyond a user's first, per partition
    for (_, p), r in rows.items():
        extra[parts.index(p)] += r - 1
    n = counts + (counts > 0) * extra  # an approximation of COUNT(*) after bounding (exact for k >= every d_u)
    return _release(parts, n, partitions, _curve(int(n.max()), epsilon / k, delta / k), rng)


count_rows = _batched(_count_rows)

_M = "papers.desfontaines2022.corpus:"
_UP = "re-implemented from its public description; "
CORPUS = [
    CorpusEntry(
        "desfontaines2022/recursion-bernoulli",
        ALGO,
        _M + "recursion_bernoulli",
        "none",
        "pass",
        "correct: the §3.1 recursion and a Bernoulli draw per partition, bounding by a permutation per user",
        "correct alternative",
    ),
    CorpusEntry(
        "desfontaines2022/geometric-threshold",
        ALGO,
        _M + "geometric_threshold_one",
        "none",
        "pass",
        "correct, one release per call: noise plus threshold (the truncated-geometric view), closed form of §3.2",
        "correct alternative",
    ),
    CorpusEntry(
        "desfontaines2022/staged-closed-form",
        ALGO,
        _M + "staged_closed_form",
        "none",
        "pass",
        "correct, with stages: bounding by rng.choice, distinct users by sets, the closed form",
        "correct alternative",
        exposes="stages",
    ),
    CorpusEntry(
        "desfontaines2022/laplace-tau-gaussian-noise",
        ALGO,
        _M + "laplace_tau_gaussian_noise",
        "noise scale",
        "privacy violation",
        _UP + "https://github.com/opendp/smartnoise-sdk/issues/204 (fixed by PR 211): the Laplace tau with "
        "Gaussian noise; a new partition is kept with probability ~0.05 at delta = 1e-3",
        "planted",
    ),
    CorpusEntry(
        "desfontaines2022/select-before-bounding",
        ALGO,
        _M + "select_before_bounding",
        "sensitivity",
        "privacy violation",
        _UP + "https://github.com/google/differential-privacy/pull/84 (Privacy on Beam DistinctPerKey): counts "
        "before cross-partition bounding; a user in 6 partitions with the budget split over 3: loss 2 eps",
        "planted",
    ),
    CorpusEntry(
        "desfontaines2022/stale-bound-after-rekey",
        ALGO,
        _M + "stale_bound_after_rekey",
        "sensitivity",
        "privacy violation",
        _UP + "https://github.com/opendp/opendp/issues/2949 (a bound kept after the grouping changed): the "
        "k-bound on partition // 2, selection per partition; up to 2k partitions per user",
        "planted",
    ),
    CorpusEntry(
        "desfontaines2022/kappa-one-budget",
        ALGO,
        _M + "kappa_one_budget",
        "budget",
        "privacy violation",
        _UP + "https://github.com/opendp/smartnoise-sdk/issues/568 (a threshold for one partition per user where "
        "users have several): each of k partitions gets the whole (eps, delta); loss k eps",
        "planted",
    ),
    CorpusEntry(
        "desfontaines2022/delta-not-split",
        ALGO,
        _M + "delta_not_split",
        "accounting",
        "privacy violation",
        "spec §10.5 (no upstream report found): delta' = delta; a user in k new partitions shows with "
        "probability ~ k delta",
        "planted",
    ),
    CorpusEntry(
        "desfontaines2022/absent-keys-kept",
        ALGO,
        _M + "absent_keys_kept",
        "structure",
        "deviation from reference",
        "pi(0) = delta / k: a candidate key no record holds is released (private here, the candidates being "
        "public, but not the paper's mechanism: an absent key must never appear)",
        "planted",
    ),
    CorpusEntry(
        "desfontaines2022/one-uniform-per-call",
        ALGO,
        _M + "one_uniform_per_call",
        "independence",
        "not independent",
        "one uniform per partition and call: the size releases of a call are identical",
        "planted",
    ),
    CorpusEntry(
        "desfontaines2022/count-rows",
        ALGO,
        _M + "count_rows",
        "sensitivity",
        "privacy violation",
        "rows counted, not distinct users (§1): a user's r rows in a partition raise its count by r. The designs' "
        "users have one row per partition, so without the pair search the release only deviates; the search "
        "(eps = 1, delta = 1e-3, kappa = 2, partitions of n1' - 1 = 12 users) finds a user of 5 rows in each of "
        "5 keys (2 kept): pi(12) = 0.31 against pi(17) = 0.93, and a new key at pi(5) = 0.0086 > delta; eps_lb 5.56 "
        "against 1 "
        "at seed 0",
        "planted",
    ),
]
