"""PipelineDP 0.3.1 (LocalBackend), audited: user-level SUM and COUNT with contribution
bounding, on a public partition and with private partition selection, and a planted bug.

The release. ``DPEngine(NaiveBudgetAccountant(total_epsilon, total_delta), LocalBackend())
.aggregate(rows, AggregateParams(metrics=[SUM] or [COUNT], noise_kind=LAPLACE,
max_partitions_contributed=1, max_contributions_per_partition=2, min_value=0, max_value=1),
DataExtractors(privacy id, partition key, value), public_partitions=[0, 1] or None)``,
then ``compute_budgets()``; one release per call. The audited output is partition 1's
value, or ``None`` ("no release", userdp's encoding) when private partition selection
drops it. Taking one partition's entry of the result is post-processing, so a violation
found on it is one of the whole release. Noise and partition selection come from python-dp
(``pipeline_dp/dp_computations.py`` imports ``pydp.algorithms.numerical_mechanisms``;
``partition_selection.py`` wraps ``pydp.algorithms.partition_selection``), i.e. from
Google's C++ ``SecureURBG``, never from the audit's rng: ``--seed`` does not reproduce these
audits; userdp keeps its worker processes' streams independent (``gallery_pydp``).

The claim is the accountant's total: ``NaiveBudgetAccountant(total_epsilon=1,
total_delta=0)`` for public partitions, pure 1-DP; ``(1, 1e-5)`` with private partition
selection (``budget_accounting.py``: epsilon split equally between the metric's Laplace
mechanism and the selection, delta all to the selection). The unit is the privacy id:
the relation is add-remove-user.

Datasets are ``UserDataset``s with a partition key (``partition_ids``): the audited
partition 1, and partition 0 holding one other user, because PipelineDP refuses an empty
collection (``dp_engine._check_col``: "col must be non-empty"), so "empty partition" is a
dataset whose partition 1 has no record. Each user in partition 1 has 3 records of value 1
(above ``max_contributions_per_partition`` = 2, so the bounding is exercised: it keeps 2).

Pairs (add-remove-user) and why they are the worst case:

- "one user vs empty partition": user 0 alone in partition 1 (``D`` vs ``D.without_user(0)``).
  Public partitions: the SUM and COUNT of partition 1 move from 2 to 0, exactly their
  sensitivity max_contributions_per_partition x max(|min_value|, |max_value|) = 2 (L0 = 1),
  so the loss is epsilon. Private selection: partition 1 is released with probability
  pi(1) = delta on the first side and never on the second: the delta part of the claim.
- "20 users vs 19" (private selection only): the truncated-geometric selection at
  (epsilon/2, delta) = (0.5, 1e-5) keeps a partition of n users with probability pi(n),
  pi(20) / pi(19) = e^0.5 (0.3395 vs 0.2059, ``probability_of_keep`` of python-dp's
  strategy; Desfontaines et al. 2022, the geometric region), and the released value adds
  the metric's epsilon/2: {released, x >= t} reaches the whole epsilon = 1 where both hold.

Planted bug ``count_planted_partitions_from_data``: the "public" partitions are read from
the private data (``public_partitions`` = the partition keys present), a classic misuse:
partition 1 is then released whenever its one user is present and never otherwise, under
the (1, 1e-5) claim of private selection.

Two partitions, one user in both (``sum_two_partitions``): the released output is the
2-vector (SUM of partition 0, SUM of partition 1), both public, with
``max_partitions_contributed = 2``. User 0 holds 3 records of value 1 in each partition
(2 kept in each), user 1 one record in each (so neither partition is empty without user
0). PipelineDP adds Laplace of scale L0 x Linf / epsilon = 2 x 2 / 1 = 4 to each sum, and
removing user 0 moves the vector by (2, 2): each coordinate alone carries a loss of 2/4 =
0.5, and the pair the whole epsilon = 1. No single coordinate and no projection reaches
it at a useful mass; the quadrant {x0 >= s0, x1 >= s1} at the first side's sums does:
Laplace's loss is flat beyond the centre, so it has mass 1/4 against e^-1 / 4 (the corner
sets of ``userdp.audits.engine.rejection``). Planted bug ``sum_two_partitions_per_partition_budget``:
each partition released by its own aggregation with ``max_partitions_contributed = 1``
at the full epsilon, as if the partitions held different users: each partition alone is
1-DP (an audit partition by partition finds nothing), the pair's loss is 2.
"""

