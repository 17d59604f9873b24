"""Validation spec for Epasto et al. 2020 Algorithm 2, weighted ERM by noisy projected gradient
descent (``epasto2020.weighted-erm``): ``reference/epasto2020_erm.py``.

Noisy GD is nonlinear in its noise (projection, averaged iterates): compared as a distribution.
Its weights are Lemma 3's at Claim 1's h* for (epsilon, B = 1, sigma = 1/2), from the public
sizes only (the registry entry's choice). The data domain (features in the unit ball, logistic
labels) and its projection are those of the Amin specs (``audits/papers/amin2019/specs_erm.py``).
"""

from __future__ import annotations

import numpy as np

from userdp.reference import epasto2020 as W
from userdp.reference import epasto2020_erm as E
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import NeighbourPair

from userdp.audits.papers.epasto2020 import audits_erm as RE

from userdp.audits.validation import AuditDesign, Case, Param, Refusal, ValidationSpec, register
from userdp.audits.validation._data import seeded, sizes, user_ids
from userdp.audits.validation.pair_search import Domain
from userdp.audits.papers.amin2019.specs_erm import _amin_project, _features

__all__: list[str] = []  # registers its entries at import; nothing else is imported from it


def _epasto_reference(dataset, rng, size=None, *, epsilon, delta, T):
    c, _ = W.optimal_weights(dataset, epsilon, 1.0)
    return E.mechanism(dataset, rng, size, c=c, epsilon=epsilon, delta=delta, T=T)


def _flip_pair(D: UserDataset, u: int) -> NeighbourPair:
    idx = D.records_of(u)
    x = np.array(D.values)
    x[idx] = np.eye(D.values.shape[1])[0]
    a, b = np.array(D.labels), np.array(D.labels)
    a[idx], b[idx] = 1.0, -1.0
    return NeighbourPair(
        D.with_fields(values=x, labels=a),
        D.with_fields(values=x, labels=b),
        E.RELATION.name,
        u,
        f"user {u} (s = {idx.size}): x = e1, y all +1 vs all -1",
    )


def _epasto_cases() -> list:
    """The registry's dataset (Zipf sizes 6, 3, 2, 1, ...; x = e1; labels alternating) at T = 4 and eps 1
    and 4, and a d = 3 dataset of 10 users."""
    D = RE.epasto_default_dataset()
    g = np.random.default_rng(20)
    s = np.array([5, 4, 3, 2, 1, 1, 1, 1, 1, 1])
    D3 = UserDataset(_features(g, int(s.sum()), 3), user_ids(s), labels=np.where(g.random(s.sum()) < 0.5, 1.0, -1.0))
    return [
        Case(D, {"epsilon": 1.0, "delta": 1e-5, "T": 4}, "Zipf sizes, x = e1, eps = 1, T = 4"),
        Case(D, {"epsilon": 4.0, "delta": 1e-5, "T": 8}, "Zipf sizes, x = e1, eps = 4, T = 8"),
        Case(D3, {"epsilon": 2.0, "delta": 1e-6, "T": 4}, "10 users, d = 3, eps = 2, T = 4, delta = 1e-6"),
    ]


def _epasto_generate(seed: int) -> list:
    out = []
    for k, (m, shape, d, eps, T) in enumerate(((6, "balanced", 2, 1.0, 2), (60, "skewed", 2, 3.0, 6))):
        g = seeded("epasto2020.weighted-erm", seed, k)
        s = sizes(g, m, shape, top=10)
        n = int(s.sum())
        D = UserDataset(_features(g, n, d), user_ids(s), labels=np.where(g.random(n) < 0.7, 1.0, -1.0))
        out.append(
            Case(
                D,
                {"epsilon": eps, "delta": 1e-5, "T": T},
                f"{m} users, {shape} sizes, d = {d}, eps = {eps:g}, T = {T}",
                origin="generated",
            )
        )
    return out


def _epasto_designs() -> list:
    """The registry's pairs: the heaviest and the lightest user's labels +1 vs -1 at x = e1 (a label flip
    at theta ~ 0 moves the gradient by sum_{S_u} c_i, the largest early move)."""
    s = RE.build_epasto(**RE.EPASTO_PARAMS)
    return [
        AuditDesign(
            s.pairs,
            dict(RE.EPASTO_PARAMS),
            s.claim,
            "Zipf sizes, eps = 1, T = 4: heaviest and lightest user, labels +1 vs -1",
            output="vector",
        )
    ]


