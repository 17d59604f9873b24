"""Validation specs for Epasto et al. 2020 §5: ``epasto2020.gwa`` (Algorithm 3, GWA_C for a given C)
and ``epasto2020.sample-limited-ols`` (§5.2 at a given h).

GWA_C releases C y + Lap(b)^d, b = B max_l sum_j sum_{i in S_l} |c_ji| / eps. C is the
algorithm's input (any C with C X = I; Theorem 6's optimum is one choice), so the call shape is
``f(dataset, rng, size, *, C, B, epsilon)``. The pair of a case is the argmax user's labels
0 vs B aligned with the signs of its block of C (``G.worst_case_pairs``); its move is
``pair_share`` of Delta_1 (1 on orthogonal designs, where every record enters one row).

Sample-limited OLS releases GWA_{C^s} with C^s the OLS estimator on min(h, s_l) records of each
user chosen without reading the labels (any value-independent rule: the implementation's). Its
cases give every user identical records (x and y), where every rule gives the same C^s y and the
same b; its independence check runs on records that differ, where a choice shared by the releases
of one call shows.
"""

from __future__ import annotations

import numpy as np

from userdp.reference import epasto2020_gwa as G
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import NeighbourPair

from userdp.audits.papers.epasto2020 import audits_gwa as RG

from userdp.audits.validation import AuditDesign, Case, Param, Refusal, ValidationSpec, register
from userdp.audits.validation._data import seeded, sizes, user_ids
from userdp.audits.validation.pair_search import Domain

__all__: list[str] = []  # registers its entries at import; nothing else is imported from it

READS = {
    "values": "(n, d) the features x_i (public; the relation changes labels only)",
    "labels": "(n,) the labels y_i in [0, B] (private)",
    "user_ids": "(n,) the user owning each record; the sets S_l are public",
}
RELATION = "replace-user-labels (§5: one user's labels change; X and S_l public); pure epsilon-DP"
B_P = Param("B", "the public bound on the labels: every y_i in [0, B]; > 0")
EPS_P = Param("epsilon", "the privacy level: pure epsilon-DP under replace-user-labels; > 0")


def diagonal_dataset() -> UserDataset:
    """A non-orthogonal design for C = X^+: user 0 holds four records x = (1, 1), users 1-3 one (1, 0)
    each, users 4-6 one (0, 1) each, user 7 two (1, -1). Labels on a 1/10 grid in [0, 1]."""
    X = np.array([[1.0, 1.0]] * 4 + [[1.0, 0.0]] * 3 + [[0.0, 1.0]] * 3 + [[1.0, -1.0]] * 2)
    ids = np.array([0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 7])
    return UserDataset(X, ids, labels=_grid_labels(ids.size))


def search_dataset() -> UserDataset:
    """The pair search's base: ``diagonal_dataset`` with user 8 of three records (1, 1), (1, -1), (0, 1)
    added, so that the users hold 1, 2, 3 and 4 records (every split of each user's labels between 0 and
    B is then tried) and their records enter both rows of C = X^+ with both signs."""
    D = diagonal_dataset()
    X = np.vstack([D.values, [[1.0, 1.0], [1.0, -1.0], [0.0, 1.0]]])
    ids = np.r_[D.user_ids, [8, 8, 8]]
    return UserDataset(X, ids, labels=_grid_labels(ids.size))


SEARCH_LABELS = (0.0, 0.25, 0.5, 1.0)  # both ends, the centre and an interior point of [0, B], B = 1


def _domain(seed: int) -> Domain:
    """The pair search's space (replace-user-labels, X and S_l public) on ``search_dataset`` with C = X^+,
    eps = 1: one user of each size (1 to 4 records) with all its labels moved between two of 0, B/4, B/2,
    B, or split record by record between 0 and B (every split: the worst case of the L1 move, a convex
    function of the labels, is one of them): 35 pairs."""
    D = search_dataset()
    return Domain(
        "replace-user-labels",
        {"C": G.ols_C(G.features(D)), "B": 1.0, "epsilon": 1.0},
        (D,),
        (0.0, 1.0),
        labels=SEARCH_LABELS,
    )


def _sl_domain(seed: int) -> Domain:
    """As ``_domain``, for sample-limited OLS at h = 2 (users of 1, h, 3 and 2h records)."""
    return Domain(
        "replace-user-labels", {"h": 2, "B": 1.0, "epsilon": 1.0}, (search_dataset(),), (0.0, 1.0), labels=SEARCH_LABELS
    )


