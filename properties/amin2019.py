"""Property suite for Amin et al. 2019 §3 (capped sum, optimal cap); see reference/amin2019.py.

Stages an implementation may provide (any may be missing; a property that needs a
missing stage is "not applicable", ``properties.adapter``). The suite passes the dataset
positionally and every other argument by keyword, exactly as written here:

- ``statistic(dataset, T=T) -> float``: the noise-free capped sum g_T (§3);
- ``sensitivity(T=T) -> float``: its add/remove-user sensitivity (eq. 2);
- ``noise_scale(T=T, epsilon=epsilon) -> float``: the Laplace scale b (Def. 4);
- ``optimal_cap(dataset, epsilon=epsilon) -> float``: the non-private eq. 5 minimiser (eq. 6);
- ``mechanism(dataset, T=T, epsilon=epsilon, rng=rng, size=size)``: g_T + Lap(b), shape ()
  or (size,) (audited, not checked here; the call shape of ``reference.amin2019.mechanism``).

Parameters:

- ``dataset``: a ``UserDataset`` with one scalar value x_i >= 0 per record; user l's
  contribution is its total x_l = sum_{i in S_l} x_i (in the unit of the values);
- ``T``: the cap on each user's TOTAL x_l (not on each record), > 0, in the unit of the values;
- ``epsilon``: the pure-DP budget of the release (dimensionless, > 0);
- ``rng``: a ``numpy.random.Generator``; ``size``: None (one release) or the number of releases;
- returned ``sensitivity``: the add/remove-user L1 sensitivity of g_T, in the unit of the
  values; ``noise_scale``: the Laplace scale b (the density is exp(-|z|/b)/(2b)), not a
  standard deviation.

``CapAdapter`` is the common ``Adapter`` with the one extra stage ``optimal_cap``.

Every oracle below is independent of the reference: user totals by a Python loop over
``records_of`` with ``math.fsum`` (exactly rounded), the k-th largest by ``sorted``,
ceil(1/eps) with exact rationals, and eq. 5 minimised over an explicit candidate set.

Tolerances. g_T is a float sum of at most m <= 40 terms each <= T; numpy's pairwise
summation errs by < m * 2^-52 * sum <= 1e-12 relative here, so comparisons of sums use
a relative tolerance REL = 1e-9 (three orders above rounding, far below any bug: the
bugs these catch change g_T by at least a visible fraction of T).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, ClassVar, Optional

import numpy as np
from hypothesis import strategies as st

from userdp.reference import amin2019 as A
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import ADD_REMOVE_USER

from .extremes import Domain
from .adapter import Adapter
from .strategies import neighbouring_pairs, user_datasets

__all__ = [
    "CapAdapter",
    "REL",
    "totals_oracle",
    "kth_largest_oracle",
    "eq5_oracle",
    "capped_sum_cases",
    "capped_sum_neighbours",
    "cap_cases",
    "noise_cases",
    "prop_capped_per_user",
    "prop_sensitivity_bounds_neighbours",
    "prop_sensitivity_brute_force",
    "prop_noise_scale_calibrated",
    "prop_optimal_cap_is_kth_largest",
    "prop_optimal_cap_minimises_eq5",
    "ALL_PROPERTIES",
    "STRATEGIES",
    "EXAMPLES",
    "MAX_EXAMPLES",
    "RELATION",
    "ADAPTER",
    "REFERENCE",
    "EXTREMES",
]

REL = 1e-9  # see module docstring: >= 1000x the float rounding of these sums


@dataclass(frozen=True)
class CapAdapter(Adapter):
    """``Adapter`` plus ``optimal_cap(dataset, epsilon)`` (Amin et al. eq. 5-6). A plain
    ``Adapter`` has no such stage: the optimal-cap properties are "not applicable" to it."""

    STAGES: ClassVar[tuple[str, ...]] = Adapter.STAGES + ("optimal_cap",)

    optimal_cap: Optional[Callable[..., Any]] = None


# ------------------------------------------------------------------------ oracles
def totals_oracle(D: UserDataset) -> list[float]:
    """x_l = sum_{i in S_l} x_i by a plain loop, exactly rounded (math.fsum)."""
    return [math.fsum(D.values[D.records_of(int(u))].tolist()) for u in D.users]


def kth_largest_oracle(D: UserDataset, epsilon: float) -> float:
    """The ceil(1/eps)-th largest user total (0 when there are fewer users): eq. 6."""
    k = math.ceil(Fraction(1) / Fraction(epsilon))  # exact rational ceil
    xs = sorted(totals_oracle(D), reverse=True)
    return xs[k - 1] if k <= len(xs) else 0.0


def eq5_oracle(x: list[float], T: float, epsilon: float) -> float:
    """Eq. 5: T/eps + sum max(0, x_l - T), by a plain loop."""
    return T / epsilon + math.fsum(max(0.0, v - T) for v in x)


def _close(a: float, b: float, scale: float) -> bool:
    return abs(a - b) <= REL * max(1.0, abs(scale))


# --------------------------------------------------------------------- strategies
def _cap_for(D: UserDataset):
    """T from a fixed range, or exactly one user's total or record (boundary cases); caps lie
    in the reference's supported range [1e-50, 1e50] (``reference._checks.MAGNITUDE``)."""
    return st.one_of(
        st.floats(0.05, 3.0), st.sampled_from(totals_oracle(D) + D.values.tolist()).filter(lambda t: t >= 1e-50)
    )


