"""The bad-input rows of Acharya et al. 2024 (``userdp.reference.acharya2024*``), in the format of
``tests/bad_values.py``; ``tests/bad_input_table.py`` collects them into its ``TABLE`` and
``tests/test_bad_input.py`` runs them."""

from __future__ import annotations

import numpy as np

from bad_values import (  # tests/ is on sys.path (rootdir conftest)
    DATASET,
    DS_ALIAS,
    Entry,
    INT,
    POS,
    RNG,
    SIZE,
    entry_adder,
    inf,
    nan,
    rng,
)
from userdp.reference.data import UserDataset

__all__ = ["ROWS"]

ROWS: list[Entry] = []
entry = entry_adder(ROWS)

# ============================================================ Acharya et al. 2024
try:
    from userdp.reference import acharya2024 as Ac
except ImportError:
    Ac = None
if Ac is not None:

    def _Da(**kw):
        """Three records in [0, 1]^2, labels in [-1, 1], a profile."""
        f = dict(
            values=np.array([[0.1, 0.9], [0.5, 0.5], [1.0, 0.0]]),
            user_ids=np.arange(3),
            labels=np.array([0.5, -0.5, 1.0]),
            epsilons=np.array([0.2, 0.5, 1.0]),
        )
        f.update(kw)
        return UserDataset(**f)

    def DATASET_AC():
        """The domain of Acharya et al.: x in [0, 1]^d, y in [-1, 1], a profile, labels."""
        return DATASET() + [
            _Da(values=np.array([[0.1, 1.5], [0.5, 0.5], [1.0, 0.0]])),
            _Da(values=np.array([[0.1, -0.1], [0.5, 0.5], [1.0, 0.0]])),
            _Da(labels=np.array([0.5, -1.5, 1.0])),
            _Da(epsilons=None),
            _Da(labels=None),
        ]

    AC_ALIAS = {"dataset": DS_ALIAS + ("epsilons",)}

    entry("acharya2024.check_data", Ac.check_data, lambda: dict(dataset=_Da()), dataset=DATASET_AC(), alias=AC_ALIAS)
    entry("acharya2024.claim", Ac.claim, lambda: dict(dataset=_Da()), dataset=DATASET_AC(), alias=AC_ALIAS)
    entry("acharya2024.weights", Ac.weights, lambda: dict(dataset=_Da()), dataset=DATASET_AC(), alias=AC_ALIAS)
    entry(
        "acharya2024.theta_bound",
        Ac.theta_bound,
        lambda: dict(Lambda=1.0, d=2, B=None),
        Lambda=POS(),
        d=INT(1),
        B=[0.0, -1.0, nan, inf, "1", True],
        ok={"B": [2.0]},
    )
    for _name in ("eta", "sensitivity", "noise_scale"):
        entry(
            f"acharya2024.{_name}",
            getattr(Ac, _name),
            lambda: dict(dataset=_Da(), Lambda=1.0, B=None),
            dataset=DATASET_AC(),
            Lambda=POS(),
            B=[0.0, -1.0, nan, inf, "1", True],
            alias=AC_ALIAS,
            ok={"B": [0.5]},
        )
    entry(
        "acharya2024.statistic",
        Ac.statistic,
        lambda: dict(dataset=_Da(), Lambda=1.0),
        dataset=DATASET_AC(),
        Lambda=POS(),
        alias=AC_ALIAS,
    )
    entry(
        "acharya2024.mechanism",
        Ac.mechanism,
        lambda: dict(dataset=_Da(), rng=rng(), size=None, Lambda=1.0, B=None),
        dataset=DATASET_AC(),
        rng=RNG(),
        size=SIZE(),
        Lambda=POS(),
        B=[0.0, -1.0, nan, inf, "1", True],
        alias=AC_ALIAS,
        ok={"size": [1, 3], "B": [0.5]},
    )
    entry(
        "acharya2024.unregularised_norm",
        Ac.unregularised_norm,
        lambda: dict(dataset=_Da()),
        dataset=DATASET_AC(),
        alias=AC_ALIAS,
    )

    def _Da2():
        return Ac.RELATION.neighbour(_Da(), 0, np.array([1.0, 1.0]), -1.0)

    entry(
        "acharya2024.theorem34_sensitivity",
        Ac.theorem34_sensitivity,
        lambda: dict(dataset=_Da(), neighbour=_Da2(), Lambda=1.0, B=1.0),
        dataset=DATASET_AC(),
        neighbour=[None, "x", _Da(), _Da(labels=np.array([1.0, 1.0, -1.0]))],
        Lambda=POS(),
        B=POS(),
        alias={**AC_ALIAS, "neighbour": ("neighbour",)},
    )
    entry(
        "acharya2024.nonpersonalized_epsilons",
        Ac.nonpersonalized_epsilons,
        lambda: dict(dataset=_Da()),
        dataset=DATASET_AC(),
        alias=AC_ALIAS,
    )
    entry(
        "acharya2024.nonpersonalized_mechanism",
        Ac.nonpersonalized_mechanism,
        lambda: dict(dataset=_Da(), rng=rng(), size=None, Lambda=1.0),
        dataset=DATASET_AC(),
        rng=RNG(),
        size=SIZE(),
        Lambda=POS(),
        alias=AC_ALIAS,
        ok={"size": [2]},
    )
    entry(
        "acharya2024.jorgensen_threshold",
        Ac.jorgensen_threshold,
        lambda: dict(dataset=_Da(), threshold="max"),
        dataset=DATASET_AC(),
        threshold=["median", "", None, 0.0, -1.0, nan, inf, True],
        alias=AC_ALIAS,
        ok={"threshold": ["mean", 0.7]},
    )
    entry(
        "acharya2024.jorgensen_probabilities",
        Ac.jorgensen_probabilities,
        lambda: dict(epsilons=[0.2, 1.0], t=1.0),
        epsilons=[[], [0.0, 1.0], [-1.0], [nan], "a", None, [[0.5]]],
        t=POS(),
    )
    entry(
        "acharya2024.jorgensen_levels",
        Ac.jorgensen_levels,
        lambda: dict(epsilons=[0.2, 1.0], t=1.0),
        epsilons=[[], [0.0, 1.0], [-1.0], [nan], "a", None],
        t=POS(),
    )
    entry(
        "acharya2024.jorgensen_mechanism",
        Ac.jorgensen_mechanism,
        lambda: dict(dataset=_Da(), rng=rng(), size=None, Lambda=1.0, threshold="max"),
        dataset=DATASET_AC(),
        rng=RNG(),
        size=SIZE(),
        Lambda=POS(),
        threshold=["median", 0.0, -1.0, nan, None],
        alias={**AC_ALIAS, "threshold": ("threshold", "t")},
        ok={"size": [2], "threshold": ["mean"]},
    )
