"""Property suite for Wilson et al. 2020 (bounded user contribution over public partitions); see
reference/wilson2020.py and docs/papers/wilson2020.md ("spec §N": a point of its "The specification, by
section").

Stages an implementation may provide (any may be missing; a property that needs a missing stage is
"not applicable", ``properties.adapter``). The suite passes the dataset positionally and every other
argument by keyword, exactly as written here:

- ``bound(dataset, public_partitions=, L0=, Linf=, bounding=, rng=) -> UserDataset | EMPTY``: the
  records that survive contribution bounding (at most Linf records per user per partition, at most
  L0 partitions per user; ``bounding="sum"``: all records of a kept partition, Linf None);
- ``statistic(dataset, public_partitions=, metric=, lower=, upper=, bounding=) -> (k,)``: the
  noise-free COUNT / SUM of each public partition on (bounded) data, values clamped to
  [lower, upper] per record (``records``) or per user's partition sum (``sum``);
- ``sensitivity(metric=, L0=, Linf=, lower=, upper=, bounding=, norm=) -> float``: the add/remove-
  user L1 (``norm="l1"``) or L2 (``"l2"``) sensitivity of that vector;
- ``noise_scale(metric=, L0=, Linf=, epsilon=, lower=, upper=, delta=, noise=, bounding=)``: the
  Laplace scale b or the Gaussian sigma (for ``metric="mean"`` a pair: count's, normalised sum's);
- ``mechanism(dataset, public_partitions=, metric=, L0=, Linf=, epsilon=, rng=, size=, ...)``: the
  release (audited, not checked here).

Parameters: ``dataset`` a ``UserDataset`` with scalar values and ``partition_ids``; ``public_partitions``
the public list of partition ids (the release's order); ``L0``, ``Linf`` ints >= 1 (partitions per
user; records per user per partition); ``lower`` <= ``upper`` the clamp bounds in the values' unit;
``epsilon`` > 0, ``delta`` in [0, 1); ``noise`` "laplace" or "gaussian"; ``bounding`` "records" or
"sum"; ``rng`` a ``numpy.random.Generator``.

Oracles, independent of the reference: per-user and per-partition counts by Python loops over the
records, sums by ``math.fsum``, the sensitivities of spec §4's table written out with absolute
values, the Gaussian delta of Balle and Wang (Thm 8) through scipy.stats.norm (not the reference's
log-space root finder).

Tolerance REL = 1e-9: the sums here have at most 60 terms of magnitude <= 10, so float rounding is
below 1e-13 relative; any bug caught moves a value by a visible fraction of a bound.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Optional

import numpy as np
from hypothesis import strategies as st
from scipy.stats import norm

from userdp.reference import wilson2020 as W
from userdp.reference.data import EMPTY, EmptyDataset, UserDataset

from .adapter import Adapter
from .extremes import Domain

__all__ = [
    "BoundAdapter",
    "EXTREMES",
    "REL",
    "Query",
    "bounded_cases",
    "statistic_cases",
    "formula_cases",
    "noise_cases",
    "statistic_oracle",
    "partition_sensitivity_oracle",
    "gaussian_delta_oracle",
    "prop_contribution_budget",
    "prop_sampling_ignores_values",
    "prop_statistic_clamps",
    "prop_sensitivity_brute_force",
    "prop_sensitivity_formula",
    "prop_noise_scale_calibrated",
    "ALL_PROPERTIES",
    "STRATEGIES",
    "EXAMPLES",
    "MAX_EXAMPLES",
    "RELATION",
    "ADAPTER",
    "REFERENCE",
]

REL = 1e-9  # see the module docstring


@dataclass(frozen=True)
class BoundAdapter(Adapter):
    """``Adapter`` plus the contribution-bounding stage ``bound`` (spec §3)."""

    STAGES: ClassVar[tuple[str, ...]] = Adapter.STAGES + ("bound",)

    bound: Optional[Callable[..., Any]] = None


@dataclass(frozen=True)
class Query:
    """The public parameters of one aggregation (as the stages take them)."""

    public_partitions: tuple
    metric: str
    L0: int
    Linf: int | None
    lower: float | None
    upper: float | None
    bounding: str

    def bound_kw(self) -> dict:
        return dict(public_partitions=list(self.public_partitions), L0=self.L0, Linf=self.Linf, bounding=self.bounding)

    def stat_kw(self) -> dict:
        return dict(
            public_partitions=list(self.public_partitions),
            metric=self.metric,
            lower=self.lower,
            upper=self.upper,
            bounding=self.bounding,
        )

    def sens_kw(self) -> dict:
        return dict(
            metric=self.metric, L0=self.L0, Linf=self.Linf, lower=self.lower, upper=self.upper, bounding=self.bounding
        )


# ------------------------------------------------------------------------ oracles
def _records(D) -> list[tuple[int, int, float]]:
    if isinstance(D, EmptyDataset):
        return []
    return list(zip(D.user_ids.tolist(), D.partition_ids.tolist(), D.values.tolist()))


def statistic_oracle(D, q: Query) -> list[float]:
    """COUNT or SUM per public partition by loops: clamp each record (``records``) or each user's
    partition sum (``sum``), math.fsum."""
    clamp = lambda v: min(max(v, q.lower), q.upper)  # noqa: E731
    per = defaultdict(list)
    for u, p, v in _records(D):
        per[(u, p)].append(v)
    out = []
    for p in q.public_partitions:
        cells = [vs for (u, pp), vs in per.items() if pp == p]
        if q.metric == "count":
            out.append(float(sum(len(vs) for vs in cells)))
        elif q.bounding == "records":
            out.append(math.fsum(clamp(v) for vs in cells for v in vs))
        else:
            out.append(math.fsum(clamp(math.fsum(vs)) for vs in cells))
    return out


def partition_sensitivity_oracle(q: Query) -> float:
    """The spec §4 table: COUNT Linf; SUM Linf max(|lower|, |upper|) or max(|lower|, |upper|);
    MEAN's normalised sum Linf (upper - lower) / 2."""
    if q.metric == "count":
        return float(q.Linf)
    if q.metric == "mean":  # the normalised sum of §4.1: each record within +-(upper - lower)/2 of mid
        return q.Linf * (q.upper - q.lower) / 2
    top = max(abs(q.lower), abs(q.upper))
    return top if q.bounding == "sum" else q.Linf * top


