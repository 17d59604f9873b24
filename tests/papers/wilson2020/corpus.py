"""Corpus for Wilson et al. 2020: the aggregation over public partitions with L0 / Linf contribution
bounding, validated against the eight specs ``wilson2020.*`` (audits/papers/wilson2020/specs.py).

Every implementation is written here from the paper's description (docs/papers/wilson2020.md),
independently of reference/wilson2020.py: Python loops and dicts, reservoir sampling (Algorithm R)
or per-user permutations, the noise from numpy. One implementation takes every spec's parameters
(``metric``, ``noise``, ``bounding`` included), so each spec gets the same three correct alternatives
(one release per call, batched, an Adapter with stages) and one independence bug.

The upstream bugs are re-implemented from their PUBLIC DESCRIPTIONS only (no project code comes in):

- Privacy on Beam ``DistinctPerKey`` (google/differential-privacy PR 84): (partition, value) pairs
  deduplicated across users, one random owner kept, BEFORE the per-user bounding;
- OpenDP polars, stale truncation bound after the group column is redefined (opendp/opendp issue
  2949): after truncation every partition merged into one group, the noise still calibrated for the
  per-group bound;
- OpenDP polars, ``cut().to_physical()`` not row-by-row (opendp/opendp issue 2944): values replaced by
  category codes in the order of first appearance, so one user's rows renumber the others';
- OpenDP ``make_pairwise_predict`` truncating to an even length (opendp/opendp issue 2950): the last
  record dropped when n is odd, so one added record changes two;
- PipelineDP's Linf sensitivity formula (OpenMined/PipelineDP PR 384): (a) max(lower, upper) without
  absolute values; (b) the per-user partition sum bound multiplied by Linf (over-noised).
"""

from __future__ import annotations

import math

import numpy as np

from userdp.properties.wilson2020 import BoundAdapter
from userdp.reference.mechanisms import gaussian_sigma_analytic

from corpus import CorpusEntry

__all__ = ["CORPUS"]

SPECS = (
    "wilson2020.count",
    "wilson2020.count-gaussian",
    "wilson2020.sum",
    "wilson2020.sum-gaussian",
    "wilson2020.sum-per-user",
    "wilson2020.sum-per-user-gaussian",
    "wilson2020.mean",
    "wilson2020.mean-gaussian",
)


# ------------------------------------------------------------------ shared pieces (independent)
def _check(public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding):
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon}")
    if not (isinstance(L0, int) and L0 >= 1):
        raise ValueError(f"L0 must be an int >= 1, got {L0}")
    if bounding == "records" and not (isinstance(Linf, int) and Linf >= 1):
        raise ValueError(f"Linf must be an int >= 1, got {Linf}")
    if metric != "count" and not lower <= upper:
        raise ValueError(f"lower must be <= upper, got {lower} > {upper}")
    if noise == "gaussian" and not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1) with Gaussian noise, got {delta}")


def _cells(dataset, public_partitions) -> dict:
    """user -> partition -> [record values], public partitions only, in record order."""
    pub = set(public_partitions)
    cells: dict = {}
    for u, p, v in zip(dataset.user_ids.tolist(), dataset.partition_ids.tolist(), dataset.values.tolist()):
        if p in pub:
            cells.setdefault(u, {}).setdefault(p, []).append(v)
    return cells


def _reservoir(items: list, k: int, rng) -> list:
    """Algorithm R: a uniform subset of size min(k, len(items))."""
    out = list(items[:k])
    for i in range(k, len(items)):
        j = int(rng.integers(0, i + 1))
        if j < k:
            out[j] = items[i]
    return out


def _bound(cells: dict, L0, Linf, bounding, rng) -> dict:
    """Per-partition (Linf records, or all) then cross-partition (L0 partitions) bounding."""
    out = {}
    for u, parts in cells.items():
        mine = {p: (vs if bounding == "sum" else _reservoir(vs, Linf, rng)) for p, vs in parts.items()}
        out[u] = {p: mine[p] for p in _reservoir(sorted(mine), L0, rng)}
    return out


def _clamp(v, lo, hi):
    return min(max(v, lo), hi)


