"""Real libraries' per-partition contribution-bounded aggregations over PUBLIC partitions, wrapped
in the call shape of the Wilson et al. 2020 specs (``userdp validate wilson2020.sum --signature``):

    f(dataset, rng, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding)

returning a ``(k,)`` array in the order of ``public_partitions``. Which algorithm each implements,
and the verdict ``userdp validate`` gives, are in docs/validate.md ("Validate real libraries").

- ``pipelinedp_aggregate``: PipelineDP 0.3.1 ``DPEngine.aggregate`` (LocalBackend) with ``metrics =
  [SUM]`` or ``[COUNT]``, ``max_partitions_contributed = L0``, ``max_contributions_per_partition =
  Linf``, ``min_value = lower``, ``max_value = upper``, ``public_partitions``, noise LAPLACE or
  GAUSSIAN, one ``NaiveBudgetAccountant(epsilon, delta)``. PipelineDP bounds contributions itself:
  a uniform sample of L0 partitions per user (``sample_fixed_per_key``) and of Linf records per
  user and partition, each record clamped; Laplace of scale L0 Linf max(|lower|, |upper|) / eps
  (COUNT: L0 Linf / eps), the Gaussian's sigma the analytic one for L2 = sqrt(L0) Linf max|v|.
  That is Wilson et al.'s algorithm with record-level clamping: ``wilson2020.sum``,
  ``wilson2020.count`` and their ``-gaussian`` specs. ``metrics = [MEAN]``: mid + noisy
  normalised sum / max(1, noisy count), the budget split in halves, ``wilson2020.mean``.
- ``pydp_aggregate``: python-dp 1.1.5 ``BoundedSum`` / ``Count`` (``laplacian``), one per public
  partition, with ``l0_sensitivity = L0`` and ``linf_sensitivity = Linf``. Those are promises: the
  library's documentation leaves the bounding to the caller, so this wrapper does it as the
  promise says, with ``rng``: each user keeps a uniform subset of L0 of its partitions (among the
  public ones: a record outside them is dropped first) and, in each, a uniform subset of Linf
  records. The library clamps each record to [lower, upper] and adds Laplace of scale L0 Linf
  max(|lower|, |upper|) / eps per partition; the partitions compose in parallel over the L0 bound.

- ``pipelinedp_select_partitions``: PipelineDP's private partition selection,
  ``DPEngine.select_partitions`` with ``SelectPartitionsParams(max_partitions_contributed =
  kappa)`` and its default strategy TRUNCATED_GEOMETRIC (python-dp's near-truncated-geometric
  selection, each partition at eps / kappa and delta / kappa), the whole (eps, delta) of one
  accountant on it: Desfontaines et al. 2022's optimal selection, ``desfontaines2022.optimal``;
  the release is 0/1 over the spec's candidate keys.

- ``opendp_aggregate``: OpenDP 0.16's polars front end (``opendp_query``): the privacy unit one user,
  ``truncate_per_group(Linf)`` (a uniform shuffle) and ``truncate_num_groups(L0, keep="first")``,
  the clamped ``dp.sum`` on the public keys, resolved once per public parameter set. Its group
  truncation keeps each user's L0 - 1 partitions of lowest key (polars' dense rank starts at 1),
  with noise for L0: ``wilson2020.sum`` names that a deviation. ``opendp_aggregate_planted_eps`` is
  its planted bug (resolved at 2 eps).

Noise comes from each library's own generator (python-dp's C++ ``SecureURBG``; PipelineDP draws
it through python-dp, and samples contributions with numpy's global generator; OpenDP's OS CSPRNG
and polars' shuffle), never from
``rng``: ``--seed`` does not reproduce a run, the checks are valid all the same (their
thresholds hold for any independent noise).
"""

from __future__ import annotations

import functools
from operator import itemgetter

import numpy as np
import opendp.prelude as dp
import pipeline_dp
import polars as pl
from pydp.algorithms.laplacian import BoundedSum, Count

from userdp.properties.adapter import Adapter
from userdp.reference.data import UserDataset

__all__ = [
    "PIPELINEDP_NOISE",
    "bound_contributions",
    "pipelinedp_aggregate",
    "pipelinedp_noise_scale",
    "pipelinedp_noise_stddev",
    "pydp_aggregate",
    "pydp_aggregate_unbounded",
    "PIPELINEDP_NOISE_L0_AS_1",
    "OPENDP_NOISE",
    "pipelinedp_select_partitions",
    "pipelinedp_select_partitions_bounds_trusted",
    "opendp_noise_scale",
    "opendp_query",
    "opendp_aggregate",
    "opendp_aggregate_planted_eps",
    "opendp_truncated",
    "OPENDP_MAX_LENGTH",
]

