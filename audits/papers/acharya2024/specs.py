"""Validation specs for Acharya et al. 2024: PDP-OP (``acharya2024.pdp-op``, ``-pdp-op-d2``) and the
baselines of §4 (``-nonpersonalized``, ``-jorgensen-max``, ``-jorgensen-mean``).

PDP-OP releases theta_bar + Z, Z of density prop. to exp(-eta ||z||_2) (Algorithm 1, Theorem 3.2):
the mean of a release is theta_bar exactly, and its spread is 1/eta per unit of radius. The
two entries differ only in the dimension their audit uses, so they share the cases (d = 1, 2, 3)
and each audits its own d first. The non-personalized baseline is PDP-OP on the flat profile
min eps; the Jorgensen baseline subsamples records first (a mixture: compared as a distribution).

Case pairs (``Case.pair``): record i moved to the corner x = 1 with y = -1 on one side and y = +1
on the other, for the record whose claim is tightest for the algorithm (the most lenient record
for PDP-OP: its shift is the largest; the most stringent for the non-personalized baseline, whose
noise is calibrated to it). At lambda >= 1 this realises most of Delta_i (0.97 at lambda = 100 on
the audit data, ``registry.acharya2024.realised_share``).

Generated cases move over the regularisation (lambda below 1, where B(lambda) = 1/sqrt(lambda),
and above 1, where it is sqrt(d)/lambda), the dimension (d = 1, 2, 3), the number of records
(6 to 120) and the privacy profile (uniform or skewed, the paper's three groups).
"""

from __future__ import annotations

import numpy as np

from userdp.reference import acharya2024 as A
from userdp.reference.claims import PersonalizedDP
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import NeighbourPair

from userdp.audits.papers.acharya2024 import audits as RA

from userdp.audits.validation import AuditDesign, Case, Param, Refusal, ValidationSpec, register
from userdp.audits.validation._data import seeded
from userdp.audits.validation.pair_search import Domain

__all__: list[str] = []  # registers its entries at import; nothing else is imported from it

LAMBDA = 100.0
READS = {
    "values": "(n, d) the features x_i, each coordinate in [0, 1] (d counts an intercept column if any)",
    "labels": "(n,) the targets y_i in [-1, 1]",
    "epsilons": "(n,) the PUBLIC privacy profile eps_i > 0 (record i's level)",
    "user_ids": "(n,) one record per user: the privacy unit is the record (replace-record)",
}
LAMBDA_P = Param(
    "Lambda",
    "the ridge regularisation lambda > 0 of eq. (2): sum_i w_i (y_i - theta.x_i)^2 + lambda "
    "||theta||^2 (no 1/2, no 1/n)",
)


def generated_dataset(n: int, d: int, seed: int, eps_range=(0.05, 2.0)) -> UserDataset:
    """n records, x uniform on [0, 1]^d, y uniform on [-1, 1], eps_i uniform on eps_range (seeded)."""
    g = np.random.default_rng(seed)
    return UserDataset(
        g.uniform(0.0, 1.0, (n, d)), np.arange(n), labels=g.uniform(-1.0, 1.0, n), epsilons=g.uniform(*eps_range, n)
    )


def corner_dataset(d: int) -> UserDataset:
    """The audit dataset with its most lenient record (7, eps 1.5) moved to the corner x = 1, y = 1."""
    return A.RELATION.neighbour(RA.audit_dataset(d), 7, np.ones(d), 1.0)


def corner_pair(D: UserDataset, i: int) -> NeighbourPair:
    """Record i at x = 1 with y = -1 vs y = +1: the first is D with record i moved there."""
    ones = np.ones(D.values.shape[1:])
    a, b = A.RELATION.neighbour(D, i, ones, -1.0), A.RELATION.neighbour(D, i, ones, 1.0)
    return NeighbourPair(
        a, b, A.RELATION.name, int(i), f"record {i} (eps_i = {D.epsilons[i]:.3g}): x = 1, y = -1 vs +1"
    )


def pair_share(pair: NeighbourPair, Lambda: float, flat: bool = False) -> float:
    """||theta_bar(first) - theta_bar(second)|| / Delta_i (the pair's record), on the flat profile when
    ``flat`` (the non-personalized baseline's calibration)."""
    a, b = (pair.first, pair.second) if not flat else (_flat(pair.first), _flat(pair.second))
    move = np.linalg.norm(A.statistic(a, Lambda) - A.statistic(b, Lambda))
    return float(min(1.0, move / A.sensitivity(a, Lambda)[pair.unit]))


def _three_groups(g, n: int) -> np.ndarray:
    """The three groups of the authors' experiments (34% of the records in U(0.01, 0.2), 43% in U(0.2, 1),
    the rest at 1), scaled up x 2."""
    a, b = int(0.34 * n), int(0.43 * n)
    return 2 * np.r_[g.uniform(0.01, 0.2, a), g.uniform(0.2, 1.0, b), np.ones(n - a - b)]


