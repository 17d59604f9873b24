"""The bad-input rows of Desfontaines et al. 2022 (``userdp.reference.desfontaines2022``), in the format of
``tests/bad_values.py``; ``tests/bad_input_table.py`` collects them into its ``TABLE`` and
``tests/test_bad_input.py`` runs them."""

from __future__ import annotations

import numpy as np

from bad_values import DATASET, DELTA_POS, EPS, INT, RNG, SIZE, Entry, entry_adder, rng  # tests/ is on sys.path
from userdp.reference import desfontaines2022 as R
from userdp.reference.data import UserDataset

__all__ = ["ROWS"]

ROWS: list[Entry] = []
entry = entry_adder(ROWS)


def _D():
    """Three users in partitions 0-2 (user 0 in two)."""
    return UserDataset.from_arrays(np.array([0.1, 0.2, 0.3, 0.4]), [0, 0, 1, 2], partition_ids=[0, 1, 1, 2])


_no_keys = lambda: UserDataset.from_user_lists([[0.5], [0.2]])  # noqa: E731  (no partition_ids)
BAD_DS = DATASET() + [_no_keys()]
KAPPA = INT()
PRE = INT()
SPLIT = ["log", None, 1, "Linear"]
STRATEGY = ["exponential", None, 0, "Optimal"]
COUNTS = [np.array([0.5]), np.array([-1]), "3", None, True, np.array([1.0, 2.0]), [[-2]]]
DELTA = DELTA_POS() + [1e-60]
PARTITIONS = [[], [1.5], [-1], [[0]], None, "a", [0, 0]]
_budget = lambda **kw: dict(epsilon=1.0, delta=1e-5, **kw)  # noqa: E731

entry("desfontaines2022.claim", R.claim, lambda: _budget(), epsilon=EPS(), delta=DELTA)
entry(
    "desfontaines2022.check_params",
    R.check_params,
    lambda: _budget(),
    epsilon=EPS(),
    delta=DELTA,
    max_partitions_contributed=KAPPA,
    pre_threshold=PRE,
    delta_split=SPLIT,
    strategy=STRATEGY,
    ok={"delta": [0.7]},  # refused for the Laplace strategy only (delta' <= 1/2); the default (optimal) takes it
)
entry(
    "desfontaines2022.per_partition_budget",
    R.per_partition_budget,
    lambda: _budget(max_partitions_contributed=2),
    epsilon=EPS(),
    delta=DELTA,
    max_partitions_contributed=KAPPA,
    delta_split=SPLIT,
)
entry("desfontaines2022.crossovers", R.crossovers, lambda: _budget(), epsilon=EPS(), delta=DELTA)
_curve = dict(epsilon=EPS(), delta=DELTA, max_partitions_contributed=KAPPA, delta_split=SPLIT, pre_threshold=PRE)
entry("desfontaines2022.keep_probability", R.keep_probability, lambda: _budget(n=np.arange(5)), n=COUNTS, **_curve)
entry(
    "desfontaines2022.keep_probability_recursive",
    R.keep_probability_recursive,
    lambda: _budget(n_max=5),
    n_max=INT(0, 10**7),
    **_curve,
)
entry(
    "desfontaines2022.truncated_geometric_noise",
    R.truncated_geometric_noise,
    lambda: _budget(),
    epsilon=EPS(),
    delta=DELTA,
    max_partitions_contributed=KAPPA,
    delta_split=SPLIT,
)
_lap = dict(epsilon=EPS(), delta=DELTA + [0.6], max_partitions_contributed=KAPPA, delta_split=SPLIT)
entry("desfontaines2022.laplace_threshold", R.laplace_threshold, lambda: _budget(), **_lap)
entry(
    "desfontaines2022.laplace_keep_probability",
    R.laplace_keep_probability,
    lambda: _budget(n=np.arange(5)),
    n=COUNTS,
    pre_threshold=PRE,
    **_lap,
)
_gauss = dict(epsilon=EPS(), delta=DELTA, max_partitions_contributed=KAPPA, delta_split=SPLIT)
entry("desfontaines2022.gaussian_threshold", R.gaussian_threshold, lambda: _budget(), **_gauss)
entry(
    "desfontaines2022.gaussian_keep_probability",
    R.gaussian_keep_probability,
    lambda: _budget(n=np.arange(5)),
    n=COUNTS,
    pre_threshold=PRE,
    **_gauss,
)
entry(
    "desfontaines2022.bound_contributions",
    R.bound_contributions,
    lambda: dict(dataset=_D(), max_partitions_contributed=1, rng=rng()),
    dataset=BAD_DS,
    max_partitions_contributed=KAPPA,
    rng=RNG(),
)
entry("desfontaines2022.statistic", R.statistic, lambda: dict(dataset=_D()), dataset=BAD_DS)
_all = dict(_curve, strategy=STRATEGY)
entry(
    "desfontaines2022.keep_probabilities",
    R.keep_probabilities,
    lambda: _budget(n=np.arange(5), strategy="laplace"),
    n=COUNTS,
    **_all,
)
entry(
    "desfontaines2022.thresholds",
    R.thresholds,
    lambda: _budget(strategy="gaussian"),
    epsilon=EPS(),
    delta=DELTA,
    max_partitions_contributed=KAPPA,
    delta_split=SPLIT,
    strategy=STRATEGY,
)
entry(
    "desfontaines2022.select_partitions",
    R.select_partitions,
    lambda: _budget(dataset=_D(), rng=rng()),
    dataset=BAD_DS,
    rng=RNG(),
    **_all,
)
entry(
    "desfontaines2022.mechanism",
    R.mechanism,
    lambda: _budget(dataset=_D(), rng=rng(), size=3, partitions=[0, 1, 2, 5]),
    dataset=BAD_DS,
    rng=RNG(),
    size=SIZE(),
    partitions=PARTITIONS,
    **_all,
)
