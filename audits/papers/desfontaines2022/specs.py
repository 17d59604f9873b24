"""Validation spec for Desfontaines et al. 2022: ``desfontaines2022.optimal`` (the optimal partition-selection
mechanism: the truncated-geometric strategy of Google's libraries, python-dp and PipelineDP). The thresholding
baselines are audited (``audits.py``), not validated.

The release is the set of kept partitions, given as 0/1 over the public candidate keys ``partitions``
in their order (a (k,) array; batched, (size, k)). A key absent from the data must be 0: under private
partition selection an absent partition is an outcome like any other. The relation adds or removes one
user with all their records, across every partition they hold.

Its mean is exact (``expected_keep``): a partition's count after bounding is its users of at most kappa
partitions, plus one Bernoulli(kappa / d_u) for each user of d_u > kappa partitions (uniform sampling keeps
each of the user's partitions with that probability), so E[keep] = sum_n P[n] p(n), by convolution. The
noise is not additive: ``noise`` is None, and less spread than the reference is a deviation, not graded
"under-noised"; the audit designs decide privacy.
"""

from __future__ import annotations

import numpy as np

from userdp.reference import desfontaines2022 as R
from userdp.reference.data import UserDataset

from userdp.audits.papers.desfontaines2022 import audits as RA

from userdp.audits.validation import AuditDesign, Case, Param, Refusal, ValidationSpec, register
from userdp.audits.validation._data import seeded
from userdp.audits.validation.pair_search import Domain

__all__ = ["expected_keep"]

ALGO = "desfontaines2022.optimal"
READS = {
    "user_ids": "(n,) the user owning each record (the privacy unit: add/remove user, across partitions)",
    "partition_ids": "(n,) each record's partition key (an integer >= 0); a user's rows in one partition count once",
}


def _count_law(D: UserDataset, kappa: int) -> dict[int, np.ndarray]:
    """{key: P[n = 0..], the law of its distinct-user count after uniform kappa-bounding}."""
    pairs = np.unique(np.stack([D.user_ids, D.partition_ids], axis=1), axis=0)
    users, d = np.unique(pairs[:, 0], return_counts=True)
    q = dict(zip(users.tolist(), np.minimum(1.0, kappa / d).tolist()))  # P[the user keeps a given partition]
    law: dict[int, np.ndarray] = {}
    for u, p in pairs.tolist():
        prev = law.get(p, np.array([1.0]))
        law[p] = np.convolve(prev, [1.0 - q[u], q[u]])  # one more independent Bernoulli(q_u)
    return law


def expected_keep(
    D: UserDataset,
    *,
    epsilon,
    delta,
    partitions,
    max_partitions_contributed=1,
    strategy="optimal",
    delta_split="linear",
) -> np.ndarray:
    """E[release], (k,): for each candidate key, sum_n P[n] p(n) (0 for a key absent from the data)."""
    law = _count_law(D, max_partitions_contributed)
    out = []
    for key in np.asarray(partitions).tolist():
        if key not in law:
            out.append(0.0)
            continue
        p = R.keep_probabilities(
            np.arange(law[key].size),
            epsilon,
            delta,
            max_partitions_contributed=max_partitions_contributed,
            delta_split=delta_split,
            strategy=strategy,
        )
        out.append(float(np.dot(law[key], p)))
    return np.array(out)


def _case(D, eps, delta, kappa, cand, what, pair=None, origin="fixed") -> Case:
    params = {"epsilon": eps, "delta": delta, "max_partitions_contributed": kappa, "partitions": list(cand)}
    return Case(D, params, what, pair=pair, origin=origin)