def _cases_pdp(record_of, flat: bool = False) -> list:
    """The audit dataset (d = 1 and 2, lambda = 100), the d = 2 corner dataset at lambda = 1 (record 7
    at (1, 1; y = 1) with weight 1.5 / 8.75: theta_bar = (0.122, 0.122), against 0.093 under uniform
    weights and 0.237 under unnormalised ones), and a generated n = 30, d = 3 dataset at lambda = 1."""
    out = []
    for D, lam, what in (
        (RA.audit_dataset(1), LAMBDA, "audit dataset, d = 1, lambda = 100"),
        (RA.audit_dataset(2), LAMBDA, "audit dataset, d = 2, lambda = 100"),
        (corner_dataset(2), 1.0, "audit dataset with record 7 at the corner, d = 2, lambda = 1"),
        (generated_dataset(30, 3, seed=5), 1.0, "generated n = 30, d = 3, lambda = 1"),
    ):
        pair = corner_pair(D, record_of(D))
        out.append(Case(pair.first, {"Lambda": lam}, what, pair=pair, pair_share=pair_share(pair, lam, flat)))
    return out


def _generate_pdp(algorithm: str, record_of, flat: bool = False):
    """Four cases per seed: lambda below 1 (0.3) and above (5, 50), d = 1 to 3, few (6) and many (120)
    records, uniform and skewed (three-group) profiles."""

    def generate(seed: int) -> list:
        specs = [(6, 1, 0.3, "uniform"), (120, 2, 5.0, "groups"), (20, 3, 0.5, "groups"), (60, 1, 50.0, "uniform")]
        out = []
        for k, (n, d, lam, prof) in enumerate(specs):
            g = seeded(algorithm, seed, k)
            eps = g.uniform(0.1, 2.0, n) if prof == "uniform" else _three_groups(g, n)
            D = UserDataset(
                np.round(g.uniform(0.0, 1.0, (n, d)), 4),
                np.arange(n),
                labels=np.round(g.uniform(-1.0, 1.0, n), 4),
                epsilons=eps,
            )
            pair = corner_pair(D, record_of(D))
            out.append(
                Case(
                    pair.first,
                    {"Lambda": lam},
                    f"{n} records, d = {d}, lambda = {lam:g}, {prof} profile",
                    pair=pair,
                    pair_share=pair_share(pair, lam, flat),
                    origin="generated",
                )
            )
        return out

    return generate


def _lenient(D) -> int:
    return int(np.argmax(D.epsilons))


def _stringent(D) -> int:
    return int(np.argmin(D.epsilons))


def _designs_pdp(first_d: int):
    """The registry's corner pairs (records 0, 7 and 4 of the profile: eps 0.25, 1.5 and 1.0, each at
    x = 1 with y = -1 vs +1) at lambda = 100, where a pair realises about 0.97 of Delta_i: unnormalised
    weights (loss ~7.5 eps_i), eta missing its 2 (2 eps_i), Gaussian noise of sd 1/eta (unbounded in
    the tails) and noise-free releases show in d = 1; the eta with d B for sqrt(d)(1 + sqrt(d) B) is
    1.40 x too large in d = 2 (true loss 1.40 eps_i), seen along the likelihood-ratio direction."""

    def designs() -> list:
        out = []
        for d in (first_d, 3 - first_d):
            s = RA._pdp_setup(d, LAMBDA)
            out.append(
                AuditDesign(
                    s.pairs,
                    {"Lambda": LAMBDA},
                    s.claim,
                    f"d = {d}, lambda = 100: records 0, 7, 4 (eps 0.25, 1.5, 1) at x = 1, y = -1 vs +1",
                    output="vector",
                )
            )
        return out

    return designs


def _domain_pdp(d: int):
    """The pair search's space at lambda = 100 on the audit profile in dimension d: records 0, n - 1 and the
    most lenient one, replaced anywhere in [0, 1]^d (corners, axes, diagonals, off-diagonals, interior
    points) with y at -1 vs +1, or moved between two such points at y = 1."""

    def domain(seed: int) -> Domain:
        return Domain("replace-record", {"Lambda": LAMBDA}, (RA.audit_dataset(d),), (0.0, 1.0), labels=(-1.0, 1.0))

    return domain


