"""Audit entries for Desfontaines et al. 2022 (private partition selection, ``reference/desfontaines2022.py``).

The release is the set of kept partitions, shown as 0/1 over a public list of candidate keys (``output``
"discrete": a row is one of the 2^k keep patterns). Under private partition selection an absent partition
is an outcome: the pairs below add a user who creates new partitions (n: 0 -> 1) and one who raises
existing partitions' counts (n -> n + 1), in one partition or across several at once.

Entries (``userdp audit --all``):

- ``desfontaines2022.optimal``: the optimal mechanism, eps = 1, delta = 1e-3, kappa = 1 (n1 = 7, n2 = 13).
  Worst-case pairs: a partition of 6 users vs 7 (the keep bound is tight: pi(7) = e pi(6) + delta, so
  ln((pi(7) - delta) / pi(6)) = eps exactly); of 9 vs 10 (the drop bound is tight there); a user in a new
  partition (pi(1) = delta: the delta part).
- ``desfontaines2022.optimal-l0``: kappa = 3 (eps' = 1/3, delta' = delta / 3): one user added to three
  partitions of 18 users each (n1' = 19: each partition's keep bound is tight), so the pattern "all three
  kept" has ln((p - delta) / q) = 0.99 of eps; a user in three new partitions; and a user in six partitions
  of 18 users (bounded to three: counts taken before bounding move six partitions, a loss of 2 eps).
- ``desfontaines2022.laplace-thresholding`` and ``desfontaines2022.gaussian-thresholding``: the baselines
  at eps = 1, delta = 1e-3, on a partition of n users vs n + 1 around tau and a new partition.
Planted (not in ``--all``): ``desfontaines2022.delta-not-split``: kappa = 4 with delta' = delta (not
delta / 4), eps = 1, delta = 0.2: a user in four new partitions shows with probability 0.59 > delta.
Measured figures: docs/papers/desfontaines2022.md.
"""

from __future__ import annotations

import numpy as np

from userdp.reference import desfontaines2022 as R
from userdp.reference.claims import ApproxDP
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import ADD_REMOVE_USER, NeighbourPair

from userdp.audits.engine.registry import AuditSetup, Entry, register

__all__ = [
    "EPS",
    "DELTA",
    "partition_dataset",
    "add_user_in",
    "build_optimal",
    "build_optimal_l0",
    "build_threshold",
    "build_delta_not_split",
]

PAPER = "Desfontaines et al. 2022 (PoPETs 2022(1); arXiv 2006.03684)"
EPS, DELTA = 1.0, 1e-3


def partition_dataset(sizes) -> UserDataset:
    """Partition p (0, 1, ...) held by sizes[p] distinct users of one record each; users never share a partition."""
    sizes = np.asarray(sizes, dtype=np.int64)
    parts = np.repeat(np.arange(sizes.size), sizes)
    return UserDataset.from_arrays(np.zeros(parts.size), np.arange(parts.size), partition_ids=parts)


def add_user_in(D: UserDataset, partitions, what: str = "") -> NeighbourPair:
    """The add/remove-user pair (D, D plus one new user with one record in each of ``partitions``)."""
    parts = np.asarray(partitions, dtype=np.int64)
    u = int(D.users.max()) + 1
    D2 = UserDataset.from_arrays(
        np.r_[D.values, np.zeros(parts.size)],
        np.r_[D.user_ids, np.full(parts.size, u)],
        partition_ids=np.r_[D.partition_ids, parts],
    )
    return NeighbourPair(D, D2, ADD_REMOVE_USER.name, u, what or f"add a user in partitions {parts.tolist()}")


def _setup(pairs, candidates, epsilon, delta, kappa=1, strategy="optimal", delta_split="linear") -> AuditSetup:
    cand = np.asarray(candidates)

    def mechanism(dataset, rng, size):
        return R.mechanism(
            dataset,
            epsilon,
            delta,
            rng,
            size,
            partitions=cand,
            max_partitions_contributed=kappa,
            delta_split=delta_split,
            strategy=strategy,
        )

    return AuditSetup(mechanism, pairs, R.claim(epsilon, delta), output="discrete")


def build_optimal(epsilon: float = EPS, delta: float = DELTA) -> AuditSetup:
    """Entry ``desfontaines2022.optimal``: a user added to a partition of 6 (keep-tight) or 9 (drop-tight) users,
    or in a new partition."""
    pairs = [
        add_user_in(partition_dataset([6]), [0], "6 users vs 7 in one partition (the keep bound is tight)"),
        add_user_in(partition_dataset([9]), [0], "9 users vs 10 in one partition (the drop bound is tight)"),
        add_user_in(partition_dataset([3]), [1], "a user in a new partition (n: 0 -> 1)"),
    ]
    return _setup(pairs, [0, 1], epsilon, delta)