def _values(bounded: dict, public_partitions, metric, lower, upper, bounding) -> tuple[list, list]:
    """(count, term) per public partition: term is the clamped sum (SUM) or the normalised sum (MEAN)."""
    count = {p: 0.0 for p in public_partitions}
    term = {p: [] for p in public_partitions}
    mid = (lower + upper) / 2 if metric == "mean" else 0.0
    for parts in bounded.values():
        for p, vs in parts.items():
            count[p] += len(vs)
            if metric == "count":
                continue
            if bounding == "sum":
                term[p].append(_clamp(math.fsum(vs), lower, upper))
            else:
                term[p].extend(_clamp(v, lower, upper) - mid for v in vs)
    return [count[p] for p in public_partitions], [math.fsum(term[p]) for p in public_partitions]


def _partition_sensitivity(metric, Linf, lower, upper, bounding):
    if metric == "count":
        return float(Linf)
    if metric == "mean":
        return Linf * (upper - lower) / 2
    top = max(abs(lower), abs(upper))
    return top if bounding == "sum" else Linf * top


def _scale(sens_l1, L0, epsilon, delta, noise):
    """Laplace b = L0 x per-partition / eps; Gaussian: the analytic sigma for sqrt(L0) x per-partition."""
    if noise == "laplace":
        return L0 * sens_l1 / epsilon
    return gaussian_sigma_analytic(math.sqrt(L0) * sens_l1, epsilon, delta)


def _draw(noise, scale, rng, k):
    return rng.laplace(0.0, scale, k) if noise == "laplace" else rng.normal(0.0, scale, k)


def _release(vals, p, rng, *, lv=None):
    """One noisy vector from (count, term) at the case's parameters ``p`` (a dict)."""
    count, term = vals
    k, eps, d = len(count), p["epsilon"], p["delta"]
    if p["metric"] == "mean":
        sc = _scale(float(p["Linf"]), p["L0"], eps / 2, d / 2, p["noise"])
        ss = _scale(
            _partition_sensitivity("mean", p["Linf"], p["lower"], p["upper"], "records"),
            p["L0"],
            eps / 2,
            d / 2,
            p["noise"],
        )
        nc = np.asarray(count) + _draw(p["noise"], sc, rng, k)
        ns = np.asarray(term) + _draw(p["noise"], ss, rng, k)
        return (p["lower"] + p["upper"]) / 2 + ns / np.maximum(1.0, nc)
    if lv is None:
        lv = _partition_sensitivity(p["metric"], p["Linf"], p["lower"], p["upper"], p["bounding"])
    base = np.asarray(count if p["metric"] == "count" else term, dtype=float)
    return base + _draw(p["noise"], _scale(lv, p["L0"], eps, d, p["noise"]), rng, k)


def _one(dataset, rng, p, *, bound=_bound, cells=_cells, lv=None):
    b = bound(cells(dataset, p["public_partitions"]), p["L0"], p["Linf"], p["bounding"], rng)
    return _release(
        _values(b, p["public_partitions"], p["metric"], p["lower"], p["upper"], p["bounding"]), p, rng, lv=lv
    )


# ------------------------------------------------------------------ correct alternatives
def loop_reservoir(dataset, rng, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding):
    """Correct: one release per call; dicts of cells, Algorithm R for both bounds, loops for the sums."""
    p = dict(locals())
    p.pop("dataset"), p.pop("rng")
    _check(**p)
    return _one(dataset, rng, p)


def _bound_permutation(cells, L0, Linf, bounding, rng):
    out = {}
    for u, parts in cells.items():
        keys = sorted(parts)
        keep = [keys[i] for i in rng.permutation(len(keys))[:L0]]
        out[u] = {
            q: (parts[q] if bounding == "sum" else [parts[q][i] for i in rng.permutation(len(parts[q]))[:Linf]])
            for q in keep
        }
    return out


def batched_permutation(
    dataset, rng, size, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
):
    """Correct: batched; a fresh permutation of each user's partitions and records per release."""
    p = dict(locals())
    for k in ("dataset", "rng", "size"):
        p.pop(k)
    _check(**p)
    return np.stack([_one(dataset, rng, p, bound=_bound_permutation) for _ in range(size)])


def _stat(dataset, *, public_partitions, metric, lower=None, upper=None, bounding="records"):
    every = {u: dict(parts) for u, parts in _cells(dataset, public_partitions).items()}
    count, term = _values(every, public_partitions, metric, lower, upper, bounding)
    if metric == "count":
        return np.asarray(count)
    if metric == "sum":
        return np.asarray(term)
    return (lower + upper) / 2 + np.asarray(term) / np.maximum(1.0, np.asarray(count))


