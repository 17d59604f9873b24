"""The bad-input rows of Wilson et al. 2020 (``userdp.reference.wilson2020``), in the format of
``tests/bad_values.py``; ``tests/bad_input_table.py`` collects them into its ``TABLE`` and
``tests/test_bad_input.py`` runs them."""

from __future__ import annotations

import numpy as np

from bad_values import DATASET, DELTA, EPS, INT, RNG, SIZE, Entry, _vec, entry_adder, inf, nan, rng, scalar_ds
from userdp.reference import wilson2020 as W
from userdp.reference.data import UserDataset

__all__ = ["ROWS"]

ROWS: list[Entry] = []
entry = entry_adder(ROWS)


def _D():
    """Three users over partitions 0..2 (user 0 in two partitions)."""
    return UserDataset.from_arrays([0.2, 0.4, 0.5, 0.9], [0, 0, 1, 2], partition_ids=[0, 1, 1, 2])


PUB = [0, 1, 2]
# no partition key; vector values: the aggregation refuses both before reading a value
BAD_DS = DATASET() + [scalar_ds(), _vec().with_fields(partition_ids=np.array([0, 0, 1]))]
PARTS = [[], [0, 0], [-1], [1.5], ["a"], "0", None, 3, {0, 1}, [True]]
METRIC = ["median", None, 1, ["sum"]]
BOUND = [nan, inf, -inf, 1e60, "1", [1.0], True]  # lower / upper: finite reals in [-1e50, 1e50]
BOUNDING = ["rows", None, 1]
NOISE = ["discrete", None, 0]
L_INT = INT()
_sum = lambda **kw: dict(lower=0.0, upper=1.0, **kw)  # noqa: E731

entry(
    "wilson2020.claim",
    W.claim,
    lambda: dict(epsilon=1.0, delta=0.0, noise="laplace"),
    epsilon=EPS(),
    delta=DELTA() + [1e-5],
    noise=NOISE,
)
entry(
    "wilson2020.public_records",
    W.public_records,
    lambda: dict(dataset=_D(), public_partitions=PUB),
    dataset=BAD_DS,
    public_partitions=PARTS,
)
entry(
    "wilson2020.bound",
    W.bound,
    lambda: dict(dataset=_D(), public_partitions=PUB, L0=1, Linf=1, rng=rng(), bounding="records"),
    dataset=BAD_DS,
    public_partitions=PARTS,
    L0=L_INT,
    Linf=L_INT,
    rng=RNG(),
    bounding=BOUNDING,
)
entry(
    "wilson2020.statistic",
    W.statistic,
    lambda: dict(bounded=_D(), public_partitions=PUB, metric="sum", **_sum()),
    bounded=BAD_DS,
    public_partitions=PARTS,
    metric=METRIC,
    lower=BOUND + [2.0],  # lower > upper
    upper=BOUND + [-1.0],
    bounding=BOUNDING,
    alias={"bounded": ("bounded", "dataset")},
)
entry(
    "wilson2020.mean_parts",
    W.mean_parts,
    lambda: dict(bounded=_D(), public_partitions=PUB, lower=0.0, upper=1.0),
    bounded=BAD_DS,
    public_partitions=PARTS,
    lower=BOUND + [1.0],  # MEAN needs lower < upper
    upper=BOUND + [0.0],
    alias={"bounded": ("bounded", "dataset")},
)
entry(
    "wilson2020.expected_statistic",
    W.expected_statistic,
    lambda: dict(dataset=_D(), public_partitions=PUB, metric="sum", L0=1, Linf=1, **_sum()),
    dataset=BAD_DS,
    public_partitions=PARTS,
    metric=METRIC + ["mean"],
    L0=L_INT,
    Linf=L_INT,
    lower=BOUND,
    upper=BOUND,
)
entry(
    "wilson2020.partition_sensitivity",
    W.partition_sensitivity,
    lambda: dict(metric="sum", Linf=2, **_sum()),
    metric=METRIC,
    Linf=L_INT,
    lower=BOUND,
    upper=BOUND + [0.0 - 1.0],
    bounding=BOUNDING,
)
entry(
    "wilson2020.sensitivity",
    W.sensitivity,
    lambda: dict(metric="sum", L0=2, Linf=2, **_sum(), norm="l1"),
    metric=METRIC,
    L0=L_INT,
    Linf=L_INT,
    lower=BOUND,
    upper=BOUND,
    norm=["linf", None, 2],
)
entry(
    "wilson2020.noise_scale",
    W.noise_scale,
    lambda: dict(metric="sum", L0=2, Linf=2, epsilon=1.0, **_sum(), delta=0.0, noise="laplace"),
    metric=METRIC,
    L0=L_INT,
    Linf=L_INT,
    epsilon=EPS(),
    lower=BOUND,
    upper=BOUND,
    delta=DELTA() + [1e-5],  # Laplace: delta must be 0
    noise=NOISE,
)
entry(
    "wilson2020.mechanism",
    W.mechanism,
    lambda: dict(
        dataset=_D(), public_partitions=PUB, metric="sum", L0=1, Linf=1, epsilon=1.0, rng=rng(), size=None, **_sum()
    ),
    dataset=BAD_DS,
    public_partitions=PARTS,
    metric=METRIC,
    L0=L_INT,
    Linf=L_INT,
    epsilon=EPS(),
    rng=RNG(),
    size=SIZE(),
    lower=BOUND,
    upper=BOUND,
    delta=DELTA() + [1e-5],
    noise=NOISE,
    bounding=BOUNDING + ["sum"],  # 'sum' with Linf = 1 given: refused (no row sampling there)
)
entry(
    "wilson2020.mean_sum_over_count",
    W.mean_sum_over_count,
    lambda: dict(dataset=_D(), public_partitions=PUB, L0=1, Linf=1, epsilon=1.0, rng=rng(), size=None, **_sum()),
    dataset=BAD_DS,
    public_partitions=PARTS,
    L0=L_INT,
    Linf=L_INT,
    epsilon=EPS(),
    rng=RNG(),
    size=SIZE(),
    lower=BOUND + [1.0],
    upper=BOUND + [0.0],
    delta=DELTA() + [1e-5],
    noise=NOISE,
)
entry(
    "wilson2020.release_map",
    W.release_map,
    lambda: dict(release=[0.5, 1.0, 2.0], public_partitions=PUB),
    release=[[0.5], [[0.5, 1.0, 2.0]], None, "abc"],
    public_partitions=PARTS,
)