dp.enable_features("contrib")  # the polars front end's Laplace on floats is "contrib" in OpenDP 0.16
_METRICS = {"sum": pipeline_dp.Metrics.SUM, "count": pipeline_dp.Metrics.COUNT, "mean": pipeline_dp.Metrics.MEAN}
_NOISE = {"laplace": pipeline_dp.NoiseKind.LAPLACE, "gaussian": pipeline_dp.NoiseKind.GAUSSIAN}
_EXTRACTORS = pipeline_dp.DataExtractors(
    privacy_id_extractor=itemgetter(0), partition_extractor=itemgetter(1), value_extractor=itemgetter(2)
)


def _check(public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding) -> list[int]:
    """Public inputs only, checked before a record is read."""
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {sorted(_METRICS)}, got {metric!r}")
    if noise not in _NOISE:
        raise ValueError(f"noise must be one of {sorted(_NOISE)}, got {noise!r}")
    if bounding != "records":
        raise ValueError(f"bounding must be 'records' (each record clamped), got {bounding!r}")
    for v, name in ((L0, "L0"), (Linf, "Linf")):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < epsilon < float("inf"):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}")
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be a number in [0, 1), got {delta!r}")
    if (noise == "laplace") != (delta == 0):
        raise ValueError(f"delta must be 0 with Laplace noise and > 0 with Gaussian, got {delta!r} with {noise!r}")
    if metric in ("sum", "mean"):
        if lower is None or upper is None or not (np.isfinite(lower) and np.isfinite(upper) and lower <= upper):
            raise ValueError(
                f"SUM and MEAN need finite bounds with lower <= upper, got lower={lower!r}, upper={upper!r}"
            )
    parts = [int(p) for p in public_partitions]
    if len(set(parts)) != len(parts) or any(p < 0 for p in parts):
        raise ValueError(f"public_partitions must be distinct ints >= 0, got {public_partitions!r}")
    return parts


def _params(metric, L0, Linf, lower, upper, noise, stddev: bool = False):
    bounds = {} if metric == "count" else {"min_value": float(lower), "max_value": float(upper)}
    return pipeline_dp.AggregateParams(
        metrics=[_METRICS[metric]],
        noise_kind=_NOISE[noise],
        max_partitions_contributed=int(L0),
        max_contributions_per_partition=int(Linf),
        output_noise_stddev=stddev,
        **bounds,
    )


def _pipelinedp_run(dataset: UserDataset, parts, metric, L0, Linf, lower, upper, epsilon, delta, noise, stddev):
    rows = list(zip(dataset.user_ids.tolist(), dataset.partition_ids.tolist(), dataset.values.tolist()))
    if not rows:  # PipelineDP refuses an empty collection: a record in no public partition is dropped by it
        rows = [(-1, -1, 0.0)]
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=float(epsilon), total_delta=float(delta))
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
    params = _params(metric, L0, Linf, lower, upper, noise, stddev)
    result = engine.aggregate(rows, params, _EXTRACTORS, public_partitions=parts)
    accountant.compute_budgets()
    return dict(result)


def pipelinedp_aggregate(
    dataset: UserDataset, rng, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
) -> np.ndarray:
    """One PipelineDP aggregation: the noisy SUM or COUNT of each public partition, in order."""
    parts = _check(public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding)
    out = _pipelinedp_run(dataset, parts, metric, L0, Linf, lower, upper, epsilon, delta, noise, False)
    return np.array([getattr(out[p], metric) for p in parts], dtype=float)


def pipelinedp_noise_stddev(*, metric, L0, Linf, lower, upper, epsilon, delta, noise) -> float:
    """The noise standard deviation PipelineDP reports (``output_noise_stddev=True``) for one
    partition, from an aggregation of one record: a public-parameter readout, no sampling."""
    parts = _check([0], metric, L0, Linf, lower, upper, epsilon, delta, noise, "records")
    D = UserDataset(np.zeros(1), np.zeros(1, dtype=int), partition_ids=np.zeros(1, dtype=int))
    out = _pipelinedp_run(D, parts, metric, L0, Linf, lower, upper, epsilon, delta, noise, True)
    return float(getattr(out[0], f"{metric}_noise_stddev"))


