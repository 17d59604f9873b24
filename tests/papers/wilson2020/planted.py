"""Planted bugs for Wilson et al. 2020 (bounded user contribution over public partitions). "spec §N" is
a point of docs/papers/wilson2020.md, "The specification, by section".

Each bug is a separate implementation: a ``BoundAdapter`` with one stage changed (for the property
suite), and where the bug reaches the release, an audit mechanism ``mechanism(dataset, rng, size)``
with the claim it wrongly makes and the pair that shows it. tests/papers/wilson2020/test_wilson2020.py
asserts that each is caught, by a property ("invariant violation") or by the audit ("violation").
Among them, the other readings docs/papers/wilson2020.md marks (per-record clamp for the per-user sum
variant; the MEAN's sum over count; bounding over every partition, then the public filter; the
classical Gaussian sigma where the libraries use the analytic one) and bounding-order bugs (a clamp
applied after aggregating the partition; L0 counted before the public filter).
"""

from __future__ import annotations

import math

import numpy as np

from userdp.properties.wilson2020 import BoundAdapter
from userdp.reference import wilson2020 as W
from userdp.reference.claims import PureDP
from userdp.reference.data import EMPTY, UserDataset
from userdp.reference.mechanisms import gaussian_sigma_classical
from userdp.reference.neighbours import ADD_REMOVE_USER, NeighbourPair
from planted import PlantedBug

__all__ = ["BUGS", "BY_NAME", "EPS", "spread_user_pair"]

EPS = 1.0


def _adapter(name: str, **changes) -> BoundAdapter:
    stages = dict(bound=W.bound, statistic=W.statistic, sensitivity=W.sensitivity, noise_scale=W.noise_scale)
    stages.update(changes)
    return BoundAdapter(name, **stages)


# --------------------------------------------------------------- bounding bugs
def _bound_l0_plus_one(dataset, public_partitions, L0, Linf, rng, bounding="records"):
    return W.bound(dataset, public_partitions, L0 + 1, Linf, rng, bounding)  # BUG: L0 + 1 partitions kept


def _bound_no_linf(dataset, public_partitions, L0, Linf, rng, bounding="records"):
    return W.bound(dataset, public_partitions, L0, None, rng, "sum")  # BUG: every record of a partition kept


def _bound_largest(dataset, public_partitions, L0, Linf, rng, bounding="records"):
    """BUG: each user keeps the L0 partitions of largest value sum (and its Linf largest records)."""
    keep = []
    pub = np.isin(dataset.partition_ids, list(public_partitions))
    for u in np.unique(dataset.user_ids[pub]):
        mine = np.flatnonzero(pub & (dataset.user_ids == u))
        parts = np.unique(dataset.partition_ids[mine])
        sums = [dataset.values[mine][dataset.partition_ids[mine] == p].sum() for p in parts]
        for p in parts[np.argsort(sums, kind="stable")[::-1][:L0]]:
            cell = mine[dataset.partition_ids[mine] == p]
            cell = cell[np.argsort(dataset.values[cell], kind="stable")[::-1]]
            keep.extend(cell if Linf is None else cell[:Linf])
    return dataset.take(np.sort(np.array(keep, dtype=np.int64))) if keep else EMPTY


def _bound_before_public_filter(dataset, public_partitions, L0, Linf, rng, bounding="records"):
    """BUG (the other order): L0 partitions sampled among ALL the user's partitions, then the
    non-public ones dropped, so a user keeps fewer public partitions than it could."""
    every = np.unique(dataset.partition_ids).tolist()
    B = W.bound(dataset, every, L0, Linf, rng, bounding)
    if B is EMPTY:
        return EMPTY
    idx = np.flatnonzero(np.isin(B.partition_ids, list(public_partitions)))
    return B.take(idx) if idx.size else EMPTY


# --------------------------------------------------------------- statistic bugs
def _statistic_clamp_after_aggregate(bounded, public_partitions, metric, lower=None, upper=None, bounding="records"):
    """BUG (bounding order): the partition's TOTAL over all users is clamped, not each contribution."""
    raw = W.statistic(
        bounded,
        public_partitions,
        metric,
        -1e50 if metric != "count" else None,
        1e50 if metric != "count" else None,
        bounding,
    )
    return raw if metric == "count" else np.clip(raw, lower, upper)


