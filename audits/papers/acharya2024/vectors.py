"""The test-vector designs of acharya2024 (the datasets and public parameters of its vectors, each flagged
with the bug classes it exposes); ``audits/validation/vector_cases.py`` has the records and the
vocabulary of bug classes, ``audits/validation/vectors.py`` computes the expected values."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from userdp.properties.acharya2024 import REFERENCE
from userdp.properties.acharya2024 import REFERENCE_JORGENSEN
from userdp.properties.acharya2024 import REFERENCE_NONPERSONALIZED
from userdp.properties.adapter import Adapter
from userdp.reference import acharya2024 as A
from userdp.reference.data import UserDataset
from userdp.audits.papers._vectors import plain_adapter, released_by, spec_reference
from userdp.audits.validation.vector_cases import Design, VectorCase, register_design

__all__: list[str] = []


# Why an algorithm of this paper has no statistical vector (yet): the files' statisticalNote, printed in
# docs/vectors.md ("Statistical vectors").
_NO_STATISTICAL = {
    "acharya2024.jorgensen-max": (
        "each release keeps a Poisson sample of the records (Jorgensen's probabilities) before L2-Laplace "
        "output perturbation: a mixture over the samples, with no closed-form law"
    ),
    "acharya2024.jorgensen-mean": ("as acharya2024.jorgensen-max: a mixture over the sampled records"),
    "acharya2024.nonpersonalized": (
        "output perturbation with L2-Laplace noise (density proportional to exp(-eta ||z||_2): a Gamma norm "
        "in a uniform direction, mechanisms.l2_laplace_noise): one coordinate's law is a Bessel-function "
        "density, neither Laplace nor Gaussian, a family the files do not define yet"
    ),
    "acharya2024.pdp-op": (
        "output perturbation with L2-Laplace noise (density proportional to exp(-eta ||z||_2): a Gamma norm "
        "in a uniform direction, mechanisms.l2_laplace_noise): one coordinate's law is a Bessel-function "
        "density, neither Laplace nor Gaussian, a family the files do not define yet"
    ),
    "acharya2024.pdp-op-d2": (
        "output perturbation with L2-Laplace noise (density proportional to exp(-eta ||z||_2): a Gamma norm "
        "in a uniform direction, mechanisms.l2_laplace_noise): one coordinate's law is a Bessel-function "
        "density, neither Laplace nor Gaussian, a family the files do not define yet"
    ),
}


# ================================================================== Acharya et al. 2024 (PDP-OP)
def _pdp_data(n: int, d: int, seed: int, profile=None) -> Any:
    """x uniform on [0, 1]^d, y = x theta* / sqrt(d) (+ noise) clipped to [-1, 1], eps_i on [0.05, 2]."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(0.0, 1.0, (n, d)), 4)
    theta = rng.standard_normal(d)
    theta /= np.linalg.norm(theta)
    y = np.clip(np.round(X @ theta / math.sqrt(d) + 0.1 * rng.standard_normal(n), 4), -1.0, 1.0)
    eps = np.round(rng.uniform(0.05, 2.0, n), 3) if profile is None else np.asarray(profile, float)
    return UserDataset(X if d > 1 else X[:, 0], np.arange(n), labels=y, epsilons=eps)