def _grid_labels(n: int) -> np.ndarray:
    return ((7 * np.arange(n)) % 11) / 10.0


def _share_pair(D: UserDataset, C, B: float) -> tuple[NeighbourPair, float]:
    pair = G.worst_case_pairs(D, C, B)[0]
    move = float(np.abs(G.statistic(pair.first, C, B) - G.statistic(pair.second, C, B)).sum())
    return pair, min(1.0, move / G.sensitivity(D, C, B))


def _gwa_case(D, C, B, eps, what, origin="fixed") -> Case:
    pair, share = _share_pair(D, C, B)
    return Case(pair.first, {"C": C, "B": B, "epsilon": eps}, what, pair=pair, pair_share=share, origin=origin)


def _validation_C() -> tuple:
    D = RG.orthogonal_dataset()
    D = D.with_fields(labels=_grid_labels(D.n))
    Dd = diagonal_dataset()
    return D, G.optimal_C(D, **RG.DEFAULTS).C, Dd, G.ols_C(G.features(Dd))


def _cases() -> list:
    """GWA_C with Theorem 6's C on the orthogonal design (W_max = 0.316) at eps = 1 and eps = 20 (noise
    0.016: a wrong C moves the mean by many standard errors), and the diagonal design with C = X^+."""
    D, C, Dd, Cd = _validation_C()
    return [
        _gwa_case(D, C, 1.0, 1.0, "orthogonal design, Theorem 6's C (sigma = 4), eps = 1"),
        _gwa_case(D, C, 1.0, 20.0, "orthogonal design, Theorem 6's C (sigma = 4), eps = 20"),
        _gwa_case(Dd, Cd, 1.0, 1.0, "diagonal design (records (1,1), (1,0), (0,1), (1,-1)), C = X^+, eps = 1"),
    ]


def _features(g, n: int, d: int) -> np.ndarray:
    X = g.integers(-2, 3, (n, d)).astype(float)
    X[:d] += 3 * np.eye(d)  # full column rank
    return X


def _generate(seed: int) -> list:
    """Three cases per seed: d = 2 with a weighted-least-squares C (C = (X^T W X)^-1 X^T W, C X = I) on
    few balanced users; d = 3 with C = X^+ on many skewed users and B = 2; d = 2, single-record users,
    C = X^+, eps = 10."""
    out = []
    for k, (m, shape, d, B, eps, which) in enumerate(
        ((5, "balanced", 2, 1.0, 1.0, "wls"), (60, "skewed", 3, 2.0, 2.0, "ols"), (12, "single", 2, 1.0, 10.0, "ols"))
    ):
        g = seeded("epasto2020.gwa", seed, k)
        s = sizes(g, m, shape, top=15)
        n = int(s.sum())
        X = _features(g, n, d)
        D = UserDataset(X, user_ids(s), labels=np.round(g.uniform(0.0, B, n), 3))
        if which == "ols":
            C = G.ols_C(X)
        else:
            w = g.uniform(0.2, 2.0, n)
            C = np.linalg.solve(X.T @ (w[:, None] * X), X.T * w)
        out.append(
            _gwa_case(
                D,
                C,
                B,
                eps,
                f"{m} users, {shape} sizes, d = {d}, C = {which.upper()} estimator, B = {B:g}, eps = {eps:g}",
                "generated",
            )
        )
    return out


def _designs() -> list:
    """The orthogonal design with Theorem 6's C (a per-record bound costs 2.78 eps: user 0 holds 4
    records) and the diagonal design with X^+ (every record of user 0 enters BOTH rows: a bound from
    one row is half of Algorithm 3's, true loss 2 eps)."""
    D, C, Dd, Cd = _validation_C()
    return [
        AuditDesign(
            G.worst_case_pairs(D, C, 1.0),
            {"C": C, "B": 1.0, "epsilon": 1.0},
            G.claim(1.0),
            "orthogonal design, Theorem 6's C: user 0's labels 0 vs B",
            output="vector",
        ),
        AuditDesign(
            G.worst_case_pairs(Dd, Cd, 1.0),
            {"C": Cd, "B": 1.0, "epsilon": 1.0},
            G.claim(1.0),
            "diagonal design, C = X^+: user 0's four (1, 1) records, labels 0 vs B",
            output="vector",
        ),
    ]


