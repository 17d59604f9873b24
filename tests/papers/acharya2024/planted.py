"""Planted bugs for Acharya et al. 2024 (PDP-OP and its baselines).

Each bug is a separate implementation (an ``Adapter`` with the stage signatures of
``userdp.properties.acharya2024``) with one named defect, recorded Wycheproof-style.
``tests/papers/acharya2024/test_acharya2024.py`` asserts that the properties in ``caught_by`` catch each one;
the audit-level checks of noise that is too small are in ``tests/papers/acharya2024/test_acharya2024_audits.py``.
"""

from __future__ import annotations

import math

import numpy as np

from userdp.properties.adapter import Adapter
from userdp.reference import acharya2024 as A

from planted import PlantedBug


def _d(D) -> int:
    return D.values.reshape(D.n, -1).shape[1]


def _solve(D, w, lam):
    X, y, _ = A.check_data(D)
    M = (X * w[:, None]).T @ X + lam * np.eye(X.shape[1])
    return np.linalg.solve(M, X.T @ (w * y))


def _make(name, *, weights=None, eta=None, radius=None, lam_guard=True) -> Adapter:
    """PDP-OP with one stage replaced: ``weights(D)`` (default eps / sum eps), ``eta(D, lam)``
    (default Theorem 3.2), ``radius(rng, d, eta, m)`` (default Gamma(d, scale 1/eta))."""
    weights = weights or (lambda D: A.weights(D))
    eta = eta or (lambda D, lam: A.eta(D, lam))
    radius = radius or (lambda rng, d, e, m: rng.gamma(d, 1.0 / e, m))

    def lam_of(Lambda):
        if lam_guard and not float(Lambda) > 0:
            raise ValueError(f"Lambda must be > 0, got {Lambda!r}")
        return float(Lambda)

    def statistic(D, *, Lambda):
        return _solve(D, weights(D), lam_of(Lambda))

    def noise_scale(D, *, Lambda):
        e = eta(D, lam_of(Lambda))
        return math.inf if e == 0 else 1.0 / e

    def sensitivity(D, *, Lambda):  # Theorem A.4 with the implementation's own weights
        lam, d = lam_of(Lambda), _d(D)
        if lam == 0:
            return np.full(D.n, math.inf)
        B = min(1 / math.sqrt(lam), math.sqrt(d) / lam)
        return 2 * weights(D) * math.sqrt(d) * (math.sqrt(d) * B + 1) / lam

    def mechanism(D, rng, size=None, *, Lambda):
        lam = lam_of(Lambda)
        theta = _solve(D, weights(D), lam) if lam > 0 else np.linalg.lstsq(*_ls(D, weights(D)), rcond=None)[0]
        e = eta(D, lam)
        m = 1 if size is None else size
        if e == 0:  # the authors' code at lambda = 0: no noise
            out = np.tile(theta, (m, 1))
        else:
            u = rng.standard_normal((m, theta.size))
            u /= np.linalg.norm(u, axis=1, keepdims=True)
            out = theta + u * radius(rng, theta.size, e, m)[:, None]
        return out[0] if size is None else out

    return Adapter(name, lambda D, *, Lambda: weights(D), statistic, sensitivity, noise_scale, mechanism)


def _ls(D, w):
    X, y, _ = A.check_data(D)
    sw = np.sqrt(w)
    return X * sw[:, None], y * sw


# 1. Gamma with scale eta instead of 1/eta
def _gamma_scale_eta(rng, d, e, m):
    return rng.gamma(d, e, m)  # BUG: scale eta


# 2. w_i = eps_i / n
def _eps_over_n(D):
    return np.asarray(D.epsilons) / D.n  # BUG: does not sum to 1


# 3. eta with d where sqrt(d) belongs
def _eta_d(D, lam):
    d = _d(D)
    B = min(1 / math.sqrt(lam), math.sqrt(d) / lam)
    return lam * float(np.sum(D.epsilons)) / (2 * d * (1 + math.sqrt(d) * B))  # BUG: 2 d, not 2 sqrt(d)


# 5. lambda = 0 accepted: eta = 0, no noise (the authors' code)
def _eta_lambda_zero(D, lam):
    if lam == 0:
        return 0.0  # BUG: releases theta_bar as is
    return A.eta(D, lam)


# 6. the sensitivity of the average record (at the largest eps) instead of record i's
def _eta_average_record(D, lam):
    d = _d(D)
    B = min(1 / math.sqrt(lam), math.sqrt(d) / lam)
    delta_avg = 2 * (1 / D.n) * math.sqrt(d) * (math.sqrt(d) * B + 1) / lam  # BUG: w_i -> 1/n
    return float(np.max(D.epsilons)) / delta_avg


# 7. Theorem 3.4 at a B that some neighbour violates
B_BAD = 0.01


def _eta_thm34_bad_B(D, lam):
    return A.eta(D, lam, B=B_BAD)  # BUG: Assumption 3.3 false


