"""The test-vector designs of zhao2024 (the datasets and public parameters of its vectors, each flagged
with the bug classes it exposes); ``audits/validation/vector_cases.py`` has the records and the
vocabulary of bug classes, ``audits/validation/vectors.py`` computes the expected values."""

from __future__ import annotations

from typing import Any

import numpy as np
from userdp.properties.zhao2024 import HLMAdapter
from userdp.properties.zhao2024 import REFERENCE
from userdp.properties.zhao2024 import REFERENCE_GLOBAL
from userdp.properties.zhao2024_wme import REFERENCE as WME_REFERENCE
from userdp.reference.data import UserDataset
from userdp.audits.papers._vectors import plain_adapter, spec_reference
from userdp.audits.validation.vector_cases import Design, VectorCase, register_design

__all__: list[str] = []


# Why an algorithm of this paper has no statistical vector (yet): the files' statisticalNote, printed in
# docs/vectors.md ("Statistical vectors").
_NO_STATISTICAL = {
    "zhao2024.hlm": (
        "a propose-test-release step (a Laplace-noised distance decides whether to release) before Gaussian "
        "noise: the release's law is a mixture of a refusal and a Gaussian, whose weight the files' tests do "
        "not take"
    ),
    "zhao2024.hlm-d3": (
        "a propose-test-release step (a Laplace-noised distance decides whether to release) before Gaussian "
        "noise: the release's law is a mixture of a refusal and a Gaussian, whose weight the files' tests do "
        "not take"
    ),
    "zhao2024.hlm-global": (
        "not yet: the release is Gaussian around Clip(x_K, R_c) with x_K an iterative solver's output (a "
        "closed form at a pair whose x_K is within R_c), but the design's datasets hold thousands of records "
        "and its noise_scale stage is a table, not the scale"
    ),
    "zhao2024.wme": (
        "two stages, the second at a bin chosen from the first's noisy counts: a mixture over the bins, with "
        "no closed-form law"
    ),
}


# ================================================================== Zhao et al. 2024 (HLM, WME)
def _hlm_users(kind: str, n: int, top: int, seed: int) -> Any:
    """n users with m_l = ceil(top / sqrt(l)) items: "het" items uniform on [-0.6, 0.6] around +0.3
    (users of >= 10 items) or -0.3 (the others); "d2" the same in d = 2."""

    rng = np.random.default_rng(seed)
    m = np.ceil(top / np.sqrt(np.arange(1, n + 1))).astype(np.int64)
    ids = np.repeat(np.arange(n), m)
    big = (m >= 10)[ids]
    if kind == "het":
        x = np.where(big, 0.3, -0.3) + rng.uniform(-0.6, 0.6, ids.size)
    else:
        x = (rng.uniform(-1, 1, (ids.size, 2)) + np.where(big, 0.2, -0.2)[:, None] * np.array([1.0, 0.5])) / np.sqrt(2)
    return UserDataset(np.round(x, 4), ids)


