"""Validation specs for Amin et al. 2019 Algorithm 1 with output perturbation
(``amin2019.erm-output-perturbation``, logistic; ``...-ridge``): ``reference/amin2019_erm.py``.

Output perturbation releases theta-hat + b, density(b) prop. to exp(-eps ||b||_2 / Delta_2)
(``reference/amin2019_erm.py``): the mean of a release is the certified minimiser theta-hat, so
the mean test compares with it directly. The case pairs add a user of tau records at x = e1 with
the label opposite to the others (the registry's shape); their move is ``pair_share`` of Delta_2
(0.99 for ridge at lambda = 10^4; below 0.53 for logistic by the bound sigma(R^2 / Lambda) of
``audits/papers/amin2019/whitebox.py``, so an under-noised logistic target is graded a privacy finding only
where its noise is below that share).

Generated cases: lambda below and above 1, d = 2 and 3, few and many users, skewed sizes,
tau from 1 to 3, n_min above and below the kept-record count.
"""

from __future__ import annotations

import numpy as np

from userdp.reference import amin2019_erm as A
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import NeighbourPair

from userdp.audits.papers.amin2019 import audits_erm as RE

from userdp.audits.validation import AuditDesign, Case, Param, Refusal, ValidationSpec, register
from userdp.audits.validation._data import seeded, sizes, user_ids
from userdp.audits.validation.pair_search import Domain

__all__: list[str] = []  # registers its entries at import; nothing else is imported from it

AMIN_PARAMS = (
    Param("epsilon", "the privacy level: pure epsilon-DP under add/remove-user; > 0"),
    Param(
        "tau",
        "the public per-user contribution bound: the FIRST tau records of each user (record "
        "order) are kept; an integer >= 1",
    ),
    Param("Lambda", "the L2 regularisation of J(theta) = sum_i w_i l_i + (Lambda / 2) ||theta||^2 (note the 1/2); > 0"),
    Param(
        "n_min",
        "the public floor of the normaliser: w_i = 1 / max(n_tau, n_min) on kept records "
        "(n_tau = the number of kept records); an integer >= 1",
    ),
)


def _reads(loss: str) -> dict:
    lab = "(n,) y_i in {-1, +1}" if loss == "logistic" else "(n,) y_i in [-1, 1]"
    return {
        "values": "(n, d) the features x_i, ||x_i||_2 <= 1",
        "labels": lab,
        "user_ids": "(n,) the user owning each record (add/remove user)",
    }


def _amin_params(**kw) -> dict:
    return {"epsilon": 1.0, "tau": 2, "Lambda": 10.0, "n_min": 4, **kw}


def _share(loss: str, pair: NeighbourPair, p) -> float:
    q = {k: p[k] for k in ("tau", "Lambda", "n_min")}
    move = np.linalg.norm(A.statistic(pair.first, loss=loss, **q) - A.statistic(pair.second, loss=loss, **q))
    return float(min(1.0, move / A.sensitivity(loss=loss, **q)))


def _add_pair(D: UserDataset, tau: int, label: float) -> NeighbourPair:
    d = D.values.shape[1]
    x = np.zeros((tau, d))
    x[:, 0] = 1.0
    u = int(D.users.max()) + 1
    D2 = A.RELATION.neighbour(D, u, x, labels=np.full(tau, label))
    return NeighbourPair(D, D2, A.RELATION.name, u, f"add user {u}: {tau} records at x = e1, y = {label:+g}")


def _amin_case(loss, D, p, what, origin="fixed") -> Case:
    label = -float(np.sign(np.mean(D.labels)) or 1.0)
    pair = _add_pair(D, p["tau"], label)
    return Case(D, p, what, pair=pair, pair_share=_share(loss, pair, p), origin=origin)