@st.composite
def capped_sum_cases(draw, max_users: int = 8):
    """(D, T): imbalanced users with values in [0, 1] (some on a coarse grid, so ties)."""
    grid = draw(st.booleans())
    D = draw(user_datasets(max_users=max_users, value_range=(0.0, 1.0)))
    if grid:  # snap values onto {0, .25, .5, .75, 1}: many equal totals and exact caps
        D = D.with_fields(values=np.round(D.values * 4) / 4)
    return D, draw(_cap_for(D))


@st.composite
def capped_sum_neighbours(draw):
    """(pair, T) for add/remove-user neighbours with values in [0, 1]."""
    pair = draw(neighbouring_pairs(ADD_REMOVE_USER, lo=0.0, hi=1.0))
    return pair, draw(_cap_for(pair.first))


@st.composite
def noise_cases(draw):
    """(T, eps) over several orders of magnitude."""
    return draw(st.floats(1e-3, 1e3)), draw(st.floats(1e-3, 10.0))


@st.composite
def cap_cases(draw, max_users: int = 12):
    """(D, eps): eps exactly 1/k (the flat-minimum case), or any eps in [0.03, 3]."""
    D = draw(user_datasets(max_users=max_users, value_range=(0.0, 1.0)))
    if draw(st.booleans()):
        D = D.with_fields(values=np.round(D.values * 4) / 4)  # ties among totals
    eps = draw(st.one_of(st.integers(1, 15).map(lambda k: 1.0 / k), st.floats(0.03, 3.0)))
    return D, eps


# --------------------------------------------------------------------- properties
def prop_capped_per_user(impl: Adapter, example) -> None:
    """g_T(D) = sum_l min(x_l, T): each user's *total* is capped once, not each record."""
    impl.require("statistic")
    D, T = example
    got = float(impl.statistic(D, T=T))
    want = math.fsum(min(x, T) for x in totals_oracle(D))
    assert _close(got, want, want), (
        f"{impl.name}: g_T = {got!r} but sum_l min(x_l, T) = {want!r} (T={T!r}, user sizes "
        f"{D.counts.tolist()}); a per-record cap gives sum_i min(x_i, T) instead"
    )


def prop_sensitivity_bounds_neighbours(impl: Adapter, example) -> None:
    """|g_T(D) - g_T(D')| <= sensitivity(T) for a Hypothesis add/remove-user neighbour."""
    impl.require("statistic", "sensitivity")
    pair, T = example
    _check_pair(impl, pair.first, pair.second, T, pair.description)


def prop_sensitivity_brute_force(impl: Adapter, example) -> None:
    """The same bound over *every* add/remove-user neighbour of D on the grid {0, T/2, T, 1.5T}.

    Added users hold 1 or 2 records, so a user of two records at T (total 2T) is tried.
    """
    impl.require("statistic", "sensitivity")
    D, T = example
    grid = np.array([0.0, T / 2, T, 1.5 * T])
    for pair in ADD_REMOVE_USER.enumerate(D, grid, max_records=2):
        _check_pair(impl, pair.first, pair.second, T, pair.description)


def _check_pair(impl: Adapter, D, D2, T, what: str) -> None:
    diff = abs(float(impl.statistic(D, T=T)) - float(impl.statistic(D2, T=T)))
    delta = float(impl.sensitivity(T=T))
    assert diff <= delta + REL * max(1.0, T * (D.m + D2.m)), (
        f"{impl.name}: |g_T(D) - g_T(D')| = {diff!r} > sensitivity(T) = {delta!r} (T={T!r}; {what})"
    )