def _hlm_cases() -> list:
    p = {"epsilon": 3.0, "delta": 1e-5, "R": 1.0, "R_c": 1.0}
    crossing = UserDataset(np.zeros(65), np.arange(65))
    split = UserDataset(np.r_[np.zeros(50), np.full(49, 100.0)], np.arange(99))
    het, d2 = _hlm_users("het", 120, 40, 1), _hlm_users("d2", 80, 30, 3)
    V = VectorCase
    return [
        V(
            het,
            p,
            ("unnormalised-weights", "understated-sensitivity", "accounting", "data-dependent-choice"),
            "120 imbalanced users (40 items down to 4), heavy users centred at +0.3, light ones at -0.3, eps = 3, "
            "delta = 1e-5, R = R_c = 1: weights min(m_i, cap) normalised to sum 1, thresholds T_i = tau R / "
            "sqrt(m_i), the PTR distance shifting the margins as the minimiser moves, and noise scales at the "
            "split budget (eps/4 and delta/2 for the test) with kappa0 from the public counts",
        ),
        V(
            crossing,
            p,
            ("understated-sensitivity", "accounting"),
            "65 one-item users at 0: the PTR distance (16) sits just above the threshold (15.35)",
        ),
        V(
            split,
            p,
            ("data-dependent-refusal",),
            "50 one-item users at 0 and 49 at +100: every user is linear at the weighted-mean start, where a "
            "Newton solver capped at 100 steps stops above its certificate; the reference's certified solver "
            "answers (a release must not depend on whether a solver converged)",
        ),
        V(
            d2,
            p,
            ("unnormalised-weights", "understated-sensitivity"),
            "80 imbalanced users in d = 2 (the Huber loss on the L2 norm)",
        ),
        V(
            crossing,
            {**p, "epsilon": 0.0},
            ("input-not-refused",),
            "epsilon = 0: no budget for the test or the noise",
            "invalid",
        ),
        V(
            crossing,
            {**p, "delta": 0.0},
            ("input-not-refused",),
            "delta = 0: Gaussian noise and PTR need delta > 0",
            "invalid",
        ),
    ]


def _hlm_reference():
    return REFERENCE


def _hlm_adapter():
    return HLMAdapter


_HLM = ("epsilon", "delta", "R", "R_c")
register_design(
    Design(
        "zhao2024.hlm",
        _hlm_reference,
        spec_reference("zhao2024.hlm"),
        _hlm_adapter,
        {s: _HLM for s in ("weights", "thresholds", "statistic", "sensitivity", "ptr_distance", "noise_scale")},
        ("weights", "thresholds", "statistic", "sensitivity", "ptr_distance", "noise_scale"),
        _hlm_cases,
        "replace user's items (the item counts m_i public)",
        "userdp.reference.zhao2024 (derived there: the poster gives no w_i, T_i or calibration): weights, "
        "thresholds, statistic (the Huber minimiser mu0), sensitivity (B), ptr_distance (gamma), noise_scale "
        "(sigma_pass, sigma_fallback, the threshold and the budget split)",
        notes="noise_scale is an object of named values; it is compared key by key. ptr_distance (gamma) counts "
        "the users whose margin at the solver's certified point reaches each threshold t_j = (j + 1) B + shift; "
        "in d >= 2 the shift includes rho0 = B (reference/zhao2024.py, items 3 and 5), so an implementation "
        "without it counts about one more there.",
        statistical_none=_NO_STATISTICAL["zhao2024.hlm"],
    )
)


def _hlm_d3_cases() -> list:
    p = {"epsilon": 3.0, "delta": 1e-5, "R": 1.0, "R_c": 1.0}
    rng = np.random.default_rng(9)
    m = np.ceil(30 / np.sqrt(np.arange(1, 81))).astype(np.int64)
    ids = np.repeat(np.arange(80), m)
    off = np.where((m >= 10)[ids], 1.0, -1.0)[:, None] * np.array([0.2, 0.1, 0.05])
    het = UserDataset(np.round((rng.uniform(-1, 1, (ids.size, 3)) + off) / np.sqrt(3), 4), ids)
    crossing = UserDataset(np.zeros((65, 3)), np.arange(65))
    split = UserDataset(np.r_[np.zeros(50), np.full(49, 100.0)][:, None] * np.ones(3), np.arange(99))
    V = VectorCase
    return [
        V(
            het,
            p,
            ("unnormalised-weights", "understated-sensitivity", "accounting"),
            "80 imbalanced users in d = 3 (30 items down to 4), heavy users offset along (0.2, 0.1, 0.05): the vector "
            "Huber loss on the L2 norm, B from max w_i T_i, and gamma with the thresholds shifted by e + rho0, "
            "rho0 = B in d >= 2 (an implementation without rho0 counts one more level)",
        ),
        V(
            crossing,
            p,
            ("understated-sensitivity", "accounting"),
            "65 one-item users at 0 in d = 3: every margin is T, so gamma counts the levels (j + 1) B + e + B below T",
        ),
        V(
            split,
            p,
            ("data-dependent-refusal",),
            "50 one-item users at 0 and 49 at +100 (1, 1, 1): every user is linear at the weighted-mean start, where "
            "a capped Newton solver stops above its certificate; the reference's guaranteed path answers",
        ),
        V(
            crossing,
            {**p, "epsilon": 0.0},
            ("input-not-refused",),
            "epsilon = 0: no budget for the test or the noise",
            "invalid",
        ),
        V(crossing, {**p, "R_c": -1.0}, ("input-not-refused",), "R_c = -1: the clipping radius must be > 0", "invalid"),
    ]