def _refusals() -> list:
    D, C, _, _ = _validation_C()
    bad_y = D.labels.copy()
    bad_y[0] = 2.0
    return [
        Refusal(Case(D, {"C": C, "B": 1.0, "epsilon": 0.0}, "epsilon = 0"), "budget", "epsilon > 0"),
        Refusal(
            Case(D, {"C": 1.1 * C, "B": 1.0, "epsilon": 1.0}, "a C with C X = 1.1 I (Algorithm 3 needs C X = I)"),
            "parameter",
            "C X = I",
        ),
        Refusal(
            Case(D.with_fields(labels=bad_y), {"C": C, "B": 1.0, "epsilon": 1.0}, "a label 2B outside [0, B]"),
            "data",
            "every label in [0, B]",
        ),
    ]


def project(dataset: UserDataset, params) -> UserDataset:
    """every label clipped to [0, B]"""
    return dataset.with_fields(labels=np.clip(dataset.labels, 0.0, params["B"]))


def _clip_designs() -> list:
    """The argmax user's labels at -B vs 2B on the orthogonal design: clipped, 0 vs B (Delta_1); raw, 3x."""
    D, C, _, _ = _validation_C()
    u = int(D.users[int(np.argmax(G.user_l1(D, C)))])
    a = D.with_fields(labels=np.where(D.user_ids == u, -1.0, D.labels))
    b = D.with_fields(labels=np.where(D.user_ids == u, 2.0, D.labels))
    pair = NeighbourPair(a, b, G.RELATION.name, u, f"user {u} (largest W_l): labels all -B vs all 2B")
    return [
        AuditDesign(
            [pair],
            {"C": C, "B": 1.0, "epsilon": 1.0},
            G.claim(1.0),
            "out of domain: the argmax user's labels at -B vs 2B",
            output="vector",
        )
    ]


register(
    ValidationSpec(
        algorithm="epasto2020.gwa",
        reference=lambda dataset, rng, size=None, *, C, B, epsilon: G.mechanism(dataset, C, B, epsilon, rng, size),
        statistic=lambda D, *, C, B, epsilon: G.statistic(D, C, B),
        noise="laplace",
        claim=lambda D, p: G.claim(p["epsilon"]),
        cases=_cases,
        generate=_generate,
        designs=_designs,
        refusals=_refusals,
        project=project,
        clip_designs=_clip_designs,
        domain=_domain,
        suite="userdp.properties.epasto2020_gwa",
        suite_properties="GWAC_PROPERTIES",
        suite_reference="REFERENCE_GWAC",
        parameters=(
            Param(
                "C",
                "the (d, n) estimator matrix, the algorithm's INPUT: any C with C X = I_d (Theorem 6's "
                "optimum, the OLS X^+, ...); column i is record i's weights",
            ),
            B_P,
            EPS_P,
        ),
        reads=READS,
        relation=RELATION,
        release="a (d,) array: C y plus i.i.d. Laplace noise of SCALE b = B max_l sum_j sum_{i in S_l} |c_ji| / "
        "epsilon "
        "on each coordinate",
        stage_params={s: ("C", "B", "epsilon") for s in ("weights", "statistic", "sensitivity", "noise_scale")},
        why="Algorithm 3 GWA_C for a given C (its input, C X = I): release C y + Lap(b)^d",
    )
)


# ------------------------------------------------------------------ sample-limited OLS
def identical_records(D: UserDataset) -> UserDataset:
    """D with every record of a user replaced by that user's first record (features and label)."""
    order, offsets = D.record_order
    first = order[offsets[:-1]]
    return D.with_fields(values=D.values[first][D.user_index], labels=D.labels[first][D.user_index])


def _sl_reference(dataset, rng, size=None, *, h, B, epsilon):
    """§5.2 with one fixed selection (a uniform one drawn from a public seed: a value-independent rule).
    On the cases (identical records within each user) every rule gives the same release law."""
    return G.sample_limited_ols_mechanism(dataset, h, B, epsilon, rng, size, T=_selection(dataset, h))


def _selection(D: UserDataset, h: int) -> np.ndarray:
    return G.sample_limit_selection(D, h, np.random.default_rng(0))


def _sl_C(D: UserDataset, h: int) -> np.ndarray:
    return G.sample_limited_C(D, h, _selection(D, h))