def _pdp_cases() -> list:
    D2, D1, D3 = _pdp_data(8, 2, 1), _pdp_data(10, 1, 2), _pdp_data(30, 3, 5)
    V = VectorCase
    bad_x = np.array(D2.values)
    bad_x[0, 0] = 1.5
    bad_y = np.array(D2.labels)
    bad_y[1] = -2.0
    return [
        V(
            D2,
            {"Lambda": 100.0},
            (
                "unnormalised-weights",
                "noise-formula",
                "understated-sensitivity",
                "unchecked-assumption",
                "biased-estimate",
            ),
            "n = 8, d = 2, eps_i from 0.05 to 2, lambda = 100: w_i = eps_i / sum eps (they sum to 1, not to mean "
            "eps); eta is Theorem 3.2's, with sqrt(d) (not d) and each record's own sensitivity 2 w_i (d B + "
            "sqrt(d)) / lambda (not an average record's), and without Theorem 3.4's bound B; theta_bar is the "
            "ridge at this lambda (a ridge at 1.1 lambda moves it)",
        ),
        V(
            D2,
            {"Lambda": 1.0},
            ("unnormalised-weights", "noise-formula"),
            "the same at lambda = 1, where B(lambda) = min(1/sqrt(lambda), sqrt(d)/lambda) = 1",
        ),
        V(D1, {"Lambda": 10.0}, ("unnormalised-weights", "understated-sensitivity"), "n = 10, d = 1, lambda = 10"),
        V(
            D3,
            {"Lambda": 1.0},
            ("noise-formula", "understated-sensitivity"),
            "n = 30, d = 3, lambda = 1: d and sqrt(d) differ by 1.7x",
        ),
        V(
            D2,
            {"Lambda": 0.3},
            ("understated-sensitivity", "noise-formula"),
            "lambda = 0.3 < 1: B(lambda) = min(1/sqrt(lambda), sqrt(d)/lambda) = 1.83, where min(1, sqrt(d)/lambda) "
            "= 1 gives a sensitivity (sqrt(d) B + 1) 1.48x too small",
        ),
        V(
            D2,
            {"Lambda": 0.0},
            ("input-not-refused",),
            "lambda = 0: eta = 0, no noise at all (Theorem 3.2 needs lambda > 0; found in the authors' code)",
            "invalid",
        ),
        V(D2, {"Lambda": -1.0}, ("input-not-refused",), "lambda = -1", "invalid"),
        V(
            D2.with_fields(values=bad_x),
            {"Lambda": 1.0},
            ("input-not-refused",),
            "a feature 1.5 outside [0, 1]^d (Theorem 3.2 assumes x in [0, 1]^d)",
            "invalid",
        ),
        V(
            D2.with_fields(labels=bad_y),
            {"Lambda": 1.0},
            ("input-not-refused",),
            "a label -2 outside [-1, 1]",
            "invalid",
        ),
    ]


def _pdp_reference():
    return REFERENCE


register_design(
    Design(
        "acharya2024.pdp-op",
        _pdp_reference,
        spec_reference("acharya2024.pdp-op"),
        plain_adapter,
        {s: ("Lambda",) for s in ("weights", "statistic", "sensitivity", "noise_scale")},
        ("weights", "statistic", "sensitivity", "noise_scale"),
        _pdp_cases,
        "replace record (the profile eps_i public)",
        "userdp.reference.acharya2024: weights (w_i = eps_i / sum eps), statistic (the weighted ridge theta_bar), "
        "sensitivity (each record's Delta_i, Theorem A.4), noise_scale (1 / eta, Theorem 3.2)",
        notes="The dataset's epsilons are the privacy profile eps_i (one per record, public); the labels are y.",
        statistical_none=_NO_STATISTICAL["acharya2024.pdp-op"],
    )
)


def _pdp_d2_cases() -> list:
    return [c for c in _pdp_cases() if c.result == "invalid" or np.ndim(c.dataset.values) == 2]


register_design(
    Design(
        "acharya2024.pdp-op-d2",
        _pdp_reference,
        spec_reference("acharya2024.pdp-op-d2"),
        plain_adapter,
        {s: ("Lambda",) for s in ("weights", "statistic", "sensitivity", "noise_scale")},
        ("weights", "statistic", "sensitivity", "noise_scale"),
        _pdp_d2_cases,
        "replace record (the profile eps_i public)",
        "userdp.reference.acharya2024 (the same algorithm as acharya2024.pdp-op, audited in d = 2 first): weights, "
        "statistic, sensitivity, noise_scale (1 / eta, Theorem 3.2)",
        notes="The vectors of acharya2024.pdp-op with d >= 2.",
        statistical_none=_NO_STATISTICAL["acharya2024.pdp-op-d2"],
    )
)


def _np_cases() -> list:
    D2, D3 = _pdp_data(8, 2, 1), _pdp_data(30, 3, 5)
    flat = _pdp_data(6, 2, 4, profile=np.full(6, 0.7))
    V = VectorCase
    bad_x = np.array(D2.values)
    bad_x[0, 0] = 1.5
    return [
        V(
            D2,
            {"Lambda": 100.0},
            ("accounting", "weight-formula"),
            "n = 8, d = 2, eps_i from 0.28 to 1.94 (min 0.28, mean 1.02), lambda = 100: uniform weights 1/n "
            "(not eps_i / sum eps) and eta at n min eps (not n mean eps)",
        ),
        V(D3, {"Lambda": 1.0}, ("accounting", "weight-formula"), "n = 30, d = 3, lambda = 1"),
        V(flat, {"Lambda": 3.0}, (), "a flat profile (every eps_i = 0.7): the baseline is PDP-OP itself"),
        V(D2, {"Lambda": 0.0}, ("input-not-refused",), "lambda = 0: eta = 0, no noise", "invalid"),
        V(
            D2.with_fields(values=bad_x),
            {"Lambda": 1.0},
            ("input-not-refused",),
            "a feature 1.5 outside [0, 1]^d",
            "invalid",
        ),
    ]