def _statistic_sum_clamp_per_record(bounded, public_partitions, metric, lower=None, upper=None, bounding="records"):
    """BUG (the other reading of §3.2 (b)): each record clamped, then summed, with no row sampling."""
    return W.statistic(bounded, public_partitions, metric, lower, upper, "records" if bounding == "sum" else bounding)


# --------------------------------------------------------------- sensitivity bugs
def _sens_no_abs(metric, L0, Linf, lower=None, upper=None, bounding="records", norm="l1"):
    """BUG (PipelineDP PR 384 (a)): max(lower, upper) instead of max(|lower|, |upper|)."""
    if metric == "count":
        return W.sensitivity(metric, L0, Linf, lower, upper, bounding, norm)
    lv = max(lower, upper) * (1 if bounding == "sum" else Linf)
    return (L0 if norm == "l1" else math.sqrt(L0)) * lv


def _noise_no_abs(metric, L0, Linf, epsilon, lower=None, upper=None, delta=0.0, noise="laplace", bounding="records"):
    if noise == "laplace" and metric != "mean":
        return _sens_no_abs(metric, L0, Linf, lower, upper, bounding, "l1") / epsilon
    return W.noise_scale(metric, L0, Linf, epsilon, lower, upper, delta, noise, bounding)


def _sens_replace_one(metric, L0, Linf, lower=None, upper=None, bounding="records", norm="l1"):
    """The other relation (spec §1): Linf (upper - lower), replace-one-user's range, not add/remove's."""
    if metric == "count":
        return W.sensitivity(metric, L0, Linf, lower, upper, bounding, norm)
    lv = (upper - lower) * (1 if bounding == "sum" else Linf)
    return (L0 if norm == "l1" else math.sqrt(L0)) * lv


def _sens_l1_for_l2(metric, L0, Linf, lower=None, upper=None, bounding="records", norm="l1"):
    """BUG: the L2 sensitivity computed as Linf_value (the sqrt(L0) factor dropped, a stale
    per-partition bound: OpenDP issue 2949's 'sqrt(100) = 10 where it is 100' in reverse)."""
    if norm == "l2":
        return W.partition_sensitivity(metric, Linf, lower, upper, bounding)
    return W.sensitivity(metric, L0, Linf, lower, upper, bounding, norm)


def _noise_classical(metric, L0, Linf, epsilon, lower=None, upper=None, delta=0.0, noise="laplace", bounding="records"):
    """The other reading of spec §10.6: the classical sigma, larger than the analytic one (private)."""
    if noise == "laplace" or metric == "mean" or epsilon >= 1:
        return W.noise_scale(metric, L0, Linf, epsilon, lower, upper, delta, noise, bounding)
    return gaussian_sigma_classical(W.sensitivity(metric, L0, Linf, lower, upper, bounding, "l2"), epsilon, delta)


def _noise_mean_sum_over_count(
    metric, L0, Linf, epsilon, lower=None, upper=None, delta=0.0, noise="laplace", bounding="records"
):
    """The other MEAN of spec §4.1: the plain sum's scale (Linf max|v|) for the sum, not the normalised one's."""
    out = W.noise_scale(metric, L0, Linf, epsilon, lower, upper, delta, noise, bounding)
    if metric != "mean":
        return out
    return out[0], W.noise_scale("sum", L0, Linf, epsilon / 2, lower, upper, delta / 2, noise, "records")


# --------------------------------------------------------------- audit mechanisms and pairs
def spread_user_pair(parts: int = 3, records: int = 3, value: float = 1.0) -> NeighbourPair:
    """Two users in partitions 0..2 vs the same plus a user of ``records`` records at ``value`` in
    each of ``parts`` partitions: the added user moves every partition it can (the relation across
    partitions, spec §1)."""
    D = UserDataset.from_arrays([0.5, 0.5, 0.25], [0, 1, 1], partition_ids=[0, 1, 2])
    p = np.repeat(np.arange(parts), records)
    D2 = UserDataset.from_arrays(
        np.r_[D.values, np.full(p.size, value)],
        np.r_[D.user_ids, np.full(p.size, 7)],
        partition_ids=np.r_[D.partition_ids, p],
    )
    return NeighbourPair(
        D, D2, ADD_REMOVE_USER.name, 7, f"add a user of {records} records at {value} in {parts} partitions"
    )