def _amin_cases(loss: str):
    def cases() -> list:
        if loss == "ridge":
            D = RE.ridge_default_dataset(4)
            return [
                _amin_case(loss, D, _amin_params(Lambda=1e4), "4 users at x = 1, y = -1, lambda = 10^4"),
                _amin_case(
                    loss, D, _amin_params(Lambda=0.5, epsilon=4.0), "4 users at x = 1, y = -1, lambda = 0.5, eps = 4"
                ),
            ]
        D = RE.amin_default_dataset(2, 4)
        return [
            _amin_case(loss, D, _amin_params(), "heavy user of 4 records, 4 light users, d = 2, lambda = 10"),
            _amin_case(
                loss,
                D,
                _amin_params(Lambda=0.5, epsilon=4.0, n_min=2),
                "heavy user of 4 records, 4 light users, d = 2, lambda = 0.5, n_min = 2, eps = 4",
            ),
        ]

    return cases


def _features(g, n: int, d: int) -> np.ndarray:
    X = g.normal(size=(n, d))
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None] * g.uniform(0.3, 1.0, (n, 1))


def _amin_generate(loss: str, algorithm: str):
    """Three cases per seed: lambda 0.3 (below 1) with few balanced users in d = 2; lambda 30 with many
    skewed users in d = 3 and tau = 3; lambda 2 with single-record users and n_min above their count."""

    def generate(seed: int) -> list:
        out = []
        for k, (m, shape, d, lam, tau, n_min, eps) in enumerate(
            ((5, "balanced", 2, 0.3, 2, 4, 2.0), (80, "skewed", 3, 30.0, 3, 20, 1.0), (6, "single", 2, 2.0, 1, 10, 4.0))
        ):
            g = seeded(algorithm, seed, k)
            s = sizes(g, m, shape, top=12)
            n = int(s.sum())
            y = np.where(g.random(n) < 0.6, 1.0, -1.0) if loss == "logistic" else np.round(g.uniform(-1, 1, n), 3)
            D = UserDataset(_features(g, n, d), user_ids(s), labels=y)
            p = _amin_params(epsilon=eps, tau=tau, Lambda=lam, n_min=n_min)
            out.append(
                _amin_case(
                    loss,
                    D,
                    p,
                    f"{m} users, {shape} sizes, d = {d}, lambda = {lam:g}, tau = {tau}, n_min = {n_min}, eps = {eps:g}",
                    "generated",
                )
            )
        return out

    return generate


def _amin_designs(loss: str):
    """The registry's pairs: ridge (d = 1, lambda = 10^4) adds a user of tau + 2 or tau records at x = 1,
    y = +1 to 4 users at y = -1 (0.99 of Delta_2); logistic (d = 2, lambda = 10) removes the heavy user
    or adds one (0.49 of Delta_2, the best known)."""

    def designs() -> list:
        if loss == "ridge":
            s, p = RE.build_amin_ridge(**RE.RIDGE_PARAMS), RE.RIDGE_PARAMS
        else:
            s, p = RE.build_amin(**RE.AMIN_PARAMS), RE.AMIN_PARAMS
        return [
            AuditDesign(
                s.pairs, dict(p), s.claim, f"the registry's {loss} pairs (lambda = {p['Lambda']:g})", output="vector"
            )
        ]

    return designs


def _amin_domain(loss: str):
    """The pair search's space at the design's parameters: a user of 1, tau, 2 tau or 4 tau records
    (all at one feature vector in the unit ball: every axis, diagonal and off-diagonal direction,
    and interior points; labels at both ends and, for ridge, 0) added to the design's datasets and
    to a d = 2 copy of the first (features (x, 0)), or any of their users removed."""

    def domain(seed: int) -> Domain:
        if loss == "ridge":
            s, p = RE.build_amin_ridge(**RE.RIDGE_PARAMS), RE.RIDGE_PARAMS
        else:
            s, p = RE.build_amin(**RE.AMIN_PARAMS), RE.AMIN_PARAMS
        bases: list = []
        for pr in s.pairs:
            if all(pr.first is not D for D in bases):
                bases.append(pr.first)
        X = np.asarray(bases[0].values, float).reshape(bases[0].n, -1)
        if X.shape[1] == 1:
            bases.append(bases[0].with_fields(values=np.hstack([X, np.zeros_like(X)])))
        tau = int(p["tau"])
        labels = (-1.0, 1.0) if loss == "logistic" else (-1.0, 0.0, 1.0)
        return Domain(
            "add-remove-user",
            dict(p),
            tuple(bases),
            (-1.0, 1.0),
            norm=1.0,
            labels=labels,
            records=(1, tau, 2 * tau, 4 * tau),
        )

    return domain


