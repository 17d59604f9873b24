"""Tumult Analytics 0.21.0's per-user bounded SUM over PUBLIC partitions, wrapped in the call shape of
the Wilson et al. 2020 specs (``userdp validate wilson2020.sum --signature``). It runs only in the
Tumult environment of ``examples/tumult/requirements.txt`` (numpy < 2 and pyarrow < 19 clash with the
gallery extra's pins; ``examples/tumult/run.sh`` builds it and validates this module). docs/validate.md
("Tumult Analytics, in an environment of its own") has the verdict and the figures.

The query, in Tumult's own API (``AddRowsWithID``: the privacy unit is one user, all its rows)::

    QueryBuilder("d").enforce(MaxGroupsPerID("part", L0)).enforce(MaxRowsPerGroupPerID("part", Linf))
        .groupby(KeySet.from_dict({"part": public_partitions})).sum("value", low=lower, high=upper)

evaluated under ``PureDPBudget(epsilon)``. Tumult clamps each value to [low, high] and adds Laplace of
scale L0 Linf max(|low|, |high|) / eps to each partition's sum (its ``_noise_info``), the reference's
scale. Its truncations are not samples: ``tmlt.core.utils.truncation`` keeps each user's partitions, and
in each its rows, of LOWEST SHA-256 HASH of their contents (user id, key, value), with no salt, so one
dataset is always truncated the same way.

``tumult_aggregate`` is batched (a parameter ``size``): a Spark query costs about a second whatever its
size, so one call answers ``size`` releases as one query over ``size`` disjoint copies of the dataset.
Copy c's users get ids c * (max id + 1) + id and its partitions keys c * k + i (i the partition's
place in ``public_partitions``), so every user lies in one copy and a copy's release is one release of
the query on the dataset (the bounds are per user, the noise independent per group). What the copies
change: each copy's user ids differ, so Tumult's hash order is drawn afresh per copy, as a sample
would be; repeated releases of ONE dataset would all share one truncation (``fixed_truncation``
measures that). Records outside ``public_partitions`` are dropped first (the spec's order).

Noise comes from Tumult's own generator (``tmlt.core.random``: RDRAND, else ``os.urandom``), never
from ``rng``: ``--seed`` does not reproduce a run; the checks stay valid.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import tempfile

import numpy as np
import pandas as pd
from pyspark.sql import SparkSession
from tmlt.analytics import (
    AddRowsWithID,
    KeySet,
    MaxGroupsPerID,
    MaxRowsPerGroupPerID,
    PureDPBudget,
    QueryBuilder,
    Session,
)

from userdp.properties.adapter import Adapter
from userdp.reference.data import UserDataset

__all__ = [
    "TUMULT",
    "TUMULT_NOISE",
    "VERSION",
    "main",
    "fixed_truncation",
    "spark",
    "tumult_aggregate",
    "tumult_noise_scale",
]

VERSION = "0.21.0"


@functools.lru_cache(maxsize=1)
def spark() -> SparkSession:
    """One local Spark session on one core (its Python workers must be this interpreter)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    return (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="userdp-spark-"))  # not the working directory
        .getOrCreate()
    )


def _check(public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding) -> list[int]:
    """Public inputs only, checked before a record is read."""
    if metric != "sum":
        raise ValueError(f"metric must be 'sum' (this wrapper's one metric), got {metric!r}")
    if noise != "laplace":
        raise ValueError(f"noise must be 'laplace' (Tumult's pure-DP float sum), got {noise!r}")
    if bounding != "records":
        raise ValueError(f"bounding must be 'records' (each record clamped), got {bounding!r}")
    for v, name in ((L0, "L0"), (Linf, "Linf")):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < epsilon < float("inf"):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}")
    if delta != 0:
        raise ValueError(f"delta must be 0 with Laplace noise, got {delta!r}")
    if lower is None or upper is None or not (np.isfinite(lower) and np.isfinite(upper) and lower <= upper):
        raise ValueError(f"SUM needs finite bounds with lower <= upper, got lower={lower!r}, upper={upper!r}")
    parts = [int(p) for p in public_partitions]
    if not parts or len(set(parts)) != len(parts) or any(p < 0 for p in parts):
        raise ValueError(f"public_partitions must be distinct ints >= 0, at least one, got {public_partitions!r}")
    return parts


def _query(keys: list[int], L0, Linf, lower, upper):
    return (
        QueryBuilder("d")
        .enforce(MaxGroupsPerID("part", int(L0)))
        .enforce(MaxRowsPerGroupPerID("part", int(Linf)))
        .groupby(KeySet.from_dict({"part": keys}))
        .sum("value", low=float(lower), high=float(upper))
    )


def _session(frame: pd.DataFrame, budget: float) -> Session:
    df = spark().createDataFrame(frame.astype({"user": "int64", "part": "int64", "value": "float64"}))
    return Session.from_dataframe(
        privacy_budget=PureDPBudget(budget), source_id="d", dataframe=df, protected_change=AddRowsWithID("user")
    )


