"""The test-vector designs of krichene2023 (the datasets and public parameters of its vectors, each flagged
with the bug classes it exposes); ``audits/validation/vector_cases.py`` has the records and the
vocabulary of bug classes, ``audits/validation/vectors.py`` computes the expected values."""

from __future__ import annotations

from typing import Any

import numpy as np
from userdp.properties.krichene2023 import MultiTaskAdapter
from userdp.properties.krichene2023 import REFERENCE
from userdp.reference.data import UserDataset
from userdp.audits.papers.krichene2023.specs import SSP_KEYS  # the parameters, named once
from userdp.audits.papers._vectors import released_by, spec_reference
from userdp.audits.validation.vector_cases import Design, VectorCase, register_design

__all__: list[str] = []


# Why an algorithm of this paper has no statistical vector (yet): the files' statisticalNote, printed in
# docs/vectors.md ("Statistical vectors").
_NO_STATISTICAL = {
    "krichene2023.noisy-gd": (
        "Gaussian noise passed through projected gradient steps: the release is a nonlinear function of every "
        "step's noise, with no closed-form law"
    ),
    "krichene2023.ssp": (
        "Gaussian noise on the sufficient statistics, then a ridge solve: the release is a matrix inverse of "
        "noisy statistics, with no closed-form law"
    ),
}


# ================================================================== Krichene et al. 2023 (SSP)
def _ssp_graph(labels=(1.0, 1.0, 0.3, -0.4, -7.0), x0: float = 1.0) -> Any:
    """Records (task, user, x, y): (0, 0), (1, 0), (0, 1), (0, 2), (2, 3): user 0 has two tasks."""
    return UserDataset(
        np.array([[x0], [x0], [0.5], [-0.2], [5.0]]),
        np.array([0, 0, 1, 2, 3]),
        labels=np.asarray(labels, float),
        task_ids=np.array([0, 1, 0, 0, 2]),
    )


def _ssp_generated(seed: int = 3) -> tuple:
    g = np.random.default_rng(seed)
    tasks, users = [], []
    for j in range(12):
        mine = [0, 1] if j % 4 == 0 else ([0] if j % 4 in (1, 2) else [1])
        tasks += mine
        users += [j] * len(mine)
    t = np.array(tasks)
    D = UserDataset(
        np.round(1.2 * g.standard_normal((t.size, 2)), 4),
        np.array(users),
        labels=np.round(1.5 * g.standard_normal(t.size), 4),
        task_ids=t,
    )
    return D, {
        "m": 2,
        "n_counts": np.array([10.0, 7.0]),
        "n_users": 12,
        "beta": 1.0,
        "mu": 0.25,
        "Gamma_x": 1.5,
        "Gamma_star": 1.0,
    }


def _ssp_cases() -> list:
    G, gp = _ssp_generated()
    base = {
        "m": 3,
        "n_counts": np.array([4.0, 2.0, 1.0]),
        "n_users": 4,
        "beta": 0.5,
        "mu": 0.5,
        "Gamma_x": 1.0,
        "Gamma_star": 1.0,
    }
    twice = _ssp_graph()
    twice = twice.with_fields(
        values=np.vstack([twice.values, [[0.5]]]),
        user_ids=np.append(twice.user_ids, 1),
        labels=np.append(twice.labels, 0.5),
        task_ids=np.append(twice.task_ids, 0),
    )
    V = VectorCase
    return [
        V(
            _ssp_graph(),
            base,
            ("missing-clipping", "weight-formula", "data-dependent-choice"),
            "d = 1, m = 3, beta = mu = 1/2, public counts n = (4, 2, 1) (the graph's own are (3, 1, 1)): user 3, "
            "alone in task 2, has budget omega_2^2 = 2/3 > beta, so eq. (12) scales its weight by sqrt(beta / budget) "
            "(no clipping differs); user 0's sum omega^2 = 1/2 needs none, where a budget on sum omega (0.99) would "
            "clip it; user 3's label -7 and feature 5 are clipped to Gamma_x Gamma_* = 1 and Gamma_x = 1; the "
            "weights read the public n_i, not the data's counts",
        ),
        V(
            _ssp_graph(),
            {**base, "Gamma_x": 2.0, "Gamma_star": 2.0},
            ("noise-formula", "missing-clipping"),
            "the same graph with Gamma_x = Gamma_* = 2: the two noise scales (Gamma_x^2 on A, Gamma_x^2 Gamma_* on "
            "b) differ",
        ),
        V(
            G,
            gp,
            ("missing-clipping", "data-dependent-choice"),
            "d = 2, m = 2, 12 users (every fourth in both tasks), x ~ 1.2 N(0, I) and y ~ 1.5 N(0, 1), some beyond "
            "Gamma_x = 1.5 and Gamma_x Gamma_* = 1.5 (clipped in L2 and in absolute value), beta = 1, mu = 1/4, "
            "public counts (10, 7) against the data's (9, 6)",
        ),
        V(
            twice,
            base,
            ("input-not-refused",),
            "user 1 holds two records in task 0: Omega is a set of (task, user) pairs, and a second record doubles "
            "its weight, which the budget sum_i w_ij^2 does not count",
            "invalid",
        ),
    ]


