"""Planted bugs for Epasto et al. 2020 Algorithm 2, weighted ERM by noisy projected gradient
descent (``reference/epasto2020_erm.py``): Wycheproof-style records.

Each bug is a separate implementation: an ``Adapter`` whose stages the property suite of
``userdp.properties.epasto2020_erm`` checks. tests/papers/epasto2020/test_epasto2020_erm.py asserts that each one
is caught.
"""

from __future__ import annotations

import numpy as np

from userdp.properties.adapter import Adapter
from userdp.properties.epasto2020_erm import epasto_reference
from userdp.reference import epasto2020_erm as E
from userdp.reference import erm
from planted import PlantedBug


def _epasto(name: str, **changes) -> Adapter:
    ref = epasto_reference()
    stages = {s: getattr(ref, s) for s in ("weights", "statistic", "sensitivity", "noise_scale", "mechanism")}
    stages.update(changes)
    return Adapter(name, **stages)


# ------------------------------------------------ 1. noisy GD sigma ignores the T steps
def _noise_no_composition(D, c, *, epsilon, delta, T, loss="logistic", R=1.0, Y=1.0, radius=1.0, **_):
    return E.noise_scale(
        D, c, epsilon=epsilon, delta=delta, T=1, loss=loss, R=R, Y=Y, radius=radius
    )  # BUG: one step's sigma


def _mechanism_no_composition(D, rng, size=None, *, c, epsilon, delta, T, loss="logistic", R=1.0, Y=1.0, radius=1.0):
    X, y = erm.check_erm_data(D, loss, R, Y)
    sigma = E.noise_scale(D, c, epsilon=epsilon, delta=delta, T=1, loss=loss, R=R, Y=Y, radius=radius)  # BUG
    return E._noisy_gradient_descent(X, y, c, rng, size, sigma=sigma, T=T, loss=loss, R=R, Y=Y, radius=radius)


# ------------------------------------------- 2. user-level Lipschitz from the MEAN user weight
def _sensitivity_mean_weight(D, c, *, loss="logistic", R=1.0, Y=1.0, radius=1.0, **_):
    return 2.0 * E.lipschitz(loss, R, Y, radius) * float(E.user_weight_sums(D, c).mean())  # BUG: mean


# ------------------------------------- 3. each user's weights re-normalised to 1/m per user
def _statistic_per_user_average(D, theta, *, c, loss="logistic", R=1.0, Y=1.0, **_):
    X, y = erm.check_erm_data(D, loss, R, Y)
    W = E.user_weight_sums(D, c)[D.user_index]  # sum_{S_l} c_i for each record's user
    w = np.where(W > 0, c / np.where(W > 0, W, 1.0), 0.0) / D.m  # BUG: c_i / W_l / m, not c_i
    return erm.weighted_gradient(np.asarray(theta, float), X, y, w, loss)


BUGS = [
    PlantedBug(
        name="no-composition",
        bug_type="missing composition over iterations",
        effect="sigma calibrated for one Gaussian step while T steps are released: eps grows about sqrt(T)-fold",
        source="a project review; a frequent DP-SGD mistake (accounting one step, running many)",
        adapter=_epasto("no-composition", noise_scale=_noise_no_composition, mechanism=_mechanism_no_composition),
        caught_by=("prop_noise_accounts_for_steps",),
    ),
    PlantedBug(
        name="mean-user-weight",
        bug_type="average instead of worst case",
        effect="user-level Lipschitz constant from the mean of sum_{S_l} c_i instead of the max: the heaviest "
        "user's gradient moves by more than Delta_2",
        source="a project review ('the sensitivity uses the mean user weight instead of the max')",
        adapter=_epasto("mean-user-weight", sensitivity=_sensitivity_mean_weight),
        caught_by=("prop_gradient_within_sensitivity",),
    ),
    PlantedBug(
        name="per-user-renormalised-weights",
        bug_type="wrong user-level loss",
        effect="each user's weights are rescaled to sum to 1/m (c_i / (m sum_{S_l} c_i)): every user counts "
        "equally whatever c says, so the step is not sum_i c_i grad l and c no longer enters linearly",
        source="derived here: l'(theta, M_j) read as the user's weighted AVERAGE loss rather than its weighted sum",
        adapter=_epasto("per-user-renormalised-weights", statistic=_statistic_per_user_average),
        caught_by=("prop_weights_enter_linearly",),
    ),
]
