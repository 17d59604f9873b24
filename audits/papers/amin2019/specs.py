"""Validation specs for Amin et al. 2019 §3: ``amin2019.capped-sum`` and ``amin2019.capped-sum-private-cap``.

The capped sum g_T(S) = sum_l min(x_l, T) + Lap(T / eps) (``reference/amin2019.py``). Its
sensitivity T is attained by any add/remove-user pair whose user's total reaches T, so every
case carries the pair "add one user with a record at T": a target whose noise is smaller than
T / eps on a case (for instance noise scaled from the largest record, which on the generated
cases whose users all stay below the cap is smaller than T) is under-noised there.

The private-cap variant releases (T, g_T + Lap(T / eps_sum)) with T from an exponential-
mechanism quantile: a mixture, compared as a distribution (no closed-form mean is used).
"""

from __future__ import annotations

import numpy as np

from userdp.reference import amin2019 as A
from userdp.reference.claims import PureDP
from userdp.reference.data import UserDataset

from userdp.audits.papers.amin2019 import audits as RA
from userdp.audits.papers.amin2019 import whitebox as RW

from userdp.audits.validation import AuditDesign, Case, Param, Refusal, ValidationSpec, register
from userdp.audits.validation._data import add_user, seeded, sizes, user_ids
from userdp.audits.validation.pair_search import Domain

__all__: list[str] = []  # registers its entries at import; nothing else is imported from it

ALGO, ALGO_CAP = "amin2019.capped-sum", "amin2019.capped-sum-private-cap"
READS = {
    "values": "(n,) each record's value x_i >= 0 (the unit of T)",
    "user_ids": "(n,) the user owning each record (the privacy unit: add/remove user)",
}


def _at_T(D: UserDataset, T: float):
    return add_user(D, [T], description=f"add a user of one record at T = {T:g} (g_T moves by T: the sensitivity)")


def _case(D, T, eps, what, origin="fixed") -> Case:
    return Case(D, {"T": T, "epsilon": eps}, what, pair=_at_T(D, T), origin=origin)


def _cases() -> list:
    """The audit dataset at T = 1, eps = 1 and eps = 10 (noise 0.1: the mean test resolves a change of
    g_T by 0.005), and users of several records each below T whose totals exceed it (a per-record cap
    reads 2.0 + 1.6 = 3.6 where g_1 = 2), at T = 1 and T = 0.5."""
    D = RA._default_dataset()
    multi = UserDataset.from_user_lists([[0.5, 0.5, 0.5, 0.5], [0.4, 0.4, 0.4, 0.4], [0.2]])
    return [
        _case(D, 1.0, 1.0, "six users, T = 1, eps = 1"),
        _case(D, 1.0, 10.0, "six users, T = 1, eps = 10"),
        _case(multi, 1.0, 10.0, "users of 4 records below T, totals above, T = 1, eps = 10"),
        _case(multi, 0.5, 4.0, "users of 4 records below T, totals above, T = 0.5, eps = 4"),
    ]


def _generate(seed: int) -> list:
    """Four cases per seed: every user's total below the cap (few users, balanced); many users of
    skewed sizes around the cap; one record per user, all below a large cap, small eps; and users of
    many small records each far below T whose totals exceed it, large eps."""
    out = []
    g = seeded(ALGO, seed, 0)
    c = sizes(g, 6, "balanced")
    D = UserDataset(np.round(g.uniform(0.0, 0.2, c.sum()), 4), user_ids(c))
    out.append(
        _case(
            D,
            1.5,
            1.0,
            f"6 users, every total below the cap (max {D.user_sums().max():.3g} < T = 1.5), eps = 1",
            "generated",
        )
    )
    g = seeded(ALGO, seed, 1)
    c = sizes(g, 300, "skewed", top=30)
    out.append(
        _case(
            UserDataset(np.round(g.uniform(0.0, 0.3, c.sum()), 4), user_ids(c)),
            1.0,
            4.0,
            "300 users of skewed sizes (30 records down to 1), values in [0, 0.3], T = 1, eps = 4",
            "generated",
        )
    )
    g = seeded(ALGO, seed, 2)
    out.append(
        _case(
            UserDataset(np.round(g.uniform(0.0, 0.5, 40), 4), np.arange(40)),
            2.0,
            0.5,
            "40 users of one record below 0.5, T = 2, eps = 0.5",
            "generated",
        )
    )
    g = seeded(ALGO, seed, 3)
    out.append(
        _case(
            UserDataset(np.round(g.uniform(0.1, 0.25, 60), 4), user_ids(np.full(12, 5))),
            0.8,
            8.0,
            "12 users of 5 records in [0.1, 0.25] (totals above T = 0.8), eps = 8",
            "generated",
        )
    )
    return out