from __future__ import annotations

from operator import itemgetter

import numpy as np
import pipeline_dp

from userdp.audits.engine.ceiling import NoiseModel
from userdp.audits.engine.registry import AuditSetup
from userdp.reference.claims import ApproxDP, PureDP
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import NeighbourPair

from ._gallery import NO_VIOLATION, VIOLATION, Entry, check_epsilon

VERSION = "0.3.1"
MODULE = "examples.gallery_pipelinedp"
PARTITION = 1  # the audited partition
OTHER = 0  # one other user's partition: the collection is never empty
RECORDS_PER_USER = 3  # above the cap below
MAX_CONTRIBUTIONS_PER_PARTITION = 2
DELTA = 1e-5
USERS_FOR_SELECTION = 20  # pi(20) / pi(19) = e^(eps/2): the selection's geometric region
_METRICS = {"sum": pipeline_dp.Metrics.SUM, "count": pipeline_dp.Metrics.COUNT}
_EXTRACTORS = pipeline_dp.DataExtractors(
    privacy_id_extractor=itemgetter(0), partition_extractor=itemgetter(1), value_extractor=itemgetter(2)
)


def dataset(users_in_partition: int) -> UserDataset:
    """Users 0..k-1 with RECORDS_PER_USER records of value 1 in PARTITION, and user k with
    one record in OTHER."""
    k = users_in_partition
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"users_in_partition must be an integer >= 1, got {k!r}")
    n = k * RECORDS_PER_USER
    return UserDataset(
        np.ones(n + 1),
        np.r_[np.repeat(np.arange(k), RECORDS_PER_USER), k],
        partition_ids=np.r_[np.full(n, PARTITION), OTHER],
    )


def pairs(private_selection: bool) -> list[NeighbourPair]:
    """The worst-case pairs (module docstring). With private selection the 20-vs-19 pair
    comes first: on "one user" partition 1 is dropped (None) with probability 1 - 1e-5, and
    on the empty side always, so that pair's outputs cannot show whether the library uses
    the audit's rng (userdp's reproducibility check would report "not determined"); the
    20-user partition's releases vary and show that it does not."""
    if not isinstance(private_selection, bool):
        raise TypeError(f"private_selection must be a bool, got {type(private_selection).__name__}")
    out = []
    sizes = [USERS_FOR_SELECTION, 1] if private_selection else [1]
    for k in sizes:
        D = dataset(k)
        what = "one user vs empty partition" if k == 1 else f"{k} users vs {k - 1} in the partition"
        out.append(
            NeighbourPair(
                D,
                D.without_user(0),
                "add-remove-user",
                0,
                f"{what} (user 0: {RECORDS_PER_USER} records of value 1, cap {MAX_CONTRIBUTIONS_PER_PARTITION})",
            )
        )
    return out


def _rows(D: UserDataset) -> list[tuple]:
    return list(zip(D.user_ids.tolist(), D.partition_ids.tolist(), D.values.tolist()))


def release(D: UserDataset, metric: str, *, epsilon: float, delta: float, public_partitions):
    """Partition PARTITION's SUM or COUNT from one PipelineDP aggregation; None if dropped."""
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {sorted(_METRICS)}, got {metric!r}")
    epsilon = check_epsilon(epsilon)
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be a number in [0, 1), got {delta!r}")
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=epsilon, total_delta=delta)
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
    params = pipeline_dp.AggregateParams(
        metrics=[_METRICS[metric]],
        noise_kind=pipeline_dp.NoiseKind.LAPLACE,
        max_partitions_contributed=1,
        max_contributions_per_partition=MAX_CONTRIBUTIONS_PER_PARTITION,
        min_value=0.0,
        max_value=1.0,
    )
    result = engine.aggregate(_rows(D), params, _EXTRACTORS, public_partitions=public_partitions)
    accountant.compute_budgets()
    released = dict(result)  # LocalBackend is lazy: the noise is drawn here
    return getattr(released[PARTITION], metric) if PARTITION in released else None


