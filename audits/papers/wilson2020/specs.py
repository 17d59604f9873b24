"""Validation specs for Wilson et al. 2020: per-partition contribution bounding over PUBLIC partitions.

One spec per (statistic, noise, per-partition bounding), each named for its release:

    wilson2020.count           wilson2020.count-gaussian
    wilson2020.sum             wilson2020.sum-gaussian           (each record clamped, <= Linf per partition)
    wilson2020.sum-per-user    wilson2020.sum-per-user-gaussian  (each user's partition sum clamped)
    wilson2020.mean            wilson2020.mean-gaussian          (normalised sum / count, eps/2 each)

The release is a vector in the order of the case's ``public_partitions`` (the map partition -> noisy
value; a partition of the list that no record has is released too, from noise alone). The relation is
add/remove one user with all its records, in as many partitions as it has: every case's ``pair`` adds
a user of Linf records at the top of the range in L0 public partitions, which moves the statistic by
exactly the sensitivity (L1 for Laplace, L2 for Gaussian; no sampling for that user), so a target that
calibrates to less (a bound without absolute values, a missing sqrt(L0) or L0) is under-noised there.

``statistic`` is the exact mean of the releases, E[statistic(bound(D))] (``expected_statistic``: the
sampling averaged in closed form) for COUNT and SUM; MEAN is a ratio of noisy values and is compared
as a distribution. The fixed parameters ``metric``, ``noise`` and ``bounding`` are passed in every case
(one value per spec) so that a target with one entry point for all of them can be validated as it is.
The property suite of properties/wilson2020.py draws every metric and bounding itself, so it is not
run on a target of one spec (``suite_properties=""``); the stages (``sensitivity``,
``noise_scale``; ``statistic`` in the test vectors) are compared with the reference's on every case.
"""

from __future__ import annotations

import numpy as np

from userdp.reference import wilson2020 as W
from userdp.reference.data import UserDataset

from userdp.audits.papers.wilson2020 import audits as RA

from userdp.audits.validation import AuditDesign, Case, Param, Refusal, ValidationSpec, register
from userdp.audits.validation._data import seeded
from userdp.audits.validation.pair_search import Domain

__all__ = ["SPECS", "STAGES", "SPEC_STAGES", "params_of", "wide_dataset"]

READS = {
    "values": "(n,) each record's value (the unit of lower and upper); not read by COUNT",
    "user_ids": "(n,) the user owning each record (the privacy unit: add/remove user, all partitions at once)",
    "partition_ids": "(n,) each record's partition key (GROUP BY key); records outside public_partitions are dropped",
}
SPECS = {  # algorithm -> (metric, noise, bounding)
    "wilson2020.count": ("count", "laplace", "records"),
    "wilson2020.count-gaussian": ("count", "gaussian", "records"),
    "wilson2020.sum": ("sum", "laplace", "records"),
    "wilson2020.sum-gaussian": ("sum", "gaussian", "records"),
    "wilson2020.sum-per-user": ("sum", "laplace", "sum"),
    "wilson2020.sum-per-user-gaussian": ("sum", "gaussian", "sum"),
    "wilson2020.mean": ("mean", "laplace", "records"),
    "wilson2020.mean-gaussian": ("mean", "gaussian", "records"),
}


def params_of(algorithm: str, L0: int, Linf: int, epsilon: float, public=RA.PUBLIC, bounds=None) -> dict:
    """A case's parameters: the spec's fixed metric, noise and bounding, and the given ones."""
    metric, noise, bounding = SPECS[algorithm]
    lower, upper = RA.BOUNDS[metric] if bounds is None else bounds
    return {
        "public_partitions": list(public),
        "metric": metric,
        "L0": L0,
        "Linf": None if bounding == "sum" else Linf,
        "lower": lower,
        "upper": upper,
        "epsilon": epsilon,
        "delta": RA.DELTA if noise == "gaussian" else 0.0,
        "noise": noise,
        "bounding": bounding,
    }


def _top(p) -> float:
    if p["metric"] == "count":
        return 1.0
    return p["upper"] if abs(p["upper"]) >= abs(p["lower"]) else p["lower"]


def _case(D, p, what, origin="fixed") -> Case:
    """A case whose pair adds a user of Linf records at the top of the range in L0 public partitions."""
    pair = None
    if p["metric"] != "mean" and len(p["public_partitions"]) >= p["L0"]:
        pair = RA.add_spread_user(D, p["public_partitions"][: p["L0"]], p["Linf"] or 1, _top(p))
    return Case(D, p, what, pair=pair, origin=origin)


def wide_dataset() -> UserDataset:
    """Six users over partitions 0..4 (4 never public below); users 0 and 1 in four partitions with
    three records each, the others in one or two: L0 = 1 and Linf = 1 drop most of users 0 and 1."""
    u, p, v = [], [], []
    for user, parts, recs in ((0, (0, 1, 2, 4), 3), (1, (1, 2, 3, 4), 3), (2, (0,), 1), (3, (2, 3), 2), (4, (3,), 1)):
        for q in parts:
            for r in range(recs):
                u.append(user), p.append(q), v.append(round(-4.0 + 1.7 * r + 0.9 * q, 2))
    u.append(5), p.append(1), v.append(0.5)
    return UserDataset.from_arrays(v, u, partition_ids=p)