def prop_noise_scale_calibrated(impl: Adapter, example) -> None:
    """sensitivity(T) >= T (eq. 2 is attained) and noise_scale(T, eps) >= T / eps (Def. 4)."""
    T, eps = example
    if impl.sensitivity is None and impl.noise_scale is None:
        impl.require("noise_scale")
    if impl.sensitivity is not None:
        s = float(impl.sensitivity(T=T))
        assert s >= T * (1 - REL), f"{impl.name}: sensitivity({T!r}) = {s!r} < T (eq. 2 attains T)"
    if impl.noise_scale is not None:
        b = float(impl.noise_scale(T=T, epsilon=eps))
        assert b >= (T / eps) * (1 - REL), (
            f"{impl.name}: noise_scale(T={T!r}, eps={eps!r}) = {b!r} < T/eps = {T / eps!r} (Def. 4, eq. 2)"
        )


def prop_optimal_cap_is_kth_largest(impl: Adapter, example) -> None:
    """optimal_cap(D, eps) = the ceil(1/eps)-th largest user total (sort-based oracle)."""
    impl.require("optimal_cap")
    D, eps = example
    got, want = float(impl.optimal_cap(D, epsilon=eps)), kth_largest_oracle(D, eps)
    assert _close(got, want, want), (
        f"{impl.name}: optimal_cap = {got!r}, but the ceil(1/eps) = "
        f"{math.ceil(Fraction(1) / Fraction(eps))}-th largest of totals {sorted(totals_oracle(D), reverse=True)} "
        f"is {want!r} (eps={eps!r})"
    )


def prop_optimal_cap_minimises_eq5(impl: Adapter, example) -> None:
    """Eq. 5 at optimal_cap(D, eps) equals its minimum over all T >= 0.

    Eq. 5 is convex and piecewise linear in T with kinks only at the totals x_l, so its
    minimum over T >= 0 is attained on {0} U {x_l}; midpoints and max + 1 are added as
    a check on that argument. (When 1/eps is an integer the minimiser is not unique, so
    the objective values are compared, not the T's.)
    """
    impl.require("optimal_cap")
    D, eps = example
    x = totals_oracle(D)
    xs = sorted(set(x) | {0.0})
    cands = xs + [(a + b) / 2 for a, b in zip(xs, xs[1:])] + [xs[-1] + 1.0]
    best = min(eq5_oracle(x, t, eps) for t in cands)
    T = float(impl.optimal_cap(D, epsilon=eps))
    assert T >= 0, f"{impl.name}: optimal_cap = {T!r} < 0"
    got = eq5_oracle(x, T, eps)
    assert got <= best + REL * max(1.0, best), (
        f"{impl.name}: eq. 5 at T={T!r} is {got!r} > min over candidates {best!r} (eps={eps!r}, totals {x})"
    )


# ------------------------------------------------------------------------ the suite
# The shape every suite exposes (tests/test_suite_shape.py): the properties, the example strategy of
# each, known hard examples and the effort per property, the neighbouring relation, the
# adapter type and the reference wrapped in it.
ALL_PROPERTIES = (
    prop_capped_per_user,
    prop_sensitivity_bounds_neighbours,
    prop_sensitivity_brute_force,
    prop_noise_scale_calibrated,
    prop_optimal_cap_is_kth_largest,
    prop_optimal_cap_minimises_eq5,
)
STRATEGIES = {
    prop_capped_per_user: capped_sum_cases(),
    prop_sensitivity_bounds_neighbours: capped_sum_neighbours(),
    prop_sensitivity_brute_force: capped_sum_cases(max_users=4),  # brute force over every user removed
    prop_noise_scale_calibrated: noise_cases(),
    prop_optimal_cap_is_kth_largest: cap_cases(),
    prop_optimal_cap_minimises_eq5: cap_cases(),
}
EXAMPLES: dict = {}  # no known hard case beyond what the strategies draw
MAX_EXAMPLES: dict = {}  # every property: check_property's default, 100
RELATION = A.RELATION  # Amin et al. §3, Def. 1: one user's records appear or vanish (ADD_REMOVE_USER)
ADAPTER = CapAdapter
REFERENCE = CapAdapter(
    "amin2019 (reference)",
    statistic=A.statistic,
    sensitivity=A.sensitivity,
    noise_scale=A.noise_scale,
    mechanism=A.mechanism,
    optimal_cap=A.optimal_cap_nonprivate,
)


# Totality at the float extremes (properties/extremes.py): the records' declared domain of each
# mechanism, by its validate name. §3: x_i >= 0, unbounded above (user totals may overflow).
EXTREMES = {
    "amin2019.capped-sum": Domain({"values": (0.0, math.inf)}),
    "amin2019.capped-sum-private-cap": Domain({"values": (0.0, math.inf)}),
}