def _sens(*, metric, L0, Linf, lower=None, upper=None, bounding="records", norm="l1"):
    lv = _partition_sensitivity(metric, Linf, lower, upper, bounding)
    return L0 * lv if norm == "l1" else math.sqrt(L0) * lv


def _noise_scale(*, metric, L0, Linf, epsilon, lower=None, upper=None, delta=0.0, noise="laplace", bounding="records"):
    if metric != "mean":
        return _scale(_partition_sensitivity(metric, Linf, lower, upper, bounding), L0, epsilon, delta, noise)
    return _scale(float(Linf), L0, epsilon / 2, delta / 2, noise), _scale(
        _partition_sensitivity("mean", Linf, lower, upper, "records"), L0, epsilon / 2, delta / 2, noise
    )


staged_reservoir = BoundAdapter(
    "corpus/wilson-staged-reservoir",
    statistic=_stat,
    sensitivity=_sens,
    noise_scale=_noise_scale,
    mechanism=batched_permutation,
)


# ------------------------------------------------------------------ independence bug
def shared_noise(
    dataset, rng, size, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
):
    """BUG (independence): the noise vector is drawn once per call and added to every release of the call
    (each release bounds afresh, so the releases differ: only the noise is shared)."""
    p = dict(locals())
    for k in ("dataset", "rng", "size"):
        p.pop(k)
    _check(**p)
    fixed = np.random.default_rng(int(rng.integers(2**63)))  # one noise stream, restarted for every release
    state = fixed.bit_generator.state
    out = []
    for _ in range(size):
        b = _bound(_cells(dataset, public_partitions), L0, Linf, bounding, rng)
        fixed.bit_generator.state = state
        out.append(_release(_values(b, public_partitions, metric, lower, upper, bounding), p, fixed))
    return np.stack(out)


# ------------------------------------------------------------------ upstream bugs (public descriptions)
def _bound_dedup_first(cells, L0, Linf, bounding, rng):
    """PR 84's old order: each (partition, value) pair kept for ONE random owner across users, then bounding."""
    owners: dict = {}
    for u, parts in cells.items():
        for q, vs in parts.items():
            for v in set(vs):
                owners.setdefault((q, v), []).append(u)
    chosen = {key: us[int(rng.integers(len(us)))] for key, us in owners.items()}
    deduped = {}
    for u, parts in cells.items():
        kept = {q: sorted(set(v for v in vs if chosen[(q, v)] == u)) for q, vs in parts.items()}
        kept = {q: vs for q, vs in kept.items() if vs}
        if kept:
            deduped[u] = kept
    return _bound(deduped, L0, Linf, bounding, rng)


def distinct_dedup_before_bounding(
    dataset, rng, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
):
    """BUG (google/differential-privacy PR 84): cross-user dedup of (partition, value) before bounding."""
    p = dict(locals())
    p.pop("dataset"), p.pop("rng")
    _check(**p)
    return _one(dataset, rng, p, bound=_bound_dedup_first)


def merged_groups_stale_bound(
    dataset, rng, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
):
    """BUG (opendp/opendp issue 2949): after truncation the group key is redefined to one constant group
    (every partition merged), and the noise keeps the per-group bound L0 Linf; the merged count is
    reported for every public partition."""
    p = dict(locals())
    p.pop("dataset"), p.pop("rng")
    _check(**p)
    b = _bound(_cells(dataset, public_partitions), L0, Linf, bounding, rng)
    count, _ = _values(b, public_partitions, metric, lower, upper, bounding)
    merged = [math.fsum(count)] * len(public_partitions)  # with_columns(g = lit(0)) after truncation
    return _release((merged, merged), p, rng)


def _cells_first_appearance_codes(dataset, public_partitions):
    """opendp issue 2944's transform: each value replaced by its category code, codes numbered in the
    order of first appearance in the data (not row by row)."""
    codes: dict = {}
    for v in dataset.values.tolist():
        codes.setdefault(v, float(len(codes)))
    coded = dataset.with_fields(values=np.array([codes[v] for v in dataset.values.tolist()]))
    return _cells(coded, public_partitions)