def _designs() -> list:
    """The registry's pairs (a user of total exactly T added; the heaviest user removed; a user of
    max-count records all at 1 or all at 0 added). The all-1 user of 4 records is where a per-record
    cap (or a cap on the wrong side) shows: its capped total moves by 4T, not T, so eps_lb approaches
    4 eps. A noise scale T/(2 eps) shows on every pair (loss 2 eps), and a cap chosen from the data
    (eq. 6 without the private quantile) on the "add a user at T" pair, whose T moves with the data."""
    s = RA.build_capped_sum()
    return [
        AuditDesign(
            s.pairs,
            {"T": RA.T_PUBLIC, "epsilon": RA.EPS},
            s.claim,
            "T = 1, eps = 1: add a user of total T; remove the heaviest; add 4 records at 1 or at 0",
        )
    ]


def _negative() -> UserDataset:
    """The audit dataset with one more user, of a single record at -0.5: clipped to 0 it adds nothing;
    read as it is it lowers g_T by 0.5 (and |-0.5| would add 0.5)."""
    D = RA._default_dataset()
    return add_user(D, [-0.5]).second


def _refusals() -> list:
    D = RA._default_dataset()
    return [
        Refusal(Case(D, {"T": 1.0, "epsilon": 0.0}, "epsilon = 0 (Laplace scale T/0)"), "budget", "epsilon > 0"),
        Refusal(Case(D, {"T": -1.0, "epsilon": 1.0}, "T = -1 (a negative cap)"), "parameter", "T > 0"),
        Refusal(
            Case(_negative(), {"T": 1.0, "epsilon": 1.0}, "a user of one record at -0.5 (§3: contributions >= 0)"),
            "data",
            "every value >= 0",
        ),
    ]


def project(dataset: UserDataset, params) -> UserDataset:
    """every value clipped to [0, inf): a negative record counts as 0"""
    return dataset.with_fields(values=np.maximum(dataset.values, 0.0))


def _clip_designs() -> list:
    """Out-of-domain pairs for a clipping target: a user of records -5 and 2 added (clipped total 2,
    capped at T: a move of T), and a user of one record -5 added (clipped: no move). A target that
    releases on the raw values moves g_T by 3 on the first (loss 3 eps)."""
    D = RA._default_dataset()
    pairs = [
        add_user(D, [-5.0, 2.0], description="add a user of records -5 and 2 (clipped total 2)"),
        add_user(D, [-5.0], description="add a user of one record -5 (clipped: 0)"),
    ]
    return [
        AuditDesign(
            pairs,
            {"T": 1.0, "epsilon": 1.0},
            A.claim(1.0),
            "out of domain: add a user with a negative record",
            output="continuous",
        )
    ]


def _firsts(pairs) -> tuple:
    """The distinct first datasets of a design's pairs (the bases a pair search adds users to)."""
    out: list = []
    for pr in pairs:
        if all(pr.first is not D for D in out):
            out.append(pr.first)
    return tuple(out)


def _domain(seed: int) -> Domain:
    """The pair search's space at the design's parameters: a user of 1 to 4 records, each anywhere in
    [0, 2T] (values are >= 0 and unbounded above; a total above T is capped), added to the design's
    datasets, or any of their users removed."""
    d = _designs()[0]
    return Domain("add-remove-user", dict(d.params), _firsts(d.pairs), (0.0, 2.0 * d.params["T"]), records=(1, 2, 4))


register(
    ValidationSpec(
        algorithm=ALGO,
        reference=lambda dataset, rng, size=None, *, T, epsilon: A.mechanism(dataset, T, epsilon, rng, size),
        statistic=lambda D, *, T, epsilon: A.statistic(D, T),
        noise="laplace",
        claim=lambda D, params: A.claim(params["epsilon"]),
        cases=_cases,
        generate=_generate,
        designs=_designs,
        refusals=_refusals,
        project=project,
        clip_designs=_clip_designs,
        suite="userdp.properties.amin2019",
        parameters=(
            Param(
                "T",
                "the cap on each user's TOTAL x_l = sum of its records' values (not on each record), in "
                "the unit of the values; > 0. It is the sensitivity of g_T",
            ),
            Param("epsilon", "the privacy level: pure epsilon-DP under add/remove-user; > 0, dimensionless"),
        ),
        reads=READS,
        release="a float: g_T = sum_l min(x_l, T), plus Laplace noise of SCALE T / epsilon (the density is "
        "exp(-|z| / b) / 2b; its standard deviation is sqrt(2) b)",
        relation="add/remove user (all records of one user appear or vanish); pure epsilon-DP",
        stage_params={
            "statistic": ("T",),
            "sensitivity": ("T",),
            "noise_scale": ("T", "epsilon"),
            "optimal_cap": ("epsilon",),
        },
        takes_dataset=("statistic", "optimal_cap"),
        spaces=lambda p: RW.capped_sum_spaces(None, p),
        whitebox_params={"T": RA.T_PUBLIC, "epsilon": RA.EPS},
        domain=_domain,
        why="Amin et al. 2019 §3: the capped sum g_T + Lap(T / eps) with a public cap T",
    )
)