def _amin_refusals(loss: str):
    def refusals() -> list:
        D = RE.ridge_default_dataset(4) if loss == "ridge" else RE.amin_default_dataset(2, 4)
        x = np.array(D.values)
        x[0] = x[0] * 3.0
        y = np.array(D.labels)
        y[0] = 0.5 if loss == "logistic" else 3.0
        p = _amin_params(Lambda=1e4) if loss == "ridge" else _amin_params()
        return [
            Refusal(Case(D, {**p, "epsilon": 0.0}, "epsilon = 0"), "budget", "epsilon > 0"),
            Refusal(
                Case(D, {**p, "Lambda": 0.0}, "lambda = 0 (no strong convexity: no sensitivity bound)"),
                "parameter",
                "Lambda > 0",
            ),
            Refusal(
                Case(D.with_fields(values=x), p, "a feature of norm 3 (||x|| <= 1)"), "data", "every ||x_i||_2 <= 1"
            ),
            Refusal(
                Case(
                    D.with_fields(labels=y),
                    p,
                    "a label " + ("0.5 (logistic labels are -1 or +1)" if loss == "logistic" else "3 outside [-1, 1]"),
                ),
                "data",
                "every label " + ("in {-1, +1}" if loss == "logistic" else "in [-1, 1]"),
            ),
        ]

    return refusals


def _amin_project(loss: str):
    def project(dataset: UserDataset, params) -> UserDataset:
        """features scaled into the unit ball; labels clipped to [-1, 1] (ridge) or to their sign (logistic)"""
        X = dataset.values if dataset.values.ndim == 2 else dataset.values[:, None]
        Xc = X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
        y = np.clip(dataset.labels, -1.0, 1.0) if loss == "ridge" else np.where(dataset.labels >= 0, 1.0, -1.0)
        return dataset.with_fields(values=Xc.reshape(dataset.values.shape), labels=y)

    return project


for _loss, _name in (
    ("logistic", "amin2019.erm-output-perturbation"),
    ("ridge", "amin2019.erm-output-perturbation-ridge"),
):
    register(
        ValidationSpec(
            algorithm=_name,
            reference=(
                lambda loss: (
                    lambda dataset, rng, size=None, *, epsilon, tau, Lambda, n_min: A.mechanism(
                        dataset, rng, size, epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min, loss=loss
                    )
                )
            )(_loss),
            statistic=(
                lambda loss: (
                    lambda D, *, epsilon, tau, Lambda, n_min: A.statistic(
                        D, tau=tau, Lambda=Lambda, n_min=n_min, loss=loss
                    )
                )
            )(_loss),
            noise="l2laplace",
            claim=lambda D, p: A.claim(p["epsilon"]),
            cases=_amin_cases(_loss),
            generate=_amin_generate(_loss, _name),
            designs=_amin_designs(_loss),
            refusals=_amin_refusals(_loss),
            domain=_amin_domain(_loss),
            project=_amin_project(_loss),
            suite="userdp.properties.amin2019_erm",
            suite_properties="",
            suite_reference="",
            parameters=AMIN_PARAMS,
            reads=_reads(_loss),
            relation="add/remove user (all records of one user); pure epsilon-DP",
            release="a (d,) array: theta-hat, the minimiser of J over the first tau records of each user, plus b of "
            "density prop. to exp(-epsilon ||b||_2 / Delta_2), Delta_2 = (L / Lambda) max(2 tau / (n_min + tau), "
            "tau / n_min), L = 1 (logistic) or Y(R Y / sqrt(Lambda) + Y) (ridge), R = Y = 1",
            why=f"Amin et al. 2019 Algorithm 1 + CMS11 output perturbation, {_loss} loss",
        )
    )
