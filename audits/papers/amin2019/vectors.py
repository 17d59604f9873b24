"""The test-vector designs of amin2019 (the datasets and public parameters of its vectors, each flagged
with the bug classes it exposes); ``audits/validation/vector_cases.py`` has the records and the
vocabulary of bug classes, ``audits/validation/vectors.py`` computes the expected values."""

from __future__ import annotations


import numpy as np
from userdp.audits.validation._data import erm_features
from userdp.properties.adapter import Adapter
from userdp.properties.amin2019 import CapAdapter
from userdp.properties.amin2019 import REFERENCE
from userdp.reference import amin2019 as A
from userdp.reference import amin2019_erm as AE
from userdp.reference.data import UserDataset
from userdp.audits.papers._vectors import plain_adapter, released_by, spec_reference, users
from userdp.audits.validation.vector_cases import Design, StatCase, VectorCase, register_design

__all__: list[str] = []


# Why an algorithm of this paper has no statistical vector (yet): the files' statisticalNote, printed in
# docs/vectors.md ("Statistical vectors").
_NO_STATISTICAL = {
    "amin2019.capped-sum-private-cap": (
        "the cap is drawn by the exponential mechanism before the Laplace sum: the release is a mixture of "
        "Laplace laws over the candidate caps, not one law of the files' families"
    ),
    "amin2019.erm-output-perturbation": (
        "output perturbation with L2-Laplace noise (density proportional to exp(-eta ||z||_2): a Gamma norm "
        "in a uniform direction, mechanisms.l2_laplace_noise): one coordinate's law is a Bessel-function "
        "density, neither Laplace nor Gaussian, a family the files do not define yet"
    ),
    "amin2019.erm-output-perturbation-ridge": (
        "output perturbation with L2-Laplace noise (density proportional to exp(-eta ||z||_2): a Gamma norm "
        "in a uniform direction, mechanisms.l2_laplace_noise): one coordinate's law is a Bessel-function "
        "density, neither Laplace nor Gaussian, a family the files do not define yet"
    ),
}