def gaussian_delta_oracle(sigma: float, l2: float, eps: float) -> float:
    """Balle and Wang 2018, Thm 8: delta(sigma) = Phi(l2/(2s) - eps s/l2) - e^eps Phi(-l2/(2s) - eps s/l2)."""
    a, b = l2 / (2 * sigma), eps * sigma / l2
    return float(norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b))


def _kept_structure(D) -> tuple[Counter, dict]:
    """Records per (user, partition), and the set of partitions of each user."""
    cells = Counter((u, p) for u, p, _ in _records(D))
    parts = defaultdict(set)
    for u, p in cells:
        parts[u].add(p)
    return cells, parts


def _without_user(B, u: int):
    if isinstance(B, EmptyDataset):
        return EMPTY
    keep = np.flatnonzero(B.user_ids != u)
    return B.take(keep) if keep.size else EMPTY


# --------------------------------------------------------------------- strategies
_GRID = (-3.0, -1.0, 0.0, 0.5, 1.0, 2.0, 4.0)  # values inside and outside the clamp bounds drawn below


@st.composite
def _dataset(draw, max_users: int = 5, parts: int = 4):
    """Users of 1..6 records over partitions 0..parts-1, values on _GRID: many (user, partition)
    cells of several records and users in several partitions, so that bounding bites."""
    m = draw(st.integers(1, max_users))
    rows = []
    for u in range(m):
        for _ in range(draw(st.integers(1, 6))):
            rows.append((u, draw(st.integers(0, parts - 1)), draw(st.sampled_from(_GRID))))
    u, p, v = zip(*rows)
    return UserDataset.from_arrays(np.array(v), np.array(u), partition_ids=np.array(p))


@st.composite
def _query(draw, metric=None, parts: int = 4) -> Query:
    metric = draw(st.sampled_from(("count", "sum"))) if metric is None else metric
    bounding = draw(st.sampled_from(W.BOUNDINGS)) if metric == "sum" else "records"
    public = draw(st.lists(st.integers(0, parts), min_size=1, max_size=parts + 1, unique=True))  # parts: never in data
    L0, Linf = draw(st.integers(1, 3)), None if bounding == "sum" else draw(st.integers(1, 3))
    if metric == "count":
        return Query(tuple(public), metric, L0, Linf, None, None, bounding)
    lower = draw(st.sampled_from((-5.0, -1.0, 0.0, 0.5)))
    upper = draw(st.sampled_from((1.0, 2.0, 3.0)))
    return Query(tuple(public), metric, L0, Linf, lower, upper, bounding)