def _cases() -> list:
    """Partitions of 1-12 users around n1 (eps = 1, delta = 1e-3: n1 = 7), a user in several partitions with
    kappa = 2 and 3, and a candidate key no record holds."""
    one = RA.partition_dataset([1, 3, 6, 7, 9, 12])
    multi = UserDataset.from_arrays(
        np.zeros(14),
        [0, 0, 0, 0, 1, 1, 2, 2, 2, 3, 4, 5, 6, 6],
        partition_ids=[0, 1, 2, 3, 0, 1, 0, 0, 2, 3, 0, 1, 2, 2],
    )
    return [
        _case(one, 1.0, 1e-3, 1, range(7), "six partitions of 1 to 12 users, eps = 1, delta = 1e-3, key 6 absent"),
        _case(one, 3.0, 0.05, 1, range(7), "the same at eps = 3, delta = 0.05 (n1 = 2)"),
        _case(multi, 1.0, 0.05, 2, range(5), "users in up to 4 partitions bounded to 2, eps = 1, delta = 0.05"),
        _case(multi, 4.0, 0.2, 3, range(5), "the same bounded to 3, eps = 4, delta = 0.2"),
    ]


def _generate(seed: int) -> list:
    """Two cases per seed: 40 users each in 1-4 random partitions of 8 (kappa = 2); 60 one-partition users."""
    g = seeded(ALGO, seed, 0)
    rows = [(u, int(p)) for u in range(40) for p in g.choice(8, size=int(g.integers(1, 5)), replace=False)]
    u, p = map(np.array, zip(*rows))
    D1 = UserDataset.from_arrays(np.zeros(u.size), u, partition_ids=p)
    g = seeded(ALGO, seed, 1)
    D2 = UserDataset.from_arrays(np.zeros(60), np.arange(60), partition_ids=g.integers(0, 10, 60))
    return [
        _case(D1, 2.0, 0.05, 2, range(9), "40 users in 1-4 of 8 partitions, kappa = 2, eps = 2", origin="generated"),
        _case(D2, 1.0, 1e-3, 1, range(11), "60 one-partition users over 10 keys, eps = 1", origin="generated"),
    ]


def _designs() -> list:
    """The audit entry's pairs: n = 6 -> 7 (keep-tight), 9 -> 10 (drop-tight), a new partition; and kappa = 3
    (a user raising three partitions at n1' - 1 together; a user in three new ones; a user in six, bounded to
    three); and at delta = 0.05, a user in three new partitions or raising three of 2 users (the per-partition
    budget: delta or eps given whole to each partition). A delta not split over kappa, a curve above pi, or
    counts taken before bounding show on them."""
    s1, s3 = RA.build_optimal(), RA.build_optimal_l0()
    p1 = {"epsilon": RA.EPS, "delta": RA.DELTA, "max_partitions_contributed": 1, "partitions": [0, 1]}
    p3 = {"epsilon": RA.EPS, "delta": RA.DELTA, "max_partitions_contributed": 3, "partitions": list(range(7))}
    split = [  # a large delta and small counts: a budget given whole to each partition shows at once
        RA.add_user_in(RA.partition_dataset([1]), [1, 2, 3], "a user in 3 new partitions"),
        RA.add_user_in(RA.partition_dataset([2, 2, 2]), [0, 1, 2], "3 partitions of 2 users, + one user in all"),
    ]
    p_split = {"epsilon": 1.0, "delta": 0.05, "max_partitions_contributed": 3, "partitions": [0, 1, 2, 3]}
    return [
        AuditDesign(s1.pairs, p1, s1.claim, "eps 1, delta 1e-3, kappa 1: n 6 -> 7, 9 -> 10, 0 -> 1", "discrete"),
        AuditDesign(split, p_split, R.claim(1.0, 0.05), "eps 1, delta 0.05, kappa 3: the budget split", "discrete"),
        AuditDesign(s3.pairs, p3, s3.claim, "eps 1, delta 1e-3, kappa 3: a user raising 3 partitions", "discrete"),
    ]