def _ssp_reference():
    return REFERENCE


def _ssp_adapter():
    return MultiTaskAdapter


register_design(
    Design(
        "krichene2023.ssp",
        _ssp_reference,
        spec_reference("krichene2023.ssp"),
        _ssp_adapter,
        {
            "weights": ("m", "n_counts", "n_users", "beta", "mu"),
            "statistic": SSP_KEYS,
            "sensitivity": ("beta", "Gamma_x", "Gamma_star"),
            "noise_scale": ("Gamma_x", "Gamma_star"),
        },
        ("weights", "statistic"),
        _ssp_cases,
        "add/remove user",
        "userdp.reference.krichene2023_weights.adaptive_weights (the mu-family from the public counts, eq. (12) "
        "clipping) and userdp.reference.krichene2023: statistic (A-bar_i, b-bar_i of Algorithm 1, clipped data), "
        "sensitivity, noise_scale",
        notes="The dataset's task_ids are the tasks i, user_ids the users j; values are x (n x d), labels y. The "
        "statistic is the pair (A-bar (m x d x d), b-bar (m x d)): an array of two differently shaped parts.",
        statistical_none=_NO_STATISTICAL["krichene2023.ssp"],
    )
)


# ------------------------------------------------------------------ Krichene et al. 2023 Algorithm 2 (noisy GD)
def _gd_cases() -> list:
    base = {
        "m": 3,
        "n_counts": np.array([4.0, 2.0, 1.0]),
        "n_users": 4,
        "beta": 0.5,
        "mu": 0.5,
        "Gamma": 1.0,
        "Lambda": 0.0,
        "eta": 0.01,
        "T": 4,
        "radius": 1e3,
    }
    G, gp = _ssp_generated()
    gp = {k: v for k, v in gp.items() if k not in ("Gamma_x", "Gamma_star")}
    gp.update(Gamma=2.0, Lambda=0.5, eta=0.3, T=6, radius=0.5)
    V = VectorCase
    return [
        V(
            _ssp_graph(),
            base,
            ("missing-clipping", "weight-formula", "data-dependent-choice", "noise-formula"),
            "d = 1, m = 3, beta = mu = 1/2, public counts n = (4, 2, 1) (the graph's own are (3, 1, 1)): user 3, "
            "alone in task 2, has budget omega_2^2 = 2/3 > beta, so eq. (12) scales its weight; user 0's sum "
            "omega^2 = 1/2 needs none (a budget on sum omega would clip it); the weights read the public n_i; "
            "T = 4 steps: the per-step noise sd is Gamma sqrt(T/2) = sqrt(2) Gamma (not Gamma)",
        ),
        V(
            G,
            gp,
            ("data-dependent-choice", "noise-formula"),
            "d = 2, m = 2, 12 users, beta = 1, mu = 1/4, public counts (10, 7) against the data's (9, 6), Gamma = 2, "
            "T = 6: sd 2 sqrt(3)",
        ),
        V(_ssp_graph(), {**base, "beta": 0.0}, ("input-not-refused",), "beta = 0: every weight 0", "invalid"),
        V(
            _ssp_graph(),
            {**base, "Gamma": 0.0},
            ("input-not-refused",),
            "Gamma = 0: gradients clipped to 0, no noise",
            "invalid",
        ),
        V(_ssp_graph(), {**base, "eta": -0.1}, ("input-not-refused",), "a negative step", "invalid"),
        V(_ssp_graph(), {**base, "T": 0}, ("input-not-refused",), "T = 0 steps", "invalid"),
    ]


def _gd_reference():
    return released_by("krichene2023.noisy-gd", REFERENCE)


register_design(
    Design(
        "krichene2023.noisy-gd",
        _gd_reference,
        spec_reference("krichene2023.noisy-gd"),
        _ssp_adapter,
        {"weights": ("m", "n_counts", "n_users", "beta", "mu"), "gd_noise_scale": ("Gamma", "T")},
        ("weights",),
        _gd_cases,
        "add/remove user",
        "userdp.reference.krichene2023_weights.adaptive_weights (the mu-family from the public counts, eq. (12) "
        "clipping) and userdp.reference.krichene2023.gd_noise_scale (Algorithm 2 line 6: Gamma sqrt(T / 2))",
        notes="The release is T projected noisy gradient steps, so the noise-free stages are the weights and the "
        "per-step noise sd; the gradient depends on the iterate and is not pinned here (validate compares "
        "the releases as distributions).",
        statistical_none=_NO_STATISTICAL["krichene2023.noisy-gd"],
    )
)
