"""Planted bugs for Amin et al. 2019 Algorithm 1 with output perturbation
(``reference/amin2019_erm.py``): Wycheproof-style records.

Each bug is a separate implementation: an ``Adapter`` (caught by the property suite of
``userdp.properties.amin2019_erm``) and, where the audit should also see it, a mechanism with the
claim it wrongly makes and the pairs to audit. tests/papers/amin2019/test_amin2019_erm.py asserts that each one is
caught.
"""

from __future__ import annotations


import numpy as np

from userdp.properties.adapter import Adapter
from userdp.properties.amin2019_erm import amin_reference
from userdp.reference import amin2019_erm as A
from userdp.reference import erm
from userdp.reference.data import UserDataset
from userdp.reference.mechanisms import l2_laplace_noise
from userdp.reference.neighbours import ADD_REMOVE_USER, NeighbourPair
from planted import PlantedBug


def _amin(name: str, **changes) -> Adapter:
    ref = amin_reference()
    stages = {s: getattr(ref, s) for s in ("weights", "statistic", "sensitivity", "noise_scale", "mechanism")}
    stages.update(changes)
    return Adapter(name, **stages)


# ------------------------------------------------------------ 1. tau counted per record
def _weights_per_record(D: UserDataset, tau, n_min, **_) -> np.ndarray:
    keep = np.arange(D.n) < tau * D.m  # BUG: the first tau*m records overall
    return keep / max(int(keep.sum()), n_min)


def _statistic_per_record(D: UserDataset, *, tau, Lambda, n_min, loss="logistic", R=1.0, Y=1.0, **_):
    X, y = erm.check_erm_data(D, loss, R, Y)
    w = _weights_per_record(D, tau, n_min)
    return erm.minimise(X[w > 0], y[w > 0], w[w > 0], Lambda, loss).theta


# ------------------------------------------------- 2. record-level sensitivity 2L/(n Lambda)
def _sensitivity_record_level(*, tau, Lambda, n_min, loss="logistic", R=1.0, Y=1.0, **_):
    return 2.0 * erm.lipschitz(loss, R, Y, Lambda) / (n_min * Lambda)  # BUG: tau dropped


def _noise_record_level(D, *, epsilon, **p):
    return _sensitivity_record_level(**p) / epsilon


def _mechanism_record_level(D, rng, size=None, *, epsilon, **p):
    theta = A.statistic(D, **p)
    return theta + l2_laplace_noise(epsilon / _sensitivity_record_level(**p), theta.size, rng, size)


# ------------------------------------------- 3. the literal reading: the data's own n_tau
def _scale_data_n_tau(D, *, epsilon, tau, Lambda, loss="logistic", R=1.0, Y=1.0, **_):
    n_tau = A.effective_sample_size(D, tau)  # BUG: private n_tau sets the noise
    return 2.0 * tau * erm.lipschitz(loss, R, Y, Lambda) / (n_tau * Lambda) / epsilon


def _mechanism_data_n_tau(D, rng, size=None, *, epsilon, tau, Lambda, n_min=1, loss="logistic", R=1.0, Y=1.0):
    theta = A.statistic(D, tau=tau, Lambda=Lambda, n_min=1, loss=loss, R=R, Y=Y)  # average over n_tau
    scale = _scale_data_n_tau(D, epsilon=epsilon, tau=tau, Lambda=Lambda, loss=loss, R=R, Y=Y)
    return theta + l2_laplace_noise(1.0 / scale, theta.size, rng, size)


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
        name="tau-per-record",
        bug_type="contribution bound per record, not per user",
        effect="keeps the first tau*m records of the whole dataset: a heavy user keeps up to "
        "tau*m records, so the minimiser moves by up to m times the claimed Delta_2",
        source="a project review ('tau counted per USER'); a common shortcut in SQL pipelines (LIMIT tau*m)",
        adapter=_amin("tau-per-record", weights=_weights_per_record, statistic=_statistic_per_record),
        caught_by=("prop_tau_bounds_records_per_user", "prop_minimiser_within_sensitivity"),
    ),
    PlantedBug(
        name="record-level-sensitivity",
        bug_type="record-level sensitivity used for user-level DP",
        effect="Delta_2 = 2L/(n Lambda) ignores that a user moves tau records: about tau/2 times too little noise "
        "when n_min >> tau",
        source="CMS11 Cor. 8 applied unchanged to user-level data (Amin §4: 'these algorithms are easily adapted')",
        adapter=_amin(
            "record-level-sensitivity",
            sensitivity=_sensitivity_record_level,
            noise_scale=_noise_record_level,
            mechanism=_mechanism_record_level,
        ),
        caught_by=("prop_minimiser_within_sensitivity",),
    ),
    PlantedBug(
        name="data-dependent-n-tau",
        bug_type="noise scale read from private data",
        effect="noise scale 2 tau L/(n_tau Lambda) with the dataset's own n_tau: neighbours get different "
        "scales, so the privacy loss is unbounded in the tail",
        source="the literal reading of Amin Theorem 1 / Cor. 1 (privacy term F(tau/n_tau, ...))",
        adapter=_amin("data-dependent-n-tau", noise_scale=_scale_data_n_tau, mechanism=_mechanism_data_n_tau),
        caught_by=("prop_noise_scale_is_public",),
        mechanism=_audit_data_n_tau,
        claim=A.claim(1.0),
        pairs=[_data_n_tau_audit_pair()],
    ),
]