def _domain_baseline(seed: int) -> Domain:
    """The pair search's space for the §4 baselines at lambda = 100 on the audit profile, d = 1 and 2:
    records 0, n - 1, the most lenient and the most stringent (the level a non-personalized
    calibration and a Jorgensen threshold are tight for), replaced anywhere in [0, 1]^d (corners,
    axes, diagonals, off-diagonals, interior points) with y at -1 vs +1, or moved between two such
    points at y = 1: 213 candidates (a batched non-personalized target replays all of them in 0.55 s; a
    Jorgensen target, whose subsampling makes every replay a moment, about 190 in the 2.5 s budget)."""
    return Domain(
        "replace-record", {"Lambda": LAMBDA}, (RA.audit_dataset(1), RA.audit_dataset(2)), (0.0, 1.0), labels=(-1.0, 1.0)
    )


def _refusals() -> list:
    D = RA.audit_dataset(1)
    x = np.array(D.values)
    x[0] = 2.0
    y = np.array(D.labels)
    y[1] = 3.0
    return [
        Refusal(
            Case(D, {"Lambda": 0.0}, "lambda = 0 (eta = 0: no noise; the authors' code releases theta_bar as it is)"),
            "budget",
            "Lambda > 0",
        ),
        Refusal(Case(D, {"Lambda": -1.0}, "lambda = -1 (a negative regulariser)"), "parameter", "Lambda > 0"),
        Refusal(
            Case(D.with_fields(values=x), {"Lambda": LAMBDA}, "a feature x = 2 outside [0, 1]"),
            "data",
            "every feature in [0, 1]",
        ),
        Refusal(
            Case(D.with_fields(labels=y), {"Lambda": LAMBDA}, "a label y = 3 outside [-1, 1]"),
            "data",
            "every label in [-1, 1]",
        ),
    ]


def project(dataset: UserDataset, params) -> UserDataset:
    """features clipped to [0, 1] and labels to [-1, 1]"""
    return dataset.with_fields(values=np.clip(dataset.values, 0.0, 1.0), labels=np.clip(dataset.labels, -1.0, 1.0))


def _clip_designs() -> list:
    """Record 7 (eps 1.5) at x = 5 with y = -4 vs y = +4: clipped, the corner pair (0.97 of Delta_7);
    unclipped, theta_bar moves ~4 x more (loss ~6 eps_7 at lambda = 100)."""
    D = RA.audit_dataset(1)
    a, b = A.RELATION.neighbour(D, 7, np.array([5.0]), -4.0), A.RELATION.neighbour(D, 7, np.array([5.0]), 4.0)
    pair = NeighbourPair(a, b, A.RELATION.name, 7, "record 7 at x = 5 (outside [0, 1]), y = -4 vs +4")
    return [
        AuditDesign(
            [pair], {"Lambda": LAMBDA}, A.claim(D), "out of domain: record 7 far outside the box", output="vector"
        )
    ]


def _claim(D, params) -> PersonalizedDP:
    return A.claim(D)


def _pdp_reference(dataset, rng, size=None, *, Lambda):
    return A.mechanism(dataset, rng, size, Lambda=Lambda)


_PDP = dict(
    suite="userdp.properties.acharya2024",
    parameters=(LAMBDA_P,),
    reads=READS,
    relation="replace-record (Definition 2.1: record i changes, n and the profile public); eps_i-DP for "
    "record i (personalized, Definition 2.2)",
    refusals=_refusals,
    project=project,
    clip_designs=_clip_designs,
    claim=_claim,
    stage_params={
        "weights": ("Lambda",),
        "statistic": ("Lambda",),
        "sensitivity": ("Lambda",),
        "noise_scale": ("Lambda",),
    },
    takes_dataset=("weights", "statistic", "sensitivity", "noise_scale"),
)

for _name, _d in (("acharya2024.pdp-op", 1), ("acharya2024.pdp-op-d2", 2)):
    register(
        ValidationSpec(
            algorithm=_name,
            reference=_pdp_reference,
            statistic=lambda D, *, Lambda: A.statistic(D, Lambda),
            noise="l2laplace",
            cases=lambda: _cases_pdp(_lenient),
            generate=_generate_pdp(_name, _lenient),
            designs=_designs_pdp(_d),
            domain=_domain_pdp(_d),
            release="a (d,) array: theta_bar + Z, Z of density prop. to exp(-eta ||z||_2) (radius Gamma(d, rate eta), "
            "uniform direction); eta = lambda sum_j eps_j / (2 sqrt(d) (1 + sqrt(d) B(lambda)))",
            why="PDP-OP (Algorithm 1, Theorem 3.2): theta_bar + L2-Laplace noise of rate eta",
            **_PDP,
        )
    )


# ------------------------------------------------------------------ the non-personalized baseline
def _flat(D: UserDataset) -> UserDataset:
    return D.with_fields(epsilons=A.nonpersonalized_epsilons(D))