SEARCH_DIRECTIONS = ((1.0, 0.0), (0.0, 1.0), (0.7071, 0.7071), (0.7071, -0.7071), (0.3, 0.4))


def _epasto_domain(seed: int) -> Domain:
    """The pair search's space at eps = 1, T = 4 (replace-user, S_l public): the registry's dataset (sizes 6,
    3, 2, 1 x 5) with every feature at one of an axis, the other axis, the diagonal, the off-diagonal and an
    interior point of the unit ball; one user of each size with its labels flipped (all -1 vs all +1) or
    split record by record: 55 pairs. Trimmed to label moves because the logistic gradient
    -y x sigmoid(-y theta.x) reads a record only through y x: moving a user's features from v to -v is the
    same pair as flipping its labels at v, and a move between two other points of the ball moves y x
    less (a few milliseconds a call: the full replace-user space, 207 pairs, does not fit the search's
    budget on a loaded machine)."""
    D = RE.epasto_default_dataset()
    bases = tuple(D.with_fields(values=np.tile(v, (D.n, 1))) for v in SEARCH_DIRECTIONS)
    return Domain("replace-user-labels", dict(RE.EPASTO_PARAMS), bases, (-1.0, 1.0), labels=(-1.0, 1.0))


def _epasto_refusals() -> list:
    D = RE.epasto_default_dataset()
    p = dict(RE.EPASTO_PARAMS)
    y = np.array(D.labels)
    y[0] = 0.3
    return [
        Refusal(Case(D, {**p, "epsilon": 0.0}, "epsilon = 0"), "budget", "epsilon > 0"),
        Refusal(Case(D, {**p, "delta": 0.0}, "delta = 0 (Gaussian noise needs delta > 0)"), "budget", "delta > 0"),
        Refusal(Case(D, {**p, "T": 0}, "T = 0 steps"), "parameter", "T an integer >= 1"),
        Refusal(
            Case(D.with_fields(labels=y), p, "a label 0.3 (logistic labels are -1 or +1)"),
            "data",
            "every label in {-1, +1}",
        ),
    ]


register(
    ValidationSpec(
        algorithm="epasto2020.weighted-erm",
        reference=_epasto_reference,
        statistic=None,
        claim=lambda D, p: E.gdp_claim(p["epsilon"], p["delta"], p["T"]),
        cases=_epasto_cases,
        generate=_epasto_generate,
        designs=_epasto_designs,
        refusals=_epasto_refusals,
        domain=_epasto_domain,
        project=_amin_project("logistic"),
        suite="userdp.properties.epasto2020_erm",
        suite_properties="",
        suite_reference="",
        max_samples=100_000,
        parameters=(
            Param(
                "epsilon",
                "the privacy level of the (epsilon, delta)-DP claim (Theorem 4); > 0; it also sets "
                "the weights (Lemma 3 at Claim 1's h* for B = 1, sigma = 1/2)",
            ),
            Param("delta", "the delta of the claim, in (0, 1)"),
            Param(
                "T",
                "the number of noisy gradient steps (an integer >= 1); the release averages the T projected iterates",
            ),
        ),
        reads={
            "values": "(n, d) the features, ||x_i||_2 <= 1",
            "labels": "(n,) y_i in {-1, +1} (logistic loss)",
            "user_ids": "(n,) the user owning each record; S_l public (the weights read only the sizes)",
        },
        relation="replace-user (features and labels of one user change, S_l public); (epsilon, delta)-DP, with the "
        "exact mu-GDP of the same noise",
        release="a (d,) array: the average of theta_2..theta_{T+1} of projected noisy GD (ball of radius 1, "
        "theta_1 = 0, "
        "step radius / (G sqrt(T))) on sum_i c_i logistic(theta; x_i, y_i), Gaussian noise sigma = z Delta_2 per "
        "step from RDP accounting",
        why="Epasto et al. 2020 Algorithm 2 (weighted ERM) by noisy projected gradient descent; compared as a "
        "distribution",
    )
)