def _cases(algorithm: str):
    def cases() -> list:
        D = RA.base_dataset()
        return [
            _case(D, params_of(algorithm, 2, 2, 1.0), "three users over [0, 1, 2], L0 = Linf = 2, eps = 1"),
            _case(D, params_of(algorithm, 2, 2, 8.0), "the same at eps = 8 (noise small next to the statistic)"),
            _case(
                wide_dataset(),
                params_of(
                    algorithm,
                    1,
                    1,
                    4.0,
                    public=[0, 1, 2, 3],
                    bounds=(-5.0, 1.0) if SPECS[algorithm][0] == "sum" else None,
                ),
                "six users, two in four partitions with three records each (one partition never public), "
                "L0 = Linf = 1, eps = 4, SUM bounds [-5, 1] (PR 384's mixed signs)",
            ),
        ]

    return cases


def _generate(algorithm: str):
    def generate(seed: int) -> list:
        g = seeded(algorithm, seed, 0)
        m = 30
        per = g.integers(1, 9, m)  # records per user
        u = np.repeat(np.arange(m), per)
        D = UserDataset.from_arrays(
            np.round(g.uniform(-2.0, 3.0, u.size), 3), u, partition_ids=g.integers(0, 6, u.size)
        )
        g2 = seeded(algorithm, seed, 1)
        D2 = UserDataset.from_arrays(
            np.round(g2.uniform(0.0, 1.0, 50), 3), np.arange(50), partition_ids=g2.integers(0, 3, 50)
        )
        what1 = "30 users of 1-8 records over 6 partitions (5 public), values in [-2, 3], L0 = 2, Linf = 3, eps = 2"
        what2 = "50 users of one record in [0, 1] over partitions 0..2; public [0, 1, 2, 9] (9 empty), L0 = Linf = 1"
        return [
            _case(D, params_of(algorithm, 2, 3, 2.0, public=[0, 1, 2, 3, 4]), what1, "generated"),
            _case(D2, params_of(algorithm, 1, 1, 1.0, public=[0, 1, 2, 9]), what2 + ", eps = 1", "generated"),
        ]

    return generate


def _designs(algorithm: str):
    def designs() -> list:
        metric, noise, bounding = SPECS[algorithm]
        s = RA.build(metric, noise, bounding)
        p = params_of(algorithm, RA.L0, RA.LINF, RA.EPS)
        what = "mu-GDP (mu = L2 / sigma)" if noise == "gaussian" else "eps-DP"
        return [
            AuditDesign(
                s.pairs, p, s.claim, f"L0 = Linf = 2, eps = 1, {what}: a user added in 2 or 3 partitions", "vector"
            )
        ]

    return designs


SEARCH_PUBLIC = [0, 1, 2, 3, 4]  # the base's partitions 0..2 and two it leaves empty
SEARCH_KEYS = (0, 1, 2, 3, 4, 5)  # where the added user may hold records: 5 is not public (dropped)
# the values an added user's records take: the clamp's ends, interior points, and beyond the clamp (the
# algorithm clamps, so any finite value is in its domain; a target that forgets a side shows there)
SEARCH_POINTS = {
    "count": (0.5,),  # COUNT reads no value
    "sum": (-7.0, -1.0, -0.4, 0.5, 1.3, 2.0, 3.5, 8.0),  # bounds [-1, 2]
    "mean": (-2.0, 0.0, 0.125, 0.37, 0.75, 1.0, 1.5, 3.0),  # bounds [0, 1]
}


def _domain(algorithm: str):
    """The pair search's space (docs/validate.md, "The pair search"): the three-user base, public partitions
    0..4, L0 = 3, Linf = 2, eps = 2; a user added in 1, 3 (L0), 4 or 6 (all) partitions, existing and new
    (and one not public), with 1, 2 (Linf) or 5 records in each, at the clamp's ends, inside, and beyond it;
    or any user removed. The bounding's sampling draws depend on the data, so coupled replay does not align
    the noise: the candidates are scored at eps = 32 (the move of the statistic does not depend on eps; the
    noise of 8 rows a side is then small next to it), and the chosen pair is audited at eps = 2."""
    metric = SPECS[algorithm][0]

    def domain(seed: int) -> Domain:
        p = params_of(algorithm, 3, 2, 2.0, public=SEARCH_PUBLIC)
        pts = SEARCH_POINTS[metric]
        return Domain(
            "add-remove-user",
            p,
            (RA.base_dataset(),),
            (min(pts), max(pts)) if metric != "count" else (0.0, 1.0),
            records=(1, 2, 5),
            partitions=SEARCH_KEYS,
            spread=(1, 3, 4, 6),
            points=pts,
            replay=8,
            score={**p, "epsilon": 32.0},
            stage=False,  # the releases' mean is E[statistic(bound(D))], not a target's statistic stage (SPEC_STAGES)
        )

    return domain