def _sl_case(D, h, B, eps, what, origin="fixed") -> Case:
    D = identical_records(D)
    pair, share = _share_pair(D, _sl_C(D, h), B)
    return Case(pair.first, {"h": h, "B": B, "epsilon": eps}, what, pair=pair, pair_share=share, origin=origin)


def _sl_cases() -> list:
    """The orthogonal design (identical records within users) at h = 2 and h = 4, eps 1 and 10."""
    D = RG.orthogonal_dataset().with_fields(labels=_grid_labels(RG.orthogonal_dataset().n))
    return [
        _sl_case(D, 2, 1.0, 1.0, "orthogonal design, identical records within users, h = 2, eps = 1"),
        _sl_case(D, 4, 1.0, 10.0, "orthogonal design, identical records within users, h = 4, eps = 10"),
    ]


def _sl_generate(seed: int) -> list:
    out = []
    for k, (m, d, h, B, eps) in enumerate(((30, 2, 3, 1.0, 2.0), (8, 3, 1, 2.0, 5.0))):
        g = seeded("epasto2020.sample-limited-ols", seed, k)
        s = sizes(g, m, "skewed", top=8)
        n = int(s.sum())
        D = UserDataset(_features(g, n, d), user_ids(s), labels=np.round(g.uniform(0.0, B, n), 3))
        try:
            out.append(
                _sl_case(
                    D, h, B, eps, f"{m} users, skewed sizes, d = {d}, h = {h}, B = {B:g}, eps = {eps:g}", "generated"
                )
            )
        except ValueError:  # identical records can make the selection rank-deficient
            continue
    return out


def _sl_designs() -> list:
    D = identical_records(RG.orthogonal_dataset())
    C = _sl_C(D, 2)
    return [
        AuditDesign(
            G.worst_case_pairs(D, C, 1.0),
            {"h": 2, "B": 1.0, "epsilon": 1.0},
            G.claim(1.0),
            "orthogonal design, h = 2: the argmax user's labels 0 vs B",
            output="vector",
        )
    ]


def _sl_refusals() -> list:
    D = identical_records(RG.orthogonal_dataset())
    y = D.labels.copy()
    y[D.user_ids == D.user_ids[0]] = 2.0
    return [
        Refusal(Case(D, {"h": 2, "B": 1.0, "epsilon": 0.0}, "epsilon = 0"), "budget", "epsilon > 0"),
        Refusal(
            Case(D, {"h": 0, "B": 1.0, "epsilon": 1.0}, "h = 0 (no record kept)"),
            "parameter",
            "h an integer in [s_1, s_m]",
        ),
        Refusal(
            Case(D.with_fields(labels=y), {"h": 2, "B": 1.0, "epsilon": 1.0}, "user 0's labels at 2B"),
            "data",
            "every label in [0, B]",
        ),
    ]


register(
    ValidationSpec(
        algorithm="epasto2020.sample-limited-ols",
        reference=_sl_reference,
        statistic=lambda D, *, h, B, epsilon: G.statistic(D, _sl_C(D, h), B),
        noise="laplace",
        claim=lambda D, p: G.claim(p["epsilon"]),
        cases=_sl_cases,
        generate=_sl_generate,
        designs=_sl_designs,
        refusals=_sl_refusals,
        project=project,
        domain=_sl_domain,
        independence_case=lambda: Case(
            RG.orthogonal_dataset().with_fields(labels=_grid_labels(RG.orthogonal_dataset().n)),
            {"h": 2, "B": 1.0, "epsilon": 1.0},
            "orthogonal design, records varying, h = 2",
        ),
        suite="userdp.properties.epasto2020_gwa",
        suite_properties="",
        suite_reference="",
        parameters=(
            Param(
                "h",
                "the per-user sample limit: min(h, s_l) records of user l are kept (an integer in "
                "[s_1, s_m]); which ones is your rule, as long as it does not read the labels",
            ),
            B_P,
            EPS_P,
        ),
        reads=READS,
        relation=RELATION,
        release="a (d,) array: C^s y + Lap(b)^d, C^s the OLS estimator on the kept records (zero elsewhere), "
        "b = B max_l sum_j sum_{i in S_l} |c^s_ji| / epsilon",
        why="§5.2 sample-limited OLS at a given h: GWA with C^s from a label-independent choice of min(h, s_l) "
        "records per user",
    )
)