def _domain(seed: int) -> Domain:
    """The pair search's space (docs/validate.md, "The pair search"): eps = 1, delta = 1e-3, kappa = 2 (per
    partition eps' = 1/2, delta' = 5e-4), three partitions of n1' - 1 users each (each partition's keep bound
    is tight from there) and two new keys; a user added in 1, 2 (kappa), 3 or 5 (all) partitions, existing
    and new, with 1, 2, 3 or 5 records in each (a count of rows, not of distinct users, shows there), or any
    user removed. The release is 0/1: scored by each key's presence (absent = 0), 64 rows a side, the best
    eight re-scored on 1024."""
    e1, d1 = R.per_partition_budget(1.0, 1e-3, 2)
    n = int(R.crossovers(e1, d1)[0]) - 1
    params = {"epsilon": 1.0, "delta": 1e-3, "max_partitions_contributed": 2, "partitions": list(range(5))}
    return Domain(
        "add-remove-user",
        params,
        (RA.partition_dataset([n, n, n]),),
        (0.0, 1.0),
        records=(1, 2, 3, 5),
        partitions=(0, 1, 2, 3, 4),
        spread=(1, 2, 3, 5),
        points=(0.0,),  # the selection reads no value
        replay=64,
        refine=1024,
        absent=0.0,
    )


def _refusals(params) -> list:
    D = RA.partition_dataset([2, 3])
    return [
        Refusal(Case(D, {**params, "epsilon": 0.0}, "epsilon = 0"), "budget", "epsilon > 0"),
        Refusal(Case(D, {**params, "delta": 0.0}, "delta = 0 (no key could be released, §1)"), "budget", "delta > 0"),
        Refusal(
            Case(D, {**params, "max_partitions_contributed": 0}, "kappa = 0"),
            "parameter",
            "max_partitions_contributed >= 1",
        ),
    ]


_P = {"epsilon": 1.0, "delta": 1e-3, "max_partitions_contributed": 1, "partitions": [0, 1, 2]}
PARAMS = (
    Param("epsilon", "the privacy level of the whole selection, (eps, delta)-DP under add/remove-user; > 0"),
    Param("delta", "the failure probability of the whole selection, in (0, 1): delta = 0 would keep no key"),
    Param(
        "max_partitions_contributed",
        "kappa (L0), an int >= 1: each user's partitions are bounded to kappa by uniform sampling, and each "
        "partition gets eps / kappa and delta / kappa",
    ),
    Param("partitions", "the public candidate keys, a list of distinct ints >= 0; the release is 0/1 over them"),
)


def _reference(strategy):
    def reference(dataset, rng, size=None, *, epsilon, delta, max_partitions_contributed, partitions):
        return R.mechanism(
            dataset,
            epsilon,
            delta,
            rng,
            size,
            partitions=partitions,
            max_partitions_contributed=max_partitions_contributed,
            strategy=strategy,
        )

    return reference


register(
    ValidationSpec(
        algorithm=ALGO,
        reference=_reference("optimal"),
        statistic=lambda D, **p: expected_keep(D, **p),
        claim=lambda D, params: R.claim(params["epsilon"], params["delta"]),
        cases=_cases,
        generate=_generate,
        designs=_designs,
        domain=_domain,
        refusals=lambda: _refusals(_P),
        suite="userdp.properties.desfontaines2022",
        parameters=PARAMS,
        reads=READS,
        release="a (k,) int array, 1 where the candidate key partitions[i] is kept: each partition of n distinct "
        "(bounded) users is kept with probability pi(n), the optimal curve, and a key no record holds is 0",
        relation="add/remove user (all records of one user, across all their partitions); (epsilon, delta)-DP",
        # compared with the reference: the statistic. The random bounding (weights) and the keep curve (a function
        # of n, not of the case) are checked by the property suite and the audit
        stage_params={"statistic": ()},
        takes_dataset=("statistic",),
        why="Desfontaines et al. 2022, Theorem 1: the optimal (eps, delta)-DP partition selection, per-partition "
        "budget eps / kappa, delta / kappa",
    )
)
