"""The test-vector design of desfontaines2022.optimal (the datasets and public parameters of its vectors, each
flagged with the bug classes it exposes); ``audits/validation/vector_cases.py`` has the records and the
vocabulary of bug classes, ``audits/validation/vectors.py`` computes the expected values.

Stages pinned: ``statistic(dataset)`` (the keys present and their distinct-user counts) and
``keep_probability(epsilon=, delta=, max_partitions_contributed=)``, the keep curve at n = 0..N_CURVE (the
suite's stage at those counts, bound by ``bind``). Bounding is random and is checked by the property suite
and the audit, not by vectors.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from userdp.properties.desfontaines2022 import REFERENCE, SelectionAdapter
from userdp.reference.data import UserDataset
from userdp.audits.papers._vectors import released_by, spec_reference
from userdp.audits.papers.desfontaines2022.audits import partition_dataset
from userdp.audits.validation.vector_cases import Design, VectorCase, register_design

__all__: list[str] = []


# Why an algorithm of this paper has no statistical vector (yet): the files' statisticalNote, printed in
# docs/vectors.md ("Statistical vectors").
_NO_STATISTICAL = {
    "desfontaines2022.optimal": (
        "not yet: the release is the set of kept partitions, each kept with its keep_probability, a discrete "
        "law with a closed form (a count per partition would test it), which the files' tests, built for a "
        "continuous law, do not cover"
    ),
}

ALGO = "desfontaines2022.optimal"
N_CURVE = 40  # the keep curve's counts n = 0..40: past n2 at every vector's budget


def _bind(adapter):
    """The suite's stages in the vectors' call shape: the curve at n = 0..N_CURVE, the statistic as it is."""
    kp = adapter.keep_probability
    return dataclasses.replace(
        adapter,
        keep_probability=None
        if kp is None
        else lambda *, epsilon, delta, max_partitions_contributed: np.asarray(
            kp(
                n=np.arange(N_CURVE + 1),
                epsilon=epsilon,
                delta=delta,
                max_partitions_contributed=max_partitions_contributed,
            ),
            float,
        ),
        weights=None,
    )


def _cases() -> list:
    rows = UserDataset.from_arrays(
        np.zeros(9), [0, 0, 0, 1, 1, 2, 3, 3, 3], partition_ids=[0, 0, 1, 0, 2, 0, 1, 1, 1]
    )  # user 0: three rows in 0 and 1 (two in 0); user 3: three rows in 1
    sizes = partition_dataset([1, 2, 5, 9])
    V = VectorCase

    def p(eps, delta, k, cand=(0, 1, 2, 3, 4)):
        return {"epsilon": eps, "delta": delta, "max_partitions_contributed": k, "partitions": list(cand)}

    return [
        V(
            sizes,
            p(1.0, 0.01, 1),
            ("noise-formula",),
            "partitions of 1, 2, 5, 9 users, eps = 1, delta = 0.01: pi(0) = 0, pi(1) = delta, n1 = 4, n2 = 8; the "
            "keep bound up to n1 and the drop bound beyond (a curve without the drop term, an n1 one step off or an "
            "index shift changes pi)",
        ),
        V(
            sizes,
            p(2.0, 0.05, 3),
            ("accounting", "noise-formula"),
            "the same with kappa = 3: eps' = 2/3 and delta' = delta / 3 per partition (delta left whole gives "
            "pi(1) = 0.05, not 0.0167)",
        ),
        V(
            rows,
            p(1.0, 1e-3, 2),
            ("per-record-bound",),
            "users with several rows in one partition: partition 0 has 3 distinct users (5 rows), partition 1 two "
            "(4 rows): counts are of distinct users, not rows",
        ),
        V(sizes, p(0.0, 0.01, 1), ("input-not-refused",), "epsilon = 0", "invalid"),
        V(sizes, p(1.0, 0.0, 1), ("input-not-refused",), "delta = 0: no key could ever be released", "invalid"),
        V(sizes, p(1.0, 0.01, 0), ("input-not-refused",), "max_partitions_contributed = 0", "invalid"),
    ]


def _reference():
    return released_by(ALGO, _bind(REFERENCE))


register_design(
    Design(
        ALGO,
        _reference,
        spec_reference(ALGO),
        lambda: SelectionAdapter,
        {"statistic": (), "keep_probability": ("epsilon", "delta", "max_partitions_contributed")},
        ("statistic",),
        _cases,
        "add/remove user",
        "userdp.reference.desfontaines2022: statistic (the keys present and their distinct-user counts), "
        f"keep_probability (the optimal curve pi at n = 0..{N_CURVE}, per-partition budget eps / kappa, delta / kappa)",
        notes="the keep curve is compared to within its float rounding; bounding is random and is not pinned",
        bind=_bind,
        statistical_none=_NO_STATISTICAL[ALGO],
    )
)