@st.composite
def bounded_cases(draw, max_users: int = 5):
    """(D, q, seed): a dataset, a query and the seed of the bounding's generator."""
    return draw(_dataset(max_users)), draw(_query()), draw(st.integers(0, 2**32 - 1))


@st.composite
def statistic_cases(draw):
    """(D, q) with the records restricted to public partitions (what ``bound`` passes on)."""
    D, q = draw(_dataset()), draw(_query())
    idx = np.flatnonzero(np.isin(D.partition_ids, q.public_partitions))
    return (D.take(idx) if idx.size else EMPTY), q


@st.composite
def formula_cases(draw) -> Query:
    """A query of either metric, either bounding, with bounds of mixed sign (PR 384's lo = -5, hi = 1)."""
    return draw(_query())


@st.composite
def noise_cases(draw):
    """(q, eps, delta, noise) over a range of budgets, MEAN included."""
    q = draw(_query(metric=draw(st.sampled_from(W.METRICS))))
    noise = draw(st.sampled_from(W.NOISES))
    delta = 0.0 if noise == "laplace" else draw(st.sampled_from((1e-9, 1e-5, 1e-3)))
    return q, draw(st.floats(0.05, 5.0)), delta, noise


# --------------------------------------------------------------------- properties
def prop_contribution_budget(impl: Adapter, example) -> None:
    """Claim C1: after ``bound`` every user has <= L0 partitions and <= Linf records in each, all
    public, taken from its own records; and nothing more is dropped: a user keeps exactly
    min(L0, its public partitions) partitions and min(Linf, r) of a cell's r records (all with
    ``sum``)."""
    impl.require("bound")
    D, q, seed = example
    B = impl.bound(D, rng=np.random.default_rng(seed), **q.bound_kw())
    orig = Counter(r for r in _records(D) if r[1] in q.public_partitions)
    got = Counter(_records(B))
    assert not got - orig, f"{impl.name}: bound kept records not in the public input: {dict(got - orig)} ({q})"
    cells, parts = _kept_structure(B)
    pub = np.flatnonzero(np.isin(D.partition_ids, q.public_partitions))
    ocells, oparts = _kept_structure(D.take(pub) if pub.size else EMPTY)
    for u, ps in oparts.items():
        want = min(q.L0, len(ps))
        assert len(parts.get(u, ())) == want, (
            f"{impl.name}: user {u} keeps {len(parts.get(u, ()))} partitions, "
            f"not min(L0={q.L0}, {len(ps)}) = {want} ({q})"
        )
    for (u, p), r in cells.items():
        want = ocells[(u, p)] if q.Linf is None else min(q.Linf, ocells[(u, p)])
        assert r == want, f"{impl.name}: user {u} keeps {r} records in partition {p}, not {want} ({q})"


def prop_sampling_ignores_values(impl: Adapter, example) -> None:
    """The sampling depends on the structure and ``rng`` only (spec §2.2): two datasets of one
    structure whose values differ (codes i + 0.5 and -3 (i + 0.5) of record i) keep the same records
    under one seed. A sampler that keeps the largest contributions fails it."""
    impl.require("bound")
    D, q, seed = example
    code = np.arange(D.n) + 0.5
    kept = []
    for vals, back in ((code, lambda v: v - 0.5), (-3.0 * code, lambda v: -v / 3.0 - 0.5)):
        B = impl.bound(D.with_fields(values=vals), rng=np.random.default_rng(seed), **q.bound_kw())
        kept.append(sorted(int(round(back(v))) for _, _, v in _records(B)))
    assert kept[0] == kept[1], (
        f"{impl.name}: one seed, one structure, other values: kept records {kept[0]} vs {kept[1]} ({q})"
    )


def prop_statistic_clamps(impl: Adapter, example) -> None:
    """``statistic`` = the loop oracle: each record (``records``) or each user's partition sum
    (``sum``) clamped to [lower, upper], per public partition in the list's order."""
    impl.require("statistic")
    B, q = example
    got = np.asarray(impl.statistic(B, **q.stat_kw()), dtype=float)
    want = statistic_oracle(B, q)
    assert got.shape == (len(want),) and np.allclose(got, want, rtol=REL, atol=REL), (
        f"{impl.name}: statistic = {got.tolist()}, the loop oracle {want} ({q}; records {_records(B)})"
    )