def codes_by_first_appearance(
    dataset, rng, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
):
    """BUG (opendp/opendp issue 2944): a 'row-wise' recoding whose output for a row depends on the others."""
    p = dict(locals())
    p.pop("dataset"), p.pop("rng")
    _check(**p)
    return _one(dataset, rng, p, cells=_cells_first_appearance_codes)


def _cells_even_length(dataset, public_partitions):
    """opendp issue 2950's truncation: the last record dropped when the number of records is odd."""
    n = dataset.n - (dataset.n % 2)
    if n == 0:
        return {}
    return _cells(dataset.take(np.arange(n)), public_partitions)


def truncate_to_even_length(
    dataset, rng, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
):
    """BUG (opendp/opendp issue 2950): parity truncation before a transform claimed stable with factor 1."""
    p = dict(locals())
    p.pop("dataset"), p.pop("rng")
    _check(**p)
    return _one(dataset, rng, p, cells=_cells_even_length)


def linf_without_abs(
    dataset, rng, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
):
    """BUG (OpenMined/PipelineDP PR 384 (a)): Linf of SUM as Linf max(lower, upper), no absolute values."""
    p = dict(locals())
    p.pop("dataset"), p.pop("rng")
    _check(**p)
    return _one(dataset, rng, p, lv=Linf * max(lower, upper))


def lower_bound_twice(
    dataset, rng, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
):
    """BUG (the pattern of IBM/differential-privacy-library PR 110, whose LinearRegression sensitivity read the
    lower bound twice): Linf of SUM as Linf max(|lower|, |lower|), the upper bound never read."""
    p = dict(locals())
    p.pop("dataset"), p.pop("rng")
    _check(**p)
    return _one(dataset, rng, p, lv=Linf * max(abs(lower), abs(lower)))


def per_user_sum_times_linf(
    dataset, rng, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding, linf_default=2
):
    """BUG (OpenMined/PipelineDP PR 384 (b)): the per-user partition-sum bound multiplied by an Linf
    (here the engine's default of 2) although the sum is clamped once per user: over-noised."""
    p = dict(locals())
    for k in ("dataset", "rng", "linf_default"):
        p.pop(k)
    _check(**p)
    return _one(dataset, rng, p, lv=linf_default * max(abs(lower), abs(upper)))


def _values_upper_clamp_only(bounded: dict, public_partitions, metric, lower, upper, bounding) -> tuple[list, list]:
    """``_values`` with each record clamped by min(v, upper) alone: the lower end never applied."""
    count = {p: 0.0 for p in public_partitions}
    term = {p: [] for p in public_partitions}
    for parts in bounded.values():
        for p, vs in parts.items():
            count[p] += len(vs)
            term[p].extend(min(v, upper) for v in vs)
    return [count[p] for p in public_partitions], [math.fsum(term[p]) for p in public_partitions]


def upper_clamp_only(
    dataset, rng, size, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
):
    """BUG (planted; the one-sided clamp of ``np.minimum(x, upper)`` where ``np.clip(x, lower, upper)`` was
    meant): SUM's records are clamped to upper only, the noise calibrated for [lower, upper]. A user whose
    records lie below lower moves each partition by Linf |v|, unbounded; the spec's pairs add users at the
    top of the range (inside the bounds), so only a searched pair with values below lower shows the loss."""
    p = dict(locals())
    for k in ("dataset", "rng", "size"):
        p.pop(k)
    _check(**p)
    pp = p["public_partitions"]

    def one():
        b = _bound_permutation(_cells(dataset, pp), L0, Linf, bounding, rng)
        return _release(_values_upper_clamp_only(b, pp, metric, lower, upper, bounding), p, rng)

    return np.stack([one() for _ in range(size)])


# ------------------------------------------------------------------ the records
M = "papers.wilson2020.corpus"


def _alternatives(algo: str) -> list:
    short = algo.split(".", 1)[1]
    return [
        CorpusEntry(f"wilson2020/{short}/loop-reservoir", algo, f"{M}:loop_reservoir", "none", "pass",
                    "none: dicts, Algorithm R for L0 and Linf, one release per call", "correct alternative"),
        CorpusEntry(f"wilson2020/{short}/batched-permutation", algo, f"{M}:batched_permutation", "none", "pass",
                    "none: batched, a fresh permutation per release", "correct alternative"),
        CorpusEntry(f"wilson2020/{short}/staged-reservoir", algo, f"{M}:staged_reservoir", "none", "pass",
                    "none: loops for the stages, the batched release", "correct alternative", exposes="stages"),
        CorpusEntry(f"wilson2020/{short}/shared-noise", algo, f"{M}:shared_noise", "independence",
                    "not independent", "the noise drawn once per call: the size releases share it", "planted"),
    ]  # fmt: skip