register_design(
    Design(
        "zhao2024.hlm-d3",
        _hlm_reference,
        spec_reference("zhao2024.hlm-d3"),
        _hlm_adapter,
        {s: _HLM for s in ("weights", "thresholds", "statistic", "sensitivity", "ptr_distance", "noise_scale")},
        ("weights", "thresholds", "statistic", "sensitivity", "ptr_distance", "noise_scale"),
        _hlm_d3_cases,
        "replace user's items (the item counts m_i public)",
        "userdp.reference.zhao2024 in d = 3: the same stages as zhao2024.hlm on vector items",
        notes="As zhao2024.hlm; in d = 3 the statistic is the certified point of the guaranteed solver (within e of "
        "the minimiser), and gamma's thresholds include rho0 = B.",
        statistical_none=_NO_STATISTICAL["zhao2024.hlm-d3"],
    )
)


def _global_cases() -> list:
    def users(y, m):
        y, m = np.asarray(y, float), np.asarray(m, np.int64)
        ids = np.repeat(np.arange(m.size), m)
        return UserDataset(y[ids], ids)

    p = {"epsilon": 3.0, "delta": 1e-5, "R": 1.0, "R_c": 1.0, "support": 1.0}
    r = np.arange(1, 301, dtype=float) ** -2.0
    m = np.maximum(1, np.round(20 * r / r.mean())).astype(np.int64)
    rng = np.random.default_rng(5)
    imb = users(np.round(rng.uniform(-0.5, 0.5, m.size), 4), m)
    curv = users(np.r_[np.ones(20), -np.ones(3)], np.r_[np.ones(20, int), np.full(3, 2)])
    ids = np.repeat(np.arange(40), np.r_[np.ones(30, int), np.full(10, 3)])
    d2 = UserDataset(np.round(rng.uniform(-0.6, 0.6, (ids.size, 2)), 4), ids)
    V = VectorCase
    return [
        V(
            imb,
            p,
            ("understated-sensitivity", "unnormalised-weights"),
            "300 users at the poster's counts (gamma = 2: 1 to 1,300 items), averages uniform on [-0.5, 0.5], eps = "
            "3, delta = 1e-5, R = R_c = support = 1, theta chosen from the counts: equalised weights min(m_i, theta / "
            "min(T_i, rho)) normalised, kappa_G over the one-item users, S = 2c / kappa_G + 2e",
        ),
        V(
            curv,
            {**p, "theta": 1.0},
            ("understated-sensitivity",),
            "20 one-item users at +1 and 3 two-item users at -1, theta = 1: the two-item users (T = sqrt 2 < 2 rho) "
            "must not count in kappa_G; x_K is 0.79, where they are linear",
        ),
        V(
            curv,
            {**p, "theta": 1.0, "epsilon": 1.0},
            ("solver-error",),
            "the same at eps = 1: x_K within the public e of the exact minimiser (0.7878...)",
        ),
        V(
            d2,
            {**p, "R": 1.5},
            ("understated-sensitivity",),
            "40 users in d = 2 (30 one-item users, 10 of three items), R = 1.5: in d >= 2 the radii rho_s, rho_G "
            "exceed rho by (d + 8) u",
        ),
        V(curv, {**p, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0: no budget for the noise", "invalid"),
        V(
            users([0.2, -0.3, 0.1], [2, 3, 4]),
            p,
            ("input-not-refused",),
            "no one-item user (every T_i < 2 rho): no guaranteed curvature, refused from the counts",
            "invalid",
        ),
    ]


def _global_reference():
    return REFERENCE_GLOBAL


_GLOBAL = ("epsilon", "delta", "R", "R_c", "support", "theta")
register_design(
    Design(
        "zhao2024.hlm-global",
        _global_reference,
        spec_reference("zhao2024.hlm-global"),
        _hlm_adapter,
        {s: _GLOBAL for s in ("weights", "thresholds", "statistic", "sensitivity", "noise_scale")},
        ("weights", "thresholds", "statistic", "sensitivity", "noise_scale"),
        _global_cases,
        "replace user's items (the item counts m_i public)",
        'userdp.reference.zhao2024_calibration, calibration "global" (G1-G5): equalised_weights, thresholds, the '
        "statistic x_K (K public projected-gradient steps), sensitivity S, noise_scale (sigma at the whole budget, "
        "Delta, e, kappa_G, rho_G)",
        notes="theta (the weights' cap) is chosen from the public counts when a vector does not give it; the "
        "statistic is x_K, within the public e of the exact minimiser, so an exact solver differs from it by up "
        "to e.",
        statistical_none=_NO_STATISTICAL["zhao2024.hlm-global"],
    )
)


def _wme_users(values, m: int = 50) -> Any:
    values = np.asarray(values, float)
    return UserDataset(np.repeat(values, m), np.repeat(np.arange(values.size), m))


def _wme_cases() -> list:
    p = {"epsilon": 3.0, "delta": 1e-5, "R": 1.0}
    rng = np.random.default_rng(11)
    m = 20 + np.ceil(200 / np.arange(1, 61)).astype(np.int64)
    ids = np.repeat(np.arange(60), m)
    x = np.clip(rng.uniform(-0.3, 0.3, 60)[ids] + rng.uniform(-0.7, 0.7, ids.size), -1, 1)
    gen = UserDataset(np.round(x, 4), ids)
    V = VectorCase
    return [
        V(
            _wme_users(np.r_[np.full(11, -0.9), np.full(10, 0.9)]),
            p,
            ("accounting",),
            "11 users at -0.9 R and 10 at +0.9 R, 50 items each, eps = 3, delta = 1e-5: the two stages' budgets "
            "(eps/2, delta/2 each) and noise scales",
        ),
        V(gen, {**p, "epsilon": 1.0}, ("accounting",), "60 imbalanced users (220 down to 24 items), eps = 1"),
        V(
            _wme_users([0.0, 2.0]),
            p,
            ("input-not-refused",),
            "an item at 2 R, outside the declared support [-R, R]",
            "invalid",
        ),
        V(_wme_users(np.zeros(5)), {**p, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
    ]


def _wme_reference():
    return WME_REFERENCE


register_design(
    Design(
        "zhao2024.wme",
        _wme_reference,
        spec_reference("zhao2024.wme"),
        plain_adapter,
        {"sensitivity": ("epsilon", "delta", "R"), "noise_scale": ("epsilon", "delta", "R")},
        ("sensitivity", "noise_scale"),
        _wme_cases,
        "replace user's items",
        "userdp.reference.zhao2024_wme (Levy et al. 2021's WME): sensitivity (the two stages' sensitivities), "
        "noise_scale (their budgets and Gaussian scales)",
        notes="WME's statistic is a mixture over the noisy argmax, so there is no noise-free statistic stage; "
        "validate compares its releases.",
        statistical_none=_NO_STATISTICAL["zhao2024.wme"],
    )
)
