"""Planted bugs for Desfontaines et al. 2022 (private partition selection): Wycheproof-style records.
"spec §N" is a point of docs/papers/desfontaines2022.md, "The specification, by section".

Each bug is a separate implementation (a ``SelectionAdapter`` for the property suite, or an audit
mechanism ``mechanism(dataset, rng, size)`` with the claim it wrongly makes), with its name, bug type,
effect and source. tests/papers/desfontaines2022/test_desfontaines2022.py asserts that each one is
caught: by a property ("invariant violation") or by the audit ("violation").
"""

from __future__ import annotations

import math

import numpy as np

from userdp.properties.desfontaines2022 import SelectionAdapter
from userdp.reference import desfontaines2022 as R
from userdp.reference.claims import ApproxDP
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import ADD_REMOVE_USER, NeighbourPair
from planted import PlantedBug

__all__ = ["BUGS", "BY_NAME", "singletons_pair", "recursive_curve"]


def _adapter(name: str, **changes) -> SelectionAdapter:
    stages = dict(
        weights=R.bound_contributions, statistic=R.statistic, keep_probability=R.keep_probability, mechanism=R.mechanism
    )
    stages.update(changes)
    return SelectionAdapter(name, **stages)


def recursive_curve(n, eps: float, delta: float, *, start: float = 0.0, drop_term: bool = True, shift: int = 0):
    """A keep curve by the §3.1 recursion with one knob changed: pi(0) = ``start``, the drop term of the
    min left out, or the index shifted (pi(n) read at n + ``shift``)."""
    n = np.asarray(n)
    top = int(n.max()) + shift + 1
    pi = [start]
    for _ in range(top):
        x = pi[-1]
        terms = [math.exp(min(eps, 700.0)) * x + delta, 1.0]
        if drop_term:
            terms.append(-math.expm1(-eps) + math.exp(-eps) * (x + delta))
        pi.append(min(terms))
    return np.array(pi)[n + shift]


def _kp(curve):
    """A keep_probability stage from a curve at the linear split (eps / k, delta / k)."""

    def keep_probability(n, epsilon, delta, max_partitions_contributed=1, delta_split="linear", pre_threshold=1):
        return curve(n, epsilon / max_partitions_contributed, delta / max_partitions_contributed)

    return keep_probability


def _kp_delta_not_split(n, epsilon, delta, max_partitions_contributed=1, delta_split="linear", pre_threshold=1):
    return recursive_curve(n, epsilon / max_partitions_contributed, delta)  # BUG: delta' = delta, eps' = eps / k


def _kp_n1_off_by_one(n, epsilon, delta, max_partitions_contributed=1, delta_split="linear", pre_threshold=1):
    """The closed form of §3.2 with n1 = floor(...) (the leading 1 + dropped)."""
    eps, d = epsilon / max_partitions_contributed, delta / max_partitions_contributed
    n = np.asarray(n, float)
    n1 = math.floor(math.log1p(math.tanh(eps / 2) * (1 / d - 1)) / eps)  # BUG: no 1 +
    grow = lambda x: d * np.expm1(x * eps) / math.expm1(eps)  # noqa: E731
    pi1, c = float(grow(n1)), d / math.expm1(eps)
    drop = pi1 - (1 - pi1 + c) * np.expm1(-(n - n1) * eps)
    return np.where(n <= n1, grow(n), np.minimum(drop, 1.0))


# ---------------------------------------------------------------- bounding and counting
def _bound_first_k(dataset, max_partitions_contributed, rng):
    """Keeps each user's k smallest partition keys (rng unused)."""
    keep = []
    for u in dataset.users.tolist():
        idx = dataset.records_of(u)
        first = sorted(set(dataset.partition_ids[idx].tolist()))[:max_partitions_contributed]  # BUG: not random
        keep += [i for i in idx.tolist() if dataset.partition_ids[i] in first]
    return dataset.take(np.array(sorted(keep)))


def _bound_by_values(dataset, max_partitions_contributed, rng):
    """Keeps each user's k partitions of largest value sum, ties broken at random."""
    keep = []
    for u in dataset.users.tolist():
        idx = dataset.records_of(u)
        parts = sorted(set(dataset.partition_ids[idx].tolist()))
        score = {p: dataset.values[idx][dataset.partition_ids[idx] == p].sum() + 1e-9 * rng.random() for p in parts}
        top = sorted(parts, key=lambda p: -score[p])[:max_partitions_contributed]  # BUG: reads the values
        keep += [i for i in idx.tolist() if dataset.partition_ids[i] in top]
    return dataset.take(np.array(sorted(keep)))


def _bound_rows(dataset, max_partitions_contributed, rng):
    """Keeps k random RECORDS per user (an Linf-style bound read as L0)."""
    keep = []
    for u in dataset.users.tolist():
        idx = dataset.records_of(u)
        keep += rng.permutation(idx)[:max_partitions_contributed].tolist()  # BUG: k rows, not k partitions
    return dataset.take(np.array(sorted(keep)))


def _bound_none(dataset, max_partitions_contributed, rng):
    return dataset  # BUG: no cross-partition bounding


def _count_rows(dataset):
    keys, n = np.unique(dataset.partition_ids, return_counts=True)  # BUG: rows, not distinct users
    return keys, n