def bound_contributions(dataset: UserDataset, parts, L0: int, Linf: int, rng) -> dict[int, list[float]]:
    """The caller's bounding that python-dp's l0/linf sensitivities promise: per user, a uniform
    subset of L0 of its public partitions, and in each a uniform subset of Linf records. Returns
    {partition: kept values} over ``parts`` (a partition no one keeps maps to [])."""
    public = set(parts)
    by_user: dict[int, dict[int, list[float]]] = {}
    for u, p, v in zip(dataset.user_ids.tolist(), dataset.partition_ids.tolist(), dataset.values.tolist()):
        if p in public:
            by_user.setdefault(u, {}).setdefault(p, []).append(v)
    kept: dict[int, list[float]] = {p: [] for p in parts}
    for user_parts in by_user.values():
        keys = sorted(user_parts)
        if len(keys) > L0:
            keys = [keys[i] for i in rng.choice(len(keys), size=L0, replace=False)]
        for p in keys:
            vals = user_parts[p]
            if len(vals) > Linf:
                vals = [vals[i] for i in rng.choice(len(vals), size=Linf, replace=False)]
            kept[p].extend(vals)
    return kept


def _pydp(
    dataset, rng, bound: bool, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
):
    parts = _check(public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding)
    if noise != "laplace":
        raise ValueError(f"noise must be 'laplace' (python-dp's laplacian module), got {noise!r}")
    if bound:
        kept = bound_contributions(dataset, parts, int(L0), int(Linf), rng)
    else:  # the planted misuse: every record of every user, trusting the l0/linf promise
        kept = {p: dataset.values[dataset.partition_ids == p].tolist() for p in parts}
    out = []
    for p in parts:
        if metric == "sum":
            algo = BoundedSum(
                epsilon=float(epsilon),
                delta=0.0,
                lower_bound=float(lower),
                upper_bound=float(upper),
                l0_sensitivity=int(L0),
                linf_sensitivity=int(Linf),
                dtype="float",
            )
        else:
            algo = Count(epsilon=float(epsilon), l0_sensitivity=int(L0), linf_sensitivity=int(Linf), dtype="float")
        out.append(algo.quick_result(kept[p]))
    return np.array(out, dtype=float)


def pydp_aggregate(
    dataset: UserDataset, rng, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
) -> np.ndarray:
    """python-dp's BoundedSum or Count per public partition, after the wrapper's bounding."""
    return _pydp(dataset, rng, True, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding)


def pydp_aggregate_unbounded(
    dataset: UserDataset, rng, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
) -> np.ndarray:
    """Planted bug: python-dp called as ``pydp_aggregate`` but WITHOUT the caller's bounding, so a
    user with more than L0 partitions or Linf records per partition moves the release by more
    than the sensitivity the noise is calibrated to."""
    return _pydp(
        dataset, rng, False, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
    )


def pipelinedp_noise_scale(*, metric, L0, Linf, epsilon, lower, upper, delta, noise, bounding) -> float:
    """The noise SCALE of the spec (Laplace b, Gaussian sigma) from PipelineDP's reported
    standard deviation: b = stddev / sqrt(2) for Laplace, sigma = stddev for Gaussian."""
    if bounding != "records":
        raise ValueError(f"bounding must be 'records' (each record clamped), got {bounding!r}")
    sd = pipelinedp_noise_stddev(
        metric=metric, L0=L0, Linf=Linf, lower=lower, upper=upper, epsilon=epsilon, delta=delta, noise=noise
    )
    return sd / np.sqrt(2.0) if noise == "laplace" else sd


# The deterministic check the default test run can afford: validate's ``stages`` compares this
# noise scale with the reference's on every case, without drawing a release.
PIPELINEDP_NOISE = Adapter("pipelinedp-0.3.1-noise-scale", noise_scale=pipelinedp_noise_scale)


def _noise_scale_l0_as_1(*, metric, L0, Linf, epsilon, lower, upper, delta, noise, bounding) -> float:
    return pipelinedp_noise_scale(
        metric=metric,
        L0=1,
        Linf=Linf,
        epsilon=epsilon,
        lower=lower,
        upper=upper,
        delta=delta,
        noise=noise,
        bounding=bounding,
    )


# Planted bug: PipelineDP configured with max_partitions_contributed = 1 whatever L0 is (users
# contribute to L0 partitions, the noise covers one): too little noise wherever L0 > 1.
PIPELINEDP_NOISE_L0_AS_1 = Adapter("pipelinedp-0.3.1-noise-scale-L0-as-1", noise_scale=_noise_scale_l0_as_1)


