"""Wilson, Zhang, Lam, Desfontaines, Simmons-Marengo, Gipson, "Differentially Private SQL with
Bounded User Contribution", Proceedings on Privacy Enhancing Technologies 2020(2), pp. 230-250,
DOI 10.2478/popets-2020-0025, arXiv:1909.01917. "spec §N" below is a numbered point of the
specification in docs/papers/wilson2020.md, "The specification, by section".

The anonymising aggregation over PUBLIC partitions: ``SELECT key, ANON_AGG(value) GROUP BY key``
where the list of keys is public, so the release is a map partition -> noisy value over that list
(``release_map``), returned as a vector in the order of ``public_partitions``.

Stages (docs/design.md §4), in the order the operator applies them:

1. ``public_records``: keep the records whose partition key is in the public list (a per-record
   filter on public data). [reading] The note does not fix when this happens; PipelineDP drops
   non-public keys before bounding, and so do we (bounding over partitions that are never released
   would waste a user's L0 budget; either order is private).
2. ``bound``: per-partition (Linf) bounding, then cross-partition (L0) bounding:
   - ``bounding="records"`` (spec §3.2 (a)): keep a uniform sample of at most Linf records of each
     (user, partition), each record later clamped to [lower, upper];
   - ``bounding="sum"`` (spec §3.2 (b), the paper's per-user pre-aggregation): keep all of the
     user's records in the partition; their SUM is clamped to [lower, upper] (no Linf);
   - then each user keeps a uniform random subset of at most L0 of its partitions (spec §3.1),
     a user's records in one partition kept or dropped together.
   The choices depend only on the structure (which user owns how many records where) and on
   ``rng``, never on values or on other users (checked: properties/wilson2020.py).
3. ``statistic``: the noise-free COUNT, SUM or MEAN of each public partition on the bounded data.
4. ``sensitivity`` / ``noise_scale``: L1 = L0 Linf_value (Laplace b = L1 / eps), L2 = sqrt(L0)
   Linf_value (Gaussian sigma: the analytic calibration of Balle and Wang, as the libraries use),
   Linf_value = Linf (COUNT), Linf max(|lower|, |upper|) (SUM, records), max(|lower|, |upper|)
   (SUM, sum), Linf (upper - lower) / 2 (the normalised sum of MEAN) (spec §4).
5. ``mechanism``: noise on every public partition, ``size`` independent releases.

MEAN (spec §4.1) is the libraries' normalised form, with the budget split evenly between a noisy
count and a noisy normalised sum: mean = mid + noisy_nsum / max(1, noisy_count), mid the middle of
[lower, upper], not clamped to [lower, upper] (PipelineDP 0.3.1 does not clamp; clamping is
post-processing). ``mean_sum_over_count`` is the other form spec §4.1 names (noisy sum over noisy
count, same split): private too, but a different distribution, which validate names as a deviation.

Relation: add/remove one user with all its records, in any number of partitions (spec §1),
``RELATION``. Claim: eps-DP with Laplace noise, (eps, delta)-DP with Gaussian noise (``claim``).

Refusals. Every argument is checked before a record is read: ``public_partitions`` (distinct ints
>= 0), L0 and Linf (ints >= 1; Linf is None with ``bounding="sum"``, which has no row sampling),
lower <= upper (lower < upper for MEAN), a sensitivity > 0, epsilon, delta (0 with Laplace, in
(0, 1) with Gaussian), the metric, the noise and the bounding. The dataset must carry
``partition_ids`` and scalar values. No value is ever refused: values are clamped, as the paper's
operator does, visibly, in ``statistic``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import MAX_INT, check_delta, check_epsilon, check_finite_array, check_generator, check_int, check_real
from ._checks import check_noise_scale, check_size
from .claims import ApproxDP, PureDP
from .data import EMPTY, EmptyDataset, UserDataset, check_dataset
from .mechanisms import clip_interval, gaussian_sigma_analytic
from .neighbours import ADD_REMOVE_USER

__all__ = [
    "RELATION",
    "METRICS",
    "NOISES",
    "BOUNDINGS",
    "claim",
    "public_records",
    "bound",
    "statistic",
    "mean_parts",
    "expected_statistic",
    "partition_sensitivity",
    "sensitivity",
    "noise_scale",
    "mechanism",
    "mean_sum_over_count",
    "release_map",
]

RELATION = ADD_REMOVE_USER  # spec §1: add or remove ALL the rows of one user
METRICS = ("count", "sum", "mean")
NOISES = ("laplace", "gaussian")
BOUNDINGS = ("records", "sum")
_CHUNK = 1 << 15  # releases drawn per block: keys of (chunk, n) doubles stay small


# ------------------------------------------------------------------ public inputs
def _choice(value, name: str, allowed: tuple) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, one of {allowed}, got {type(value).__name__} {value!r}")
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def _partitions(public_partitions) -> np.ndarray:
    """The public partition list: a non-empty sequence of distinct ints >= 0, order kept."""
    if isinstance(public_partitions, (str, bytes, set, frozenset, dict)) or not hasattr(public_partitions, "__len__"):
        raise TypeError(
            f"public_partitions must be a list or array of partition ids (ints >= 0), "
            f"got {type(public_partitions).__name__}"
        )
    keys = [check_int(k, f"public_partitions[{i}]", lo=0, hi=MAX_INT) for i, k in enumerate(public_partitions)]
    if not keys:
        raise ValueError("public_partitions must hold at least one partition id (the release is over this list)")
    if len(set(keys)) != len(keys):
        raise ValueError(f"public_partitions must be distinct, got {keys}")
    return np.asarray(keys, dtype=np.int64)


@dataclass(frozen=True)
class _Query:
    """The checked public parameters of one aggregation."""

    metric: str
    L0: int
    Linf: int | None
    lower: float
    upper: float
    bounding: str


def _bounds(L0, Linf, bounding) -> tuple[int, int | None, str]:
    """Check the bounding parameters (L0, Linf, the per-partition variant)."""
    bounding = _choice(bounding, "bounding", BOUNDINGS)
    L0 = check_int(L0, "L0 (max partitions per user)", lo=1)
    if bounding == "sum":
        if Linf is not None:
            raise ValueError(f"Linf must be None with bounding='sum' (no row sampling: spec §3.2 (b)), got {Linf!r}")
    else:
        Linf = check_int(Linf, "Linf (max records per user per partition)", lo=1)
    return L0, Linf, bounding


def _query(metric, L0, Linf, lower, upper, bounding) -> _Query:
    """Check the bounding parameters of ``metric`` (no record is read here)."""
    metric = _choice(metric, "metric", METRICS)
    L0, Linf, bounding = _bounds(L0, Linf, bounding)
    if bounding == "sum" and metric != "sum":
        raise ValueError(
            f"bounding='sum' (clamp each user's partition sum) applies to metric 'sum' only, got {metric!r}"
        )
    if metric == "count":
        if lower is not None or upper is not None:
            raise ValueError(
                f"lower and upper must be None for metric 'count' (values are not read), got {lower!r}, {upper!r}"
            )
        return _Query(metric, L0, Linf, 0.0, 0.0, bounding)
    lo, hi = check_real(lower, "lower"), check_real(upper, "upper")
    for v, name in ((lo, "lower"), (hi, "upper")):
        if not math.isfinite(v) or abs(v) > 1e50:
            raise ValueError(f"{name} must be finite, in [-1e50, 1e50], got {v!r}")
    if metric == "mean" and not lo < hi:
        raise ValueError(
            f"lower < upper is required for metric 'mean' (the normalised sum's sensitivity), got {lo!r}, {hi!r}"
        )
    if not lo <= hi:
        raise ValueError(f"lower <= upper is required (the clamp interval), got lower={lo!r} > upper={hi!r}")
    if max(abs(lo), abs(hi)) == 0.0:
        raise ValueError(
            "max(|lower|, |upper|) must be > 0: with [0, 0] the sum's sensitivity is 0 and no noise is added"
        )
    return _Query(metric, L0, Linf, lo, hi, bounding)


def _budget(epsilon, delta, noise) -> tuple[float, float, str]:
    noise = _choice(noise, "noise", NOISES)
    eps, d = check_epsilon(epsilon), check_delta(delta)
    if noise == "laplace" and d != 0.0:
        raise ValueError(f"delta must be 0 with Laplace noise (the release is pure eps-DP), got {d!r}")
    if noise == "gaussian" and d == 0.0:
        raise ValueError("delta must lie in (0, 1) with Gaussian noise (delta = 0 needs infinite noise), got 0.0")
    return eps, d, noise


def _scalar_partitioned(dataset, name: str = "dataset") -> UserDataset:
    check_dataset(dataset, name)
    if dataset.partition_ids is None:
        raise ValueError(f"{name}.partition_ids is None: the aggregation needs a partition key per record")
    if dataset.values.ndim != 1:
        raise ValueError(f"{name}.values must be scalar per record (shape (n,)), got shape {dataset.values.shape}")
    return dataset


def claim(epsilon, delta=0.0, noise="laplace") -> PureDP | ApproxDP:
    """eps-DP (Laplace) or (eps, delta)-DP (Gaussian) under add/remove-user (spec §1, §5)."""
    eps, d, noise = _budget(epsilon, delta, noise)
    return PureDP(eps) if noise == "laplace" else ApproxDP(eps, d)


# ------------------------------------------------------------------ stage 1: public partitions
def public_records(dataset: UserDataset, public_partitions) -> np.ndarray:
    """Indices of the records whose partition key is public, in record order, shape (n',)."""
    keys = _partitions(public_partitions)
    D = _scalar_partitioned(dataset)
    return np.flatnonzero(np.isin(D.partition_ids, keys))


# ------------------------------------------------------------------ stage 2: bounding
@dataclass(frozen=True)
class _Structure:
    """The public-partition records and their (user, partition) units; no value is used here."""

    idx: np.ndarray  # (n',) record indices into the dataset
    col: np.ndarray  # (n',) position of each record's partition in public_partitions
    unit: np.ndarray  # (n',) unit (user, partition) of each record
    unit_user: np.ndarray  # (U,) user index of each unit
    unit_col: np.ndarray  # (U,) partition position of each unit


def _positions(keys: np.ndarray, pids: np.ndarray) -> np.ndarray:
    """The position in ``keys`` (the public list, any order) of each of ``pids`` (all in the list)."""
    order = np.argsort(keys, kind="stable")
    return order[np.searchsorted(keys[order], pids)].astype(np.int64)


def _structure(D: UserDataset, keys: np.ndarray) -> _Structure:
    idx = np.flatnonzero(np.isin(D.partition_ids, keys))
    col = _positions(keys, D.partition_ids[idx])
    users = np.unique(D.user_ids[idx], return_inverse=True)[1] if idx.size else np.zeros(0, np.int64)
    pairs, unit = (
        np.unique(np.stack([users, col]), axis=1, return_inverse=True)
        if idx.size
        else (np.zeros((2, 0), np.int64), np.zeros(0, np.int64))
    )
    return _Structure(idx, col, np.asarray(unit).ravel(), pairs[0], pairs[1])


def _rank_within(groups: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """For each row of ``keys`` (c, n), the rank of element j among the elements of its group
    ``groups[j]`` in a uniformly random order (the order of the keys): a uniform random subset of
    size <= b of each group is ``rank < b`` (reservoir sampling's distribution, spec §10.2)."""
    perm = np.argsort(keys, axis=1)  # (c, n): a uniformly random order
    order = np.take_along_axis(perm, np.argsort(groups[perm], axis=1, kind="stable"), axis=1)  # grouped, random within
    rank = np.empty_like(order)
    start = np.r_[0, np.cumsum(np.bincount(groups))][groups[order]]  # (c, n): start of each group in sorted order
    np.put_along_axis(rank, order, np.arange(groups.size)[None, :] - start, axis=1)
    return rank


def _keep(S: _Structure, q: _Query, rng, c: int) -> tuple[np.ndarray, np.ndarray]:
    """(c, n') kept records and (c, U) kept units of c independent boundings.

    Keys are drawn for every record and every unit whatever the data (their number depends on
    the structure only), records first, then units.
    """
    n, U = S.idx.size, S.unit_user.size
    rec_keys, unit_keys = rng.random((c, n)), rng.random((c, U))
    if q.bounding == "records":  # spec §3.2 (a): at most Linf records of each (user, partition)
        keep_r = _rank_within(S.unit, rec_keys) < q.Linf
    else:  # spec §3.2 (b): all records; the user's partition sum is clamped in ``statistic``
        keep_r = np.ones((c, n), dtype=bool)
    keep_u = _rank_within(S.unit_user, unit_keys) < q.L0  # spec §3.1: at most L0 partitions per user
    return keep_r & keep_u[:, S.unit], keep_u


def bound(dataset: UserDataset, public_partitions, L0, Linf, rng, bounding="records"):
    """The records that survive contribution bounding: a ``UserDataset`` (or ``EMPTY``).

    Per-partition bounding (``bounding="records"``: a uniform sample of at most Linf records of
    each user in each partition; ``"sum"``: all of them, Linf None), then cross-partition bounding
    (a uniform sample of at most L0 of each user's public partitions, all its records there kept
    or dropped together). The same ``rng`` draws as ``mechanism`` with ``size=None``, so that
    ``mechanism(D, ..., rng=default_rng(s))`` is ``statistic(bound(D, ..., rng=default_rng(s)))``
    plus noise drawn next.

    Why this is private (the budget it enforces): after it, every user has at most L0 partitions
    and at most Linf records in each (spec §3, claim C1); the statistic's sensitivity rests on it.
    """
    keys = _partitions(public_partitions)
    L0, Linf, bounding = _bounds(L0, Linf, bounding)
    q = _Query("count", L0, Linf, 0.0, 0.0, bounding)
    rng = check_generator(rng)
    D = _scalar_partitioned(dataset)
    S = _structure(D, keys)
    keep_r, _ = _keep(S, q, rng, 1)
    kept = S.idx[keep_r[0]]
    return D.take(kept) if kept.size else EMPTY


# ------------------------------------------------------------------ stage 3: the statistic
def _public(bounded, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(record indices in public partitions, their partition positions); records outside the list
    are not part of any released partition (stage 1), so a noise-free stage ignores them."""
    if isinstance(bounded, EmptyDataset):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    D = _scalar_partitioned(bounded, "bounded")
    idx = np.flatnonzero(np.isin(D.partition_ids, keys))
    return idx, _positions(keys, D.partition_ids[idx])


def mean_parts(bounded, public_partitions, lower, upper) -> tuple[np.ndarray, np.ndarray]:
    """(count, nsum), each (k,): the records and sum_i (clamp(x_i, lower, upper) - mid) per
    partition, mid = (lower + upper) / 2 (spec §4.1, the normalised sum)."""
    keys = _partitions(public_partitions)
    q = _query("mean", 1, 1, lower, upper, "records")
    idx, col = _public(bounded, keys)
    mid = (q.lower + q.upper) / 2.0
    x = clip_interval(bounded.values[idx], q.lower, q.upper) - mid if col.size else np.zeros(0)
    return np.bincount(col, minlength=keys.size).astype(float), np.bincount(col, x, minlength=keys.size)


def statistic(bounded, public_partitions, metric, lower=None, upper=None, bounding="records") -> np.ndarray:
    """The noise-free value of each public partition on bounded data, shape (k,).

    COUNT: records; SUM: sum of clamp(x_i, lower, upper) (``records``) or of each user's
    clamp(sum of its records, lower, upper) (``sum``); MEAN: mid + nsum / max(1, count)
    (``mean_parts``; an empty partition reads mid). ``bounded``: the output of ``bound`` (on any
    dataset: the statistic without bounding); records outside ``public_partitions`` are ignored.
    """
    keys = _partitions(public_partitions)
    q = _query(metric, 1, None if bounding == "sum" else 1, lower, upper, bounding)
    if q.metric == "mean":
        count, nsum = mean_parts(bounded, keys, q.lower, q.upper)
        return (q.lower + q.upper) / 2.0 + nsum / np.maximum(1.0, count)
    idx, col = _public(bounded, keys)
    if q.metric == "count" or not col.size:
        return np.bincount(col, minlength=keys.size).astype(float) * (q.metric == "count")
    x = bounded.values[idx]
    if q.bounding == "records":  # spec §3.2 (a): each record clamped
        return np.bincount(col, clip_interval(x, q.lower, q.upper), minlength=keys.size)
    pairs, inv = np.unique(np.stack([bounded.user_ids[idx], col]), axis=1, return_inverse=True)
    per_user = _clamped_sums(np.ravel(inv), x, q.lower, q.upper)  # spec §3.2 (b)
    return np.bincount(pairs[1], per_user, minlength=keys.size)


def _clamped_sums(groups: np.ndarray, x: np.ndarray, lower: float, upper: float, minlength: int = 0) -> np.ndarray:
    """clip(sum of x over each group, lower, upper), (G,): a user's partition sum clamped (spec §3.2 (b)),
    with no overflow and no warning whatever the records.

    The records' domain is every real, so a user's float sum can overflow (two records of 1.7e308) or
    become NaN (inf - inf). A warning or an exception there would depend on the records, an output
    of its own. Where the plain sum is finite it is kept (bit for bit what it was); elsewhere the sum
    is recomputed from the records scaled by 2^-b with 2^b > n (exact: a power of two, and no sum of
    n scaled records exceeds the float maximum), clamped to the scaled bounds and scaled back. The
    result is in [lower, upper] either way, so the sensitivity argument is unchanged."""
    with np.errstate(over="ignore", invalid="ignore"):
        sums = np.bincount(groups, x, minlength=minlength)
    bad = ~np.isfinite(sums)
    if bad.any():
        k = 2.0 ** -max(int(x.size).bit_length(), 1)
        with np.errstate(under="ignore"):
            scaled = np.bincount(groups, x * k, minlength=minlength)[bad]
            sums[bad] = np.clip(scaled, lower * k, upper * k) / k
    return clip_interval(sums, lower, upper)


def expected_statistic(
    dataset: UserDataset, public_partitions, metric, L0, Linf, lower=None, upper=None, bounding="records"
) -> np.ndarray:
    """E[statistic(bound(D))] over the sampling, exactly, shape (k,) (COUNT and SUM: linear).

    A user with P public partitions keeps each with probability min(1, L0 / P); a record of a
    (user, partition) of r records is kept with probability min(1, Linf / r) (uniform subsets).
    The two are independent, so E = sum over records of both probabilities times its term.
    """
    keys = _partitions(public_partitions)
    q = _query(metric, L0, Linf, lower, upper, bounding)
    if q.metric == "mean":
        raise ValueError("metric must be 'count' or 'sum': the mean of a ratio has no closed form here")
    D = _scalar_partitioned(dataset)
    S = _structure(D, keys)
    if not S.idx.size:
        return np.zeros(keys.size)
    n_parts = np.bincount(S.unit_user)[S.unit_user]  # (U,) partitions of the unit's user
    p_unit = np.minimum(1.0, q.L0 / n_parts)  # (U,)
    if q.bounding == "sum":
        s = _clamped_sums(S.unit, D.values[S.idx], q.lower, q.upper)  # (U,)
        return np.bincount(S.unit_col, p_unit * s, minlength=keys.size)
    r = np.bincount(S.unit)[S.unit]  # (n',) records of the record's unit
    term = np.ones(S.idx.size) if q.metric == "count" else clip_interval(D.values[S.idx], q.lower, q.upper)
    return np.bincount(S.col, p_unit[S.unit] * np.minimum(1.0, q.Linf / r) * term, minlength=keys.size)


# ------------------------------------------------------------------ stage 4: sensitivity, noise
def partition_sensitivity(metric, Linf, lower=None, upper=None, bounding="records") -> float:
    """Linf_value: how much one user moves one partition's value (spec §4 table).

    COUNT: Linf; SUM (records): Linf max(|lower|, |upper|); SUM (sum): max(|lower|, |upper|);
    MEAN: Linf (upper - lower) / 2, the normalised sum's (its count's is Linf: ``noise_scale``).
    Why: after ``bound`` a user has at most Linf records in the partition, each clamped into
    [lower, upper], so its records add at most Linf max(|lower|, |upper|) in absolute value to the
    sum (add/remove: the whole contribution appears, not a swap, so |.| and not upper - lower); under
    ``sum`` its clamped total lies in [lower, upper]; a normalised record lies in +-(upper - lower)/2.
    """
    q = _query(metric, 1, Linf, lower, upper, bounding)
    if q.metric == "count":
        return float(q.Linf)
    if q.metric == "mean":
        return q.Linf * (q.upper - q.lower) / 2.0
    top = max(abs(q.lower), abs(q.upper))
    return top if q.bounding == "sum" else q.Linf * top


def sensitivity(metric, L0, Linf, lower=None, upper=None, bounding="records", norm="l1") -> float:
    """L1 = L0 Linf_value or L2 = sqrt(L0) Linf_value of the vector over all partitions (spec §4).

    Why: a user touches at most L0 partitions after ``bound`` and moves each by at most
    Linf_value (``partition_sensitivity``); the L1 norm of such a change is at most L0 times the
    largest coordinate, the L2 norm sqrt(L0) times it. Both are attained by a user at the bound in
    L0 partitions, so neither is loose.
    """
    q = _query(metric, L0, Linf, lower, upper, bounding)
    norm = _choice(norm, "norm", ("l1", "l2"))
    lv = partition_sensitivity(q.metric, q.Linf, lower, upper, q.bounding)
    return q.L0 * lv if norm == "l1" else math.sqrt(q.L0) * lv


def _scale(sens: float, eps: float, delta: float, noise: str) -> float:
    if noise == "laplace":
        return check_noise_scale(sens / eps, name="Laplace scale")  # b = L1 / eps
    return check_noise_scale(gaussian_sigma_analytic(sens, eps, delta), name="sigma")  # BW18 Thm 8, L2


def noise_scale(metric, L0, Linf, epsilon, lower=None, upper=None, delta=0.0, noise="laplace", bounding="records"):
    """The Laplace scale b = L1 / eps, or the analytic Gaussian sigma(eps, delta, L2) (spec §4, §5).

    For MEAN a pair (count's, normalised sum's), each at (eps / 2, delta / 2): the even split of
    PipelineDP's naive accountant (spec §4.2), composed back to (eps, delta) by basic composition.
    """
    q = _query(metric, L0, Linf, lower, upper, bounding)
    eps, d, noise = _budget(epsilon, delta, noise)
    nrm = "l1" if noise == "laplace" else "l2"
    if q.metric != "mean":
        return _scale(sensitivity(q.metric, q.L0, q.Linf, lower, upper, q.bounding, nrm), eps, d, noise)
    count = sensitivity("count", q.L0, q.Linf, None, None, "records", nrm)
    nsum = sensitivity("mean", q.L0, q.Linf, lower, upper, "records", nrm)
    return _scale(count, eps / 2, d / 2, noise), _scale(nsum, eps / 2, d / 2, noise)


# ------------------------------------------------------------------ stage 5: the mechanism
def _draw(noise: str, scale: float, rng, shape) -> np.ndarray:
    return rng.laplace(0.0, scale, shape) if noise == "laplace" else rng.normal(0.0, scale, shape)


def _blocks(S: _Structure, D: UserDataset, q: _Query, rng, c: int, k: int, mid: float):
    """(count, term) per partition for c boundings, each (c, k): term is the sum of the clamped
    records minus ``mid`` each (mid = 0: SUM; the middle of [lower, upper]: MEAN's normalised sum)."""
    keep_r, keep_u = _keep(S, q, rng, c)
    x = D.values[S.idx]
    W = np.zeros((S.idx.size, k))
    W[np.arange(S.idx.size), S.col] = 1.0  # (n', k) one-hot of each record's partition
    count = keep_r.astype(float) @ W
    if q.metric == "count":
        return count, None
    if q.bounding == "sum":
        s = _clamped_sums(S.unit, x, q.lower, q.upper, S.unit_user.size)  # (U,)
        Wu = np.zeros((S.unit_user.size, k))
        Wu[np.arange(S.unit_user.size), S.unit_col] = s
        return count, keep_u.astype(float) @ Wu
    return count, keep_r.astype(float) @ (W * (clip_interval(x, q.lower, q.upper) - mid)[:, None])


def _run(dataset, public_partitions, metric, L0, Linf, epsilon, rng, size, lower, upper, delta, noise, bounding, form):
    keys = _partitions(public_partitions)
    q = _query(metric, L0, Linf, lower, upper, bounding)
    eps, d, noise = _budget(epsilon, delta, noise)
    rng, n_out = check_generator(rng), check_size(size)
    if form == "sum-over-count":
        scales = (
            noise_scale("count", L0, Linf, eps / 2, None, None, d / 2, noise),
            noise_scale("sum", L0, Linf, eps / 2, lower, upper, d / 2, noise),
        )
    else:
        scales = noise_scale(metric, L0, Linf, eps, lower, upper, d, noise, bounding)
    D = _scalar_partitioned(dataset)  # the first record read is below this line
    S, k, total = _structure(D, keys), keys.size, 1 if n_out is None else n_out
    out = np.empty((total, k))
    mid = (q.lower + q.upper) / 2.0 if (q.metric == "mean" and form == "normalised") else 0.0
    for a in range(0, total, _CHUNK):
        c = min(_CHUNK, total - a)
        count, term = _blocks(S, D, q, rng, c, k, mid)
        if q.metric == "count":
            out[a : a + c] = count + _draw(noise, scales, rng, (c, k))
        elif q.metric == "sum":
            out[a : a + c] = term + _draw(noise, scales, rng, (c, k))
        else:
            noisy_count = count + _draw(noise, scales[0], rng, (c, k))
            noisy_term = term + _draw(noise, scales[1], rng, (c, k))
            out[a : a + c] = mid + noisy_term / np.maximum(1.0, noisy_count)
    return out[0] if n_out is None else out


def mechanism(
    dataset: UserDataset,
    public_partitions,
    metric,
    L0,
    Linf,
    epsilon,
    rng,
    size=None,
    *,
    lower=None,
    upper=None,
    delta=0.0,
    noise="laplace",
    bounding="records",
) -> np.ndarray:
    """The noisy COUNT, SUM or MEAN of every public partition: shape (k,) or (size, k), in the order
    of ``public_partitions``; each of the ``size`` releases bounds afresh (``bound``).

    Why this is private (spec §2-§5): ``bound`` leaves every user in at most L0 partitions with at
    most Linf records (or one clamped total) in each; so adding or removing one user moves the
    vector of ``statistic`` by at most ``sensitivity`` in L1 and in L2, whatever the sampling drew
    for that user, while the other users' sampling is unchanged (it reads only their own
    structure). Laplace noise of scale L1 / eps on each coordinate is then eps-DP, Gaussian noise
    of the analytic sigma for L2 is (eps, delta)-DP. The partition list is public, so no partition's
    presence depends on the data (no selection step, no delta for it). MEAN releases two such
    vectors at (eps/2, delta/2) each and post-processes them: basic composition gives (eps, delta).
    """
    return _run(
        dataset,
        public_partitions,
        metric,
        L0,
        Linf,
        epsilon,
        rng,
        size,
        lower,
        upper,
        delta,
        noise,
        bounding,
        "normalised",
    )


def mean_sum_over_count(
    dataset: UserDataset,
    public_partitions,
    L0,
    Linf,
    epsilon,
    rng,
    size=None,
    *,
    lower,
    upper,
    delta=0.0,
    noise="laplace",
) -> np.ndarray:
    """The other MEAN of spec §4.1: noisy clamped SUM / max(1, noisy COUNT), budget split
    evenly; shape (k,) or (size, k). Private by the same argument as ``mechanism`` (two vectors at
    (eps/2, delta/2), post-processed), but its sum's sensitivity is Linf max(|lower|, |upper|), not
    Linf (upper - lower) / 2: more noise away from 0, and a distribution that differs from
    ``mechanism(metric="mean")``, so validate names it a deviation, not a violation."""
    return _run(
        dataset,
        public_partitions,
        "mean",
        L0,
        Linf,
        epsilon,
        rng,
        size,
        lower,
        upper,
        delta,
        noise,
        "records",
        "sum-over-count",
    )


def release_map(release, public_partitions) -> dict:
    """One release (k,) as the map partition -> noisy value over the public list."""
    keys = _partitions(public_partitions)
    r = check_finite_array(release, "release", ndim=(1,))
    if r.shape != (keys.size,):
        raise ValueError(f"release must have shape ({keys.size},) (one value per public partition), got {r.shape}")
    return {int(k): float(v) for k, v in zip(keys, r)}