def _added_users(D: UserDataset, q: Query):
    """Added users of the brute force: in s = 1 .. L0 + 1 partitions (public, and one never public),
    Linf + 1 records in each, every value at one point of {lower - 1, lower, 0, upper, upper + 1}."""
    u = int(D.users.max()) + 1
    space = sorted(set(q.public_partitions)) + [max(q.public_partitions) + 1]
    r = 1 + (q.Linf or 1)
    vals = [0.0] if q.metric == "count" else sorted({q.lower - 1, q.lower, 0.0, q.upper, q.upper + 1})
    for s in range(1, min(q.L0 + 1, len(space)) + 1):
        for ps in itertools.combinations(space, s):
            for v in vals:
                p = np.repeat(ps, r)
                yield (
                    UserDataset.from_arrays(
                        np.r_[D.values, np.full(p.size, v)],
                        np.r_[D.user_ids, np.full(p.size, u)],
                        partition_ids=np.r_[D.partition_ids, p],
                    ),
                    u,
                )


def prop_sensitivity_brute_force(impl: Adapter, example) -> None:
    """Claim C2: for every add/remove-user neighbour of D (every user removed; a user added across
    1..L0+1 partitions at the clamp bounds and beyond) and every drawn sampling, coupled so that the
    other users' samples are equal, ||s(D') - s(D)||_1 <= sensitivity(l1) and ||.||_2 <= sensitivity(l2)."""
    impl.require("bound", "statistic", "sensitivity")
    D, q, seed = example
    l1 = float(impl.sensitivity(norm="l1", **q.sens_kw()))
    l2 = float(impl.sensitivity(norm="l2", **q.sens_kw()))
    bigger = [(D, int(u)) for u in D.users] + list(_added_users(D, q))
    for big, u in bigger:
        B = impl.bound(big, rng=np.random.default_rng(seed), **q.bound_kw())
        s_big = np.asarray(impl.statistic(B, **q.stat_kw()), dtype=float)
        s_small = np.asarray(impl.statistic(_without_user(B, u), **q.stat_kw()), dtype=float)
        d = s_big - s_small
        n1, n2 = float(np.abs(d).sum()), float(np.sqrt((d**2).sum()))
        tol = REL * max(1.0, float(np.abs(s_big).sum()))
        assert n1 <= l1 + tol and n2 <= l2 + tol, (
            f"{impl.name}: user {u} moves the statistic by {d.tolist()} (L1 {n1:g}, L2 {n2:g}) > sensitivity "
            f"L1 {l1:g}, L2 {l2:g} ({q}; user's kept records {[r for r in _records(B) if r[0] == u]})"
        )


def prop_sensitivity_formula(impl: Adapter, example) -> None:
    """The spec §4 table exactly: L1 = L0 Linf_value, L2 = sqrt(L0) Linf_value, Linf_value with
    absolute values (add/remove, not upper - lower). A larger value is not a privacy bug but a
    mismatch with the paper (PipelineDP PR 384 (b)); a smaller one is under-noise."""
    impl.require("sensitivity")
    q = example
    lv = partition_sensitivity_oracle(q)
    for nrm, want in (("l1", q.L0 * lv), ("l2", math.sqrt(q.L0) * lv)):
        got = float(impl.sensitivity(norm=nrm, **q.sens_kw()))
        assert abs(got - want) <= REL * max(1.0, want), (
            f"{impl.name}: sensitivity {nrm} = {got!r}, spec §4's {want!r} ({q})"
        )


def _check_scale(impl: Adapter, got: float, sens: float, eps: float, delta: float, noise: str, what: str) -> None:
    if noise == "laplace":
        want = sens / eps
        assert abs(got - want) <= REL * want, f"{impl.name}: {what} Laplace scale {got!r} != L1/eps = {want!r}"
        return
    d_got = gaussian_delta_oracle(got, sens, eps)
    assert d_got <= delta * (1 + 1e-6), f"{impl.name}: {what} sigma {got!r} gives delta {d_got!r} > {delta!r}"
    assert gaussian_delta_oracle(got * 0.999, sens, eps) > delta, (
        f"{impl.name}: {what} sigma {got!r} is more than 0.1% above the analytic sigma (L2 {sens}, eps {eps})"
    )