TWO = (OTHER, PARTITION)  # the partitions of the two-partition release


def two_partition_dataset(with_user_0: bool = True) -> UserDataset:
    """User 0 (if present): RECORDS_PER_USER records of value 1 in each of TWO; user 1: one
    record of value 1 in each."""
    if not isinstance(with_user_0, bool):
        raise TypeError(f"with_user_0 must be a bool, got {type(with_user_0).__name__}")
    users = ([0] * RECORDS_PER_USER * 2 if with_user_0 else []) + [1, 1]
    parts = (list(TWO) * RECORDS_PER_USER if with_user_0 else []) + list(TWO)
    return UserDataset(np.ones(len(users)), np.array(users), partition_ids=np.array(parts))


def release_partitions(D: UserDataset, *, epsilon: float, max_partitions_contributed: int, partitions=TWO) -> list:
    """[SUM of each partition in ``partitions``] from one PipelineDP aggregation over public
    ``partitions`` (a partition missing from the result would be None, "no release")."""
    epsilon = check_epsilon(epsilon)
    if (
        isinstance(max_partitions_contributed, bool)
        or not isinstance(max_partitions_contributed, int)
        or max_partitions_contributed < 1
    ):
        raise ValueError(f"max_partitions_contributed must be an integer >= 1, got {max_partitions_contributed!r}")
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=epsilon, total_delta=0.0)
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
    params = pipeline_dp.AggregateParams(
        metrics=[pipeline_dp.Metrics.SUM],
        noise_kind=pipeline_dp.NoiseKind.LAPLACE,
        max_partitions_contributed=max_partitions_contributed,
        max_contributions_per_partition=MAX_CONTRIBUTIONS_PER_PARTITION,
        min_value=0.0,
        max_value=1.0,
    )
    rows = [r for r in _rows(D) if r[1] in partitions]
    result = engine.aggregate(rows, params, _EXTRACTORS, public_partitions=list(partitions))
    accountant.compute_budgets()
    released = dict(result)
    return [released[p].sum if p in released else None for p in partitions]


def _two_partition_pairs() -> list[NeighbourPair]:
    return [
        NeighbourPair(
            two_partition_dataset(True),
            two_partition_dataset(False),
            "add-remove-user",
            0,
            f"user 0 in both partitions vs absent ({RECORDS_PER_USER} records of value 1 in each, "
            f"cap {MAX_CONTRIBUTIONS_PER_PARTITION})",
        )
    ]


def sum_two_partitions(epsilon: float = 1.0) -> AuditSetup:
    """SUM over two public partitions, max_partitions_contributed = 2 (module docstring)."""
    eps = check_epsilon(epsilon)

    def mechanism(D):
        return release_partitions(D, epsilon=eps, max_partitions_contributed=2)

    noise = NoiseModel("laplace", bounded_sums, 2 * MAX_CONTRIBUTIONS_PER_PARTITION / eps)  # L0 x Linf / eps
    return AuditSetup(mechanism, _two_partition_pairs(), PureDP(eps), output="vector", noise=noise)


def bounded_sums(D: UserDataset) -> np.ndarray:
    """The noise-free release of ``sum_two_partitions``: per partition of TWO, the sum over
    users of min(records, MAX_CONTRIBUTIONS_PER_PARTITION) x 1 (values are 1, each user is
    in at most 2 partitions, so no partition is dropped by the L0 bound)."""
    out = []
    for p in TWO:
        ids = D.user_ids[D.partition_ids == p]
        _, counts = np.unique(ids, return_counts=True)
        out.append(float(np.minimum(counts, MAX_CONTRIBUTIONS_PER_PARTITION).sum()))
    return np.array(out)


def sum_two_partitions_per_partition_budget(epsilon: float = 1.0) -> AuditSetup:
    """Planted bug: each partition aggregated alone with max_partitions_contributed = 1 at the
    full epsilon, released together under the claim epsilon (module docstring)."""
    eps = check_epsilon(epsilon)

    def mechanism(D):
        return [release_partitions(D, epsilon=eps, max_partitions_contributed=1, partitions=(p,))[0] for p in TWO]

    return AuditSetup(mechanism, _two_partition_pairs(), PureDP(eps), output="vector")