def _np_reference():
    return REFERENCE_NONPERSONALIZED


register_design(
    Design(
        "acharya2024.nonpersonalized",
        _np_reference,
        spec_reference("acharya2024.nonpersonalized"),
        plain_adapter,
        {"statistic": ("Lambda",), "noise_scale": ("Lambda",)},
        ("statistic", "noise_scale"),
        _np_cases,
        "replace record (the profile eps_i public)",
        "userdp.reference.acharya2024: statistic and noise_scale of PDP-OP on the flat profile min eps "
        "(nonpersonalized_epsilons): the ridge with weights 1/n, and 1 / eta at n min eps",
        notes="The dataset's epsilons are the personalized profile; the baseline reads only its minimum.",
        statistical_none=_NO_STATISTICAL["acharya2024.nonpersonalized"],
    )
)


def _jorgensen_bind(threshold: str):
    """The suite's Jorgensen stages take the threshold t; the algorithm fixes t = max (or mean) eps."""

    def bind(adapter):

        w = adapter.weights
        return Adapter(
            f"{adapter.name} (t = {threshold} eps)",
            weights=None
            if w is None
            else (lambda D, *, Lambda: w(D, Lambda=Lambda, threshold=A.jorgensen_threshold(D, threshold))),
        )

    return bind


def _jorgensen_cases(threshold: str):
    def cases() -> list:
        D2, D1 = _pdp_data(8, 2, 1), _pdp_data(10, 1, 2)
        g = np.random.default_rng(41)
        groups = 2 * np.r_[np.round(g.uniform(0.01, 0.2, 4), 3), np.round(g.uniform(0.2, 1.0, 5), 3), np.ones(3)]
        D3 = _pdp_data(12, 2, 6, profile=groups)
        V = VectorCase
        bad_y = np.array(D2.labels)
        bad_y[1] = -2.0
        return [
            V(
                D2,
                {"Lambda": 100.0},
                ("accounting",),
                f"n = 8, eps_i from 0.28 to 1.94, t = {threshold} eps: p_i = min(1, (e^eps_i - 1) / (e^t - 1)) (not "
                "eps_i / t, not e^(eps_i - t), not 1 for every record)",
            ),
            V(
                D3,
                {"Lambda": 10.0},
                ("accounting",),
                "12 records, the three-group profile (eps 0.07 to 2): probabilities from "
                f"{'0.011' if threshold == 'max' else '0.035'} to 1",
            ),
            V(D1, {"Lambda": 1.0}, ("accounting",), "n = 10, d = 1"),
            V(D2, {"Lambda": 0.0}, ("input-not-refused",), "lambda = 0: no noise on the kept records", "invalid"),
            V(
                D2.with_fields(labels=bad_y),
                {"Lambda": 1.0},
                ("input-not-refused",),
                "a label -2 outside [-1, 1]",
                "invalid",
            ),
        ]

    return cases


def _jorgensen_reference(threshold: str):
    def get():
        return released_by(f"acharya2024.jorgensen-{threshold}", _jorgensen_bind(threshold)(REFERENCE_JORGENSEN))

    return get


for _t in ("max", "mean"):
    register_design(
        Design(
            f"acharya2024.jorgensen-{_t}",
            _jorgensen_reference(_t),
            spec_reference(f"acharya2024.jorgensen-{_t}"),
            plain_adapter,
            {"weights": ("Lambda",)},
            ("weights",),
            _jorgensen_cases(_t),
            "replace record (the profile eps_i public)",
            f"userdp.reference.acharya2024: jorgensen_probabilities at t = jorgensen_threshold(dataset, {_t!r}) (the "
            "weights stage: each record's sampling probability)",
            notes="The release subsamples records, so its only noise-free stage is the sampling probabilities p_i "
            '("weights"); validate compares the releases as distributions.',
            bind=_jorgensen_bind(_t),
            statistical_none=_NO_STATISTICAL[f"acharya2024.jorgensen-{_t}"],
        )
    )