def prop_noise_scale_calibrated(impl: Adapter, example) -> None:
    """Laplace: b = L1 / eps. Gaussian: delta(sigma) <= delta for the L2 sensitivity (Balle-Wang,
    Thm 8, by scipy) and delta(0.999 sigma) > delta (the analytic sigma, not the classical one).
    MEAN: the count's and the normalised sum's scales, each at (eps/2, delta/2) (spec §4.1-4.2)."""
    impl.require("noise_scale")
    q, eps, delta, noise = example
    got = impl.noise_scale(epsilon=eps, delta=delta, noise=noise, **q.sens_kw())
    root = (lambda L: L) if noise == "laplace" else math.sqrt
    what = f"({q}, eps {eps}, delta {delta}, {noise})"
    if q.metric != "mean":
        _check_scale(impl, float(got), root(q.L0) * partition_sensitivity_oracle(q), eps, delta, noise, what)
        return
    assert len(got) == 2, f"{impl.name}: MEAN's noise_scale must be (count's, normalised sum's), got {got!r}"
    _check_scale(impl, float(got[0]), root(q.L0) * q.Linf, eps / 2, delta / 2, noise, "count " + what)
    sens = root(q.L0) * partition_sensitivity_oracle(q)
    _check_scale(impl, float(got[1]), sens, eps / 2, delta / 2, noise, "normalised sum " + what)


# ------------------------------------------------------------------------ the suite
ALL_PROPERTIES = (
    prop_contribution_budget,
    prop_sampling_ignores_values,
    prop_statistic_clamps,
    prop_sensitivity_brute_force,
    prop_sensitivity_formula,
    prop_noise_scale_calibrated,
)
STRATEGIES = {
    prop_contribution_budget: bounded_cases(),
    prop_sampling_ignores_values: bounded_cases(),
    prop_statistic_clamps: statistic_cases(),
    prop_sensitivity_brute_force: bounded_cases(max_users=3),
    prop_sensitivity_formula: formula_cases(),
    prop_noise_scale_calibrated: noise_cases(),
}


def _spread_example() -> UserDataset:
    """User 0: one record in partitions 0, 4, 5, 6, 7 (only 0 is public below) and three records at 2 in
    partition 1; user 1: two records at 2 in partition 0."""
    u = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1]
    p = [0, 4, 5, 6, 7, 1, 1, 1, 0, 0]
    return UserDataset.from_arrays([1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0], u, partition_ids=p)


_Q_COUNT = Query((0, 1, 2), "count", 1, 1, None, None, "records")
_Q_SUM_PER_USER = Query((0, 1, 2), "sum", 1, None, 0.0, 3.0, "sum")
_Q_SUM_ROWS = Query((0, 1, 2), "sum", 2, 3, 0.0, 1.0, "records")
EXAMPLES: dict = {
    # known hard cases, run first: a user with more partitions than L0 (most of them never public) and a
    # cell of more records than Linf; per-user sums above the bound; a partition total above the bound
    prop_contribution_budget: [(_spread_example(), _Q_COUNT, s) for s in (0, 1, 2)],
    prop_sensitivity_brute_force: [(_spread_example(), _Q_SUM_PER_USER, 0), (_spread_example(), _Q_COUNT, 0)],
    prop_statistic_clamps: [(_spread_example(), _Q_SUM_PER_USER), (_spread_example(), _Q_SUM_ROWS)],
    # PR 384 (a): lower = -5, upper = 1, where max(lower, upper) = 1 but max(|lower|, |upper|) = 5
    prop_sensitivity_formula: [
        Query((0, 1), "sum", 2, 3, -5.0, 1.0, "records"),
        Query((0,), "sum", 2, None, -5.0, 1.0, "sum"),
    ],
}
MAX_EXAMPLES: dict = {prop_sensitivity_brute_force: 25}  # each example runs up to ~60 neighbours
RELATION = W.RELATION  # spec §1: add or remove all the rows of one user
ADAPTER = BoundAdapter
REFERENCE = BoundAdapter(
    "wilson2020 (reference)",
    bound=W.bound,
    statistic=W.statistic,
    sensitivity=W.sensitivity,
    noise_scale=W.noise_scale,
    mechanism=W.mechanism,
)


# The records' domain for the extreme-floats property (properties/extremes.py): any real value (the
# mechanism clamps to the public [lower, upper] itself, per record or per user-partition sum).
EXTREMES = {
    name: Domain({"values": (-math.inf, math.inf)})
    for name in (
        "wilson2020.count",
        "wilson2020.count-gaussian",
        "wilson2020.sum",
        "wilson2020.sum-gaussian",
        "wilson2020.sum-per-user",
        "wilson2020.sum-per-user-gaussian",
        "wilson2020.mean",
        "wilson2020.mean-gaussian",
    )
}