_OPENDP_SCHEMA = {"user": pl.Int64, "part": pl.Int64, "value": pl.Float64}
# OpenDP's margin descriptor: a PUBLIC bound on the records of one partition (its float sum's rounding
# bound uses it). Declared, not measured on the data (measuring it would make it private); validate's
# datasets have at most a few hundred records in all.
OPENDP_MAX_LENGTH = 1000


def opendp_query(lf, keys, *, L0, Linf, epsilon, lower, upper):
    """OpenDP 0.16's polars query for a per-partition SUM over the LazyFrame ``lf``
    (columns user, part, value), released on the public keys ``keys`` (a LazyFrame of ``part``):
    the privacy unit is one user (``unit_of(contributions=1, identifier="user")``), bounded by
    ``truncate_per_group(Linf)`` (keep="sample": a uniform shuffle of each user's rows in each
    partition) and ``truncate_num_groups(L0, keep="first")`` over ``part``. The default
    ``keep="sample"`` of ``truncate_num_groups`` cannot release in 0.16 ("multiple fields with name
    'part' found": its struct of the key's hash and the key names both fields after the key), so
    "first" is the one group truncation that runs: each user's partitions of lowest key, where the
    filter ``rank("dense") < L0`` on polars' 1-based rank keeps L0 - 1 of them (measured; docs/validate.md).
    (Declaring the bound in the unit instead, ``contributions=[Bound(by, per_group=Linf, num_groups=L0)]``,
    calibrates to L0 Linf^2 max|v| / eps: measured 54 for L0 = 2, Linf = 3, bounds [-3, 1].)"""
    ctx = dp.Context.compositor(
        data=lf,
        privacy_unit=dp.unit_of(contributions=1, identifier="user"),
        privacy_loss=dp.loss_of(epsilon=float(epsilon)),
        split_evenly_over=1,
        margins=[dp.polars.Margin(by=["part"], max_length=OPENDP_MAX_LENGTH, invariant="keys")],
    )
    agg = pl.col("value").fill_null(0.0).fill_nan(0.0).dp.sum((float(lower), float(upper)))
    return opendp_truncated(ctx, L0=L0, Linf=Linf).group_by("part").agg(agg).with_keys(keys)


def opendp_truncated(ctx, *, L0, Linf):
    """The bounding stage of ``opendp_query`` on the context ``ctx``: L0 and Linf, in OpenDP's own
    truncation calls (OpenDP recognises them when it builds the private group-by that follows)."""
    return (
        ctx.query().truncate_per_group(int(Linf), by=["part"]).truncate_num_groups(int(L0), by=["part"], keep="first")
    )


@functools.lru_cache(maxsize=16)
def _opendp_measurement(parts: tuple, L0: int, Linf: int, epsilon: float, lower: float, upper: float):
    """``opendp_query`` resolved once per public parameter set (a resolve costs seconds: it searches
    the scale against the float sum's rounding bound); a release applies it to the data's frame."""
    lf = pl.LazyFrame({"user": [0], "part": [parts[0]], "value": [lower]}, schema=_OPENDP_SCHEMA)
    keys = pl.LazyFrame({"part": list(parts)}, schema={"part": pl.Int64})
    return opendp_query(lf, keys, L0=L0, Linf=Linf, epsilon=epsilon, lower=lower, upper=upper).resolve()


def _opendp_release(dataset: UserDataset, parts, L0, Linf, epsilon, lower, upper) -> np.ndarray:
    meas = _opendp_measurement(tuple(parts), int(L0), int(Linf), float(epsilon), float(lower), float(upper))
    keep = np.isin(dataset.partition_ids, parts)  # the spec drops records outside the public list first
    frame = pl.LazyFrame(
        {
            "user": dataset.user_ids[keep].tolist(),
            "part": dataset.partition_ids[keep].tolist(),
            "value": dataset.values[keep].tolist(),
        },
        schema=_OPENDP_SCHEMA,
    )
    out = dict(zip(*meas(frame).collect().select("part", "value").to_dict(as_series=False).values()))
    return np.array([out[p] for p in parts], dtype=float)


def _opendp_check(public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding) -> list[int]:
    parts = _check(public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding)
    if metric != "sum":
        raise ValueError(f"metric must be 'sum' (the OpenDP wrapper's one metric), got {metric!r}")
    if noise != "laplace":
        raise ValueError(f"noise must be 'laplace' (OpenDP's pure-DP polars context), got {noise!r}")
    if not parts:
        raise ValueError("public_partitions must hold at least one partition")
    return parts


