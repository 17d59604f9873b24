"""Planted bugs for Amin et al. 2019 §3 (capped sum, optimal cap): Wycheproof-style records.

Each bug is a separate implementation (a ``CapAdapter`` for the property suite, or an
audit mechanism ``mechanism(dataset, rng, size)`` with the claim it wrongly makes), with
its name, bug type, effect and source. tests/papers/amin2019/test_amin2019.py asserts that each one is
caught: by a property ("invariant violation") or by the audit ("violation").
"""

from __future__ import annotations


import numpy as np

from userdp.properties.amin2019 import CapAdapter
from userdp.reference import amin2019 as A
from userdp.reference.claims import PureDP
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import ADD_REMOVE_USER, NeighbourPair
from planted import PlantedBug


def _reference_adapter(name: str, **changes) -> CapAdapter:
    stages = dict(
        statistic=A.statistic,
        sensitivity=A.sensitivity,
        noise_scale=A.noise_scale,
        optimal_cap=A.optimal_cap_nonprivate,
    )
    stages.update(changes)
    return CapAdapter(name, **stages)


# ------------------------------------------------------------ 1. cap per record
def _statistic_per_record(D: UserDataset, T) -> float:
    return float(np.sum(np.minimum(D.values, T)))  # BUG: min(x_i, T) per record


def _mechanism_per_record(T, eps):
    def mech(D, rng, size):
        return rng.laplace(_statistic_per_record(D, T), T / eps, size)

    return mech


# ------------------------------------------------------- 2. data-chosen cap
def _mechanism_data_chosen_cap(eps):
    def mech(D, rng, size):
        T = A.optimal_cap_nonprivate(D, eps)  # BUG: T read from the data exactly
        return rng.laplace(A.statistic(D, T), T / eps, size)

    return mech


# ------------------------------------------------------- 3. half sensitivity
def _sensitivity_half(T) -> float:
    return T / 2  # BUG: |min(x,T) - min(x',T)| read as T/2


def _noise_scale_half(T, epsilon) -> float:
    return T / (2 * epsilon)


def _mechanism_half(T, eps):
    def mech(D, rng, size):
        return rng.laplace(A.statistic(D, T), _noise_scale_half(T, eps), size)

    return mech


# -------------------------------------------- 4./5. the private cap's EM and budget
def _private_cap_no_half(D, epsilon_cap, epsilon_sum, U, rng, size):
    """A.private_cap with exp(eps u) instead of exp(eps u / 2)."""
    return A.private_cap(D, 2 * epsilon_cap, epsilon_sum, U, rng, size)  # BUG: factor 1/2 dropped


# ----------------------------------------------- 6./7. the optimal cap's rank
def _optimal_cap_interpolated(D, epsilon) -> float:
    x = A.user_totals(D)
    q = max(0.0, 1 - 1 / (x.size * epsilon))
    return float(np.quantile(x, q))  # BUG: numpy's interpolated quantile


def _optimal_cap_off_by_one(D, epsilon) -> float:
    k = A.optimal_rank(epsilon)
    xs = np.sort(A.user_totals(D))[::-1]
    return float(xs[k]) if k < xs.size else 0.0  # BUG: 0-based x_(k+1)


# ------------------------------------------------------------------ audit pairs
EPS = 1.0
T_FIXED = 1.0


def _pair_add(D: UserDataset, values, what: str) -> NeighbourPair:
    u = int(D.users.max()) + 1
    return NeighbourPair(D, ADD_REMOVE_USER.neighbour(D, u, np.asarray(values, float)), ADD_REMOVE_USER.name, u, what)


def small_users_pair() -> NeighbourPair:
    """Ten users of total 0.5 vs the same plus one user of total 1: at eps = 1 (k = 1) T* jumps
    0.5 -> 1, so g_T* + Lap(T*/eps) is 5 + Lap(0.5) on D and 6 + Lap(1) on D'."""
    D = UserDataset.from_user_lists([[0.5]] * 10)
    return _pair_add(D, [1.0], "10 users at 0.5 vs + one user at 1.0")


def two_records_pair() -> NeighbourPair:
    """A user of two records at T (total 2T) is added: per-record capping moves g_T by 2T."""
    D = UserDataset.from_user_lists([[0.5, 0.25], [0.75]])
    return _pair_add(D, [T_FIXED, T_FIXED], "add a user with two records at T")


def one_record_pair() -> NeighbourPair:
    """A user of total T is added: g_T moves by exactly T."""
    D = UserDataset.from_user_lists([[0.5, 0.25], [0.75]])
    return _pair_add(D, [T_FIXED], "add a user with one record at T")


EM_DELTA, EM_U = 0.0368, 1.0  # see reference registry: correct EM loss 0.94 eps_cap here