# ================================================================== Amin et al. 2019 §3
def _amin_cases() -> list:
    six = UserDataset.from_user_lists([[0.9, 0.8, 0.5, 0.4], [0.7, 0.6], [0.3], [0.2, 0.6, 0.1], [1.0], [0.5]])
    multi = UserDataset.from_user_lists([[0.5, 0.5, 0.5, 0.5], [0.4, 0.4, 0.4, 0.4], [0.2]])
    ten = UserDataset.from_user_lists([[0.1 * (k + 1), 0.03 * k] for k in range(10)])  # totals 0.1, 0.23, .., 1.27
    V = VectorCase
    return [
        V(
            six,
            {"T": 1.0, "epsilon": 1.0},
            ("understated-sensitivity", "sub-optimal-parameter", "data-dependent-choice", "parameter-not-applied"),
            "six users of 1-4 records, totals 0.3 to 2.6, T = 1, eps = 1: g_T = 4.7 caps two users; the sensitivity "
            "is T (not T/2); eq. 6's cap at eps = 1 is the largest total 2.6 (not the second largest, 1.3, nor an "
            "interpolated quantile); a T read from the data instead of the given one, or a statistic at another cap, "
            "changes g_T",
        ),
        V(
            multi,
            {"T": 1.0, "epsilon": 0.5},
            ("per-record-bound", "noise-formula"),
            "users of 4 records each below T whose totals (2.0, 1.6) exceed it, T = 1, eps = 0.5: g_T = 2.2, "
            "where capping each record gives 3.8; the noise scale is T/eps = 2 (not T eps = 0.5)",
        ),
        V(
            multi,
            {"T": 0.3, "epsilon": 4.0},
            ("per-record-bound", "noise-formula"),
            "the same users at T = 0.3, eps = 4: the two heavy users' totals are capped, g_T = 0.3 + 0.3 + 0.2 = 0.8, "
            "where capping each record gives 8 x 0.3 + 0.2 = 2.6; the noise scale is 0.075",
        ),
        V(
            ten,
            {"T": 2.0, "epsilon": 0.35},
            ("sub-optimal-parameter",),
            "ten users of two records, distinct totals 0.1 to 1.27, eps = 0.35: 1/eps is not an integer, so eq. 6's "
            "cap (the ceil(1/eps) = 3rd largest total, 1.01) differs from the interpolated 1 - 1/(m eps) quantile "
            "(0.94) and from the 4th largest (0.88)",
        ),
        V(
            users([0.25]),
            {"T": 1.0, "epsilon": 2.0},
            (),
            "one user of one record, below T: g_T is the record itself (eq. 6's cap at k = 1 > m - 1)",
        ),
        V(six, {"T": 1.0, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0: Laplace scale T / 0", "invalid"),
        V(six, {"T": -1.0, "epsilon": 1.0}, ("input-not-refused",), "T = -1: a negative cap", "invalid"),
        V(
            six,
            {"T": 0.0, "epsilon": 1.0},
            ("input-not-refused",),
            "T = 0: the constant 0 released with zero noise",
            "invalid",
        ),
        V(
            users([0.5, -0.25], [1.0]),
            {"T": 1.0, "epsilon": 1.0},
            ("input-not-refused",),
            "a negative record value: §3 sums non-negative contributions (min(x_l, T) is no cap for a negative total)",
            "invalid",
        ),
    ]


def _amin_reference():
    return REFERENCE


def _amin_adapter():
    return CapAdapter


def _amin_statistical() -> list:
    """Removing a user whose total exceeds T moves g_T by exactly T, the sensitivity: the pair is tight, so
    P[M(D) in S] / P[M(D') in S] = e^eps at a threshold above both, and half the noise makes it e^(2 eps)."""
    six = [[0.9, 0.8, 0.5, 0.4], [0.7, 0.6], [0.3], [0.2, 0.6, 0.1], [1.0], [0.5]]
    multi = [[0.5, 0.5, 0.5, 0.5], [0.4, 0.4, 0.4, 0.4], [0.2]]
    return [
        StatCase(
            users(*six),
            users(*six[1:]),
            {"T": 1.0, "epsilon": 1.0},
            {"epsilon": 1.0},
            "the six users of vector 1 (g_T = 4.7) and the same without user 0 (total 2.6, capped to T = 1: g_T = "
            "3.7), eps = 1: Laplace of scale T / eps = 1 on both sides, a pair at the sensitivity",
        ),
        StatCase(
            users(*multi),
            users(*multi[:2]),
            {"T": 0.3, "epsilon": 4.0},
            {"epsilon": 4.0},
            "the users of vector 3 at T = 0.3, eps = 4 (g_T = 0.8) and the same without the light user (0.2): "
            "Laplace of scale 0.075; a record-level cap moves the location, a half-scale sampler the spread",
        ),
    ]


register_design(
    Design(
        "amin2019.capped-sum",
        _amin_reference,
        spec_reference("amin2019.capped-sum"),
        _amin_adapter,
        {"statistic": ("T",), "sensitivity": ("T",), "noise_scale": ("T", "epsilon"), "optimal_cap": ("epsilon",)},
        ("statistic", "optimal_cap"),
        _amin_cases,
        "add/remove user",
        "userdp.reference.amin2019: statistic (g_T, §3), sensitivity (T, eq. 2), noise_scale (T / eps), "
        "optimal_cap_nonprivate (eq. 5-6, the ceil(1/eps)-th largest user total)",
        statistical=_amin_statistical,
    )
)


def _cap_cases() -> list:
    six = UserDataset.from_user_lists([[0.9, 0.8, 0.5, 0.4], [0.7, 0.6], [0.3], [0.2, 0.6, 0.1], [1.0], [0.5]])
    ten = UserDataset.from_user_lists([[0.1 * (k + 1), 0.03 * k] for k in range(10)])  # totals 0.1, 0.23, .., 1.27
    neg = UserDataset.from_user_lists([[0.5, -0.25], [1.0]])
    p = {"epsilon_cap": 0.5, "epsilon_sum": 1.0, "U": 3.0}
    V = VectorCase
    return [
        V(
            six,
            p,
            ("sub-optimal-parameter",),
            "six users, totals 0.3 to 2.6, eps_sum = 1: the exponential mechanism aims at the k = ceil(1/eps_sum) = "
            "1st largest total, 2.6 (not the 2nd, 1.3)",
        ),
        V(
            ten,
            {"epsilon_cap": 1.0, "epsilon_sum": 0.35, "U": 2.0},
            ("sub-optimal-parameter",),
            "ten users, distinct totals 0.1 to 1.27, eps_sum = 0.35: k = ceil(1/0.35) = 3, the 3rd largest total "
            "1.01 (an interpolated 1 - 1/(m eps) quantile gives 0.94, the 4th largest 0.88)",
        ),
        V(
            users([0.25]),
            {"epsilon_cap": 1.0, "epsilon_sum": 0.5, "U": 1.0},
            (),
            "one user, eps_sum = 1/2: k = 2 > m, the target is 0 (every total is above it)",
        ),
        V(
            six,
            {**p, "epsilon_cap": 0.0},
            ("input-not-refused",),
            "epsilon_cap = 0: a cap drawn uniformly, unpaid",
            "invalid",
        ),
        V(six, {**p, "epsilon_sum": 0.0}, ("input-not-refused",), "epsilon_sum = 0: Laplace scale T / 0", "invalid"),
        V(six, {**p, "U": -1.0}, ("input-not-refused",), "U = -1: an empty range [0, U] for the cap", "invalid"),
        V(neg, p, ("input-not-refused",), "a negative record value: §3 sums non-negative contributions", "invalid"),
    ]


def _cap_reference():
    return released_by(
        "amin2019.capped-sum-private-cap",
        CapAdapter(
            "amin2019.capped-sum-private-cap (reference stages)",
            optimal_cap=lambda D, *, epsilon_sum: A.optimal_cap_nonprivate(D, epsilon_sum),
        ),
    )


register_design(
    Design(
        "amin2019.capped-sum-private-cap",
        _cap_reference,
        spec_reference("amin2019.capped-sum-private-cap"),
        _amin_adapter,
        {"optimal_cap": ("epsilon_sum",)},
        ("optimal_cap",),
        _cap_cases,
        "add/remove user",
        "userdp.reference.amin2019: optimal_cap_nonprivate at eps_sum (eq. 6: the ceil(1/eps_sum)-th largest user "
        "total), the quantile that private_cap's exponential mechanism aims at",
        notes="The release (T, g_T + Lap(T / eps_sum)) is random in T, so its only noise-free stage is the target "
        "of the exponential mechanism, optimal_cap(dataset, epsilon_sum); validate compares the releases as "
        "distributions.",
        statistical_none=_NO_STATISTICAL["amin2019.capped-sum-private-cap"],
    )
)


# ------------------------------------------------------------------ Amin et al. 2019 Algorithm 1 (ERM)
def _amin_erm_cases(loss: str):
    def cases() -> list:
        heavy = np.r_[np.zeros(4, dtype=int), np.arange(1, 5)]
        X = np.tile([1.0, 0.0], (8, 1)) if loss == "logistic" else np.tile([0.8, 0.0], (8, 1))
        y = np.r_[-np.ones(4), np.ones(4)] if loss == "logistic" else np.r_[np.full(4, -0.9), np.full(4, 0.6)]
        D = UserDataset(X, heavy, labels=y)
        ids = np.repeat(np.arange(6), [5, 3, 2, 1, 1, 1])
        g = np.random.default_rng(7)
        lab = np.where(g.random(13) < 0.6, 1.0, -1.0) if loss == "logistic" else np.round(g.uniform(-1, 1, 13), 3)
        G = UserDataset(erm_features(7, 13, 3), ids, labels=lab)
        base = {"epsilon": 1.0, "tau": 2, "Lambda": 10.0, "n_min": 8}
        V = VectorCase
        out = [
            V(
                D,
                base,
                ("per-record-bound", "data-dependent-choice", "missing-clipping", "biased-estimate"),
                "user 0 holds 4 records (the first), 4 single-record users, d = 2, tau = 2, Lambda = 10, n_min = 8: "
                "the first tau records of EACH user are kept (6, not the first tau m = 10 records overall, not all "
                "8), weights 1 / max(n_tau, n_min) = 1/8 from the public n_min (not the data's n_tau = 6), "
                "Delta_2 = (L / Lambda) max(2 tau / (n_min + tau), tau / n_min) (not the record-level 2 L / (n_min "
                "Lambda)); theta-hat minimises sum_i w_i l_i + (Lambda / 2) ||theta||^2 (the 1/2 counts)",
            ),
            V(
                G,
                {"epsilon": 2.0, "tau": 3, "Lambda": 2.0, "n_min": 4},
                ("per-record-bound", "understated-sensitivity"),
                "6 users of 5, 3, 2, 1, 1, 1 records, d = 3, tau = 3, Lambda = 2, n_min = 4 < n_tau = 11",
            ),
            V(
                D,
                {**base, "tau": 1, "n_min": 2, "Lambda": 4.0},
                ("understated-sensitivity", "noise-formula"),
                "tau = 1, n_min = 2, Lambda = 4: one record per user",
            ),
            V(D, {**base, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
            V(
                D,
                {**base, "Lambda": 0.0},
                ("input-not-refused",),
                "Lambda = 0: no strong convexity, no sensitivity bound",
                "invalid",
            ),
            V(D, {**base, "tau": 0}, ("input-not-refused",), "tau = 0: no record kept", "invalid"),
            V(
                D.with_fields(values=3 * D.values),
                base,
                ("input-not-refused",),
                "features of norm 3 (||x|| <= 1)",
                "invalid",
            ),
            V(
                D.with_fields(labels=np.where(np.arange(8) == 0, 0.5 if loss == "logistic" else 3.0, D.labels)),
                base,
                ("input-not-refused",),
                "a label " + ("0.5 (logistic labels are -1 or +1)" if loss == "logistic" else "3 outside [-1, 1]"),
                "invalid",
            ),
        ]
        return out

    return cases


def _amin_erm_reference(loss: str):
    def get():
        name = "amin2019.erm-output-perturbation" + ("-ridge" if loss == "ridge" else "")
        return released_by(
            name,
            Adapter(
                f"amin2019 ERM output perturbation, {loss} (reference stages)",
                weights=lambda D, *, tau, n_min: AE.weights(D, tau, n_min),
                statistic=lambda D, *, tau, Lambda, n_min: AE.statistic(
                    D, tau=tau, Lambda=Lambda, n_min=n_min, loss=loss
                ),
                sensitivity=lambda *, tau, Lambda, n_min: AE.sensitivity(
                    tau=tau, Lambda=Lambda, n_min=n_min, loss=loss
                ),
                noise_scale=lambda D, *, epsilon, tau, Lambda, n_min: AE.noise_scale(
                    epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min, loss=loss
                ),
            ),
        )

    return get


for _loss, _name in (
    ("logistic", "amin2019.erm-output-perturbation"),
    ("ridge", "amin2019.erm-output-perturbation-ridge"),
):
    register_design(
        Design(
            _name,
            _amin_erm_reference(_loss),
            spec_reference(_name),
            plain_adapter,
            {
                "weights": ("tau", "n_min"),
                "statistic": ("tau", "Lambda", "n_min"),
                "sensitivity": ("tau", "Lambda", "n_min"),
                "noise_scale": ("epsilon", "tau", "Lambda", "n_min"),
            },
            ("weights", "statistic", "noise_scale"),
            _amin_erm_cases(_loss),
            "add/remove user",
            f"userdp.reference.amin2019_erm ({_loss} loss, R = Y = 1): weights (1 / max(n_tau, n_min) on each user's "
            "first tau records), statistic (the minimiser theta-hat), sensitivity (Delta_2), noise_scale "
            "(Delta_2 / eps)",
            notes="theta-hat is the exact minimiser (the reference's is certified to 1e-9 Delta_2; solve to a gradient "
            "norm below 1e-10). The reference's sensitivity is Delta_2 (1 + 2e-9), the slack for that solver "
            "error; on these vectors Delta_2 < 1, so an exact Delta_2 is within the tolerance.",
            statistical_none=_NO_STATISTICAL[_name],
        )
    )