def _copies(dataset: UserDataset, parts: list[int], size: int) -> pd.DataFrame:
    keep = np.isin(dataset.partition_ids, parts)
    u, p, v = dataset.user_ids[keep], dataset.partition_ids[keep], dataset.values[keep]
    place = {q: i for i, q in enumerate(parts)}
    idx = np.array([place[q] for q in p.tolist()], dtype=np.int64)
    stride = int(u.max()) + 1 if u.size else 1
    c = np.repeat(np.arange(size, dtype=np.int64), u.size)
    return pd.DataFrame(
        {
            "user": c * stride + np.tile(u.astype(np.int64), size),
            "part": c * len(parts) + np.tile(idx, size),
            "value": np.tile(v.astype(float), size),
        }
    )


def tumult_aggregate(
    dataset: UserDataset,
    rng,
    size,
    *,
    public_partitions,
    metric,
    L0,
    Linf,
    lower,
    upper,
    epsilon,
    delta,
    noise,
    bounding,
) -> np.ndarray:
    """``size`` independent releases (module docstring): a ``(size, k)`` array in the order of
    ``public_partitions``, from one Tumult query over ``size`` disjoint copies of ``dataset``."""
    parts = _check(public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding)
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"size must be an integer >= 1, got {size!r}")
    k, size = len(parts), int(size)
    frame = _copies(dataset, parts, size)
    session = _session(frame, float(epsilon))
    query = _query(list(range(size * k)), L0, Linf, lower, upper)
    out = session.evaluate(query, PureDPBudget(float(epsilon))).toPandas()
    got = dict(zip(out["part"].tolist(), out["value_sum"].tolist()))
    return np.array([got[j] for j in range(size * k)], dtype=float).reshape(size, k)


def tumult_noise_scale(*, metric, L0, Linf, epsilon, lower, upper, delta, noise, bounding) -> float:
    """The Laplace scale Tumult reports for the query (``Session._noise_info``, a private method: no
    release drawn, the frame's contents do not enter it), on one public partition."""
    _check([0], metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding)
    session = _session(pd.DataFrame({"user": [0], "part": [0], "value": [0.0]}), float(epsilon))
    info = session._noise_info(_query([0], L0, Linf, lower, upper), PureDPBudget(float(epsilon)))
    if len(info) != 1 or info[0]["noise_mechanism"].name != "LAPLACE":
        raise ValueError(f"expected one Laplace noise step in Tumult's noise info, got {info!r}")
    return float(info[0]["noise_parameter"])


TUMULT = Adapter(f"tmlt-analytics-{VERSION}", noise_scale=tumult_noise_scale, mechanism=tumult_aggregate)
# the noise-free stage alone: validate's stage comparison on every case, no release drawn
TUMULT_NOISE = Adapter(f"tmlt-analytics-{VERSION}-noise-scale", noise_scale=tumult_noise_scale)


def fixed_truncation(dataset: UserDataset, *, public_partitions, L0, Linf, lower, upper, repeats: int = 3):
    """What one dataset's repeated releases share: ``repeats`` releases of ``dataset`` itself (not
    copies) at eps = 1e6 (noise of scale ~1e-6 L0 Linf max|v|), each its own query. Returns a
    ``(repeats, k)`` array: equal rows mean one truncation every time (Tumult's hash order)."""
    parts = _check(public_partitions, "sum", L0, Linf, lower, upper, 1.0, 0.0, "laplace", "records")
    frame = _copies(dataset, parts, 1)
    rows = []
    for _ in range(int(repeats)):
        session = _session(frame, 1e6)
        out = session.evaluate(_query(list(range(len(parts))), L0, Linf, lower, upper), PureDPBudget(1e6))
        got = dict(zip(*out.toPandas()[["part", "value_sum"]].to_dict("list").values()))
        rows.append([got[j] for j in range(len(parts))])
    return np.array(rows, dtype=float)


def measure(size: int = 2000) -> dict:
    """On wilson2020.sum's third fixed case (L0 = Linf = 1; users 0 and 1 have three public partitions
    of three records each): ``fixed_truncation`` (3 queries of the dataset itself), one batch of
    ``size`` releases (``tumult_aggregate``: the copies), and the reference's statistic and release
    standard deviation (200,000 reference releases, seed 0). Lists, so that it prints as JSON."""
    from userdp.audits.validation import get
    from userdp.reference import wilson2020 as W

    spec = get("wilson2020.sum")
    case = spec.cases()[2]
    p = case.params
    stat = W.expected_statistic(
        case.dataset, p["public_partitions"], "sum", p["L0"], p["Linf"], p["lower"], p["upper"], "records"
    )
    ref = spec.reference(case.dataset, rng=np.random.default_rng(0), size=200_000, **p)
    batch = tumult_aggregate(case.dataset, None, size, **p)
    fixed = fixed_truncation(case.dataset, **{k: p[k] for k in ("public_partitions", "L0", "Linf", "lower", "upper")})
    return {
        "case": case.description,
        "statistic": np.asarray(stat, dtype=float).tolist(),
        "reference_sd": ref.std(axis=0).tolist(),
        "batch_size": int(size),
        "batch_mean": batch.mean(axis=0).tolist(),
        "batch_sd": batch.std(axis=0).tolist(),
        "fixed": fixed.tolist(),
    }


def main() -> None:
    """``python -m examples.tumult.gallery_tumult``: print ``measure()`` as JSON."""
    print(json.dumps(measure(), indent=1))


if __name__ == "__main__":
    main()
