"""Property suite for Desfontaines et al. 2022 (private partition selection); see reference/desfontaines2022.py.

Stages an implementation may provide (any may be missing; a property that needs a missing stage
is "not applicable", ``properties.adapter``). The dataset is passed positionally and every other
argument by keyword, exactly as written here:

- ``weights(dataset, max_partitions_contributed=k, rng=rng) -> UserDataset``: contribution bounding,
  the records of each user in at most k of their partitions, chosen uniformly at random;
- ``statistic(dataset) -> (keys, n)``: the partition keys present and the number of DISTINCT users
  in each (the noise-free statistic);
- ``keep_probability(n=n, epsilon=epsilon, delta=delta, max_partitions_contributed=k)``: the
  probability that a partition of n distinct users is kept (the noise-scale stage), an array like n;
- ``mechanism(dataset, epsilon=epsilon, delta=delta, rng=rng, size=size, partitions=keys,
  max_partitions_contributed=k)``: 0/1 per candidate key (audited, not checked here).

Parameters: ``dataset`` a ``UserDataset`` with ``partition_ids``; ``k`` (L0, kappa) an int >= 1;
``epsilon`` > 0 and ``delta`` in (0, 1): the (eps, delta) of the whole selection under
add/remove-user; ``n`` an integer array of user counts >= 0.

Oracles (independent of the reference): distinct users per partition by Python sets; the keep
probability by the paper's recursion (§3.1) written out here; the DP inequalities of §2 checked
one n at a time. An implementation may split delta over the k partitions as delta / k or
1 - (1 - delta)^(1/k) (both valid, docs/papers/desfontaines2022.md): the DP check uses the larger,
and the optimality check compares with the recursion at the split the implementation declares
(``delta_split``, default "linear").

Tolerances. Relative REL = 1e-9 on pi and on 1 - pi (the closed form and the recursion agree to
2.3e-13 relative for n <= 5000 at eps = 0.01, measured: docs/papers/desfontaines2022.md; far below any bug: an
off-by-one crossover or a missing term moves pi by a factor e^eps or by delta), plus, where pi > 1/2,
the absolute ``rounding_floor(n)`` = 4 n ulps of 1 that a recursion accumulates in n steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Optional

import numpy as np
from hypothesis import strategies as st

from userdp.reference import desfontaines2022 as R
from userdp.reference.data import UserDataset

from .adapter import Adapter
from .extremes import Domain

__all__ = [
    "SelectionAdapter",
    "EXTREMES",
    "REL",
    "N_MAX",
    "distinct_users_oracle",
    "recursion_oracle",
    "rounding_floor",
    "dp_violations",
    "partitioned_datasets",
    "budget_cases",
    "bounding_cases",
    "prop_statistic_counts_distinct_users",
    "prop_keep_probability_matches_recursion",
    "prop_keep_probability_is_dp",
    "prop_bounding_limits_partitions",
    "prop_sensitivity_under_l0",
    "prop_bounding_independent_of_values",
    "prop_bounding_uniform",
    "ALL_PROPERTIES",
    "STRATEGIES",
    "EXAMPLES",
    "MAX_EXAMPLES",
    "RELATION",
    "ADAPTER",
    "REFERENCE",
]

REL = 1e-9  # see the module docstring
N_MAX = 400  # counts checked per budget (past n2 at eps' >= 0.3; the rising part for every budget drawn)


@dataclass(frozen=True)
class SelectionAdapter(Adapter):
    """``Adapter`` plus ``keep_probability(n, epsilon, delta, max_partitions_contributed)``; ``delta_split``
    names how the implementation splits delta over partitions ("linear" or "exact")."""

    STAGES: ClassVar[tuple[str, ...]] = Adapter.STAGES + ("keep_probability",)

    keep_probability: Optional[Callable[..., Any]] = None
    delta_split: str = "linear"


# ------------------------------------------------------------------------ oracles
def distinct_users_oracle(D: UserDataset) -> dict[int, int]:
    """{partition key: number of distinct users with a record in it}, by Python sets."""
    users: dict[int, set] = {}
    for u, p in zip(D.user_ids.tolist(), D.partition_ids.tolist()):
        users.setdefault(p, set()).add(u)
    return {p: len(s) for p, s in users.items()}


def rounding_floor(n):
    """4 n ulps of 1: the absolute rounding a recursion accumulates near pi = 1 in n steps (each step rounds
    1 - e^-eps (...) to within 2 ulps of 1, and a step contracts the error before it by e^-eps <= 1)."""
    return 4.0 * np.asarray(n, float) * 2.0**-52


def _split(delta: float, k: int, how: str) -> float:
    return delta / k if how == "linear" else -math.expm1(math.log1p(-delta) / k)  # 1 - (1 - delta)^(1/k)


def recursion_oracle(n_max: int, epsilon: float, delta: float) -> list[float]:
    """pi(0..n_max) by §3.1: pi(0) = 0, pi(n) = min(e^eps pi + delta, 1 - e^-eps (1 - pi - delta), 1);
    the drop term expanded as (1 - e^-eps) + e^-eps (pi + delta) (no cancellation)."""
    pi = [0.0]
    for _ in range(n_max):
        x = pi[-1]
        pi.append(min(math.exp(epsilon) * x + delta, -math.expm1(-epsilon) + math.exp(-epsilon) * (x + delta), 1.0))
    return pi


def dp_violations(pi, epsilon: float, delta: float, rel: float = REL) -> list[str]:
    """The inequalities of §2 that the curve pi(0..N) breaks (with pi(0) = 0), each as text.

    Slack: ``rel`` relative, plus 4 ulps of 1 times (1 + e^eps): a pi near 1 is stored to within an ulp of
    1, so 1 - pi is known only to that absolute precision, and the drop side multiplies it by e^eps."""
    out, e = [], math.exp(epsilon)
    if pi[0] != 0.0:
        out.append(f"pi(0) = {pi[0]!r} != 0 (an absent partition is output)")
    floor = 4.0 * 2.0**-52 * (1.0 + e)
    slack = lambda v: rel * abs(v) + floor  # noqa: E731
    for n in range(len(pi) - 1):
        a, b = float(pi[n]), float(pi[n + 1])
        checks = (
            ("keep, add", b, e * a + delta),
            ("drop, add", 1 - a, e * (1 - b) + delta),
            ("keep, remove", a, e * b + delta),
            ("drop, remove", 1 - b, e * (1 - a) + delta),
        )
        out += [f"n = {n}: {what}: {lhs!r} > {rhs!r}" for what, lhs, rhs in checks if lhs > rhs + slack(rhs)]
    return out


# --------------------------------------------------------------------- strategies
@st.composite
def partitioned_datasets(draw, max_users: int = 6, max_partitions: int = 5):
    """Users of 1-5 records, each record in one of a few partitions (some users in many)."""
    m = draw(st.integers(1, max_users))
    rows = []
    for u in range(m):
        for p in draw(st.lists(st.integers(0, max_partitions - 1), min_size=1, max_size=5)):
            rows.append((u, p, draw(st.floats(0.0, 1.0))))
    u, p, v = zip(*rows)
    return UserDataset.from_arrays(np.array(v), np.array(u), partition_ids=np.array(p))


@st.composite
def budget_cases(draw):
    """(eps, delta, k): k in 1..4, eps / k in [0.05, 5], delta in [1e-12, 0.3] (and the crossovers table's values)."""
    k = draw(st.integers(1, 4))
    eps = draw(st.floats(0.05, 5.0)) * k
    delta = draw(st.one_of(st.floats(1e-12, 0.3), st.sampled_from([1e-5, 1e-6, 1e-10, 0.01])))
    return eps, delta, k


@st.composite
def bounding_cases(draw):
    """(D, k, seed)."""
    return draw(partitioned_datasets()), draw(st.integers(1, 3)), draw(st.integers(0, 2**32 - 1))


# --------------------------------------------------------------------- properties
def prop_statistic_counts_distinct_users(impl: Adapter, example) -> None:
    """statistic(D) = the distinct users per present partition (several rows of a user count once)."""
    impl.require("statistic")
    D, _, _ = example
    keys, n = impl.statistic(D)
    got = dict(zip(np.asarray(keys).tolist(), np.asarray(n).tolist()))
    want = distinct_users_oracle(D)
    assert got == want, f"{impl.name}: counts {got} but distinct users per partition are {want}"


def _curve(impl, eps, delta, k):
    return np.asarray(
        impl.keep_probability(n=np.arange(N_MAX + 1), epsilon=eps, delta=delta, max_partitions_contributed=k), float
    )


def prop_keep_probability_matches_recursion(impl: Adapter, example) -> None:
    """keep_probability(n) = the §3.1 recursion at (eps / k, delta') for n = 0..N_MAX, on pi and on 1 - pi
    (Theorem 1: the largest DP curve, so a smaller one is a deviation and a larger one is not DP)."""
    impl.require("keep_probability")
    eps, delta, k = example
    got = _curve(impl, eps, delta, k)
    want = np.array(recursion_oracle(N_MAX, eps / k, _split(delta, k, getattr(impl, "delta_split", "linear"))))
    tol = REL * np.minimum(want, 1 - want) + np.where(want > 0.5, rounding_floor(np.arange(N_MAX + 1)), 0.0)
    bad = np.flatnonzero(np.abs(got - want) > tol)
    assert bad.size == 0, (
        f"{impl.name}: pi({int(bad[0])}) = {got[bad[0]]!r}, the recursion gives {want[bad[0]]!r} "
        f"(eps={eps!r}, delta={delta!r}, k={k})"
    )


def prop_keep_probability_is_dp(impl: Adapter, example) -> None:
    """The four inequalities of §2 hold for every n <= N_MAX at (eps / k, 1 - (1 - delta)^(1/k)), with pi(0) = 0."""
    impl.require("keep_probability")
    eps, delta, k = example
    bad = dp_violations(_curve(impl, eps, delta, k).tolist(), eps / k, _split(delta, k, "exact"))
    assert not bad, f"{impl.name}: not (eps/k, delta')-DP (eps={eps!r}, delta={delta!r}, k={k}): {bad[:3]}"


def _bounded(impl, D, k, seed):
    return impl.weights(D, max_partitions_contributed=k, rng=np.random.default_rng(seed))


def _memberships(D) -> dict[int, set]:
    out: dict[int, set] = {}
    for u, p in zip(D.user_ids.tolist(), D.partition_ids.tolist()):
        out.setdefault(u, set()).add(p)
    return out


def prop_bounding_limits_partitions(impl: Adapter, example) -> None:
    """After bounding every user is in at most k partitions, keeps min(k, d_u) of its d_u partitions, and
    keeps all of its records in each (rows are a subset; nothing else is dropped)."""
    impl.require("weights")
    D, k, seed = example
    B = _bounded(impl, D, k, seed)
    before, after = _memberships(D), _memberships(B)
    for u, parts in before.items():
        kept = after.get(u, set())
        assert len(kept) == min(k, len(parts)) and kept <= parts, (
            f"{impl.name}: user {u} in partitions {sorted(parts)} keeps {sorted(kept)} (k={k})"
        )
    rows = lambda X: sorted(zip(X.user_ids.tolist(), X.partition_ids.tolist(), X.values.tolist()))  # noqa: E731
    want = [r for r in rows(D) if r[1] in after.get(r[0], set())]
    assert rows(B) == want, f"{impl.name}: the bounded rows are not every row of the kept (user, partition) pairs"


def prop_sensitivity_under_l0(impl: Adapter, example) -> None:
    """On the bounded data, removing any one user lowers at most k partitions' counts, each by exactly 1
    (the L0 = k, Linf = 1 sensitivity of the distinct-user counts that the budget split relies on)."""
    impl.require("weights", "statistic")
    D, k, seed = example
    B = _bounded(impl, D, k, seed)
    full = dict(zip(*(np.asarray(a).tolist() for a in impl.statistic(B))))
    for u in B.users.tolist():
        if B.m == 1:
            rest: dict = {}
        else:
            rest = dict(zip(*(np.asarray(a).tolist() for a in impl.statistic(B.without_user(u)))))
        diff = {p: full[p] - rest.get(p, 0) for p in full}
        moved = [p for p, d in diff.items() if d != 0]
        assert all(diff[p] == 1 for p in moved) and len(moved) <= k, (
            f"{impl.name}: removing user {u} moves counts {diff} (L0 must be <= {k}, each change 1)"
        )


def prop_bounding_independent_of_values(impl: Adapter, example) -> None:
    """The same rng state chooses the same partitions whatever the values (the sampling reads only
    memberships): values replaced by 1 - values give the same kept (user, partition) pairs."""
    impl.require("weights")
    D, k, seed = example
    a = _memberships(_bounded(impl, D, k, seed))
    b = _memberships(_bounded(impl, D.with_fields(values=1.0 - D.values), k, seed))
    assert a == b, f"{impl.name}: the kept partitions depend on the values: {a} vs {b} (k={k}, seed={seed})"


DRAWS = 1500
Z_UNIFORM = 5.6  # two-sided normal quantile of 2e-8: with <= 5 x 3 cells checked, a false failure <= 1e-6


def prop_bounding_uniform(impl: Adapter, example) -> None:
    """Each of a user's d partitions is kept with frequency k/d over DRAWS draws (normal bound at Z_UNIFORM:
    false failure <= 1e-6 per example). One user in d = 5 partitions; a fixed order (the first k keys,
    the largest partitions) fails at once."""
    impl.require("weights")
    k, seed = example
    D = UserDataset.from_arrays(np.zeros(6), [0] * 5 + [1], partition_ids=[4, 0, 3, 1, 2, 0])
    rng = np.random.default_rng(seed)
    hits = np.zeros(5)
    for _ in range(DRAWS):
        B = impl.weights(D, max_partitions_contributed=k, rng=rng)
        hits[sorted(_memberships(B).get(0, set()))] += 1
    p = k / 5
    z = np.abs(hits / DRAWS - p) / math.sqrt(p * (1 - p) / DRAWS)
    assert (z <= Z_UNIFORM).all(), f"{impl.name}: keep frequencies {hits / DRAWS} of 5 partitions, want {p} (k={k})"


# ------------------------------------------------------------------------ the suite
ALL_PROPERTIES = (
    prop_statistic_counts_distinct_users,
    prop_keep_probability_matches_recursion,
    prop_keep_probability_is_dp,
    prop_bounding_limits_partitions,
    prop_sensitivity_under_l0,
    prop_bounding_independent_of_values,
    prop_bounding_uniform,
)
STRATEGIES = {
    prop_statistic_counts_distinct_users: bounding_cases(),
    prop_keep_probability_matches_recursion: budget_cases(),
    prop_keep_probability_is_dp: budget_cases(),
    prop_bounding_limits_partitions: bounding_cases(),
    prop_sensitivity_under_l0: bounding_cases(),
    prop_bounding_independent_of_values: bounding_cases(),
    prop_bounding_uniform: st.tuples(st.integers(1, 4), st.integers(0, 2**32 - 1)),
}
EXAMPLES: dict = {
    # the crossovers table (docs/papers/desfontaines2022.md) and a tie-free large-eps case
    prop_keep_probability_matches_recursion: [(1.0, 1e-5, 1), (0.1, 1e-5, 1), (1.0, 1e-10, 1), (2.0, 0.01, 2)],
    prop_keep_probability_is_dp: [(1.0, 1e-5, 1), (math.log(3), 1e-6, 1), (2.0, 0.01, 2)],
}
MAX_EXAMPLES: dict = {  # the bounding properties: small datasets, 30 examples each; uniform: DRAWS calls an example
    prop_statistic_counts_distinct_users: 30,
    prop_bounding_limits_partitions: 30,
    prop_sensitivity_under_l0: 30,
    prop_bounding_independent_of_values: 30,
    prop_bounding_uniform: 2,
}
RELATION = R.RELATION  # §1: add or remove one user with all their records (ADD_REMOVE_USER)
ADAPTER = SelectionAdapter


REFERENCE = SelectionAdapter(
    "desfontaines2022 (reference)",
    weights=R.bound_contributions,
    statistic=R.statistic,
    keep_probability=R.keep_probability,
    mechanism=R.mechanism,
)


# The records' domain for the extreme-floats property (properties/extremes.py): partition selection
# reads only who contributes to which partition, so a record's value may be any real.
EXTREMES = {"desfontaines2022.optimal": Domain({"values": (-math.inf, math.inf)})}