# ------------------------------------------------------------------------ audit
EPS, DELTA, KAPPA = 1.0, 0.2, 4  # a large delta: the audit's (eps, delta) test resolves it


def singletons_pair(k: int = KAPPA) -> NeighbourPair:
    """One user in partition 0 vs the same plus a user in k NEW partitions 1..k (n: 0 -> 1 in each)."""
    D = UserDataset.from_arrays(np.zeros(1), [0], partition_ids=[0])
    D2 = UserDataset.from_arrays(np.zeros(k + 1), [0] + [1] * k, partition_ids=np.arange(k + 1))
    return NeighbourPair(D, D2, ADD_REMOVE_USER.name, 1, f"add a user in {k} new partitions")


def _mech_delta_not_split(D, rng, size):
    keys = np.arange(KAPPA + 1)
    n_keys, counts = R._counts_per_draw(D, KAPPA, rng, size)
    kept = rng.random(counts.shape) < recursive_curve(counts, EPS / KAPPA, DELTA)  # BUG: delta per partition
    out = np.zeros((size, keys.size), dtype=np.int8)
    out[:, np.searchsorted(keys, n_keys)] = kept
    return out


BUGS = [
    PlantedBug(
        "delta-not-split",
        "accounting",
        "delta' = delta with eps' = eps / k: a user in k new partitions is revealed with probability ~ k delta",
        "spec §10.5: splitting eps over the k partitions a user touches but not delta",
        adapter=_adapter("delta-not-split", keep_probability=_kp_delta_not_split),
        mechanism=_mech_delta_not_split,
        claim=ApproxDP(EPS, DELTA),
        pairs=[singletons_pair()],
    ),
    PlantedBug(
        "crossover-off-by-one",
        "index error",
        "n1 without the leading 1 +: the curve leaves the keep bound one step early and rises above it",
        "spec §10.7 (§3.2's n1 = 1 + floor(...))",
        adapter=_adapter("crossover-off-by-one", keep_probability=_kp_n1_off_by_one),
    ),
    PlantedBug(
        "recurrence-index-shift",
        "index error",
        "pi(n) read at n + 1: pi(0) = delta and every count is treated as one more user",
        "0-based vs 1-based indexing of the recursion pi(n) = f(pi(n - 1))",
        adapter=_adapter(
            "recurrence-index-shift", keep_probability=_kp(lambda n, e, d: recursive_curve(n, e, d, shift=1))
        ),
    ),
    PlantedBug(
        "pi0-positive",
        "wrong boundary condition (ambiguity alternative)",
        "pi(0) = delta: a partition no user holds is output with probability delta, so its key (a candidate "
        "list entry) appears without data",
        "§2's boundary pi(0) = 0 read as 'the first step may spend delta' (the recursion started at delta)",
        adapter=_adapter("pi0-positive", keep_probability=_kp(lambda n, e, d: recursive_curve(n, e, d, start=d))),
    ),
    PlantedBug(
        "drop-term-missing",
        "noise-formula",
        "the recursion without its second term 1 - e^-eps (1 - pi - delta): the curve rises too fast near 1 "
        "and breaks the drop inequality at n ~ n1",
        "spec §10.6 (an uncapped recursion); the keep bound alone is the familiar half of (eps, delta)-DP",
        adapter=_adapter(
            "drop-term-missing", keep_probability=_kp(lambda n, e, d: recursive_curve(n, e, d, drop_term=False))
        ),
    ),
    PlantedBug(
        "count-rows",
        "per-record-bound (ambiguity alternative)",
        "n counts rows, not distinct users: one user with many rows in a partition moves its count by many",
        "§1: several rows of a user in one partition count once; a COUNT(*) in place of COUNT(DISTINCT user)",
        adapter=_adapter("count-rows", statistic=_count_rows),
    ),
    PlantedBug(
        "first-k-partitions",
        "non-uniform sampling",
        "each user keeps its k smallest keys: the kept set is deterministic, not uniform, and biased "
        "towards small keys",
        "spec §4 (bounding by uniform sampling); taking the first k of a sorted list",
        adapter=_adapter("first-k-partitions", weights=_bound_first_k),
    ),
    PlantedBug(
        "sampling-by-values",
        "data-dependent-choice",
        "each user keeps the k partitions of largest value: the choice reads the values",
        "keeping a user's 'most important' partitions, a common heuristic",
        adapter=_adapter("sampling-by-values", weights=_bound_by_values),
    ),
    PlantedBug(
        "bound-rows-not-partitions",
        "wrong contribution bound (ambiguity alternative)",
        "k random records per user (Linf read as L0): a user with several rows in one partition keeps fewer "
        "than min(k, d) partitions",
        "max_contributions (rows) confused with max_partitions_contributed (PipelineDP names both)",
        adapter=_adapter("bound-rows-not-partitions", weights=_bound_rows),
    ),
    PlantedBug(
        "no-cross-partition-bounding",
        "missing-clipping",
        "no bounding: a user in d > k partitions moves d counts while the budget is split over k",
        "spec §9.2 (n must be taken after bounding); a caller promise taken for a check",
        adapter=_adapter("no-cross-partition-bounding", weights=_bound_none),
    ),
]

BY_NAME = {b.name: b for b in BUGS}