def opendp_aggregate(
    dataset: UserDataset, rng, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
) -> np.ndarray:
    """One OpenDP release of ``opendp_query``: the noisy clamped SUM of each public partition, in
    order. OpenDP bounds contributions itself and draws its own randomness (``rng`` is not read)."""
    parts = _opendp_check(public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding)
    return _opendp_release(dataset, parts, L0, Linf, epsilon, lower, upper)


def opendp_aggregate_planted_eps(
    dataset: UserDataset, rng, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding
) -> np.ndarray:
    """Planted bug: the OpenDP release resolved at twice the budget asked for (a wrapper that spends
    eps on each of two halves it then releases as one): half the noise."""
    parts = _opendp_check(public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding)
    return _opendp_release(dataset, parts, L0, Linf, 2.0 * float(epsilon), lower, upper)


def opendp_noise_scale(*, metric, L0, Linf, epsilon, lower, upper, delta, noise, bounding) -> float:
    """The Laplace scale OpenDP's ``summarize()`` reports for ``opendp_query`` (no release drawn;
    the frame's contents do not enter the scale), with L0 public keys. About 3-8 s a call here
    (it resolves the float sum's rounding bound)."""
    _check([0], metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding)
    if metric != "sum":
        raise ValueError(f"metric must be 'sum' (the OpenDP wrapper's one metric), got {metric!r}")
    if noise != "laplace":
        raise ValueError(f"noise must be 'laplace' (OpenDP's pure-DP polars context), got {noise!r}")
    lf = pl.LazyFrame(
        {"user": [0], "part": [0], "value": [0.0]}, schema={"user": pl.Int64, "part": pl.Int64, "value": pl.Float64}
    )
    # L0 public keys: with k < L0 keys OpenDP calibrates to min(L0, k) partitions (measured: scale 9,
    # not 18, for one key at L0 = 2, Linf = 3, bounds [-3, 1]), tighter than the reference's L0
    keys = pl.LazyFrame({"part": list(range(int(L0)))}, schema={"part": pl.Int64})
    query = opendp_query(lf, keys, L0=L0, Linf=Linf, epsilon=epsilon, lower=lower, upper=upper)
    scales = query.summarize()["scale"]
    if len(scales) != 1:
        raise ValueError(f"expected one noisy column in OpenDP's summary, got {len(scales)}")
    return float(scales[0])


OPENDP_NOISE = Adapter("opendp-0.16.0-polars-noise-scale", noise_scale=opendp_noise_scale)


def pipelinedp_select_partitions(dataset: UserDataset, rng, *, epsilon, delta, max_partitions_contributed, partitions):
    """PipelineDP's private partition selection: 1 where candidate key ``partitions[i]`` is kept."""
    return _select(dataset, epsilon, delta, max_partitions_contributed, partitions, False)


def pipelinedp_select_partitions_bounds_trusted(
    dataset: UserDataset, rng, *, epsilon, delta, max_partitions_contributed, partitions
):
    """Planted bug: ``contribution_bounds_already_enforced=True`` on data whose users are NOT bounded
    to kappa partitions (a misuse of the flag): a user in more than kappa partitions raises each
    of them at eps / kappa, more than eps in all."""
    return _select(dataset, epsilon, delta, max_partitions_contributed, partitions, True)


def _select(dataset, epsilon, delta, max_partitions_contributed, partitions, trusted: bool):
    kappa = max_partitions_contributed
    if isinstance(kappa, bool) or not isinstance(kappa, (int, np.integer)) or kappa < 1:
        raise ValueError(f"max_partitions_contributed must be an integer >= 1, got {kappa!r}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < epsilon < float("inf"):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}")
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be a number in (0, 1), got {delta!r}")
    keys = [int(p) for p in partitions]
    if len(set(keys)) != len(keys) or any(p < 0 for p in keys):
        raise ValueError(f"partitions must be distinct ints >= 0, got {partitions!r}")
    rows = list(zip(dataset.user_ids.tolist(), dataset.partition_ids.tolist(), dataset.values.tolist()))
    if not rows:  # PipelineDP refuses an empty collection; no key can be kept
        return np.zeros(len(keys), dtype=int)
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=float(epsilon), total_delta=float(delta))
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
    params = pipeline_dp.SelectPartitionsParams(
        max_partitions_contributed=int(kappa), contribution_bounds_already_enforced=trusted
    )
    result = engine.select_partitions(rows, params, _EXTRACTORS)
    accountant.compute_budgets()
    kept = set(result)
    return np.array([int(k in kept) for k in keys], dtype=int)