def _refusals(algorithm: str):
    def refusals() -> list:
        D = RA.base_dataset()
        p = params_of(algorithm, 2, 2, 1.0)
        out = [
            Refusal(Case(D, {**p, "epsilon": 0.0}, "epsilon = 0"), "budget", "epsilon > 0"),
            Refusal(Case(D, {**p, "L0": 0}, "L0 = 0 (no partition per user)"), "parameter", "L0 >= 1"),
        ]
        if p["noise"] == "gaussian":
            out.append(
                Refusal(Case(D, {**p, "delta": 0.0}, "delta = 0 with Gaussian noise"), "budget", "delta in (0, 1)")
            )
        if p["metric"] != "count":
            out.append(
                Refusal(
                    Case(D, {**p, "lower": 3.0, "upper": 2.0}, "lower = 3 > upper = 2"), "parameter", "lower <= upper"
                )
            )
        return out

    return refusals


def _parameters(metric: str, bounding: str) -> tuple:
    out = [
        Param("public_partitions", "the public list of partition ids (distinct ints >= 0): the release's order"),
        Param("metric", f"fixed: {metric!r}"),
        Param("L0", "max partitions one user contributes to (int >= 1); a user above keeps a uniform subset"),
        Param(
            "Linf",
            "None: no row sampling (each user's partition sum is clamped)"
            if bounding == "sum"
            else "max records one user contributes to one partition (int >= 1), a uniform subset kept",
        ),
        Param("lower", "None (COUNT reads no value)" if metric == "count" else "the clamp's lower bound, value units"),
        Param("upper", "None (COUNT reads no value)" if metric == "count" else "the clamp's upper bound, value units"),
        Param("epsilon", "the privacy level of the whole release (> 0); MEAN spends eps/2 on each part"),
        Param("delta", "0 with Laplace; in (0, 1) with Gaussian (MEAN: delta/2 each part)"),
        Param("noise", "fixed: 'laplace' (b = L1/eps) or 'gaussian' (the analytic sigma for L2)"),
        Param("bounding", f"fixed: {bounding!r}"),
    ]
    return tuple(out)


STAGES = {  # the noise-free stages of the test vectors (audits/papers/wilson2020/vectors.py)
    "statistic": ("public_partitions", "metric", "lower", "upper", "bounding"),
    "sensitivity": ("metric", "L0", "Linf", "lower", "upper", "bounding"),
    "noise_scale": ("metric", "L0", "Linf", "epsilon", "lower", "upper", "delta", "noise", "bounding"),
}
# validate compares these stages on its cases. Not ``statistic``: the releases' mean is the statistic of
# the BOUNDED data averaged over the sampling (``expected_statistic``), not the statistic of the data as
# given, so "stages agree" (releases' mean against the target's own statistic stage) does not apply.
SPEC_STAGES = {k: v for k, v in STAGES.items() if k != "statistic"}


def _statistic(D, *, public_partitions, metric, L0, Linf, lower, upper, epsilon, delta, noise, bounding):
    return W.expected_statistic(D, public_partitions, metric, L0, Linf, lower, upper, bounding)


def _reference(dataset, rng, size=None, **p):
    return W.mechanism(dataset, rng=rng, size=size, **p)


_RELEASE = {
    "count": "records per public partition (at most Linf per user per partition, L0 partitions per user)",
    "sum": "the sum of clamped records per public partition (at most Linf per user per partition, L0 partitions)",
    "mean": "mid + (noisy normalised sum) / max(1, noisy count) per public partition, not clamped",
}

for _name, (_metric, _noise, _bounding) in SPECS.items():
    _what = _RELEASE["sum" if _metric == "sum" else _metric]
    if _bounding == "sum":
        _what = "the sum per public partition of each user's partition sum clamped to [lower, upper] (L0 partitions)"
    register(
        ValidationSpec(
            algorithm=_name,
            reference=_reference,
            statistic=None if _metric == "mean" else _statistic,
            noise=None if _metric == "mean" else _noise,
            claim=lambda D, params: W.claim(params["epsilon"], params["delta"], params["noise"]),
            cases=_cases(_name),
            generate=_generate(_name),
            designs=_designs(_name),
            domain=_domain(_name),
            refusals=_refusals(_name),
            suite="userdp.properties.wilson2020",
            suite_properties="",
            parameters=_parameters(_metric, _bounding),
            reads=READS,
            release=f"a (k,) array over public_partitions: {_what}, plus "
            + ("Laplace noise of SCALE L1 / epsilon" if _noise == "laplace" else "Gaussian noise of the analytic sigma")
            + " on each coordinate",
            relation="add/remove user (all records of one user, in every partition, appear or vanish); "
            + ("pure epsilon-DP" if _noise == "laplace" else "(epsilon, delta)-DP"),
            stage_params=SPEC_STAGES,
            takes_dataset=(),
            why=f"Wilson et al. 2020: {_metric.upper()} over public partitions with L0 / Linf contribution bounding",
        )
    )