# ------------------------------------------------------------------ the private cap
def _cap_cases() -> list:
    """The registry's three pair datasets (one user at 0.7 U; the audit dataset; two users near 0) at
    the registry's split (eps_cap 0.5, eps_sum 3, U = 1), and the audit dataset at an even split."""
    p = {"epsilon_cap": RA.EPS_CAP, "epsilon_sum": RA.EPS_SUM, "U": RA.U}
    s = RA.build_private_cap()
    out = [
        Case(pr.first, p, f"{pr.first.m} user(s): {pr.description.split(' vs ')[0]}, registry split") for pr in s.pairs
    ]
    out.append(
        Case(
            RA._default_dataset(),
            {"epsilon_cap": 1.0, "epsilon_sum": 1.0, "U": 2.0},
            "six users, eps_cap = eps_sum = 1, U = 2",
        )
    )
    return out


def _cap_generate(seed: int) -> list:
    """Many users of skewed sizes (the quantile moves with them), and few users all below U/4."""
    g = seeded(ALGO_CAP, seed, 0)
    c = sizes(g, 200, "skewed", top=20)
    D = UserDataset(np.round(g.uniform(0.0, 0.2, c.sum()), 4), user_ids(c))
    g2 = seeded(ALGO_CAP, seed, 1)
    D2 = UserDataset(np.round(g2.uniform(0.0, 0.25, 5), 4), np.arange(5))
    return [
        Case(
            D,
            {"epsilon_cap": 1.0, "epsilon_sum": 0.5, "U": 3.0},
            "200 users of skewed sizes, values in [0, 0.2], eps_cap = 1, eps_sum = 0.5 (k = 2), U = 3",
            origin="generated",
        ),
        Case(
            D2,
            {"epsilon_cap": 2.0, "epsilon_sum": 2.0, "U": 1.0},
            "5 one-record users below U/4, eps_cap = eps_sum = 2, U = 1",
            origin="generated",
        ),
    ]


def _cap_designs() -> list:
    """The registry's pairs: one user at 0.7 U vs plus a user at U (the composed loss 3.35 of the
    claim 3.5); the audit dataset plus a user at U; two users near 0 plus one at U (the cap's own
    worst case at k = 2). A cap drawn without the exponential mechanism's 1/2, or read exactly from
    the data, or a sum whose noise ignores the drawn T, shows on them."""
    s = RA.build_private_cap()
    return [
        AuditDesign(
            s.pairs,
            {"epsilon_cap": RA.EPS_CAP, "epsilon_sum": RA.EPS_SUM, "U": RA.U},
            s.claim,
            "eps_cap 0.5, eps_sum 3, U = 1: a user at U added to three datasets",
            output="vector",
        )
    ]


def _cap_domain(seed: int) -> Domain:
    """The pair search's space at the registry's split: a user of one or two records whose total lies
    anywhere in [0, U] (interior points included: a new endpoint of the cap's intervals), added to
    the design's three datasets, or any of their users removed."""
    d = _cap_designs()[0]
    return Domain("add-remove-user", dict(d.params), _firsts(d.pairs), (0.0, float(d.params["U"])), records=(1, 2))


def _cap_refusals() -> list:
    D = RA._default_dataset()
    p = {"epsilon_cap": 0.5, "epsilon_sum": 3.0, "U": 1.0}
    return [
        Refusal(Case(D, {**p, "epsilon_cap": 0.0}, "epsilon_cap = 0"), "budget", "epsilon_cap > 0"),
        Refusal(Case(D, {**p, "epsilon_sum": 0.0}, "epsilon_sum = 0"), "budget", "epsilon_sum > 0"),
        Refusal(Case(D, {**p, "U": -1.0}, "U = -1 (an empty range for the cap)"), "parameter", "U > 0"),
        Refusal(
            Case(_negative(), p, "a user of one record at -0.5 (§3: contributions >= 0)"), "data", "every value >= 0"
        ),
    ]


register(
    ValidationSpec(
        algorithm=ALGO_CAP,
        reference=lambda dataset, rng, size=None, *, epsilon_cap, epsilon_sum, U: A.private_cap_mechanism(
            dataset, epsilon_cap, epsilon_sum, U, rng, size
        ),
        statistic=None,
        claim=lambda D, params: PureDP(params["epsilon_cap"] + params["epsilon_sum"]),
        cases=_cap_cases,
        generate=_cap_generate,
        designs=_cap_designs,
        refusals=_cap_refusals,
        project=project,
        suite="userdp.properties.amin2019",
        suite_properties="",
        suite_reference="",
        parameters=(
            Param("epsilon_cap", "the privacy level of the cap T (the exponential-mechanism quantile); > 0"),
            Param(
                "epsilon_sum",
                "the privacy level of the capped sum given T; > 0. The release is "
                "(epsilon_cap + epsilon_sum)-DP by composition; k = ceil(1/epsilon_sum)",
            ),
            Param("U", "the public upper end of the cap's range [0, U], in the unit of the values; > 0"),
        ),
        reads=READS,
        release="a (2,) array (T, s): the private cap T in [0, U] and s = g_T + Laplace(T / epsilon_sum)",
        relation="add/remove user; pure (epsilon_cap + epsilon_sum)-DP",
        domain=_cap_domain,
        why="Amin et al. 2019 §3 with the cap T drawn by the exponential mechanism aiming at the eq. 6 quantile",
    )
)