# 4. Jorgensen probability eps_i / t
def _jorgensen_linear(D, *, Lambda, threshold):
    return np.minimum(1.0, np.asarray(D.epsilons) / threshold)  # BUG: not (e^eps - 1)/(e^t - 1)


# 8. the non-personalized baseline at the mean eps
def _nonpersonalized_mean():
    def flat(D):
        return D.with_fields(epsilons=np.full(D.n, float(np.mean(D.epsilons))))  # BUG: mean, not min

    return Adapter(
        "bug: non-personalized at mean eps",
        None,
        lambda D, *, Lambda: A.statistic(flat(D), Lambda),
        None,
        lambda D, *, Lambda: A.noise_scale(flat(D), Lambda),
    )


BUGS = (
    PlantedBug(
        "gamma-scale-eta",
        "wrong distribution parameter",
        "the radius drawn as Gamma(d, scale eta) instead of scale 1/eta: for eta > 1 the noise "
        "is eta^2 times too small",
        "numpy's gamma takes a scale, Remark 3.1 gives a rate (the authors' code passes 1/eta)",
        ("prop_noise_is_gamma_radius_uniform_direction",),
        _make("bug: Gamma scale eta", radius=_gamma_scale_eta),
    ),
    PlantedBug(
        "weights-eps-over-n",
        "normalisation",
        "w_i = eps_i / n: the weights sum to mean eps, not 1, so theta_bar and its sensitivity "
        "change while eta keeps Theorem 3.2's value",
        "a project review (the 1/n of the paper's L(theta, lambda) carried into eq. 2)",
        ("prop_weights_sum_to_one", "prop_statistic_is_weighted_ridge", "prop_eta_times_sensitivity_is_eps"),
        _make("bug: w = eps / n", weights=_eps_over_n),
    ),
    PlantedBug(
        "eta-d-for-sqrt-d",
        "formula transcription",
        "eta = lambda sum eps / (2 d (1 + sqrt(d) B)): d where sqrt(d) belongs (too much noise "
        "for d > 1; the mirror image, sqrt(d) where d belongs, too little)",
        "a project review (Theorem A.4's sqrt(d) and d B mixed up)",
        ("prop_eta_is_theorem32",),
        _make("bug: eta with d for sqrt(d)", eta=_eta_d),
    ),
    PlantedBug(
        "jorgensen-linear-probability",
        "wrong amplification",
        "p_i = eps_i / t instead of (e^eps_i - 1)/(e^t - 1): the amplified level "
        "ln(1 + p_i (e^t - 1)) exceeds eps_i for every eps_i < t",
        "a project review (the small-eps approximation e^x - 1 ~ x)",
        ("prop_jorgensen_levels_within_eps",),
        Adapter("bug: Jorgensen p = eps / t", _jorgensen_linear),
    ),
    PlantedBug(
        "lambda-zero-no-noise",
        "missing guard",
        "lambda = 0 accepted: eta = 0 and theta_bar released with no noise at all",
        "found in the authors' public code (docs/papers: krishnacharya/pp-ridge)",
        ("prop_refuses_lambda_zero",),
        _make("bug: lambda = 0 releases theta_bar", eta=_eta_lambda_zero, lam_guard=False),
    ),
    PlantedBug(
        "average-record-sensitivity",
        "sensitivity under-estimate",
        "eta from the sensitivity of an average record (w = 1/n) at the largest eps: record i's "
        "loss is eps_max n w_i = n eps_max eps_i / sum eps > eps_i unless all eps are equal",
        "a project review (non-personalized output perturbation's single Delta reused)",
        (
            "prop_eta_is_theorem32",
            "prop_eta_times_sensitivity_is_eps",
            "prop_loss_bounded_on_corner_neighbours",
            "prop_loss_bounded_on_sampled_neighbour",
        ),
        _make("bug: average-record sensitivity", eta=_eta_average_record),
    ),
    PlantedBug(
        "theorem34-violated-B",
        "assumption not checked",
        "Theorem 3.4's eta at B = 0.01 on data whose ||theta_bar_0|| is ~10 on both sides of a "
        "pair: on ``assumption_breaking_example`` record 0's loss is 1.48 eps_0",
        "a project review (Assumption 3.3 checked on the dataset at hand only, or not at all)",
        ("prop_loss_bounded_on_corner_neighbours",),
        _make("bug: Theorem 3.4 with a violated B", eta=_eta_thm34_bad_B),
    ),
    PlantedBug(
        "nonpersonalized-mean-eps",
        "wrong baseline",
        "the non-personalized baseline at the mean eps instead of the min: records with "
        "eps_i < mean get less than their eps_i",
        "derived here (the baseline's 'every eps_i := min eps' read as an average budget)",
        ("prop_nonpersonalized_is_constant_profile",),
        _nonpersonalized_mean(),
    ),
)