def em_pair() -> NeighbourPair:
    """Two users at 0.0368 vs the same plus a user at U = 1 (k = 2, eps_cap = 1).

    Exact losses of the cap's release on this pair (piecewise-uniform densities, computed
    in tests/papers/amin2019/test_amin2019.py): 0.939 with exp(eps u / 2), 1.789 with exp(eps u).
    """
    D = UserDataset.from_user_lists([[EM_DELTA], [EM_DELTA]])
    return _pair_add(D, [EM_U], f"2 users at {EM_DELTA} vs + one user at U={EM_U}")


def _cap_only(cap_fn, eps_cap, eps_sum):
    def mech(D, rng, size):
        return np.atleast_1d(cap_fn(D, eps_cap, eps_sum, EM_U, rng, size))

    return mech


def _reference_private_mech(eps_cap, eps_sum):
    def mech(D, rng, size):
        return A.private_cap_mechanism(D, eps_cap, eps_sum, EM_U, rng, size)

    return mech


BUGS = [
    PlantedBug(
        "cap-per-record",
        "wrong contribution bound",
        "a user with s records moves g_T by s*T while the noise is scaled to T: eps becomes s*eps",
        "reading §3's min(x_i, T) per record once users own many records (paper has one value per user)",
        adapter=_reference_adapter("cap-per-record", statistic=_statistic_per_record),
        mechanism=_mechanism_per_record(T_FIXED, EPS),
        claim=PureDP(EPS),
        pairs=[two_records_pair()],
    ),
    PlantedBug(
        "data-chosen-cap",
        "data-dependent sensitivity",
        "T = ceil(1/eps)-th largest total is read exactly; a new large user changes T and the noise "
        "scale, so g_T + Lap(T/eps) is not eps-DP",
        "Amin et al. §3 Example / Fig. 1 compute the optimal quantile exactly (footnote 1: no private "
        "optimisation attempted); §3 warns T must be computed privately",
        mechanism=_mechanism_data_chosen_cap(EPS),
        claim=PureDP(EPS),
        pairs=[small_users_pair()],
    ),
    PlantedBug(
        "half-sensitivity",
        "understated sensitivity",
        "Laplace scale T/(2 eps): the release is 2 eps-DP",
        "treating add/remove as a centred range [-T/2, T/2]; cf. Google's BoundedSumWithInsufficientNoise "
        "(docs/audit.md, the gallery: a bounded sum reporting eps/2 -> 2x)",
        adapter=_reference_adapter("half-sensitivity", sensitivity=_sensitivity_half, noise_scale=_noise_scale_half),
        mechanism=_mechanism_half(T_FIXED, EPS),
        claim=PureDP(EPS),
        pairs=[one_record_pair()],
    ),
    PlantedBug(
        "em-no-half",
        "exponential mechanism without the 1/2 (ambiguity alternative)",
        "the cap's utility -| |{x>T}| - k | is not monotone in the data; with exp(eps u) the cap is "
        "only 2 eps_cap-DP (exact loss 1.789 at eps_cap = 1 on the audit pair)",
        "the monotone-utility form exp(eps u) of McSherry-Talwar, used by some quantile samplers, "
        "applied where it does not hold",
        mechanism=_cap_only(_private_cap_no_half, 1.0, 0.5),
        claim=PureDP(1.0),
        pairs=[em_pair()],
    ),
    PlantedBug(
        "cap-budget-not-accounted",
        "missing composition",
        "T costs eps_cap but only eps_sum is claimed for the (T, sum) release",
        "Amin et al. §3 leave the private choice of T to the cited quantile algorithms and do not "
        "charge it; forgetting to add eps_cap is the natural slip",
        mechanism=_reference_private_mech(1.0, 0.5),
        claim=PureDP(0.5),
        pairs=[em_pair()],
    ),
    PlantedBug(
        "optimal-cap-interpolated-quantile",
        "wrong optimal cap (ambiguity alternative)",
        "np.quantile(x, 1 - 1/(m eps)) interpolates between order statistics: not the eq. 5 minimiser "
        "when 1/eps is not an integer",
        "§3 states the cap both as 'the ceil(1/eps)-th largest value' and as 'the (1 - 1/(n eps))-quantile'",
        adapter=_reference_adapter("optimal-cap-interpolated-quantile", optimal_cap=_optimal_cap_interpolated),
    ),
    PlantedBug(
        "optimal-cap-off-by-one",
        "index error",
        "returns the (ceil(1/eps)+1)-th largest total: caps one more user than eq. 6 prescribes",
        "0-based indexing of 'the k-th largest'",
        adapter=_reference_adapter("optimal-cap-off-by-one", optimal_cap=_optimal_cap_off_by_one),
    ),
]

BY_NAME = {b.name: b for b in BUGS}
