"""Planted bugs for the ERM algorithms (Amin 2019 Alg. 1, Epasto 2020 Alg. 2): Wycheproof-style records.

Each bug is a separate implementation: an ``Adapter`` (caught by the property suite of
``userdp.properties.erm``) and, where the audit should also see it, a mechanism with the
claim it wrongly makes and the pairs to audit. tests/test_erm.py asserts that each one is
caught.
"""
from __future__ import annotations


import numpy as np

from userdp.properties.adapter import Adapter
from userdp.properties.erm import amin_reference, epasto_reference
from userdp.reference import amin2019_erm as A
from userdp.reference import epasto2020_erm as E
from userdp.reference import erm
from userdp.reference.data import UserDataset
from userdp.reference.mechanisms import l2_laplace_noise
from userdp.reference.neighbours import ADD_REMOVE_USER, NeighbourPair
from . import PlantedBug




def _amin(name: str, **changes) -> Adapter:
    ref = amin_reference()
    stages = {s: getattr(ref, s) for s in ("weights", "statistic", "sensitivity", "noise_scale", "mechanism")}
    stages.update(changes)
    return Adapter(name, **stages)


def _epasto(name: str, **changes) -> Adapter:
    ref = epasto_reference()
    stages = {s: getattr(ref, s) for s in ("weights", "statistic", "sensitivity", "noise_scale", "mechanism")}
    stages.update(changes)
    return Adapter(name, **stages)


# ------------------------------------------------------------ 1. tau counted per record
def _weights_per_record(D: UserDataset, tau, n_min, **_) -> np.ndarray:
    keep = np.arange(D.n) < tau * D.m                     # BUG: the first tau*m records overall
    return keep / max(int(keep.sum()), n_min)


def _statistic_per_record(D: UserDataset, *, tau, Lambda, n_min, loss="logistic", R=1.0, Y=1.0, **_):
    X, y = erm.check_erm_data(D, loss, R, Y)
    w = _weights_per_record(D, tau, n_min)
    return erm.minimise(X[w > 0], y[w > 0], w[w > 0], Lambda, loss).theta


# ------------------------------------------------- 2. record-level sensitivity 2L/(n Lambda)
def _sensitivity_record_level(*, tau, Lambda, n_min, loss="logistic", R=1.0, Y=1.0, **_):
    return 2.0 * erm.lipschitz(loss, R, Y, Lambda) / (n_min * Lambda)   # BUG: tau dropped


def _noise_record_level(D, *, epsilon, **p):
    return _sensitivity_record_level(**p) / epsilon


def _mechanism_record_level(D, rng, size=None, *, epsilon, **p):
    theta = A.statistic(D, **p)
    return theta + l2_laplace_noise(epsilon / _sensitivity_record_level(**p), theta.size, rng, size)


# ------------------------------------------- 3. the literal reading: the data's own n_tau
def _scale_data_n_tau(D, *, epsilon, tau, Lambda, loss="logistic", R=1.0, Y=1.0, **_):
    n_tau = A.effective_sample_size(D, tau)               # BUG: private n_tau sets the noise
    return 2.0 * tau * erm.lipschitz(loss, R, Y, Lambda) / (n_tau * Lambda) / epsilon


def _mechanism_data_n_tau(D, rng, size=None, *, epsilon, tau, Lambda, n_min=1, loss="logistic", R=1.0, Y=1.0):
    theta = A.statistic(D, tau=tau, Lambda=Lambda, n_min=1, loss=loss, R=R, Y=Y)   # average over n_tau
    scale = _scale_data_n_tau(D, epsilon=epsilon, tau=tau, Lambda=Lambda, loss=loss, R=R, Y=Y)
    return theta + l2_laplace_noise(1.0 / scale, theta.size, rng, size)


# ------------------------------------------------ 4. noisy GD sigma ignores the T steps
def _noise_no_composition(D, c, *, epsilon, delta, T, loss="logistic", R=1.0, Y=1.0, radius=1.0, **_):
    return E.noise_scale(D, c, epsilon=epsilon, delta=delta, T=1, loss=loss, R=R, Y=Y,
                         radius=radius)                                   # BUG: one step's sigma


def _mechanism_no_composition(D, rng, size=None, *, c, epsilon, delta, T, loss="logistic", R=1.0, Y=1.0,
                              radius=1.0):
    X, y = erm.check_erm_data(D, loss, R, Y)
    sigma = E.noise_scale(D, c, epsilon=epsilon, delta=delta, T=1, loss=loss, R=R, Y=Y, radius=radius)  # BUG
    return E._noisy_gradient_descent(X, y, c, rng, size, sigma=sigma, T=T, loss=loss, R=R, Y=Y, radius=radius)


# ------------------------------------------- 5. user-level Lipschitz from the MEAN user weight
def _sensitivity_mean_weight(D, c, *, loss="logistic", R=1.0, Y=1.0, radius=1.0, **_):
    return 2.0 * E.lipschitz(loss, R, Y, radius) * float(E.user_weight_sums(D, c).mean())  # BUG: mean