CORPUS = [e for a in SPECS for e in _alternatives(a)] + [
    CorpusEntry(
        "wilson2020/distinct-dedup-before-bounding",
        "wilson2020.count",
        f"{M}:distinct_dedup_before_bounding",
        "structure",
        "deviation from reference",
        "google/differential-privacy PR 84 (Privacy on Beam DistinctPerKey): (partition, value) pairs deduplicated "
        "across users before the per-user bounding, so one user's bounded contribution depends on the others'; "
        "the counts fall (duplicates dropped) and the design pairs do not isolate the privacy loss",
        "found in the authors' public code",
    ),
    CorpusEntry(
        "wilson2020/merged-groups-stale-bound",
        "wilson2020.count",
        f"{M}:merged_groups_stale_bound",
        "sensitivity",
        "privacy violation",
        "opendp/opendp issue 2949: every partition merged into one group after truncation, noise still for the "
        "per-group bound: a user moves each of the k coordinates by up to L0 Linf (L1 k L0 Linf against L0 Linf)",
        "found in the authors' public code",
    ),
    CorpusEntry(
        "wilson2020/codes-by-first-appearance",
        "wilson2020.sum",
        f"{M}:codes_by_first_appearance",
        "structure",
        "deviation from reference",
        "opendp/opendp issue 2944: values recoded by order of first appearance, so one user's rows renumber the "
        "others' (a sum of codes moves by up to n); the sums are not the reference's",
        "found in the authors' public code",
    ),
    CorpusEntry(
        "wilson2020/truncate-to-even-length",
        "wilson2020.count",
        f"{M}:truncate_to_even_length",
        "structure",
        "deviation from reference",
        "opendp/opendp issue 2950: the last record dropped when n is odd, so one added record changes two; "
        "on odd-n cases a record is missing from the counts",
        "found in the authors' public code",
    ),
    CorpusEntry(
        "wilson2020/linf-without-abs",
        "wilson2020.sum",
        f"{M}:linf_without_abs",
        "sensitivity",
        "privacy violation",
        "OpenMined/PipelineDP PR 384 (a): max(lower, upper) = 1 where max(|lower|, |upper|) = 5 on the case with "
        "bounds [-5, 1]: noise 5x too small there (claimed eps, true 5 eps)",
        "found in the authors' public code",
    ),
    CorpusEntry(
        "wilson2020/lower-bound-twice",
        "wilson2020.sum",
        f"{M}:lower_bound_twice",
        "sensitivity",
        "privacy violation",
        "IBM/differential-privacy-library PR 110 (LinearRegression's sensitivity from the lower bound twice), "
        "re-implemented in a partition sum: max(|lower|, |lower|) = 0 where max(|lower|, |upper|) = 1 on the "
        "bounds [0, 1]: no noise at all there (claimed eps, true unbounded)",
        "planted",
    ),
    CorpusEntry(
        "wilson2020/upper-clamp-only",
        "wilson2020.sum",
        f"{M}:upper_clamp_only",
        "domain",
        "privacy violation",
        "records clamped by min(v, upper) alone (a one-sided np.minimum for np.clip): a user below lower moves each "
        "of its L0 partitions by Linf |v|, unbounded (the search's pair: 5 records at -7 in 3 partitions, Linf = 2, "
        "loss 7/2 of the claim); the spec's pairs add users inside the bounds, so without the search the sums "
        "only deviate",
        "planted",
    ),
    CorpusEntry(
        "wilson2020/per-user-sum-times-linf",
        "wilson2020.sum-per-user",
        f"{M}:per_user_sum_times_linf",
        "noise scale",
        "deviation from reference",
        "OpenMined/PipelineDP PR 384 (b): the per-user partition-sum bound multiplied by Linf = 2: twice the noise "
        "(private, but not the paper's scale)",
        "found in the authors' public code",
    ),
]