def build_optimal_l0(epsilon: float = EPS, delta: float = DELTA, kappa: int = 3) -> AuditSetup:
    """Entry ``desfontaines2022.optimal-l0``: one user raising kappa partitions at n1' - 1 users each, or creating
    kappa new ones."""
    e1, d1 = R.per_partition_budget(epsilon, delta, kappa)
    n = int(R.crossovers(e1, d1)[0]) - 1  # each partition's keep bound is tight from n to n + 1
    pairs = [
        add_user_in(
            partition_dataset([n] * kappa), range(kappa), f"{kappa} partitions of {n} users, + one user in all"
        ),
        add_user_in(partition_dataset([2]), range(1, kappa + 1), f"a user in {kappa} new partitions"),
        add_user_in(
            partition_dataset([n] * 2 * kappa),
            range(2 * kappa),
            f"{2 * kappa} partitions of {n} users, + one user in all (bounded to {kappa})",
        ),
    ]
    return _setup(pairs, range(2 * kappa + 1), epsilon, delta, kappa)


def build_threshold(strategy: str = "laplace", epsilon: float = EPS, delta: float = DELTA) -> AuditSetup:
    """Entries ``desfontaines2022.laplace-thresholding`` / ``gaussian-thresholding``: n vs n + 1 users around tau,
    and a new partition."""
    tau = R.thresholds(epsilon, delta, strategy=strategy)["tau"]
    n = int(np.floor(tau))
    pairs = [
        add_user_in(partition_dataset([n]), [0], f"{n} users vs {n + 1} (tau = {tau:.3g})"),
        add_user_in(partition_dataset([n + 2]), [0], f"{n + 2} users vs {n + 3}"),
        add_user_in(partition_dataset([3]), [1], "a user in a new partition (n: 0 -> 1)"),
    ]
    return _setup(pairs, [0, 1], epsilon, delta, strategy=strategy)


register(
    Entry(
        name="desfontaines2022.optimal",
        kind="reference",
        paper=PAPER,
        algorithm="optimal partition selection (Theorem 1): keep with probability pi(n), L0 = 1",
        relation=ADD_REMOVE_USER.name,
        function="userdp.reference.desfontaines2022.mechanism",
        expected="no violation found",
        build=build_optimal,
        params={"epsilon": EPS, "delta": DELTA},
        true_epsilon=EPS,
        samples=200_000,
    )
)
register(
    Entry(
        name="desfontaines2022.optimal-l0",
        kind="reference",
        paper=PAPER,
        algorithm="partition selection with users in kappa = 3 partitions (eps / kappa, delta / kappa each)",
        relation=ADD_REMOVE_USER.name,
        function="userdp.reference.desfontaines2022.mechanism",
        expected="no violation found",
        build=build_optimal_l0,
        params={"epsilon": EPS, "delta": DELTA, "kappa": 3},
        true_epsilon=EPS,
        samples=100_000,
    )
)
for _strategy in ("laplace", "gaussian"):
    register(
        Entry(
            name=f"desfontaines2022.{_strategy}-thresholding",
            kind="reference",
            paper=PAPER,
            algorithm=f"{_strategy} thresholding (the paper's baseline): keep iff n + noise > tau",
            relation=ADD_REMOVE_USER.name,
            function="userdp.reference.desfontaines2022.mechanism",
            expected="no violation found",
            build=build_threshold,
            params={"strategy": _strategy, "epsilon": EPS, "delta": DELTA},
            samples=200_000,
        )
    )


def build_delta_not_split(epsilon: float = 1.0, delta: float = 0.2, kappa: int = 4) -> AuditSetup:
    """NOT PRIVATE (kind "planted"): kappa partitions each with (eps / kappa, delta), i.e. delta not split."""
    pairs = [add_user_in(partition_dataset([1]), range(1, kappa + 1), f"a user in {kappa} new partitions")]
    cand = np.arange(kappa + 1)

    def mechanism(dataset, rng, size):
        keys, counts = R._counts_per_draw(dataset, kappa, rng, size)  # bounded to kappa partitions, as it should
        p = R.keep_probability(counts, epsilon / kappa, delta)  # BUG (planted): delta' = delta, not delta / kappa
        out = np.zeros((size, cand.size), dtype=np.int8)
        out[:, np.searchsorted(cand, keys)] = rng.random(counts.shape) < p
        return out

    return AuditSetup(mechanism, pairs, ApproxDP(epsilon, delta), output="discrete")


register(
    Entry(
        name="desfontaines2022.delta-not-split",
        kind="planted",
        paper=PAPER,
        algorithm="partition selection with delta not divided over the kappa partitions a user touches",
        relation=ADD_REMOVE_USER.name,
        function="userdp.reference.desfontaines2022.mechanism",
        expected="violation",
        build=build_delta_not_split,
        params={"epsilon": 1.0, "delta": 0.2, "kappa": 4},
        samples=100_000,
    )
)