# ------------------------------------- 6. each user's weights re-normalised to 1/m per user
def _statistic_per_user_average(D, theta, *, c, loss="logistic", R=1.0, Y=1.0, **_):
    X, y = erm.check_erm_data(D, loss, R, Y)
    W = E.user_weight_sums(D, c)[D.user_index]                   # sum_{S_l} c_i for each record's user
    w = np.where(W > 0, c / np.where(W > 0, W, 1.0), 0.0) / D.m  # BUG: c_i / W_l / m, not c_i
    return erm.weighted_gradient(np.asarray(theta, float), X, y, w, loss)


def _data_n_tau_audit_pair() -> NeighbourPair:
    """D: two single-record users (n_tau = 2); D': plus a user with tau = 4 records (n_tau = 6).
    The bug's noise scales differ 3-fold between the two, visible in the tails."""
    D = UserDataset(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0, 1]), labels=np.array([1.0, -1.0]))
    D2 = ADD_REMOVE_USER.neighbour(D, 2, np.tile([1.0, 0.0], (4, 1)), labels=np.ones(4))
    return NeighbourPair(D, D2, ADD_REMOVE_USER.name, 2, "add user 2 with 4 records at x=(1,0), y=+1")


def _audit_data_n_tau(D, rng, size):
    return _mechanism_data_n_tau(D, rng, size, epsilon=1.0, tau=4, Lambda=2.0)


BUGS = [
    PlantedBug(
        name="amin.tau-per-record", bug_type="contribution bound per record, not per user",
        effect="keeps the first tau*m records of the whole dataset: a heavy user keeps up to "
               "tau*m records, so the minimiser moves by up to m times the claimed Delta_2",
        source="issue 4 item 3 ('tau counted per USER'); a common shortcut in SQL pipelines (LIMIT tau*m)",
        adapter=_amin("amin.tau-per-record", weights=_weights_per_record, statistic=_statistic_per_record),
        caught_by=("prop_tau_bounds_records_per_user", "prop_minimiser_within_sensitivity")),
    PlantedBug(
        name="amin.record-level-sensitivity", bug_type="record-level sensitivity used for user-level DP",
        effect="Delta_2 = 2L/(n Lambda) ignores that a user moves tau records: about tau/2 times too little noise "
               "when n_min >> tau",
        source="CMS11 Cor. 8 applied unchanged to user-level data (Amin §4: 'these algorithms are easily adapted')",
        adapter=_amin("amin.record-level-sensitivity", sensitivity=_sensitivity_record_level,
                      noise_scale=_noise_record_level, mechanism=_mechanism_record_level),
        caught_by=("prop_minimiser_within_sensitivity",)),
    PlantedBug(
        name="amin.data-dependent-n-tau", bug_type="noise scale read from private data",
        effect="noise scale 2 tau L/(n_tau Lambda) with the dataset's own n_tau: neighbours get different "
               "scales, so the privacy loss is unbounded in the tail",
        source="the literal reading of Amin Theorem 1 / Cor. 1 (privacy term F(tau/n_tau, ...))",
        adapter=_amin("amin.data-dependent-n-tau", noise_scale=_scale_data_n_tau, mechanism=_mechanism_data_n_tau),
        caught_by=("prop_noise_scale_is_public",),
        mechanism=_audit_data_n_tau, claim=A.claim(1.0), pairs=[_data_n_tau_audit_pair()]),
    PlantedBug(
        name="epasto.no-composition", bug_type="missing composition over iterations",
        effect="sigma calibrated for one Gaussian step while T steps are released: eps grows about sqrt(T)-fold",
        source="issue 4 item 8; a frequent DP-SGD mistake (accounting one step, running many)",
        adapter=_epasto("epasto.no-composition", noise_scale=_noise_no_composition, mechanism=_mechanism_no_composition),
        caught_by=("prop_noise_accounts_for_steps",)),
    PlantedBug(
        name="epasto.mean-user-weight", bug_type="average instead of worst case",
        effect="user-level Lipschitz constant from the mean of sum_{S_l} c_i instead of the max: the heaviest "
               "user's gradient moves by more than Delta_2",
        source="issue 4 ('the sensitivity uses the mean user weight instead of the max')",
        adapter=_epasto("epasto.mean-user-weight", sensitivity=_sensitivity_mean_weight),
        caught_by=("prop_gradient_within_sensitivity",)),
    PlantedBug(
        name="epasto.per-user-renormalised-weights", bug_type="wrong user-level loss",
        effect="each user's weights are rescaled to sum to 1/m (c_i / (m sum_{S_l} c_i)): every user counts "
               "equally whatever c says, so the step is not sum_i c_i grad l and c no longer enters linearly",
        source="derived here: l'(theta, M_j) read as the user's weighted AVERAGE loss rather than its weighted sum",
        adapter=_epasto("epasto.per-user-renormalised-weights", statistic=_statistic_per_user_average),
        caught_by=("prop_weights_enter_linearly",)),
]