_PUBLIC = [0, 1, 2]


# Each buggy release below is the reference's with one thing changed, written as a reference call
# whose epsilon is chosen so that its noise is the bug's noise (vectorised: 10^5 releases in a call).
def _mech_l0_plus_one(L0, Linf):
    def mech(D, rng, size):
        # BUG: L0 + 1 partitions kept, noise for L0: the reference at L0 + 1 has scale (L0 + 1) Linf / eps';
        # eps' = (L0 + 1) / L0 * EPS makes it L0 Linf / EPS, the bug's scale
        return W.mechanism(D, _PUBLIC, "count", L0 + 1, Linf, (L0 + 1) / L0 * EPS, rng, size)

    return mech


def _mech_no_linf(L0, Linf, top: float = 4.0):
    def mech(D, rng, size):
        # BUG: every record counted: COUNT without row sampling is the SUM of ones with each user's partition
        # sum clamped to [0, top] (top >= the records of any cell here); eps' = top / Linf * EPS gives the
        # bug's scale L0 Linf / EPS
        ones = D.with_fields(values=np.ones(D.n))
        return W.mechanism(
            ones, _PUBLIC, "sum", L0, None, top / Linf * EPS, rng, size, lower=0.0, upper=top, bounding="sum"
        )

    return mech


def _mech_no_abs(L0, Linf, lower, upper):
    def mech(D, rng, size):
        # BUG: noise from max(lower, upper) where max(|lower|, |upper|) is meant: the reference at
        # eps' = max|.| / max(.) * EPS has the bug's scale L0 Linf max(lower, upper) / EPS
        eps = max(abs(lower), abs(upper)) / max(lower, upper) * EPS
        return W.mechanism(D, _PUBLIC, "sum", L0, Linf, eps, rng, size, lower=lower, upper=upper)

    return mech


def _mech_stale_l2(L0, Linf):
    def mech(D, rng, size):
        # BUG: sigma for L2 = Linf (one partition) where sqrt(L0) Linf is the vector's. On the audit pair
        # nobody exceeds L0 = 3 partitions or Linf = 1 record, so the statistic is exact (no sampling).
        sigma = W.noise_scale("count", L0, Linf, 1.0, None, None, 1e-5, "gaussian") / math.sqrt(L0)
        clean = W.expected_statistic(D, _PUBLIC, "count", L0, Linf)
        return clean + rng.normal(0.0, sigma, (size, len(_PUBLIC)))

    return mech


def _negative_pair() -> NeighbourPair:
    """A user of 2 records at -5 in partitions 0 and 1 (lower = -5, upper = 1): the sum moves by 10."""
    return spread_user_pair(parts=2, records=1, value=-5.0)


