"""The test-vector designs of epasto2020 (the datasets and public parameters of its vectors, each flagged
with the bug classes it exposes); ``audits/validation/vector_cases.py`` has the records and the
vocabulary of bug classes, ``audits/validation/vectors.py`` computes the expected values."""

from __future__ import annotations

from typing import Any

import numpy as np
from userdp.audits.validation._data import erm_features
from userdp.audits.papers.epasto2020.specs_gwa import _sl_C
from userdp.properties.adapter import Adapter
from userdp.properties.epasto2020 import REFERENCE
from userdp.properties.epasto2020 import REFERENCE_SL
from userdp.properties.epasto2020_erm import epasto_reference
from userdp.properties.epasto2020_gwa import REFERENCE_GWAC
from userdp.reference import epasto2020 as W
from userdp.reference import epasto2020_gwa as G
from userdp.reference.data import UserDataset
from userdp.audits.papers._vectors import plain_adapter, released_by, spec_reference, users
from userdp.audits.validation.vector_cases import Design, StatCase, VectorCase, register_design

__all__: list[str] = []


# Why an algorithm of this paper has no statistical vector (yet): the files' statisticalNote, printed in
# docs/vectors.md ("Statistical vectors").
_NO_STATISTICAL = {
    "epasto2020.sample-limited-ols": (
        "each release draws the record selection T (§5.2) before the Laplace noise: a mixture over the "
        "selections (and the reference releases once per selection)"
    ),
    "epasto2020.weighted-erm": (
        "Gaussian noise passed through projected gradient steps: the release is a nonlinear function of every "
        "step's noise, with no closed-form law"
    ),
}


# ================================================================== Epasto et al. 2020 §3
def _zipf_users(m: int, seed: int, equal_within: bool) -> Any:
    rng = np.random.default_rng(seed)
    sizes = np.minimum(rng.zipf(1.6, m), 40)
    ids = np.repeat(np.arange(m), sizes)
    if equal_within:
        values = np.repeat(np.round(rng.uniform(0.0, 1.0, m), 3), sizes)
    else:
        values = np.round(rng.uniform(0.0, 1.0, ids.size), 3)
    return UserDataset(values, ids)


def _skewed(equal_within: bool) -> Any:
    """3 users of 20 records and 40 users of 1 record (h* between 1 and 20)."""
    sizes = np.r_[np.full(3, 20), np.ones(40, dtype=int)]
    ids = np.repeat(np.arange(sizes.size), sizes)
    rng = np.random.default_rng(2020)
    per_user = np.round(rng.uniform(0.0, 1.0, sizes.size), 3)
    values = np.repeat(per_user, sizes) if equal_within else np.round(rng.uniform(0.0, 1.0, ids.size), 3)
    return UserDataset(values, ids)