def _setup(metric: str, private_selection: bool, epsilon: float) -> AuditSetup:
    eps = check_epsilon(epsilon)
    delta = DELTA if private_selection else 0.0
    public = None if private_selection else [OTHER, PARTITION]

    def mechanism(D):
        return release(D, metric, epsilon=eps, delta=delta, public_partitions=public)

    return AuditSetup(mechanism, pairs(private_selection), ApproxDP(eps, delta) if delta else PureDP(eps))


def sum_public(epsilon: float = 1.0) -> AuditSetup:
    return _setup("sum", False, epsilon)


def count_public(epsilon: float = 1.0) -> AuditSetup:
    return _setup("count", False, epsilon)


def sum_private_selection(epsilon: float = 1.0) -> AuditSetup:
    return _setup("sum", True, epsilon)


def count_private_selection(epsilon: float = 1.0) -> AuditSetup:
    return _setup("count", True, epsilon)


def count_planted_partitions_from_data(epsilon: float = 1.0) -> AuditSetup:
    """Planted bug: public_partitions read from the private data, under the private-selection claim."""
    eps = check_epsilon(epsilon)

    def mechanism(D):
        keys = sorted(set(D.partition_ids.tolist()))
        return release(D, "count", epsilon=eps, delta=DELTA, public_partitions=keys)

    return AuditSetup(mechanism, pairs(True)[1:], ApproxDP(eps, DELTA))


def _entry(name, mechanism, expected, samples, figure_samples, why) -> Entry:
    return Entry(
        f"{MODULE}:{name}", "pipeline-dp", VERSION, mechanism, "add-remove-user", expected, samples, figure_samples, why
    )


ENTRIES = [
    _entry(
        "sum_public",
        "SUM, public partition (eps=1)",
        NO_VIOLATION,
        10_000,
        100_000,
        "Laplace of scale 2/eps on a sum bounded to [0, 2] per user",
    ),
    _entry(
        "count_public",
        "COUNT, public partition (eps=1)",
        NO_VIOLATION,
        10_000,
        100_000,
        "Laplace of scale 2/eps on a count bounded to 2 per user",
    ),
    _entry(
        "sum_private_selection",
        "SUM, private partition selection (eps=1, delta=1e-5)",
        NO_VIOLATION,
        10_000,
        100_000,
        "truncated-geometric selection at (eps/2, delta) and the sum at eps/2",
    ),
    _entry(
        "count_private_selection",
        "COUNT, private partition selection (eps=1, delta=1e-5)",
        NO_VIOLATION,
        10_000,
        100_000,
        "truncated-geometric selection at (eps/2, delta) and the count at eps/2",
    ),
    _entry(
        "sum_two_partitions",
        "SUM, two public partitions, one user in both (eps=1)",
        NO_VIOLATION,
        10_000,
        50_000,
        "Laplace of scale L0 x Linf / eps = 4 on each sum; the pair moves both by 2: loss 1, reached "
        "by the quadrant at the first side's sums",
    ),
    _entry(
        "sum_two_partitions_per_partition_budget",
        "SUM, two partitions each aggregated alone at eps=1 (planted)",
        VIOLATION,
        10_000,
        50_000,
        "each partition gets Laplace of scale 2 (L0 = 1) for a user who is in both: loss 2; the quadrant "
        "has mass 1/4 against e^-2 / 4 (measured at 10,000 per side, 10 runs: eps_lb 1.506-1.802, median "
        "1.71; a miss, eps_lb <= 1, is > 6 sd below; audited partition by partition, 0.83, no violation)",
    ),
    _entry(
        "count_planted_partitions_from_data",
        "COUNT, public partitions read from the data (planted)",
        VIOLATION,
        3_000,
        20_000,
        "partition 1 is released always vs never: {released} has 2,700 of 2,700 counted outputs vs 0, so "
        "eps_lb = ln((p_lo - 1e-5) / q_hi) with p_lo = (alpha / 2)^(1/2700) and q_hi = 1 - p_lo: "
        "5.61 whatever the library's noise (measured: 5.6063 in 10 of 10 runs; a miss is impossible while "
        "the bug is there)",
    ),
]