register(
    ValidationSpec(
        algorithm="acharya2024.nonpersonalized",
        reference=lambda dataset, rng, size=None, *, Lambda: A.nonpersonalized_mechanism(
            dataset, rng, size, Lambda=Lambda
        ),
        statistic=lambda D, *, Lambda: A.statistic(_flat(D), Lambda),
        noise="l2laplace",
        cases=lambda: _cases_pdp(_stringent, True),
        generate=_generate_pdp("acharya2024.nonpersonalized", _stringent, True),
        designs=_designs_pdp(1),
        domain=_domain_baseline,
        suite_properties="",
        suite_reference="",
        release="a (d,) array: PDP-OP with every eps_i := min_j eps_j (uniform weights 1/n, eta at n min eps)",
        why="§4's non-personalized baseline: output perturbation at the most stringent level for every record",
        **{k: v for k, v in _PDP.items() if k not in ("stage_params", "takes_dataset")},
    )
)


# ------------------------------------------------------------------ the Jorgensen baselines
def _jorgensen_cases(threshold: str) -> list:
    """The audit dataset (d = 1 and 2) at lambda = 100 and at lambda = 1, and a 12-record d = 2 dataset with
    the three-group profile at lambda = 10: sampling probabilities from 0.01 to 1."""
    out = []
    g = np.random.default_rng(41)
    D3 = UserDataset(
        np.round(g.uniform(0, 1, (12, 2)), 3),
        np.arange(12),
        labels=np.round(g.uniform(-1, 1, 12), 3),
        epsilons=_three_groups(g, 12),
    )
    for D, lam, what in (
        (RA.audit_dataset(1), LAMBDA, "audit dataset, d = 1, lambda = 100"),
        (RA.audit_dataset(2), 1.0, "audit dataset, d = 2, lambda = 1"),
        (corner_dataset(1), 3.0, "audit dataset with record 7 at the corner, d = 1, lambda = 3"),
        (D3, 10.0, "12 records, d = 2, three-group profile, lambda = 10"),
    ):
        out.append(Case(D, {"Lambda": lam}, what))
    return out


def _jorgensen_generate(algorithm: str):
    """Two cases per seed: lambda below 1 with few records in d = 1, and above 1 in d = 2."""

    def generate(seed: int) -> list:
        out = []
        for k, (n, d, lam) in enumerate(((6, 1, 0.5), (10, 2, 20.0))):
            g = seeded(algorithm, seed, k)
            D = UserDataset(
                np.round(g.uniform(0.0, 1.0, (n, d)), 4),
                np.arange(n),
                labels=np.round(g.uniform(-1.0, 1.0, n), 4),
                epsilons=g.uniform(0.2, 2.0, n),
            )
            out.append(Case(D, {"Lambda": lam}, f"{n} records, d = {d}, lambda = {lam:g}", origin="generated"))
        return out

    return generate


def _jorgensen_designs(threshold: str):
    def designs() -> list:
        s = RA._jorgensen_setup(threshold, LAMBDA)
        return [
            AuditDesign(
                s.pairs,
                {"Lambda": LAMBDA},
                s.claim,
                "d = 1, lambda = 100: records 0, 7, 4 at x = 1, y = -1 vs +1 (claim min(eps_i, t))",
                output="vector",
            )
        ]

    return designs


def _jorgensen_claim(threshold: str):
    def claim(D, params):
        t = A.jorgensen_threshold(D, threshold)
        return PersonalizedDP(tuple(A.jorgensen_levels(D.epsilons, t)))

    return claim


for _t in ("max", "mean"):
    register(
        ValidationSpec(
            algorithm=f"acharya2024.jorgensen-{_t}",
            reference=(
                lambda t: (
                    lambda dataset, rng, size=None, *, Lambda: A.jorgensen_mechanism(
                        dataset, rng, size, Lambda=Lambda, threshold=t
                    )
                )
            )(_t),
            statistic=None,
            cases=(lambda t: lambda: _jorgensen_cases(t))(_t),
            generate=_jorgensen_generate(f"acharya2024.jorgensen-{_t}"),
            designs=_jorgensen_designs(_t),
            domain=_domain_baseline,
            claim=_jorgensen_claim(_t),
            suite="userdp.properties.acharya2024",
            suite_properties="",
            suite_reference="",
            parameters=(LAMBDA_P,),
            reads=READS,
            refusals=_refusals,
            project=project,
            max_samples=50_000,
            relation="replace-record; min(eps_i, t)-DP for record i (the amplified level), t = "
            + ("max eps" if _t == "max" else "mean eps"),
            release="a (d,) array: keep record i with probability min(1, (e^eps_i - 1) / (e^t - 1)), then the "
            f"non-personalized PDP-OP at level t = {_t} eps on the kept records (theta = 0, no noise, if none kept)",
            why=f"Jorgensen et al. 2015 sampling baseline with t = {_t} eps (a mixture: compared as a distribution)",
        )
    )