def _wa_cases() -> list:
    zipf, skew = _zipf_users(50, 20, False), _skewed(False)
    spread = _zipf_users(30, 7, False)
    V = VectorCase
    base = {"B": 1.0, "epsilon": 1.0, "sigma": 0.5}
    return [
        V(
            zipf,
            base,
            (
                "understated-sensitivity",
                "unnormalised-weights",
                "weight-formula",
                "parameter-not-applied",
                "per-record-bound",
            ),
            "50 users with Zipf(1.6) sizes (1 to 40 records), values in [0, 1], B = 1, eps = 1, sigma = 1/2: the "
            "weights sum to 1 over users' min(h*, s_q) (not over records), are split over each user's records, "
            "the noise covers the heaviest user's total weight (not the mean user, nor n records, nor one record), "
            "and the statistic applies them (not the plain mean)",
        ),
        V(
            skew,
            {"B": 1.0, "epsilon": 4.0, "sigma": 0.5},
            ("per-record-bound", "understated-sensitivity", "sub-optimal-parameter", "noise-formula"),
            "3 users of 20 records and 40 of 1, eps = 4: h* lies strictly between the sizes (not at s_1 = 1: "
            "equal user weights are not optimal), a heavy user's weight is h*/n_h, and the noise scale is "
            "Delta / eps (not Delta eps)",
        ),
        V(
            spread,
            {"B": 1.0, "epsilon": 2.0, "sigma": 0.05},
            ("data-dependent-choice",),
            "sigma = 0.05 given while the values' standard deviation is about 0.29: h* computed from an estimated "
            "sigma differs",
        ),
        V(
            spread.with_fields(values=2 * spread.values),
            {"B": 2.0, "epsilon": 0.5, "sigma": 1.0},
            ("noise-formula",),
            "values doubled into [0, 2], B = 2, sigma = 1, eps = 0.5: a scale read as a rate (Delta eps) is "
            "eps^2 = 1/4 of Delta / eps",
        ),
        V(
            users([0.5, 0.5], [0.25, 0.75]),
            {"B": 1.0, "epsilon": 1.0, "sigma": 0.5},
            (),
            "two users of two records: all sizes equal, so h* = s and every weight is 1/n",
        ),
        V(
            zipf.with_fields(values=np.where(np.arange(zipf.n) == 3, 2.0, zipf.values)),
            base,
            ("input-not-refused",),
            "a value 2B outside [0, B]: the noise covers B (refuse, do not clip)",
            "invalid",
        ),
        V(zipf, {**base, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
        V(
            zipf,
            {**base, "sigma": -0.5},
            ("input-not-refused",),
            "sigma = -0.5: a negative standard deviation",
            "invalid",
        ),
        V(zipf, {**base, "B": 0.0}, ("input-not-refused",), "B = 0: an empty range [0, 0]", "invalid"),
    ]


def _sl_cases() -> list:
    zipf, skew = _zipf_users(50, 21, True), _skewed(True)
    V = VectorCase
    base = {"B": 1.0, "epsilon": 1.0, "sigma": 0.5}
    note = " (values equal within each user: §3.2 lets an implementation keep any min(h, s_l) of a user's records)"
    return [
        V(
            zipf,
            base,
            ("per-record-bound", "understated-sensitivity"),
            "50 users with Zipf(1.6) sizes, B = 1, eps = 1: the best integer h keeps several records of heavy "
            "users, so a user moves the estimate by B h / n_h, not one record's B / n_h" + note,
        ),
        V(
            skew,
            {"B": 1.0, "epsilon": 4.0, "sigma": 0.5},
            ("per-record-bound", "noise-formula"),
            "3 users of 20 records and 40 of 1, eps = 4" + note,
        ),
        V(
            zipf.with_fields(values=np.where(zipf.user_ids == zipf.user_ids[0], 2.0, zipf.values)),
            base,
            ("input-not-refused",),
            "a user's values at 2B, outside [0, B]",
            "invalid",
        ),
        V(zipf, {**base, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
    ]


def _wa_statistical() -> list:
    """Replace user 2's one record, 0 by B, among users of 6, 2 and 1 records: at eps = 1, sigma = 1/2 every user
    weighs 1/8, the heaviest weight, so the pair moves beta_hat by B / 8, Lemma 1's sensitivity: tight."""
    rest = [[0.2, 0.4, 0.6, 0.8, 0.3, 0.5], [0.1, 0.9]], [[0.35], [0.55], [0.45], [0.65], [0.15]]
    return [
        StatCase(
            users(*rest[0], [0.0], *rest[1]),
            users(*rest[0], [1.0], *rest[1]),
            {"B": 1.0, "epsilon": 1.0, "sigma": 0.5},
            {"epsilon": 1.0},
            "eight users of 6, 2 and 1 records, B = 1, eps = 1, sigma = 1/2; user 2's record 0 on one side, 1 on "
            "the other: Laplace of scale B max_l W_l / eps = 1/8 around beta_hat on both sides, 1/8 apart",
        )
    ]


def _sl_statistical() -> list:
    """Replace user 2's one record, 0 by B, among users of 6, 2 and 1 records whose values are equal within each
    user (so that any min(h, s_l) records give the same statistic): Laplace of scale B h / (eps n_h) around the
    sample mean on both sides."""
    rest = [[0.3] * 6, [0.8, 0.8]], [[0.35], [0.55], [0.45], [0.65], [0.15]]
    return [
        StatCase(
            users(*rest[0], [0.0], *rest[1]),
            users(*rest[0], [1.0], *rest[1]),
            {"B": 1.0, "epsilon": 1.0, "sigma": 0.5},
            {"epsilon": 1.0},
            "eight users of 6, 2 and 1 records (values equal within a user), B = 1, eps = 1, sigma = 1/2; user 2's "
            "record 0 on one side, 1 on the other: Laplace of scale B h / (eps n_h) at Claim 2's h on both sides",
        )
    ]


def _wa_reference():
    return REFERENCE


def _wa_intermediate(dataset, params) -> dict:
    """Claim 1's minimiser h* and n_h = sum_l min(h*, s_l) (Lemma 3's normaliser), sigma defaulting as the
    reference's does (B/2): the weights of user q are min(h*, s_q) / (s_q n_h)."""
    B = params["B"]
    sigma = params.get("sigma")
    h = W.optimal_h(dataset, B / 2.0 if sigma is None else sigma, B, params["epsilon"])
    return {"h_star": h, "n_h": W.n_h(dataset, h)}


def _sl_reference():
    return REFERENCE_SL


register_design(
    Design(
        "epasto2020.wa",
        _wa_reference,
        spec_reference("epasto2020.wa"),
        plain_adapter,
        {s: ("B", "epsilon", "sigma") for s in ("weights", "statistic", "sensitivity", "noise_scale")},
        ("weights", "statistic", "sensitivity", "noise_scale"),
        _wa_cases,
        "replace user (S_l public)",
        "userdp.reference.epasto2020: optimal_weights (Lemma 3 at Claim 1's h*), wa_statistic, wa_sensitivity "
        "(Lemma 1: B max_l W_l), wa_noise_scale",
        intermediate=_wa_intermediate,
        statistical=_wa_statistical,
    )
)

register_design(
    Design(
        "epasto2020.sample-limiting",
        _sl_reference,
        spec_reference("epasto2020.sample-limiting"),
        plain_adapter,
        {s: ("B", "epsilon", "sigma") for s in ("statistic", "sensitivity", "noise_scale")},
        ("statistic", "sensitivity", "noise_scale"),
        _sl_cases,
        "replace user (S_l public)",
        "userdp.reference.epasto2020: best_integer_h (Claim 2), sample_limiting_weights, and Lemma 1's sensitivity "
        "B h / n_h",
        notes="No weights stage: §3.2 lets an implementation keep any min(h, s_l) records of user l (first, last, "
        "random), so the weights are not unique; the vectors hold values equal within each user, where the "
        "statistic is.",
        statistical=_sl_statistical,
    )
)


# ================================================================== Epasto et al. 2020 §5 (GWA_C)
def _gwa_data() -> tuple:
    """Non-orthogonal design (n = 8, d = 2; users of 3, 2, 1, 1 and 1 records), labels in [0, 1],
    and Theorem 6's C at B = 1, eps = 1, sigma = 1/2; the diagonal design with C = X^+."""

    X = np.array([[1.0, 0.2], [0.8, -0.5], [0.1, 1.0], [-0.3, 0.9], [1.0, 1.0], [0.5, -1.0], [-1.0, 0.3], [0.2, 0.4]])
    D = UserDataset(X, np.array([0, 0, 0, 1, 1, 2, 3, 4]), labels=np.linspace(0.1, 0.9, 8))
    C = G.optimal_C(D, 1.0, 1.0, 0.5).C
    Xd = np.array([[1.0, 1.0]] * 4 + [[1.0, 0.0], [0.0, 1.0], [1.0, -1.0]])
    Dd = UserDataset(Xd, np.array([0, 0, 0, 0, 1, 2, 3]), labels=np.array([0.2, 0.4, 0.6, 0.8, 0.5, 0.3, 0.7]))
    return D, C, Dd, G.ols_C(G.features(Dd))


def _gwa_statistical() -> list:
    """The non-orthogonal design of vector 1, user 3's one label 0.7 on one side and 0 on the other: Algorithm 3
    adds Laplace of scale b to each coordinate, so coordinate 0 is Laplace around (C y)_0 on both sides."""
    D, C, _, _ = _gwa_data()
    y = D.labels.copy()
    y[6] = 0.0
    return [
        StatCase(
            D,
            D.with_fields(labels=y),
            {"C": C, "B": 1.0, "epsilon": 1.0},
            {"epsilon": 1.0},
            "vector 1's design and C, B = 1, eps = 1; user 3's label (record 6) replaced by 0: coordinate 0 of the "
            "release is Laplace of Algorithm 3's scale b around (C y)_0 on both sides",
            index=0,
        )
    ]


def _gwa_cases() -> list:
    D, C, Dd, Cd = _gwa_data()
    V = VectorCase
    neg = D.labels.copy()
    neg[2] = -0.5
    big = D.labels.copy()
    big[0] = 2.0
    return [
        V(
            D,
            {"C": C, "B": 1.0, "epsilon": 1.0},
            ("understated-sensitivity", "parameter-not-applied", "per-record-bound"),
            "non-orthogonal design, users of 3, 2, 1, 1, 1 records, Theorem 6's C (sigma = 1/2), B = 1, eps = 1: "
            "b sums |c_ji| over both rows j and over the user's records i (not one row, not one record, not signed "
            "sums), and the statistic is this C times y (not X^+ y)",
        ),
        V(
            D.with_fields(labels=D.labels / 2),
            {"C": C, "B": 0.5, "epsilon": 20.0},
            ("understated-sensitivity", "noise-formula"),
            "the same with B = 1/2 (labels halved), eps = 20",
        ),
        V(
            Dd,
            {"C": Cd, "B": 1.0, "epsilon": 1.0},
            ("understated-sensitivity", "per-record-bound"),
            "diagonal design: user 0 holds four records at (1, 1), which enter both rows of C = X^+: one row, or "
            "one record, gives half of Algorithm 3's b or less",
        ),
        V(
            D,
            {"C": 1.1 * C, "B": 1.0, "epsilon": 1.0},
            ("input-not-refused",),
            "a C with C X = 1.1 I (Algorithm 3 needs C X = I)",
            "invalid",
        ),
        V(
            D.with_fields(labels=big),
            {"C": C, "B": 1.0, "epsilon": 1.0},
            ("input-not-refused",),
            "a label 2B, outside [0, B]",
            "invalid",
        ),
        V(
            D.with_fields(labels=neg),
            {"C": C, "B": 1.0, "epsilon": 1.0},
            ("input-not-refused",),
            "a label -B/2: inside [-B, B] but outside the [0, B] that b is calibrated to",
            "invalid",
        ),
        V(D, {"C": C, "B": 1.0, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
    ]


def _gwa_reference():
    return REFERENCE_GWAC


register_design(
    Design(
        "epasto2020.gwa",
        _gwa_reference,
        spec_reference("epasto2020.gwa"),
        plain_adapter,
        {s: ("C", "B", "epsilon") for s in ("weights", "statistic", "sensitivity", "noise_scale")},
        ("weights", "statistic", "sensitivity", "noise_scale"),
        _gwa_cases,
        "replace user's labels (features public)",
        "userdp.reference.epasto2020_gwa: check_C (the weights stage returns the given C after checking C X = I), "
        "statistic (C y), sensitivity (Algorithm 3: B max_l sum_j sum_{i in S_l} |c_ji|), noise_scale",
        notes="C is Algorithm 3's input, a d x n matrix (an array of d rows) in params; Theorem 6's optimal C is "
        "computed by userdp.reference.epasto2020_gwa.optimal_C when the vectors are built.",
        statistical=_gwa_statistical,
    )
)


# ------------------------------------------------------------------ Epasto et al. 2020 Algorithm 2 (noisy GD)
def _c_of(D, epsilon):
    """Lemma 3's weights at Claim 1's h* for B = 1, sigma = 1/2 (what epasto2020.weighted-erm fixes)."""
    return W.optimal_weights(D, epsilon, 1.0)[0]


def _weighted_erm_bind(adapter):
    """The suite's stages take Algorithm 2's weights c; the validated algorithm fixes c = ``_c_of``."""

    def opt(f, g):
        return None if f is None else g

    w, s, n = adapter.weights, adapter.sensitivity, adapter.noise_scale
    return Adapter(
        f"{adapter.name} (c = Lemma 3 at h*)",
        weights=opt(w, lambda D, *, epsilon: w(D, _c_of(D, epsilon))),
        sensitivity=opt(s, lambda D, *, epsilon: s(D, _c_of(D, epsilon))),
        noise_scale=opt(n, lambda D, *, epsilon, delta, T: n(D, _c_of(D, epsilon), epsilon=epsilon, delta=delta, T=T)),
    )


def _weighted_erm_cases() -> list:
    sizes = np.array([6, 3, 2, 1, 1, 1, 1, 1])
    n = int(sizes.sum())
    D = UserDataset(
        np.tile([1.0, 0.0], (n, 1)),
        np.repeat(np.arange(sizes.size), sizes),
        labels=np.where(np.arange(n) % 2 == 0, 1.0, -1.0),
    )
    s3 = np.array([5, 4, 3, 2, 1, 1, 1, 1, 1, 1])
    g = np.random.default_rng(20)
    D3 = UserDataset(
        erm_features(20, int(s3.sum()), 3),
        np.repeat(np.arange(10), s3),
        labels=np.where(g.random(s3.sum()) < 0.5, 1.0, -1.0),
    )
    V = VectorCase
    p = {"epsilon": 1.0, "delta": 1e-5, "T": 4}
    return [
        V(
            D,
            p,
            ("understated-sensitivity", "accounting", "sub-optimal-parameter", "noise-formula"),
            "8 users of 6, 3, 2 and 1 records, eps = 1, delta = 1e-5, T = 4: c is Lemma 3's at h* (not uniform), "
            "Delta_2 = 2 L max_l sum_{S_l} c_i (the heaviest user, not the mean), and sigma keeps all T = 4 steps "
            "(eps, delta)-DP (not one step's)",
        ),
        V(
            D3,
            {"epsilon": 2.0, "delta": 1e-6, "T": 8},
            ("understated-sensitivity", "accounting"),
            "10 users of 5 down to 1 records, d = 3, eps = 2, delta = 1e-6, T = 8",
        ),
        V(D, {**p, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
        V(D, {**p, "delta": 0.0}, ("input-not-refused",), "delta = 0: Gaussian noise needs delta > 0", "invalid"),
        V(D, {**p, "T": 0}, ("input-not-refused",), "T = 0 steps", "invalid"),
        V(
            D.with_fields(labels=np.where(np.arange(n) == 0, 0.3, D.labels)),
            p,
            ("input-not-refused",),
            "a label 0.3 (logistic labels are -1 or +1)",
            "invalid",
        ),
    ]


def _weighted_erm_reference():
    return released_by("epasto2020.weighted-erm", _weighted_erm_bind(epasto_reference()))


register_design(
    Design(
        "epasto2020.weighted-erm",
        _weighted_erm_reference,
        spec_reference("epasto2020.weighted-erm"),
        plain_adapter,
        {"weights": ("epsilon",), "sensitivity": ("epsilon",), "noise_scale": ("epsilon", "delta", "T")},
        ("weights", "sensitivity", "noise_scale"),
        _weighted_erm_cases,
        "replace user (S_l public)",
        "userdp.reference.epasto2020 optimal_weights (c: Lemma 3 at Claim 1's h* for B = 1, sigma = 1/2) and "
        "userdp.reference.epasto2020_erm: sensitivity (Delta_2 = 2 L max_l sum_{S_l} c_i), noise_scale (sigma = z "
        "Delta_2, z from the RDP accounting of T Gaussian steps)",
        notes="The release averages projected noisy GD iterates, so the noise-free stages are the inputs of the "
        "descent: the weights c, the per-step sensitivity and the per-step noise sd; validate compares the "
        "releases as distributions.",
        bind=_weighted_erm_bind,
        statistical_none=_NO_STATISTICAL["epasto2020.weighted-erm"],
    )
)


# ------------------------------------------------------------------ Epasto et al. 2020 §5.2 (sample-limited OLS)
def _sl_ols_stage(name: str):
    def stage(D, *, h, B, epsilon=None):
        C = _sl_C(D, h)
        if name == "statistic":
            return G.statistic(D, C, B)
        return G.sensitivity(D, C, B) if name == "sensitivity" else G.noise_scale(D, C, B, epsilon)

    return stage


def _sl_ols_reference():
    return released_by(
        "epasto2020.sample-limited-ols",
        Adapter(
            "epasto2020.sample-limited-ols (reference stages)",
            statistic=_sl_ols_stage("statistic"),
            sensitivity=_sl_ols_stage("sensitivity"),
            noise_scale=_sl_ols_stage("noise_scale"),
        ),
    )


def _sl_ols_cases() -> list:
    sizes = np.array([5, 3, 2, 1, 1, 1, 1])
    ids = np.repeat(np.arange(sizes.size), sizes)
    X0 = np.array([[1.0, 0.2], [0.8, -0.5], [0.1, 1.0], [-0.3, 0.9], [1.0, 1.0], [0.5, -1.0], [-1.0, 0.3]])
    y0 = np.array([0.9, 0.2, 0.6, 0.4, 0.8, 0.1, 0.5])
    D = UserDataset(X0[ids], ids, labels=y0[ids])  # identical records within each user
    V = VectorCase
    big = np.where(ids == 0, 2.0, D.labels)
    note = " (records identical within each user: §5.2 lets an implementation keep any min(h, s_l) of them)"
    return [
        V(
            D,
            {"h": 2, "B": 1.0, "epsilon": 1.0},
            ("per-record-bound", "noise-formula", "sub-optimal-parameter"),
            "7 users of 5, 3, 2 and 1 records, d = 2, h = 2, B = 1, eps = 1: b = B max_l sum_j sum_{i in S_l} |c^s_ji| "
            "sums the user's kept records (not one record), over both rows (not §3.2's 1-D B h / n_h), and the "
            "statistic is OLS on the kept records (not on all)" + note,
        ),
        V(
            D,
            {"h": 3, "B": 1.0, "epsilon": 4.0},
            ("per-record-bound", "sub-optimal-parameter"),
            "the same at h = 3, eps = 4" + note,
        ),
        V(D, {"h": 2, "B": 1.0, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
        V(D, {"h": 0, "B": 1.0, "epsilon": 1.0}, ("input-not-refused",), "h = 0: no record kept", "invalid"),
        V(
            D.with_fields(labels=big),
            {"h": 2, "B": 1.0, "epsilon": 1.0},
            ("input-not-refused",),
            "user 0's labels at 2B, outside [0, B]",
            "invalid",
        ),
    ]


register_design(
    Design(
        "epasto2020.sample-limited-ols",
        _sl_ols_reference,
        spec_reference("epasto2020.sample-limited-ols"),
        plain_adapter,
        {"statistic": ("h", "B"), "sensitivity": ("h", "B"), "noise_scale": ("h", "B", "epsilon")},
        ("statistic", "sensitivity", "noise_scale"),
        _sl_ols_cases,
        "replace user's labels (features public)",
        "userdp.reference.epasto2020_gwa: sample_limited_C (C^s, OLS on min(h, s_l) records of each user), statistic "
        "(C^s y), sensitivity (B max_l sum_j sum_{i in S_l} |c^s_ji|), noise_scale",
        notes="No weights stage: which min(h, s_l) records of a user are kept is the implementation's (label-"
        "independent) choice, so C^s is not unique; the vectors hold records identical within each user, "
        "where the statistic and b are.",
        statistical_none=_NO_STATISTICAL["epasto2020.sample-limited-ols"],
    )
)