BUGS = [
    PlantedBug(
        "l0-off-by-one",
        "wrong contribution bound",
        "each user keeps L0 + 1 partitions while the noise is for L0: the loss is (L0 + 1)/L0 eps",
        "0-based / 1-based slip in 'keep at most L0' (rank <= L0 instead of rank < L0)",
        adapter=_adapter("l0-off-by-one", bound=_bound_l0_plus_one),
        mechanism=_mech_l0_plus_one(1, 1),
        claim=PureDP(EPS),
        pairs=[spread_user_pair(parts=3, records=1)],
    ),
    PlantedBug(
        "no-linf-sampling",
        "missing per-partition bound",
        "every record of a user in a partition is counted: a user of r records moves COUNT by r, not Linf",
        "spec §3.2: the per-partition sampling (variant a) skipped when the per-user-sum variant (b) is meant",
        adapter=_adapter("no-linf-sampling", bound=_bound_no_linf),
        mechanism=_mech_no_linf(1, 1),
        claim=PureDP(EPS),
        pairs=[spread_user_pair(parts=1, records=4)],
    ),
    PlantedBug(
        "largest-partitions-kept",
        "non-uniform sampling (value-dependent)",
        "the kept partitions and records depend on the values: biased statistics (spec §10.2: a bias bug)",
        "a 'keep the most useful contributions' optimisation; spec §2.2: the choice must not depend on values",
        adapter=_adapter("largest-partitions-kept", bound=_bound_largest),
    ),
    PlantedBug(
        "bound-before-public-filter",
        "bounding order (the other reading)",
        "L0 spent on partitions that are never released: users keep fewer public partitions (utility)",
        "reference/wilson2020.py's [reading]: the public filter before bounding, as PipelineDP does",
        adapter=_adapter("bound-before-public-filter", bound=_bound_before_public_filter),
    ),
    PlantedBug(
        "clamp-after-aggregate",
        "bounding order",
        "the partition total is clamped instead of each contribution: one user moves an unclamped total",
        "clamping placed after the GROUP BY's aggregation instead of before it (spec §2, stage 3)",
        adapter=_adapter("clamp-after-aggregate", statistic=_statistic_clamp_after_aggregate),
    ),
    PlantedBug(
        "sum-clamp-per-record",
        "per-user sum read per record (the other reading)",
        "bounding='sum' keeps every record of the partition and clamps each: a user of r records moves the "
        "sum by r max|v|, not max|v|",
        "spec §3.2 (b) vs (a): the per-record clamp of (a) used without (a)'s row sampling",
        adapter=_adapter("sum-clamp-per-record", statistic=_statistic_sum_clamp_per_record),
    ),
    PlantedBug(
        "sensitivity-max-without-abs",
        "understated sensitivity",
        "max(lower, upper) = 1 where max(|lower|, |upper|) = 5 (lower = -5, upper = 1): 5x under-noised",
        "PipelineDP PR 384 (a): the test oracle's Linf of SUM without absolute values (spec §9.2)",
        adapter=_adapter("sensitivity-max-without-abs", sensitivity=_sens_no_abs, noise_scale=_noise_no_abs),
        mechanism=_mech_no_abs(1, 1, -5.0, 1.0),
        claim=PureDP(EPS),
        pairs=[_negative_pair()],
    ),
    PlantedBug(
        "replace-one-sensitivity",
        "wrong relation (the other reading)",
        "Linf (upper - lower): replace-one-user's range, larger than add/remove's max(|lower|, |upper|) "
        "for mixed signs (over-noised, not a privacy bug)",
        "spec §1 and §10.7: the relation is add/remove-user; replace-one differs by up to 2x",
        adapter=_adapter("replace-one-sensitivity", sensitivity=_sens_replace_one),
    ),
    PlantedBug(
        "l2-without-sqrt-l0",
        "understated L2 sensitivity",
        "sigma calibrated to Linf_value instead of sqrt(L0) Linf_value: under-noised by sqrt(L0)",
        "a stale per-partition bound used for the vector (OpenDP issue 2949's family: spec §9.8)",
        adapter=_adapter("l2-without-sqrt-l0", sensitivity=_sens_l1_for_l2),
        mechanism=_mech_stale_l2(3, 1),
        claim=None,  # audited in the test file as a Gaussian-DP claim
        pairs=[spread_user_pair(parts=3, records=1)],
    ),
    PlantedBug(
        "classical-gaussian-sigma",
        "classical Gaussian (the other reading)",
        "sqrt(2 ln(1.25/delta)) L2 / eps: private, but more noise than the libraries' analytic sigma",
        "spec §10.6: libraries use the analytic Gaussian; a validator must know which one is claimed",
        adapter=_adapter("classical-gaussian-sigma", noise_scale=_noise_classical),
    ),
    PlantedBug(
        "mean-sum-over-count",
        "the other MEAN (the other reading)",
        "the sum's noise scaled to Linf max(|lower|, |upper|) instead of Linf (upper - lower) / 2",
        "spec §4.1: noisy sum over noisy count instead of the libraries' normalised sum",
        adapter=_adapter("mean-sum-over-count", noise_scale=_noise_mean_sum_over_count),
    ),
]

BY_NAME = {b.name: b for b in BUGS}
